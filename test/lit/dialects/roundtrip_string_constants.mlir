// String tensor constants (`#onnx.strings<[...] : type>`) round trip,
// including escaped quotes, control characters, backslashes, empty strings,
// an empty tensor, a rank-0 tensor and a 2-D tensor.
// RUN: opt %s | opt | filecheck %s

// CHECK-LABEL: func.func @strings(
// CHECK-NEXT:    %a = onnx.Constant() {value = #onnx.strings<["x", "yz", ""] : tensor<3x!onnx.string>>} : () -> tensor<3x!onnx.string>
// CHECK-NEXT:    %b = onnx.Constant() {value = #onnx.strings<["a\22b", "new\0Aline", "tab\09", "back\\slash"] : tensor<2x2x!onnx.string>>} : () -> tensor<2x2x!onnx.string>
// CHECK-NEXT:    %c = onnx.Constant() {value = #onnx.strings<[] : tensor<0x!onnx.string>>} : () -> tensor<0x!onnx.string>
// CHECK-NEXT:    %d = onnx.Constant() {value = #onnx.strings<["only"] : tensor<!onnx.string>>} : () -> tensor<!onnx.string>
// CHECK-NEXT:    %m = onnx.ml.CategoryMapper(%i) {cats_int64s = array<i64: 1, 2>, cats_strings = ["one", "two"], default_string = "?"} : (tensor<3xi64>) -> tensor<3x!onnx.string>

func.func @strings(%i: tensor<3xi64>) {
  %a = onnx.Constant() {value = #onnx.strings<["x", "yz", ""] : tensor<3x!onnx.string>>} : () -> tensor<3x!onnx.string>
  %b = onnx.Constant() {value = #onnx.strings<["a\"b", "new\nline", "tab\09", "back\\slash"] : tensor<2x2x!onnx.string>>} : () -> tensor<2x2x!onnx.string>
  %c = onnx.Constant() {value = #onnx.strings<[] : tensor<0x!onnx.string>>} : () -> tensor<0x!onnx.string>
  %d = onnx.Constant() {value = #onnx.strings<["only"] : tensor<!onnx.string>>} : () -> tensor<!onnx.string>
  %m = onnx.ml.CategoryMapper(%i) {cats_int64s = array<i64: 1, 2>, cats_strings = ["one", "two"], default_string = "?"} : (tensor<3xi64>) -> tensor<3x!onnx.string>
  func.return
}
