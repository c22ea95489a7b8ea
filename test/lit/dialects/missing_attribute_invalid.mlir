// A required attribute must be present (DepthToSpace needs `blocksize`).
// RUN: not opt %s 2>&1 | filecheck %s

// CHECK-NOT: Traceback
// CHECK:     opt: error: {{.*}}missing_attribute_invalid.mlir: {{.*}}'blocksize'{{.*}}onnx.DepthToSpace
// CHECK-NEXT:  in operation:
// CHECK-NEXT:    %y = "onnx.DepthToSpace"(%a) <{mode = "DCR"}> : (tensor<1x8x2x2xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NOT: Traceback

func.func @f(%a: tensor<1x8x2x2xf32>) -> tensor<1x2x4x4xf32> {
  %y = onnx.DepthToSpace(%a) {mode = "DCR"} : (tensor<1x8x2x2xf32>) -> tensor<1x2x4x4xf32>
  func.return %y : tensor<1x2x4x4xf32>
}
