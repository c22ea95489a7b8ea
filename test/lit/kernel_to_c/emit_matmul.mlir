// kernel.matmul calls the GEMM of rung_gemm.h. A right operand that is one
// constant matrix (a layer's weights, here through a view) is packed into the
// microkernel's panels once, by _init, and each product reads the packed copy;
// an operand computed at run time is passed as it is. Two products of the same
// weights in the same layout share one packed copy.
// RUN: opt %s -t c | filecheck %s

// CHECK:      static float *w_packed;
// CHECK-NOT:  static float *{{.*}}_packed;
// CHECK:      int model_init(const char *weights_path) {
// CHECK:        free(w_packed);
// CHECK-NEXT:   w_packed = rung_gemm_prepack_b((const float *)w, 3, 4, 0);
// CHECK-NEXT:   return 0;
// CHECK:      void model_release(void) {
// CHECK-NEXT:   free(w_packed);
// CHECK-NEXT:   w_packed = 0;
// CHECK:      int model_run(
// CHECK:        rung_matmul_float_packed(x, {{.*}}, w_packed, y, 1, 1, 5, 3, 4, 0, 0);
// CHECK:        rung_matmul_float_packed(x, {{.*}}, w_packed, z, 1, 1, 5, 3, 4, 1, 0);
// CHECK:        rung_matmul_float(x, v, u, 1, 1, 1, 5, 3, 4, 0);
func.func @products(%x: memref<1x5x4xf32>, %v: memref<1x4x3xf32>) -> (memref<1x5x3xf32>, memref<1x5x3xf32>, memref<1x5x3xf32>) {
  %w = kernel.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [1.0, 0.0, 1.0]]> : tensor<4x3xf32>
  %wv = kernel.view %w() : memref<4x3xf32> -> memref<1x4x3xf32>
  %y = kernel.alloc() : memref<1x5x3xf32>
  kernel.matmul %x, %wv, %y : memref<1x5x4xf32>, memref<1x4x3xf32>, memref<1x5x3xf32>
  %z = kernel.alloc() : memref<1x5x3xf32>
  kernel.matmul %x, %wv, %z {accumulate} : memref<1x5x4xf32>, memref<1x4x3xf32>, memref<1x5x3xf32>
  %u = kernel.alloc() : memref<1x5x3xf32>
  kernel.matmul %x, %v, %u : memref<1x5x4xf32>, memref<1x4x3xf32>, memref<1x5x3xf32>
  func.return %y, %z, %u : memref<1x5x3xf32>, memref<1x5x3xf32>, memref<1x5x3xf32>
}
