// Core ops that ONNX cannot express stop the conversion with the op, its
// keyword and its node, and the reason; nothing half-converted is printed.
// RUN: not opt %s -p convert-core-to-onnx 2>&1 | filecheck %s
// RUN: not rung export %s -o %t.onnx 2>&1 | filecheck %s
// RUN: not test -e %t.onnx

// CHECK-NOT: Traceback
// CHECK:     error: {{.*}}cannot export 'core.unary upper' at node 'shout' to ONNX: 'upper' changes the case of strings, not of f32
// CHECK-NOT: onnx.
func.func @case_of_floats(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = core.unary upper(%x) : (tensor<4xf32>) -> tensor<4xf32> loc("shout")
  func.return %y : tensor<4xf32>
}
