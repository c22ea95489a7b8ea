// An attribute must be stored as its ONNX kind: INTS as `array<i64: ...>`
// (not an array attribute), FLOAT as an f32 (not an integer), STRING as a
// string.
// RUN: opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s

// CHECK-NOT: Traceback
// CHECK:     {{^}}onnx.Transpose: attribute 'perm' must be an ONNX INTS, got [1 : i64, 0 : i64]
// CHECK:     | Operation does not verify: onnx.Transpose: attribute 'perm'
// CHECK:     {{^}}onnx.LeakyRelu: attribute 'alpha' must be an ONNX FLOAT, got 1 : i64
// CHECK:     | Operation does not verify: onnx.LeakyRelu: attribute 'alpha'
// CHECK:     {{^}}onnx.DepthToSpace: attribute 'mode' must be an ONNX STRING, got 1 : i64
// CHECK:     | Operation does not verify: onnx.DepthToSpace: attribute 'mode'
// CHECK-NOT: Traceback

func.func @ints(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %y = onnx.Transpose(%a) {perm = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %y : tensor<3x2xf32>
}

// -----

func.func @float(%a: tensor<2xf32>) -> tensor<2xf32> {
  %y = onnx.LeakyRelu(%a) {alpha = 1 : i64} : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// -----

func.func @string(%a: tensor<1x8x2x2xf32>) -> tensor<1x2x4x4xf32> {
  %y = onnx.DepthToSpace(%a) {blocksize = 2 : i64, mode = 1 : i64} : (tensor<1x8x2x2xf32>) -> tensor<1x2x4x4xf32>
  func.return %y : tensor<1x2x4x4xf32>
}
