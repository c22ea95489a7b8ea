// With K >= 64 and fewer columns than a vector (a classifier's last layer), `_init`
// keeps B transposed as well, and the product takes dot products along K.
// RUN: opt %s -t c | filecheck %s

// CHECK-LABEL: int model_init(
// CHECK:         [[T:w[0-9]*_thin]] = rung_gemm_prepack_thin((const float *)[[W:w[0-9]*]], 10, 64, 0);
// CHECK-LABEL: int model_run(
// CHECK:         rung_matmul_float_thin(x, wv, [[T]], y, 1, 1, 1, 10, 64, 0, 0);
func.func @classifier(%x: memref<1x1x64xf32>) -> memref<1x1x10xf32> {
  %w = kernel.constant dense<0.5> : tensor<64x10xf32>
  %wv = kernel.view %w() : memref<64x10xf32> -> memref<1x64x10xf32>
  %y = kernel.alloc() : memref<1x1x10xf32>
  kernel.matmul %x, %wv, %y : memref<1x1x64xf32>, memref<1x64x10xf32>, memref<1x1x10xf32>
  func.return %y : memref<1x1x10xf32>
}
