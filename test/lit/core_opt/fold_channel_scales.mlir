// core-fold-channel-scales: a squeeze-and-excite gate s[c] that scales a convolution's
// input moves onto the weights, W[o, c, ...] * s[c], and the pass over the map goes.
// RUN: opt %s -p core-fold-channel-scales,dce | filecheck %s

// The gate [1, 4, 1, 1] on an 8x8 map, into a 1x1 convolution with 2 outputs: the
// weights [2, 4, 1, 1] are scaled along dim 1, the input is read as it is.
// CHECK-LABEL: func.func @squeeze_excite
// CHECK-NEXT:    %[[S:.*]] = core.reshape(%s) : (tensor<1x4x1x1xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[SB:.*]] = core.broadcast(%[[S]]) {dims = array<i64: 1>} : (tensor<4xf32>) -> tensor<2x4x1x1xf32>
// CHECK-NEXT:    %[[W:.*]] = core.binary mul(%w, %[[SB]]) : (tensor<2x4x1x1xf32>, tensor<2x4x1x1xf32>) -> tensor<2x4x1x1xf32>
// CHECK-NEXT:    %y = core.conv(%x, %[[W]]) {{.*}} : (tensor<1x4x8x8xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x8x8xf32>
// CHECK-NEXT:    func.return %y
func.func @squeeze_excite(%x: tensor<1x4x8x8xf32>, %s: tensor<1x4x1x1xf32>, %w: tensor<2x4x1x1xf32>) -> tensor<1x2x8x8xf32> {
  %sb = core.broadcast(%s) {dims = array<i64: 0, 1, 2, 3>} : (tensor<1x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %m = core.binary mul(%x, %sb) : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %y = core.conv(%m, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, groups = 1 : i64, layout = "NCHW", acc = f32} : (tensor<1x4x8x8xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x8x8xf32>
  func.return %y : tensor<1x2x8x8xf32>
}

// A 3x3 kernel with padding, the gate on the left of the mul, a dynamic batch: the
// gate [4] is one per channel for every image, and padding scaled stays zero.
// CHECK-LABEL: func.func @padded_kernel
// CHECK:         %[[W:.*]] = core.binary mul(%w, %{{.*}}) : (tensor<3x4x3x3xf32>, tensor<3x4x3x3xf32>)
// CHECK-NEXT:    %y = core.conv(%x, %[[W]])
func.func @padded_kernel(%x: tensor<?x4x8x8xf32>, %s: tensor<4xf32>, %w: tensor<3x4x3x3xf32>) -> tensor<?x3x8x8xf32> {
  %shape = core.shape_of(%x) : (tensor<?x4x8x8xf32>) -> tensor<4xi64>
  %sb = core.broadcast(%s, %shape) {dims = array<i64: 1>} : (tensor<4xf32>, tensor<4xi64>) -> tensor<?x4x8x8xf32>
  %m = core.binary mul(%sb, %x) : (tensor<?x4x8x8xf32>, tensor<?x4x8x8xf32>) -> tensor<?x4x8x8xf32>
  %y = core.conv(%m, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, groups = 1 : i64, layout = "NCHW", acc = f32} : (tensor<?x4x8x8xf32>, tensor<3x4x3x3xf32>) -> tensor<?x3x8x8xf32>
  func.return %y : tensor<?x3x8x8xf32>
}

// What stays: a gate that differs per image ([2, 4, 1, 1]), one that varies over the
// map, a grouped convolution, a scaled map something else reads too, and weights
// larger per channel (16 x 1) than the map (2 x 2).
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-5: core.conv(%m{{[0-9]}}, %{{[a-z]+}})
// CHECK-NOT:     core.binary mul(%w
func.func @kept(%x: tensor<2x4x8x8xf32>, %s2: tensor<2x4x1x1xf32>, %full: tensor<1x4x8x8xf32>, %s: tensor<1x4x1x1xf32>, %w: tensor<2x4x1x1xf32>, %g: tensor<4x1x1x1xf32>, %x1: tensor<1x4x8x8xf32>, %small: tensor<1x4x2x2xf32>, %wide: tensor<16x4x1x1xf32>) -> (tensor<2x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x16x2x2xf32>) {
  %b2 = core.broadcast(%s2) {dims = array<i64: 0, 1, 2, 3>} : (tensor<2x4x1x1xf32>) -> tensor<2x4x8x8xf32>
  %m1 = core.binary mul(%x, %b2) : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %y1 = core.conv(%m1, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, groups = 1 : i64, layout = "NCHW", acc = f32} : (tensor<2x4x8x8xf32>, tensor<2x4x1x1xf32>) -> tensor<2x2x8x8xf32>
  %m2 = core.binary mul(%x1, %full) : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %y2 = core.conv(%m2, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, groups = 1 : i64, layout = "NCHW", acc = f32} : (tensor<1x4x8x8xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x8x8xf32>
  %b3 = core.broadcast(%s) {dims = array<i64: 0, 1, 2, 3>} : (tensor<1x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %m3 = core.binary mul(%x1, %b3) : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %y3 = core.conv(%m3, %g) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, groups = 4 : i64, layout = "NCHW", acc = f32} : (tensor<1x4x8x8xf32>, tensor<4x1x1x1xf32>) -> tensor<1x4x8x8xf32>
  %m4 = core.binary mul(%b3, %x1) : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %y4 = core.conv(%m4, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, groups = 1 : i64, layout = "NCHW", acc = f32} : (tensor<1x4x8x8xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x8x8xf32>
  %b5 = core.broadcast(%s) {dims = array<i64: 0, 1, 2, 3>} : (tensor<1x4x1x1xf32>) -> tensor<1x4x2x2xf32>
  %m5 = core.binary mul(%small, %b5) : (tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %y5 = core.conv(%m5, %wide) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, groups = 1 : i64, layout = "NCHW", acc = f32} : (tensor<1x4x2x2xf32>, tensor<16x4x1x1xf32>) -> tensor<1x16x2x2xf32>
  func.return %y1, %y2, %y3, %y4, %m4, %y5 : tensor<2x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x16x2x2xf32>
}
