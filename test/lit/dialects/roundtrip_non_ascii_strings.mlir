// Regression: non-ASCII text (printed as byte escapes such as "\C3\A9") reads
// back in locations, #onnx.strings constants and STRINGS attributes.
// RUN: opt %s | opt | filecheck %s

// CHECK-LABEL: func.func @f(
// CHECK-NEXT:    %y = onnx.Relu(%x) : (tensor<2xf32>) -> tensor<2xf32> loc("r{{(é|\\C3\\A9)}}seau")
// CHECK-NEXT:    %t = onnx.StringNormalizer(%s) {stopwords = ["{{(été|\\C3\\A9t\\C3\\A9)}}"]} : (tensor<2x!onnx.string>) -> tensor<2x!onnx.string>
// CHECK-NEXT:    %c = onnx.Constant() {value = #onnx.strings<["{{(日本|\\E6\\97\\A5\\E6\\9C\\AC)}}"] : tensor<1x!onnx.string>>} : () -> tensor<1x!onnx.string>

func.func @f(%x: tensor<2xf32>, %s: tensor<2x!onnx.string>) {
  %y = onnx.Relu(%x) : (tensor<2xf32>) -> tensor<2xf32> loc("réseau")
  %t = onnx.StringNormalizer(%s) {stopwords = ["été"]} : (tensor<2x!onnx.string>) -> tensor<2x!onnx.string>
  %c = onnx.Constant() {value = #onnx.strings<["日本"] : tensor<1x!onnx.string>>} : () -> tensor<1x!onnx.string>
  func.return
}
