// The generic syntax carries everything the custom syntax does: properties,
// segment sizes for absent optional inputs/outputs, regions and resources.
// Printing generically and reading back gives the custom form again.
// RUN: opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: opt %s --print-op-generic | opt | filecheck %s

// GENERIC:      %c = "onnx.Clip"(%x, %hi) <{operandSegmentSizes = array<i32: 1, 0, 1>}> : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// GENERIC:      %t = "onnx.Transpose"(%x) <{perm = array<i64: 1, 0>}> : (tensor<2x3xf32>) -> tensor<3x2xf32>
// GENERIC:      %h = "onnx.LSTM"(%seq, %w, %rw) <{hidden_size = 3 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 1, 0>}> : (tensor<5x2x4xf32>, tensor<1x12x4xf32>, tensor<1x12x3xf32>) -> tensor<1x2x3xf32>
// GENERIC:      %y = "onnx.If"(%cond) ({
// GENERIC-NEXT:   "onnx.Yield"(%x) : (tensor<2x3xf32>) -> ()
// GENERIC-NEXT: }, {
// GENERIC-NEXT:   %n = "onnx.Neg"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// GENERIC-NEXT:   "onnx.Yield"(%n) : (tensor<2x3xf32>) -> ()
// GENERIC-NEXT: }) : (tensor<i1>) -> tensor<2x3xf32>
// GENERIC:      %k = "onnx.Constant"() <{value = dense_resource<k> : tensor<2xf32>}> : () -> tensor<2xf32>
// GENERIC:      k: "0x040000000000803F00000040"

// CHECK-LABEL: func.func @generic(
// CHECK-NEXT:    %c = onnx.Clip(%x, none, %hi) : (tensor<2x3xf32>, none, tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %t = onnx.Transpose(%x) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    %h = onnx.LSTM(%seq, %w, %rw) {hidden_size = 3 : i64} : (tensor<5x2x4xf32>, tensor<1x12x4xf32>, tensor<1x12x3xf32>) -> (none, tensor<1x2x3xf32>)
// CHECK-NEXT:    %y = onnx.If(%cond) : (tensor<i1>) -> tensor<2x3xf32> then_branch {
// CHECK-NEXT:      onnx.Yield %x : tensor<2x3xf32>
// CHECK-NEXT:    } else_branch {
// CHECK-NEXT:      %n = onnx.Neg(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:      onnx.Yield %n : tensor<2x3xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %k = onnx.Constant() {value = dense_resource<k> : tensor<2xf32>} : () -> tensor<2xf32>
// CHECK:         k: "0x040000000000803F00000040"

func.func @generic(%x: tensor<2x3xf32>, %hi: tensor<f32>, %seq: tensor<5x2x4xf32>, %w: tensor<1x12x4xf32>, %rw: tensor<1x12x3xf32>, %cond: tensor<i1>) {
  %c = onnx.Clip(%x, none, %hi) : (tensor<2x3xf32>, none, tensor<f32>) -> tensor<2x3xf32>
  %t = onnx.Transpose(%x) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %h = onnx.LSTM(%seq, %w, %rw) {hidden_size = 3 : i64} : (tensor<5x2x4xf32>, tensor<1x12x4xf32>, tensor<1x12x3xf32>) -> (none, tensor<1x2x3xf32>)
  %y = onnx.If(%cond) : (tensor<i1>) -> tensor<2x3xf32> then_branch {
    onnx.Yield %x : tensor<2x3xf32>
  } else_branch {
    %n = onnx.Neg(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    onnx.Yield %n : tensor<2x3xf32>
  }
  %k = onnx.Constant() {value = dense_resource<k> : tensor<2xf32>} : () -> tensor<2xf32>
  func.return
}

{-#
  dialect_resources: {
    builtin: {
      k: "0x040000000000803F00000040"
    }
  }
#-}
