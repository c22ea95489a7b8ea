// ONNX attributes of every scalar and list kind print and parse back
// unchanged, as does a node's location.
// RUN: opt %s | opt | filecheck %s

// CHECK-LABEL: func.func @attrs(
// CHECK-NEXT:    %g = onnx.Gemm(%a, %b) {alpha = 5.000000e-01 : f32, beta = 2.000000e+00 : f32, transB = 1 : i64} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32> loc("gemm_1")
// CHECK-NEXT:    %t = onnx.Transpose(%a) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    %d = onnx.DepthToSpace(%img) {blocksize = 2 : i64, mode = "CRD"} : (tensor<1x8x2x2xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    %sn = onnx.StringNormalizer(%s) {case_change_action = "LOWER", stopwords = ["a", "the"]} : (tensor<3x!onnx.string>) -> tensor<?x!onnx.string>
// CHECK-NEXT:    %cf = onnx.Constant() {value_floats = array<f32: 5.000000e-01, -1.500000e+00>} : () -> tensor<2xf32>
// CHECK-NEXT:    %ci = onnx.Constant() {value_ints = array<i64>} : () -> tensor<0xi64>
// CHECK-NEXT:    %c = onnx.Constant() {value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>} : () -> tensor<2xf32> loc("weights/0")
// CHECK-NEXT:    %cast = onnx.Cast(%a) {to = 10 : i64, saturate = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf16>
// CHECK-NEXT:    func.return %g : tensor<2x4xf32>

func.func @attrs(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>, %img: tensor<1x8x2x2xf32>, %s: tensor<3x!onnx.string>) -> tensor<2x4xf32> {
  %g = onnx.Gemm(%a, %b) {alpha = 0.5 : f32, beta = 2.0 : f32, transB = 1 : i64} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32> loc("gemm_1")
  %t = onnx.Transpose(%a) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %d = onnx.DepthToSpace(%img) {blocksize = 2 : i64, mode = "CRD"} : (tensor<1x8x2x2xf32>) -> tensor<1x2x4x4xf32>
  %sn = onnx.StringNormalizer(%s) {case_change_action = "LOWER", stopwords = ["a", "the"]} : (tensor<3x!onnx.string>) -> tensor<?x!onnx.string>
  %cf = onnx.Constant() {value_floats = array<f32: 0.5, -1.5>} : () -> tensor<2xf32>
  %ci = onnx.Constant() {value_ints = array<i64>} : () -> tensor<0xi64>
  %c = onnx.Constant() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32> loc("weights/0")
  %cast = onnx.Cast(%a) {to = 10 : i64, saturate = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf16>
  func.return %g : tensor<2x4xf32>
}
