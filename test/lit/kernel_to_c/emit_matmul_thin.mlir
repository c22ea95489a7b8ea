// A product of at most 4 rows (a classifier at batch 1) streams a constant
// right operand itself: no packed copy is made at init.
// RUN: opt %s -t c | filecheck %s

// CHECK-NOT:    _packed
// CHECK:        int model_run(
// CHECK-NOT:    _packed
// CHECK:        rung_matmul_float(x, wv, y, 1, 1, 1, 1, 3, 4, 0);
func.func @matrix_vector(%x: memref<1x1x4xf32>) -> memref<1x1x3xf32> {
  %w = kernel.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [1.0, 0.0, 1.0]]> : tensor<4x3xf32>
  %wv = kernel.view %w() : memref<4x3xf32> -> memref<1x4x3xf32>
  %y = kernel.alloc() : memref<1x1x3xf32>
  kernel.matmul %x, %wv, %y : memref<1x1x4xf32>, memref<1x4x3xf32>, memref<1x1x3xf32>
  func.return %y : memref<1x1x3xf32>
}
