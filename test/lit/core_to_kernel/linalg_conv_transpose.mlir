// A transposed conv scatters x[n, c, i] * w[c, o, k] into a zeroed full-size
// buffer at i*stride + k*dilation (always in range), then crops pad_low /
// pad_high out of it; a negative pad_high (output padding) reads zeros. With
// no padding the output itself is the full buffer.
// RUN: opt %s -p convert-core-to-kernel | filecheck %s

// CHECK-LABEL: func.func @strided(%x: memref<1x2x3xf32>, %w: memref<2x3x3xf32>) -> memref<1x3x6xf32>
// CHECK-NEXT:    %y = kernel.alloc() : memref<1x3x6xf32>
// CHECK-NEXT:    %[[F:.*]] = kernel.alloc() : memref<1x3x7xf32>
// CHECK:         kernel.loop (%[[N:.*]], %[[G:.*]], %[[O:.*]], %[[C:.*]], %[[K:.*]]) in (1, 1, 3, 2, 3) [parallel, parallel, parallel, reduction, reduction] {
// CHECK:           %[[WV:.*]] = kernel.load %w[%{{.*}}, %[[O]], %[[K]]] : memref<2x3x3xf32>
// CHECK-NEXT:      kernel.loop (%[[I:.*]]) in (3) [parallel] {
// CHECK-NEXT:        %[[XV:.*]] = kernel.load %x[%[[N]], %{{.*}}, %[[I]]] : memref<1x2x3xf32>
// CHECK-NEXT:        %[[S:.*]] = arith.constant 2 : index
// CHECK-NEXT:        %[[IS:.*]] = arith.muli %[[I]], %[[S]] : index
// CHECK-NEXT:        %[[POS:.*]] = arith.addi %[[IS]], %[[K]] : index
// CHECK-NEXT:        %[[OLD:.*]] = kernel.load %[[F]][%[[N]], %{{.*}}, %[[POS]]] : memref<1x3x7xf32>
// CHECK-NEXT:        %[[P:.*]] = arith.mulf %[[WV]], %[[XV]] : f32
// CHECK-NEXT:        %[[T:.*]] = arith.addf %[[OLD]], %[[P]] : f32
// CHECK-NEXT:        kernel.store %[[T]], %[[F]][%[[N]], %{{.*}}, %[[POS]]] : memref<1x3x7xf32>
// The crop reads full[e + pad_low], clamped, and selects 0 outside:
// CHECK:         kernel.loop (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 3, 6) [parallel, parallel, parallel] {
// CHECK:           arith.cmpi sge
// CHECK:           arith.cmpi slt
// CHECK:           %[[V:.*]] = kernel.load %[[F]]
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[R:.*]] = arith.select %{{.*}}, %[[V]], %[[Z]] : f32
// CHECK-NEXT:      kernel.store %[[R]], %y
func.func @strided(%x: tensor<1x2x3xf32>, %w: tensor<2x3x3xf32>) -> tensor<1x3x6xf32> {
  %y = core.conv_transpose(%x, %w) {strides = array<i64: 2>, dilations = array<i64: 1>, pad_low = array<i64: 1>, pad_high = array<i64: 0>, groups = 1 : i64, acc = f32} : (tensor<1x2x3xf32>, tensor<2x3x3xf32>) -> tensor<1x3x6xf32>
  func.return %y : tensor<1x3x6xf32>
}

// CHECK-LABEL: func.func @unpadded_groups(%x: memref<1x4x2x2xf32>, %w: memref<4x1x2x2xf32>) -> memref<1x2x3x3xf32>
// CHECK-NEXT:    %y = kernel.alloc() : memref<1x2x3x3xf32>
// CHECK-NEXT:    kernel.loop (%{{.*}}) in (1, 2, 3, 3) [parallel, parallel, parallel, parallel] {
// CHECK:         kernel.loop (%{{.*}}) in (1, 2, 1, 2, 2, 2) [parallel, parallel, parallel, reduction, reduction, reduction] {
// CHECK:           kernel.store %{{.*}}, %y
// CHECK-NOT:     kernel.alloc
// CHECK:         func.return %y
func.func @unpadded_groups(%x: tensor<1x4x2x2xf32>, %w: tensor<4x1x2x2xf32>) -> tensor<1x2x3x3xf32> {
  %y = core.conv_transpose(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, groups = 2 : i64, acc = f32} : (tensor<1x4x2x2xf32>, tensor<4x1x2x2xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}
