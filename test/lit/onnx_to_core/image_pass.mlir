// The image handler of convert-onnx-to-core (Resize) on hand-written onnx-dialect
// IR. Resize is separable: per resized axis, the source coordinate of every
// output position is computed from an iota (the coordinate transformation
// mode), then the taps are gathered along that axis; linear modes weight the
// taps and sum them away. Constant scales/sizes give static tables (folded by
// core-fold-constants later); run-time sizes give `?` lengths.
// RUN: opt %s -p convert-onnx-to-core | filecheck %s
// The second run folds the tables into constants, to check their values.
// RUN: opt %s -p convert-onnx-to-core,core-fold-constants,dce | filecheck %s --check-prefix=FOLD

// Nearest, constant scales [1, 1, 2, 2], half_pixel, round_prefer_floor (the
// defaults): unit-scale axes are left alone; H (2 -> 4) then W (3 -> 6) are
// gathers of clamped indices. x = (i + 0.5) / scale - 0.5; the pick adds 1 to
// the tap below x when the fraction is above 0.5.
// Folded: H reads rows [0, 0, 1, 1], W columns [0, 0, 1, 1, 2, 2].
// FOLD-LABEL: func.func @nearest_scales(
// FOLD-NEXT:    %[[IH:.*]] = core.constant() {value = dense<[0, 0, 1, 1]> : tensor<4xi64>}
// FOLD-NEXT:    %[[H:.*]] = core.gather(%x, %[[IH]]) {axis = 2 : i64} : (tensor<1x1x2x3xf32>, tensor<4xi64>) -> tensor<1x1x4x3xf32>
// FOLD-NEXT:    %[[IW:.*]] = core.constant() {value = dense<[0, 0, 1, 1, 2, 2]> : tensor<6xi64>}
// FOLD-NEXT:    %y = core.gather(%[[H]], %[[IW]]) {axis = 3 : i64} : (tensor<1x1x4x3xf32>, tensor<6xi64>) -> tensor<1x1x4x6xf32>
// FOLD-NEXT:    func.return %y
// CHECK-LABEL: func.func @nearest_scales(
// CHECK:         core.gather(%s, %{{.*}}) {axis = 0 : i64}
// CHECK:         core.gather(%s, %{{.*}}) {axis = 0 : i64}
// CHECK:         %[[SH:.*]] = core.gather(%s, %{{.*}}) {axis = 0 : i64} : (tensor<4xf32>, tensor<i64>) -> tensor<f32>
// CHECK-NEXT:    %[[SHF:.*]] = core.cast(%[[SH]]) : (tensor<f32>) -> tensor<f64>
// CHECK:         %[[I:.*]] = core.iota() {dim = 0 : i64} : () -> tensor<4xi64>
// CHECK-NEXT:    %[[IF:.*]] = core.cast(%[[I]]) : (tensor<4xi64>) -> tensor<4xf64>
// CHECK-NEXT:    %[[HALF:.*]] = core.constant() {value = dense<5.000000e-01> : tensor<f64>}
// CHECK-NEXT:    %[[HALFB:.*]] = core.broadcast(%[[HALF]])
// CHECK-NEXT:    %[[P:.*]] = core.binary add(%[[IF]], %[[HALFB]]) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
// CHECK-NEXT:    %[[SB:.*]] = core.broadcast(%[[SHF]]) {dims = array<i64>} : (tensor<f64>) -> tensor<4xf64>
// CHECK-NEXT:    %[[Q:.*]] = core.binary div(%[[P]], %[[SB]])
// CHECK:         %[[X:.*]] = core.binary sub(%[[Q]], %{{.*}}) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
// CHECK:         %[[FRAC:.*]] = core.select(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4xi1>, tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
// CHECK-NEXT:    %[[HALF2:.*]] = core.constant() {value = dense<5.000000e-01> : tensor<f64>}
// CHECK-NEXT:    %[[HALF2B:.*]] = core.broadcast(%[[HALF2]])
// CHECK-NEXT:    %[[ABOVE:.*]] = core.compare gt(%[[FRAC]], %[[HALF2B]]) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xi1>
// CHECK:         %[[LOW:.*]] = core.binary max(%{{.*}}, %{{.*}}) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
// CHECK:         %[[IH:.*]] = core.binary min(%[[LOW]], %{{.*}}) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
// CHECK-NEXT:    %[[H:.*]] = core.gather(%x, %[[IH]]) {axis = 2 : i64} : (tensor<1x1x2x3xf32>, tensor<4xi64>) -> tensor<1x1x4x3xf32>
// CHECK-NEXT:    %[[J:.*]] = core.iota() {dim = 0 : i64} : () -> tensor<6xi64>
// CHECK:         %[[IW:.*]] = core.binary min(%{{.*}}, %{{.*}}) : (tensor<6xi64>, tensor<6xi64>) -> tensor<6xi64>
// CHECK-NEXT:    %y = core.gather(%[[H]], %[[IW]]) {axis = 3 : i64} : (tensor<1x1x4x3xf32>, tensor<6xi64>) -> tensor<1x1x4x6xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @nearest_scales(%x: tensor<1x1x2x3xf32>) -> tensor<1x1x4x6xf32> {
  %s = onnx.Constant() {value = dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %y = onnx.Resize(%x, none, %s) {mode = "nearest"} : (tensor<1x1x2x3xf32>, none, tensor<4xf32>) -> tensor<1x1x4x6xf32>
  func.return %y : tensor<1x1x4x6xf32>
}

// Linear, constant sizes on the last axis only (4 -> 3), align_corners:
// x = i * (4 - 1) / (3 - 1). Two taps per output, [3, 2] indices (first tap
// plus a column iota, clamped) and weights (1 - r, r); each tap's column of
// indices is gathered, weighted by its column of weights, and the two added.
// Folded: x = [0, 1.5, 3]; taps [[0, 0], [1, 2], [2, 3]] (the first clamped
// from -1) with weights [[0, 1], [0.5, 0.5], [0, 1]].
// FOLD-LABEL: func.func @linear_sizes(
// FOLD-NEXT:    %[[I0:.*]] = core.constant() {value = dense<[0, 1, 2]> : tensor<3xi64>}
// FOLD-NEXT:    %[[G0:.*]] = core.gather(%x, %[[I0]]) {axis = 3 : i64} : (tensor<1x1x2x4xf32>, tensor<3xi64>) -> tensor<1x1x2x3xf32>
// FOLD-NEXT:    %[[W0:.*]] = core.constant() {value = dense<[0.000000e+00, 5.000000e-01, 0.000000e+00]> : tensor<3xf32>}
// FOLD-NEXT:    %[[WB0:.*]] = core.broadcast(%[[W0]]) {dims = array<i64: 3>} : (tensor<3xf32>) -> tensor<1x1x2x3xf32>
// FOLD-NEXT:    %[[GW0:.*]] = core.binary mul(%[[G0]], %[[WB0]])
// FOLD-NEXT:    %[[I1:.*]] = core.constant() {value = dense<[0, 2, 3]> : tensor<3xi64>}
// FOLD-NEXT:    %[[G1:.*]] = core.gather(%x, %[[I1]]) {axis = 3 : i64}
// FOLD-NEXT:    %[[W1:.*]] = core.constant() {value = dense<[1.000000e+00, 5.000000e-01, 1.000000e+00]> : tensor<3xf32>}
// FOLD-NEXT:    %[[WB1:.*]] = core.broadcast(%[[W1]]) {dims = array<i64: 3>}
// FOLD-NEXT:    %[[GW1:.*]] = core.binary mul(%[[G1]], %[[WB1]])
// FOLD-NEXT:    %y = core.binary add(%[[GW0]], %[[GW1]]) : (tensor<1x1x2x3xf32>, tensor<1x1x2x3xf32>) -> tensor<1x1x2x3xf32>
// FOLD-NEXT:    func.return %y
// CHECK-LABEL: func.func @linear_sizes(
// CHECK:         %[[I:.*]] = core.iota() {dim = 0 : i64} : () -> tensor<3xi64>
// CHECK:         %[[TAP:.*]] = core.iota() {dim = 1 : i64} : () -> tensor<3x2xi64>
// CHECK:         %[[FIRST:.*]] = core.broadcast(%{{.*}}) {dims = array<i64: 0>} : (tensor<3xi64>) -> tensor<3x2xi64>
// CHECK-NEXT:    %[[IDX:.*]] = core.binary add(%[[FIRST]], %[[TAP]]) : (tensor<3x2xi64>, tensor<3x2xi64>) -> tensor<3x2xi64>
// CHECK:         %[[IS0:.*]] = core.compare eq(%[[TAP]], %{{.*}}) : (tensor<3x2xi64>, tensor<3x2xi64>) -> tensor<3x2xi1>
// CHECK-NEXT:    %[[OMR:.*]] = core.broadcast(%{{.*}}) {dims = array<i64: 0>} : (tensor<3xf64>) -> tensor<3x2xf64>
// CHECK-NEXT:    %[[W:.*]] = core.select(%[[IS0]], %[[OMR]], %{{.*}}) : (tensor<3x2xi1>, tensor<3x2xf64>, tensor<3x2xf64>) -> tensor<3x2xf64>
// CHECK:         %[[LOW:.*]] = core.binary max(%[[IDX]], %{{.*}}) : (tensor<3x2xi64>, tensor<3x2xi64>) -> tensor<3x2xi64>
// CHECK:         %[[CL:.*]] = core.binary min(%[[LOW]], %{{.*}}) : (tensor<3x2xi64>, tensor<3x2xi64>) -> tensor<3x2xi64>
// CHECK-NEXT:    %[[WF:.*]] = core.cast(%[[W]]) : (tensor<3x2xf64>) -> tensor<3x2xf32>
// CHECK-NEXT:    %[[T0:.*]] = core.constant() {value = dense<0> : tensor<i64>}
// CHECK-NEXT:    %[[I0:.*]] = core.gather(%[[CL]], %[[T0]]) {axis = 1 : i64} : (tensor<3x2xi64>, tensor<i64>) -> tensor<3xi64>
// CHECK-NEXT:    %[[G0:.*]] = core.gather(%x, %[[I0]]) {axis = 3 : i64} : (tensor<1x1x2x4xf32>, tensor<3xi64>) -> tensor<1x1x2x3xf32>
// CHECK-NEXT:    %[[W0:.*]] = core.gather(%[[WF]], %[[T0]]) {axis = 1 : i64} : (tensor<3x2xf32>, tensor<i64>) -> tensor<3xf32>
// CHECK-NEXT:    %[[WB0:.*]] = core.broadcast(%[[W0]]) {dims = array<i64: 3>} : (tensor<3xf32>) -> tensor<1x1x2x3xf32>
// CHECK-NEXT:    %[[GW0:.*]] = core.binary mul(%[[G0]], %[[WB0]])
// CHECK-NEXT:    %[[T1:.*]] = core.constant() {value = dense<1> : tensor<i64>}
// CHECK-NEXT:    %[[I1:.*]] = core.gather(%[[CL]], %[[T1]]) {axis = 1 : i64}
// CHECK-NEXT:    %[[G1:.*]] = core.gather(%x, %[[I1]]) {axis = 3 : i64}
// CHECK-NEXT:    %[[W1:.*]] = core.gather(%[[WF]], %[[T1]]) {axis = 1 : i64}
// CHECK-NEXT:    %[[WB1:.*]] = core.broadcast(%[[W1]]) {dims = array<i64: 3>}
// CHECK-NEXT:    %[[GW1:.*]] = core.binary mul(%[[G1]], %[[WB1]])
// CHECK-NEXT:    %y = core.binary add(%[[GW0]], %[[GW1]]) : (tensor<1x1x2x3xf32>, tensor<1x1x2x3xf32>) -> tensor<1x1x2x3xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @linear_sizes(%x: tensor<1x1x2x4xf32>) -> tensor<1x1x2x3xf32> {
  %s = onnx.Constant() {value = dense<[3]> : tensor<1xi64>} : () -> tensor<1xi64>
  %y = onnx.Resize(%x, none, none, %s) {mode = "linear", axes = array<i64: 3>, coordinate_transformation_mode = "align_corners"} : (tensor<1x1x2x4xf32>, none, none, tensor<1xi64>) -> tensor<1x1x2x3xf32>
  func.return %y : tensor<1x1x2x3xf32>
}

// Run-time sizes: every axis is resized to a length read from %sz at run time;
// the iotas take it as an operand and every length becomes `?`.
// CHECK-LABEL: func.func @nearest_runtime_sizes(
// CHECK:         %[[N0:.*]] = core.gather(%sz, %{{.*}}) {axis = 0 : i64} : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
// CHECK:         %[[N1:.*]] = core.gather(%sz, %{{.*}}) {axis = 0 : i64} : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
// CHECK:         %[[N2:.*]] = core.gather(%sz, %{{.*}}) {axis = 0 : i64} : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
// CHECK:         %[[N3:.*]] = core.gather(%sz, %{{.*}}) {axis = 0 : i64} : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
// CHECK:         %[[I0:.*]] = core.iota(%[[N0]]) {dim = 0 : i64} : (tensor<i64>) -> tensor<?xi64>
// CHECK:         %[[Y0:.*]] = core.gather(%x, %{{.*}}) {axis = 0 : i64} : (tensor<1x1x2x3xf32>, tensor<?xi64>) -> tensor<?x1x2x3xf32>
// CHECK-NEXT:    %[[I1:.*]] = core.iota(%[[N1]]) {dim = 0 : i64} : (tensor<i64>) -> tensor<?xi64>
// CHECK:         %[[Y1:.*]] = core.gather(%[[Y0]], %{{.*}}) {axis = 1 : i64} : (tensor<?x1x2x3xf32>, tensor<?xi64>) -> tensor<?x?x2x3xf32>
// CHECK-NEXT:    %[[I2:.*]] = core.iota(%[[N2]]) {dim = 0 : i64} : (tensor<i64>) -> tensor<?xi64>
// CHECK:         %[[Y2:.*]] = core.gather(%[[Y1]], %{{.*}}) {axis = 2 : i64} : (tensor<?x?x2x3xf32>, tensor<?xi64>) -> tensor<?x?x?x3xf32>
// CHECK-NEXT:    %[[I3:.*]] = core.iota(%[[N3]]) {dim = 0 : i64} : (tensor<i64>) -> tensor<?xi64>
// CHECK:         %y = core.gather(%[[Y2]], %{{.*}}) {axis = 3 : i64} : (tensor<?x?x?x3xf32>, tensor<?xi64>) -> tensor<?x?x?x?xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @nearest_runtime_sizes(%x: tensor<1x1x2x3xf32>, %sz: tensor<4xi64>) -> tensor<?x?x?x?xf32> {
  %y = onnx.Resize(%x, none, none, %sz) {mode = "nearest", nearest_mode = "floor", coordinate_transformation_mode = "asymmetric"} : (tensor<1x1x2x3xf32>, none, none, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  func.return %y : tensor<?x?x?x?xf32>
}
