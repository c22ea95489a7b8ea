// Gather along a dynamic dim: a negative index wraps by the run-time size of that
// dim (read from core.shape_of), never refused, never wrapped by a guess.
// RUN: opt %s -p convert-onnx-to-core | filecheck %s

// CHECK-LABEL: func.func @gather_dynamic(
// CHECK:         %[[SHAPE:.*]] = core.shape_of(%x) : (tensor<?x?x4xf32>) -> tensor<3xi64>
// CHECK:         %[[DIM:.*]] = core.gather(%[[SHAPE]], %{{.*}}) {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
// CHECK:         %[[SIZE:.*]] = core.reshape(%[[DIM]]) : (tensor<1xi64>) -> tensor<i64>
// CHECK:         %[[NEG:.*]] = core.compare lt(%c, %{{.*}}) : (tensor<i64>, tensor<i64>) -> tensor<i1>
// CHECK:         %[[WRAP:.*]] = core.binary add(%c, %[[SIZE]])
// CHECK:         %[[IDX:.*]] = core.select(%[[NEG]], %[[WRAP]], %c)
// CHECK:         %[[SAFE:.*]] = core.check(%[[IDX]], %{{.*}}) {message = "Gather: an index is out of range of the dim it indexes"}
// CHECK-NEXT:    %last = core.gather(%x, %[[SAFE]]) {axis = 1 : i64} : (tensor<?x?x4xf32>, tensor<i64>) -> tensor<?x4xf32>
// A constant index that is not negative needs no wrapping, but the run-time dim
// may still be too small for it: the run checks it.
// CHECK:         %[[ZSAFE:.*]] = core.check(%{{.*}}, %{{.*}}) {message = "Gather: an index is out of range of the dim it indexes"}
// CHECK-NEXT:    %first = core.gather(%x, %[[ZSAFE]]) {axis = 1 : i64}
// CHECK-NOT:     onnx.
func.func @gather_dynamic(%x: tensor<?x?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %c = onnx.Constant() {value = dense<-1> : tensor<i64>} : () -> tensor<i64>
  %last = onnx.Gather(%x, %c) {axis = 1 : i64} : (tensor<?x?x4xf32>, tensor<i64>) -> tensor<?x4xf32>
  %z = onnx.Constant() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %first = onnx.Gather(%x, %z) {axis = 1 : i64} : (tensor<?x?x4xf32>, tensor<i64>) -> tensor<?x4xf32>
  func.return %last, %first : tensor<?x4xf32>, tensor<?x4xf32>
}
