// kernel-fuse-elementwise: a chain of elementwise nests (a broadcast, an add,
// a relu, a multiply) becomes one nest; the intermediate buffers go away.
// RUN: opt %s -p kernel-fuse-elementwise | filecheck %s

// CHECK-LABEL: func.func @add_relu_mul
// CHECK-NEXT:    %zero = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %y = kernel.alloc() : memref<4x8xf32>
// CHECK-NEXT:    kernel.loop (%i, %j) in (4, 8) [parallel, parallel] {
// CHECK-NEXT:      %[[X:.*]] = kernel.load %x[%i, %j] : memref<4x8xf32>
// CHECK-NEXT:      %[[B:.*]] = kernel.load %b[%j] : memref<8xf32>
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[X]], %[[B]] : f32
// CHECK-NEXT:      %[[R:.*]] = arith.maximumf %[[S]], %zero : f32
// CHECK-NEXT:      %[[X2:.*]] = kernel.load %x[%i, %j] : memref<4x8xf32>
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[R]], %[[X2]] : f32
// CHECK-NEXT:      kernel.store %[[P]], %y[%i, %j] : memref<4x8xf32>
// CHECK-NEXT:      kernel.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : memref<4x8xf32>
func.func @add_relu_mul(%x: memref<4x8xf32>, %b: memref<8xf32>) -> memref<4x8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %bb = kernel.alloc() : memref<4x8xf32>
  kernel.loop (%i, %j) in (4, 8) [parallel, parallel] {
    %v = kernel.load %b[%j] : memref<8xf32>
    kernel.store %v, %bb[%i, %j] : memref<4x8xf32>
    kernel.yield
  }
  %t = kernel.alloc() : memref<4x8xf32>
  kernel.loop (%i, %j) in (4, 8) [parallel, parallel] {
    %u = kernel.load %x[%i, %j] : memref<4x8xf32>
    %v = kernel.load %bb[%i, %j] : memref<4x8xf32>
    %s = arith.addf %u, %v : f32
    kernel.store %s, %t[%i, %j] : memref<4x8xf32>
    kernel.yield
  }
  %r = kernel.alloc() : memref<4x8xf32>
  kernel.loop (%i, %j) in (4, 8) [parallel, parallel] {
    %v = kernel.load %t[%i, %j] : memref<4x8xf32>
    %m = arith.maximumf %v, %zero : f32
    kernel.store %m, %r[%i, %j] : memref<4x8xf32>
    kernel.yield
  }
  %y = kernel.alloc() : memref<4x8xf32>
  kernel.loop (%i, %j) in (4, 8) [parallel, parallel] {
    %u = kernel.load %r[%i, %j] : memref<4x8xf32>
    %v = kernel.load %x[%i, %j] : memref<4x8xf32>
    %p = arith.mulf %u, %v : f32
    kernel.store %p, %y[%i, %j] : memref<4x8xf32>
    kernel.yield
  }
  func.return %y : memref<4x8xf32>
}

// A consumer indexing the producer's buffer differently (a transpose) gets
// the producer's body at its own indices.
// CHECK-LABEL: func.func @into_transpose
// CHECK-NOT:     kernel.alloc() : memref<3x5xf32>
// CHECK:         kernel.loop (%i, %j) in (5, 3) [parallel, parallel] {
// CHECK-NEXT:      %[[V:.*]] = kernel.load %x[%j, %i] : memref<3x5xf32>
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[V]] : f32
// CHECK-NEXT:      kernel.store %[[E]], %y[%i, %j] : memref<5x3xf32>
// CHECK-NOT:     kernel.loop
func.func @into_transpose(%x: memref<3x5xf32>) -> memref<5x3xf32> {
  %t = kernel.alloc() : memref<3x5xf32>
  kernel.loop (%i, %j) in (3, 5) [parallel, parallel] {
    %v = kernel.load %x[%i, %j] : memref<3x5xf32>
    %e = math.exp %v : f32
    kernel.store %e, %t[%i, %j] : memref<3x5xf32>
    kernel.yield
  }
  %y = kernel.alloc() : memref<5x3xf32>
  kernel.loop (%i, %j) in (5, 3) [parallel, parallel] {
    %v = kernel.load %t[%j, %i] : memref<3x5xf32>
    kernel.store %v, %y[%i, %j] : memref<5x3xf32>
    kernel.yield
  }
  func.return %y : memref<5x3xf32>
}

// An expensive producer (exp) goes into a single consumer reading it once per
// element, here the body of a reduction loop; the producer's ivs become the
// load's indices.
// CHECK-LABEL: func.func @into_reduction
// CHECK:         kernel.loop (%i) in (4) [parallel] {
// CHECK-NEXT:      %[[S:.*]] = kernel.loop (%k) in (8) [reduction] iter_args(%acc = %zero : f32) -> f32 {
// CHECK-NEXT:        %[[V:.*]] = kernel.load %x[%i, %k] : memref<4x8xf32>
// CHECK-NEXT:        %[[E:.*]] = math.exp %[[V]] : f32
// CHECK-NEXT:        %[[N:.*]] = arith.addf %acc, %[[E]] : f32
// CHECK-NEXT:        kernel.yield %[[N]] : f32
// CHECK-NOT:     kernel.alloc() : memref<4x8xf32>
func.func @into_reduction(%x: memref<4x8xf32>) -> memref<4xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %t = kernel.alloc() : memref<4x8xf32>
  kernel.loop (%i, %j) in (4, 8) [parallel, parallel] {
    %v = kernel.load %x[%i, %j] : memref<4x8xf32>
    %e = math.exp %v : f32
    kernel.store %e, %t[%i, %j] : memref<4x8xf32>
    kernel.yield
  }
  %y = kernel.alloc() : memref<4xf32>
  kernel.loop (%i) in (4) [parallel] {
    %s = kernel.loop (%k) in (8) [reduction] iter_args(%acc = %zero : f32) -> f32 {
      %v = kernel.load %t[%i, %k] : memref<4x8xf32>
      %n = arith.addf %acc, %v : f32
      kernel.yield %n : f32
    }
    kernel.store %s, %y[%i] : memref<4xf32>
    kernel.yield
  }
  func.return %y : memref<4xf32>
}
