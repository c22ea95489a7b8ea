// Regression: an output bound to the same type variable as an input must have
// the input's type (inputs and outputs used to be checked separately).
// RUN: not opt %s 2>&1 | filecheck %s

// CHECK-NOT: Traceback
// CHECK:     opt: error: {{.*}}onnx.Relu: output 'Y' is tensor(double) but {{.*}}'X' is tensor(float); both are bound to type 'T'

func.func @f(%a: tensor<2xf32>) -> tensor<2xf64> {
  %y = onnx.Relu(%a) : (tensor<2xf32>) -> tensor<2xf64>
  func.return %y : tensor<2xf64>
}
