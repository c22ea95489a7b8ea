// A buffer that is only ever stored into is dead: the stores, the alloc and
// (with dce) the loops around them go. A buffer something reads stays.
// RUN: opt %s -p kernel-drop-dead-buffers,dce | filecheck %s

// CHECK-LABEL: func.func @dead
// CHECK-NOT:     kernel.alloc
// CHECK-NOT:     kernel.loop
// CHECK:         func.return %x
func.func @dead(%x: memref<4xf32>) -> memref<4xf32> {
  %b = kernel.alloc() : memref<4xi64>
  kernel.loop (%i) in (4) [parallel] {
    %v = arith.index_cast %i : index to i64
    kernel.store %v, %b[%i] : memref<4xi64>
    kernel.yield
  }
  func.return %x : memref<4xf32>
}

// CHECK-LABEL: func.func @read
// CHECK:         kernel.alloc
// CHECK:         kernel.store
// CHECK:         kernel.load
func.func @read(%x: memref<4xf32>) -> f32 {
  %b = kernel.alloc() : memref<4xf32>
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  kernel.store %z, %b[%c0] : memref<4xf32>
  %v = kernel.load %b[%c0] : memref<4xf32>
  func.return %v : f32
}
