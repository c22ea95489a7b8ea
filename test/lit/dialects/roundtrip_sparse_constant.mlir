// Sparse constants (`#onnx.sparse<values, indices, dense shape>`) round trip,
// with linear indices or with one coordinate row per value.
// RUN: opt %s | opt | filecheck %s

// CHECK-LABEL: func.func @sparse(
// CHECK-NEXT:    %lin = onnx.Constant() {sparse_value = #onnx.sparse<dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>, dense<[1, 7]> : tensor<2xi64>, [3, 4]>} : () -> tensor<3x4xf32>
// CHECK-NEXT:    %coo = onnx.Constant() {sparse_value = #onnx.sparse<dense<[5, 6]> : tensor<2xi32>, dense<{{\[\[}}0, 1], [2, 3]]> : tensor<2x2xi64>, [3, 4]>} : () -> tensor<3x4xi32>
// CHECK-NEXT:    func.return %lin, %coo : tensor<3x4xf32>, tensor<3x4xi32>

func.func @sparse() -> (tensor<3x4xf32>, tensor<3x4xi32>) {
  %lin = onnx.Constant() {sparse_value = #onnx.sparse<dense<[1.0, 2.0]> : tensor<2xf32>, dense<[1, 7]> : tensor<2xi64>, [3, 4]>} : () -> tensor<3x4xf32>
  %coo = onnx.Constant() {sparse_value = #onnx.sparse<dense<[5, 6]> : tensor<2xi32>, dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>, [3, 4]>} : () -> tensor<3x4xi32>
  func.return %lin, %coo : tensor<3x4xf32>, tensor<3x4xi32>
}
