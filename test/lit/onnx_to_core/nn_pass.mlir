// The nn handlers of convert-onnx-to-core on hand-written onnx-dialect IR:
// matmul with explicit batch broadcasts, Gemm as transpose/matmul/mul/add,
// convolutions and pooling with explicit pads (auto_pad and ceil_mode
// resolved), averages as sum pools over static counts, normalizations and
// softmax as reduce + broadcast + elementwise ops.
// RUN: opt %s -p convert-onnx-to-core | filecheck %s

// 2-D MatMul is core.matmul; a 1-D lhs gets a unit row, removed afterwards.
// CHECK-LABEL: func.func @matmul(
// CHECK:         %y = core.matmul(%a, %b) {acc = f32} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[ROW:.*]] = core.reshape(%v) : (tensor<3xf32>) -> tensor<1x3xf32>
// CHECK-NEXT:    %[[MM:.*]] = core.matmul(%[[ROW]], %b) {acc = f32} : (tensor<1x3xf32>, tensor<3x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:    %z = core.reshape(%[[MM]]) : (tensor<1x4xf32>) -> tensor<4xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y, %z
func.func @matmul(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %v: tensor<3xf32>) -> (tensor<2x4xf32>, tensor<4xf32>) {
  %y = onnx.MatMul(%a, %b) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %z = onnx.MatMul(%v, %b) : (tensor<3xf32>, tensor<3x4xf32>) -> tensor<4xf32>
  func.return %y, %z : tensor<2x4xf32>, tensor<4xf32>
}

// A dynamic batch on the lhs: the rhs is broadcast to [N, 3, 4], N read from %a's shape.
// CHECK-LABEL: func.func @matmul_dynamic_batch(
// CHECK:         %[[SA:.*]] = core.shape_of(%a) : (tensor<?x2x3xf32>) -> tensor<3xi64>
// CHECK-NEXT:    %[[PICK:.*]] = core.constant() {value = dense<0> : tensor<3xi64>}
// CHECK-NEXT:    %[[DIMS:.*]] = core.gather(%[[SA]], %[[PICK]]) {axis = 0 : i64} : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
// CHECK-NEXT:    %[[MASK:.*]] = core.constant() {value = dense<[true, false, false]> : tensor<3xi1>}
// CHECK-NEXT:    %[[FIXED:.*]] = core.constant() {value = dense<[0, 3, 4]> : tensor<3xi64>}
// CHECK-NEXT:    %[[S:.*]] = core.select(%[[MASK]], %[[DIMS]], %[[FIXED]])
// CHECK-NEXT:    %[[B:.*]] = core.broadcast(%b, %[[S]]) {dims = array<i64: 1, 2>} : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<?x3x4xf32>
// CHECK-NEXT:    %y = core.matmul(%a, %[[B]]) {acc = f32} : (tensor<?x2x3xf32>, tensor<?x3x4xf32>) -> tensor<?x2x4xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @matmul_dynamic_batch(%a: tensor<?x2x3xf32>, %b: tensor<3x4xf32>) -> tensor<?x2x4xf32> {
  %y = onnx.MatMul(%a, %b) : (tensor<?x2x3xf32>, tensor<3x4xf32>) -> tensor<?x2x4xf32>
  func.return %y : tensor<?x2x4xf32>
}

// MatMulInteger: operands widened to i32, the zero point subtracted, i32 accumulation.
// CHECK-LABEL: func.func @matmul_integer(
// CHECK:         %[[A:.*]] = core.cast(%a) : (tensor<2x3xui8>) -> tensor<2x3xi32>
// CHECK-NEXT:    %[[B:.*]] = core.cast(%b) : (tensor<3x4xi8>) -> tensor<3x4xi32>
// CHECK-NEXT:    %[[Z:.*]] = core.cast(%za) : (tensor<ui8>) -> tensor<i32>
// CHECK-NEXT:    %[[ZB:.*]] = core.broadcast(%[[Z]]) {dims = array<i64>} : (tensor<i32>) -> tensor<2x3xi32>
// CHECK-NEXT:    %[[AZ:.*]] = core.binary sub(%[[A]], %[[ZB]]) : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT:    %y = core.matmul(%[[AZ]], %[[B]]) {acc = i32} : (tensor<2x3xi32>, tensor<3x4xi32>) -> tensor<2x4xi32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @matmul_integer(%a: tensor<2x3xui8>, %b: tensor<3x4xi8>, %za: tensor<ui8>) -> tensor<2x4xi32> {
  %y = onnx.MatMulInteger(%a, %b, %za) : (tensor<2x3xui8>, tensor<3x4xi8>, tensor<ui8>) -> tensor<2x4xi32>
  func.return %y : tensor<2x4xi32>
}

// Gemm: alpha * A' x B' + beta * C, the transposes explicit, C broadcast to the result.
// CHECK-LABEL: func.func @gemm(
// CHECK:         %[[AT:.*]] = core.transpose(%a) {perm = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[BT:.*]] = core.transpose(%b) {perm = array<i64: 1, 0>} : (tensor<4x3xf32>) -> tensor<3x4xf32>
// CHECK-NEXT:    %[[MM:.*]] = core.matmul(%[[AT]], %[[BT]]) {acc = f32} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[ALPHA:.*]] = core.constant() {value = dense<2.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[ALPHAB:.*]] = core.broadcast(%[[ALPHA]]) {dims = array<i64>} : (tensor<f32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[SCALED:.*]] = core.binary mul(%[[MM]], %[[ALPHAB]])
// CHECK-NEXT:    %[[C:.*]] = core.broadcast(%c) {dims = array<i64: 1>} : (tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[BETA:.*]] = core.constant() {value = dense<5.000000e-01> : tensor<f32>}
// CHECK-NEXT:    %[[BETAB:.*]] = core.broadcast(%[[BETA]]) {dims = array<i64>} : (tensor<f32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[CS:.*]] = core.binary mul(%[[C]], %[[BETAB]])
// CHECK-NEXT:    %y = core.binary add(%[[SCALED]], %[[CS]]) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @gemm(%a: tensor<3x2xf32>, %b: tensor<4x3xf32>, %c: tensor<4xf32>) -> tensor<2x4xf32> {
  %y = onnx.Gemm(%a, %b, %c) {transA = 1 : i64, transB = 1 : i64, alpha = 2.000000e+00 : f32, beta = 5.000000e-01 : f32} : (tensor<3x2xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// Conv: ONNX pads [h_begin, w_begin, h_end, w_end] become pad_low/pad_high per
// spatial dim; groups carry over; the bias is broadcast along the channel dim.
// CHECK-LABEL: func.func @conv(
// CHECK:         %[[C:.*]] = core.conv(%x, %w) {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 0>, pad_high = array<i64: 1, 0>, groups = 2 : i64, layout = "NCHW", acc = f32} : (tensor<1x4x5x5xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x3x2xf32>
// CHECK-NEXT:    %[[B:.*]] = core.broadcast(%bias) {dims = array<i64: 1>} : (tensor<6xf32>) -> tensor<1x6x3x2xf32>
// CHECK-NEXT:    %y = core.binary add(%[[C]], %[[B]]) : (tensor<1x6x3x2xf32>, tensor<1x6x3x2xf32>) -> tensor<1x6x3x2xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @conv(%x: tensor<1x4x5x5xf32>, %w: tensor<6x2x3x3xf32>, %bias: tensor<6xf32>) -> tensor<1x6x3x2xf32> {
  %y = onnx.Conv(%x, %w, %bias) {pads = array<i64: 1, 0, 1, 0>, strides = array<i64: 2, 2>, group = 2 : i64} : (tensor<1x4x5x5xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<1x6x3x2xf32>
  func.return %y : tensor<1x6x3x2xf32>
}

// A dynamic batch passes through; SAME_LOWER with dilation 2 (extent 5) pads 2 + 2.
// CHECK-LABEL: func.func @conv_dynamic_batch(
// CHECK:         %y = core.conv(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 2, 2>, pad_low = array<i64: 2, 2>, pad_high = array<i64: 2, 2>, groups = 1 : i64, layout = "NCHW", acc = f32} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x8x8xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @conv_dynamic_batch(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<?x4x8x8xf32> {
  %y = onnx.Conv(%x, %w) {auto_pad = "SAME_LOWER", dilations = array<i64: 2, 2>} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x8x8xf32>
  func.return %y : tensor<?x4x8x8xf32>
}

// ConvTranspose: output_padding 1 is folded into pad_high (1 - 1 = 0):
// (3 - 1) * 2 + (3 - 1) + 1 - 1 - 0 = 6; output channels are the weights' dim 1.
// CHECK-LABEL: func.func @conv_transpose(
// CHECK:         %y = core.conv_transpose(%x, %w) {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 0, 0>, groups = 1 : i64, acc = f32} : (tensor<1x2x3x3xf32>, tensor<2x3x3x3xf32>) -> tensor<1x3x6x6xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @conv_transpose(%x: tensor<1x2x3x3xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<1x3x6x6xf32> {
  %y = onnx.ConvTranspose(%x, %w) {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, output_padding = array<i64: 1, 1>} : (tensor<1x2x3x3xf32>, tensor<2x3x3x3xf32>) -> tensor<1x3x6x6xf32>
  func.return %y : tensor<1x3x6x6xf32>
}

// MaxPool with ceil_mode: the last partial window becomes an extra high pad.
// CHECK-LABEL: func.func @max_pool_ceil(
// CHECK:         %y = core.pool max(%x) {window = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 1, 1>} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @max_pool_ceil(%x: tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32> {
  %y = onnx.MaxPool(%x) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode = 1 : i64} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  func.return %y : tensor<1x1x3x3xf32>
}

// AveragePool: a sum pool divided by the count of each window. Without
// count_include_pad, padded windows count 4 (corners), 6 (edges) or 9; without
// pads every window counts the same, a scalar.
// CHECK-LABEL: func.func @avg_pool(
// CHECK:         %[[S:.*]] = core.pool sum(%x) {window = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
// CHECK-NEXT:    %[[N:.*]] = core.constant() {value = dense<{{\[\[}}4.000000e+00, 6.000000e+00, 6.000000e+00, 4.000000e+00], [6.000000e+00, 9.000000e+00, 9.000000e+00, 6.000000e+00], [6.000000e+00, 9.000000e+00, 9.000000e+00, 6.000000e+00], [4.000000e+00, 6.000000e+00, 6.000000e+00, 4.000000e+00]]> : tensor<4x4xf32>}
// CHECK-NEXT:    %[[NB:.*]] = core.broadcast(%[[N]]) {dims = array<i64: 2, 3>} : (tensor<4x4xf32>) -> tensor<1x1x4x4xf32>
// CHECK-NEXT:    %y = core.binary div(%[[S]], %[[NB]]) : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
// CHECK-NEXT:    %[[S2:.*]] = core.pool sum(%x) {window = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
// CHECK-NEXT:    %[[N2:.*]] = core.constant() {value = dense<4.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[N2B:.*]] = core.broadcast(%[[N2]]) {dims = array<i64>} : (tensor<f32>) -> tensor<1x1x2x2xf32>
// CHECK-NEXT:    %z = core.binary div(%[[S2]], %[[N2B]])
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y, %z
func.func @avg_pool(%x: tensor<1x1x4x4xf32>) -> (tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>) {
  %y = onnx.AveragePool(%x) {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %z = onnx.AveragePool(%x) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
  func.return %y, %z : tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>
}

// GlobalAveragePool with a dynamic batch: a whole-plane sum pool, divided by 4 * 5.
// CHECK-LABEL: func.func @global_avg_pool_dynamic(
// CHECK:         %[[S:.*]] = core.pool sum(%x) {window = array<i64: 4, 5>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : (tensor<?x3x4x5xf32>) -> tensor<?x3x1x1xf32>
// CHECK-NEXT:    %[[N:.*]] = core.constant() {value = dense<2.000000e+01> : tensor<f32>}
// CHECK-NEXT:    %[[SH:.*]] = core.shape_of(%[[S]]) : (tensor<?x3x1x1xf32>) -> tensor<4xi64>
// CHECK-NEXT:    %[[NB:.*]] = core.broadcast(%[[N]], %[[SH]]) {dims = array<i64>} : (tensor<f32>, tensor<4xi64>) -> tensor<?x3x1x1xf32>
// CHECK-NEXT:    %y = core.binary div(%[[S]], %[[NB]]) : (tensor<?x3x1x1xf32>, tensor<?x3x1x1xf32>) -> tensor<?x3x1x1xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @global_avg_pool_dynamic(%x: tensor<?x3x4x5xf32>) -> tensor<?x3x1x1xf32> {
  %y = onnx.GlobalAveragePool(%x) : (tensor<?x3x4x5xf32>) -> tensor<?x3x1x1xf32>
  func.return %y : tensor<?x3x1x1xf32>
}

// BatchNormalization (inference) is x * m + a per channel. With constant
// statistics m = scale / sqrt(var + eps) and a = bias - mean * m are folded:
// here m = [1, 1, 1] and a = [-1, 0, 1]. Otherwise they are computed.
// CHECK-LABEL: func.func @batch_norm(
// CHECK:         %cv = core.constant()
// CHECK-NEXT:    %[[M:.*]] = core.constant() {value = dense<1.000000e+00> : tensor<3xf32>}
// CHECK-NEXT:    %[[A:.*]] = core.constant() {value = dense<[-1.000000e+00, 0.000000e+00, 1.000000e+00]> : tensor<3xf32>}
// CHECK-NEXT:    %[[MB:.*]] = core.broadcast(%[[M]]) {dims = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    %[[XM:.*]] = core.binary mul(%x, %[[MB]])
// CHECK-NEXT:    %[[AB:.*]] = core.broadcast(%[[A]]) {dims = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    %y = core.binary add(%[[XM]], %[[AB]]) : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    %[[EPS:.*]] = core.constant() {value = dense<1.000000e-05> : tensor<f32>}
// CHECK-NEXT:    %[[EPSB:.*]] = core.broadcast(%[[EPS]]) {dims = array<i64>} : (tensor<f32>) -> tensor<3xf32>
// CHECK-NEXT:    %[[VE:.*]] = core.binary add(%v, %[[EPSB]])
// CHECK-NEXT:    %[[SD:.*]] = core.unary sqrt(%[[VE]])
// CHECK-NEXT:    %[[INV:.*]] = core.unary reciprocal(%[[SD]])
// CHECK-NEXT:    %[[M2:.*]] = core.binary mul(%s, %[[INV]]) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %[[MM:.*]] = core.binary mul(%m, %[[M2]])
// CHECK-NEXT:    %[[A2:.*]] = core.binary sub(%b, %[[MM]])
// CHECK-NEXT:    %[[M2B:.*]] = core.broadcast(%[[M2]]) {dims = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    %[[XM2:.*]] = core.binary mul(%x, %[[M2B]])
// CHECK-NEXT:    %[[A2B:.*]] = core.broadcast(%[[A2]]) {dims = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    %z = core.binary add(%[[XM2]], %[[A2B]])
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y, %z
func.func @batch_norm(%x: tensor<2x3x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  %cs = onnx.Constant() {value = dense<[1.0, 2.0, 4.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %cb = onnx.Constant() {value = dense<[0.0, 1.0, 2.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %cm = onnx.Constant() {value = dense<[1.0, 1.0, 1.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %cv = onnx.Constant() {value = dense<[0.0, 3.0, 15.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %y = onnx.BatchNormalization(%x, %cs, %cb, %cm, %cv) {epsilon = 1.0 : f32} : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  %z = onnx.BatchNormalization(%x, %s, %b, %m, %v) : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  func.return %y, %z : tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

// LayerNormalization over the last dim of a dynamic batch: mean and variance
// are sums over axis 1 divided by 4, broadcast back with the runtime shape.
// CHECK-LABEL: func.func @layer_norm_dynamic(
// CHECK:         %[[SUM:.*]] = core.reduce sum(%x) {axes = array<i64: 1>} : (tensor<?x4xf32>) -> tensor<?xf32>
// CHECK-NEXT:    %[[SX:.*]] = core.shape_of(%x) : (tensor<?x4xf32>) -> tensor<2xi64>
// CHECK-NEXT:    %[[SUMB:.*]] = core.broadcast(%[[SUM]], %[[SX]]) {dims = array<i64: 0>} : (tensor<?xf32>, tensor<2xi64>) -> tensor<?x4xf32>
// CHECK-NEXT:    %[[N:.*]] = core.constant() {value = dense<4.000000e+00> : tensor<f32>}
// CHECK:         %[[MEAN:.*]] = core.binary div(%[[SUMB]], %{{.*}}) : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK-NEXT:    %[[C:.*]] = core.binary sub(%x, %[[MEAN]])
// CHECK-NEXT:    %[[SQ:.*]] = core.binary mul(%[[C]], %[[C]])
// CHECK-NEXT:    %[[VSUM:.*]] = core.reduce sum(%[[SQ]]) {axes = array<i64: 1>} : (tensor<?x4xf32>) -> tensor<?xf32>
// CHECK:         %[[VAR:.*]] = core.binary div(
// CHECK-NEXT:    %[[EPS:.*]] = core.constant() {value = dense<1.000000e-05> : tensor<f32>}
// CHECK:         %[[VE:.*]] = core.binary add(%[[VAR]], %{{.*}})
// CHECK-NEXT:    %[[SD:.*]] = core.unary sqrt(%[[VE]])
// CHECK-NEXT:    %[[INV:.*]] = core.unary reciprocal(%[[SD]])
// CHECK-NEXT:    %[[NORM:.*]] = core.binary mul(%[[C]], %[[INV]])
// CHECK-NEXT:    %[[SN:.*]] = core.shape_of(%[[NORM]])
// CHECK-NEXT:    %[[SB:.*]] = core.broadcast(%s, %[[SN]]) {dims = array<i64: 1>} : (tensor<4xf32>, tensor<2xi64>) -> tensor<?x4xf32>
// CHECK-NEXT:    %[[SC:.*]] = core.binary mul(%[[NORM]], %[[SB]])
// CHECK-NEXT:    %[[SS:.*]] = core.shape_of(%[[SC]])
// CHECK-NEXT:    %[[BB:.*]] = core.broadcast(%b, %[[SS]]) {dims = array<i64: 1>} : (tensor<4xf32>, tensor<2xi64>) -> tensor<?x4xf32>
// CHECK-NEXT:    %y = core.binary add(%[[SC]], %[[BB]]) : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @layer_norm_dynamic(%x: tensor<?x4xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %y = onnx.LayerNormalization(%x, %s, %b) : (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}

// Softmax (default axis -1): exp(x - max) / sum, each reduction broadcast back; a term
// under -87.34 (a subnormal exponential) is 0.
// CHECK-LABEL: func.func @softmax_dynamic(
// CHECK:         %[[MAX:.*]] = core.reduce max(%x) {axes = array<i64: 1>} : (tensor<?x5xf32>) -> tensor<?xf32>
// CHECK-NEXT:    %[[SX:.*]] = core.shape_of(%x)
// CHECK-NEXT:    %[[MAXB:.*]] = core.broadcast(%[[MAX]], %[[SX]]) {dims = array<i64: 0>} : (tensor<?xf32>, tensor<2xi64>) -> tensor<?x5xf32>
// CHECK-NEXT:    %[[D:.*]] = core.binary sub(%x, %[[MAXB]])
// CHECK:         %[[TINY:.*]] = core.compare lt(%[[D]], %{{.*}})
// CHECK:         %[[DS:.*]] = core.select(%[[TINY]], %[[Z:.*]], %[[D]])
// CHECK-NEXT:    %[[EX:.*]] = core.unary exp(%[[DS]])
// CHECK-NEXT:    %[[E:.*]] = core.select(%[[TINY]], %[[Z]], %[[EX]])
// CHECK-NEXT:    %[[SUM:.*]] = core.reduce sum(%[[E]]) {axes = array<i64: 1>} : (tensor<?x5xf32>) -> tensor<?xf32>
// CHECK-NEXT:    %[[SE:.*]] = core.shape_of(%[[E]])
// CHECK-NEXT:    %[[SUMB:.*]] = core.broadcast(%[[SUM]], %[[SE]]) {dims = array<i64: 0>}
// CHECK-NEXT:    %y = core.binary div(%[[E]], %[[SUMB]]) : (tensor<?x5xf32>, tensor<?x5xf32>) -> tensor<?x5xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @softmax_dynamic(%x: tensor<?x5xf32>) -> tensor<?x5xf32> {
  %y = onnx.Softmax(%x) : (tensor<?x5xf32>) -> tensor<?x5xf32>
  func.return %y : tensor<?x5xf32>
}

// Hardmax: 1 where the position along the axis equals the first argmax.
// CHECK-LABEL: func.func @hardmax(
// CHECK:         %[[ARG:.*]] = core.arg_reduce max(%x) {axis = 1 : i64, last = 0 : i64} : (tensor<2x5xf32>) -> tensor<2xi64>
// CHECK-NEXT:    %[[IOTA:.*]] = core.constant() {value = dense<[0, 1, 2, 3, 4]> : tensor<5xi64>}
// CHECK-NEXT:    %[[POS:.*]] = core.broadcast(%[[IOTA]]) {dims = array<i64: 1>} : (tensor<5xi64>) -> tensor<2x5xi64>
// CHECK-NEXT:    %[[ARGB:.*]] = core.broadcast(%[[ARG]]) {dims = array<i64: 0>} : (tensor<2xi64>) -> tensor<2x5xi64>
// CHECK-NEXT:    %[[HIT:.*]] = core.compare eq(%[[POS]], %[[ARGB]]) : (tensor<2x5xi64>, tensor<2x5xi64>) -> tensor<2x5xi1>
// CHECK:         %y = core.select(%[[HIT]], %{{.*}}, %{{.*}}) : (tensor<2x5xi1>, tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @hardmax(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %y = onnx.Hardmax(%x) {axis = 1 : i64} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  func.return %y : tensor<2x5xf32>
}

// Dropout (inference) is the identity; its mask is all true.
// CHECK-LABEL: func.func @dropout(
// CHECK:         %[[T:.*]] = core.constant() {value = dense<true> : tensor<i1>}
// CHECK-NEXT:    %m = core.broadcast(%[[T]]) {dims = array<i64>} : (tensor<i1>) -> tensor<2x5xi1>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %x, %m
func.func @dropout(%x: tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xi1>) {
  %y, %m = onnx.Dropout(%x) : (tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xi1>)
  func.return %y, %m : tensor<2x5xf32>, tensor<2x5xi1>
}
