// As in MLIR, the generic syntax keeps locations (node names) with
// --print-debuginfo, and they read back into the custom syntax.
// RUN: opt %s --print-op-generic --print-debuginfo | opt | filecheck %s

// CHECK-LABEL: func.func @located(
// CHECK-NEXT:    %g = onnx.Relu(%x) : (tensor<2xf32>) -> tensor<2xf32> loc("relu_1")
// CHECK-NEXT:    %y = onnx.If(%c) : (tensor<i1>) -> tensor<2xf32> then_branch {
// CHECK:         } loc("if_1")

func.func @located(%x: tensor<2xf32>, %c: tensor<i1>) -> tensor<2xf32> {
  %g = onnx.Relu(%x) : (tensor<2xf32>) -> tensor<2xf32> loc("relu_1")
  %y = onnx.If(%c) : (tensor<i1>) -> tensor<2xf32> then_branch {
    onnx.Yield %g : tensor<2xf32>
  } else_branch {
    onnx.Yield %x : tensor<2xf32>
  } loc("if_1")
  func.return %y : tensor<2xf32>
}
