// Variadic inputs and outputs print as flat lists and parse back into the
// same groups.
// RUN: opt %s | opt | filecheck %s
// RUN: opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @variadic(
// CHECK-NEXT:    %cat = onnx.Concat(%a, %b, %a) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x3xf32>) -> tensor<2x7xf32>
// CHECK-NEXT:    %s = onnx.Sum(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %p, %q, %r = onnx.Split(%a, %sizes) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3xi64>) -> (tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
// CHECK-NEXT:    %{{[^,]+}}, %{{[^ ]+}} = onnx.Loop(%n, none, %a, %b) : (tensor<i64>, none, tensor<2x3xf32>, tensor<2x1xf32>) -> (tensor<2x3xf32>, tensor<2x1xf32>) body {

// The generic form shows how positions map onto the groups.
// GENERIC:      "onnx.Concat"(%a, %b, %a) <{axis = 1 : i64}>
// GENERIC:      %p, %q, %r = "onnx.Split"(%a, %sizes) <{axis = 1 : i64}>
// GENERIC:      "onnx.Loop"(%n, %a, %b) <{operandSegmentSizes = array<i32: 1, 0, 2>}>

func.func @variadic(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>, %sizes: tensor<3xi64>, %n: tensor<i64>) {
  %cat = onnx.Concat(%a, %b, %a) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x3xf32>) -> tensor<2x7xf32>
  %s = onnx.Sum(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %p, %q, %r = onnx.Split(%a, %sizes) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3xi64>) -> (tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  %l:2 = onnx.Loop(%n, none, %a, %b) : (tensor<i64>, none, tensor<2x3xf32>, tensor<2x1xf32>) -> (tensor<2x3xf32>, tensor<2x1xf32>) body {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %x: tensor<2x3xf32>, %y: tensor<2x1xf32>):
    onnx.Yield %c, %x, %y : tensor<i1>, tensor<2x3xf32>, tensor<2x1xf32>
  }
  func.return
}
