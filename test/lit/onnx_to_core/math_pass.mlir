// The math handlers of convert-onnx-to-core on hand-written onnx-dialect IR:
// implicit broadcasting becomes core.broadcast (with a runtime shape for `?`
// dims), activations become compositions of core elementwise ops.
// RUN: opt %s -p convert-onnx-to-core | filecheck %s

// A lower-rank operand is broadcast onto the trailing result dims.
// CHECK-LABEL: func.func @add_broadcast(
// CHECK:         %[[B:.*]] = core.broadcast(%b) {dims = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %y = core.binary add(%x, %[[B]]) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NOT:     onnx.
// CHECK:         func.return %y
func.func @add_broadcast(%x: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %y = onnx.Add(%x, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// A dynamic result: the operand that already has the result's type gives the shape.
// CHECK-LABEL: func.func @mul_dynamic(
// CHECK:         %[[S:.*]] = core.shape_of(%x) : (tensor<?x3xf32>) -> tensor<2xi64>
// CHECK-NEXT:    %[[B:.*]] = core.broadcast(%b, %[[S]]) {dims = array<i64: 1>} : (tensor<3xf32>, tensor<2xi64>) -> tensor<?x3xf32>
// CHECK-NEXT:    %y = core.binary mul(%x, %[[B]]) : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NOT:     onnx.
// CHECK:         func.return %y
func.func @mul_dynamic(%x: tensor<?x3xf32>, %b: tensor<3xf32>) -> tensor<?x3xf32> {
  %y = onnx.Mul(%x, %b) : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  func.return %y : tensor<?x3xf32>
}

// Neither operand has the result's shape: the runtime shape is computed from both,
// each left-padded with ones, a dim of 1 yielding to the other operand's; sizes
// that are neither 1 nor equal fail the run (core.check).
// CHECK-LABEL: func.func @sub_both_broadcast_dynamic(
// CHECK:         %[[SX:.*]] = core.shape_of(%x) : (tensor<?x1xf32>) -> tensor<2xi64>
// CHECK-NEXT:    %[[SB:.*]] = core.shape_of(%b) : (tensor<3xf32>) -> tensor<1xi64>
// CHECK-NEXT:    %[[ONE:.*]] = core.constant() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
// CHECK-NEXT:    %[[SB2:.*]] = core.concat(%[[ONE]], %[[SB]]) {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
// CHECK-NEXT:    %[[ONES:.*]] = core.constant() {value = dense<1> : tensor<2xi64>} : () -> tensor<2xi64>
// CHECK-NEXT:    %[[IS1:.*]] = core.compare eq(%[[SX]], %[[ONES]]) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi1>
// CHECK-NEXT:    %[[SEL:.*]] = core.select(%[[IS1]], %[[SB2]], %[[SX]]) : (tensor<2xi1>, tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
// CHECK-NEXT:    %[[BIS1:.*]] = core.compare eq(%[[SB2]], %[[ONES]])
// CHECK-NEXT:    %[[ANY1:.*]] = core.binary or(%[[IS1]], %[[BIS1]])
// CHECK-NEXT:    %[[SAME:.*]] = core.compare eq(%[[SX]], %[[SB2]])
// CHECK-NEXT:    %[[FITS:.*]] = core.binary or(%[[ANY1]], %[[SAME]])
// CHECK-NEXT:    %[[S:.*]] = core.check(%[[SEL]], %[[FITS]]) {message = "operand shapes cannot be broadcast together"}
// CHECK-NEXT:    %[[BX:.*]] = core.broadcast(%x, %[[S]]) {dims = array<i64: 0, 1>} : (tensor<?x1xf32>, tensor<2xi64>) -> tensor<?x3xf32>
// CHECK-NEXT:    %[[BB:.*]] = core.broadcast(%b, %[[S]]) {dims = array<i64: 1>} : (tensor<3xf32>, tensor<2xi64>) -> tensor<?x3xf32>
// CHECK-NEXT:    %y = core.binary sub(%[[BX]], %[[BB]]) : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NOT:     onnx.
// CHECK:         func.return %y
func.func @sub_both_broadcast_dynamic(%x: tensor<?x1xf32>, %b: tensor<3xf32>) -> tensor<?x3xf32> {
  %y = onnx.Sub(%x, %b) : (tensor<?x1xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  func.return %y : tensor<?x3xf32>
}

// Pow keeps an exponent of another element type: only its shape is broadcast.
// CHECK-LABEL: func.func @pow_int_exponent(
// CHECK:         %[[E:.*]] = core.broadcast(%e) {dims = array<i64: 1>} : (tensor<3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT:    %y = core.binary pow(%x, %[[E]]) : (tensor<2x3xf32>, tensor<2x3xi32>) -> tensor<2x3xf32>
// CHECK-NOT:     onnx.
// CHECK:         func.return %y
func.func @pow_int_exponent(%x: tensor<2x3xf32>, %e: tensor<3xi32>) -> tensor<2x3xf32> {
  %y = onnx.Pow(%x, %e) : (tensor<2x3xf32>, tensor<3xi32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// Mod: the divisor's sign (floor modulo) by default, the dividend's with fmod = 1.
// BitShift: the direction picks the core fn.
// CHECK-LABEL: func.func @mod_bitshift(
// CHECK:         %m = core.binary mod(%a, %b) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT:    %f = core.binary rem(%a, %b) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT:    %l = core.binary shift_left(%u, %v) : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
// CHECK-NEXT:    %r = core.binary shift_right(%u, %v) : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
// CHECK-NOT:     onnx.
// CHECK:         func.return %m, %f, %l, %r
func.func @mod_bitshift(%a: tensor<4xi32>, %b: tensor<4xi32>, %u: tensor<3xui8>, %v: tensor<3xui8>) -> (tensor<4xi32>, tensor<4xi32>, tensor<3xui8>, tensor<3xui8>) {
  %m = onnx.Mod(%a, %b) {fmod = 0 : i64} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %f = onnx.Mod(%a, %b) {fmod = 1 : i64} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %l = onnx.BitShift(%u, %v) {direction = "LEFT"} : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  %r = onnx.BitShift(%u, %v) {direction = "RIGHT"} : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  func.return %m, %f, %l, %r : tensor<4xi32>, tensor<4xi32>, tensor<3xui8>, tensor<3xui8>
}

// Variadic Sum folds left after broadcasting every input; Mean divides by the count.
// CHECK-LABEL: func.func @sum_mean(
// CHECK:         %[[B:.*]] = core.broadcast(%b) {dims = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[S1:.*]] = core.binary add(%x, %[[B]]) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %s = core.binary add(%[[S1]], %z) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[M1:.*]] = core.binary add(%x, %z) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[N:.*]] = core.constant() {value = dense<2.000000e+00> : tensor<f32>} : () -> tensor<f32>
// CHECK-NEXT:    %[[NB:.*]] = core.broadcast(%[[N]]) {dims = array<i64>} : (tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %m = core.binary div(%[[M1]], %[[NB]]) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NOT:     onnx.
// CHECK:         func.return %s, %m
func.func @sum_mean(%x: tensor<2x3xf32>, %b: tensor<3xf32>, %z: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %s = onnx.Sum(%x, %b, %z) : (tensor<2x3xf32>, tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %m = onnx.Mean(%x, %z) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %s, %m : tensor<2x3xf32>, tensor<2x3xf32>
}

// Comparisons give i1 of the broadcast shape; Where becomes core.select.
// CHECK-LABEL: func.func @compare_where(
// CHECK:         %[[B:.*]] = core.broadcast(%b) {dims = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %c = core.compare gt(%x, %[[B]]) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT:    %[[B2:.*]] = core.broadcast(%b) {dims = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %w = core.select(%c, %x, %[[B2]]) : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NOT:     onnx.
// CHECK:         func.return %w
func.func @compare_where(%x: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %c = onnx.Greater(%x, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %w = onnx.Where(%c, %x, %b) : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %w : tensor<2x3xf32>
}

// Comparison and Where with a dynamic result. Less: %x alone decides the result's
// `?` dim (%b has none there), so %b is broadcast to the run-time shape of %x.
// Where: %x and %y both have a `?` dim there, and either may be 1 at run time, so
// all three operands are broadcast to the run-time broadcast shape of all of them.
// CHECK-LABEL: func.func @compare_where_dynamic(
// CHECK:         %[[S1:.*]] = core.shape_of(%x) : (tensor<?x3xf32>) -> tensor<2xi64>
// CHECK-NEXT:    %[[B:.*]] = core.broadcast(%b, %[[S1]]) {dims = array<i64: 1>} : (tensor<3xf32>, tensor<2xi64>) -> tensor<?x3xf32>
// CHECK-NEXT:    %c = core.compare lt(%x, %[[B]])
// CHECK:         %[[SY:.*]] = core.shape_of(%y)
// CHECK:         core.select(%{{.*}}, %[[SY]], %{{.*}}) : (tensor<2xi1>, tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
// CHECK:         %[[SEL:.*]] = core.check(%{{.*}}, %{{.*}}) {message = "operand shapes cannot be broadcast together"}
// CHECK-NEXT:    %[[M:.*]] = core.broadcast(%m, %[[SEL]]) {dims = array<i64: 1>} : (tensor<3xi1>, tensor<2xi64>) -> tensor<?x3xi1>
// CHECK-NEXT:    %[[X:.*]] = core.broadcast(%x, %[[SEL]]) {dims = array<i64: 0, 1>}
// CHECK-NEXT:    %[[Y:.*]] = core.broadcast(%y, %[[SEL]]) {dims = array<i64: 0, 1>}
// CHECK-NEXT:    %w = core.select(%[[M]], %[[X]], %[[Y]]) : (tensor<?x3xi1>, tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NOT:     onnx.
// CHECK:         func.return %c, %w
func.func @compare_where_dynamic(%x: tensor<?x3xf32>, %b: tensor<3xf32>, %m: tensor<3xi1>, %y: tensor<?x3xf32>) -> (tensor<?x3xi1>, tensor<?x3xf32>) {
  %c = onnx.Less(%x, %b) : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xi1>
  %w = onnx.Where(%m, %x, %y) : (tensor<3xi1>, tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  func.return %c, %w : tensor<?x3xi1>, tensor<?x3xf32>
}

// Unary ops map one to one; IsNaN/IsInf give i1; IsInf's flags pick the predicate.
// CHECK-LABEL: func.func @unary(
// CHECK:         %a = core.unary abs(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:    %r = core.unary round(%a) : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:    %n = core.unary isnan(%x) : (tensor<?x3xf32>) -> tensor<?x3xi1>
// CHECK-NEXT:    %p = core.unary isposinf(%x) : (tensor<?x3xf32>) -> tensor<?x3xi1>
// CHECK-NEXT:    %i = core.unary isinf(%x) : (tensor<?x3xf32>) -> tensor<?x3xi1>
// CHECK-NOT:     onnx.
// CHECK:         func.return %a, %r, %n, %p, %i
func.func @unary(%x: tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xi1>, tensor<?x3xi1>, tensor<?x3xi1>) {
  %a = onnx.Abs(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %r = onnx.Round(%a) : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %n = onnx.IsNaN(%x) : (tensor<?x3xf32>) -> tensor<?x3xi1>
  %p = onnx.IsInf(%x) {detect_negative = 0 : i64} : (tensor<?x3xf32>) -> tensor<?x3xi1>
  %i = onnx.IsInf(%x) : (tensor<?x3xf32>) -> tensor<?x3xi1>
  func.return %a, %r, %n, %p, %i : tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xi1>, tensor<?x3xi1>, tensor<?x3xi1>
}

// Cast and CastLike are core.cast (saturate only for 8-bit floats); Identity is
// its input.
// CHECK-LABEL: func.func @cast(
// CHECK:         %c = core.cast(%x) : (tensor<2x3xf32>) -> tensor<2x3xi64>
// CHECK-NEXT:    %l = core.cast(%x) : (tensor<2x3xf32>) -> tensor<2x3xi32>
// CHECK-NEXT:    %s = core.cast(%x) {saturate = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf8E4M3FN>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %c, %l, %s, %x
func.func @cast(%x: tensor<2x3xf32>, %i: tensor<2x3xi32>) -> (tensor<2x3xi64>, tensor<2x3xi32>, tensor<2x3xf8E4M3FN>, tensor<2x3xf32>) {
  %c = onnx.Cast(%x) {to = 7 : i64} : (tensor<2x3xf32>) -> tensor<2x3xi64>
  %l = onnx.CastLike(%x, %i) : (tensor<2x3xf32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  %s = onnx.Cast(%x) {to = 17 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf8E4M3FN>
  %id = onnx.Identity(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %c, %l, %s, %id : tensor<2x3xi64>, tensor<2x3xi32>, tensor<2x3xf8E4M3FN>, tensor<2x3xf32>
}

// Relu on a dynamic tensor: max(x, 0), the zero broadcast to x's runtime shape.
// CHECK-LABEL: func.func @relu_dynamic(
// CHECK:         %[[Z:.*]] = core.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
// CHECK-NEXT:    %[[S:.*]] = core.shape_of(%x) : (tensor<?x3xf32>) -> tensor<2xi64>
// CHECK-NEXT:    %[[ZB:.*]] = core.broadcast(%[[Z]], %[[S]]) {dims = array<i64>} : (tensor<f32>, tensor<2xi64>) -> tensor<?x3xf32>
// CHECK-NEXT:    %y = core.binary max(%x, %[[ZB]]) : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NOT:     onnx.
// CHECK:         func.return %y
func.func @relu_dynamic(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %y = onnx.Relu(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
  func.return %y : tensor<?x3xf32>
}

// LeakyRelu: x < 0 ? alpha * x : x. PRelu: the same with a broadcast slope.
// CHECK-LABEL: func.func @leaky_prelu(
// CHECK:         %[[A:.*]] = core.constant() {value = dense<1.000000e-01> : tensor<f32>}
// CHECK-NEXT:    %[[AB:.*]] = core.broadcast(%[[A]]) {dims = array<i64>} : (tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[AX:.*]] = core.binary mul(%x, %[[AB]])
// CHECK-NEXT:    %[[Z:.*]] = core.constant() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[ZB:.*]] = core.broadcast(%[[Z]]) {dims = array<i64>} : (tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[NEG:.*]] = core.compare lt(%x, %[[ZB]]) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT:    %l = core.select(%[[NEG]], %[[AX]], %x) : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[SL:.*]] = core.broadcast(%slope) {dims = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK:         %[[NEG2:.*]] = core.compare lt(%x, %{{.*}})
// CHECK-NEXT:    %[[SX:.*]] = core.binary mul(%x, %[[SL]])
// CHECK-NEXT:    %p = core.select(%[[NEG2]], %[[SX]], %x)
// CHECK-NOT:     onnx.
// CHECK:         func.return %l, %p
func.func @leaky_prelu(%x: tensor<2x3xf32>, %slope: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %l = onnx.LeakyRelu(%x) {alpha = 1.000000e-01 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %p = onnx.PRelu(%x, %slope) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %l, %p : tensor<2x3xf32>, tensor<2x3xf32>
}

// Gelu (exact): 0.5 * x * (1 + erf(x / sqrt(2))).
// CHECK-LABEL: func.func @gelu(
// CHECK:         %[[H:.*]] = core.constant() {value = dense<5.000000e-01> : tensor<f32>}
// CHECK-NEXT:    %[[HB:.*]] = core.broadcast(%[[H]])
// CHECK-NEXT:    %[[HALF:.*]] = core.binary mul(%x, %[[HB]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[R:.*]] = core.constant() {value = dense<0.707106{{[0-9]*}}> : tensor<f32>}
// CHECK-NEXT:    %[[RB:.*]] = core.broadcast(%[[R]])
// CHECK-NEXT:    %[[XR:.*]] = core.binary mul(%x, %[[RB]])
// CHECK-NEXT:    %[[E:.*]] = core.unary erf(%[[XR]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[O:.*]] = core.constant() {value = dense<1.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[OB:.*]] = core.broadcast(%[[O]])
// CHECK-NEXT:    %[[SUM:.*]] = core.binary add(%[[OB]], %[[E]])
// CHECK-NEXT:    %y = core.binary mul(%[[HALF]], %[[SUM]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NOT:     onnx.
// CHECK:         func.return %y
func.func @gelu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = onnx.Gelu(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// HardSwish: x * max(min(x / 6 + 0.5, 1), 0).
// CHECK-LABEL: func.func @hard_swish(
// CHECK:         core.constant() {value = dense<0.166666{{[0-9]*}}> : tensor<f32>}
// CHECK:         %[[LIN:.*]] = core.binary mul(%x, %{{.*}})
// CHECK:         core.constant() {value = dense<5.000000e-01> : tensor<f32>}
// CHECK:         %[[SH:.*]] = core.binary add(%[[LIN]], %{{.*}})
// CHECK:         core.constant() {value = dense<1.000000e+00> : tensor<f32>}
// CHECK:         %[[MIN:.*]] = core.binary min(%[[SH]], %{{.*}})
// CHECK:         core.constant() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK:         %[[MAX:.*]] = core.binary max(%[[MIN]], %{{.*}})
// CHECK-NEXT:    %y = core.binary mul(%x, %[[MAX]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NOT:     onnx.
// CHECK:         func.return %y
func.func @hard_swish(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = onnx.HardSwish(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// Clip with only an upper bound (the lower one absent) is min(x, broadcast(max)).
// CHECK-LABEL: func.func @clip_max(
// CHECK:         %[[HI:.*]] = core.broadcast(%hi) {dims = array<i64>} : (tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %y = core.binary min(%x, %[[HI]]) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @clip_max(%x: tensor<2x3xf32>, %hi: tensor<f32>) -> tensor<2x3xf32> {
  %y = onnx.Clip(%x, none, %hi) : (tensor<2x3xf32>, none, tensor<f32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// Constant: the value attribute is kept; scalar and list forms become dense constants.
// CHECK-LABEL: func.func @constant(
// CHECK:         %k = core.constant() {value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>} : () -> tensor<2xf32>
// CHECK-NEXT:    %i = core.constant() {value = dense<7> : tensor<i64>} : () -> tensor<i64>
// CHECK-NEXT:    %t = core.constant() {value = dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
// CHECK-NOT:     onnx.
// CHECK:         func.return %k, %i, %t
func.func @constant() -> (tensor<2xf32>, tensor<i64>, tensor<2x2xf32>) {
  %k = onnx.Constant() {value_floats = array<f32: 1.000000e+00, 2.000000e+00>} : () -> tensor<2xf32>
  %i = onnx.Constant() {value_int = 7 : i64} : () -> tensor<i64>
  %t = onnx.Constant() {value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  func.return %k, %i, %t : tensor<2xf32>, tensor<i64>, tensor<2x2xf32>
}
