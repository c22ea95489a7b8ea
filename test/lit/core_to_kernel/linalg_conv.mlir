// f32 convs with several input channels per group are im2col into a scratch
// buffer [N, C, K..., E...] (the runtime's rung_im2col_float, a kernel.call
// with the strides, dilations and low pads) plus one batched kernel.matmul
// with the weights [G, O/G, C/G*K...] on the left, so the product lands in
// NCHW. A 1x1, stride-1, unpadded conv multiplies views of the input. Stride-1
// convs on wide enough maps call the runtime's rung_conv_shift_float instead.
// Depthwise convs and other element types accumulate directly into a zeroed
// output, along the valid output range of each kernel offset.
// RUN: opt %s -p convert-core-to-kernel | filecheck %s

// CHECK-LABEL: func.func @conv3x3(%x: memref<1x4x5x5xf32>, %w: memref<8x4x3x3xf32>) -> memref<1x8x5x5xf32>
// CHECK-NEXT:    %y = kernel.alloc() : memref<1x8x5x5xf32>
// CHECK-NEXT:    %[[COLS:.*]] = kernel.alloc() : memref<1x4x3x3x5x5xf32>
// CHECK-NEXT:    kernel.call @im2col_float(%x, %[[COLS]]) [1, 1, 1, 1, 1, 1] : memref<1x4x5x5xf32>, memref<1x4x3x3x5x5xf32>
// CHECK-NEXT:    %[[B:.*]] = kernel.view %[[COLS]]() : memref<1x4x3x3x5x5xf32> -> memref<1x36x25xf32>
// CHECK-NEXT:    %[[A:.*]] = kernel.view %w() : memref<8x4x3x3xf32> -> memref<1x8x36xf32>
// CHECK-NEXT:    %[[O:.*]] = kernel.view %y() : memref<1x8x5x5xf32> -> memref<1x8x25xf32>
// CHECK-NEXT:    kernel.matmul %[[A]], %[[B]], %[[O]] : memref<1x8x36xf32>, memref<1x36x25xf32>, memref<1x8x25xf32>
// CHECK-NEXT:    func.return %y
func.func @conv3x3(%x: tensor<1x4x5x5xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<1x8x5x5xf32> {
  %y = core.conv(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, groups = 1 : i64, layout = "NCHW", acc = f32} : (tensor<1x4x5x5xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x5x5xf32>
  func.return %y : tensor<1x8x5x5xf32>
}

// CHECK-LABEL: func.func @pointwise(%x: memref<2x4x5x5xf32>, %w: memref<8x4x1x1xf32>) -> memref<2x8x5x5xf32>
// CHECK-NEXT:    %y = kernel.alloc() : memref<2x8x5x5xf32>
// CHECK-NEXT:    %[[B:.*]] = kernel.view %x() : memref<2x4x5x5xf32> -> memref<2x4x25xf32>
// CHECK-NEXT:    %[[A:.*]] = kernel.view %w() : memref<8x4x1x1xf32> -> memref<1x8x4xf32>
// CHECK-NEXT:    %[[O:.*]] = kernel.view %y() : memref<2x8x5x5xf32> -> memref<2x8x25xf32>
// CHECK-NEXT:    kernel.matmul %[[A]], %[[B]], %[[O]] : memref<1x8x4xf32>, memref<2x4x25xf32>, memref<2x8x25xf32>
// CHECK-NEXT:    func.return %y
func.func @pointwise(%x: tensor<2x4x5x5xf32>, %w: tensor<8x4x1x1xf32>) -> tensor<2x8x5x5xf32> {
  %y = core.conv(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, groups = 1 : i64, layout = "NCHW", acc = f32} : (tensor<2x4x5x5xf32>, tensor<8x4x1x1xf32>) -> tensor<2x8x5x5xf32>
  func.return %y : tensor<2x8x5x5xf32>
}

// Groups with a batch of 2: each image's groups need their weights at the same
// batch index of the product, so the weights are repeated per image.
// CHECK-LABEL: func.func @grouped
// CHECK:         %[[COLS:.*]] = kernel.alloc() : memref<2x4x3x3x3x3xf32>
// CHECK-NEXT:    kernel.call @im2col_float(%x, %[[COLS]]) [1, 1, 1, 1, 0, 0] : memref<2x4x5x5xf32>, memref<2x4x3x3x3x3xf32>
// CHECK-NEXT:    %[[B:.*]] = kernel.view %[[COLS]]() : memref<2x4x3x3x3x3xf32> -> memref<4x18x9xf32>
// CHECK-NEXT:    %[[W:.*]] = kernel.view %w() : memref<6x2x3x3xf32> -> memref<2x3x18xf32>
// CHECK-NEXT:    %[[REP:.*]] = kernel.alloc() : memref<2x2x3x18xf32>
// CHECK-NEXT:    kernel.loop (%[[I:.*]], %[[J:.*]], %[[K:.*]], %[[L:.*]]) in (2, 2, 3, 18) [parallel, parallel, parallel, parallel] {
// CHECK-NEXT:      %[[V:.*]] = kernel.load %[[W]][%[[J]], %[[K]], %[[L]]] : memref<2x3x18xf32>
// CHECK-NEXT:      kernel.store %[[V]], %[[REP]][%[[I]], %[[J]], %[[K]], %[[L]]] : memref<2x2x3x18xf32>
// CHECK:         %[[A:.*]] = kernel.view %[[REP]]() : memref<2x2x3x18xf32> -> memref<4x3x18xf32>
// CHECK-NEXT:    %[[O:.*]] = kernel.view %y() : memref<2x6x3x3xf32> -> memref<4x3x9xf32>
// CHECK-NEXT:    kernel.matmul %[[A]], %[[B]], %[[O]] : memref<4x3x18xf32>, memref<4x18x9xf32>, memref<4x3x9xf32>
func.func @grouped(%x: tensor<2x4x5x5xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<2x6x3x3xf32> {
  %y = core.conv(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, groups = 2 : i64, layout = "NCHW", acc = f32} : (tensor<2x4x5x5xf32>, tensor<6x2x3x3xf32>) -> tensor<2x6x3x3xf32>
  func.return %y : tensor<2x6x3x3xf32>
}

// A large map with few output channels (im2col columns of 1.4M floats), stride 2: GEMMs
// on blocks of 18 output rows, each block's columns made right before its product, by the
// runtime. The arguments: strides, dilations, pad_low, groups, rows per block.
// CHECK-LABEL: func.func @row_blocks(%x: memref<1x16x200x200xf32>, %w: memref<8x16x3x3xf32>) -> memref<1x8x100x100xf32>
// CHECK-NOT:     kernel.matmul
// CHECK:         %[[Y:.*]] = kernel.alloc() : memref<1x8x100x100xf32>
// CHECK-NEXT:    kernel.call @conv_rows_float(%x, %w, %[[Y]]) [2, 2, 1, 1, 1, 1, 1, 18] : memref<1x16x200x200xf32>, memref<8x16x3x3xf32>, memref<1x8x100x100xf32>
// CHECK-NEXT:    func.return %[[Y]] : memref<1x8x100x100xf32>
func.func @row_blocks(%x: tensor<1x16x200x200xf32>, %w: tensor<8x16x3x3xf32>) -> tensor<1x8x100x100xf32> {
  %y = core.conv(%x, %w) {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, groups = 1 : i64, layout = "NCHW", acc = f32} : (tensor<1x16x200x200xf32>, tensor<8x16x3x3xf32>) -> tensor<1x8x100x100xf32>
  func.return %y : tensor<1x8x100x100xf32>
}

// Stride 1 on a map whose rows the shifted tiles fill (16 wide, or with a border under an
// eighth of the row): one call of the runtime's rung_conv_shift_float, which reads the
// columns from a bordered copy of the input, never building them. The arguments:
// dilations, pad_low, groups.
// CHECK-LABEL: func.func @shifted(%x: memref<1x4x16x16xf32>, %w: memref<8x4x3x3xf32>) -> memref<1x8x16x16xf32>
// CHECK-NOT:     kernel.matmul
// CHECK:         %[[Y:.*]] = kernel.alloc() : memref<1x8x16x16xf32>
// CHECK-NEXT:    kernel.call @conv_shift_float(%x, %w, %[[Y]]) [1, 1, 1, 1, 1, 1, 1] : memref<1x4x16x16xf32>, memref<8x4x3x3xf32>, memref<1x8x16x16xf32>
// CHECK-NEXT:    func.return %[[Y]] : memref<1x8x16x16xf32>
func.func @shifted(%x: tensor<1x4x16x16xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<1x8x16x16xf32> {
  %y = core.conv(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, groups = 1 : i64, layout = "NCHW", acc = f32} : (tensor<1x4x16x16xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x16x16xf32>
  func.return %y : tensor<1x8x16x16xf32>
}

// Dilation 2 on a 30-wide map (a border of 4 columns, under an eighth of the 34-wide
// bordered row), two groups of 6 channels, no padding on the left.
// CHECK-LABEL: func.func @shifted_dilated
// CHECK:         kernel.call @conv_shift_float(%x, %w, %{{.*}}) [2, 2, 0, 0, 2, 1, 1] : memref<1x4x34x34xf32>, memref<12x2x3x3xf32>, memref<1x12x30x30xf32>
func.func @shifted_dilated(%x: tensor<1x4x34x34xf32>, %w: tensor<12x2x3x3xf32>) -> tensor<1x12x30x30xf32> {
  %y = core.conv(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 2, 2>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, groups = 2 : i64, layout = "NCHW", acc = f32} : (tensor<1x4x34x34xf32>, tensor<12x2x3x3xf32>) -> tensor<1x12x30x30xf32>
  func.return %y : tensor<1x12x30x30xf32>
}

// A strided conv whose output rows are whole vectors reads phase planes of its input: a
// 7x7 stride-2 stem onto 32-wide rows, then strides (2, 1) onto 16-wide rows. The last two
// arguments are the strides.
// CHECK-LABEL: func.func @shifted_strided
// CHECK:         kernel.call @conv_shift_float(%x, %w, %{{.*}}) [1, 1, 3, 3, 1, 2, 2] : memref<1x3x64x64xf32>, memref<8x3x7x7xf32>, memref<1x8x32x32xf32>
// CHECK:         kernel.call @conv_shift_float(%x2, %w2, %{{.*}}) [1, 1, 0, 1, 1, 2, 1] : memref<1x3x9x16xf32>, memref<8x3x3x3xf32>, memref<1x8x4x16xf32>
func.func @shifted_strided(%x: tensor<1x3x64x64xf32>, %w: tensor<8x3x7x7xf32>, %x2: tensor<1x3x9x16xf32>, %w2: tensor<8x3x3x3xf32>) -> (tensor<1x8x32x32xf32>, tensor<1x8x4x16xf32>) {
  %y = core.conv(%x, %w) {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 3, 3>, pad_high = array<i64: 3, 3>, groups = 1 : i64, layout = "NCHW", acc = f32} : (tensor<1x3x64x64xf32>, tensor<8x3x7x7xf32>) -> tensor<1x8x32x32xf32>
  %z = core.conv(%x2, %w2) {strides = array<i64: 2, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 1>, pad_high = array<i64: 0, 1>, groups = 1 : i64, layout = "NCHW", acc = f32} : (tensor<1x3x9x16xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x4x16xf32>
  func.return %y, %z : tensor<1x8x32x32xf32>, tensor<1x8x4x16xf32>
}

// What stays im2col: a 14-wide map (its border, 2 of 16 columns, is an eighth), a 16-wide
// map with 4 output channels (the GEMM's few-rows form), stride 2 onto 8-wide rows.
// CHECK-LABEL: func.func @not_shifted
// CHECK-NOT:     conv_shift_float
// CHECK:         kernel.call @im2col_float
// CHECK:         kernel.call @im2col_float
// CHECK:         kernel.call @im2col_float
// CHECK-NOT:     conv_shift_float
// CHECK:         func.return
func.func @not_shifted(%x: tensor<1x4x14x14xf32>, %w: tensor<8x4x3x3xf32>, %x2: tensor<1x4x16x16xf32>, %w2: tensor<4x4x3x3xf32>) -> (tensor<1x8x14x14xf32>, tensor<1x4x16x16xf32>, tensor<1x8x8x8xf32>) {
  %a = core.conv(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, groups = 1 : i64, layout = "NCHW", acc = f32} : (tensor<1x4x14x14xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x14x14xf32>
  %b = core.conv(%x2, %w2) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, groups = 1 : i64, layout = "NCHW", acc = f32} : (tensor<1x4x16x16xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x16x16xf32>
  %c = core.conv(%x2, %w) {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, groups = 1 : i64, layout = "NCHW", acc = f32} : (tensor<1x4x16x16xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x8x8xf32>
  func.return %a, %b, %c : tensor<1x8x14x14xf32>, tensor<1x4x16x16xf32>, tensor<1x8x8x8xf32>
}

// Depthwise with 2 spatial dims: one call of the runtime's rung_depthwise_float on the
// input, the weights and the result, with strides, dilations and pad_low as arguments.
// CHECK-LABEL: func.func @depthwise(%x: memref<1x4x6x6xf32>, %w: memref<4x1x3x3xf32>) -> memref<1x4x3x3xf32>
// CHECK-NOT:     kernel.matmul
// CHECK-NOT:     kernel.loop
// CHECK:         %[[Y:.*]] = kernel.alloc() : memref<1x4x3x3xf32>
// CHECK-NEXT:    kernel.call @depthwise_float(%x, %w, %[[Y]]) [2, 2, 1, 1, 1, 1] : memref<1x4x6x6xf32>, memref<4x1x3x3xf32>, memref<1x4x3x3xf32>
// CHECK-NEXT:    func.return %[[Y]] : memref<1x4x3x3xf32>
func.func @depthwise(%x: tensor<1x4x6x6xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %y = core.conv(%x, %w) {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 0, 0>, groups = 4 : i64, layout = "NCHW", acc = f32} : (tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x3x3xf32>
  func.return %y : tensor<1x4x3x3xf32>
}

// Depthwise of other ranks: the input is copied once into a zero-bordered buffer (only
// the border is zeroed), then each output point sums its static window in a carried
// value, with no bounds: the window unrolls and the row vectorizes in C.
// CHECK-LABEL: func.func @depthwise_1d(%x: memref<1x4x6xf32>, %w: memref<4x1x3xf32>) -> memref<1x4x3xf32>
// CHECK-NOT:     kernel.matmul
// CHECK:         %[[PAD:.*]] = kernel.alloc() : memref<1x4x7xf32>
// CHECK-NEXT:    kernel.loop (%[[PN:.*]], %[[PC:.*]]) in (1, 4) [parallel, parallel] {
// The left border is zeroed, the input copied one right:
// CHECK-NEXT:      kernel.loop (%{{.*}}) in (1) [parallel] {
// CHECK:           kernel.loop (%[[COL:.*]]) in (6) [parallel] {
// CHECK:             %[[V:.*]] = kernel.load %x[%[[PN]], %[[PC]], %[[COL]]] : memref<1x4x6xf32>
// CHECK:             kernel.store %[[V]], %[[PAD]][%[[PN]], %[[PC]], %{{.*}}] : memref<1x4x7xf32>
// CHECK:         kernel.loop (%[[N:.*]], %[[O:.*]], %[[OX:.*]]) in (1, 4, 3) [parallel, parallel, parallel] {
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[SUM:.*]] = kernel.loop (%[[KW:.*]]) in (3) [reduction] iter_args(%[[ACC:.*]] = %[[Z]] : f32) -> f32 {
// Stride 2: column OX*2 + KW of the padded buffer.
// CHECK-NEXT:        %[[S:.*]] = arith.constant 2 : index
// CHECK-NEXT:        %[[X2:.*]] = arith.muli %[[OX]], %[[S]] : index
// CHECK-NEXT:        %[[IX:.*]] = arith.addi %[[X2]], %[[KW]] : index
// CHECK-NEXT:        %[[ZI:.*]] = arith.constant 0 : index
// CHECK-NEXT:        %[[WV:.*]] = kernel.load %w[%[[O]], %[[ZI]], %[[KW]]] : memref<4x1x3xf32>
// CHECK-NEXT:        %[[XV:.*]] = kernel.load %[[PAD]][%[[N]], %[[O]], %[[IX]]] : memref<1x4x7xf32>
// CHECK-NEXT:        %[[P:.*]] = arith.mulf %[[WV]], %[[XV]] : f32
// CHECK-NEXT:        %[[NEXT:.*]] = arith.addf %[[ACC]], %[[P]] : f32
// CHECK-NEXT:        kernel.yield %[[NEXT]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      kernel.store %[[SUM]], %y[%[[N]], %[[O]], %[[OX]]] : memref<1x4x3xf32>
func.func @depthwise_1d(%x: tensor<1x4x6xf32>, %w: tensor<4x1x3xf32>) -> tensor<1x4x3xf32> {
  %y = core.conv(%x, %w) {strides = array<i64: 2>, dilations = array<i64: 1>, pad_low = array<i64: 1>, pad_high = array<i64: 0>, groups = 4 : i64, layout = "NCHW", acc = f32} : (tensor<1x4x6xf32>, tensor<4x1x3xf32>) -> tensor<1x4x3xf32>
  func.return %y : tensor<1x4x3xf32>
}

// Integers (ConvInteger's i32) are direct too, summing in i32.
// CHECK-LABEL: func.func @integer_1d(%x: memref<1x2x4xi32>, %w: memref<3x2x2xi32>) -> memref<1x3x3xi32>
// CHECK-NOT:     kernel.matmul
// CHECK:         kernel.loop (%{{.*}}) in (1, 3, 2, 2) [parallel, parallel, reduction, reduction] {
// CHECK:             %[[P:.*]] = arith.muli %{{.*}}, %{{.*}} : i32
// CHECK-NEXT:        %[[S:.*]] = arith.addi %{{.*}}, %[[P]] : i32
// CHECK-NEXT:        kernel.store %[[S]], %y
func.func @integer_1d(%x: tensor<1x2x4xi32>, %w: tensor<3x2x2xi32>) -> tensor<1x3x3xi32> {
  %y = core.conv(%x, %w) {strides = array<i64: 1>, dilations = array<i64: 1>, pad_low = array<i64: 0>, pad_high = array<i64: 0>, groups = 1 : i64, layout = "NCHW", acc = i32} : (tensor<1x2x4xi32>, tensor<3x2x2xi32>) -> tensor<1x3x3xi32>
  func.return %y : tensor<1x3x3xi32>
}

// f16 runs the f32 path on widened copies and narrows the result.
// CHECK-LABEL: func.func @half
// CHECK:         arith.extf %{{.*}} : f16 to f32
// CHECK:         arith.extf %{{.*}} : f16 to f32
// CHECK:         kernel.matmul
// CHECK:         arith.truncf %{{.*}} : f32 to f16
func.func @half(%x: tensor<1x2x3x3xf16>, %w: tensor<2x2x1x1xf16>) -> tensor<1x2x3x3xf16> {
  %y = core.conv(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, groups = 1 : i64, layout = "NCHW", acc = f16} : (tensor<1x2x3x3xf16>, tensor<2x2x1x1xf16>) -> tensor<1x2x3x3xf16>
  func.return %y : tensor<1x2x3x3xf16>
}
