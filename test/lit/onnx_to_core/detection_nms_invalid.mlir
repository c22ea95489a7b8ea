// NonMaxSuppression forms the lowering refuses, each reported with its reason:
// boxes and scores whose static box counts differ, a center_point_box other
// than 0 or 1, and a scalar input of several values.
// RUN: opt %s -p convert-onnx-to-core --verify-diagnostics | filecheck %s

// CHECK-NOT: Traceback
// CHECK:     failed to lower 'onnx.NonMaxSuppression' (opset {{[0-9]+}}) at {{.*}}: NonMaxSuppression: boxes tensor<1x6x4xf32> and scores tensor<1x1x5xf32> differ in their batches or boxes
// CHECK-NEXT: failed to lower 'onnx.NonMaxSuppression' (opset {{[0-9]+}}) at {{.*}}: NonMaxSuppression: center_point_box must be 0 or 1, got 2
// CHECK-NEXT: failed to lower 'onnx.NonMaxSuppression' (opset {{[0-9]+}}) at {{.*}}: NonMaxSuppression: iou_threshold must hold one value, got tensor<2xf32>
func.func @mismatched(%boxes: tensor<1x6x4xf32>, %scores: tensor<1x1x5xf32>) -> tensor<?x3xi64> {
  %sel = onnx.NonMaxSuppression(%boxes, %scores) : (tensor<1x6x4xf32>, tensor<1x1x5xf32>) -> tensor<?x3xi64>
  func.return %sel : tensor<?x3xi64>
}

func.func @bad_format(%boxes: tensor<1x6x4xf32>, %scores: tensor<1x1x6xf32>) -> tensor<?x3xi64> {
  %sel = onnx.NonMaxSuppression(%boxes, %scores) {center_point_box = 2 : i64} : (tensor<1x6x4xf32>, tensor<1x1x6xf32>) -> tensor<?x3xi64>
  func.return %sel : tensor<?x3xi64>
}

func.func @two_thresholds(%boxes: tensor<1x6x4xf32>, %scores: tensor<1x1x6xf32>, %max: tensor<i64>, %iou: tensor<2xf32>) -> tensor<?x3xi64> {
  %sel = onnx.NonMaxSuppression(%boxes, %scores, %max, %iou) : (tensor<1x6x4xf32>, tensor<1x1x6xf32>, tensor<i64>, tensor<2xf32>) -> tensor<?x3xi64>
  func.return %sel : tensor<?x3xi64>
}
