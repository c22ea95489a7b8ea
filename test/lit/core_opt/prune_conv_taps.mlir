// core-prune-conv-taps: a convolution stops multiplying weights by its padding.
// RUN: opt %s -p core-prune-conv-taps,dce | filecheck %s
// RUN: opt %s -p 'core-prune-conv-taps{min-saving=0},dce' | filecheck %s --check-prefix=SPLIT

// Dilation 4 on a 3x3 map: the corner and edge taps only ever read padding, so
// the kernel shrinks to its centre tap and the padding to nothing.
// CHECK-LABEL: func.func @trim_to_centre
// CHECK-NEXT:    %[[W:.*]] = core.constant() {value = dense<5.000000e+00> : tensor<1x1x1x1xf32>}
// CHECK-NEXT:    %y = core.conv(%x, %[[W]]) {strides = array<i64: 1, 1>, dilations = array<i64: 4, 4>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, groups = 1 : i64, layout = "NCHW", acc = f32} : (tensor<1x1x3x3xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x3x3xf32>
// CHECK-NEXT:    func.return %y
func.func @trim_to_centre(%x: tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32> {
  %w = core.constant() {value = dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]]> : tensor<1x1x3x3xf32>} : () -> tensor<1x1x3x3xf32>
  %y = core.conv(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 4, 4>, pad_low = array<i64: 4, 4>, pad_high = array<i64: 4, 4>, groups = 1 : i64, layout = "NCHW", acc = f32} : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  func.return %y : tensor<1x1x3x3xf32>
}

// Only one axis trims: the rows keep their three taps, the columns keep one.
// CHECK-LABEL: func.func @trim_one_axis
// CHECK:         core.conv(%x, %{{.*}}) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 4>, pad_low = array<i64: 1, 0>, pad_high = array<i64: 1, 0>, {{.*}}} : (tensor<1x1x6x3xf32>, tensor<1x1x3x1xf32>) -> tensor<1x1x6x3xf32>
func.func @trim_one_axis(%x: tensor<1x1x6x3xf32>) -> tensor<1x1x6x3xf32> {
  %w = core.constant() {value = dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]]> : tensor<1x1x3x3xf32>} : () -> tensor<1x1x3x3xf32>
  %y = core.conv(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 4>, pad_low = array<i64: 1, 4>, pad_high = array<i64: 1, 4>, groups = 1 : i64, layout = "NCHW", acc = f32} : (tensor<1x1x6x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x6x3xf32>
  func.return %y : tensor<1x1x6x3xf32>
}

// Dilation 2 on a 3x3 map: every tap reads the input somewhere, but only 25 of
// the 81 tap-by-output pairs do. Below the default saving nothing changes; with
// no minimum, each tap becomes a 1x1 convolution over the window it reads,
// padded back to 3x3 and summed, the full-size centre tap first.
// CHECK-LABEL: func.func @split_taps
// CHECK:         core.conv(%x, %w) {{.*}}dilations = array<i64: 2, 2>, pad_low = array<i64: 2, 2>
// SPLIT-LABEL: func.func @split_taps
// SPLIT:         %[[ZERO:.*]] = core.constant() {value = dense<0.000000e+00> : tensor<f32>}
// SPLIT-NEXT:    %[[WC:.*]] = core.constant() {value = dense<{{\[\[\[\[}}5.000000e+00]], {{\[\[}}5.500000e+00]]]]>
// SPLIT-NEXT:    %[[C:.*]] = core.conv(%x, %[[WC]]) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, {{.*}}} : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x3x3xf32>
// SPLIT-NEXT:    %[[TOP:.*]] = core.slice(%x) {start = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x3xf32>) -> tensor<1x2x1x3xf32>
// SPLIT-NEXT:    %[[WT:.*]] = core.constant() {value = dense<{{\[\[\[\[}}2.000000e+00]], {{\[\[}}2.500000e+00]]]]>
// SPLIT-NEXT:    %[[T:.*]] = core.conv(%[[TOP]], %[[WT]]) {{.*}} -> tensor<1x1x1x3xf32>
// SPLIT-NEXT:    %[[TP:.*]] = core.pad constant(%[[T]], %[[ZERO]]) {pad_low = array<i64: 0, 0, 2, 0>, pad_high = array<i64: 0, 0, 0, 0>}
// SPLIT-NEXT:    %{{.*}} = core.binary add(%[[C]], %[[TP]])
// SPLIT-COUNT-6: core.pad constant
// SPLIT:         %[[CORNER:.*]] = core.slice(%x) {start = array<i64: 0, 0, 2, 2>, {{.*}}} : (tensor<1x2x3x3xf32>) -> tensor<1x2x1x1xf32>
// SPLIT-NEXT:    %[[WK:.*]] = core.constant() {value = dense<{{\[\[\[\[}}9.000000e+00]], {{\[\[}}9.500000e+00]]]]>
// SPLIT-NEXT:    %[[K:.*]] = core.conv(%[[CORNER]], %[[WK]])
// SPLIT-NEXT:    %[[KP:.*]] = core.pad constant(%[[K]], %[[ZERO]]) {pad_low = array<i64: 0, 0, 0, 0>, pad_high = array<i64: 0, 0, 2, 2>}
// SPLIT-NEXT:    %y = core.binary add(%{{.*}}, %[[KP]])
// SPLIT-NEXT:    func.return %y
func.func @split_taps(%x: tensor<1x2x3x3xf32>) -> tensor<1x1x3x3xf32> {
  %w = core.constant() {value = dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[1.5, 2.5, 3.5], [4.5, 5.5, 6.5], [7.5, 8.5, 9.5]]]]> : tensor<1x2x3x3xf32>} : () -> tensor<1x2x3x3xf32>
  %y = core.conv(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 2, 2>, pad_low = array<i64: 2, 2>, pad_high = array<i64: 2, 2>, groups = 1 : i64, layout = "NCHW", acc = f32} : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x1x3x3xf32>
  func.return %y : tensor<1x1x3x3xf32>
}

// A depthwise convolution (one input channel per group) is a window sum, not a
// GEMM: it is never split, whatever the padding costs.
// SPLIT-LABEL: func.func @depthwise_not_split
// SPLIT-NOT:     core.slice
// SPLIT:         core.conv(%x, %w) {{.*}}groups = 2 : i64
func.func @depthwise_not_split(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = core.constant() {value = dense<1.0> : tensor<2x1x3x3xf32>} : () -> tensor<2x1x3x3xf32>
  %y = core.conv(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 2, 2>, pad_low = array<i64: 2, 2>, pad_high = array<i64: 2, 2>, groups = 2 : i64, layout = "NCHW", acc = f32} : (tensor<1x2x3x3xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}

// Run-time spatial sizes, or weights that are not constants: nothing is known, nothing changes.
// CHECK-LABEL: func.func @dynamic_map
// CHECK-NEXT:    core.constant
// CHECK-NEXT:    %y = core.conv(%x, %w) {{.*}}dilations = array<i64: 4, 4>, pad_low = array<i64: 4, 4>
// CHECK-LABEL: func.func @weights_at_run_time
// CHECK-NEXT:    %y = core.conv(%x, %w) {{.*}}dilations = array<i64: 4, 4>, pad_low = array<i64: 4, 4>
func.func @dynamic_map(%x: tensor<1x1x?x3xf32>) -> tensor<1x1x?x3xf32> {
  %w = core.constant() {value = dense<1.0> : tensor<1x1x3x3xf32>} : () -> tensor<1x1x3x3xf32>
  %y = core.conv(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 4, 4>, pad_low = array<i64: 4, 4>, pad_high = array<i64: 4, 4>, groups = 1 : i64, layout = "NCHW", acc = f32} : (tensor<1x1x?x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x?x3xf32>
  func.return %y : tensor<1x1x?x3xf32>
}
func.func @weights_at_run_time(%x: tensor<1x1x3x3xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32> {
  %y = core.conv(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 4, 4>, pad_low = array<i64: 4, 4>, pad_high = array<i64: 4, 4>, groups = 1 : i64, layout = "NCHW", acc = f32} : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  func.return %y : tensor<1x1x3x3xf32>
}
