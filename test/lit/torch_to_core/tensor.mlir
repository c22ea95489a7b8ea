// The tensor handlers of convert-torch-to-core on hand-written torch-dialect IR:
// views as core.reshape / transpose / broadcast with their `?` dims read at run
// time (symbolic sizes as 0-d i64 tensors), copies and aliases as the value
// itself, slices clamped as torch does (numbers when static, computed when not),
// splits as slices, advanced indexing as gather / gather_nd / scatter_nd over
// x with the indexed dims moved first, and creation ops as broadcasts of one
// value. Run-time sizes and indices that could reach outside a buffer pass
// through core.check first.
// RUN: opt %s -p convert-torch-to-core | filecheck %s

// A static view is one core.reshape (the -1 is in the result type).
// CHECK-LABEL: func.func @view_static(
// CHECK-NEXT:    %y = core.reshape(%x) : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
// CHECK-NEXT:    func.return %y
func.func @view_static(%x: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  %y = torch.aten.view(%x) {size = [-1, 4]} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  func.return %y : tensor<6x4xf32>
}

// A symbolic size: the shape vector joins the 0-d size and the static 3 (the -1
// the result type knows); the run checks the element count before the reshape.
// CHECK-LABEL: func.func @view_symbolic(
// CHECK:         %m = core.binary mul(%n, %c2) : (tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK:         %[[TOTAL:.*]] = core.reduce prod(%{{.*}}) {axes = array<i64: 0>} : (tensor<2xi64>) -> tensor<i64>
// CHECK-NEXT:    %[[M:.*]] = core.reshape(%m) : (tensor<i64>) -> tensor<1xi64>
// CHECK-NEXT:    %[[THREE:.*]] = core.constant() {value = dense<3> : tensor<1xi64>}
// CHECK-NEXT:    %[[SHAPE:.*]] = core.concat(%[[M]], %[[THREE]]) {axis = 0 : i64}
// CHECK-NEXT:    %[[COUNT:.*]] = core.reduce prod(%[[SHAPE]])
// CHECK:         %[[SAME:.*]] = core.compare eq(%[[COUNT]], %[[TOTAL]])
// CHECK:         %[[CHECKED:.*]] = core.check(%[[SHAPE]], %{{.*}}, %[[COUNT]]) {message = "aten::view: the sizes must not be negative and must hold as many elements as the input"}
// CHECK-NEXT:    %y = core.reshape(%x, %[[CHECKED]]) : (tensor<?x6xf32>, tensor<2xi64>) -> tensor<?x3xf32>
// CHECK-NOT:     torch.
// CHECK:         func.return %y
func.func @view_symbolic(%x: tensor<?x6xf32>) -> tensor<?x3xf32> {
  %n = torch.aten.sym_size.int(%x) {dim = 0} : (tensor<?x6xf32>) -> i64
  %c2 = arith.constant 2 : i64
  %m = torch.sym.binary "mul" %n, %c2 : i64, i64 -> i64
  %y = torch.aten.view(%x) {size = [%m, -1]} : (tensor<?x6xf32>, i64) -> tensor<?x3xf32>
  func.return %y : tensor<?x3xf32>
}

// expand to a symbolic size: a broadcast to the run-time shape [n, 3, 4].
// CHECK-LABEL: func.func @expand_symbolic(
// CHECK:         %[[N:.*]] = core.reshape(%n) : (tensor<i64>) -> tensor<1xi64>
// CHECK:         %[[SHAPE:.*]] = core.concat(%[[N]], %{{.*}}, %{{.*}}) {axis = 0 : i64}
// CHECK-NEXT:    %e = core.broadcast(%x, %[[SHAPE]]) {dims = array<i64: 0, 1, 2>} : (tensor<1x3x1xf32>, tensor<3xi64>) -> tensor<?x3x4xf32>
func.func @expand_symbolic(%x: tensor<1x3x1xf32>, %y: tensor<?xf32>) -> tensor<?x3x4xf32> {
  %n = torch.aten.sym_size.int(%y) {dim = 0} : (tensor<?xf32>) -> i64
  %e = torch.aten.expand(%x) {size = [%n, -1, 4]} : (tensor<1x3x1xf32>, i64) -> tensor<?x3x4xf32>
  func.return %e : tensor<?x3x4xf32>
}

// A `?` dim of x that expands to another size must be 1 or that size: checked.
// CHECK-LABEL: func.func @expand_dynamic_input(
// CHECK:         %[[MINE:.*]] = core.gather(%{{.*}}, %{{.*}}) {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
// CHECK:         %[[OK:.*]] = core.check(%x, %{{.*}}, %[[MINE]]) {message = "expand: a dim must be 1 or the size it expands to"}
// CHECK-NEXT:    %e = core.broadcast(%[[OK]]) {dims = array<i64: 1, 2>} : (tensor<?x3xf32>) -> tensor<2x4x3xf32>
func.func @expand_dynamic_input(%x: tensor<?x3xf32>) -> tensor<2x4x3xf32> {
  %e = torch.aten.expand(%x) {size = [2, 4, -1]} : (tensor<?x3xf32>) -> tensor<2x4x3xf32>
  func.return %e : tensor<2x4x3xf32>
}

// Reshape-like ops of a dynamic input take the `?` dim from shape_of(x); copies
// and aliases are x itself.
// CHECK-LABEL: func.func @reshapes(
// CHECK:         %[[D:.*]] = core.gather(%{{.*}}, %{{.*}}) {axis = 0 : i64} : (tensor<3xi64>, tensor<2xi64>) -> tensor<2xi64>
// CHECK:         %[[S:.*]] = core.select(%{{.*}}, %[[D]], %{{.*}}) : (tensor<2xi1>, tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
// CHECK-NEXT:    %a = core.reshape(%x, %[[S]]) : (tensor<?x1x4xf32>, tensor<2xi64>) -> tensor<?x4xf32>
// CHECK:         %b = core.reshape(%x, %{{.*}}) : (tensor<?x1x4xf32>, tensor<4xi64>) -> tensor<?x1x1x4xf32>
// CHECK:         %[[ALL:.*]] = core.reduce prod(%{{.*}}) {axes = array<i64: 0>} : (tensor<3xi64>) -> tensor<i64>
// CHECK-NEXT:    %[[FLAT:.*]] = core.reshape(%[[ALL]]) : (tensor<i64>) -> tensor<1xi64>
// CHECK-NEXT:    %c = core.reshape(%x, %[[FLAT]]) : (tensor<?x1x4xf32>, tensor<1xi64>) -> tensor<?xf32>
// CHECK-NEXT:    %d = core.transpose(%x) {perm = array<i64: 2, 1, 0>} : (tensor<?x1x4xf32>) -> tensor<4x1x?xf32>
// CHECK-NEXT:    %t = core.transpose(%d) {perm = array<i64: 0, 2, 1>} : (tensor<4x1x?xf32>) -> tensor<4x?x1xf32>
// CHECK-NEXT:    func.return %a, %b, %c, %d, %x, %x, %x, %t
func.func @reshapes(%x: tensor<?x1x4xf32>) -> (tensor<?x4xf32>, tensor<?x1x1x4xf32>, tensor<?xf32>, tensor<4x1x?xf32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>, tensor<4x?x1xf32>) {
  %a = torch.aten.squeeze.dim(%x) {dim = 1} : (tensor<?x1x4xf32>) -> tensor<?x4xf32>
  %b = torch.aten.unsqueeze(%x) {dim = -2} : (tensor<?x1x4xf32>) -> tensor<?x1x1x4xf32>
  %c = torch.aten.flatten.using_ints(%x) : (tensor<?x1x4xf32>) -> tensor<?xf32>
  %d = torch.aten.permute(%x) {dims = [2, 1, 0]} : (tensor<?x1x4xf32>) -> tensor<4x1x?xf32>
  %e = torch.aten.clone(%x) : (tensor<?x1x4xf32>) -> tensor<?x1x4xf32>
  %f = torch.aten.detach(%x) : (tensor<?x1x4xf32>) -> tensor<?x1x4xf32>
  %g = torch.aten.contiguous(%x) : (tensor<?x1x4xf32>) -> tensor<?x1x4xf32>
  %t = torch.aten.transpose.int(%d) {dim0 = 1, dim1 = -1} : (tensor<4x1x?xf32>) -> tensor<4x?x1xf32>
  func.return %a, %b, %c, %d, %e, %f, %g, %t : tensor<?x4xf32>, tensor<?x1x1x4xf32>, tensor<?xf32>, tensor<4x1x?xf32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>, tensor<4x?x1xf32>
}

// Casts are core.cast to the result's element type.
// CHECK-LABEL: func.func @casts(
// CHECK-NEXT:    %a = core.cast(%x) : (tensor<3xf32>) -> tensor<3xi32>
// CHECK-NEXT:    %b = core.cast(%x) : (tensor<3xf32>) -> tensor<3xi1>
func.func @casts(%x: tensor<3xf32>) -> (tensor<3xi32>, tensor<3xi1>) {
  %a = torch.aten._to_copy(%x) {dtype = i32} : (tensor<3xf32>) -> tensor<3xi32>
  %b = torch.aten.to.dtype(%x) {dtype = i1} : (tensor<3xf32>) -> tensor<3xi1>
  func.return %a, %b : tensor<3xi32>, tensor<3xi1>
}

// Slices: a symbolic end is wrapped and clamped into [0, n] at run time; static
// bounds on a static dim are clamped here (-5 of 6 is 1, 100 is 6: 3 by step 2);
// `1:` of a static dim of a dynamic input is a static start and size.
// CHECK-LABEL: func.func @slice_dynamic(
// CHECK:         %e = core.binary sub(%n, %c1)
// CHECK:         %[[NEG:.*]] = core.compare lt(%e, %[[ZERO:.*]]) : (tensor<i64>, tensor<i64>) -> tensor<i1>
// CHECK-NEXT:    %[[WRAP:.*]] = core.binary add(%e, %[[DIM:.*]]) : (tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK-NEXT:    %[[E:.*]] = core.select(%[[NEG]], %[[WRAP]], %e)
// CHECK-NEXT:    %[[LOW:.*]] = core.binary max(%[[E]], %[[ZERO]])
// CHECK-NEXT:    %[[END:.*]] = core.binary min(%[[LOW]], %[[DIM]])
// CHECK-NEXT:    %[[STARTS:.*]] = core.constant() {value = dense<0> : tensor<2xi64>}
// CHECK:         %[[SIZES:.*]] = core.select(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<2xi1>, tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
// CHECK:         %a = core.slice(%x, %[[STARTS]], %[[SIZES]], %{{.*}}) : (tensor<?x6xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x6xf32>
// CHECK:         %[[B0:.*]] = core.constant() {value = dense<[0, 3]> : tensor<2xi64>}
// CHECK:         %[[B1:.*]] = core.constant() {value = dense<[0, 1]> : tensor<2xi64>}
// CHECK-NEXT:    %[[B2:.*]] = core.constant() {value = dense<[1, 2]> : tensor<2xi64>}
// CHECK-NEXT:    %b = core.slice(%x, %[[B1]], %{{.*}}, %[[B2]]) : (tensor<?x6xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x3xf32>
// CHECK:         %c = core.slice(%b, %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<?x3xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x2xf32>
// CHECK-NOT:     torch.
// CHECK:         func.return %a, %c, %x
func.func @slice_dynamic(%x: tensor<?x6xf32>) -> (tensor<?x6xf32>, tensor<?x2xf32>, tensor<?x6xf32>) {
  %n = torch.aten.sym_size.int(%x) {dim = 0} : (tensor<?x6xf32>) -> i64
  %c1 = arith.constant 1 : i64
  %e = torch.sym.binary "sub" %n, %c1 : i64, i64 -> i64
  %a = torch.aten.slice.Tensor(%x) {dim = 0, start = none, end = %e} : (tensor<?x6xf32>, i64) -> tensor<?x6xf32>
  %b = torch.aten.slice.Tensor(%x) {dim = 1, start = -5, end = 100, step = 2} : (tensor<?x6xf32>) -> tensor<?x3xf32>
  %c = torch.aten.slice.Tensor(%b) {dim = 1, start = 1, end = 9223372036854775807} : (tensor<?x3xf32>) -> tensor<?x2xf32>
  %all = torch.aten.slice.Tensor(%x) {dim = 0, start = 0, end = 9223372036854775807} : (tensor<?x6xf32>) -> tensor<?x6xf32>
  func.return %a, %c, %all : tensor<?x6xf32>, tensor<?x2xf32>, tensor<?x6xf32>
}

// select is a gather at a 0-d index; along a dynamic dim the run checks it.
// CHECK-LABEL: func.func @select(
// CHECK:         %[[IDX:.*]] = core.check(%{{.*}}, %{{.*}}, %{{.*}}) {message = "select: an index is out of range of the dim it indexes"}
// CHECK-NEXT:    %a = core.gather(%x, %[[IDX]]) {axis = 0 : i64} : (tensor<?x4xf32>, tensor<i64>) -> tensor<4xf32>
// CHECK-NEXT:    %[[TWO:.*]] = core.constant() {value = dense<2> : tensor<i64>}
// CHECK-NEXT:    %b = core.gather(%x, %[[TWO]]) {axis = 1 : i64} : (tensor<?x4xf32>, tensor<i64>) -> tensor<?xf32>
func.func @select(%x: tensor<?x4xf32>) -> (tensor<4xf32>, tensor<?xf32>) {
  %a = torch.aten.select.int(%x) {dim = 0, index = -1} : (tensor<?x4xf32>) -> tensor<4xf32>
  %b = torch.aten.select.int(%x) {dim = 1, index = 2} : (tensor<?x4xf32>) -> tensor<?xf32>
  func.return %a, %b : tensor<4xf32>, tensor<?xf32>
}

// Splits: static pieces are static slices; a symbolic size is checked (not
// negative, all adding up to the dim) before the pieces are cut; unbind gathers.
// CHECK-LABEL: func.func @splits(
// CHECK:         %[[TOTAL:.*]] = core.binary add(%{{.*}}, %rest)
// CHECK:         %[[X:.*]] = core.check(%x, %{{.*}}, %[[TOTAL]]) {message = "split_with_sizes: the sizes must not be negative and must add up to the dim"}
// CHECK:         %a = core.slice(%[[X]], %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<?x3xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x3xf32>
// CHECK:         %b = core.slice(%[[X]], %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<?x3xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x3xf32>
// CHECK:         %u = core.gather(%x, %{{.*}}) {axis = 1 : i64} : (tensor<?x3xf32>, tensor<i64>) -> tensor<?xf32>
// CHECK:         %v = core.gather(%x, %{{.*}}) {axis = 1 : i64}
// CHECK:         %w = core.gather(%x, %{{.*}}) {axis = 1 : i64}
// CHECK-NEXT:    %p = core.slice(%y) {start = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<5x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %q = core.slice(%y) {start = array<i64: 2, 0>, stride = array<i64: 1, 1>} : (tensor<5x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %r = core.slice(%y) {start = array<i64: 4, 0>, stride = array<i64: 1, 1>} : (tensor<5x4xf32>) -> tensor<1x4xf32>
func.func @splits(%x: tensor<?x3xf32>, %y: tensor<5x4xf32>) -> (tensor<2x3xf32>, tensor<?x3xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<1x4xf32>) {
  %n = torch.aten.sym_size.int(%x) {dim = 0} : (tensor<?x3xf32>) -> i64
  %c2 = arith.constant 2 : i64
  %rest = torch.sym.binary "sub" %n, %c2 : i64, i64 -> i64
  %a, %b = torch.aten.split_with_sizes(%x) {split_sizes = [2, %rest]} : (tensor<?x3xf32>, i64) -> (tensor<2x3xf32>, tensor<?x3xf32>)
  %u, %v, %w = torch.aten.unbind.int(%x) {dim = 1} : (tensor<?x3xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>)
  %p, %q, %r = torch.aten.chunk(%y) {chunks = 3} : (tensor<5x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<1x4xf32>)
  func.return %a, %b, %u, %v, %w, %p, %q, %r : tensor<2x3xf32>, tensor<?x3xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<1x4xf32>
}

// cat drops the empty 1-D tensor torch allows and casts to the result's type.
// CHECK-LABEL: func.func @cat(
// CHECK-NEXT:    %[[Y:.*]] = core.cast(%y) : (tensor<2x1xi64>) -> tensor<2x1xf32>
// CHECK-NEXT:    %c = core.concat(%x, %[[Y]]) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
func.func @cat(%x: tensor<2x3xf32>, %y: tensor<2x1xi64>, %z: tensor<0xf32>) -> tensor<2x4xf32> {
  %c = torch.aten.cat([%x, %z, %y]) {dim = 1} : (tensor<2x3xf32>, tensor<0xf32>, tensor<2x1xi64>) -> tensor<2x4xf32>
  func.return %c : tensor<2x4xf32>
}

// One index tensor (after a None) is a gather along its dim; two adjacent ones
// broadcast together, stack into index tuples, gather_nd from x with the indexed
// dims first, and the batch dims go back where torch puts them.
// CHECK-LABEL: func.func @index(
// CHECK:         %[[J:.*]] = core.check(%{{.*}}, %{{.*}}, %j) {message = "index: an index is out of range of the dim it indexes"}
// CHECK-NEXT:    %a = core.gather(%x, %[[J]]) {axis = 1 : i64} : (tensor<3x4x5xf32>, tensor<2x1xi64>) -> tensor<3x2x1x5xf32>
// CHECK:         %[[I2:.*]] = core.broadcast(%{{.*}}) {dims = array<i64: 1>} : (tensor<2xi64>) -> tensor<2x2xi64>
// CHECK-NEXT:    %[[J2:.*]] = core.broadcast(%{{.*}}) {dims = array<i64: 0, 1>} : (tensor<2x1xi64>) -> tensor<2x2xi64>
// CHECK-NEXT:    %[[XT:.*]] = core.transpose(%x) {perm = array<i64: 1, 2, 0>} : (tensor<3x4x5xf32>) -> tensor<4x5x3xf32>
// CHECK-NEXT:    %[[IC:.*]] = core.reshape(%[[I2]]) : (tensor<2x2xi64>) -> tensor<2x2x1xi64>
// CHECK-NEXT:    %[[JC:.*]] = core.reshape(%[[J2]]) : (tensor<2x2xi64>) -> tensor<2x2x1xi64>
// CHECK-NEXT:    %[[T:.*]] = core.concat(%[[IC]], %[[JC]]) {axis = 2 : i64} : (tensor<2x2x1xi64>, tensor<2x2x1xi64>) -> tensor<2x2x2xi64>
// CHECK-NEXT:    %[[G:.*]] = core.gather_nd(%[[XT]], %[[T]]) {batch_dims = 0 : i64} : (tensor<4x5x3xf32>, tensor<2x2x2xi64>) -> tensor<2x2x3xf32>
// CHECK-NEXT:    %b = core.transpose(%[[G]]) {perm = array<i64: 2, 0, 1>} : (tensor<2x2x3xf32>) -> tensor<3x2x2xf32>
func.func @index(%x: tensor<3x4x5xf32>, %i: tensor<2xi64>, %j: tensor<2x1xi64>) -> (tensor<3x2x1x5xf32>, tensor<3x2x2xf32>) {
  %a = torch.aten.index.Tensor(%x, [none, %j]) : (tensor<3x4x5xf32>, none, tensor<2x1xi64>) -> tensor<3x2x1x5xf32>
  %b = torch.aten.index.Tensor(%x, [none, %i, %j]) : (tensor<3x4x5xf32>, none, tensor<2xi64>, tensor<2x1xi64>) -> tensor<3x2x2xf32>
  func.return %a, %b : tensor<3x2x1x5xf32>, tensor<3x2x2xf32>
}

// A bool mask stands for the coordinates of its true elements (core.nonzero).
// CHECK-LABEL: func.func @index_mask(
// CHECK:         %[[NZ:.*]] = core.nonzero(%m) : (tensor<3x4xi1>) -> tensor<2x?xi64>
// CHECK:         %[[R:.*]] = core.gather(%[[NZ]], %{{.*}}) {axis = 0 : i64} : (tensor<2x?xi64>, tensor<i64>) -> tensor<?xi64>
// CHECK:         %[[C:.*]] = core.gather(%[[NZ]], %{{.*}}) {axis = 0 : i64} : (tensor<2x?xi64>, tensor<i64>) -> tensor<?xi64>
// CHECK:         %a = core.gather_nd(%x, %{{.*}}) {batch_dims = 0 : i64} : (tensor<3x4xf32>, tensor<?x2xi64>) -> tensor<?xf32>
func.func @index_mask(%x: tensor<3x4xf32>, %m: tensor<3x4xi1>) -> tensor<?xf32> {
  %a = torch.aten.index.Tensor(%x, [%m]) : (tensor<3x4xf32>, tensor<3x4xi1>) -> tensor<?xf32>
  func.return %a : tensor<?xf32>
}

// index_put: index tuples scattered into x (accumulate: by adding); a mask given
// one value is a select.
// CHECK-LABEL: func.func @index_put(
// CHECK:         %[[I:.*]] = core.check(%{{.*}}, %{{.*}}, %i) {message = "index_put: an index is out of range of the dim it indexes"}
// CHECK-NEXT:    %[[V:.*]] = core.broadcast(%v) {dims = array<i64: 1>} : (tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[T:.*]] = core.reshape(%[[I]]) : (tensor<2xi64>) -> tensor<2x1xi64>
// CHECK-NEXT:    %a = core.scatter_nd add(%x, %[[T]], %[[V]]) : (tensor<3x4xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT:    %[[S:.*]] = core.broadcast(%s) {dims = array<i64>} : (tensor<f32>) -> tensor<3x4xf32>
// CHECK-NEXT:    %b = core.select(%m, %[[S]], %x) : (tensor<3x4xi1>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
func.func @index_put(%x: tensor<3x4xf32>, %i: tensor<2xi64>, %v: tensor<4xf32>, %m: tensor<3x4xi1>, %s: tensor<f32>) -> (tensor<3x4xf32>, tensor<3x4xf32>) {
  %a = torch.aten.index_put(%x, [%i], %v) {accumulate = true} : (tensor<3x4xf32>, tensor<2xi64>, tensor<4xf32>) -> tensor<3x4xf32>
  %b = torch.aten.index_put(%x, [%m], %s) : (tensor<3x4xf32>, tensor<3x4xi1>, tensor<f32>) -> tensor<3x4xf32>
  func.return %a, %b : tensor<3x4xf32>, tensor<3x4xf32>
}

// gather crops x to the index's rows first (torch's index may be smaller); a
// scatter of one value scatters it broadcast to the index's shape.
// CHECK-LABEL: func.func @gather_scatter(
// CHECK-NEXT:    %[[X:.*]] = core.slice(%x) {start = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<3x5xf32>) -> tensor<2x5xf32>
// CHECK:         %[[I:.*]] = core.check(%{{.*}}, %{{.*}}, %i) {message = "gather: an index is out of range of the dim it indexes"}
// CHECK-NEXT:    %a = core.gather_elements(%[[X]], %[[I]]) {axis = 1 : i64} : (tensor<2x5xf32>, tensor<2x2xi64>) -> tensor<2x2xf32>
// CHECK-NEXT:    %[[V:.*]] = core.constant() {value = dense<2.500000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[VS:.*]] = core.broadcast(%[[V]]) {dims = array<i64>} : (tensor<f32>) -> tensor<2x2xf32>
// CHECK:         %[[J:.*]] = core.check(%{{.*}}, %{{.*}}, %i) {message = "aten::scatter.value: an index is out of range of the dim it indexes"}
// CHECK-NEXT:    %b = core.scatter_elements none(%x, %[[J]], %[[VS]]) {axis = 0 : i64} : (tensor<3x5xf32>, tensor<2x2xi64>, tensor<2x2xf32>) -> tensor<3x5xf32>
func.func @gather_scatter(%x: tensor<3x5xf32>, %i: tensor<2x2xi64>) -> (tensor<2x2xf32>, tensor<3x5xf32>) {
  %a = torch.aten.gather(%x, %i) {dim = 1} : (tensor<3x5xf32>, tensor<2x2xi64>) -> tensor<2x2xf32>
  %b = torch.aten.scatter.value(%x, %i) {dim = 0, value = 2.5} : (tensor<3x5xf32>, tensor<2x2xi64>) -> tensor<3x5xf32>
  func.return %a, %b : tensor<2x2xf32>, tensor<3x5xf32>
}

// slice_scatter writes src at start + i * step along the dim: in range by
// construction once src has the slice's shape.
// CHECK-LABEL: func.func @slice_scatter(
// CHECK-NEXT:    %[[IOTA:.*]] = core.iota() {dim = 0 : i64} : () -> tensor<2x4xi64>
// CHECK:         %[[STEP:.*]] = core.binary mul(%[[IOTA]], %{{.*}})
// CHECK:         %[[IDX:.*]] = core.binary add(%[[STEP]], %{{.*}})
// CHECK-NEXT:    %a = core.scatter_elements none(%x, %[[IDX]], %s) {axis = 0 : i64} : (tensor<6x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<6x4xf32>
func.func @slice_scatter(%x: tensor<6x4xf32>, %s: tensor<2x4xf32>) -> tensor<6x4xf32> {
  %a = torch.aten.slice_scatter(%x, %s) {dim = 0, start = 1, end = 5, step = 2} : (tensor<6x4xf32>, tensor<2x4xf32>) -> tensor<6x4xf32>
  func.return %a : tensor<6x4xf32>
}

// flip of a dynamic dim: a slice from max(n - 1, 0) by stride -1; repeat: a
// broadcast to [r0, d0, r1, d1, ...] merged back pairwise.
// CHECK-LABEL: func.func @flip_repeat(
// CHECK:         %[[STRIDE:.*]] = core.constant() {value = dense<[-1, 1]> : tensor<2xi64>}
// CHECK-NEXT:    %a = core.slice(%x, %{{.*}}, %{{.*}}, %[[STRIDE]]) : (tensor<?x3xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x3xf32>
// CHECK:         %[[X1:.*]] = core.reshape(%x, %{{.*}}) : (tensor<?x3xf32>, tensor<3xi64>) -> tensor<1x?x3xf32>
// CHECK:         %[[WIDE:.*]] = core.broadcast(%[[X1]], %{{.*}}) {dims = array<i64: 1, 3, 5>} : (tensor<1x?x3xf32>, tensor<6xi64>) -> tensor<2x1x2x?x1x3xf32>
// CHECK-NEXT:    %b = core.reshape(%[[WIDE]], %{{.*}}) : (tensor<2x1x2x?x1x3xf32>, tensor<3xi64>) -> tensor<2x?x3xf32>
func.func @flip_repeat(%x: tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<2x?x3xf32>) {
  %a = torch.aten.flip(%x) {dims = [0]} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %b = torch.aten.repeat(%x) {repeats = [2, 2, 1]} : (tensor<?x3xf32>) -> tensor<2x?x3xf32>
  func.return %a, %b : tensor<?x3xf32>, tensor<2x?x3xf32>
}

// Creation: one value broadcast to the (run-time) shape; arange is an iota
// scaled and shifted, its count ceil((end - start) / step) computed in f64 for a
// symbolic end.
// CHECK-LABEL: func.func @creation(
// CHECK:         %[[FILL:.*]] = core.constant() {value = dense<1.500000e+00> : tensor<f32>}
// CHECK:         %a = core.broadcast(%[[FILL]], %{{.*}}) {dims = array<i64>} : (tensor<f32>, tensor<2xi64>) -> tensor<?x2xf32>
// CHECK:         %[[CEIL:.*]] = core.unary ceil(%{{.*}}) : (tensor<f64>) -> tensor<f64>
// CHECK:         %[[COUNT:.*]] = core.cast(%{{.*}}) : (tensor<f64>) -> tensor<i64>
// CHECK-NEXT:    %[[IOTA:.*]] = core.iota(%[[COUNT]]) {dim = 0 : i64} : (tensor<i64>) -> tensor<?xi64>
// CHECK:         %[[SCALED:.*]] = core.binary mul(%[[IOTA]], %{{.*}}) : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
// CHECK:         %b = core.binary add(%[[SCALED]], %{{.*}}) : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
// CHECK:         %c = core.broadcast(%{{.*}}, %{{.*}}) {dims = array<i64>} : (tensor<i64>, tensor<2xi64>) -> tensor<?x3xi64>
// CHECK:         %[[FIXED:.*]] = core.iota() {dim = 0 : i64} : () -> tensor<4xi64>
// CHECK-NEXT:    %[[F64:.*]] = core.cast(%[[FIXED]]) : (tensor<4xi64>) -> tensor<4xf64>
// CHECK:         %d = core.cast(%{{.*}}) : (tensor<4xf64>) -> tensor<4xf32>
func.func @creation(%x: tensor<?x3xf32>) -> (tensor<?x2xf32>, tensor<?xi64>, tensor<?x3xi64>, tensor<4xf32>) {
  %n = torch.aten.sym_size.int(%x) {dim = 0} : (tensor<?x3xf32>) -> i64
  %a = torch.aten.full() {size = [%n, 2], fill_value = 1.5} : (i64) -> tensor<?x2xf32>
  %b = torch.aten.arange.start_step() {start = 1, end = %n, step = 2} : (i64) -> tensor<?xi64>
  %c = torch.aten.zeros_like(%x) {dtype = i64} : (tensor<?x3xf32>) -> tensor<?x3xi64>
  %d = torch.aten.arange.start_step() {start = 0.0, end = 1.0, step = 0.25} : () -> tensor<4xf32>
  func.return %a, %b, %c, %d : tensor<?x2xf32>, tensor<?xi64>, tensor<?x3xi64>, tensor<4xf32>
}

// nonzero: core.nonzero's [rank, count] transposed to torch's [count, rank];
// copy: src cast to self's element type and broadcast to its shape; a program
// constant becomes a core.constant.
// CHECK-LABEL: func.func @nonzero_copy_constant(
// CHECK-NEXT:    %[[NZ:.*]] = core.nonzero(%x) : (tensor<3x4xi64>) -> tensor<2x?xi64>
// CHECK-NEXT:    %a = core.transpose(%[[NZ]]) {perm = array<i64: 1, 0>} : (tensor<2x?xi64>) -> tensor<?x2xi64>
// CHECK-NEXT:    %[[S:.*]] = core.cast(%s) : (tensor<4xf64>) -> tensor<4xi64>
// CHECK-NEXT:    %b = core.broadcast(%[[S]]) {dims = array<i64: 1>} : (tensor<4xi64>) -> tensor<3x4xi64>
// CHECK-NEXT:    %c = core.constant() {value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>}
// CHECK-NOT:     torch.
// CHECK:         func.return %a, %b, %c
func.func @nonzero_copy_constant(%x: tensor<3x4xi64>, %s: tensor<4xf64>) -> (tensor<?x2xi64>, tensor<3x4xi64>, tensor<2xf32>) {
  %a = torch.aten.nonzero(%x) : (tensor<3x4xi64>) -> tensor<?x2xi64>
  %b = torch.aten.copy(%x, %s) : (tensor<3x4xi64>, tensor<4xf64>) -> tensor<3x4xi64>
  %c = torch.constant dense<[1.0, 2.0]> : tensor<2xf32>
  func.return %a, %b, %c : tensor<?x2xi64>, tensor<3x4xi64>, tensor<2xf32>
}
