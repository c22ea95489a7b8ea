// RUN: not opt %s 2>&1 | filecheck %s

// Invalid MLIR text: one `opt: error:` line with the file, line and column,
// then xDSL's excerpt with a caret under the problem. No traceback.

func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = onnx.Relu(%a) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 tensor<2xf32>
}

// CHECK:      opt: error: {{.*}}opt_parse_invalid.mlir:8:18: Expected ':'
// CHECK-NEXT:   func.return %0 tensor<2xf32>
// CHECK-NEXT:                  ^^^^^^
// CHECK-NOT:  Traceback
