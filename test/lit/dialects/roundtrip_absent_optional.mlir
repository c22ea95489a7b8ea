// Absent optional inputs and outputs: `none` in the middle survives a round
// trip, and absent trailing inputs/outputs, even when written out as `none`,
// print as left out.
// RUN: opt %s | opt | filecheck %s

// CHECK-LABEL: func.func @absent(
// CHECK-NEXT:    %c = onnx.Clip(%x, none, %hi) : (tensor<2x3xf32>, none, tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %lo = onnx.Clip(%x, %hi) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %r = onnx.Resize(%img, none, none, %sizes) {mode = "nearest"} : (tensor<1x1x2x2xf32>, none, none, tensor<4xi64>) -> tensor<1x1x4x6xf32>
// CHECK-NEXT:    %h = onnx.LSTM(%seq, %w, %rw) {hidden_size = 3 : i64} : (tensor<5x2x4xf32>, tensor<1x12x4xf32>, tensor<1x12x3xf32>) -> (none, tensor<1x2x3xf32>)
// CHECK-NEXT:    %y = onnx.LSTM(%seq, %w, %rw, none, %lens) {hidden_size = 3 : i64} : (tensor<5x2x4xf32>, tensor<1x12x4xf32>, tensor<1x12x3xf32>, none, tensor<2xi32>) -> tensor<5x1x2x3xf32>
// CHECK-NEXT:    %d = onnx.Dropout(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    func.return

func.func @absent(%x: tensor<2x3xf32>, %hi: tensor<f32>, %img: tensor<1x1x2x2xf32>, %sizes: tensor<4xi64>, %seq: tensor<5x2x4xf32>, %w: tensor<1x12x4xf32>, %rw: tensor<1x12x3xf32>, %lens: tensor<2xi32>) {
  %c = onnx.Clip(%x, none, %hi) : (tensor<2x3xf32>, none, tensor<f32>) -> tensor<2x3xf32>
  %lo = onnx.Clip(%x, %hi, none) : (tensor<2x3xf32>, tensor<f32>, none) -> tensor<2x3xf32>
  %r = onnx.Resize(%img, none, none, %sizes) {mode = "nearest"} : (tensor<1x1x2x2xf32>, none, none, tensor<4xi64>) -> tensor<1x1x4x6xf32>
  %h = onnx.LSTM(%seq, %w, %rw) {hidden_size = 3 : i64} : (tensor<5x2x4xf32>, tensor<1x12x4xf32>, tensor<1x12x3xf32>) -> (none, tensor<1x2x3xf32>)
  %y = onnx.LSTM(%seq, %w, %rw, none, %lens) {hidden_size = 3 : i64} : (tensor<5x2x4xf32>, tensor<1x12x4xf32>, tensor<1x12x3xf32>, none, tensor<2xi32>) -> (tensor<5x1x2x3xf32>, none, none)
  %d = onnx.Dropout(%x, none, none) : (tensor<2x3xf32>, none, none) -> (tensor<2x3xf32>, none)
  func.return
}
