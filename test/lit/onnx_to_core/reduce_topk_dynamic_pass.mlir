// TopK whose K or axis size only the run knows (SSD's `min(300, n)` boxes of `n`
// found): K goes through core.check (0 <= K <= the axis's run-time size) before
// it sizes the dynamic slices of the sort, so a bad K fails the run, naming the
// node, instead of reading past the sorted values. A K known only at run time
// against a size the outputs declare is checked equal to it.
// RUN: opt %s -p convert-onnx-to-core | filecheck %s

// CHECK-LABEL: func.func @topk_dynamic_axis(
// CHECK-NEXT:    %[[V:.*]], %[[I:.*]] = core.sort(%x) {axis = 1 : i64, descending = 1 : i64} : (tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xi64>)
// CHECK-NEXT:    %[[SHAPE:.*]] = core.shape_of(%x) : (tensor<?x?xf32>) -> tensor<2xi64>
// CHECK-NEXT:    %[[ONE:.*]] = core.constant() {value = dense<1> : tensor<1xi64>}
// CHECK-NEXT:    %[[N:.*]] = core.gather(%[[SHAPE]], %[[ONE]]) {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
// CHECK-NEXT:    %[[ZERO:.*]] = core.constant() {value = dense<0> : tensor<1xi64>}
// CHECK-NEXT:    %[[GE:.*]] = core.compare ge(%k, %[[ZERO]]) : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi1>
// CHECK-NEXT:    %[[LE:.*]] = core.compare le(%k, %[[N]]) : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi1>
// CHECK-NEXT:    %[[OK:.*]] = core.binary and(%[[GE]], %[[LE]])
// CHECK-NEXT:    %[[K:.*]] = core.check(%k, %[[OK]], %k) {message = "TopK: K is negative or larger than the size of axis 1"} : (tensor<1xi64>, tensor<1xi1>, tensor<1xi64>) -> tensor<1xi64>
// CHECK-NEXT:    %[[MASK:.*]] = core.constant() {value = dense<[false, true]> : tensor<2xi1>}
// CHECK-NEXT:    %[[KK:.*]] = core.broadcast(%[[K]]) {dims = array<i64: 0>} : (tensor<1xi64>) -> tensor<2xi64>
// CHECK-NEXT:    %[[FULL:.*]] = core.shape_of(%x)
// CHECK-NEXT:    %[[SIZES:.*]] = core.select(%[[MASK]], %[[KK]], %[[FULL]])
// CHECK:         %v = core.slice(%[[V]], %{{.*}}, %[[SIZES]], %{{.*}}) : (tensor<?x?xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x?xf32>
// CHECK:         %i = core.slice(%[[I]], %{{.*}}, %[[SIZES]], %{{.*}}) : (tensor<?x?xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x?xi64>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %v, %i
func.func @topk_dynamic_axis(%x: tensor<?x?xf32>, %k: tensor<1xi64>) -> (tensor<?x?xf32>, tensor<?x?xi64>) {
  %v, %i = onnx.TopK(%x, %k) {axis = -1 : i64} : (tensor<?x?xf32>, tensor<1xi64>) -> (tensor<?x?xf32>, tensor<?x?xi64>)
  func.return %v, %i : tensor<?x?xf32>, tensor<?x?xi64>
}

// A constant K along a `?` axis is checked too; the results keep the static K.
// CHECK-LABEL: func.func @topk_constant_k_dynamic_axis(
// CHECK:         %[[K:.*]] = core.check(%{{.*}}, %{{.*}}) {message = "TopK: K is negative or larger than the size of axis 0"}
// CHECK:         %v = core.slice(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xf32>
// CHECK:         %i = core.slice(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<?xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
func.func @topk_constant_k_dynamic_axis(%x: tensor<?xf32>) -> (tensor<3xf32>, tensor<3xi64>) {
  %k = onnx.Constant() {value = dense<3> : tensor<1xi64>} : () -> tensor<1xi64>
  %v, %i = onnx.TopK(%x, %k) {largest = 0 : i64} : (tensor<?xf32>, tensor<1xi64>) -> (tensor<3xf32>, tensor<3xi64>)
  func.return %v, %i : tensor<3xf32>, tensor<3xi64>
}

// A run-time K, a static axis and declared static results: the slices stay static,
// and the check guards the sort's input.
// CHECK-LABEL: func.func @topk_declared_k(
// CHECK-NEXT:    %[[D:.*]] = core.constant() {value = dense<4> : tensor<1xi64>}
// CHECK-NEXT:    %[[EQ:.*]] = core.compare eq(%k, %[[D]])
// CHECK-NEXT:    %[[X:.*]] = core.check(%x, %[[EQ]]) {message = "TopK: K differs from 4, the size its outputs declare along axis 1"} : (tensor<2x6xf32>, tensor<1xi1>) -> tensor<2x6xf32>
// CHECK-NEXT:    %{{.*}}, %{{.*}} = core.sort(%[[X]])
// CHECK-NEXT:    %v = core.slice(%{{.*}}) {start = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<2x6xf32>) -> tensor<2x4xf32>
func.func @topk_declared_k(%x: tensor<2x6xf32>, %k: tensor<1xi64>) -> (tensor<2x4xf32>, tensor<2x4xi64>) {
  %v, %i = onnx.TopK(%x, %k) : (tensor<2x6xf32>, tensor<1xi64>) -> (tensor<2x4xf32>, tensor<2x4xi64>)
  func.return %v, %i : tensor<2x4xf32>, tensor<2x4xi64>
}

// A run-time K along a static axis, the outputs' size along it unknown: checked
// against the static size.
// CHECK-LABEL: func.func @topk_runtime_k_static_axis(
// CHECK:         %[[N:.*]] = core.constant() {value = dense<6> : tensor<1xi64>}
// CHECK:         core.compare le(%k, %[[N]])
// CHECK:         core.check(%k, %{{.*}})
// CHECK:         %v = core.slice(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<2x6xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x?xf32>
func.func @topk_runtime_k_static_axis(%x: tensor<2x6xf32>, %k: tensor<1xi64>) -> (tensor<2x?xf32>, tensor<2x?xi64>) {
  %v, %i = onnx.TopK(%x, %k) : (tensor<2x6xf32>, tensor<1xi64>) -> (tensor<2x?xf32>, tensor<2x?xi64>)
  func.return %v, %i : tensor<2x?xf32>, tensor<2x?xi64>
}
