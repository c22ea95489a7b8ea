// The number of inputs must fit the schema: too many or too few inputs are
// parse errors that name the op and the missing input; the number of input
// types must match the number of inputs.
// RUN: opt %s --split-input-file --verify-diagnostics --parsing-diagnostics 2>&1 | filecheck %s

// CHECK-NOT: Traceback
// CHECK:     onnx.Add: too many inputs: expected at most 2, got 3
// CHECK:     {{^}}// {{-----}}
// CHECK:     onnx.Add: missing required input 'B'
// CHECK:     {{^}}// {{-----}}
// CHECK:     onnx.Relu: 2 inputs but 1 input types
// CHECK:     {{^}}// {{-----}}
// CHECK:     onnx.Sum: variadic input 'data_0' needs at least 1 value(s), got 0
// CHECK-NOT: Traceback

func.func @too_many(%a: tensor<2xf32>) -> tensor<2xf32> {
  %y = onnx.Add(%a, %a, %a) : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// -----

func.func @too_few(%a: tensor<2xf32>) -> tensor<2xf32> {
  %y = onnx.Add(%a) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// -----

func.func @types(%a: tensor<2xf32>) -> tensor<2xf32> {
  %y = onnx.Relu(%a, %a) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// -----

func.func @empty_variadic() -> tensor<2xf32> {
  %y = onnx.Sum() : () -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
