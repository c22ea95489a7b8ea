// The reduce handlers of convert-onnx-to-core on hand-written onnx-dialect IR:
// core.reduce drops the reduced axes (sorted, non-negative), so keepdims is a
// reshape back; composite reductions are elementwise ops around a core sum or
// max; ArgMax/ArgMin, CumSum and TopK map to arg_reduce, cumulative and sort.
// RUN: opt %s -p convert-onnx-to-core | filecheck %s

// A negative axis is normalized (-2 -> 1); keepdims (the default) reshapes back.
// CHECK-LABEL: func.func @reduce_keepdims(
// CHECK:         %[[S:.*]] = core.reduce sum(%x) {axes = array<i64: 1>} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %k = core.reshape(%[[S]]) : (tensor<2x4xf32>) -> tensor<2x1x4xf32>
// CHECK-NEXT:    %d = core.reduce max(%x) {axes = array<i64: 1>} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %k, %d
func.func @reduce_keepdims(%x: tensor<2x3x4xf32>) -> (tensor<2x1x4xf32>, tensor<2x4xf32>) {
  %a = onnx.Constant() {value = dense<-2> : tensor<1xi64>} : () -> tensor<1xi64>
  %k = onnx.ReduceSum(%x, %a) : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<2x1x4xf32>
  %d = onnx.ReduceMax(%x, %a) {keepdims = 0 : i64} : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<2x4xf32>
  func.return %k, %d : tensor<2x1x4xf32>, tensor<2x4xf32>
}

// No axes: every axis is reduced, unless noop_with_empty_axes makes it the identity.
// CHECK-LABEL: func.func @reduce_all_or_nothing(
// CHECK:         %[[P:.*]] = core.reduce prod(%x) {axes = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<f32>
// CHECK-NEXT:    %p = core.reshape(%[[P]]) : (tensor<f32>) -> tensor<1x1xf32>
// CHECK-NOT:     core.reduce
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %p, %x
func.func @reduce_all_or_nothing(%x: tensor<2x3xf32>) -> (tensor<1x1xf32>, tensor<2x3xf32>) {
  %p = onnx.ReduceProd(%x) : (tensor<2x3xf32>) -> tensor<1x1xf32>
  %n = onnx.ReduceMin(%x) {noop_with_empty_axes = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %p, %n : tensor<1x1xf32>, tensor<2x3xf32>
}

// ReduceMean with a dynamic batch. Over the static axis the count is the
// constant 4 and keepdims reshapes to [shape_of(x)[0], 1]; over the dynamic
// axis the count is computed from shape_of(x).
// CHECK-LABEL: func.func @reduce_mean_dynamic(
// CHECK:         %[[S:.*]] = core.reduce sum(%x) {axes = array<i64: 1>} : (tensor<?x4xf32>) -> tensor<?xf32>
// CHECK-NEXT:    %[[N:.*]] = core.constant() {value = dense<4.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[SS:.*]] = core.shape_of(%[[S]]) : (tensor<?xf32>) -> tensor<1xi64>
// CHECK-NEXT:    %[[NB:.*]] = core.broadcast(%[[N]], %[[SS]]) {dims = array<i64>} : (tensor<f32>, tensor<1xi64>) -> tensor<?xf32>
// CHECK-NEXT:    %[[MEAN:.*]] = core.binary div(%[[S]], %[[NB]]) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
// CHECK-NEXT:    %[[RED:.*]] = core.constant() {value = dense<[false, true]> : tensor<2xi1>}
// CHECK-NEXT:    %[[ONES:.*]] = core.constant() {value = dense<1> : tensor<2xi64>}
// CHECK-NEXT:    %[[SX:.*]] = core.shape_of(%x) : (tensor<?x4xf32>) -> tensor<2xi64>
// CHECK-NEXT:    %[[KEPT:.*]] = core.select(%[[RED]], %[[ONES]], %[[SX]])
// CHECK-NEXT:    %m = core.reshape(%[[MEAN]], %[[KEPT]]) : (tensor<?xf32>, tensor<2xi64>) -> tensor<?x1xf32>
// CHECK:         %[[S0:.*]] = core.reduce sum(%x) {axes = array<i64: 0>} : (tensor<?x4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[RED0:.*]] = core.constant() {value = dense<[true, false]> : tensor<2xi1>}
// CHECK-NEXT:    %[[SX0:.*]] = core.shape_of(%x)
// CHECK-NEXT:    %[[ONES0:.*]] = core.constant() {value = dense<1> : tensor<2xi64>}
// CHECK-NEXT:    %[[DIMS:.*]] = core.select(%[[RED0]], %[[SX0]], %[[ONES0]])
// CHECK-NEXT:    %[[CNT:.*]] = core.reduce prod(%[[DIMS]]) {axes = array<i64: 0>} : (tensor<2xi64>) -> tensor<i64>
// CHECK-NEXT:    %[[CNTF:.*]] = core.cast(%[[CNT]]) : (tensor<i64>) -> tensor<f32>
// CHECK-NEXT:    %[[CNTB:.*]] = core.broadcast(%[[CNTF]]) {dims = array<i64>} : (tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[MEAN0:.*]] = core.binary div(%[[S0]], %[[CNTB]])
// CHECK-NEXT:    %n = core.reshape(%[[MEAN0]]) : (tensor<4xf32>) -> tensor<1x4xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %m, %n
func.func @reduce_mean_dynamic(%x: tensor<?x4xf32>) -> (tensor<?x1xf32>, tensor<1x4xf32>) {
  %a = onnx.Constant() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %m = onnx.ReduceMean(%x, %a) : (tensor<?x4xf32>, tensor<1xi64>) -> tensor<?x1xf32>
  %z = onnx.Constant() {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %n = onnx.ReduceMean(%x, %z) : (tensor<?x4xf32>, tensor<1xi64>) -> tensor<1x4xf32>
  func.return %m, %n : tensor<?x1xf32>, tensor<1x4xf32>
}

// ReduceL2 is sqrt(sum(x * x)). ReduceLogSumExp subtracts the max (0 where the
// max is infinite) before exp and adds it back after log.
// CHECK-LABEL: func.func @reduce_l2_logsumexp(
// CHECK:         %[[SQ:.*]] = core.binary mul(%x, %x) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT:    %[[SUM:.*]] = core.reduce sum(%[[SQ]]) {axes = array<i64: 1>} : (tensor<3x4xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %l = core.unary sqrt(%[[SUM]]) : (tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %[[MAX:.*]] = core.reduce max(%x) {axes = array<i64: 1>} : (tensor<3x4xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %[[INF:.*]] = core.unary isinf(%[[MAX]]) : (tensor<3xf32>) -> tensor<3xi1>
// CHECK-NEXT:    %[[Z:.*]] = core.constant() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[ZB:.*]] = core.broadcast(%[[Z]]) {dims = array<i64>} : (tensor<f32>) -> tensor<3xf32>
// CHECK-NEXT:    %[[SAFE:.*]] = core.select(%[[INF]], %[[ZB]], %[[MAX]])
// CHECK-NEXT:    %[[SAFEB:.*]] = core.broadcast(%[[SAFE]]) {dims = array<i64: 0>} : (tensor<3xf32>) -> tensor<3x4xf32>
// CHECK-NEXT:    %[[SH:.*]] = core.binary sub(%x, %[[SAFEB]])
// CHECK-NEXT:    %[[E:.*]] = core.unary exp(%[[SH]])
// CHECK-NEXT:    %[[ES:.*]] = core.reduce sum(%[[E]]) {axes = array<i64: 1>} : (tensor<3x4xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %[[LOG:.*]] = core.unary log(%[[ES]])
// CHECK-NEXT:    %e = core.binary add(%[[LOG]], %[[SAFE]]) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %l, %e
func.func @reduce_l2_logsumexp(%x: tensor<3x4xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %a = onnx.Constant() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %l = onnx.ReduceL2(%x, %a) {keepdims = 0 : i64} : (tensor<3x4xf32>, tensor<1xi64>) -> tensor<3xf32>
  %e = onnx.ReduceLogSumExp(%x, %a) {keepdims = 0 : i64} : (tensor<3x4xf32>, tensor<1xi64>) -> tensor<3xf32>
  func.return %l, %e : tensor<3xf32>, tensor<3xf32>
}

// Reducing an empty dim gives the reduction's identity: -inf for a max.
// CHECK-LABEL: func.func @reduce_empty(
// CHECK-NOT:     core.reduce
// CHECK:         %y = core.constant() {value = dense_resource<[[BLOB:.*]]> : tensor<3xf32>} : () -> tensor<3xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
// Its data (checked at the end of the output): three f32 -inf.
func.func @reduce_empty(%x: tensor<0x3xf32>) -> tensor<3xf32> {
  %a = onnx.Constant() {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %y = onnx.ReduceMax(%x, %a) {keepdims = 0 : i64} : (tensor<0x3xf32>, tensor<1xi64>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}

// ArgMax/ArgMin: core.arg_reduce drops the axis (keepdims reshapes back, with
// the dynamic batch from shape_of); select_last_index becomes last = 1.
// CHECK-LABEL: func.func @arg_reduce_dynamic(
// CHECK:         %[[A:.*]] = core.arg_reduce max(%x) {axis = 1 : i64, last = 0 : i64} : (tensor<?x5xf32>) -> tensor<?xi64>
// CHECK-NEXT:    %[[RED:.*]] = core.constant() {value = dense<[false, true]> : tensor<2xi1>}
// CHECK-NEXT:    %[[ONES:.*]] = core.constant() {value = dense<1> : tensor<2xi64>}
// CHECK-NEXT:    %[[SX:.*]] = core.shape_of(%x) : (tensor<?x5xf32>) -> tensor<2xi64>
// CHECK-NEXT:    %[[KEPT:.*]] = core.select(%[[RED]], %[[ONES]], %[[SX]])
// CHECK-NEXT:    %a = core.reshape(%[[A]], %[[KEPT]]) : (tensor<?xi64>, tensor<2xi64>) -> tensor<?x1xi64>
// CHECK-NEXT:    %b = core.arg_reduce min(%x) {axis = 0 : i64, last = 1 : i64} : (tensor<?x5xf32>) -> tensor<5xi64>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %a, %b
func.func @arg_reduce_dynamic(%x: tensor<?x5xf32>) -> (tensor<?x1xi64>, tensor<5xi64>) {
  %a = onnx.ArgMax(%x) {axis = 1 : i64} : (tensor<?x5xf32>) -> tensor<?x1xi64>
  %b = onnx.ArgMin(%x) {keepdims = 0 : i64, select_last_index = 1 : i64} : (tensor<?x5xf32>) -> tensor<5xi64>
  func.return %a, %b : tensor<?x1xi64>, tensor<5xi64>
}

// CumSum: the constant axis is normalized; exclusive and reverse carry over.
// CHECK-LABEL: func.func @cumsum(
// CHECK:         %y = core.cumulative sum(%x) {axis = 1 : i64, exclusive = 1 : i64, reverse = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @cumsum(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %a = onnx.Constant() {value = dense<-1> : tensor<i64>} : () -> tensor<i64>
  %y = onnx.CumSum(%x, %a) {exclusive = 1 : i64, reverse = 1 : i64} : (tensor<2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// TopK (largest, the default): a stable descending sort along the last axis,
// then the first K of values and indices.
// CHECK-LABEL: func.func @topk(
// CHECK:         %[[V:.*]], %[[I:.*]] = core.sort(%x) {axis = 1 : i64, descending = 1 : i64} : (tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xi64>)
// CHECK-NEXT:    %v = core.slice(%[[V]]) {start = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<3x5xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    %i = core.slice(%[[I]]) {start = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<3x5xi64>) -> tensor<3x2xi64>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %v, %i
func.func @topk(%x: tensor<3x5xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>) {
  %k = onnx.Constant() {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
  %v, %i = onnx.TopK(%x, %k) : (tensor<3x5xf32>, tensor<1xi64>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
  func.return %v, %i : tensor<3x2xf32>, tensor<3x2xi64>
}

// The resource blob of @reduce_empty: alignment 8, then 3 x 0xFF800000 (-inf).
// CHECK:       dialect_resources
// CHECK:         [[BLOB]]: "0x08000000000080FF000080FF000080FF"
