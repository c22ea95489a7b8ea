// A product's activation is the last field of its rung_gemm_epilogue, after the steps:
// RUNG_ACT_SILU, _GELU, _HARDSWISH. With no step, the literal holds no step and the activation.
// RUN: opt %s -t c | filecheck %s

// CHECK:      rung_matmul_float_ep(a, b, 0, c, 1, 1, 1, 4, 6, 3, 0, 0, &(const rung_gemm_epilogue){1, {{[{][{]}}RUNG_EP_ADD, RUNG_EP_ROW, (const float *)s}}, RUNG_ACT_SILU});
// CHECK:      rung_matmul_float_ep(a, b, 0, d, 1, 1, 1, 4, 6, 3, 0, 0, &(const rung_gemm_epilogue){0, {{[{][{]}}0}}, RUNG_ACT_SILU});
// CHECK:      rung_depthwise_float({{.*}}, (const int64_t[]){1, 1, 1, 1, 1, 1}, &(const rung_gemm_epilogue){0, {{[{][{]}}0}}, RUNG_ACT_HARDSWISH});
// CHECK:      rung_matmul_float_ep(a, b, 0, e, 1, 1, 1, 4, 6, 3, 0, 0, &(const rung_gemm_epilogue){0, {{[{][{]}}0}}, RUNG_ACT_GELU});
func.func @acts(%a: memref<1x4x3xf32>, %b: memref<1x3x6xf32>, %s: memref<4xf32>, %x: memref<1x3x5x5xf32>, %w: memref<3x1x3x3xf32>) -> (memref<1x4x6xf32>, memref<1x4x6xf32>, memref<1x3x5x5xf32>, memref<1x4x6xf32>) {
  %c = kernel.alloc() : memref<1x4x6xf32>
  kernel.matmul %a, %b, %c epilogue ["add:row" %s] {activation = "silu"} : memref<1x4x3xf32>, memref<1x3x6xf32>, memref<1x4x6xf32>, memref<4xf32>
  %d = kernel.alloc() : memref<1x4x6xf32>
  kernel.matmul %a, %b, %d {activation = "silu"} : memref<1x4x3xf32>, memref<1x3x6xf32>, memref<1x4x6xf32>
  %y = kernel.alloc() : memref<1x3x5x5xf32>
  kernel.call @depthwise_float(%x, %w, %y) [1, 1, 1, 1, 1, 1] {activation = "hardswish"} : memref<1x3x5x5xf32>, memref<3x1x3x3xf32>, memref<1x3x5x5xf32>
  %e = kernel.alloc() : memref<1x4x6xf32>
  kernel.matmul %a, %b, %e {activation = "gelu"} : memref<1x4x3xf32>, memref<1x3x6xf32>, memref<1x4x6xf32>
  func.return %c, %d, %y, %e : memref<1x4x6xf32>, memref<1x4x6xf32>, memref<1x3x5x5xf32>, memref<1x4x6xf32>
}
