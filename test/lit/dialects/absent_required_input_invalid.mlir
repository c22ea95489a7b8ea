// `none` is only allowed for optional inputs and outputs, and an absent input
// must have type `none`.
// RUN: opt %s --split-input-file --verify-diagnostics --parsing-diagnostics 2>&1 | filecheck %s

// CHECK-NOT: Traceback
// CHECK:     onnx.Add: input 'A' is not optional
// CHECK:     {{^}}// {{-----}}
// CHECK:     onnx.Clip: an absent input must have type 'none'
// CHECK:     {{^}}// {{-----}}
// CHECK:     onnx.Identity: output 'output' is not optional
// CHECK-NOT: Traceback

func.func @required(%a: tensor<2xf32>) -> tensor<2xf32> {
  %y = onnx.Add(none, %a) : (none, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// -----

func.func @typed_none(%x: tensor<2xf32>, %hi: tensor<f32>) -> tensor<2xf32> {
  %y = onnx.Clip(%x, none, %hi) : (tensor<2xf32>, tensor<f32>, tensor<f32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// -----

func.func @absent_output(%x: tensor<5x2x4xf32>) {
  %z = onnx.Identity(%x) : (tensor<5x2x4xf32>) -> none
  func.return
}
