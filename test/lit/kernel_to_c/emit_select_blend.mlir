// A float select in a row loop that also calls a rung_math.h function (Softmax's
// flushed terms, ELU) is a mask blend, `rung_math_select`: given a `?:`, gcc moves the
// exponential into the branch that needs it and the loop stays scalar. A select in a
// loop without such a call, a double select, and a select over a strided read keep `?:`.
// RUN: opt %s -t c | filecheck %s

// CHECK-LABEL: int model_run(
// CHECK:         bool tiny = v < -87.3365479f;
// CHECK-NEXT:    float in_ = rung_math_select(tiny, 0.0f, v);
// CHECK-NEXT:    float e = rung_expf(in_);
// CHECK-NEXT:    float t = rung_math_select(tiny, 0.0f, e);
// CHECK:         float t4 = neg ? 0.0f : v3;
// CHECK:         double t10 = neg8 ? e9 : v7;
// CHECK:         float t16 = neg14 ? e15 : v13;
// CHECK-NOT:     rung_math_select
func.func @selects(%x: memref<4x16xf32>, %d: memref<4x16xf64>) -> (memref<4x16xf32>, memref<4x16xf32>, memref<4x16xf64>, memref<4x8xf32>) {
  %soft = kernel.alloc() : memref<4x16xf32>
  %relu = kernel.alloc() : memref<4x16xf32>
  %wide = kernel.alloc() : memref<4x16xf64>
  %strided = kernel.alloc() : memref<4x8xf32>
  %lo = arith.constant -87.3365479 : f32
  %zero = arith.constant 0.0 : f32
  %dzero = arith.constant 0.0 : f64
  kernel.loop (%i, %j) in (4, 16) [parallel, parallel] {
    %v = kernel.load %x[%i, %j] : memref<4x16xf32>
    %tiny = arith.cmpf olt, %v, %lo : f32
    %in = arith.select %tiny, %zero, %v : f32
    %e = math.exp %in : f32
    %t = arith.select %tiny, %zero, %e : f32
    kernel.store %t, %soft[%i, %j] : memref<4x16xf32>
    kernel.yield
  }
  kernel.loop (%i, %j) in (4, 16) [parallel, parallel] {
    %v = kernel.load %x[%i, %j] : memref<4x16xf32>
    %neg = arith.cmpf olt, %v, %zero : f32
    %t = arith.select %neg, %zero, %v : f32
    kernel.store %t, %relu[%i, %j] : memref<4x16xf32>
    kernel.yield
  }
  kernel.loop (%i, %j) in (4, 16) [parallel, parallel] {
    %v = kernel.load %d[%i, %j] : memref<4x16xf64>
    %neg = arith.cmpf olt, %v, %dzero : f64
    %e = math.exp %v : f64
    %t = arith.select %neg, %e, %v : f64
    kernel.store %t, %wide[%i, %j] : memref<4x16xf64>
    kernel.yield
  }
  %c2 = arith.constant 2 : index
  kernel.loop (%i, %j) in (4, 8) [parallel, parallel] {
    %jj = arith.muli %j, %c2 : index
    %v = kernel.load %x[%i, %jj] : memref<4x16xf32>
    %neg = arith.cmpf olt, %v, %zero : f32
    %e = math.exp %v : f32
    %t = arith.select %neg, %e, %v : f32
    kernel.store %t, %strided[%i, %j] : memref<4x8xf32>
    kernel.yield
  }
  func.return %soft, %relu, %wide, %strided : memref<4x16xf32>, memref<4x16xf32>, memref<4x16xf64>, memref<4x8xf32>
}
