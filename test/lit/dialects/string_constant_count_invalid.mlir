// Regression: a #onnx.strings constant whose string count does not match its
// type is a diagnostic, not a Python traceback.
// RUN: not opt %s 2>&1 | filecheck %s

// CHECK-NOT: Traceback
// CHECK:     opt: error: {{.*}}onnx.strings holds 2 values but its type tensor<3x!onnx.string> has 3 elements
// CHECK-NOT: Traceback

func.func @f() -> tensor<3x!onnx.string> {
  %st = onnx.Constant() {value = #onnx.strings<["a", "b"] : tensor<3x!onnx.string>>} : () -> tensor<3x!onnx.string>
  func.return %st : tensor<3x!onnx.string>
}
