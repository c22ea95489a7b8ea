// ai.onnx.ml ops (`onnx.ml.*`) round trip with their list attributes and map
// inputs.
// RUN: opt %s | opt | filecheck %s

// CHECK-LABEL: func.func @ml(
// CHECK-NEXT:    %sc = onnx.ml.Scaler(%x) {offset = array<f32: 1.000000e+00, 2.000000e+00>, scale = array<f32: 5.000000e-01, 2.500000e-01>} : (tensor<3x2xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    %ids = onnx.ml.LabelEncoder(%words) {keys_strings = ["a", "b"], values_int64s = array<i64: 1, 2>, default_int64 = -1 : i64} : (tensor<4x!onnx.string>) -> tensor<4xi64>
// CHECK-NEXT:    %v = onnx.ml.DictVectorizer(%m) {string_vocabulary = ["a", "b"]} : (!onnx.map<!onnx.string, i64>) -> tensor<1x2xi64>
// CHECK-NEXT:    %z = onnx.ml.ZipMap(%x) {classlabels_int64s = array<i64: 10, 20>} : (tensor<3x2xf32>) -> !onnx.seq<!onnx.map<i64, f32>>

func.func @ml(%x: tensor<3x2xf32>, %words: tensor<4x!onnx.string>, %m: !onnx.map<!onnx.string, i64>) {
  %sc = onnx.ml.Scaler(%x) {offset = array<f32: 1.0, 2.0>, scale = array<f32: 0.5, 0.25>} : (tensor<3x2xf32>) -> tensor<3x2xf32>
  %ids = onnx.ml.LabelEncoder(%words) {keys_strings = ["a", "b"], values_int64s = array<i64: 1, 2>, default_int64 = -1 : i64} : (tensor<4x!onnx.string>) -> tensor<4xi64>
  %v = onnx.ml.DictVectorizer(%m) {string_vocabulary = ["a", "b"]} : (!onnx.map<!onnx.string, i64>) -> tensor<1x2xi64>
  %z = onnx.ml.ZipMap(%x) {classlabels_int64s = array<i64: 10, 20>} : (tensor<3x2xf32>) -> !onnx.seq<!onnx.map<i64, f32>>
  func.return
}
