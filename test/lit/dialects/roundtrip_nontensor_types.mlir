// The dialect's non-tensor types print and parse back: sequences, optionals,
// maps (with a bare element or a tensor as value), string tensors, and the
// unknown type of results of unmodeled ops.
// RUN: opt %s | opt | filecheck %s

// CHECK-LABEL: func.func @types(
// CHECK-SAME:    %s: !onnx.seq<tensor<2xf32>>
// CHECK-SAME:    %o: !onnx.opt<tensor<3xi64>>
// CHECK-SAME:    %m: !onnx.seq<!onnx.map<i64, f32>>
// CHECK-SAME:    %ms: !onnx.map<!onnx.string, tensor<2xf32>>
// CHECK-SAME:    %str: tensor<3x!onnx.string>
// CHECK-SAME:    %oo: !onnx.opt<!onnx.seq<tensor<?xi32>>>
// CHECK-SAME:    %u: !onnx.unknown
// CHECK-SAME:    %sr: !onnx.seq<tensor<*xf32>>)
// CHECK-NEXT:    %n = onnx.SequenceLength(%s) : (!onnx.seq<tensor<2xf32>>) -> tensor<i64>
// CHECK-NEXT:    %h = onnx.OptionalHasElement(%o) : (!onnx.opt<tensor<3xi64>>) -> tensor<i1>
// CHECK-NEXT:    %up = onnx.StringNormalizer(%str) {case_change_action = "UPPER"} : (tensor<3x!onnx.string>) -> tensor<3x!onnx.string>
// CHECK-NEXT:    %e = onnx.Optional() {type = !onnx.seq<tensor<?xi32>>} : () -> !onnx.opt<!onnx.seq<tensor<?xi32>>>
// CHECK-NEXT:    %r = onnx.Relu(%u) : (!onnx.unknown) -> tensor<2xf32>

func.func @types(%s: !onnx.seq<tensor<2xf32>>, %o: !onnx.opt<tensor<3xi64>>, %m: !onnx.seq<!onnx.map<i64, f32>>, %ms: !onnx.map<!onnx.string, tensor<2xf32>>, %str: tensor<3x!onnx.string>, %oo: !onnx.opt<!onnx.seq<tensor<?xi32>>>, %u: !onnx.unknown, %sr: !onnx.seq<tensor<*xf32>>) {
  %n = onnx.SequenceLength(%s) : (!onnx.seq<tensor<2xf32>>) -> tensor<i64>
  %h = onnx.OptionalHasElement(%o) : (!onnx.opt<tensor<3xi64>>) -> tensor<i1>
  %up = onnx.StringNormalizer(%str) {case_change_action = "UPPER"} : (tensor<3x!onnx.string>) -> tensor<3x!onnx.string>
  %e = onnx.Optional() {type = !onnx.seq<tensor<?xi32>>} : () -> !onnx.opt<!onnx.seq<tensor<?xi32>>>
  %r = onnx.Relu(%u) : (!onnx.unknown) -> tensor<2xf32>
  func.return
}
