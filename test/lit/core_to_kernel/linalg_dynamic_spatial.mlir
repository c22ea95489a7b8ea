// Conv and pooling over `?` spatial dims: each output size is computed at run
// time from the input's `kernel.dim`, `floor((D + pads - extent) / stride) + 1`,
// and is never negative (an input smaller than the window gives an empty dim);
// the loops then run to those run-time bounds.
// RUN: opt %s -p convert-core-to-kernel | filecheck %s

// CHECK-LABEL: func.func @conv_dynamic_spatial(%x: memref<1x2x?x?xf32>, %w: memref<4x1x3x3xf32>) -> memref<1x4x?x?xf32>
// CHECK-NEXT:    %[[H:.*]] = kernel.dim %x[2] : memref<1x2x?x?xf32>
// CHECK-NEXT:    %[[W:.*]] = kernel.dim %x[3] : memref<1x2x?x?xf32>
// H + 1 + 1 - 3, floor-divided by the stride 2, plus 1, at least 0:
// CHECK-NEXT:    %[[P:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[HP:.*]] = arith.addi %[[H]], %[[P]] : index
// CHECK-NEXT:    %[[E:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[SPAN:.*]] = arith.subi %[[HP]], %[[E]] : index
// CHECK-NEXT:    %[[S:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[Q:.*]] = arith.floordivsi %[[SPAN]], %[[S]] : index
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[Q1:.*]] = arith.addi %[[Q]], %[[ONE]] : index
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[OH:.*]] = arith.maxsi %[[Q1]], %[[ZERO]] : index
// Stride 1 along W needs no division; the dilated window spans 5:
// CHECK-NEXT:    %[[P2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[WP:.*]] = arith.addi %[[W]], %[[P2]] : index
// CHECK-NEXT:    %[[E2:.*]] = arith.constant 5 : index
// CHECK-NEXT:    %[[SPAN2:.*]] = arith.subi %[[WP]], %[[E2]] : index
// CHECK-NEXT:    %[[ONE2:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[R1:.*]] = arith.addi %[[SPAN2]], %[[ONE2]] : index
// CHECK-NEXT:    %[[ZERO2:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[OW:.*]] = arith.maxsi %[[R1]], %[[ZERO2]] : index
// CHECK-NEXT:    %y = kernel.alloc(%[[OH]], %[[OW]]) : memref<1x4x?x?xf32>
// The depthwise conv is one call of the runtime's, which reads the run-time sizes from
// its buffers:
// CHECK-NEXT:    kernel.call @depthwise_float(%x, %w, %y) [2, 1, 1, 2, 1, 0] : memref<1x2x?x?xf32>, memref<4x1x3x3xf32>, memref<1x4x?x?xf32>
// CHECK-NEXT:    func.return %y : memref<1x4x?x?xf32>
func.func @conv_dynamic_spatial(%x: tensor<1x2x?x?xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x?x?xf32> {
  %y = core.conv(%x, %w) {strides = array<i64: 2, 1>, dilations = array<i64: 1, 2>, pad_low = array<i64: 1, 0>, pad_high = array<i64: 1, 2>, groups = 2 : i64, layout = "NCHW", acc = f32} : (tensor<1x2x?x?xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x?x?xf32>
  func.return %y : tensor<1x4x?x?xf32>
}

// An f32 conv with several channels per group goes through im2col and the
// microkernel; the columns buffer is sized by the run-time output dims.
// CHECK-LABEL: func.func @conv_gemm_dynamic_spatial(
// CHECK:         %[[OH:.*]] = arith.maxsi %{{.*}}, %{{.*}} : index
// CHECK:         %[[OW:.*]] = arith.maxsi %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    %y = kernel.alloc(%[[OH]], %[[OW]]) : memref<1x4x?x?xf32>
// CHECK:         %[[COLS:.*]] = kernel.alloc(%[[OH]], %[[OW]]) : memref<1x3x3x3x?x?xf32>
// CHECK-NEXT:    kernel.call @im2col_float(%x, %[[COLS]]) [1, 1, 1, 1, 1, 1] : memref<1x3x?x?xf32>, memref<1x3x3x3x?x?xf32>
// CHECK:         kernel.matmul
func.func @conv_gemm_dynamic_spatial(%x: tensor<1x3x?x?xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x?x?xf32> {
  %y = core.conv(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, groups = 1 : i64, layout = "NCHW", acc = f32} : (tensor<1x3x?x?xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x?x?xf32>
  func.return %y : tensor<1x4x?x?xf32>
}

// CHECK-LABEL: func.func @max_pool_dynamic_spatial(%x: memref<1x2x?x?xf32>) -> memref<1x2x?x?xf32>
// CHECK:         %[[Q:.*]] = arith.floordivsi %{{.*}}, %{{.*}} : index
// CHECK:         %[[OH:.*]] = arith.maxsi %{{.*}}, %{{.*}} : index
// CHECK:         %[[OW:.*]] = arith.maxsi %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    %y = kernel.alloc(%[[OH]], %[[OW]]) : memref<1x2x?x?xf32>
// With run-time sizes the copy takes the whole high padding (here 1 each side):
// CHECK:         %[[PH:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK:         %[[PW:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    %[[P:.*]] = kernel.alloc(%[[PH]], %[[PW]]) : memref<1x2x?x?xf32>
// CHECK:         kernel.loop (%{{.*}}) in (1, 2, %[[OH]], %[[OW]]) [parallel, parallel, parallel, parallel] {
// CHECK:           kernel.loop (%{{.*}}, %{{.*}}) in (3, 3) [reduction, reduction]
// CHECK:             kernel.load %[[P]]
// CHECK-NEXT:        arith.maximumf
func.func @max_pool_dynamic_spatial(%x: tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32> {
  %y = core.pool max(%x) {window = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : (tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32>
  func.return %y : tensor<1x2x?x?xf32>
}
