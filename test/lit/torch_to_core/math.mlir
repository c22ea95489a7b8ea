// The elementwise handlers and rules of convert-torch-to-core on hand-written
// torch-dialect IR: operands are cast to the result's element type (torch's
// promotion) and broadcast to its shape; comparisons meet in a common type;
// Scalar arguments become constants; rounding modes, expm1/log1p and the
// activations become compositions of core elementwise ops.
// RUN: opt %s -p convert-torch-to-core | filecheck %s

// add.Tensor: the row is broadcast, then scaled by alpha.
// CHECK-LABEL: func.func @add_alpha_broadcast(
// CHECK:         %[[R:.*]] = core.broadcast(%r) {dims = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK:         %[[A:.*]] = core.constant() {value = dense<2.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[AB:.*]] = core.broadcast(%[[A]]) {dims = array<i64>} : (tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[S:.*]] = core.binary mul(%[[R]], %[[AB]])
// CHECK-NEXT:    %y = core.binary add(%x, %[[S]]) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NOT:     torch.
// CHECK:         func.return %y
func.func @add_alpha_broadcast(%x: tensor<2x3xf32>, %r: tensor<3xf32>) -> tensor<2x3xf32> {
  %y = torch.aten.add.Tensor(%x, %r) {alpha = 2} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// An integer tensor plus a float Scalar is a float sum.
// CHECK-LABEL: func.func @add_scalar_int_to_float(
// CHECK:         %[[I:.*]] = core.cast(%i) : (tensor<2x3xi64>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[C:.*]] = core.constant() {value = dense<1.500000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[CB:.*]] = core.broadcast(%[[C]]) {dims = array<i64>} : (tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %y = core.binary add(%[[I]], %[[CB]]) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @add_scalar_int_to_float(%i: tensor<2x3xi64>) -> tensor<2x3xf32> {
  %y = torch.aten.add.Scalar(%i) {other = 1.5} : (tensor<2x3xi64>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// torch adds bools as a logical or.
// CHECK-LABEL: func.func @add_bool(
// CHECK-NEXT:    %y = core.binary or(%a, %b) : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
func.func @add_bool(%a: tensor<3xi1>, %b: tensor<3xi1>) -> tensor<3xi1> {
  %y = torch.aten.add.Tensor(%a, %b) : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  func.return %y : tensor<3xi1>
}

// rsub.Scalar: other - alpha * self.
// CHECK-LABEL: func.func @rsub(
// CHECK:         %[[O:.*]] = core.broadcast(%{{.*}}) {dims = array<i64>} : (tensor<f32>) -> tensor<3xf32>
// CHECK:         %[[S:.*]] = core.binary mul(%x, %{{.*}})
// CHECK-NEXT:    %y = core.binary sub(%[[O]], %[[S]])
func.func @rsub(%x: tensor<3xf32>) -> tensor<3xf32> {
  %y = torch.aten.rsub.Scalar(%x) {other = 1.0, alpha = 3} : (tensor<3xf32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}

// A Scalar against a dynamic batch: broadcast to the run-time shape.
// CHECK-LABEL: func.func @mul_dynamic(
// CHECK:         %[[C:.*]] = core.constant() {value = dense<5.000000e-01> : tensor<f32>}
// CHECK-NEXT:    %[[S:.*]] = core.shape_of(%x) : (tensor<?x3xf32>) -> tensor<2xi64>
// CHECK-NEXT:    %[[B:.*]] = core.broadcast(%[[C]], %[[S]]) {dims = array<i64>} : (tensor<f32>, tensor<2xi64>) -> tensor<?x3xf32>
// CHECK-NEXT:    %y = core.binary mul(%x, %[[B]]) : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
func.func @mul_dynamic(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %y = torch.aten.mul.Scalar(%x) {other = 0.5} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  func.return %y : tensor<?x3xf32>
}

// True division of integers is a float division (a rule).
// CHECK-LABEL: func.func @div_int(
// CHECK-NEXT:    %[[A:.*]] = core.cast(%i) : (tensor<3xi64>) -> tensor<3xf32>
// CHECK-NEXT:    %[[B:.*]] = core.cast(%j) : (tensor<3xi64>) -> tensor<3xf32>
// CHECK-NEXT:    %y = core.binary div(%[[A]], %[[B]]) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
func.func @div_int(%i: tensor<3xi64>, %j: tensor<3xi64>) -> tensor<3xf32> {
  %y = torch.aten.div.Tensor(%i, %j) : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}

// Integer floor division: i - mod(i, j) is a multiple of j, which core's truncating div divides exactly.
// CHECK-LABEL: func.func @div_floor_int(
// CHECK-NEXT:    %[[M:.*]] = core.binary mod(%i, %j) : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
// CHECK-NEXT:    %[[D:.*]] = core.binary sub(%i, %[[M]])
// CHECK-NEXT:    %y = core.binary div(%[[D]], %j)
func.func @div_floor_int(%i: tensor<3xi64>, %j: tensor<3xi64>) -> tensor<3xi64> {
  %y = torch.aten.div.Tensor_mode(%i, %j) {rounding_mode = "floor"} : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  func.return %y : tensor<3xi64>
}

// Integer trunc division is core's own.
// CHECK-LABEL: func.func @div_trunc_int(
// CHECK:         %y = core.binary div(%i, %{{.*}}) : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
func.func @div_trunc_int(%i: tensor<3xi64>) -> tensor<3xi64> {
  %y = torch.aten.div.Scalar_mode(%i) {other = 4, rounding_mode = "trunc"} : (tensor<3xi64>) -> tensor<3xi64>
  func.return %y : tensor<3xi64>
}

// Float trunc division: ceil of a negative quotient, floor of the others.
// CHECK-LABEL: func.func @div_trunc_float(
// CHECK-NEXT:    %[[Q:.*]] = core.binary div(%x, %z)
// CHECK:         %[[N:.*]] = core.compare lt(%[[Q]], %{{.*}})
// CHECK-NEXT:    %[[C:.*]] = core.unary ceil(%[[Q]])
// CHECK-NEXT:    %[[F:.*]] = core.unary floor(%[[Q]])
// CHECK-NEXT:    %y = core.select(%[[N]], %[[C]], %[[F]])
func.func @div_trunc_float(%x: tensor<3xf32>, %z: tensor<3xf32>) -> tensor<3xf32> {
  %y = torch.aten.div.Tensor_mode(%x, %z) {rounding_mode = "trunc"} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}

// Float floor division as torch computes it: (x - fmod(x, z)) / z, corrected and rounded;
// a zero divisor gives x / z.
// CHECK-LABEL: func.func @div_floor_float(
// CHECK:         %[[R:.*]] = core.binary rem(%x, %z)
// CHECK-NEXT:    %[[D:.*]] = core.binary sub(%x, %[[R]])
// CHECK-NEXT:    %{{.*}} = core.binary div(%[[D]], %z)
// CHECK:         core.unary floor
// CHECK:         %[[Z:.*]] = core.compare eq(%z, %{{.*}})
// CHECK-NEXT:    %[[Q:.*]] = core.binary div(%x, %z)
// CHECK-NEXT:    %y = core.select(%[[Z]], %[[Q]], %{{.*}})
func.func @div_floor_float(%x: tensor<3xf32>, %z: tensor<3xf32>) -> tensor<3xf32> {
  %y = torch.aten.div.Tensor_mode(%x, %z) {rounding_mode = "floor"} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}

// A unary rule: exp of an integer tensor is a float.
// CHECK-LABEL: func.func @exp_int(
// CHECK-NEXT:    %[[F:.*]] = core.cast(%i) : (tensor<3xi64>) -> tensor<3xf32>
// CHECK-NEXT:    %y = core.unary exp(%[[F]]) : (tensor<3xf32>) -> tensor<3xf32>
func.func @exp_int(%i: tensor<3xi64>) -> tensor<3xf32> {
  %y = torch.aten.exp(%i) : (tensor<3xi64>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}

// pow.Scalar: a Scalar base.
// CHECK-LABEL: func.func @pow_scalar(
// CHECK-NEXT:    %[[C:.*]] = core.constant() {value = dense<2.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[B:.*]] = core.broadcast(%[[C]])
// CHECK-NEXT:    %y = core.binary pow(%[[B]], %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
func.func @pow_scalar(%x: tensor<3xf32>) -> tensor<3xf32> {
  %y = torch.aten.pow.Scalar(%x) {self = 2} : (tensor<3xf32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}

// remainder is core's floor mod, fmod its rem.
// CHECK-LABEL: func.func @remainder_fmod(
// CHECK-NEXT:    %r = core.binary mod(%x, %z)
// CHECK:         %f = core.binary rem(%x, %{{.*}})
func.func @remainder_fmod(%x: tensor<3xf32>, %z: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %r = torch.aten.remainder.Tensor(%x, %z) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %f = torch.aten.fmod.Scalar(%x) {other = 1.5} : (tensor<3xf32>) -> tensor<3xf32>
  func.return %r, %f : tensor<3xf32>, tensor<3xf32>
}

// A comparison rule: an integer and a float tensor compare in float.
// CHECK-LABEL: func.func @lt_mixed(
// CHECK-NEXT:    %[[I:.*]] = core.cast(%i) : (tensor<2x3xi64>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[R:.*]] = core.broadcast(%r) {dims = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %y = core.compare lt(%[[I]], %[[R]]) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
func.func @lt_mixed(%i: tensor<2x3xi64>, %r: tensor<3xf32>) -> tensor<2x3xi1> {
  %y = torch.aten.lt.Tensor(%i, %r) : (tensor<2x3xi64>, tensor<3xf32>) -> tensor<2x3xi1>
  func.return %y : tensor<2x3xi1>
}

// An integer tensor against a float Scalar compares in float32, not against 0.
// CHECK-LABEL: func.func @gt_scalar_float(
// CHECK-NEXT:    %[[I:.*]] = core.cast(%i) : (tensor<3xi64>) -> tensor<3xf32>
// CHECK-NEXT:    %[[C:.*]] = core.constant() {value = dense<5.000000e-01> : tensor<f32>}
// CHECK-NEXT:    %[[B:.*]] = core.broadcast(%[[C]])
// CHECK-NEXT:    %y = core.compare gt(%[[I]], %[[B]]) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
func.func @gt_scalar_float(%i: tensor<3xi64>) -> tensor<3xi1> {
  %y = torch.aten.gt.Scalar(%i) {other = 0.5} : (tensor<3xi64>) -> tensor<3xi1>
  func.return %y : tensor<3xi1>
}

// ... and against an integer Scalar in its own type.
// CHECK-LABEL: func.func @eq_scalar_int(
// CHECK-NEXT:    %[[C:.*]] = core.constant() {value = dense<2> : tensor<i64>}
// CHECK-NEXT:    %[[B:.*]] = core.broadcast(%[[C]])
// CHECK-NEXT:    %y = core.compare eq(%i, %[[B]]) : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi1>
func.func @eq_scalar_int(%i: tensor<3xi64>) -> tensor<3xi1> {
  %y = torch.aten.eq.Scalar(%i) {other = 2} : (tensor<3xi64>) -> tensor<3xi1>
  func.return %y : tensor<3xi1>
}

// round is core's (half to even); trunc is ceil or floor by the sign; integers are already whole.
// CHECK-LABEL: func.func @rounding(
// CHECK-NEXT:    %r = core.unary round(%x) : (tensor<3xf32>) -> tensor<3xf32>
// CHECK:         %[[N:.*]] = core.compare lt(%x, %{{.*}})
// CHECK-NEXT:    %[[C:.*]] = core.unary ceil(%x)
// CHECK-NEXT:    %[[F:.*]] = core.unary floor(%x)
// CHECK-NEXT:    %t = core.select(%[[N]], %[[C]], %[[F]])
// CHECK-NEXT:    func.return %r, %t, %i
func.func @rounding(%x: tensor<3xf32>, %i: tensor<3xi64>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xi64>) {
  %r = torch.aten.round(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %t = torch.aten.trunc(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %f = torch.aten.floor(%i) : (tensor<3xi64>) -> tensor<3xi64>
  func.return %r, %t, %f : tensor<3xf32>, tensor<3xf32>, tensor<3xi64>
}

// torch's sign of NaN is 0, where core's keeps the NaN.
// CHECK-LABEL: func.func @sign(
// CHECK-NEXT:    %[[S:.*]] = core.unary sign(%x) : (tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %[[N:.*]] = core.compare ne(%x, %x)
// CHECK-NEXT:    %[[Z:.*]] = core.constant() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[ZB:.*]] = core.broadcast(%[[Z]])
// CHECK-NEXT:    %y = core.select(%[[N]], %[[ZB]], %[[S]])
// CHECK-NEXT:    %j = core.unary sign(%i) : (tensor<3xi64>) -> tensor<3xi64>
func.func @sign(%x: tensor<3xf32>, %i: tensor<3xi64>) -> (tensor<3xf32>, tensor<3xi64>) {
  %y = torch.aten.sign(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %j = torch.aten.sign(%i) : (tensor<3xi64>) -> tensor<3xi64>
  func.return %y, %j : tensor<3xf32>, tensor<3xi64>
}

// isnan reads its operand in its own type; an integer is never infinite.
// CHECK-LABEL: func.func @nan_inf(
// CHECK-NEXT:    %n = core.unary isnan(%x) : (tensor<3xf32>) -> tensor<3xi1>
// CHECK-NEXT:    %f = core.compare ne(%i, %i) : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi1>
func.func @nan_inf(%x: tensor<3xf32>, %i: tensor<3xi64>) -> (tensor<3xi1>, tensor<3xi1>) {
  %n = torch.aten.isnan(%x) : (tensor<3xf32>) -> tensor<3xi1>
  %f = torch.aten.isinf(%i) : (tensor<3xi64>) -> tensor<3xi1>
  func.return %n, %f : tensor<3xi1>, tensor<3xi1>
}

// logical_* read their operands as bools; bitwise_* stay on integers.
// CHECK-LABEL: func.func @logical_bitwise(
// CHECK-NEXT:    %[[A:.*]] = core.cast(%x) : (tensor<3xf32>) -> tensor<3xi1>
// CHECK-NEXT:    %[[B:.*]] = core.cast(%i) : (tensor<3xi64>) -> tensor<3xi1>
// CHECK-NEXT:    %l = core.binary and(%[[A]], %[[B]]) : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
// CHECK-NEXT:    %b = core.binary bitwise_and(%i, %j) : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
func.func @logical_bitwise(%x: tensor<3xf32>, %i: tensor<3xi64>, %j: tensor<3xi64>) -> (tensor<3xi1>, tensor<3xi64>) {
  %l = torch.aten.logical_and(%x, %i) : (tensor<3xf32>, tensor<3xi64>) -> tensor<3xi1>
  %b = torch.aten.bitwise_and.Tensor(%i, %j) : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  func.return %l, %b : tensor<3xi1>, tensor<3xi64>
}

// expm1: Kahan's (u - 1) * x / log(u), u = exp(x); u = 1, 0 and inf take their own path.
// CHECK-LABEL: func.func @expm1(
// CHECK-NEXT:    %[[U:.*]] = core.unary exp(%x)
// CHECK:         %[[UM1:.*]] = core.binary sub(%[[U]], %{{.*}})
// CHECK-NEXT:    %[[P:.*]] = core.binary mul(%[[UM1]], %x)
// CHECK-NEXT:    %[[L:.*]] = core.unary log(%[[U]])
// CHECK-NEXT:    %[[K:.*]] = core.binary div(%[[P]], %[[L]])
// CHECK:         %[[ZERO:.*]] = core.compare eq(%[[UM1]], %{{.*}})
// CHECK-NEXT:    %[[S0:.*]] = core.select(%[[ZERO]], %[[UM1]], %[[K]])
// CHECK:         %[[ONE:.*]] = core.compare eq(%[[U]], %{{.*}})
// CHECK-NEXT:    %[[S1:.*]] = core.select(%[[ONE]], %x, %[[S0]])
// CHECK-NEXT:    %[[INF:.*]] = core.unary isposinf(%[[U]]) : (tensor<3xf32>) -> tensor<3xi1>
// CHECK-NEXT:    %y = core.select(%[[INF]], %[[U]], %[[S1]])
func.func @expm1(%x: tensor<3xf32>) -> tensor<3xf32> {
  %y = torch.aten.expm1(%x) : (tensor<3xf32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}

// log1p: Kahan's log(u) * x / (u - 1), u = 1 + x.
// CHECK-LABEL: func.func @log1p(
// CHECK:         %[[U:.*]] = core.binary add(%{{.*}}, %x)
// CHECK-NEXT:    %[[L:.*]] = core.unary log(%[[U]])
// CHECK-NEXT:    %[[P:.*]] = core.binary mul(%[[L]], %x)
// CHECK:         %[[UM1:.*]] = core.binary sub(%[[U]], %{{.*}})
// CHECK-NEXT:    %[[K:.*]] = core.binary div(%[[P]], %[[UM1]])
// CHECK:         %[[ONE:.*]] = core.compare eq(%[[U]], %{{.*}})
// CHECK-NEXT:    %[[S:.*]] = core.select(%[[ONE]], %x, %[[K]])
// CHECK-NEXT:    %[[INF:.*]] = core.unary isposinf(%[[U]])
// CHECK-NEXT:    %y = core.select(%[[INF]], %[[U]], %[[S]])
func.func @log1p(%x: tensor<3xf32>) -> tensor<3xf32> {
  %y = torch.aten.log1p(%x) : (tensor<3xf32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}

// log2 is log times 1 / ln 2.
// CHECK-LABEL: func.func @log2(
// CHECK-NEXT:    %[[L:.*]] = core.unary log(%x)
// CHECK-NEXT:    %[[C:.*]] = core.constant() {value = dense<1.44269502> : tensor<f32>}
// CHECK-NEXT:    %[[B:.*]] = core.broadcast(%[[C]])
// CHECK-NEXT:    %y = core.binary mul(%[[L]], %[[B]])
func.func @log2(%x: tensor<3xf32>) -> tensor<3xf32> {
  %y = torch.aten.log2(%x) : (tensor<3xf32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}

// where: the choices in the result's type, broadcast.
// CHECK-LABEL: func.func @where_mixed(
// CHECK-NEXT:    %[[I:.*]] = core.cast(%i) : (tensor<3xi64>) -> tensor<3xf32>
// CHECK-NEXT:    %[[B:.*]] = core.broadcast(%[[I]]) {dims = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %y = core.select(%c, %[[B]], %x) : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @where_mixed(%c: tensor<2x3xi1>, %i: tensor<3xi64>, %x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = torch.aten.where.self(%c, %i, %x) : (tensor<2x3xi1>, tensor<3xi64>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @where_scalar_other(
// CHECK-NEXT:    %[[C:.*]] = core.constant() {value = dense<2.500000e-01> : tensor<f32>}
// CHECK-NEXT:    %[[B:.*]] = core.broadcast(%[[C]])
// CHECK-NEXT:    %y = core.select(%c, %x, %[[B]])
func.func @where_scalar_other(%c: tensor<3xi1>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %y = torch.aten.where.ScalarOther(%c, %x) {other = 0.25} : (tensor<3xi1>, tensor<3xf32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}

// masked_fill: the mask broadcast to self's shape selects the value.
// CHECK-LABEL: func.func @masked_fill(
// CHECK-NEXT:    %[[C:.*]] = core.constant() {value = dense<-1.500000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[M:.*]] = core.broadcast(%m) {dims = array<i64: 1>} : (tensor<3xi1>) -> tensor<2x3xi1>
// CHECK-NEXT:    %[[V:.*]] = core.broadcast(%[[C]]) {dims = array<i64>} : (tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %y = core.select(%[[M]], %[[V]], %x)
func.func @masked_fill(%x: tensor<2x3xf32>, %m: tensor<3xi1>) -> tensor<2x3xf32> {
  %y = torch.aten.masked_fill.Scalar(%x, %m) {value = -1.5} : (tensor<2x3xf32>, tensor<3xi1>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// Clamps are max then min, of the bounds that are given.
// CHECK-LABEL: func.func @clamps(
// CHECK:         %a = core.binary max(%x, %{{.*}})
// CHECK-NEXT:    %[[H:.*]] = core.broadcast(%hi) {dims = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %b = core.binary min(%x, %[[H]])
// CHECK:         %[[LOW:.*]] = core.binary max(%x, %{{.*}})
// CHECK-NEXT:    %c = core.binary min(%[[LOW]], %{{.*}})
func.func @clamps(%x: tensor<2x3xf32>, %hi: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %a = torch.aten.clamp(%x) {min = 0.1} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %b = torch.aten.clamp.Tensor(%x, none, %hi) : (tensor<2x3xf32>, none, tensor<3xf32>) -> tensor<2x3xf32>
  %c = torch.aten.relu6(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %a, %b, %c : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// CHECK-LABEL: func.func @leaky_relu(
// CHECK:         %[[S:.*]] = core.binary mul(%x, %{{.*}})
// CHECK:         %[[P:.*]] = core.compare gt(%x, %{{.*}})
// CHECK-NEXT:    %y = core.select(%[[P]], %x, %[[S]])
func.func @leaky_relu(%x: tensor<3xf32>) -> tensor<3xf32> {
  %y = torch.aten.leaky_relu(%x) {negative_slope = 0.2} : (tensor<3xf32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}

// elu: scale * x, or scale * alpha * expm1(x) (a unit input_scale is not multiplied).
// CHECK-LABEL: func.func @elu(
// CHECK-NEXT:    %[[U:.*]] = core.unary exp(%x)
// CHECK:         %[[E:.*]] = core.select(%{{.*}}, %[[U]], %{{.*}})
// CHECK-NEXT:    core.constant() {value = dense<1.500000e+00> : tensor<f32>}
// CHECK:         %[[N:.*]] = core.binary mul(%[[E]], %{{.*}})
// CHECK-NEXT:    core.constant() {value = dense<3.000000e+00> : tensor<f32>}
// CHECK:         %[[P:.*]] = core.binary mul(%x, %{{.*}})
// CHECK:         %[[G:.*]] = core.compare gt(%x, %{{.*}})
// CHECK-NEXT:    %y = core.select(%[[G]], %[[P]], %[[N]])
func.func @elu(%x: tensor<3xf32>) -> tensor<3xf32> {
  %y = torch.aten.elu(%x) {alpha = 0.5, scale = 3.0} : (tensor<3xf32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}

// gelu: x/2 * (1 + erf(x/√2)), or the tanh approximation.
// CHECK-LABEL: func.func @gelu(
// CHECK:         %[[H:.*]] = core.binary mul(%x, %{{.*}})
// CHECK-NEXT:    core.constant() {value = dense<0.707106769> : tensor<f32>}
// CHECK:         %[[E:.*]] = core.unary erf(%{{.*}})
// CHECK:         %[[S:.*]] = core.binary add(%{{.*}}, %[[E]])
// CHECK-NEXT:    %a = core.binary mul(%[[H]], %[[S]])
// CHECK:         core.constant() {value = dense<4.471500e-02> : tensor<f32>}
// CHECK:         core.constant() {value = dense<0.797884583> : tensor<f32>}
// CHECK:         %[[T:.*]] = core.unary tanh(%{{.*}})
// CHECK:         %[[S2:.*]] = core.binary add(%{{.*}}, %[[T]])
// CHECK-NEXT:    %b = core.binary mul(%{{.*}}, %[[S2]])
func.func @gelu(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %a = torch.aten.gelu(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %b = torch.aten.gelu(%x) {approximate = "tanh"} : (tensor<3xf32>) -> tensor<3xf32>
  func.return %a, %b : tensor<3xf32>, tensor<3xf32>
}

// silu is x * sigmoid(x); hardsigmoid min(max(x + 3, 0), 6) / 6; hardswish x times that.
// CHECK-LABEL: func.func @silu_hard(
// CHECK-NEXT:    %[[S:.*]] = core.unary sigmoid(%x)
// CHECK-NEXT:    %a = core.binary mul(%x, %[[S]])
// CHECK:         %[[SH:.*]] = core.binary add(%x, %{{.*}})
// CHECK:         %[[MX:.*]] = core.binary max(%[[SH]], %{{.*}})
// CHECK:         %[[MN:.*]] = core.binary min(%[[MX]], %{{.*}})
// CHECK:         %b = core.binary div(%[[MN]], %{{.*}})
// CHECK:         %[[HS:.*]] = core.binary div(%{{.*}}, %{{.*}})
// CHECK-NEXT:    %c = core.binary mul(%x, %[[HS]])
// CHECK-NOT:     torch.
func.func @silu_hard(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %a = torch.aten.silu(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %b = torch.aten.hardsigmoid(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %c = torch.aten.hardswish(%x) : (tensor<3xf32>) -> tensor<3xf32>
  func.return %a, %b, %c : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}
