// A row loop that calls a rung_math.h function (GELU's erf, SiLU's exp), all parallel,
// its row a whole number of 16-float vectors, gets `#pragma omp simd simdlen(16)`: it is
// bound by arithmetic, and gcc's own choice is 256-bit vectors. A row with a remainder
// (Softmax over 197), a row without such a call, and a reduction keep gcc's choice.
// RUN: opt %s -t c | filecheck %s

// CHECK-LABEL: int model_run(
// CHECK:         for (int64_t i = 0; i < 4; i++) {
// CHECK-NEXT:      #pragma omp simd simdlen(16)
// CHECK-NEXT:      for (int64_t j = 0; j < 64; j++) {
// CHECK:             rung_erff(
// CHECK:         for (int64_t i1 = 0; i1 < 4; i1++) {
// CHECK-NEXT:      for (int64_t j2 = 0; j2 < 197; j2++) {
// CHECK:         for (int64_t i5 = 0; i5 < 4; i5++) {
// CHECK-NEXT:      for (int64_t j6 = 0; j6 < 64; j6++) {
// A row that is also the parallel loop takes the combined construct.
// CHECK:         #pragma omp parallel for simd simdlen(16) schedule(static)
// CHECK-NEXT:    for (int64_t k = 0; k < 128; k++) {
// CHECK-NOT:     simdlen
func.func @rows(%x: memref<4x64xf32>, %s: memref<4x197xf32>) -> (memref<4x64xf32>, memref<4x197xf32>, memref<4x64xf32>, memref<4xf32>, memref<128xf32>) {
  %silu = kernel.alloc() : memref<128xf32>
  %gelu = kernel.alloc() : memref<4x64xf32>
  %soft = kernel.alloc() : memref<4x197xf32>
  %plain = kernel.alloc() : memref<4x64xf32>
  %sum = kernel.alloc() : memref<4xf32>
  %half = arith.constant 0.5 : f32
  %zero = arith.constant 0.0 : f32
  kernel.loop (%i, %j) in (4, 64) [parallel, parallel] {
    %v = kernel.load %x[%i, %j] : memref<4x64xf32>
    %e = math.erf %v : f32
    %t = arith.mulf %e, %half : f32
    kernel.store %t, %gelu[%i, %j] : memref<4x64xf32>
    kernel.yield
  }
  kernel.loop (%i, %j) in (4, 197) [parallel, parallel] {
    %v = kernel.load %s[%i, %j] : memref<4x197xf32>
    %e = math.exp %v : f32
    kernel.store %e, %soft[%i, %j] : memref<4x197xf32>
    kernel.yield
  }
  kernel.loop (%i, %j) in (4, 64) [parallel, parallel] {
    %v = kernel.load %x[%i, %j] : memref<4x64xf32>
    %t = arith.mulf %v, %half : f32
    kernel.store %t, %plain[%i, %j] : memref<4x64xf32>
    kernel.yield
  }
  kernel.loop (%i) in (4) [parallel] {
    %total = kernel.loop (%j) in (64) [reduction] iter_args(%acc = %zero : f32) -> f32 {
      %v = kernel.load %x[%i, %j] : memref<4x64xf32>
      %e = math.exp %v : f32
      %t = arith.addf %acc, %e : f32
      kernel.yield %t : f32
    }
    kernel.store %total, %sum[%i] : memref<4xf32>
    kernel.yield
  }
  %flat = kernel.view %x() : memref<4x64xf32> -> memref<256xf32>
  kernel.loop (%k) in (128) [parallel] attributes {omp} {
    %v = kernel.load %flat[%k] : memref<256xf32>
    %e = math.exp %v : f32
    %t = arith.mulf %v, %e : f32
    kernel.store %t, %silu[%k] : memref<128xf32>
    kernel.yield
  }
  func.return %gelu, %soft, %plain, %sum, %silu : memref<4x64xf32>, memref<4x197xf32>, memref<4x64xf32>, memref<4xf32>, memref<128xf32>
}
