// Reductions back to ONNX: core.reduce drops its axes (keepdims = 0),
// masked_reduce keeps them and takes them from NonZero of its mask, logical
// and is ReduceMin over int32 and or is not-and-not (both keep their identity
// on an empty set), and sort is TopK of the whole axis.
// RUN: opt %s -p convert-core-to-onnx | filecheck %s

// CHECK-LABEL: func.func @reduce(
// CHECK:         %[[AX:.*]] = onnx.Constant() {value = dense<1> : tensor<1xi64>}
// CHECK-NEXT:    %s = onnx.ReduceSum(%x, %[[AX]]) {keepdims = 0 : i64, noop_with_empty_axes = 1 : i64} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2xf32>
// CHECK:         %[[NZ:.*]] = onnx.NonZero(%mask) : (tensor<2xi1>) -> tensor<1x?xi64>
// CHECK:         %[[M:.*]] = onnx.Reshape(%[[NZ]], %{{.*}})
// CHECK-NEXT:    %k = onnx.ReduceMax(%x, %[[M]]) {keepdims = 1 : i64, noop_with_empty_axes = 1 : i64} : (tensor<2x3xf32>, tensor<?xi64>) -> tensor<?x?xf32>
// CHECK:         %[[W:.*]] = onnx.Cast(%b) {to = 6 : i64}
// CHECK:         %[[R:.*]] = onnx.ReduceMin(%[[W]], %{{.*}}) {keepdims = 0 : i64, noop_with_empty_axes = 1 : i64}
// CHECK-NEXT:    %all = onnx.Cast(%[[R]]) {to = 9 : i64}
// CHECK:         %[[N:.*]] = onnx.Not(%b)
// CHECK-NEXT:    %[[W2:.*]] = onnx.Cast(%[[N]]) {to = 6 : i64}
// CHECK-NEXT:    %[[R2:.*]] = onnx.ReduceMin(%[[W2]], %{{.*}})
// CHECK-NEXT:    %[[C2:.*]] = onnx.Cast(%[[R2]]) {to = 9 : i64}
// CHECK-NEXT:    %any = onnx.Not(%[[C2]])
// CHECK-NEXT:    %a = onnx.ArgMax(%x) {axis = 1 : i64, keepdims = 0 : i64, select_last_index = 1 : i64}
// CHECK:         %c = onnx.CumSum(%x, %{{.*}}) {exclusive = 1 : i64, reverse = 0 : i64}
// CHECK:         %v, %i = onnx.TopK(%x, %{{.*}}) {axis = 1 : i64, largest = 1 : i64, sorted = 1 : i64} : (tensor<2x3xf32>, tensor<1xi64>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
func.func @reduce(%x: tensor<2x3xf32>, %mask: tensor<2xi1>, %b: tensor<2x3xi1>) -> (tensor<2xf32>, tensor<?x?xf32>, tensor<2xi1>, tensor<2xi1>, tensor<2xi64>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi64>) {
  %s = core.reduce sum(%x) {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  %k = core.masked_reduce max(%x, %mask) : (tensor<2x3xf32>, tensor<2xi1>) -> tensor<?x?xf32>
  %all = core.reduce and(%b) {axes = array<i64: 1>} : (tensor<2x3xi1>) -> tensor<2xi1>
  %any = core.reduce or(%b) {axes = array<i64: 1>} : (tensor<2x3xi1>) -> tensor<2xi1>
  %a = core.arg_reduce max(%x) {axis = 1 : i64, last = 1 : i64} : (tensor<2x3xf32>) -> tensor<2xi64>
  %c = core.cumulative sum(%x) {axis = 1 : i64, exclusive = 1 : i64, reverse = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %v, %i = core.sort(%x) {axis = 1 : i64, descending = 1 : i64} : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
  func.return %s, %k, %all, %any, %a, %c, %v, %i : tensor<2xf32>, tensor<?x?xf32>, tensor<2xi1>, tensor<2xi1>, tensor<2xi64>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi64>
}
