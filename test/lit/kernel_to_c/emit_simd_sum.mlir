// A float sum along an innermost loop (a global pool, ReduceSum/Mean, a norm's
// mean) gets `#pragma omp simd reduction(+:acc)`, so gcc keeps a vector of partial
// sums instead of adding one element after another; a carried value that is not
// only summed (a running max, a sum read inside the loop, a running sum stored in
// it as CumSum does) does not.
// RUN: opt %s -t c | filecheck %s

// CHECK-LABEL: int model_run(
// CHECK:         float acc = 0.0f;
// CHECK-NEXT:    for (int64_t h = 0; h < 4; h++) {
// CHECK-NEXT:      #pragma omp simd reduction(+:acc)
// CHECK-NEXT:      for (int64_t w = 0; w < 16; w++) {
// CHECK:         float m = 0.0f;
// CHECK-NOT:     #pragma omp simd
// CHECK:         for (int64_t k = 0; k < 16; k++) {
// CHECK:         float s = 0.0f;
// CHECK-NEXT:    for (int64_t j = 0; j < 16; j++) {
// CHECK:         float r = 0.0f;
// CHECK-NEXT:    for (int64_t q = 0; q < 16; q++) {
func.func @sums(%x: memref<3x4x16xf32>) -> (memref<3xf32>, memref<3xf32>, memref<3x16xf32>) {
  %sum = kernel.alloc() : memref<3xf32>
  %max = kernel.alloc() : memref<3xf32>
  %prefix = kernel.alloc() : memref<3x16xf32>
  %zero = arith.constant 0.0 : f32
  kernel.loop (%c) in (3) [parallel] {
    %total = kernel.loop (%h, %w) in (4, 16) [reduction, reduction] iter_args(%acc = %zero : f32) -> f32 {
      %v = kernel.load %x[%c, %h, %w] : memref<3x4x16xf32>
      %t = arith.addf %acc, %v : f32
      kernel.yield %t : f32
    }
    kernel.store %total, %sum[%c] : memref<3xf32>
    %c0 = arith.constant 0 : index
    %top = kernel.loop (%k) in (16) [reduction] iter_args(%m = %zero : f32) -> f32 {
      %v = kernel.load %x[%c, %c0, %k] : memref<3x4x16xf32>
      %t = arith.maximumf %m, %v : f32
      kernel.yield %t : f32
    }
    kernel.store %top, %max[%c] : memref<3xf32>
    %last = kernel.loop (%j) in (16) [reduction] iter_args(%s = %zero : f32) -> f32 {
      %v = kernel.load %x[%c, %c0, %j] : memref<3x4x16xf32>
      %t = arith.addf %s, %v : f32
      kernel.store %s, %prefix[%c, %j] : memref<3x16xf32>
      kernel.yield %t : f32
    }
    %run = kernel.loop (%q) in (16) [reduction] iter_args(%r = %zero : f32) -> f32 {
      %v = kernel.load %x[%c, %c0, %q] : memref<3x4x16xf32>
      %t = arith.addf %r, %v : f32
      kernel.store %t, %prefix[%c, %q] : memref<3x16xf32>
      kernel.yield %t : f32
    }
    kernel.yield
  }
  func.return %sum, %max, %prefix : memref<3xf32>, memref<3xf32>, memref<3x16xf32>
}
