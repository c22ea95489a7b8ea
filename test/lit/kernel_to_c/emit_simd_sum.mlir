// A float sum, max or min along an innermost loop (a global pool, ReduceSum/Mean/Max,
// a norm's mean, Softmax's row max) gets `#pragma omp simd reduction(...)`, so gcc
// keeps a vector of partial results instead of folding one element after another: `+`
// for a sum, and rung_runtime.h's NaN-propagating `rung_max` and `rung_min` for
// `maximumf` and `minimumf`; several carried values get a clause per kind. A carried
// value that is not only folded (a sum read inside the loop, a running sum stored in
// it as CumSum does, a max of the value with itself) does not.
// RUN: opt %s -t c | filecheck %s

// CHECK-LABEL: int model_run(
// CHECK:         float acc = 0.0f;
// CHECK-NEXT:    for (int64_t h = 0; h < 4; h++) {
// CHECK-NEXT:      #pragma omp simd reduction(+:acc)
// CHECK-NEXT:      for (int64_t w = 0; w < 16; w++) {
// CHECK:         float m = 0.0f;
// CHECK-NEXT:    #pragma omp simd reduction(rung_max:m)
// CHECK-NEXT:    for (int64_t k = 0; k < 16; k++) {
// CHECK:         float lo = 0.0f;
// CHECK-NEXT:    float hi = 0.0f;
// CHECK-NEXT:    float tot = 0.0f;
// CHECK-NEXT:    #pragma omp simd reduction(rung_min:lo) reduction(rung_max:hi) reduction(+:tot)
// CHECK-NEXT:    for (int64_t n = 0; n < 16; n++) {
// CHECK:         float self = 0.0f;
// CHECK-NEXT:    for (int64_t u = 0; u < 16; u++) {
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
    %lows:3 = kernel.loop (%n) in (16) [reduction] iter_args(%lo = %zero : f32, %hi = %zero : f32, %tot = %zero : f32) -> f32, f32, f32 {
      %v = kernel.load %x[%c, %c0, %n] : memref<3x4x16xf32>
      %a = arith.minimumf %v, %lo : f32
      %b = arith.maximumf %hi, %v : f32
      %d = arith.addf %tot, %v : f32
      kernel.yield %a, %b, %d : f32, f32, f32
    }
    kernel.store %lows#0, %max[%c] : memref<3xf32>
    kernel.store %lows#1, %sum[%c] : memref<3xf32>
    kernel.store %lows#2, %sum[%c] : memref<3xf32>
    %twice = kernel.loop (%u) in (16) [reduction] iter_args(%self = %zero : f32) -> f32 {
      %t = arith.maximumf %self, %self : f32
      kernel.yield %t : f32
    }
    kernel.store %twice, %max[%c] : memref<3xf32>
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
