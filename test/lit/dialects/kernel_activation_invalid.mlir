// An activation that is not a string is a parse error, reported at its op, with the
// names that are allowed.
// RUN: not opt %s 2>&1 | filecheck %s
// CHECK-NOT: Traceback
// CHECK: activation must be a string, one of silu, gelu, hardswish
func.func @activation_not_a_string(%a: memref<1x2x3xf32>, %b: memref<1x3x5xf32>, %c: memref<1x2x5xf32>) {
  kernel.matmul %a, %b, %c {activation = 1 : i64} : memref<1x2x3xf32>, memref<1x3x5xf32>, memref<1x2x5xf32>
  func.return
}
