// With --split-input-file, each chunk is parsed on its own: two chunks may use
// the same resource name for different data, and each keeps its own bytes.
// RUN: opt %s --split-input-file | filecheck %s

// CHECK-LABEL: func.func @first(
// CHECK:       dense_resource<w> : tensor<2xf32>
// CHECK:       w: "0x040000000000803F00000040"
// CHECK:       {{^}}// {{-----}}
// CHECK-LABEL: func.func @second(
// CHECK:       dense_resource<w> : tensor<2xf32>
// CHECK:       w: "0x040000000000404000008040"

func.func @first() -> tensor<2xf32> {
  %r = onnx.Constant() {value = dense_resource<w> : tensor<2xf32>} : () -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803F00000040"
    }
  }
#-}

// -----

func.func @second() -> tensor<2xf32> {
  %r = onnx.Constant() {value = dense_resource<w> : tensor<2xf32>} : () -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000404000008040"
    }
  }
#-}
