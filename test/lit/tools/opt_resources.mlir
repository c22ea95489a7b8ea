// RUN: opt %s | opt | filecheck %s
// RUN: opt %s --print-op-generic | opt | filecheck %s

// Weights live in resources. opt carries their blobs through the
// dialect_resources section, byte for byte, in both syntaxes; only blobs
// that the module still uses are printed.

func.func @weights() -> tensor<4xf32> {
  %w = onnx.Constant() {value = dense_resource<weights> : tensor<4xf32>} : () -> tensor<4xf32>
  func.return %w : tensor<4xf32>
}

{-#
  dialect_resources: {
    builtin: {
      weights: "0x040000000000803F000000400000404000008040",
      unused: "0x0400000001020304"
    }
  }
#-}

// CHECK:      onnx.Constant() {value = dense_resource<weights> : tensor<4xf32>}
// CHECK:      {-#
// CHECK-NEXT:   dialect_resources: {
// CHECK-NEXT:     builtin: {
// CHECK-NEXT:       weights: "0x040000000000803F000000400000404000008040"
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT: #-}
// CHECK-NOT:  unused
