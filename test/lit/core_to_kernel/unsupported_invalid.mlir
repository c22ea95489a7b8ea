// Values the kernel level cannot hold are reported before anything is built,
// each with its op and location.
// RUN: not opt %s -p convert-core-to-kernel 2>&1 | filecheck %s

// CHECK-NOT: Traceback
// CHECK:     opt: error: {{.*}}unsupported_invalid.mlir: failed to lower 'core.cast' at <module>:node 'Cast_0': element type complex<f32> is not supported at the kernel level
// CHECK-NOT: Traceback

func.func @complex(%x: tensor<4xf32>) -> tensor<4xcomplex<f32>> {
  %y = core.cast(%x) : (tensor<4xf32>) -> tensor<4xcomplex<f32>> loc("Cast_0")
  func.return %y : tensor<4xcomplex<f32>>
}
