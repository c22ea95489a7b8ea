// Matmul, convolutions and pooling back to ONNX: explicit pads become `pads`
// (all begins, then all ends), a negative pad_high of a transposed convolution
// is its output_padding, and sum pooling is AveragePool counting the pads
// (every window lies inside the padded input) times the window size.
// RUN: opt %s -p convert-core-to-onnx | filecheck %s

// CHECK-LABEL: func.func @nn(
// CHECK:         %c = onnx.Conv(%x, %w) {strides = array<i64: 2, 1>, dilations = array<i64: 1, 2>, pads = array<i64: 1, 2, 0, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>} : (tensor<1x2x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x4x7xf32>
// CHECK-NEXT:    %m = onnx.MaxPool(%x) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 1, 1>}
// CHECK-NEXT:    %[[A:.*]] = onnx.AveragePool(%x) {count_include_pad = 1 : i64, kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>}
// CHECK-NEXT:    %[[K:.*]] = onnx.Constant() {value = dense<9.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %s = onnx.Mul(%[[A]], %[[K]])
// CHECK-NEXT:    %t = onnx.ConvTranspose(%x, %v) {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, output_padding = array<i64: 1, 1>, group = 1 : i64}
// CHECK-NEXT:    %p = onnx.MatMul(%a, %b) : (tensor<3x2x4xf32>, tensor<3x4x5xf32>) -> tensor<3x2x5xf32>
func.func @nn(%x: tensor<1x2x8x8xf32>, %w: tensor<4x2x3x3xf32>, %v: tensor<2x3x2x2xf32>, %a: tensor<3x2x4xf32>, %b: tensor<3x4x5xf32>) -> (tensor<1x4x4x7xf32>, tensor<1x2x5x5xf32>, tensor<1x2x8x8xf32>, tensor<1x3x17x17xf32>, tensor<3x2x5xf32>) {
  %c = core.conv(%x, %w) {strides = array<i64: 2, 1>, dilations = array<i64: 1, 2>, pad_low = array<i64: 1, 2>, pad_high = array<i64: 0, 1>, groups = 1 : i64, layout = "NCHW", acc = f32} : (tensor<1x2x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x4x7xf32>
  %m = core.pool max(%x) {window = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 1, 1>} : (tensor<1x2x8x8xf32>) -> tensor<1x2x5x5xf32>
  %s = core.pool sum(%x) {window = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %t = core.conv_transpose(%x, %v) {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: -1, -1>, groups = 1 : i64, acc = f32} : (tensor<1x2x8x8xf32>, tensor<2x3x2x2xf32>) -> tensor<1x3x17x17xf32>
  %p = core.matmul(%a, %b) {acc = f32} : (tensor<3x2x4xf32>, tensor<3x4x5xf32>) -> tensor<3x2x5xf32>
  func.return %c, %m, %s, %t, %p : tensor<1x4x4x7xf32>, tensor<1x2x5x5xf32>, tensor<1x2x8x8xf32>, tensor<1x3x17x17xf32>, tensor<3x2x5xf32>
}

// A half-precision matmul accumulated in f32 computes in f32 between casts.
// CHECK-LABEL: func.func @acc(
// CHECK:         %[[A:.*]] = onnx.Cast(%a) {to = 1 : i64}
// CHECK-NEXT:    %[[B:.*]] = onnx.Cast(%b) {to = 1 : i64}
// CHECK-NEXT:    %[[P:.*]] = onnx.MatMul(%[[A]], %[[B]]) : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %p = onnx.Cast(%[[P]]) {to = 10 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf16>
func.func @acc(%a: tensor<2x4xf16>, %b: tensor<4x3xf16>) -> tensor<2x3xf16> {
  %p = core.matmul(%a, %b) {acc = f32} : (tensor<2x4xf16>, tensor<4x3xf16>) -> tensor<2x3xf16>
  func.return %p : tensor<2x3xf16>
}

// A convolution plus a per-channel bias (as core spells Conv with B) is one Conv
// again; the bias constant is the vector it came from.
// CHECK-LABEL: func.func @bias(
// CHECK:         %[[B:.*]] = onnx.Constant() {value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>}
// CHECK-NEXT:    %y = onnx.Conv(%x, %w, %[[B]]) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1 : i64, kernel_shape = array<i64: 1, 1>} : (tensor<1x3x4x4xf32>, tensor<2x3x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    func.return %y
func.func @bias(%x: tensor<1x3x4x4xf32>, %w: tensor<2x3x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %c = core.conv(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, groups = 1 : i64, layout = "NCHW", acc = f32} : (tensor<1x3x4x4xf32>, tensor<2x3x1x1xf32>) -> tensor<1x2x4x4xf32>
  %b = core.constant() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %e = core.broadcast(%b) {dims = array<i64: 1>} : (tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %y = core.binary add(%c, %e) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %y : tensor<1x2x4x4xf32>
}

// A convolution whose result has other users keeps its separate Add.
// CHECK-LABEL: func.func @shared(
// CHECK:         %c = onnx.Conv(%x, %w)
// CHECK:         %y = onnx.Add(%c, %{{.*}}) : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
func.func @shared(%x: tensor<1x3x4x4xf32>, %w: tensor<2x3x1x1xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %c = core.conv(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, groups = 1 : i64, layout = "NCHW", acc = f32} : (tensor<1x3x4x4xf32>, tensor<2x3x1x1xf32>) -> tensor<1x2x4x4xf32>
  %b = core.constant() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %e = core.broadcast(%b) {dims = array<i64: 1>} : (tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %y = core.binary add(%c, %e) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %y, %c : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// A sum pool divided by its window counts is one AveragePool: counting the pads
// when every count is the window size, not counting them when the counts are
// those of the input elements in each window.
// CHECK-LABEL: func.func @average(
// CHECK:         %[[A:.*]] = onnx.AveragePool(%x) {count_include_pad = 1 : i64, kernel_shape = array<i64: 3, 3>
// CHECK-NEXT:    %[[B:.*]] = onnx.AveragePool(%x) {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NOT:     onnx.Div
// CHECK-NEXT:    func.return %[[A]], %[[B]]
func.func @average(%x: tensor<1x2x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  %s = core.pool sum(%x) {window = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %nine = core.constant() {value = dense<9.0> : tensor<f32>} : () -> tensor<f32>
  %n = core.broadcast(%nine) {dims = array<i64>} : (tensor<f32>) -> tensor<1x2x3x3xf32>
  %a = core.binary div(%s, %n) : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %t = core.pool sum(%x) {window = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %c = core.constant() {value = dense<[[4.0, 6.0, 4.0], [6.0, 9.0, 6.0], [4.0, 6.0, 4.0]]> : tensor<3x3xf32>} : () -> tensor<3x3xf32>
  %m = core.broadcast(%c) {dims = array<i64: 2, 3>} : (tensor<3x3xf32>) -> tensor<1x2x3x3xf32>
  %b = core.binary div(%t, %m) : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  func.return %a, %b : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}

// Counts that are neither stay a division of the sum.
// CHECK-LABEL: func.func @not_average(
// CHECK:         onnx.AveragePool
// CHECK:         onnx.Mul
// CHECK:         = onnx.Div
func.func @not_average(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %s = core.pool sum(%x) {window = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %eight = core.constant() {value = dense<8.0> : tensor<f32>} : () -> tensor<f32>
  %n = core.broadcast(%eight) {dims = array<i64>} : (tensor<f32>) -> tensor<1x2x3x3xf32>
  %a = core.binary div(%s, %n) : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  func.return %a : tensor<1x2x3x3xf32>
}

// A batch norm core left after a convolution (a constant per-channel scale, then
// a shift) folds into the Conv: scaled weights, and the shift as its bias.
// CHECK-LABEL: func.func @batch_norm(
// CHECK:         %[[W:.*]] = onnx.Constant() {value = dense<[{{\[\[}}[2.000000e+00]]], {{\[\[\[}}-3.000000e+00]]]]> : tensor<2x1x1x1xf32>}
// CHECK:         %[[B:.*]] = onnx.Constant() {value = dense<[5.000000e-01, 1.500000e+00]> : tensor<2xf32>}
// CHECK-NEXT:    %y = onnx.Conv(%x, %[[W]], %[[B]])
// CHECK-NEXT:    func.return %y
func.func @batch_norm(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = core.constant() {value = dense<[[[[1.0]]], [[[1.5]]]]> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
  %c = core.conv(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, groups = 1 : i64, layout = "NCHW", acc = f32} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  %s = core.constant() {value = dense<[2.0, -2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %se = core.broadcast(%s) {dims = array<i64: 1>} : (tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %m = core.binary mul(%c, %se) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %b = core.constant() {value = dense<[0.5, 1.5]> : tensor<2xf32>} : () -> tensor<2xf32>
  %be = core.broadcast(%b) {dims = array<i64: 1>} : (tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %y = core.binary add(%m, %be) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %y : tensor<1x2x4x4xf32>
}
