// dense_resource constants keep their bytes through two round trips: the
// `{-# dialect_resources #-}` section is read and written again, and only the
// blobs still in use are written.
// RUN: opt %s | opt | filecheck %s

// CHECK-LABEL: func.func @weights(
// CHECK-NEXT:    %w = onnx.Constant() {value = dense_resource<weights> : tensor<20xf32>} : () -> tensor<20xf32>
// CHECK-NEXT:    %b = onnx.Constant() {value = dense_resource<bias_0> : tensor<2x3xi32>} : () -> tensor<2x3xi32>
// CHECK-NEXT:    %y = onnx.Add(%x, %w) : (tensor<20xf32>, tensor<20xf32>) -> tensor<20xf32>
// CHECK:       {-#
// CHECK-NEXT:    dialect_resources: {
// CHECK-NEXT:      builtin: {
// CHECK-NEXT:        bias_0: "0x04000000010000000200000003000000040000000500000006000000",
// CHECK-NEXT:        weights: "0x04000000000000000000803F0000004000004040000080400000A0400000C0400000E040000000410000104100002041000030410000404100005041000060410000704100008041000088410000904100009841"
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  #-}
// CHECK-NOT:   unused

func.func @weights(%x: tensor<20xf32>) -> tensor<20xf32> {
  %w = onnx.Constant() {value = dense_resource<weights> : tensor<20xf32>} : () -> tensor<20xf32>
  %b = onnx.Constant() {value = dense_resource<bias_0> : tensor<2x3xi32>} : () -> tensor<2x3xi32>
  %y = onnx.Add(%x, %w) : (tensor<20xf32>, tensor<20xf32>) -> tensor<20xf32>
  func.return %y : tensor<20xf32>
}

{-#
  dialect_resources: {
    builtin: {
      weights: "0x04000000000000000000803F0000004000004040000080400000A0400000C0400000E040000000410000104100002041000030410000404100005041000060410000704100008041000088410000904100009841",
      bias_0: "0x04000000010000000200000003000000040000000500000006000000",
      unused: "0x0400000001000000"
    }
  }
#-}
