// kernel-plan-memory keeps buffers of run-time size, and buffers allocated
// inside loop bodies, on the heap, and frees each one with kernel.dealloc
// right after its last use in its own block, unless the function returns it
// (or a view of it). Running the pass twice adds no second dealloc.
// RUN: opt %s -p kernel-plan-memory | filecheck %s
// RUN: opt %s -p kernel-plan-memory,kernel-plan-memory | filecheck %s

// CHECK-LABEL: func.func @dynamic_chain
// CHECK-SAME:    kernel.arena_bytes = 0 : i64, kernel.peak_bytes = 0 : i64, kernel.total_bytes = 0 : i64
// CHECK:         %a = kernel.alloc(%n) : memref<?xf32>
// CHECK:         %b = kernel.alloc(%n) : memref<?xf32>
// CHECK:         kernel.loop
// CHECK:           kernel.load %a
// CHECK:         }
// CHECK-NEXT:    kernel.dealloc %a : memref<?xf32>
// CHECK-NEXT:    %c = kernel.alloc(%n) : memref<?xf32>
// CHECK:         kernel.loop
// CHECK:           kernel.load %b
// CHECK:         }
// CHECK-NEXT:    kernel.dealloc %b : memref<?xf32>
// CHECK-NEXT:    func.return %c
func.func @dynamic_chain(%x: memref<?xf32>) -> memref<?xf32> {
  %n = kernel.dim %x[0] : memref<?xf32>
  %a = kernel.alloc(%n) : memref<?xf32>
  kernel.loop (%i) in (%n) [parallel] {
    %v = kernel.load %x[%i] : memref<?xf32>
    kernel.store %v, %a[%i] : memref<?xf32>
    kernel.yield
  }
  %b = kernel.alloc(%n) : memref<?xf32>
  kernel.loop (%i) in (%n) [parallel] {
    %v = kernel.load %a[%i] : memref<?xf32>
    kernel.store %v, %b[%i] : memref<?xf32>
    kernel.yield
  }
  %c = kernel.alloc(%n) : memref<?xf32>
  kernel.loop (%i) in (%n) [parallel] {
    %v = kernel.load %b[%i] : memref<?xf32>
    kernel.store %v, %c[%i] : memref<?xf32>
    kernel.yield
  }
  func.return %c : memref<?xf32>
}

// %a is used first, then not by the middle loop, then inside the last loop
// (through a view): it is freed only after that last loop. The static %s is
// in the arena and is not freed.
// CHECK-LABEL: func.func @used_again_later
// CHECK-SAME:    kernel.arena_bytes = 64 : i64, kernel.peak_bytes = 64 : i64, kernel.total_bytes = 64 : i64
// CHECK:         %a = kernel.alloc(%n) : memref<?xf32>
// CHECK:         %s = kernel.alloc() {offset = 0 : i64} : memref<4xf32>
// CHECK-NOT:     kernel.dealloc
// CHECK:         %va = kernel.view %a
// CHECK:         kernel.loop
// CHECK:           kernel.load %va
// CHECK:         }
// CHECK-NEXT:    kernel.dealloc %a : memref<?xf32>
// CHECK-NEXT:    func.return %s
func.func @used_again_later(%x: memref<?xf32>) -> memref<4xf32> {
  %n = kernel.dim %x[0] : memref<?xf32>
  %a = kernel.alloc(%n) : memref<?xf32>
  kernel.copy %x, %a : memref<?xf32>, memref<?xf32>
  %s = kernel.alloc() : memref<4xf32>
  kernel.loop (%i) in (4) [parallel] {
    %v = kernel.load %x[%i] : memref<?xf32>
    kernel.store %v, %s[%i] : memref<4xf32>
    kernel.yield
  }
  %va = kernel.view %a(%n) : memref<?xf32> -> memref<1x?xf32>
  kernel.loop (%i) in (4) [parallel] {
    %c0 = arith.constant 0 : index
    %u = kernel.load %s[%i] : memref<4xf32>
    %v = kernel.load %va[%c0, %i] : memref<1x?xf32>
    %r = arith.addf %u, %v : f32
    kernel.store %r, %s[%i] : memref<4xf32>
    kernel.yield
  }
  func.return %s : memref<4xf32>
}

// A heap buffer returned through a view is never freed.
// CHECK-LABEL: func.func @returned_heap_view
// CHECK-NOT:     kernel.dealloc
// CHECK:         func.return %r
func.func @returned_heap_view(%x: memref<?xf32>) -> memref<1x?xf32> {
  %n = kernel.dim %x[0] : memref<?xf32>
  %a = kernel.alloc(%n) : memref<?xf32>
  kernel.copy %x, %a : memref<?xf32>, memref<?xf32>
  %r = kernel.view %a(%n) : memref<?xf32> -> memref<1x?xf32>
  func.return %r : memref<1x?xf32>
}

// A buffer allocated in a loop body stays on the heap (no offset, not
// counted in the arena) and is freed at the end of each iteration.
// CHECK-LABEL: func.func @alloc_in_loop
// CHECK-SAME:    kernel.arena_bytes = 64 : i64, kernel.peak_bytes = 64 : i64, kernel.total_bytes = 64 : i64
// CHECK:         %out = kernel.alloc() {offset = 0 : i64} : memref<4xf32>
// CHECK:         kernel.loop (%i) in (4) [parallel] {
// CHECK-NEXT:      %t = kernel.alloc() : memref<8xf32>
// CHECK:           kernel.yield %{{.*}} : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      kernel.dealloc %t : memref<8xf32>
// CHECK-NEXT:      kernel.store
// CHECK-NEXT:      kernel.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %out
func.func @alloc_in_loop(%x: memref<4x8xf32>) -> memref<4xf32> {
  %out = kernel.alloc() : memref<4xf32>
  kernel.loop (%i) in (4) [parallel] {
    %t = kernel.alloc() : memref<8xf32>
    kernel.loop (%j) in (8) [parallel] {
      %v = kernel.load %x[%i, %j] : memref<4x8xf32>
      %e = math.exp %v : f32
      kernel.store %e, %t[%j] : memref<8xf32>
      kernel.yield
    }
    %zero = arith.constant 0.0 : f32
    %s = kernel.loop (%j) in (8) [reduction] iter_args(%acc = %zero : f32) -> f32 {
      %v = kernel.load %t[%j] : memref<8xf32>
      %r = arith.addf %acc, %v : f32
      kernel.yield %r : f32
    }
    kernel.store %s, %out[%i] : memref<4xf32>
    kernel.yield
  }
  func.return %out : memref<4xf32>
}

// A hand-written dealloc of a buffer of static size goes: the buffer is in
// the arena now, and its lifetime ends at its last real use, so %b may take
// its bytes.
// CHECK-LABEL: func.func @static_dealloc
// CHECK-SAME:    kernel.arena_bytes = 64 : i64
// CHECK:         %a = kernel.alloc() {offset = 0 : i64} : memref<4xf32>
// CHECK-NOT:     kernel.dealloc
// CHECK:         %b = kernel.alloc() {offset = 0 : i64} : memref<4xf32>
// CHECK-NOT:     kernel.dealloc
// CHECK:         func.return %b
func.func @static_dealloc(%x: memref<4xf32>) -> memref<4xf32> {
  %a = kernel.alloc() : memref<4xf32>
  kernel.copy %x, %a : memref<4xf32>, memref<4xf32>
  %b = kernel.alloc() : memref<4xf32>
  kernel.dealloc %a : memref<4xf32>
  kernel.copy %x, %b : memref<4xf32>, memref<4xf32>
  func.return %b : memref<4xf32>
}

// The arena belongs to one run of the entry function: a function that is
// called keeps its buffers on the heap, so they cannot clash with the
// caller's, and frees them.
// CHECK-LABEL: func.func @callee
// CHECK-SAME:    kernel.arena_bytes = 0 : i64
// CHECK:         %t = kernel.alloc() : memref<4xf32>
// CHECK-NEXT:    kernel.copy %x, %t
// CHECK-NEXT:    kernel.copy %t, %y
// CHECK-NEXT:    kernel.dealloc %t
// CHECK-LABEL: func.func @caller
// CHECK:         %y = kernel.alloc() {offset = 0 : i64} : memref<4xf32>
func.func @callee(%x: memref<4xf32>, %y: memref<4xf32>) {
  %t = kernel.alloc() : memref<4xf32>
  kernel.copy %x, %t : memref<4xf32>, memref<4xf32>
  kernel.copy %t, %y : memref<4xf32>, memref<4xf32>
  func.return
}
func.func @caller(%x: memref<4xf32>) -> memref<4xf32> {
  %y = kernel.alloc() : memref<4xf32>
  func.call @callee(%x, %y) : (memref<4xf32>, memref<4xf32>) -> ()
  func.return %y : memref<4xf32>
}
