// RUN: opt %S/Inputs/add_relu.onnxtxt | filecheck %s
// RUN: opt %S/Inputs/add_relu.onnxtxt | opt | filecheck %s
// RUN: opt -f onnxtxt < %S/Inputs/add_relu.onnxtxt | filecheck %s

// opt imports a textual ONNX model (picked by its .onnxtxt suffix, or by -f
// from standard input) before running passes on it, as `rung import` would.

// CHECK:       func.func @add_relu(%a: tensor<2xf32> {{.*}}, %b: tensor<2xf32> {{.*}}) -> (tensor<2xf32> {{.*}})
// CHECK:         %[[S:.*]] = onnx.Add(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK:         %[[Y:.*]] = onnx.Relu(%[[S]]) : (tensor<2xf32>) -> tensor<2xf32>
// CHECK:         func.return %[[Y]] : tensor<2xf32>
