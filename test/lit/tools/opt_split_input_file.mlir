// RUN: opt %s --split-input-file | filecheck %s
// RUN: opt %s --split-input-file | opt --split-input-file | filecheck %s

// Each chunk is read, processed and printed on its own, and the outputs are
// joined with the same separator line. Both chunks name their weights `w`: each keeps its
// own data, because every chunk gets its own resource store.

func.func @first() -> tensor<2xf32> {
  %w = onnx.Constant() {value = dense_resource<w> : tensor<2xf32>} : () -> tensor<2xf32>
  func.return %w : tensor<2xf32>
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
  %w = onnx.Constant() {value = dense_resource<w> : tensor<2xf32>} : () -> tensor<2xf32>
  func.return %w : tensor<2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000404000008040"
    }
  }
#-}

// CHECK-LABEL: func.func @first()
// CHECK:         onnx.Constant() {value = dense_resource<w> : tensor<2xf32>}
// CHECK:       w: "0x040000000000803F00000040"
// CHECK:       {{^// -{5}$}}
// CHECK-LABEL: func.func @second()
// CHECK:         onnx.Constant() {value = dense_resource<w> : tensor<2xf32>}
// CHECK:       w: "0x040000000000404000008040"
