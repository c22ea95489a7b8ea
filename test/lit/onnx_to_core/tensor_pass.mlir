// The tensor handlers of convert-onnx-to-core on hand-written onnx-dialect IR:
// reshapes, transposes, concat/split/slice with clamped static starts, gathers
// and scatters with non-negative indices, Expand/Tile as broadcasts, Pad with
// explicit low/high pads, and shape computations as ops on i64 tensors.
// RUN: opt %s -p convert-onnx-to-core | filecheck %s

// A static result: Reshape is one core.reshape (ONNX's 0 and -1 already resolved).
// CHECK-LABEL: func.func @reshape(
// CHECK:         %y = core.reshape(%x) : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @reshape(%x: tensor<2x3x4xf32>) -> tensor<2x12xf32> {
  %s = onnx.Constant() {value = dense<[0, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %y = onnx.Reshape(%x, %s) : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x12xf32>
  func.return %y : tensor<2x12xf32>
}

// A dynamic input: the target shape is computed at run time. A 0 copies the
// input dim (select against shape_of(x)[0:2]); a -1 becomes
// prod(shape_of(x)) / prod(the other entries); the run checks the result holds as
// many elements as x (a constant shape's -1s and negative sizes are checked now).
// CHECK-LABEL: func.func @reshape_dynamic(
// CHECK:         %s = core.constant() {value = dense<[0, -1]> : tensor<2xi64>}
// CHECK-NEXT:    %[[IN:.*]] = core.shape_of(%x) : (tensor<?x3x4xf32>) -> tensor<3xi64>
// CHECK-NEXT:    %[[HEAD:.*]] = core.slice(%[[IN]]) {start = array<i64: 0>, stride = array<i64: 1>} : (tensor<3xi64>) -> tensor<2xi64>
// CHECK-NEXT:    %[[ZERO:.*]] = core.constant() {value = dense<0> : tensor<2xi64>}
// CHECK-NEXT:    %[[ISZ:.*]] = core.compare eq(%s, %[[ZERO]])
// CHECK-NEXT:    %[[T:.*]] = core.select(%[[ISZ]], %[[HEAD]], %s) : (tensor<2xi1>, tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
// CHECK-NEXT:    %[[M1:.*]] = core.constant() {value = dense<-1> : tensor<2xi64>}
// CHECK-NEXT:    %[[FREE:.*]] = core.compare eq(%[[T]], %[[M1]])
// CHECK-NEXT:    %[[ONES:.*]] = core.constant() {value = dense<1> : tensor<2xi64>}
// CHECK-NEXT:    %[[KNOWNV:.*]] = core.select(%[[FREE]], %[[ONES]], %[[T]])
// CHECK-NEXT:    %[[KNOWN:.*]] = core.reduce prod(%[[KNOWNV]]) {axes = array<i64: 0>} : (tensor<2xi64>) -> tensor<i64>
// CHECK-NEXT:    %[[TOTAL:.*]] = core.reduce prod(%[[IN]]) {axes = array<i64: 0>} : (tensor<3xi64>) -> tensor<i64>
// CHECK-NEXT:    %[[ONE:.*]] = core.constant() {value = dense<1> : tensor<i64>}
// CHECK-NEXT:    %[[DIVISOR:.*]] = core.binary max(%[[KNOWN]], %[[ONE]]) : (tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK-NEXT:    %[[REST:.*]] = core.binary div(%[[TOTAL]], %[[DIVISOR]]) : (tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK-NEXT:    %[[RESTB:.*]] = core.broadcast(%[[REST]]) {dims = array<i64>} : (tensor<i64>) -> tensor<2xi64>
// CHECK-NEXT:    %[[SHAPE:.*]] = core.select(%[[FREE]], %[[RESTB]], %[[T]])
// CHECK-NEXT:    %[[COUNT:.*]] = core.reduce prod(%[[SHAPE]]) {axes = array<i64: 0>} : (tensor<2xi64>) -> tensor<i64>
// CHECK-NEXT:    %[[SAME:.*]] = core.compare eq(%[[COUNT]], %[[TOTAL]])
// CHECK-NEXT:    %[[FITS:.*]] = core.check(%[[SHAPE]], %[[SAME]]) {message = "Reshape: the shape does not hold as many elements as the input"}
// CHECK-NEXT:    %y = core.reshape(%x, %[[FITS]]) : (tensor<?x3x4xf32>, tensor<2xi64>) -> tensor<?x12xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @reshape_dynamic(%x: tensor<?x3x4xf32>) -> tensor<?x12xf32> {
  %s = onnx.Constant() {value = dense<[0, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %y = onnx.Reshape(%x, %s) : (tensor<?x3x4xf32>, tensor<2xi64>) -> tensor<?x12xf32>
  func.return %y : tensor<?x12xf32>
}

// Flatten (axis 1) of a dynamic input: [prod(dims[:1]), prod(dims[1:])] at run time.
// CHECK-LABEL: func.func @flatten_dynamic(
// CHECK:         %[[IN:.*]] = core.shape_of(%x) : (tensor<?x3x4xf32>) -> tensor<3xi64>
// CHECK-NEXT:    %[[LO:.*]] = core.slice(%[[IN]]) {start = array<i64: 0>, stride = array<i64: 1>} : (tensor<3xi64>) -> tensor<1xi64>
// CHECK-NEXT:    %[[LOP:.*]] = core.reduce prod(%[[LO]]) {axes = array<i64: 0>}
// CHECK-NEXT:    %[[LO1:.*]] = core.reshape(%[[LOP]]) : (tensor<i64>) -> tensor<1xi64>
// CHECK-NEXT:    %[[HI:.*]] = core.slice(%[[IN]]) {start = array<i64: 1>, stride = array<i64: 1>} : (tensor<3xi64>) -> tensor<2xi64>
// CHECK-NEXT:    %[[HIP:.*]] = core.reduce prod(%[[HI]]) {axes = array<i64: 0>}
// CHECK-NEXT:    %[[HI1:.*]] = core.reshape(%[[HIP]]) : (tensor<i64>) -> tensor<1xi64>
// CHECK-NEXT:    %[[SHAPE:.*]] = core.concat(%[[LO1]], %[[HI1]]) {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
// CHECK-NEXT:    %y = core.reshape(%x, %[[SHAPE]]) : (tensor<?x3x4xf32>, tensor<2xi64>) -> tensor<?x12xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @flatten_dynamic(%x: tensor<?x3x4xf32>) -> tensor<?x12xf32> {
  %y = onnx.Flatten(%x) : (tensor<?x3x4xf32>) -> tensor<?x12xf32>
  func.return %y : tensor<?x12xf32>
}

// Squeeze and Unsqueeze of static shapes are plain reshapes.
// CHECK-LABEL: func.func @squeeze_unsqueeze(
// CHECK:         %s = core.reshape(%x) : (tensor<2x1x3xf32>) -> tensor<2x3xf32>
// CHECK:         %u = core.reshape(%x) : (tensor<2x1x3xf32>) -> tensor<1x2x1x3xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %s, %u
func.func @squeeze_unsqueeze(%x: tensor<2x1x3xf32>) -> (tensor<2x3xf32>, tensor<1x2x1x3xf32>) {
  %a = onnx.Constant() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %s = onnx.Squeeze(%x, %a) : (tensor<2x1x3xf32>, tensor<1xi64>) -> tensor<2x3xf32>
  %b = onnx.Constant() {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %u = onnx.Unsqueeze(%x, %b) : (tensor<2x1x3xf32>, tensor<1xi64>) -> tensor<1x2x1x3xf32>
  func.return %s, %u : tensor<2x3xf32>, tensor<1x2x1x3xf32>
}

// Unsqueeze of a dynamic input: the run-time shape with a 1 spliced in.
// CHECK-LABEL: func.func @unsqueeze_dynamic(
// CHECK:         %[[IN:.*]] = core.shape_of(%x) : (tensor<?x3xf32>) -> tensor<2xi64>
// CHECK-NEXT:    %[[D0:.*]] = core.slice(%[[IN]]) {start = array<i64: 0>, stride = array<i64: 1>} : (tensor<2xi64>) -> tensor<1xi64>
// CHECK-NEXT:    %[[ONE:.*]] = core.constant() {value = dense<1> : tensor<1xi64>}
// CHECK-NEXT:    %[[D1:.*]] = core.slice(%[[IN]]) {start = array<i64: 1>, stride = array<i64: 1>} : (tensor<2xi64>) -> tensor<1xi64>
// CHECK-NEXT:    %[[SHAPE:.*]] = core.concat(%[[D0]], %[[ONE]], %[[D1]]) {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
// CHECK-NEXT:    %u = core.reshape(%x, %[[SHAPE]]) : (tensor<?x3xf32>, tensor<3xi64>) -> tensor<?x1x3xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %u
func.func @unsqueeze_dynamic(%x: tensor<?x3xf32>) -> tensor<?x1x3xf32> {
  %a = onnx.Constant() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %u = onnx.Unsqueeze(%x, %a) : (tensor<?x3xf32>, tensor<1xi64>) -> tensor<?x1x3xf32>
  func.return %u : tensor<?x1x3xf32>
}

// Transpose: perm defaults to the reversed dims.
// CHECK-LABEL: func.func @transpose(
// CHECK:         %t = core.transpose(%x) {perm = array<i64: 2, 1, 0>} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
// CHECK-NEXT:    %p = core.transpose(%x) {perm = array<i64: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %t, %p
func.func @transpose(%x: tensor<2x3x4xf32>) -> (tensor<4x3x2xf32>, tensor<2x4x3xf32>) {
  %t = onnx.Transpose(%x) : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  %p = onnx.Transpose(%x) {perm = array<i64: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  func.return %t, %p : tensor<4x3x2xf32>, tensor<2x4x3xf32>
}

// Concat with a negative axis on dynamic rows; Split by constant sizes is one
// static slice per part.
// CHECK-LABEL: func.func @concat_split(
// CHECK:         %c = core.concat(%x, %y) {axis = 1 : i64} : (tensor<?x2xf32>, tensor<?x3xf32>) -> tensor<?x5xf32>
// CHECK:         %a = core.slice(%z) {start = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<2x6xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %b = core.slice(%z) {start = array<i64: 0, 4>, stride = array<i64: 1, 1>} : (tensor<2x6xf32>) -> tensor<2x2xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %c, %a, %b
func.func @concat_split(%x: tensor<?x2xf32>, %y: tensor<?x3xf32>, %z: tensor<2x6xf32>) -> (tensor<?x5xf32>, tensor<2x4xf32>, tensor<2x2xf32>) {
  %c = onnx.Concat(%x, %y) {axis = -1 : i64} : (tensor<?x2xf32>, tensor<?x3xf32>) -> tensor<?x5xf32>
  %s = onnx.Constant() {value = dense<[4, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %a, %b = onnx.Split(%z, %s) {axis = 1 : i64} : (tensor<2x6xf32>, tensor<2xi64>) -> (tensor<2x4xf32>, tensor<2x2xf32>)
  func.return %c, %a, %b : tensor<?x5xf32>, tensor<2x4xf32>, tensor<2x2xf32>
}

// Split into num_outputs equal parts.
// CHECK-LABEL: func.func @split_equal(
// CHECK:         %a = core.slice(%x) {start = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<4x6xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    %b = core.slice(%x) {start = array<i64: 0, 3>, stride = array<i64: 1, 1>} : (tensor<4x6xf32>) -> tensor<4x3xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %a, %b
func.func @split_equal(%x: tensor<4x6xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %a, %b = onnx.Split(%x) {axis = 1 : i64, num_outputs = 2 : i64} : (tensor<4x6xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>)
  func.return %a, %b : tensor<4x3xf32>, tensor<4x3xf32>
}

// Slice with constant starts/ends: negative starts and out-of-range ends are
// clamped here. Dim 0: start -1 -> 4, step -2 -> rows 4, 2, 0; dim 1: start 1,
// end 100 -> 6, step 3 -> cols 1, 4.
// CHECK-LABEL: func.func @slice(
// CHECK:         %y = core.slice(%x) {start = array<i64: 4, 1>, stride = array<i64: -2, 3>} : (tensor<5x6xf32>) -> tensor<3x2xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @slice(%x: tensor<5x6xf32>) -> tensor<3x2xf32> {
  %st = onnx.Constant() {value = dense<[-1, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %en = onnx.Constant() {value = dense<[-100, 100]> : tensor<2xi64>} : () -> tensor<2xi64>
  %ax = onnx.Constant() {value = dense<[0, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %sp = onnx.Constant() {value = dense<[-2, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %y = onnx.Slice(%x, %st, %en, %ax, %sp) : (tensor<5x6xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<3x2xf32>
  func.return %y : tensor<3x2xf32>
}

// Slicing a static dim of a tensor with a dynamic one: core.slice's dynamic
// form, the untouched dynamic dim kept whole: sizes = [0, 2] + shape_of(x) * [1, 0].
// CHECK-LABEL: func.func @slice_dynamic_dim(
// CHECK:         %[[FIXED:.*]] = core.constant() {value = dense<[0, 2]> : tensor<2xi64>}
// CHECK-NEXT:    %[[MASK:.*]] = core.constant() {value = dense<[1, 0]> : tensor<2xi64>}
// CHECK-NEXT:    %[[SX:.*]] = core.shape_of(%x) : (tensor<?x6xf32>) -> tensor<2xi64>
// CHECK-NEXT:    %[[KEEP:.*]] = core.binary mul(%[[SX]], %[[MASK]])
// CHECK-NEXT:    %[[SIZES:.*]] = core.binary add(%[[FIXED]], %[[KEEP]])
// CHECK-NEXT:    %[[START:.*]] = core.constant() {value = dense<[0, 1]> : tensor<2xi64>}
// CHECK-NEXT:    %[[STRIDE:.*]] = core.constant() {value = dense<1> : tensor<2xi64>}
// CHECK-NEXT:    %y = core.slice(%x, %[[START]], %[[SIZES]], %[[STRIDE]]) : (tensor<?x6xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x2xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @slice_dynamic_dim(%x: tensor<?x6xf32>) -> tensor<?x2xf32> {
  %st = onnx.Constant() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %en = onnx.Constant() {value = dense<[3]> : tensor<1xi64>} : () -> tensor<1xi64>
  %ax = onnx.Constant() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %y = onnx.Slice(%x, %st, %en, %ax) : (tensor<?x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2xf32>
  func.return %y : tensor<?x2xf32>
}

// Gather: constant negative indices are normalized at compile time ([-1, 0] ->
// [4, 0]); run-time ones with select(i < 0, i + dim, i), then checked to lie in
// [0, dim) before the gather reads with them.
// CHECK-LABEL: func.func @gather(
// CHECK:         %[[C:.*]] = core.constant() {value = dense<[4, 0]> : tensor<2xi64>}
// CHECK-NEXT:    %a = core.gather(%x, %[[C]]) {axis = 0 : i64} : (tensor<5x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[DIM:.*]] = core.constant() {value = dense<4> : tensor<i64>}
// CHECK-NEXT:    %[[DIMB:.*]] = core.broadcast(%[[DIM]]) {dims = array<i64>} : (tensor<i64>) -> tensor<3xi64>
// CHECK-NEXT:    %[[Z:.*]] = core.constant() {value = dense<0> : tensor<i64>}
// CHECK-NEXT:    %[[ZB:.*]] = core.broadcast(%[[Z]]) {dims = array<i64>} : (tensor<i64>) -> tensor<3xi64>
// CHECK-NEXT:    %[[NEG:.*]] = core.compare lt(%i, %[[ZB]]) : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi1>
// CHECK-NEXT:    %[[WRAP:.*]] = core.binary add(%i, %[[DIMB]])
// CHECK-NEXT:    %[[IDX:.*]] = core.select(%[[NEG]], %[[WRAP]], %i)
// CHECK-NEXT:    %[[GE:.*]] = core.compare ge(%[[IDX]], %[[ZB]])
// CHECK-NEXT:    %[[LT:.*]] = core.compare lt(%[[IDX]], %[[DIMB]])
// CHECK-NEXT:    %[[OK:.*]] = core.binary and(%[[GE]], %[[LT]])
// CHECK-NEXT:    %[[SAFE:.*]] = core.check(%[[IDX]], %[[OK]], %i) {message = "Gather: an index is out of range of the dim it indexes"}
// CHECK-NEXT:    %b = core.gather(%x, %[[SAFE]]) {axis = 1 : i64} : (tensor<5x4xf32>, tensor<3xi64>) -> tensor<5x3xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %a, %b
func.func @gather(%x: tensor<5x4xf32>, %i: tensor<3xi64>) -> (tensor<2x4xf32>, tensor<5x3xf32>) {
  %c = onnx.Constant() {value = dense<[-1, 0]> : tensor<2xi64>} : () -> tensor<2xi64>
  %a = onnx.Gather(%x, %c) : (tensor<5x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  %b = onnx.Gather(%x, %i) {axis = 1 : i64} : (tensor<5x4xf32>, tensor<3xi64>) -> tensor<5x3xf32>
  func.return %a, %b : tensor<2x4xf32>, tensor<5x3xf32>
}

// ScatterElements keeps its reduction; indices normalized against dim 1 (3), and
// checked to fit it: an index out of range would write outside the buffer.
// CHECK-LABEL: func.func @scatter_elements(
// CHECK:         %[[DIM:.*]] = core.constant() {value = dense<3> : tensor<i64>}
// CHECK-NEXT:    %[[DIMB:.*]] = core.broadcast(%[[DIM]]) {dims = array<i64>} : (tensor<i64>) -> tensor<1x2xi64>
// CHECK-NEXT:    %[[Z:.*]] = core.constant() {value = dense<0> : tensor<i64>}
// CHECK-NEXT:    %[[ZB:.*]] = core.broadcast(%[[Z]]) {dims = array<i64>} : (tensor<i64>) -> tensor<1x2xi64>
// CHECK-NEXT:    %[[NEG:.*]] = core.compare lt(%i, %[[ZB]]) : (tensor<1x2xi64>, tensor<1x2xi64>) -> tensor<1x2xi1>
// CHECK-NEXT:    %[[WRAP:.*]] = core.binary add(%i, %[[DIMB]])
// CHECK-NEXT:    %[[IDX:.*]] = core.select(%[[NEG]], %[[WRAP]], %i)
// CHECK:         %[[SAFE:.*]] = core.check(%[[IDX]], %{{.*}}) {message = "ScatterElements: an index is out of range of the dim it indexes"}
// CHECK-NEXT:    %y = core.scatter_elements add(%x, %[[SAFE]], %u) {axis = 1 : i64} : (tensor<3x3xf32>, tensor<1x2xi64>, tensor<1x2xf32>) -> tensor<3x3xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @scatter_elements(%x: tensor<3x3xf32>, %i: tensor<1x2xi64>, %u: tensor<1x2xf32>) -> tensor<3x3xf32> {
  %y = onnx.ScatterElements(%x, %i, %u) {axis = 1 : i64, reduction = "add"} : (tensor<3x3xf32>, tensor<1x2xi64>, tensor<1x2xf32>) -> tensor<3x3xf32>
  func.return %y : tensor<3x3xf32>
}

// Expand is a broadcast to the two-way broadcast shape ([3, 1] with [2, 1, 4]
// gives [2, 3, 4]). Tile broadcasts [3, 1] to [r0, 3, r1, 1] and merges the pairs.
// CHECK-LABEL: func.func @expand_tile(
// CHECK:         %e = core.broadcast(%x) {dims = array<i64: 1, 2>} : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
// CHECK:         %[[W:.*]] = core.broadcast(%x) {dims = array<i64: 1, 3>} : (tensor<3x1xf32>) -> tensor<2x3x2x1xf32>
// CHECK-NEXT:    %t = core.reshape(%[[W]]) : (tensor<2x3x2x1xf32>) -> tensor<6x2xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %e, %t
func.func @expand_tile(%x: tensor<3x1xf32>) -> (tensor<2x3x4xf32>, tensor<6x2xf32>) {
  %s = onnx.Constant() {value = dense<[2, 1, 4]> : tensor<3xi64>} : () -> tensor<3xi64>
  %e = onnx.Expand(%x, %s) : (tensor<3x1xf32>, tensor<3xi64>) -> tensor<2x3x4xf32>
  %r = onnx.Constant() {value = dense<[2, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %t = onnx.Tile(%x, %r) : (tensor<3x1xf32>, tensor<2xi64>) -> tensor<6x2xf32>
  func.return %e, %t : tensor<2x3x4xf32>, tensor<6x2xf32>
}

// Pad: pads for some axes (here the last) are spread into full-rank low/high
// pads; the fill value is a scalar operand (0 when absent).
// CHECK-LABEL: func.func @pad(
// CHECK:         %c = core.pad constant(%x, %v) {pad_low = array<i64: 0, 1>, pad_high = array<i64: 0, 2>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x6xf32>
// CHECK:         %[[Z:.*]] = core.constant() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %r = core.pad reflect(%x, %[[Z]]) {pad_low = array<i64: 1, 0>, pad_high = array<i64: 1, 0>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<4x3xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %c, %r
func.func @pad(%x: tensor<2x3xf32>, %v: tensor<f32>) -> (tensor<2x6xf32>, tensor<4x3xf32>) {
  %p = onnx.Constant() {value = dense<[1, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %a = onnx.Constant() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %c = onnx.Pad(%x, %p, %v, %a) : (tensor<2x3xf32>, tensor<2xi64>, tensor<f32>, tensor<1xi64>) -> tensor<2x6xf32>
  %q = onnx.Constant() {value = dense<[1, 0, 1, 0]> : tensor<4xi64>} : () -> tensor<4xi64>
  %r = onnx.Pad(%x, %q) {mode = "reflect"} : (tensor<2x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
  func.return %c, %r : tensor<2x6xf32>, tensor<4x3xf32>
}

// Shape of static dims is a constant; a dynamic dim needs shape_of. Size is the
// product of the run-time shape.
// CHECK-LABEL: func.func @shape_size_dynamic(
// CHECK:         %s = core.constant() {value = dense<[3, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
// CHECK-NEXT:    %[[S:.*]] = core.shape_of(%x) : (tensor<?x3x4xf32>) -> tensor<3xi64>
// CHECK-NEXT:    %t = core.slice(%[[S]]) {start = array<i64: 0>, stride = array<i64: 1>} : (tensor<3xi64>) -> tensor<2xi64>
// CHECK-NEXT:    %[[S2:.*]] = core.shape_of(%x) : (tensor<?x3x4xf32>) -> tensor<3xi64>
// CHECK-NEXT:    %n = core.reduce prod(%[[S2]]) {axes = array<i64: 0>} : (tensor<3xi64>) -> tensor<i64>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %s, %t, %n
func.func @shape_size_dynamic(%x: tensor<?x3x4xf32>) -> (tensor<2xi64>, tensor<2xi64>, tensor<i64>) {
  %s = onnx.Shape(%x) {start = 1 : i64} : (tensor<?x3x4xf32>) -> tensor<2xi64>
  %t = onnx.Shape(%x) {end = 2 : i64} : (tensor<?x3x4xf32>) -> tensor<2xi64>
  %n = onnx.Size(%x) : (tensor<?x3x4xf32>) -> tensor<i64>
  func.return %s, %t, %n : tensor<2xi64>, tensor<2xi64>, tensor<i64>
}

// Range of constants is evaluated; ConstantOfShape broadcasts its scalar value.
// CHECK-LABEL: func.func @range_constant_of_shape(
// CHECK:         %r = core.constant() {value = dense<[1, 3, 5, 7]> : tensor<4xi32>} : () -> tensor<4xi32>
// CHECK:         %[[V:.*]] = core.constant() {value = dense<5.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %f = core.broadcast(%[[V]]) {dims = array<i64>} : (tensor<f32>) -> tensor<2x3xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %r, %f
func.func @range_constant_of_shape() -> (tensor<4xi32>, tensor<2x3xf32>) {
  %a = onnx.Constant() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %b = onnx.Constant() {value = dense<9> : tensor<i32>} : () -> tensor<i32>
  %c = onnx.Constant() {value = dense<2> : tensor<i32>} : () -> tensor<i32>
  %r = onnx.Range(%a, %b, %c) : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<4xi32>
  %s = onnx.Constant() {value = dense<[2, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %f = onnx.ConstantOfShape(%s) {value = dense<5.0> : tensor<1xf32>} : (tensor<2xi64>) -> tensor<2x3xf32>
  func.return %r, %f : tensor<4xi32>, tensor<2x3xf32>
}

// Trilu (upper, k = 0): keep x where col - row >= 0, from two iotas.
// CHECK-LABEL: func.func @trilu(
// CHECK:         %[[COL:.*]] = core.iota() {dim = 1 : i64} : () -> tensor<3x4xi64>
// CHECK-NEXT:    %[[ROW:.*]] = core.iota() {dim = 0 : i64} : () -> tensor<3x4xi64>
// CHECK-NEXT:    %[[D:.*]] = core.binary sub(%[[COL]], %[[ROW]])
// CHECK:         %[[KEEP:.*]] = core.compare ge(%[[D]], %{{.*}}) : (tensor<3x4xi64>, tensor<3x4xi64>) -> tensor<3x4xi1>
// CHECK:         %y = core.select(%[[KEEP]], %x, %{{.*}}) : (tensor<3x4xi1>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @trilu(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %y = onnx.Trilu(%x) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}

// DepthToSpace (CRD): reshape to [N, C/bs², bs, bs, H, W], transpose, reshape.
// CHECK-LABEL: func.func @depth_to_space(
// CHECK:         %[[R:.*]] = core.reshape(%x) : (tensor<1x8x2x3xf32>) -> tensor<1x2x2x2x2x3xf32>
// CHECK-NEXT:    %[[T:.*]] = core.transpose(%[[R]]) {perm = array<i64: 0, 1, 4, 2, 5, 3>} : (tensor<1x2x2x2x2x3xf32>) -> tensor<1x2x2x2x3x2xf32>
// CHECK-NEXT:    %y = core.reshape(%[[T]]) : (tensor<1x2x2x2x3x2xf32>) -> tensor<1x2x4x6xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @depth_to_space(%x: tensor<1x8x2x3xf32>) -> tensor<1x2x4x6xf32> {
  %y = onnx.DepthToSpace(%x) {blocksize = 2 : i64, mode = "CRD"} : (tensor<1x8x2x3xf32>) -> tensor<1x2x4x6xf32>
  func.return %y : tensor<1x2x4x6xf32>
}
