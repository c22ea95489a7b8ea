// A float clamp against a constant bound (ReLU, ReLU6, HardSwish, Clip) in a loop
// that reads its rows at unit stride is a mask blend (rung_maximumf /
// rung_minimumf), which gcc vectorizes even beside an unrolled window; a `?:`
// there stays a branch and the loop scalar. The max of two run-time values, and a
// clamp of values read with a stride, keep the NaN-propagating `?:`.
// RUN: opt %s -t c | filecheck %s

// CHECK-LABEL: int model_run(
// CHECK:         float v = x[i * 8 + j];
// CHECK-NEXT:    float lo = rung_maximumf(v, 0.0f);
// CHECK-NEXT:    float hi = six[0];
// CHECK-NEXT:    float r = rung_minimumf(lo, hi);
// CHECK:         int64_t s = j2 * 2;
// CHECK-NEXT:    float v3 = x[i1 * 8 + s];
// CHECK-NEXT:    float r4 = ((v3 != v3 || v3 > 0.0f) ? v3 : 0.0f);
// CHECK:         float r7 = ((a != a || a > b) ? a : b);
func.func @clamps(%x: memref<8x8xf32>) -> (memref<8x8xf32>, memref<8x4xf32>, memref<7x8xf32>) {
  %relu6 = kernel.alloc() : memref<8x8xf32>
  %strided = kernel.alloc() : memref<8x4xf32>
  %pair = kernel.alloc() : memref<7x8xf32>
  %zero = arith.constant 0.0 : f32
  %six = kernel.constant dense<6.0> : tensor<1xf32>
  %two = arith.constant 2 : index
  %c0 = arith.constant 0 : index
  kernel.loop (%i, %j) in (8, 8) [parallel, parallel] {
    %v = kernel.load %x[%i, %j] : memref<8x8xf32>
    %lo = arith.maximumf %v, %zero : f32
    %hi = kernel.load %six[%c0] : memref<1xf32>
    %r = arith.minimumf %lo, %hi : f32
    kernel.store %r, %relu6[%i, %j] : memref<8x8xf32>
    kernel.yield
  }
  kernel.loop (%i, %j) in (8, 4) [parallel, parallel] {
    %s = arith.muli %j, %two : index
    %v = kernel.load %x[%i, %s] : memref<8x8xf32>
    %r = arith.maximumf %v, %zero : f32
    kernel.store %r, %strided[%i, %j] : memref<8x4xf32>
    kernel.yield
  }
  kernel.loop (%i, %j) in (7, 8) [parallel, parallel] {
    %a = kernel.load %x[%i, %j] : memref<8x8xf32>
    %one = arith.constant 1 : index
    %n = arith.addi %i, %one : index
    %b = kernel.load %x[%n, %j] : memref<8x8xf32>
    %r = arith.maximumf %a, %b : f32
    kernel.store %r, %pair[%i, %j] : memref<7x8xf32>
    kernel.yield
  }
  func.return %relu6, %strided, %pair : memref<8x8xf32>, memref<8x4xf32>, memref<7x8xf32>
}
