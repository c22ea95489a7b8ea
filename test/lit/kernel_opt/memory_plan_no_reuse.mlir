// kernel-plan-memory{no-reuse=true} gives every buffer bytes of its own (to
// debug a suspected plan, and to measure what reuse saves): the arena is then
// the total. Without the option the same chain needs two buffers' worth.
// RUN: opt %s -p 'kernel-plan-memory{no-reuse=true}' | filecheck %s --check-prefix=NOREUSE
// RUN: opt %s -p kernel-plan-memory | filecheck %s --check-prefix=REUSE

// NOREUSE-LABEL: func.func @chain
// NOREUSE-SAME:    kernel.arena_bytes = 1024 : i64, kernel.peak_bytes = 512 : i64, kernel.total_bytes = 1024 : i64
// NOREUSE:         %a = kernel.alloc() {offset = 0 : i64}
// NOREUSE:         %b = kernel.alloc() {offset = 256 : i64}
// NOREUSE:         %c = kernel.alloc() {offset = 512 : i64}
// NOREUSE:         %d = kernel.alloc() {offset = 768 : i64}
// NOREUSE-NOT:     kernel.dealloc

// REUSE-LABEL: func.func @chain
// REUSE-SAME:    kernel.arena_bytes = 512 : i64, kernel.peak_bytes = 512 : i64, kernel.total_bytes = 1024 : i64
// REUSE:         %a = kernel.alloc() {offset = 0 : i64}
// REUSE:         %b = kernel.alloc() {offset = 256 : i64}
// REUSE:         %c = kernel.alloc() {offset = 0 : i64}
// REUSE:         %d = kernel.alloc() {offset = 256 : i64}
func.func @chain(%x: memref<64xf32>) -> memref<64xf32> {
  %a = kernel.alloc() : memref<64xf32>
  kernel.loop (%i) in (64) [parallel] {
    %v = kernel.load %x[%i] : memref<64xf32>
    kernel.store %v, %a[%i] : memref<64xf32>
    kernel.yield
  }
  %b = kernel.alloc() : memref<64xf32>
  kernel.loop (%i) in (64) [parallel] {
    %v = kernel.load %a[%i] : memref<64xf32>
    kernel.store %v, %b[%i] : memref<64xf32>
    kernel.yield
  }
  %c = kernel.alloc() : memref<64xf32>
  kernel.loop (%i) in (64) [parallel] {
    %v = kernel.load %b[%i] : memref<64xf32>
    kernel.store %v, %c[%i] : memref<64xf32>
    kernel.yield
  }
  %d = kernel.alloc() : memref<64xf32>
  kernel.loop (%i) in (64) [parallel] {
    %v = kernel.load %c[%i] : memref<64xf32>
    kernel.store %v, %d[%i] : memref<64xf32>
    kernel.yield
  }
  func.return %d : memref<64xf32>
}
