// Conv and pooling over `?` spatial dims (a TorchScript export loses them after
// a channel shuffle's Reshape): pads and windows stay numbers, the result's
// spatial dims are `?` and come from the input at run time. Where a pad would
// depend on the size (auto_pad SAME with a stride, ceil_mode whose last window
// may start in the padding) it is computed at run time: a core.pad with a pads
// operand, then a conv or pool without pads.
// RUN: opt %s -p convert-onnx-to-core | filecheck %s

// CHECK-LABEL: func.func @conv_dynamic_spatial(
// CHECK-NEXT:    %y = core.conv(%x, %w) {strides = array<i64: 2, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 0>, pad_high = array<i64: 1, 2>, groups = 2 : i64, layout = "NCHW", acc = f32} : (tensor<?x4x?x?xf32>, tensor<6x2x3x3xf32>) -> tensor<?x6x?x?xf32>
// CHECK-NEXT:    func.return %y
func.func @conv_dynamic_spatial(%x: tensor<?x4x?x?xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<?x6x?x?xf32> {
  %y = onnx.Conv(%x, %w) {pads = array<i64: 1, 0, 1, 2>, strides = array<i64: 2, 1>, group = 2 : i64} : (tensor<?x4x?x?xf32>, tensor<6x2x3x3xf32>) -> tensor<?x6x?x?xf32>
  func.return %y : tensor<?x6x?x?xf32>
}

// With stride 1, auto_pad SAME pads (kernel - 1) * dilation in all, whatever the size.
// CHECK-LABEL: func.func @conv_same_dynamic(
// CHECK-NEXT:    %y = core.conv(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 2, 1>, pad_low = array<i64: 2, 1>, pad_high = array<i64: 2, 1>, groups = 1 : i64, layout = "NCHW", acc = f32} : (tensor<1x3x?x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x?x8xf32>
func.func @conv_same_dynamic(%x: tensor<1x3x?x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x?x8xf32> {
  %y = onnx.Conv(%x, %w) {auto_pad = "SAME_UPPER", dilations = array<i64: 2, 1>} : (tensor<1x3x?x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x?x8xf32>
  func.return %y : tensor<1x4x?x8xf32>
}

// auto_pad SAME's stride-1 total pad for ConvTranspose is (kernel - 1) + 1 - stride.
// CHECK-LABEL: func.func @conv_transpose_dynamic(
// CHECK-NEXT:    %y = core.conv_transpose(%x, %w) {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 1, 1>, groups = 1 : i64, acc = f32} : (tensor<1x2x?x?xf32>, tensor<2x3x3x3xf32>) -> tensor<1x3x?x?xf32>
func.func @conv_transpose_dynamic(%x: tensor<1x2x?x?xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<1x3x?x?xf32> {
  %y = onnx.ConvTranspose(%x, %w) {auto_pad = "SAME_UPPER", strides = array<i64: 2, 2>} : (tensor<1x2x?x?xf32>, tensor<2x3x3x3xf32>) -> tensor<1x3x?x?xf32>
  func.return %y : tensor<1x3x?x?xf32>
}

// ceil_mode is stride - 1 more high padding when the last window cannot start in it.
// CHECK-LABEL: func.func @max_pool_ceil_dynamic(
// CHECK-NEXT:    %y = core.pool max(%x) {window = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 1, 1>} : (tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32>
func.func @max_pool_ceil_dynamic(%x: tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32> {
  %y = onnx.MaxPool(%x) {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, ceil_mode = 1 : i64} : (tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32>
  func.return %y : tensor<1x2x?x?xf32>
}

// Windows at the border count fewer elements: the counts are a sum pool of ones
// shaped [1, 1, H, W] at run time.
// CHECK-LABEL: func.func @avg_pool_dynamic(
// CHECK-NEXT:    %[[SUM:.*]] = core.pool sum(%x) {window = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : (tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32>
// CHECK:         %[[ONE:.*]] = core.constant() {value = dense<1.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[ONES:.*]] = core.broadcast(%[[ONE]], %{{.*}}) {dims = array<i64>} : (tensor<f32>, tensor<4xi64>) -> tensor<1x1x?x?xf32>
// CHECK-NEXT:    %[[COUNTS:.*]] = core.pool sum(%[[ONES]]) {window = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : (tensor<1x1x?x?xf32>) -> tensor<1x1x?x?xf32>
// CHECK:         %[[SPREAD:.*]] = core.broadcast(%[[COUNTS]], %{{.*}}) {dims = array<i64: 0, 1, 2, 3>} : (tensor<1x1x?x?xf32>, tensor<4xi64>) -> tensor<1x2x?x?xf32>
// CHECK-NEXT:    %y = core.binary div(%[[SUM]], %[[SPREAD]])
func.func @avg_pool_dynamic(%x: tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32> {
  %y = onnx.AveragePool(%x) {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32>
  func.return %y : tensor<1x2x?x?xf32>
}

// A window the size of a `?` input is no core.pool: a reduction, reshaped back,
// divided by the number of positions read at run time.
// CHECK-LABEL: func.func @global_avg_pool_dynamic_spatial(
// CHECK-NEXT:    %[[SUM:.*]] = core.reduce sum(%x) {axes = array<i64: 2, 3>} : (tensor<?x3x?x?xf32>) -> tensor<?x3xf32>
// CHECK:         %[[KEPT:.*]] = core.reshape(%[[SUM]], %{{.*}}) : (tensor<?x3xf32>, tensor<4xi64>) -> tensor<?x3x1x1xf32>
// CHECK:         %[[HW:.*]] = core.select(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4xi1>, tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
// CHECK-NEXT:    %[[N:.*]] = core.reduce prod(%[[HW]]) {axes = array<i64: 0>} : (tensor<4xi64>) -> tensor<i64>
// CHECK-NEXT:    %[[F:.*]] = core.cast(%[[N]]) : (tensor<i64>) -> tensor<f32>
// CHECK:         %y = core.binary div(%[[KEPT]], %{{.*}}) : (tensor<?x3x1x1xf32>, tensor<?x3x1x1xf32>) -> tensor<?x3x1x1xf32>
func.func @global_avg_pool_dynamic_spatial(%x: tensor<?x3x?x?xf32>) -> tensor<?x3x1x1xf32> {
  %y = onnx.GlobalAveragePool(%x) : (tensor<?x3x?x?xf32>) -> tensor<?x3x1x1xf32>
  func.return %y : tensor<?x3x1x1xf32>
}

// SAME's total pad is max(0, (ceil(d / s) - 1) * s + extent - d), split low/high;
// the static W (8) is padded by 1 to 9.
// CHECK-LABEL: func.func @conv_same_stride_dynamic(
// CHECK:         %[[D:.*]] = core.select(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<2xi1>, tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
// CHECK:         %[[REACH:.*]] = core.binary sub(%{{.*}}, %[[D]])
// CHECK:         %[[TOTAL:.*]] = core.binary max(%[[REACH]], %{{.*}})
// CHECK:         %[[PADS:.*]] = core.concat(%[[Z:.*]], %[[LOW:.*]], %[[Z]], %[[HIGH:.*]]) {axis = 0 : i64} : (tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<8xi64>
// CHECK:         %[[PADDED:.*]] = core.pad constant(%x, %{{.*}}, %[[PADS]]) : (tensor<1x3x?x8xf32>, tensor<f32>, tensor<8xi64>) -> tensor<1x3x?x9xf32>
// CHECK-NEXT:    %y = core.conv(%[[PADDED]], %w) {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, groups = 1 : i64, layout = "NCHW", acc = f32} : (tensor<1x3x?x9xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x?x4xf32>
func.func @conv_same_stride_dynamic(%x: tensor<1x3x?x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x?x4xf32> {
  %y = onnx.Conv(%x, %w) {auto_pad = "SAME_UPPER", strides = array<i64: 2, 2>} : (tensor<1x3x?x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x?x4xf32>
  func.return %y : tensor<1x4x?x4xf32>
}

// Here the last window may start in the high pad (pad 1, stride 2, extent 2):
// the ceil_mode extension is computed at run time, and ONNX's dropped window
// is a select; the padding is -inf, the identity of max.
// CHECK-LABEL: func.func @max_pool_ceil_in_pad(
// CHECK:         %[[START:.*]] = core.compare ge(
// CHECK-NEXT:    %[[BACK:.*]] = core.binary sub(
// CHECK-NEXT:    core.select(%[[START]], %[[BACK]], %{{.*}})
// CHECK:         %[[PADS:.*]] = core.concat(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {axis = 0 : i64} : (tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<8xi64>
// CHECK-NEXT:    %[[NEG_INF:.*]] = core.constant() {value = dense_resource<{{.*}}> : tensor<f32>}
// CHECK-NEXT:    %[[PADDED:.*]] = core.pad constant(%x, %[[NEG_INF]], %[[PADS]]) : (tensor<1x2x?x?xf32>, tensor<f32>, tensor<8xi64>) -> tensor<1x2x?x?xf32>
// CHECK-NEXT:    %y = core.pool max(%[[PADDED]]) {window = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : (tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32>
func.func @max_pool_ceil_in_pad(%x: tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32> {
  %y = onnx.MaxPool(%x) {kernel_shape = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, ceil_mode = 1 : i64} : (tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32>
  func.return %y : tensor<1x2x?x?xf32>
}
