// The neural-network handlers of convert-torch-to-core on hand-written torch-dialect
// IR: convolution (core.conv / core.conv_transpose, the bias added after), pooling
// (ceil_mode as extra high padding, averages divided by counts computed here or by
// a sum pool of ones over `?` dims, max pooling's indices from one strided slice per
// window offset), normalizations as reduce/broadcast/elementwise compositions,
// softmax, resampling as gathers of constant index tables, embedding as a checked
// gather, and padding as core.pad. The last part holds the forms that are refused.
// RUN: opt %s --split-input-file --verify-diagnostics -p convert-torch-to-core | filecheck %s

// stride 2, padding 1: the padding goes to both sides; the bias is broadcast on
// the channel dim, the run-time batch read from the conv's result.
// CHECK-LABEL: func.func @conv2d(
// CHECK-NEXT:    %[[C:.*]] = core.conv(%x, %w) {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, groups = 1 : i64, acc = f32, pad_high = array<i64: 1, 1>, layout = "NCHW"} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x4x4xf32>
// CHECK-NEXT:    %[[S:.*]] = core.shape_of(%[[C]])
// CHECK-NEXT:    %[[B:.*]] = core.broadcast(%bias, %[[S]]) {dims = array<i64: 1>} : (tensor<4xf32>, tensor<4xi64>) -> tensor<?x4x4x4xf32>
// CHECK-NEXT:    %y = core.binary add(%[[C]], %[[B]])
// CHECK-NEXT:    func.return %y
func.func @conv2d(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %bias: tensor<4xf32>) -> tensor<?x4x4x4xf32> {
  %y = torch.aten.convolution(%x, %w, %bias) {stride = [2, 2], padding = [1, 1], dilation = [1, 1], transposed = false, output_padding = [0, 0], groups = 1} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<?x4x4x4xf32>
  func.return %y : tensor<?x4x4x4xf32>
}

// Depthwise 1-D, dilation 2, no bias: 10 - 2 * (3 - 1) = 6 positions.
// CHECK-LABEL: func.func @depthwise_conv1d(
// CHECK-NEXT:    %y = core.conv(%x, %w) {strides = array<i64: 1>, dilations = array<i64: 2>, pad_low = array<i64: 0>, groups = 4 : i64, acc = f32, pad_high = array<i64: 0>, layout = "NCHW"} : (tensor<1x4x10xf32>, tensor<4x1x3xf32>) -> tensor<1x4x6xf32>
// CHECK-NEXT:    func.return %y
func.func @depthwise_conv1d(%x: tensor<1x4x10xf32>, %w: tensor<4x1x3xf32>) -> tensor<1x4x6xf32> {
  %y = torch.aten.convolution(%x, %w, none) {stride = [1], padding = [0], dilation = [2], transposed = false, output_padding = [0], groups = 4} : (tensor<1x4x10xf32>, tensor<4x1x3xf32>, none) -> tensor<1x4x6xf32>
  func.return %y : tensor<1x4x6xf32>
}

// Transposed, 2 groups of weights [4, 3, 3, 3]: 6 output channels; output_padding
// 1 takes one off pad_high: (5 - 1) * 2 + 3 - 1 - 0 = 10.
// CHECK-LABEL: func.func @conv_transpose(
// CHECK-NEXT:    %y = core.conv_transpose(%x, %w) {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, groups = 2 : i64, acc = f32, pad_high = array<i64: 0, 0>} : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<1x6x10x10xf32>
// CHECK-NEXT:    func.return %y
func.func @conv_transpose(%x: tensor<1x4x5x5xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x6x10x10xf32> {
  %y = torch.aten.convolution(%x, %w, none) {stride = [2, 2], padding = [1, 1], dilation = [1, 1], transposed = true, output_padding = [1, 1], groups = 2} : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x6x10x10xf32>
  func.return %y : tensor<1x6x10x10xf32>
}

// ceil_mode: (8 + 2 - 3) / 2 rounds up to 4, so 5 windows; the last needs one
// more row and column of padding. The indices are not used: a stand-in of zeros.
// CHECK-LABEL: func.func @max_pool_values(
// CHECK-NEXT:    %v = core.pool max(%x) {window = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 2, 2>} : (tensor<?x2x8x8xf32>) -> tensor<?x2x5x5xf32>
// CHECK-NOT:     core.slice
// CHECK:         func.return %v
func.func @max_pool_values(%x: tensor<?x2x8x8xf32>) -> tensor<?x2x5x5xf32> {
  %v, %i = torch.aten.max_pool2d_with_indices(%x) {kernel_size = [3, 3], stride = [2, 2], padding = [1, 1], ceil_mode = true} : (tensor<?x2x8x8xf32>) -> (tensor<?x2x5x5xf32>, tensor<?x2x5x5xi64>)
  func.return %v : tensor<?x2x5x5xf32>
}

// The indices are used: the four offsets of a 2x2 window are four strided slices,
// scanned in torch's order from -inf; an element greater than the running max (or
// NaN) replaces it, and its flat index in the 2x4 plane replaces the index:
// offset (0, 0) is at [0, 2], (0, 1) at [1, 3], (1, 0) at [4, 6], (1, 1) at [5, 7].
// CHECK-LABEL: func.func @max_pool_indices(
// CHECK-NEXT:    %[[V0:.*]] = core.slice(%x) {start = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1, 2, 2>} : (tensor<1x1x2x4xf32>) -> tensor<1x1x1x2xf32>
// CHECK:         %[[LOW:.*]] = core.broadcast(%{{.*}}) {dims = array<i64>} : (tensor<f32>) -> tensor<1x1x1x2xf32>
// CHECK-NEXT:    %[[FIRST:.*]] = core.constant() {value = dense<{{\[\[}}0, 2]]> : tensor<1x2xi64>}
// CHECK-NEXT:    %[[FIRSTB:.*]] = core.broadcast(%[[FIRST]]) {dims = array<i64: 2, 3>} : (tensor<1x2xi64>) -> tensor<1x1x1x2xi64>
// CHECK-NEXT:    %[[GT:.*]] = core.compare gt(%[[V0]], %[[LOW]])
// CHECK-NEXT:    %[[NAN:.*]] = core.compare ne(%[[V0]], %[[V0]])
// CHECK-NEXT:    %[[TAKE:.*]] = core.binary or(%[[GT]], %[[NAN]])
// CHECK-NEXT:    %[[M0:.*]] = core.select(%[[TAKE]], %[[V0]], %[[LOW]])
// CHECK-NEXT:    %[[H0:.*]] = core.constant() {value = dense<{{\[\[}}0, 2]]> : tensor<1x2xi64>}
// CHECK-NEXT:    %[[H0B:.*]] = core.broadcast(%[[H0]])
// CHECK-NEXT:    %[[I0:.*]] = core.select(%[[TAKE]], %[[H0B]], %[[FIRSTB]])
// CHECK-NEXT:    core.slice(%x) {start = array<i64: 0, 0, 0, 1>, stride = array<i64: 1, 1, 2, 2>}
// CHECK:         core.constant() {value = dense<{{\[\[}}1, 3]]> : tensor<1x2xi64>}
// CHECK:         core.slice(%x) {start = array<i64: 0, 0, 1, 0>, stride = array<i64: 1, 1, 2, 2>}
// CHECK:         core.constant() {value = dense<{{\[\[}}4, 6]]> : tensor<1x2xi64>}
// CHECK:         %[[V3:.*]] = core.slice(%x) {start = array<i64: 0, 0, 1, 1>, stride = array<i64: 1, 1, 2, 2>}
// CHECK:         %[[TAKE3:.*]] = core.binary or
// CHECK-NEXT:    %v = core.select(%[[TAKE3]], %[[V3]], %{{.*}}) : (tensor<1x1x1x2xi1>, tensor<1x1x1x2xf32>, tensor<1x1x1x2xf32>) -> tensor<1x1x1x2xf32>
// CHECK-NEXT:    %[[H3:.*]] = core.constant() {value = dense<{{\[\[}}5, 7]]> : tensor<1x2xi64>}
// CHECK-NEXT:    %[[H3B:.*]] = core.broadcast(%[[H3]])
// CHECK-NEXT:    %i = core.select(%[[TAKE3]], %[[H3B]], %{{.*}}) : (tensor<1x1x1x2xi1>, tensor<1x1x1x2xi64>, tensor<1x1x1x2xi64>) -> tensor<1x1x1x2xi64>
// CHECK-NEXT:    func.return %v, %i
func.func @max_pool_indices(%x: tensor<1x1x2x4xf32>) -> (tensor<1x1x1x2xf32>, tensor<1x1x1x2xi64>) {
  %v, %i = torch.aten.max_pool2d_with_indices(%x) {kernel_size = [2, 2]} : (tensor<1x1x2x4xf32>) -> (tensor<1x1x1x2xf32>, tensor<1x1x1x2xi64>)
  func.return %v, %i : tensor<1x1x1x2xf32>, tensor<1x1x1x2xi64>
}

// ceil_mode over 5: three windows per dim, the last holding one element, so the
// counts are the outer product of [2, 2, 1] with itself.
// CHECK-LABEL: func.func @avg_pool_counts(
// CHECK-NEXT:    %[[T:.*]] = core.pool sum(%x) {window = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 1, 1>} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    %[[N:.*]] = core.constant() {value = dense<{{\[\[}}4.000000e+00, 4.000000e+00, 2.000000e+00], [4.000000e+00, 4.000000e+00, 2.000000e+00], [2.000000e+00, 2.000000e+00, 1.000000e+00]]> : tensor<3x3xf32>}
// CHECK-NEXT:    %[[NB:.*]] = core.broadcast(%[[N]]) {dims = array<i64: 2, 3>} : (tensor<3x3xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    %y = core.binary div(%[[T]], %[[NB]])
// CHECK-NEXT:    func.return %y
func.func @avg_pool_counts(%x: tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32> {
  %y = torch.aten.avg_pool2d(%x) {kernel_size = [2, 2], stride = [2, 2], ceil_mode = true} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}

// Padding not counted over `?` dims: the counts are a sum pool, with the same
// padding, of ones shaped [1, 1, H, W] at run time.
// CHECK-LABEL: func.func @avg_pool_dynamic(
// CHECK-NEXT:    %[[T:.*]] = core.pool sum(%x) {window = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : (tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32>
// CHECK:         %[[ONES:.*]] = core.broadcast(%{{.*}}, %{{.*}}) {dims = array<i64>} : (tensor<f32>, tensor<4xi64>) -> tensor<1x1x?x?xf32>
// CHECK-NEXT:    %[[N:.*]] = core.pool sum(%[[ONES]]) {window = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : (tensor<1x1x?x?xf32>) -> tensor<1x1x?x?xf32>
// CHECK-NEXT:    %[[S:.*]] = core.shape_of(%[[T]])
// CHECK-NEXT:    %[[NB:.*]] = core.broadcast(%[[N]], %[[S]]) {dims = array<i64: 0, 1, 2, 3>}
// CHECK-NEXT:    %y = core.binary div(%[[T]], %[[NB]])
func.func @avg_pool_dynamic(%x: tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32> {
  %y = torch.aten.avg_pool2d(%x) {kernel_size = [3, 3], stride = [1, 1], padding = [1, 1], count_include_pad = false} : (tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32>
  func.return %y : tensor<1x2x?x?xf32>
}

// An unbatched input gets a batch of one and loses it again; divisor_override
// divides every window by 3.
// CHECK-LABEL: func.func @avg_pool_divisor(
// CHECK-NEXT:    %[[X4:.*]] = core.reshape(%x) : (tensor<2x4x4xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    %[[T:.*]] = core.pool sum(%[[X4]]) {window = array<i64: 2, 2>, strides = array<i64: 2, 2>
// CHECK-NEXT:    %[[D:.*]] = core.constant() {value = dense<3.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[DB:.*]] = core.broadcast(%[[D]])
// CHECK-NEXT:    %[[A:.*]] = core.binary div(%[[T]], %[[DB]])
// CHECK-NEXT:    %y = core.reshape(%[[A]]) : (tensor<1x2x2x2xf32>) -> tensor<2x2x2xf32>
func.func @avg_pool_divisor(%x: tensor<2x4x4xf32>) -> tensor<2x2x2xf32> {
  %y = torch.aten.avg_pool2d(%x) {kernel_size = [2, 2], divisor_override = 3} : (tensor<2x4x4xf32>) -> tensor<2x2x2xf32>
  func.return %y : tensor<2x2x2xf32>
}

// Output size 1: a mean over the plane, its count read at run time.
// CHECK-LABEL: func.func @adaptive_global(
// CHECK-NEXT:    %[[T:.*]] = core.reduce sum(%x) {axes = array<i64: 2, 3>} : (tensor<?x3x?x?xf32>) -> tensor<?x3xf32>
// CHECK:         %[[N:.*]] = core.reduce prod(%{{.*}}) {axes = array<i64: 0>} : (tensor<4xi64>) -> tensor<i64>
// CHECK:         %[[M:.*]] = core.binary div(%[[T]], %{{.*}}) : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK:         %y = core.reshape(%[[M]], %{{.*}}) : (tensor<?x3xf32>, tensor<4xi64>) -> tensor<?x3x1x1xf32>
func.func @adaptive_global(%x: tensor<?x3x?x?xf32>) -> tensor<?x3x1x1xf32> {
  %y = torch.aten._adaptive_avg_pool2d(%x) {output_size = [1, 1]} : (tensor<?x3x?x?xf32>) -> tensor<?x3x1x1xf32>
  func.return %y : tensor<?x3x1x1xf32>
}

// Sizes that divide the input's: an average pool of 2x3 windows.
// CHECK-LABEL: func.func @adaptive_divides(
// CHECK-NEXT:    %[[T:.*]] = core.pool sum(%x) {window = array<i64: 2, 3>, strides = array<i64: 2, 3>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : (tensor<1x3x8x6xf32>) -> tensor<1x3x4x2xf32>
// CHECK-NEXT:    %[[D:.*]] = core.constant() {value = dense<6.000000e+00> : tensor<f32>}
func.func @adaptive_divides(%x: tensor<1x3x8x6xf32>) -> tensor<1x3x4x2xf32> {
  %y = torch.aten._adaptive_avg_pool2d(%x) {output_size = [4, 2]} : (tensor<1x3x8x6xf32>) -> tensor<1x3x4x2xf32>
  func.return %y : tensor<1x3x4x2xf32>
}

// 5 -> 3 rows: torch's windows [0, 2), [1, 4), [3, 5) as an averaging matrix
// multiplied from the left; the columns keep their size and are left alone.
// CHECK-LABEL: func.func @adaptive_general(
// CHECK-NEXT:    %[[M:.*]] = core.constant() {value = dense<{{\[\[}}5.000000e-01, 5.000000e-01, 0.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.333333343, 0.333333343, 0.333333343, 0.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00, 5.000000e-01, 5.000000e-01]]> : tensor<3x5xf32>}
// CHECK-NEXT:    %[[MB:.*]] = core.broadcast(%[[M]]) {dims = array<i64: 2, 3>} : (tensor<3x5xf32>) -> tensor<1x3x3x5xf32>
// CHECK-NEXT:    %y = core.matmul(%[[MB]], %x) {acc = f32} : (tensor<1x3x3x5xf32>, tensor<1x3x5x4xf32>) -> tensor<1x3x3x4xf32>
// CHECK-NEXT:    func.return %y
func.func @adaptive_general(%x: tensor<1x3x5x4xf32>) -> tensor<1x3x3x4xf32> {
  %y = torch.aten._adaptive_avg_pool2d(%x) {output_size = [3, 4]} : (tensor<1x3x5x4xf32>) -> tensor<1x3x3x4xf32>
  func.return %y : tensor<1x3x3x4xf32>
}

// Constant parameters fold into a scale w / sqrt(var + eps) = [0.5, 2] and a
// shift b - mean * scale = [0, -1]; the statistics results are empty tensors.
// CHECK-LABEL: func.func @batch_norm_folded(
// CHECK:         %[[MUL:.*]] = core.constant() {value = dense<[5.000000e-01, 2.000000e+00]> : tensor<2xf32>}
// CHECK-NEXT:    %[[ADD:.*]] = core.constant() {value = dense<[0.000000e+00, -1.000000e+00]> : tensor<2xf32>}
// CHECK-NEXT:    %[[S:.*]] = core.shape_of(%x)
// CHECK-NEXT:    %[[MULB:.*]] = core.broadcast(%[[MUL]], %[[S]]) {dims = array<i64: 1>} : (tensor<2xf32>, tensor<4xi64>) -> tensor<?x2x3x3xf32>
// CHECK-NEXT:    %[[Y:.*]] = core.binary mul(%x, %[[MULB]])
// CHECK:         %[[ADDB:.*]] = core.broadcast(%[[ADD]], %{{.*}}) {dims = array<i64: 1>}
// CHECK-NEXT:    %y = core.binary add(%[[Y]], %[[ADDB]])
// CHECK-NEXT:    %mean = core.constant() {value = dense<> : tensor<0xf32>} : () -> tensor<0xf32>
func.func @batch_norm_folded(%x: tensor<?x2x3x3xf32>) -> (tensor<?x2x3x3xf32>, tensor<0xf32>) {
  %w = torch.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = torch.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %m = torch.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %v = torch.constant dense<[3.0, 0.0]> : tensor<2xf32>
  %y, %mean, %rstd = torch.aten._native_batch_norm_legit_no_training(%x, %w, %b, %m, %v) {momentum = 0.1, eps = 1.0} : (tensor<?x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<?x2x3x3xf32>, tensor<0xf32>, tensor<0xf32>)
  func.return %y, %mean : tensor<?x2x3x3xf32>, tensor<0xf32>
}

// Statistics only the run knows, and no weight: scale 1 / sqrt(var + eps), shift
// b - mean * scale, computed on the [C] vectors before broadcasting.
// CHECK-LABEL: func.func @batch_norm_run_time(
// CHECK:         %[[E:.*]] = core.binary add(%v, %{{.*}}) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    %[[SQ:.*]] = core.unary sqrt(%[[E]])
// CHECK-NEXT:    %[[SC:.*]] = core.unary reciprocal(%[[SQ]])
// CHECK-NEXT:    %[[MS:.*]] = core.binary mul(%m, %[[SC]])
// CHECK-NEXT:    %[[SH:.*]] = core.binary sub(%b, %[[MS]])
// CHECK-NEXT:    %[[SCB:.*]] = core.broadcast(%[[SC]]) {dims = array<i64: 1>} : (tensor<2xf32>) -> tensor<1x2x3xf32>
// CHECK-NEXT:    %[[Y:.*]] = core.binary mul(%x, %[[SCB]])
// CHECK-NEXT:    %[[SHB:.*]] = core.broadcast(%[[SH]]) {dims = array<i64: 1>}
// CHECK-NEXT:    %y = core.binary add(%[[Y]], %[[SHB]])
func.func @batch_norm_run_time(%x: tensor<1x2x3xf32>, %b: tensor<2xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>) -> tensor<1x2x3xf32> {
  %y, %mean, %rstd = torch.aten._native_batch_norm_legit_no_training(%x, none, %b, %m, %v) {momentum = 0.1, eps = 0.001} : (tensor<1x2x3xf32>, none, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x3xf32>, tensor<0xf32>, tensor<0xf32>)
  func.return %y : tensor<1x2x3xf32>
}

// No running statistics: the batch's own, over N and the spatial dims (8
// elements per channel, biased variance); mean and rstd are per channel.
// CHECK-LABEL: func.func @batch_norm_batch_stats(
// CHECK-NEXT:    %[[T:.*]] = core.reduce sum(%x) {axes = array<i64: 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %[[N:.*]] = core.constant() {value = dense<8.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[NB:.*]] = core.broadcast(%[[N]])
// CHECK-NEXT:    %mean = core.binary div(%[[T]], %[[NB]])
// CHECK-NEXT:    %[[MB:.*]] = core.broadcast(%mean) {dims = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    %[[C:.*]] = core.binary sub(%x, %[[MB]])
// CHECK-NEXT:    %[[SQ:.*]] = core.binary mul(%[[C]], %[[C]])
// CHECK-NEXT:    %[[VS:.*]] = core.reduce sum(%[[SQ]]) {axes = array<i64: 0, 2>}
// CHECK-NEXT:    %[[VAR:.*]] = core.binary div(%[[VS]], %[[NB]])
// CHECK:         %rstd = core.unary reciprocal(%{{.*}}) : (tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %[[RB:.*]] = core.broadcast(%rstd) {dims = array<i64: 1>}
// CHECK-NEXT:    %y = core.binary mul(%[[C]], %[[RB]])
// CHECK-NEXT:    func.return %y, %mean, %rstd
func.func @batch_norm_batch_stats(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>) {
  %y, %mean, %rstd = torch.aten._native_batch_norm_legit.no_stats(%x, none, none) {training = true, momentum = 0.1, eps = 1.0e-05} : (tensor<2x3x4xf32>, none, none) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)
  func.return %y, %mean, %rstd : tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>
}

// Over the last dim; weight and bias broadcast along it; mean and rstd keep it as
// 1, with the run-time batch.
// CHECK-LABEL: func.func @layer_norm(
// CHECK-NEXT:    %[[T:.*]] = core.reduce sum(%x) {axes = array<i64: 2>} : (tensor<?x5x8xf32>) -> tensor<?x5xf32>
// CHECK:         %[[RSTD:.*]] = core.unary reciprocal(%{{.*}}) : (tensor<?x5xf32>) -> tensor<?x5xf32>
// CHECK:         core.broadcast(%w, %{{.*}}) {dims = array<i64: 2>} : (tensor<8xf32>, tensor<3xi64>) -> tensor<?x5x8xf32>
// CHECK:         core.broadcast(%b, %{{.*}}) {dims = array<i64: 2>} : (tensor<8xf32>, tensor<3xi64>) -> tensor<?x5x8xf32>
// CHECK-NEXT:    %y = core.binary add
// CHECK:         %mean = core.reshape(%{{.*}}, %{{.*}}) : (tensor<?x5xf32>, tensor<3xi64>) -> tensor<?x5x1xf32>
// CHECK:         %rstd = core.reshape(%[[RSTD]], %{{.*}}) : (tensor<?x5xf32>, tensor<3xi64>) -> tensor<?x5x1xf32>
func.func @layer_norm(%x: tensor<?x5x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<?x5x8xf32>, tensor<?x5x1xf32>, tensor<?x5x1xf32>) {
  %y, %mean, %rstd = torch.aten.native_layer_norm(%x, %w, %b) {normalized_shape = [8], eps = 1.0e-05} : (tensor<?x5x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<?x5x8xf32>, tensor<?x5x1xf32>, tensor<?x5x1xf32>)
  func.return %y, %mean, %rstd : tensor<?x5x8xf32>, tensor<?x5x1xf32>, tensor<?x5x1xf32>
}

// [2, 4, 3] in 2 groups: normalized as [2, 2, 6], reshaped back, then scaled per
// channel; rstd is [N, G].
// CHECK-LABEL: func.func @group_norm(
// CHECK-NEXT:    %[[G:.*]] = core.reshape(%x) : (tensor<2x4x3xf32>) -> tensor<2x2x6xf32>
// CHECK-NEXT:    core.reduce sum(%[[G]]) {axes = array<i64: 2>} : (tensor<2x2x6xf32>) -> tensor<2x2xf32>
// CHECK:         %rstd = core.unary reciprocal(%{{.*}}) : (tensor<2x2xf32>) -> tensor<2x2xf32>
// CHECK-NEXT:    %[[RB:.*]] = core.broadcast(%rstd) {dims = array<i64: 0, 1>} : (tensor<2x2xf32>) -> tensor<2x2x6xf32>
// CHECK-NEXT:    %[[N:.*]] = core.binary mul(%{{.*}}, %[[RB]])
// CHECK-NEXT:    %[[B:.*]] = core.reshape(%[[N]]) : (tensor<2x2x6xf32>) -> tensor<2x4x3xf32>
// CHECK-NEXT:    %[[WB:.*]] = core.broadcast(%w) {dims = array<i64: 1>} : (tensor<4xf32>) -> tensor<2x4x3xf32>
// CHECK-NEXT:    %[[S:.*]] = core.binary mul(%[[B]], %[[WB]])
// CHECK-NEXT:    %[[BB:.*]] = core.broadcast(%b) {dims = array<i64: 1>}
// CHECK-NEXT:    %y = core.binary add(%[[S]], %[[BB]])
func.func @group_norm(%x: tensor<2x4x3xf32>, %w: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<2x4x3xf32>, tensor<2x2xf32>) {
  %y, %mean, %rstd = torch.aten.native_group_norm(%x, %w, %b) {N = 2, C = 4, HxW = 3, group = 2, eps = 1.0e-05} : (tensor<2x4x3xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x3xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
  func.return %y, %rstd : tensor<2x4x3xf32>, tensor<2x2xf32>
}

// exp(x - max) / sum (a term under -87.34 is 0), and (x - max) - log(sum), along dim 1.
// CHECK-LABEL: func.func @softmax(
// CHECK-NEXT:    %[[M:.*]] = core.reduce max(%x) {axes = array<i64: 1>} : (tensor<?x10xf32>) -> tensor<?xf32>
// CHECK-NEXT:    %[[S:.*]] = core.shape_of(%x)
// CHECK-NEXT:    %[[MB:.*]] = core.broadcast(%[[M]], %[[S]]) {dims = array<i64: 0>}
// CHECK-NEXT:    %[[D:.*]] = core.binary sub(%x, %[[MB]])
// CHECK:         %[[TINY:.*]] = core.compare lt(%[[D]], %{{.*}})
// CHECK:         %[[DS:.*]] = core.select(%[[TINY]], %[[Z:.*]], %[[D]])
// CHECK-NEXT:    %[[EX:.*]] = core.unary exp(%[[DS]])
// CHECK-NEXT:    %[[E:.*]] = core.select(%[[TINY]], %[[Z]], %[[EX]])
// CHECK-NEXT:    %[[T:.*]] = core.reduce sum(%[[E]]) {axes = array<i64: 1>}
// CHECK-NEXT:    %[[S2:.*]] = core.shape_of(%[[E]])
// CHECK-NEXT:    %[[TB:.*]] = core.broadcast(%[[T]], %[[S2]]) {dims = array<i64: 0>}
// CHECK-NEXT:    %s = core.binary div(%[[E]], %[[TB]])
// CHECK:         %[[L:.*]] = core.unary log(%{{.*}})
// CHECK-NEXT:    %l = core.binary sub(%{{.*}}, %[[L]])
func.func @softmax(%x: tensor<?x10xf32>) -> (tensor<?x10xf32>, tensor<?x10xf32>) {
  %s = torch.aten._softmax(%x) {dim = -1, half_to_float = false} : (tensor<?x10xf32>) -> tensor<?x10xf32>
  %l = torch.aten._log_softmax(%x) {dim = 1, half_to_float = false} : (tensor<?x10xf32>) -> tensor<?x10xf32>
  func.return %s, %l : tensor<?x10xf32>, tensor<?x10xf32>
}

// Scale 1.5 on H (2 -> 3): floor(i / 1.5) = [0, 0, 1]; scale 2 on W: i >> 1.
// CHECK-LABEL: func.func @upsample_nearest(
// CHECK-NEXT:    %[[IH:.*]] = core.constant() {value = dense<[0, 0, 1]> : tensor<3xi64>}
// CHECK-NEXT:    %[[H:.*]] = core.gather(%x, %[[IH]]) {axis = 2 : i64} : (tensor<?x1x2x3xf32>, tensor<3xi64>) -> tensor<?x1x3x3xf32>
// CHECK-NEXT:    %[[IW:.*]] = core.constant() {value = dense<[0, 0, 1, 1, 2, 2]> : tensor<6xi64>}
// CHECK-NEXT:    %y = core.gather(%[[H]], %[[IW]]) {axis = 3 : i64} : (tensor<?x1x3x3xf32>, tensor<6xi64>) -> tensor<?x1x3x6xf32>
// CHECK-NEXT:    func.return %y
func.func @upsample_nearest(%x: tensor<?x1x2x3xf32>) -> tensor<?x1x3x6xf32> {
  %y = torch.aten.upsample_nearest2d.vec(%x) {output_size = none, scale_factors = [1.5, 2.0]} : (tensor<?x1x2x3xf32>) -> tensor<?x1x3x6xf32>
  func.return %y : tensor<?x1x3x6xf32>
}

// align_corners, W 2 -> 3: sources 0, 0.5, 1, i.e. taps (0, 1), (0, 1), (1, 1)
// with weights (1, 0), (0.5, 0.5), (1, 0); H keeps its size and is left alone.
// CHECK-LABEL: func.func @upsample_bilinear(
// CHECK-NEXT:    %[[I0:.*]] = core.constant() {value = dense<[0, 0, 1]> : tensor<3xi64>}
// CHECK-NEXT:    %[[G0:.*]] = core.gather(%x, %[[I0]]) {axis = 3 : i64}
// CHECK-NEXT:    %[[I1:.*]] = core.constant() {value = dense<1> : tensor<3xi64>}
// CHECK-NEXT:    %[[G1:.*]] = core.gather(%x, %[[I1]]) {axis = 3 : i64}
// CHECK-NEXT:    %[[W0:.*]] = core.constant() {value = dense<[1.000000e+00, 5.000000e-01, 1.000000e+00]> : tensor<3xf32>}
// CHECK-NEXT:    %[[W0B:.*]] = core.broadcast(%[[W0]]) {dims = array<i64: 3>} : (tensor<3xf32>) -> tensor<1x1x2x3xf32>
// CHECK-NEXT:    %[[W1:.*]] = core.constant() {value = dense<[0.000000e+00, 5.000000e-01, 0.000000e+00]> : tensor<3xf32>}
// CHECK-NEXT:    %[[W1B:.*]] = core.broadcast(%[[W1]]) {dims = array<i64: 3>}
// CHECK-NEXT:    %[[P0:.*]] = core.binary mul(%[[G0]], %[[W0B]])
// CHECK-NEXT:    %[[P1:.*]] = core.binary mul(%[[G1]], %[[W1B]])
// CHECK-NEXT:    %y = core.binary add(%[[P0]], %[[P1]])
// CHECK-NEXT:    func.return %y
func.func @upsample_bilinear(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x2x3xf32> {
  %y = torch.aten.upsample_bilinear2d.vec(%x) {output_size = [2, 3], align_corners = true, scale_factors = none} : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x3xf32>
  func.return %y : tensor<1x1x2x3xf32>
}

// Rows of the table at the indices, each checked to lie in [0, 10) at run time.
// CHECK-LABEL: func.func @embedding(
// CHECK:         %[[GE:.*]] = core.compare ge(%i, %{{.*}}) : (tensor<?x3xi64>, tensor<?x3xi64>) -> tensor<?x3xi1>
// CHECK-NEXT:    %[[LT:.*]] = core.compare lt(%i, %{{.*}})
// CHECK-NEXT:    %[[OK:.*]] = core.binary and(%[[GE]], %[[LT]])
// CHECK-NEXT:    %[[I:.*]] = core.check(%i, %[[OK]], %i) {message = "embedding: an index is out of range"}
// CHECK-NEXT:    %y = core.gather(%w, %[[I]]) {axis = 0 : i64} : (tensor<10x4xf32>, tensor<?x3xi64>) -> tensor<?x3x4xf32>
func.func @embedding(%w: tensor<10x4xf32>, %i: tensor<?x3xi64>) -> tensor<?x3x4xf32> {
  %y = torch.aten.embedding(%w, %i) {padding_idx = 0} : (tensor<10x4xf32>, tensor<?x3xi64>) -> tensor<?x3x4xf32>
  func.return %y : tensor<?x3x4xf32>
}

// torch lists pads from the last dim; a negative one crops.
// CHECK-LABEL: func.func @pads(
// CHECK-NEXT:    %[[V:.*]] = core.constant() {value = dense<2.500000e+00> : tensor<f32>}
// CHECK-NEXT:    %c = core.pad constant(%x, %[[V]]) {pad_low = array<i64: 0, 0, 2, 1>, pad_high = array<i64: 0, 0, 0, -2>} : (tensor<1x2x4x5xf32>, tensor<f32>) -> tensor<1x2x6x4xf32>
// CHECK:         %r = core.pad reflect(%x, %{{.*}}) {pad_low = array<i64: 0, 0, 0, 1>, pad_high = array<i64: 0, 0, 1, 2>} : (tensor<1x2x4x5xf32>, tensor<f32>) -> tensor<1x2x5x8xf32>
// CHECK:         %e = core.pad edge(%x, %{{.*}}) {pad_low = array<i64: 0, 0, 1, 1>, pad_high = array<i64: 0, 0, 1, 1>} : (tensor<1x2x4x5xf32>, tensor<f32>) -> tensor<1x2x6x7xf32>
// CHECK-NOT:     torch.
// CHECK:         func.return %c, %r, %e
func.func @pads(%x: tensor<1x2x4x5xf32>) -> (tensor<1x2x6x4xf32>, tensor<1x2x5x8xf32>, tensor<1x2x6x7xf32>) {
  %c = torch.aten.constant_pad_nd(%x) {pad = [1, -2, 2, 0], value = 2.5} : (tensor<1x2x4x5xf32>) -> tensor<1x2x6x4xf32>
  %r = torch.aten.reflection_pad2d(%x) {padding = [1, 2, 0, 1]} : (tensor<1x2x4x5xf32>) -> tensor<1x2x5x8xf32>
  %e = torch.aten.replication_pad2d(%x) {padding = [1, 1, 1, 1]} : (tensor<1x2x4x5xf32>) -> tensor<1x2x6x7xf32>
  func.return %c, %r, %e : tensor<1x2x6x4xf32>, tensor<1x2x5x8xf32>, tensor<1x2x6x7xf32>
}

// Overloads that share the handlers above: upsample_nearest2d with output_size,
// softmax.int with a dtype (the input is cast first), max_pool2d (values only),
// adaptive_avg_pool2d.
// CHECK-LABEL: func.func @other_overloads(
// CHECK-NEXT:    %[[IH:.*]] = core.constant() {value = dense<[0, 0, 1, 1]> : tensor<4xi64>}
// CHECK-NEXT:    %[[H:.*]] = core.gather(%x, %[[IH]]) {axis = 2 : i64}
// CHECK-NEXT:    %[[IW:.*]] = core.constant() {value = dense<[0, 0, 1, 1, 2, 2]> : tensor<6xi64>}
// CHECK-NEXT:    %n = core.gather(%[[H]], %[[IW]]) {axis = 3 : i64} : (tensor<1x1x4x3xf32>, tensor<6xi64>) -> tensor<1x1x4x6xf32>
// CHECK-NEXT:    %[[HF:.*]] = core.cast(%h) : (tensor<2x5xf16>) -> tensor<2x5xf32>
// CHECK-NEXT:    core.reduce max(%[[HF]]) {axes = array<i64: 1>}
// CHECK:         %s = core.binary div
// CHECK-NEXT:    %m = core.pool max(%x) {window = array<i64: 2, 3>, strides = array<i64: 2, 3>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : (tensor<1x1x2x3xf32>) -> tensor<1x1x1x1xf32>
// CHECK-NEXT:    core.reduce sum(%x) {axes = array<i64: 2, 3>}
// CHECK:         %a = core.reshape(%{{.*}}) : (tensor<1x1xf32>) -> tensor<1x1x1x1xf32>
func.func @other_overloads(%x: tensor<1x1x2x3xf32>, %h: tensor<2x5xf16>) -> (tensor<1x1x4x6xf32>, tensor<2x5xf32>, tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>) {
  %n = torch.aten.upsample_nearest2d(%x) {output_size = [4, 6]} : (tensor<1x1x2x3xf32>) -> tensor<1x1x4x6xf32>
  %s = torch.aten.softmax.int(%h) {dim = 1, dtype = f32} : (tensor<2x5xf16>) -> tensor<2x5xf32>
  %m = torch.aten.max_pool2d(%x) {kernel_size = [2, 3]} : (tensor<1x1x2x3xf32>) -> tensor<1x1x1x1xf32>
  %a = torch.aten.adaptive_avg_pool2d(%x) {output_size = [1, 1]} : (tensor<1x1x2x3xf32>) -> tensor<1x1x1x1xf32>
  func.return %n, %s, %m, %a : tensor<1x1x4x6xf32>, tensor<2x5xf32>, tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>
}

// -----

// Refused: what depends on spatial sizes only the run knows. Max pooling's
// indices (their tables are built now); ceil_mode where the last window may start
// in the padding (2x2 windows, stride 2, padding 1); upsampling; adaptive pooling
// to a size other than 1.
// CHECK:      failed to lower 'torch.aten.max_pool2d_with_indices' (aten::max_pool2d_with_indices) at an unnamed node: max pooling's indices over spatial dims only the run knows
// CHECK-NEXT: failed to lower 'torch.aten.avg_pool2d' (aten::avg_pool2d) at an unnamed node: ceil_mode along a dynamic spatial dim with this padding
// CHECK-NEXT: failed to lower 'torch.aten.upsample_nearest2d.vec' (aten::upsample_nearest2d.vec) at an unnamed node: upsampling over spatial dims only the run knows
// CHECK-NEXT: failed to lower 'torch.aten._adaptive_avg_pool2d' (aten::_adaptive_avg_pool2d) at an unnamed node: adaptive pooling to a size other than 1 over spatial dims only the run knows
func.func @refused(%x: tensor<1x2x?x?xf32>) -> (tensor<1x2x?x?xi64>, tensor<1x2x?x?xf32>, tensor<1x2x?x?xf32>, tensor<1x2x2x2xf32>) {
  %v, %i = torch.aten.max_pool2d_with_indices(%x) {kernel_size = [2, 2]} : (tensor<1x2x?x?xf32>) -> (tensor<1x2x?x?xf32>, tensor<1x2x?x?xi64>)
  %a = torch.aten.avg_pool2d(%x) {kernel_size = [2, 2], stride = [2, 2], padding = [1, 1], ceil_mode = true} : (tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32>
  %u = torch.aten.upsample_nearest2d.vec(%x) {output_size = none, scale_factors = [2.0, 2.0]} : (tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32>
  %p = torch.aten._adaptive_avg_pool2d(%x) {output_size = [2, 2]} : (tensor<1x2x?x?xf32>) -> tensor<1x2x2x2xf32>
  func.return %i, %a, %u, %p : tensor<1x2x?x?xi64>, tensor<1x2x?x?xf32>, tensor<1x2x?x?xf32>, tensor<1x2x2x2xf32>
}
