// RUN: opt %s | opt | filecheck %s

// What opt prints, opt reads back: an onnx-dialect module survives a round
// trip through the custom syntax, with its attributes and node names (the
// locations). A trailing absent optional input (`none`) is left out.

func.func @add_conv(%a: tensor<1x3x8x8xf32>, %b: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %0 = onnx.Add(%a, %b) : (tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> loc("add_0")
  %1 = onnx.Conv(%0, %w, none) {strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x3x3xf32> loc("conv_3")
  func.return %1 : tensor<1x4x3x3xf32>
}

// CHECK:      builtin.module {
// CHECK-NEXT:   func.func @add_conv(%a: tensor<1x3x8x8xf32>, %b: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32> {
// CHECK-NEXT:     %0 = onnx.Add(%a, %b) : (tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> loc("add_0")
// CHECK-NEXT:     %1 = onnx.Conv(%0, %w) {strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32> loc("conv_3")
// CHECK-NEXT:     func.return %1 : tensor<1x4x3x3xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }
