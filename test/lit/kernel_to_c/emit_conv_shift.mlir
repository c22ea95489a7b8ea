// A stride-1 conv calls rung_conv_shift_float. Constant weights are packed once,
// by _init, into the panels its tiles read (rung_conv_prepack_w: output channels,
// C/G * KH * KW, groups), and the call passes the packed copy; two calls of the
// same weights share it. Weights computed at run time are packed by each call.
// RUN: opt %s -t c | filecheck %s

// CHECK:      static float *w_panels;
// CHECK-NOT:  static float *{{.*}}_panels
// CHECK:      int model_init(const char *weights_path) {
// CHECK:        free(w_panels);
// CHECK-NEXT:   w_panels = rung_conv_prepack_w((const float *)w, 4, 18, 2);
// CHECK-NEXT:   return 0;
// CHECK:      void model_release(void) {
// CHECK-NEXT:   free(w_panels);
// CHECK-NEXT:   w_panels = 0;
// CHECK:      int model_run(
// CHECK:        rung_conv_shift_packed_float((rung_tensor[]){{[{][{]}}(void *)x, 1, 4, {1, 4, 6, 16}}, {(void *)w, 1, 4, {4, 2, 3, 3}}, {{.*}}}, (const int64_t[]){1, 1, 1, 1, 2, 1, 1}, 0, w_panels);
// CHECK:        rung_conv_shift_packed_float({{.*}}, (const int64_t[]){1, 1, 1, 1, 2, 1, 1}, &(const rung_gemm_epilogue){1, {{[{][{]}}RUNG_EP_ADD, RUNG_EP_ROW, (const float *)b}}}, w_panels);
// CHECK:        rung_conv_shift_float({{.*}}{(void *)v, 1, 4, {4, 2, 3, 3}}{{.*}}, (const int64_t[]){1, 1, 1, 1, 2, 1, 1}, 0);
func.func @convs(%x: memref<1x4x6x16xf32>, %v: memref<4x2x3x3xf32>) -> (memref<1x4x6x16xf32>, memref<1x4x6x16xf32>, memref<1x4x6x16xf32>) {
  %w = kernel.constant dense<0.5> : tensor<4x2x3x3xf32>
  %b = kernel.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %y = kernel.alloc() : memref<1x4x6x16xf32>
  kernel.call @conv_shift_float(%x, %w, %y) [1, 1, 1, 1, 2, 1, 1] : memref<1x4x6x16xf32>, memref<4x2x3x3xf32>, memref<1x4x6x16xf32>
  %z = kernel.alloc() : memref<1x4x6x16xf32>
  kernel.call @conv_shift_float(%x, %w, %z) [1, 1, 1, 1, 2, 1, 1] epilogue ["add:row" %b] : memref<1x4x6x16xf32>, memref<4x2x3x3xf32>, memref<1x4x6x16xf32>, memref<4xf32>
  %u = kernel.alloc() : memref<1x4x6x16xf32>
  kernel.call @conv_shift_float(%x, %v, %u) [1, 1, 1, 1, 2, 1, 1] : memref<1x4x6x16xf32>, memref<4x2x3x3xf32>, memref<1x4x6x16xf32>
  func.return %y, %z, %u : memref<1x4x6x16xf32>, memref<1x4x6x16xf32>, memref<1x4x6x16xf32>
}
