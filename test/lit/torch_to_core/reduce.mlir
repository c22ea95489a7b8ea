// The reduction handlers of convert-torch-to-core on hand-written torch IR:
// core.reduce drops the reduced dims (`dim = []` or none is every dim), so
// keepdim is a reshape back, with run-time sizes over a dynamic batch; sums
// cast to the declared type first (integers to i64, `dtype=`); means divide by
// a count read at run time over `?` dims; max.dim / argmax are core.arg_reduce
// (first index); sort and topk are a stable core.sort, topk sliced to k.
// RUN: opt %s -p convert-torch-to-core | filecheck %s

// CHECK-LABEL: func.func @sums(
// CHECK:         %a = core.reduce sum(%x) {axes = array<i64: 0, 1>} : (tensor<?x4xf32>) -> tensor<f32>
// CHECK-NEXT:    %[[S:.*]] = core.reduce sum(%x) {axes = array<i64: 1>} : (tensor<?x4xf32>) -> tensor<?xf32>
// CHECK-NEXT:    %[[SX:.*]] = core.shape_of(%x) : (tensor<?x4xf32>) -> tensor<2xi64>
// CHECK:         %[[KEPT:.*]] = core.select(
// CHECK-NEXT:    %k = core.reshape(%[[S]], %[[KEPT]]) : (tensor<?xf32>, tensor<2xi64>) -> tensor<?x1xf32>
// CHECK-NEXT:    %[[I:.*]] = core.cast(%i) : (tensor<3xi32>) -> tensor<3xi64>
// CHECK-NEXT:    %n = core.reduce sum(%[[I]]) {axes = array<i64: 0>} : (tensor<3xi64>) -> tensor<i64>
// CHECK-NEXT:    %[[D:.*]] = core.cast(%x) : (tensor<?x4xf32>) -> tensor<?x4xf64>
// CHECK-NEXT:    %d = core.reduce sum(%[[D]]) {axes = array<i64: 1>} : (tensor<?x4xf64>) -> tensor<?xf64>
// CHECK-NEXT:    %[[H:.*]] = core.cast(%h) : (tensor<8xf16>) -> tensor<8xf32>
// CHECK-NEXT:    %[[HS:.*]] = core.reduce sum(%[[H]]) {axes = array<i64: 0>} : (tensor<8xf32>) -> tensor<f32>
// CHECK-NEXT:    %e = core.cast(%[[HS]]) : (tensor<f32>) -> tensor<f16>
// CHECK-NOT:     torch.
// CHECK-NEXT:    func.return %a, %k, %n, %d, %e
func.func @sums(%x: tensor<?x4xf32>, %i: tensor<3xi32>, %h: tensor<8xf16>) -> (tensor<f32>, tensor<?x1xf32>, tensor<i64>, tensor<?xf64>, tensor<f16>) {
  %a = torch.aten.sum.dim_IntList(%x) {dim = []} : (tensor<?x4xf32>) -> tensor<f32>
  %k = torch.aten.sum.dim_IntList(%x) {dim = [-1], keepdim = true} : (tensor<?x4xf32>) -> tensor<?x1xf32>
  %n = torch.aten.sum.dim_IntList(%i) {dim = none} : (tensor<3xi32>) -> tensor<i64>
  %d = torch.aten.sum.dim_IntList(%x) {dim = [1], dtype = f64} : (tensor<?x4xf32>) -> tensor<?xf64>
  %e = torch.aten.sum(%h) : (tensor<8xf16>) -> tensor<f16>
  func.return %a, %k, %n, %d, %e : tensor<f32>, tensor<?x1xf32>, tensor<i64>, tensor<?xf64>, tensor<f16>
}

// A mean over the dynamic batch divides by the batch read at run time; over
// static dims by a constant.
// CHECK-LABEL: func.func @means(
// CHECK:         %[[S:.*]] = core.reduce sum(%x) {axes = array<i64: 0>} : (tensor<?x4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[MASK:.*]] = core.constant() {value = dense<[true, false]> : tensor<2xi1>}
// CHECK-NEXT:    %[[SX:.*]] = core.shape_of(%x) : (tensor<?x4xf32>) -> tensor<2xi64>
// CHECK-NEXT:    %[[ONES:.*]] = core.constant() {value = dense<1> : tensor<2xi64>}
// CHECK-NEXT:    %[[DIMS:.*]] = core.select(%[[MASK]], %[[SX]], %[[ONES]])
// CHECK-NEXT:    %[[N:.*]] = core.reduce prod(%[[DIMS]]) {axes = array<i64: 0>} : (tensor<2xi64>) -> tensor<i64>
// CHECK-NEXT:    %[[NF:.*]] = core.cast(%[[N]]) : (tensor<i64>) -> tensor<f32>
// CHECK-NEXT:    %[[NB:.*]] = core.broadcast(%[[NF]]) {dims = array<i64>} : (tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT:    %m = core.binary div(%[[S]], %[[NB]])
// CHECK-NEXT:    %[[T:.*]] = core.reduce sum(%y) {axes = array<i64: 0, 1>} : (tensor<2x4xf32>) -> tensor<f32>
// CHECK-NEXT:    %[[EIGHT:.*]] = core.constant() {value = dense<8.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %a = core.binary div(%[[T]], %[[EIGHT]])
// CHECK-NOT:     torch.
// CHECK-NEXT:    func.return %m, %a
func.func @means(%x: tensor<?x4xf32>, %y: tensor<2x4xf32>) -> (tensor<4xf32>, tensor<f32>) {
  %m = torch.aten.mean.dim(%x) {dim = [0]} : (tensor<?x4xf32>) -> tensor<4xf32>
  %a = torch.aten.mean(%y) : (tensor<2x4xf32>) -> tensor<f32>
  func.return %m, %a : tensor<4xf32>, tensor<f32>
}

// The variance divides the squared deviations by N - correction (a constant
// here); var.dim's unbiased=false is correction 0; var_mean gives both.
// CHECK-LABEL: func.func @variance(
// CHECK:         %[[S:.*]] = core.reduce sum(%x) {axes = array<i64: 1>} : (tensor<2x4xf32>) -> tensor<2xf32>
// CHECK:         %[[MEAN:.*]] = core.binary div(%[[S]], %{{.*}})
// CHECK-NEXT:    %[[MB:.*]] = core.broadcast(%[[MEAN]]) {dims = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[DEV:.*]] = core.binary sub(%x, %[[MB]])
// CHECK-NEXT:    %[[SQ:.*]] = core.binary mul(%[[DEV]], %[[DEV]])
// CHECK-NEXT:    %[[SS:.*]] = core.reduce sum(%[[SQ]]) {axes = array<i64: 1>} : (tensor<2x4xf32>) -> tensor<2xf32>
// CHECK-NEXT:    %[[THREE:.*]] = core.constant() {value = dense<3.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[DIV:.*]] = core.broadcast(%[[THREE]]) {dims = array<i64>} : (tensor<f32>) -> tensor<2xf32>
// CHECK-NEXT:    %v = core.binary div(%[[SS]], %[[DIV]])
// CHECK:         %[[SQ2:.*]] = core.binary mul
// CHECK-NEXT:    %[[ALL:.*]] = core.reduce sum(%[[SQ2]]) {axes = array<i64: 0, 1>} : (tensor<2x4xf32>) -> tensor<f32>
// CHECK-NEXT:    %[[EIGHT:.*]] = core.constant() {value = dense<8.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %p = core.binary div(%[[ALL]], %[[EIGHT]])
// CHECK:         %[[MEAN2:.*]] = core.binary div(%{{.*}}, %{{.*}}) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK:         %[[VAR:.*]] = core.binary div(%{{.*}}, %{{.*}}) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    %vm = core.reshape(%[[VAR]]) : (tensor<2xf32>) -> tensor<2x1xf32>
// CHECK-NEXT:    %vm_1 = core.reshape(%[[MEAN2]]) : (tensor<2xf32>) -> tensor<2x1xf32>
// CHECK-NOT:     torch.
// CHECK-NEXT:    func.return %v, %p, %vm, %vm_1
func.func @variance(%x: tensor<2x4xf32>) -> (tensor<2xf32>, tensor<f32>, tensor<2x1xf32>, tensor<2x1xf32>) {
  %v = torch.aten.var.correction(%x) {dim = [1], correction = 1} : (tensor<2x4xf32>) -> tensor<2xf32>
  %p = torch.aten.var.dim(%x) {dim = none, unbiased = false} : (tensor<2x4xf32>) -> tensor<f32>
  %vm:2 = torch.aten.var_mean.correction(%x) {dim = [1], keepdim = true} : (tensor<2x4xf32>) -> (tensor<2x1xf32>, tensor<2x1xf32>)
  func.return %v, %p, %vm#0, %vm#1 : tensor<2xf32>, tensor<f32>, tensor<2x1xf32>, tensor<2x1xf32>
}

// A variance over a dynamic dim computes max(N - correction, 0) at run time.
// CHECK-LABEL: func.func @variance_dynamic(
// CHECK:         %[[N:.*]] = core.reduce prod(%{{.*}}) {axes = array<i64: 0>} : (tensor<2xi64>) -> tensor<i64>
// CHECK:         %[[SS:.*]] = core.reduce sum(%{{.*}}) {axes = array<i64: 0>} : (tensor<?x4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[ONE:.*]] = core.constant() {value = dense<1.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[ONEB:.*]] = core.broadcast(%[[ONE]]) {dims = array<i64>} : (tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[SUB:.*]] = core.binary sub(%{{.*}}, %[[ONEB]])
// CHECK:         %[[MAX:.*]] = core.binary max(%[[SUB]], %{{.*}})
// CHECK-NEXT:    %v = core.binary div(%[[SS]], %[[MAX]])
func.func @variance_dynamic(%x: tensor<?x4xf32>) -> tensor<4xf32> {
  %v = torch.aten.var.correction(%x) {dim = [0], correction = 1} : (tensor<?x4xf32>) -> tensor<4xf32>
  func.return %v : tensor<4xf32>
}

// max.dim is a core max and an arg_reduce (first index); argmax without a dim
// reduces the flattened input; amin keepdim reshapes back.
// CHECK-LABEL: func.func @extremes(
// CHECK:         %v = core.reduce max(%x) {axes = array<i64: 1>} : (tensor<2x4xf32>) -> tensor<2xf32>
// CHECK-NEXT:    %i = core.arg_reduce max(%x) {axis = 1 : i64, last = 0 : i64} : (tensor<2x4xf32>) -> tensor<2xi64>
// CHECK-NEXT:    %[[FLAT:.*]] = core.reshape(%x) : (tensor<2x4xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %a = core.arg_reduce max(%[[FLAT]]) {axis = 0 : i64, last = 0 : i64} : (tensor<8xf32>) -> tensor<i64>
// CHECK-NEXT:    %[[FLAT2:.*]] = core.reshape(%x) : (tensor<2x4xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %[[AMIN:.*]] = core.arg_reduce min(%[[FLAT2]]) {axis = 0 : i64, last = 0 : i64} : (tensor<8xf32>) -> tensor<i64>
// CHECK-NEXT:    %b = core.reshape(%[[AMIN]]) : (tensor<i64>) -> tensor<1x1xi64>
// CHECK-NEXT:    %m = core.reduce max(%x) {axes = array<i64: 0>} : (tensor<2x4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[MIN:.*]] = core.reduce min(%x) {axes = array<i64: 0>} : (tensor<2x4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %n = core.reshape(%[[MIN]]) : (tensor<4xf32>) -> tensor<1x4xf32>
// CHECK-NOT:     torch.
// CHECK-NEXT:    func.return %v, %i, %a, %b, %m, %n
func.func @extremes(%x: tensor<2x4xf32>) -> (tensor<2xf32>, tensor<2xi64>, tensor<i64>, tensor<1x1xi64>, tensor<4xf32>, tensor<1x4xf32>) {
  %v, %i = torch.aten.max.dim(%x) {dim = 1} : (tensor<2x4xf32>) -> (tensor<2xf32>, tensor<2xi64>)
  %a = torch.aten.argmax(%x) : (tensor<2x4xf32>) -> tensor<i64>
  %b = torch.aten.argmin(%x) {keepdim = true} : (tensor<2x4xf32>) -> tensor<1x1xi64>
  %m = torch.aten.amax(%x) {dim = [0]} : (tensor<2x4xf32>) -> tensor<4xf32>
  %n = torch.aten.amin(%x) {dim = [0], keepdim = true} : (tensor<2x4xf32>) -> tensor<1x4xf32>
  func.return %v, %i, %a, %b, %m, %n : tensor<2xf32>, tensor<2xi64>, tensor<i64>, tensor<1x1xi64>, tensor<4xf32>, tensor<1x4xf32>
}

// any is a core `or` of the non-zero flags; any.dims with [] reduces nothing.
// CHECK-LABEL: func.func @logic(
// CHECK:         %a = core.reduce or(%x) {axes = array<i64: 0, 1>} : (tensor<2x4xi1>) -> tensor<i1>
// CHECK-NEXT:    %[[Z:.*]] = core.constant() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[ZB:.*]] = core.broadcast(%[[Z]]) {dims = array<i64>} : (tensor<f32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[NZ:.*]] = core.compare ne(%f, %[[ZB]])
// CHECK-NEXT:    %d = core.reduce or(%[[NZ]]) {axes = array<i64: 1>} : (tensor<2x4xi1>) -> tensor<2xi1>
// CHECK-NEXT:    %p = core.reduce prod(%f) {axes = array<i64: 0, 1>} : (tensor<2x4xf32>) -> tensor<f32>
// CHECK-NOT:     torch.
// CHECK-NEXT:    func.return %a, %d, %x, %p
func.func @logic(%x: tensor<2x4xi1>, %f: tensor<2x4xf32>) -> (tensor<i1>, tensor<2xi1>, tensor<2x4xi1>, tensor<f32>) {
  %a = torch.aten.any(%x) : (tensor<2x4xi1>) -> tensor<i1>
  %d = torch.aten.any.dim(%f) {dim = 1} : (tensor<2x4xf32>) -> tensor<2xi1>
  %e = torch.aten.any.dims(%x) {dim = []} : (tensor<2x4xi1>) -> tensor<2x4xi1>
  %p = torch.aten.prod(%f) : (tensor<2x4xf32>) -> tensor<f32>
  func.return %a, %d, %e, %p : tensor<i1>, tensor<2xi1>, tensor<2x4xi1>, tensor<f32>
}

// topk with a constant k is a stable sort sliced to k along the (static) dim;
// sort is core.sort; an int32 cumsum runs in i64.
// CHECK-LABEL: func.func @ordering(
// CHECK:         %[[V:.*]], %[[J:.*]] = core.sort(%x) {axis = 1 : i64, descending = 1 : i64} : (tensor<?x5xf32>) -> (tensor<?x5xf32>, tensor<?x5xi64>)
// CHECK:         %v = core.slice(%[[V]], %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<?x5xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x2xf32>
// CHECK:         %j = core.slice(%[[J]], %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<?x5xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x2xi64>
// CHECK-NEXT:    %s, %t = core.sort(%x) {axis = 0 : i64, descending = 0 : i64} : (tensor<?x5xf32>) -> (tensor<?x5xf32>, tensor<?x5xi64>)
// CHECK-NEXT:    %[[I:.*]] = core.cast(%i) : (tensor<?x5xi32>) -> tensor<?x5xi64>
// CHECK-NEXT:    %c = core.cumulative sum(%[[I]]) {axis = 1 : i64, exclusive = 0 : i64, reverse = 0 : i64} : (tensor<?x5xi64>) -> tensor<?x5xi64>
// CHECK-NOT:     torch.
// CHECK-NEXT:    func.return %v, %j, %s, %t, %c
func.func @ordering(%x: tensor<?x5xf32>, %i: tensor<?x5xi32>) -> (tensor<?x2xf32>, tensor<?x2xi64>, tensor<?x5xf32>, tensor<?x5xi64>, tensor<?x5xi64>) {
  %v, %j = torch.aten.topk(%x) {k = 2} : (tensor<?x5xf32>) -> (tensor<?x2xf32>, tensor<?x2xi64>)
  %s, %t = torch.aten.sort(%x) {dim = 0} : (tensor<?x5xf32>) -> (tensor<?x5xf32>, tensor<?x5xi64>)
  %c = torch.aten.cumsum(%i) {dim = 1} : (tensor<?x5xi32>) -> tensor<?x5xi64>
  func.return %v, %j, %s, %t, %c : tensor<?x2xf32>, tensor<?x2xi64>, tensor<?x5xf32>, tensor<?x5xi64>, tensor<?x5xi64>
}

// A k only the run knows (a size of %y) is checked against the dim (0 <= k <=
// n) before the sort, and the slice takes its size from it.
// CHECK-LABEL: func.func @topk_run_time_k(
// CHECK:         %[[K:.*]] = core.reshape(%k) : (tensor<i64>) -> tensor<1xi64>
// CHECK:         %[[FITS:.*]] = core.binary and(
// CHECK-NEXT:    %[[X:.*]] = core.check(%x, %[[FITS]], %[[K]]) {message = "topk: k is negative or larger than dim 0"}
// CHECK:         %[[SIZES:.*]] = core.select(%{{.*}}, %[[K]], %{{.*}})
// CHECK-NEXT:    %[[V:.*]], %[[J:.*]] = core.sort(%[[X]]) {axis = 0 : i64, descending = 0 : i64}
// CHECK:         %v = core.slice(%[[V]], %{{.*}}, %[[SIZES]], %{{.*}}) : (tensor<?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
// CHECK:         %j = core.slice(%[[J]], %{{.*}}, %[[SIZES]], %{{.*}}) : (tensor<?xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xi64>
// CHECK-NOT:     torch.
// CHECK-NEXT:    func.return %v, %j
func.func @topk_run_time_k(%x: tensor<?xf32>, %y: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xi64>) {
  %k = torch.aten.sym_size.int(%y) {dim = 0} : (tensor<?xf32>) -> i64
  %v, %j = torch.aten.topk(%x) {k = %k, largest = false} : (tensor<?xf32>, i64) -> (tensor<?xf32>, tensor<?xi64>)
  func.return %v, %j : tensor<?xf32>, tensor<?xi64>
}

// item() is the one element as a 0-d tensor of the scalar's type.
// CHECK-LABEL: func.func @item(
// CHECK:         %[[R:.*]] = core.reshape(%x) : (tensor<1x1xf32>) -> tensor<f32>
// CHECK-NEXT:    %s = core.cast(%[[R]]) : (tensor<f32>) -> tensor<f64>
// CHECK-NOT:     torch.
// CHECK-NEXT:    func.return %s : tensor<f64>
func.func @item(%x: tensor<1x1xf32>) -> f64 {
  %s = torch.aten._local_scalar_dense(%x) : (tensor<1x1xf32>) -> f64
  func.return %s : f64
}
