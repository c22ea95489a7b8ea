// kernel-plan-memory places every top-level buffer of static size in one
// arena: a buffer lives from its kernel.alloc to the last top-level op that
// uses it, and buffers whose lifetimes do not overlap share bytes.
// RUN: opt %s -p kernel-plan-memory | filecheck %s

// A chain: %a is dead once %b is written, so %c takes %a's bytes, and %d
// takes %b's. The arena holds two buffers, not four.
// CHECK-LABEL: func.func @chain
// CHECK-SAME:    kernel.arena_bytes = 512 : i64, kernel.peak_bytes = 512 : i64, kernel.total_bytes = 1024 : i64
// CHECK:         %a = kernel.alloc() {offset = 0 : i64} : memref<64xf32>
// CHECK:         %b = kernel.alloc() {offset = 256 : i64} : memref<64xf32>
// CHECK:         %c = kernel.alloc() {offset = 0 : i64} : memref<64xf32>
// CHECK:         %d = kernel.alloc() {offset = 256 : i64} : memref<64xf32>
// CHECK-NOT:     kernel.dealloc
// CHECK:         func.return %d
func.func @chain(%x: memref<64xf32>) -> memref<64xf32> {
  %a = kernel.alloc() : memref<64xf32>
  kernel.loop (%i) in (64) [parallel] {
    %v = kernel.load %x[%i] : memref<64xf32>
    %r = arith.addf %v, %v : f32
    kernel.store %r, %a[%i] : memref<64xf32>
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

// %a is read again by the last loop, so it stays live across the whole body:
// nothing else may take its bytes, although %b and %c die in between.
// CHECK-LABEL: func.func @long_lived
// CHECK-SAME:    kernel.arena_bytes = 768 : i64, kernel.peak_bytes = 768 : i64, kernel.total_bytes = 1024 : i64
// CHECK:         %a = kernel.alloc() {offset = 0 : i64}
// CHECK:         %b = kernel.alloc() {offset = 256 : i64}
// CHECK:         %c = kernel.alloc() {offset = 512 : i64}
// CHECK:         %d = kernel.alloc() {offset = 256 : i64}
func.func @long_lived(%x: memref<64xf32>) -> memref<64xf32> {
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
    %u = kernel.load %c[%i] : memref<64xf32>
    %v = kernel.load %a[%i] : memref<64xf32>
    %r = arith.addf %u, %v : f32
    kernel.store %r, %d[%i] : memref<64xf32>
    kernel.yield
  }
  func.return %d : memref<64xf32>
}

// Largest first: once the 1 KiB %a is dead, the two small buffers %c and %d
// pack into its bytes while %b, still live, keeps its own.
// CHECK-LABEL: func.func @big_then_small
// CHECK-SAME:    kernel.arena_bytes = 1280 : i64, kernel.peak_bytes = 1280 : i64, kernel.total_bytes = 1792 : i64
// CHECK:         %a = kernel.alloc() {offset = 0 : i64} : memref<256xf32>
// CHECK:         %b = kernel.alloc() {offset = 1024 : i64} : memref<64xf32>
// CHECK:         %c = kernel.alloc() {offset = 0 : i64} : memref<64xf32>
// CHECK:         %d = kernel.alloc() {offset = 256 : i64} : memref<64xf32>
func.func @big_then_small(%x: memref<256xf32>) -> memref<64xf32> {
  %a = kernel.alloc() : memref<256xf32>
  kernel.loop (%i) in (256) [parallel] {
    %v = kernel.load %x[%i] : memref<256xf32>
    kernel.store %v, %a[%i] : memref<256xf32>
    kernel.yield
  }
  %b = kernel.alloc() : memref<64xf32>
  kernel.loop (%i) in (64) [parallel] {
    %v = kernel.load %a[%i] : memref<256xf32>
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
    %u = kernel.load %b[%i] : memref<64xf32>
    %v = kernel.load %c[%i] : memref<64xf32>
    %r = arith.addf %u, %v : f32
    kernel.store %r, %d[%i] : memref<64xf32>
    kernel.yield
  }
  func.return %d : memref<64xf32>
}

// Sizes are element count x stored element size (i1 is a byte, index eight),
// each rounded up to 64 bytes; an empty buffer takes no bytes at all.
// Constants and arguments are never planned.
// CHECK-LABEL: func.func @sizes
// CHECK-SAME:    kernel.arena_bytes = 320 : i64, kernel.peak_bytes = 320 : i64, kernel.total_bytes = 320 : i64
// CHECK:         kernel.constant
// CHECK-NOT:     offset
// CHECK:         kernel.view %x
// CHECK:         %e = kernel.alloc() {offset = 0 : i64} : memref<0xf32>
// CHECK:         %m = kernel.alloc() {offset = 0 : i64} : memref<100xi1>
// CHECK:         %n = kernel.alloc() {offset = 256 : i64} : memref<3xindex>
// CHECK:         %h = kernel.alloc() {offset = 128 : i64} : memref<2x30xf16>
func.func @sizes(%x: memref<4xf32>) -> (memref<0xf32>, memref<100xi1>, memref<3xindex>, memref<2x30xf16>) {
  %w = kernel.constant dense<1.000000e+00> : tensor<4xf32>
  %s = kernel.view %x() : memref<4xf32> -> memref<2x2xf32>
  %e = kernel.alloc() : memref<0xf32>
  %m = kernel.alloc() : memref<100xi1>
  %n = kernel.alloc() : memref<3xindex>
  %h = kernel.alloc() : memref<2x30xf16>
  func.return %e, %m, %n, %h : memref<0xf32>, memref<100xi1>, memref<3xindex>, memref<2x30xf16>
}
