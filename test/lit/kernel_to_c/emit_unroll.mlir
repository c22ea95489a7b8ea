// A small static reduction nest inside a loop that walks the row it reads (a
// depthwise conv's window) is unrolled in full, so that gcc vectorizes the row
// loop around it; a reduction along its own dim (a row sum) is not (it is a simd sum).
// RUN: opt %s -t c | filecheck %s

// CHECK-LABEL: int model_run(
// CHECK:        for (int64_t ox = 0; ox < 6; ox++) {
// CHECK-NEXT:     float a = 0.0f;
// CHECK-NEXT:     #pragma GCC unroll 64
// CHECK-NEXT:     for (int64_t kh = 0; kh < 3; kh++) {
// CHECK-NEXT:       #pragma GCC unroll 64
// CHECK-NEXT:       for (int64_t kw = 0; kw < 3; kw++) {
// CHECK-NOT:    #pragma GCC unroll
// CHECK:        float b = 0.0f;
// CHECK-NEXT:   #pragma omp simd reduction(+:b)
// CHECK-NEXT:   for (int64_t k = 0; k < 8; k++) {
// CHECK-NOT:    #pragma GCC unroll
func.func @window(%x: memref<8x8xf32>, %r: memref<2x8xf32>) -> memref<6x6xf32> {
  %y = kernel.alloc() : memref<6x6xf32>
  %s = kernel.alloc() : memref<2xf32>
  %zero = arith.constant 0.0 : f32
  kernel.loop (%oy, %ox) in (6, 6) [parallel, parallel] {
    %acc = kernel.loop (%kh, %kw) in (3, 3) [reduction, reduction] iter_args(%a = %zero : f32) -> f32 {
      %iy = arith.addi %oy, %kh : index
      %ix = arith.addi %ox, %kw : index
      %v = kernel.load %x[%iy, %ix] : memref<8x8xf32>
      %t = arith.addf %a, %v : f32
      kernel.yield %t : f32
    }
    kernel.store %acc, %y[%oy, %ox] : memref<6x6xf32>
    kernel.yield
  }
  kernel.loop (%i) in (2) [parallel] {
    %sum = kernel.loop (%k) in (8) [reduction] iter_args(%b = %zero : f32) -> f32 {
      %v = kernel.load %r[%i, %k] : memref<2x8xf32>
      %t = arith.addf %b, %v : f32
      kernel.yield %t : f32
    }
    kernel.store %sum, %s[%i] : memref<2xf32>
    kernel.yield
  }
  func.return %y : memref<6x6xf32>
}
