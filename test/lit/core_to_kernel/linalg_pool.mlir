// Ordinary pooling (many output points per window offset) reduces each output
// point's whole window in a static nest, which C generation unrolls so the row
// loop vectorizes. Where the windows reach past the input, they read a copy of
// it bordered with the reduction's identity (-inf or the smallest integer for
// max, 0 for sum): only the border is filled, the rest copied, and the border
// past the end is only as wide as the last window reaches. With few output
// points (global pooling) each point reduces the window offsets that fall
// inside the input. Half types sum in f32.
// RUN: opt %s -p convert-core-to-kernel | filecheck %s

// 5x5, padded by 1, 3x3 windows of stride 2: the last window ends at padded
// row 6, so the copy is 7x7.
// CHECK-LABEL: func.func @max_padded(%x: memref<1x2x5x5xf32>) -> memref<1x2x3x3xf32>
// CHECK-NEXT:    %y = kernel.alloc() : memref<1x2x3x3xf32>
// CHECK-NEXT:    %[[P:.*]] = kernel.alloc() : memref<1x2x7x7xf32>
// CHECK-NEXT:    kernel.loop (%[[N0:.*]], %[[C0:.*]]) in (1, 2) [parallel, parallel] {
// First the top border row:
// CHECK-NEXT:      kernel.loop (%{{.*}}, %{{.*}}) in (1, 7) [parallel, parallel] {
// CHECK-NEXT:        %[[NEG:.*]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:        kernel.store %[[NEG]], %[[P]]
// Then each input row, between a left and a right border element:
// CHECK:           kernel.loop (%{{.*}}) in (5) [parallel] {
// CHECK:             kernel.loop (%{{.*}}) in (1) [parallel] {
// CHECK-NEXT:          arith.constant 0xff800000 : f32
// CHECK:             kernel.loop (%{{.*}}) in (5) [parallel] {
// CHECK:               %[[V:.*]] = kernel.load %x
// CHECK:               kernel.store %[[V]], %[[P]]
// CHECK:             kernel.loop (%{{.*}}) in (1) [parallel] {
// CHECK-NEXT:          arith.constant 0xff800000 : f32
// CHECK:           kernel.loop (%{{.*}}, %{{.*}}) in (1, 7) [parallel, parallel] {
// CHECK-NEXT:        arith.constant 0xff800000 : f32
// The windows, with no bounds to test:
// CHECK:         kernel.loop (%[[N:.*]], %[[C:.*]], %[[OH:.*]], %[[OW:.*]]) in (1, 2, 3, 3) [parallel, parallel, parallel, parallel] {
// CHECK-NEXT:      %[[INIT:.*]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:      %[[R:.*]] = kernel.loop (%[[KH:.*]], %[[KW:.*]]) in (3, 3) [reduction, reduction] iter_args(%[[ACC:.*]] = %[[INIT]] : f32) -> f32 {
// CHECK-NEXT:        %[[S:.*]] = arith.constant 2 : index
// CHECK-NEXT:        %[[H0:.*]] = arith.muli %[[OH]], %[[S]] : index
// CHECK-NEXT:        %[[H:.*]] = arith.addi %[[H0]], %[[KH]] : index
// CHECK-NEXT:        %[[S2:.*]] = arith.constant 2 : index
// CHECK-NEXT:        %[[W0:.*]] = arith.muli %[[OW]], %[[S2]] : index
// CHECK-NEXT:        %[[W:.*]] = arith.addi %[[W0]], %[[KW]] : index
// CHECK-NEXT:        %[[X:.*]] = kernel.load %[[P]][%[[N]], %[[C]], %[[H]], %[[W]]] : memref<1x2x7x7xf32>
// CHECK-NEXT:        %[[M:.*]] = arith.maximumf %[[ACC]], %[[X]] : f32
// CHECK-NEXT:        kernel.yield %[[M]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      kernel.store %[[R]], %y[%[[N]], %[[C]], %[[OH]], %[[OW]]] : memref<1x2x3x3xf32>
func.func @max_padded(%x: tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32> {
  %y = core.pool max(%x) {window = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}

// CHECK-LABEL: func.func @global_sum(%x: memref<1x2x3x3xf32>) -> memref<1x2x1x1xf32>
// CHECK-NEXT:    %y = kernel.alloc() : memref<1x2x1x1xf32>
// CHECK-NEXT:    kernel.loop (%[[N:.*]], %[[C:.*]], %[[H:.*]], %[[W:.*]]) in (1, 2, 1, 1) [parallel, parallel, parallel, parallel] {
// CHECK:           %[[INIT:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:           %[[R:.*]] = kernel.loop (%{{.*}}, %{{.*}}) in (%{{.*}}, %{{.*}}) [reduction, reduction] iter_args(%[[ACC:.*]] = %[[INIT]] : f32) -> f32 {
// CHECK:             %[[V:.*]] = kernel.load %x[%[[N]], %[[C]], %{{.*}}, %{{.*}}] : memref<1x2x3x3xf32>
// CHECK-NEXT:        %[[S:.*]] = arith.addf %[[ACC]], %[[V]] : f32
// CHECK-NEXT:        kernel.yield %[[S]] : f32
// CHECK:           kernel.store %[[R]], %y[%[[N]], %[[C]], %[[H]], %[[W]]] : memref<1x2x1x1xf32>
func.func @global_sum(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x1x1xf32> {
  %y = core.pool sum(%x) {window = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : (tensor<1x2x3x3xf32>) -> tensor<1x2x1x1xf32>
  func.return %y : tensor<1x2x1x1xf32>
}

// No padding: no copy. The sum runs in f32 and is narrowed once per point.
// CHECK-LABEL: func.func @sum_half_dynamic(%x: memref<?x2x4xf16>) -> memref<?x2x2xf16>
// CHECK-NEXT:    %[[N:.*]] = kernel.dim %x[0] : memref<?x2x4xf16>
// CHECK-NEXT:    %y = kernel.alloc(%[[N]]) : memref<?x2x2xf16>
// CHECK-NEXT:    kernel.loop (%{{.*}}) in (%[[N]], 2, 2) [parallel, parallel, parallel] {
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[R:.*]] = kernel.loop (%{{.*}}) in (2) [reduction] iter_args(%[[ACC:.*]] = %[[Z]] : f32) -> f32 {
// CHECK:             %[[V:.*]] = kernel.load %x
// CHECK-NEXT:        %[[E:.*]] = arith.extf %[[V]] : f16 to f32
// CHECK-NEXT:        %[[S:.*]] = arith.addf %[[ACC]], %[[E]] : f32
// CHECK-NEXT:        kernel.yield %[[S]] : f32
// CHECK:           %[[T:.*]] = arith.truncf %[[R]] : f32 to f16
// CHECK-NEXT:      kernel.store %[[T]], %y
func.func @sum_half_dynamic(%x: tensor<?x2x4xf16>) -> tensor<?x2x2xf16> {
  %y = core.pool sum(%x) {window = array<i64: 2>, strides = array<i64: 2>, dilations = array<i64: 1>, pad_low = array<i64: 0>, pad_high = array<i64: 0>} : (tensor<?x2x4xf16>) -> tensor<?x2x2xf16>
  func.return %y : tensor<?x2x2xf16>
}

// Integer max starts from the smallest value; dilation 2 steps the window.
// CHECK-LABEL: func.func @max_int_dilated(%x: memref<1x1x5xi8>) -> memref<1x1x3xi8>
// CHECK:         kernel.loop (%{{.*}}, %{{.*}}, %[[E:.*]]) in (1, 1, 3) [parallel, parallel, parallel] {
// CHECK-NEXT:      %[[INIT:.*]] = arith.constant -128 : i8
// CHECK-NEXT:      kernel.loop (%[[K:.*]]) in (2) [reduction] iter_args(%[[ACC:.*]] = %[[INIT]] : i8) -> i8 {
// CHECK-NEXT:        %[[D:.*]] = arith.constant 2 : index
// CHECK-NEXT:        %[[KD:.*]] = arith.muli %[[K]], %[[D]] : index
// CHECK-NEXT:        %[[I:.*]] = arith.addi %[[E]], %[[KD]] : index
// CHECK-NEXT:        %[[V:.*]] = kernel.load %x[%{{.*}}, %{{.*}}, %[[I]]]
// CHECK-NEXT:        arith.maxsi %[[ACC]], %[[V]] : i8
func.func @max_int_dilated(%x: tensor<1x1x5xi8>) -> tensor<1x1x3xi8> {
  %y = core.pool max(%x) {window = array<i64: 2>, strides = array<i64: 1>, dilations = array<i64: 2>, pad_low = array<i64: 0>, pad_high = array<i64: 0>} : (tensor<1x1x5xi8>) -> tensor<1x1x3xi8>
  func.return %y : tensor<1x1x3xi8>
}
