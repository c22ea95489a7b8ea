// GroupNormalization and LRN over `?` channels, ConvTranspose's output_shape over
// `?` input dims, and an average pool whose SAME pads depend on a `?` size: the
// sizes they need are computed at run time, checked where a length could break
// the kernels.
// RUN: opt %s -p convert-onnx-to-core | filecheck %s

// [N, C, …] becomes [N, 2, C * … / 2] at run time, once 2 divides C; scale and
// bias must have C entries.
// CHECK-LABEL: func.func @group_norm_dynamic(
// CHECK:         %[[C:.*]] = core.gather(%[[SHAPE:.*]], %{{.*}}) {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
// CHECK-NEXT:    %[[G:.*]] = core.constant() {value = dense<2> : tensor<1xi64>}
// CHECK-NEXT:    %[[REM:.*]] = core.binary rem(%[[C]], %[[G]])
// CHECK:         %[[DIVIDES:.*]] = core.compare eq(%[[REM]], %{{.*}})
// CHECK:         %[[REST:.*]] = core.reduce prod(%{{.*}}) {axes = array<i64: 0>} : (tensor<2xi64>) -> tensor<i64>
// CHECK:         %[[SIZE:.*]] = core.check(%{{.*}}, %[[DIVIDES]]) {message = "channels do not split into groups"}
// CHECK:         %[[SIZES:.*]] = core.concat(%{{.*}}, %[[G]], %[[SIZE]]) {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
// CHECK-NEXT:    %[[GROUPED:.*]] = core.reshape(%x, %[[SIZES]]) : (tensor<?x?x?xf32>, tensor<3xi64>) -> tensor<?x2x?xf32>
// CHECK-NEXT:    core.reduce sum(%[[GROUPED]]) {axes = array<i64: 2>}
// CHECK:         core.reshape(%{{.*}}, %{{.*}}) : (tensor<?x2x?xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
// CHECK:         %[[S:.*]] = core.check(%s, %{{.*}}) {message = "GroupNormalization's per-channel parameter does not have one entry per channel"}
// CHECK:         %[[B:.*]] = core.check(%b, %{{.*}}) {message = "GroupNormalization's per-channel parameter does not have one entry per channel"}
// CHECK:         core.broadcast(%[[S]], %{{.*}}) {dims = array<i64: 1>} : (tensor<?xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
// CHECK:         core.broadcast(%[[B]], %{{.*}}) {dims = array<i64: 1>} : (tensor<?xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
// CHECK-NOT:     onnx.
func.func @group_norm_dynamic(%x: tensor<?x?x?xf32>, %s: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?x?x?xf32> {
  %y = onnx.GroupNormalization(%x, %s, %b) {num_groups = 2 : i64} : (tensor<?x?x?xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?x?x?xf32>
  func.return %y : tensor<?x?x?xf32>
}

// The channel window is a sum pool over a [N, 1, C, …] view taken at run time.
// CHECK-LABEL: func.func @lrn_dynamic(
// CHECK:         %[[VIEW:.*]] = core.reshape(%{{.*}}, %{{.*}}) : (tensor<?x?x?xf32>, tensor<4xi64>) -> tensor<?x1x?x?xf32>
// CHECK-NEXT:    %[[SUM:.*]] = core.pool sum(%[[VIEW]]) {window = array<i64: 3, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 0>, pad_high = array<i64: 1, 0>} : (tensor<?x1x?x?xf32>) -> tensor<?x1x?x?xf32>
// CHECK:         core.reshape(%[[SUM]], %{{.*}}) : (tensor<?x1x?x?xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
// CHECK-NOT:     onnx.
func.func @lrn_dynamic(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %y = onnx.LRN(%x) {size = 3 : i64} : (tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  func.return %y : tensor<?x?x?xf32>
}

// Unpadded first, then cropped to output_shape: the total (full - target) splits
// with the odd one low, as ONNX does without SAME_UPPER.
// CHECK-LABEL: func.func @conv_transpose_output_shape(
// CHECK-NEXT:    %[[FULL:.*]] = core.conv_transpose(%x, %w) {strides = array<i64: 3, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, groups = 1 : i64, acc = f32} : (tensor<1x2x?x?xf32>, tensor<2x3x3x3xf32>) -> tensor<1x3x?x?xf32>
// CHECK-NEXT:    %[[TARGET:.*]] = core.constant() {value = dense<[10, 8]> : tensor<2xi64>}
// CHECK:         %[[TOTAL:.*]] = core.binary sub(%{{.*}}, %[[TARGET]])
// CHECK:         %[[PADS:.*]] = core.concat(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {axis = 0 : i64} : (tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<8xi64>
// CHECK:         %y = core.pad constant(%[[FULL]], %{{.*}}, %[[PADS]]) : (tensor<1x3x?x?xf32>, tensor<f32>, tensor<8xi64>) -> tensor<1x3x10x8xf32>
func.func @conv_transpose_output_shape(%x: tensor<1x2x?x?xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<1x3x10x8xf32> {
  %y = onnx.ConvTranspose(%x, %w) {output_shape = array<i64: 10, 8>, strides = array<i64: 3, 2>} : (tensor<1x2x?x?xf32>, tensor<2x3x3x3xf32>) -> tensor<1x3x10x8xf32>
  func.return %y : tensor<1x3x10x8xf32>
}

// The input and a mask of ones get the same run-time pads (zeros); a sum pool of
// the mask counts each window's input elements.
// CHECK-LABEL: func.func @avg_pool_same_stride(
// CHECK:         %[[PADS:.*]] = core.concat(%[[Z:.*]], %[[LOW:.*]], %[[Z]], %[[HIGH:.*]]) {axis = 0 : i64}
// CHECK:         %[[XP:.*]] = core.pad constant(%x, %{{.*}}, %[[PADS]]) : (tensor<1x2x?x?xf32>, tensor<f32>, tensor<8xi64>) -> tensor<1x2x?x?xf32>
// CHECK-NEXT:    %[[SUM:.*]] = core.pool sum(%[[XP]]) {window = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>}
// CHECK:         %[[ONES:.*]] = core.broadcast(%{{.*}}, %{{.*}}) {dims = array<i64>} : (tensor<f32>, tensor<4xi64>) -> tensor<1x1x?x?xf32>
// CHECK:         %[[MPADS:.*]] = core.concat(%[[Z2:.*]], %[[LOW]], %[[Z2]], %[[HIGH]]) {axis = 0 : i64}
// CHECK:         %[[MASK:.*]] = core.pad constant(%[[ONES]], %{{.*}}, %[[MPADS]]) : (tensor<1x1x?x?xf32>, tensor<f32>, tensor<8xi64>) -> tensor<1x1x?x?xf32>
// CHECK-NEXT:    %[[COUNTS:.*]] = core.pool sum(%[[MASK]])
// CHECK:         %[[SPREAD:.*]] = core.broadcast(%[[COUNTS]], %{{.*}}) {dims = array<i64: 0, 1, 2, 3>}
// CHECK-NEXT:    %y = core.binary div(%[[SUM]], %[[SPREAD]])
func.func @avg_pool_same_stride(%x: tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32> {
  %y = onnx.AveragePool(%x) {auto_pad = "SAME_UPPER", kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32>
  func.return %y : tensor<1x2x?x?xf32>
}
