// Pooling never loads padding: the bounds of each loop are the offsets that fall
// inside the input. With many output points per window offset (ordinary
// pooling) the output starts at the identity (-inf or the smallest integer for
// max, 0 for sum) and each window offset combines the input into the output
// range that sees it, a vectorizable pass along the last dim. With few output
// points (global pooling) each point reduces its window. Half types sum in f32.
// RUN: opt %s -p convert-core-to-kernel | filecheck %s

// CHECK-LABEL: func.func @max_padded(%x: memref<1x2x5x5xf32>) -> memref<1x2x3x3xf32>
// CHECK-NEXT:    %y = kernel.alloc() : memref<1x2x3x3xf32>
// CHECK-NEXT:    kernel.loop (%{{.*}}) in (1, 2, 3, 3) [parallel, parallel, parallel, parallel] {
// CHECK-NEXT:      %[[INIT:.*]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:      kernel.store %[[INIT]], %y
// CHECK:         kernel.loop (%[[N:.*]], %[[C:.*]], %[[KH:.*]], %[[KW:.*]]) in (1, 2, 3, 3) [parallel, parallel, reduction, reduction] {
// First output row whose window row kh is inside: clamp(ceildiv(pad - kh, stride), 0, 3):
// CHECK-NEXT:      %[[P:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[T:.*]] = arith.subi %[[P]], %[[KH]] : index
// CHECK-NEXT:      %[[S:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[Q:.*]] = arith.ceildivsi %[[T]], %[[S]] : index
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[LO0:.*]] = arith.maxsi %[[Q]], %[[Z]] : index
// CHECK-NEXT:      %[[E:.*]] = arith.constant 3 : index
// CHECK-NEXT:      %[[LO:.*]] = arith.minsi %[[LO0]], %[[E]] : index
// CHECK:           kernel.loop (%{{.*}}, %{{.*}}) in (%{{.*}}, %{{.*}}) [parallel, parallel] {
// CHECK:             %[[V:.*]] = kernel.load %x[%[[N]], %[[C]], %{{.*}}, %{{.*}}] : memref<1x2x5x5xf32>
// CHECK-NEXT:        %[[OLD:.*]] = kernel.load %y[%[[N]], %[[C]], %{{.*}}, %{{.*}}] : memref<1x2x3x3xf32>
// CHECK-NEXT:        %[[M:.*]] = arith.maximumf %[[OLD]], %[[V]] : f32
// CHECK-NEXT:        kernel.store %[[M]], %y[%[[N]], %[[C]], %{{.*}}, %{{.*}}] : memref<1x2x3x3xf32>
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

// CHECK-LABEL: func.func @sum_half_dynamic(%x: memref<?x2x4xf16>) -> memref<?x2x2xf16>
// CHECK-NEXT:    %[[N:.*]] = kernel.dim %x[0] : memref<?x2x4xf16>
// CHECK-NEXT:    %y = kernel.alloc(%[[N]]) : memref<?x2x2xf16>
// CHECK-NEXT:    %[[ACC:.*]] = kernel.alloc(%[[N]]) : memref<?x2x2xf32>
// CHECK:         kernel.loop (%{{.*}}) in (%[[N]], 2, 2) [parallel, parallel, reduction] {
// CHECK:             %[[V:.*]] = kernel.load %x
// CHECK-NEXT:        %[[E:.*]] = arith.extf %[[V]] : f16 to f32
// CHECK-NEXT:        %[[OLD:.*]] = kernel.load %[[ACC]]
// CHECK-NEXT:        %[[S:.*]] = arith.addf %[[OLD]], %[[E]] : f32
// CHECK-NEXT:        kernel.store %[[S]], %[[ACC]]
// CHECK:         kernel.loop (%{{.*}}) in (%[[N]], 2, 2) [parallel, parallel, parallel] {
// CHECK-NEXT:      %[[W:.*]] = kernel.load %[[ACC]]
// CHECK-NEXT:      %[[T:.*]] = arith.truncf %[[W]] : f32 to f16
// CHECK-NEXT:      kernel.store %[[T]], %y
func.func @sum_half_dynamic(%x: tensor<?x2x4xf16>) -> tensor<?x2x2xf16> {
  %y = core.pool sum(%x) {window = array<i64: 2>, strides = array<i64: 2>, dilations = array<i64: 1>, pad_low = array<i64: 0>, pad_high = array<i64: 0>} : (tensor<?x2x4xf16>) -> tensor<?x2x2xf16>
  func.return %y : tensor<?x2x2xf16>
}

// Integer max starts from the smallest value; dilation 2 steps the window.
// CHECK-LABEL: func.func @max_int_dilated(%x: memref<1x1x5xi8>) -> memref<1x1x3xi8>
// CHECK:           %[[INIT:.*]] = arith.constant -128 : i8
// CHECK-NEXT:      kernel.store %[[INIT]], %y
// CHECK:         kernel.loop (%{{.*}}, %{{.*}}, %[[K:.*]]) in (1, 1, 2) [parallel, parallel, reduction] {
// CHECK-NEXT:      %[[D:.*]] = arith.constant 2 : index
// CHECK-NEXT:      arith.muli %[[K]], %[[D]] : index
// CHECK:             %[[V:.*]] = kernel.load %x
// CHECK-NEXT:        %[[OLD:.*]] = kernel.load %y
// CHECK-NEXT:        arith.maxsi %[[OLD]], %[[V]] : i8
func.func @max_int_dilated(%x: tensor<1x1x5xi8>) -> tensor<1x1x3xi8> {
  %y = core.pool max(%x) {window = array<i64: 2>, strides = array<i64: 1>, dilations = array<i64: 2>, pad_low = array<i64: 0>, pad_high = array<i64: 0>} : (tensor<1x1x5xi8>) -> tensor<1x1x3xi8>
  func.return %y : tensor<1x1x3xi8>
}
