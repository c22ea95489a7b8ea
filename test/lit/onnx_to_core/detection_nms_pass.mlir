// NonMaxSuppression → one core.non_max_suppression, whose [?, 3] result size
// only the run knows. Its scalar inputs become rank-0 tensors (a [1] tensor
// is reshaped); an absent max_output_boxes_per_class or iou_threshold is the
// constant 0, an absent score_threshold an absent operand (no value keeps NaN
// scores as "no threshold" does). A given iou_threshold is checked in [0, 1]
// at run time (onnxruntime refuses others too), and dims only the run knows
// are checked before the op reads them: boxes' 4 numbers per box, the
// batches and boxes of boxes against scores, a scalar's single value, and a
// count of kept boxes that the model declares.
// RUN: opt %s -p convert-onnx-to-core | filecheck %s

// CHECK-LABEL: func.func @all_inputs(
// CHECK-NEXT:    %[[MAX:.*]] = core.reshape(%max) : (tensor<1xi64>) -> tensor<i64>
// CHECK-NEXT:    %[[IOU:.*]] = core.reshape(%iou) : (tensor<1xf32>) -> tensor<f32>
// CHECK-NEXT:    %[[ZERO:.*]] = core.constant() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[GE:.*]] = core.compare ge(%[[IOU]], %[[ZERO]]) : (tensor<f32>, tensor<f32>) -> tensor<i1>
// CHECK-NEXT:    %[[ONE:.*]] = core.constant() {value = dense<1.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[LE:.*]] = core.compare le(%[[IOU]], %[[ONE]]) : (tensor<f32>, tensor<f32>) -> tensor<i1>
// CHECK-NEXT:    %[[OK:.*]] = core.binary and(%[[GE]], %[[LE]])
// CHECK-NEXT:    %[[CHECKED:.*]] = core.check(%[[IOU]], %[[OK]], %[[IOU]]) {message = "NonMaxSuppression: iou_threshold must be in range [0, 1]"} : (tensor<f32>, tensor<i1>, tensor<f32>) -> tensor<f32>
// CHECK-NEXT:    %sel = core.non_max_suppression(%boxes, %scores, %[[MAX]], %[[CHECKED]], %thr) {center_point_box = 1 : i64} : (tensor<2x6x4xf32>, tensor<2x3x6xf32>, tensor<i64>, tensor<f32>, tensor<f32>) -> tensor<?x3xi64>
// CHECK-NEXT:    func.return %sel : tensor<?x3xi64>
func.func @all_inputs(%boxes: tensor<2x6x4xf32>, %scores: tensor<2x3x6xf32>, %max: tensor<1xi64>, %iou: tensor<1xf32>, %thr: tensor<f32>) -> tensor<?x3xi64> {
  %sel = onnx.NonMaxSuppression(%boxes, %scores, %max, %iou, %thr) {center_point_box = 1 : i64} : (tensor<2x6x4xf32>, tensor<2x3x6xf32>, tensor<1xi64>, tensor<1xf32>, tensor<f32>) -> tensor<?x3xi64>
  func.return %sel : tensor<?x3xi64>
}

// CHECK-LABEL: func.func @absent_inputs(
// CHECK-NEXT:    %[[MAX:.*]] = core.constant() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
// CHECK-NEXT:    %[[IOU:.*]] = core.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
// CHECK-NEXT:    %sel = core.non_max_suppression(%boxes, %scores, %[[MAX]], %[[IOU]]) {center_point_box = 0 : i64} : (tensor<1x6x4xf32>, tensor<1x1x6xf32>, tensor<i64>, tensor<f32>) -> tensor<?x3xi64>
// CHECK-NEXT:    func.return %sel
func.func @absent_inputs(%boxes: tensor<1x6x4xf32>, %scores: tensor<1x1x6xf32>) -> tensor<?x3xi64> {
  %sel = onnx.NonMaxSuppression(%boxes, %scores) : (tensor<1x6x4xf32>, tensor<1x1x6xf32>) -> tensor<?x3xi64>
  func.return %sel : tensor<?x3xi64>
}

// CHECK-LABEL: func.func @run_time_dims(
// CHECK:         %[[FOUR:.*]] = core.compare eq(
// CHECK-NEXT:    %[[BOXES:.*]] = core.check(%boxes, %[[FOUR]]) {message = "NonMaxSuppression: boxes must have 4 numbers per box"}
// CHECK:         %[[SAME:.*]] = core.compare eq(%{{.*}}, %{{.*}}) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi1>
// CHECK-NEXT:    %[[SCORES:.*]] = core.check(%scores, %[[SAME]]) {message = "NonMaxSuppression: boxes and scores differ in their batches or boxes"}
// CHECK-NEXT:    %[[SHAPE:.*]] = core.shape_of(%max) : (tensor<?xi64>) -> tensor<1xi64>
// CHECK-NEXT:    %[[COUNT:.*]] = core.reduce prod(%[[SHAPE]]) {axes = array<i64: 0>} : (tensor<1xi64>) -> tensor<i64>
// CHECK-NEXT:    %[[ONE:.*]] = core.constant() {value = dense<1> : tensor<i64>}
// CHECK-NEXT:    %[[IS_ONE:.*]] = core.compare eq(%[[COUNT]], %[[ONE]])
// CHECK-NEXT:    %[[MAX:.*]] = core.check(%max, %[[IS_ONE]]) {message = "NonMaxSuppression: max_output_boxes_per_class must hold one value"}
// CHECK-NEXT:    %[[SCALAR:.*]] = core.reshape(%[[MAX]]) : (tensor<?xi64>) -> tensor<i64>
// CHECK-NEXT:    %[[IOU:.*]] = core.constant() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %sel = core.non_max_suppression(%[[BOXES]], %[[SCORES]], %[[SCALAR]], %[[IOU]]) {center_point_box = 0 : i64} : (tensor<?x?x?xf32>, tensor<?x2x?xf32>, tensor<i64>, tensor<f32>) -> tensor<?x3xi64>
// CHECK-NOT:     onnx.
func.func @run_time_dims(%boxes: tensor<?x?x?xf32>, %scores: tensor<?x2x?xf32>, %max: tensor<?xi64>) -> tensor<?x3xi64> {
  %sel = onnx.NonMaxSuppression(%boxes, %scores, %max) : (tensor<?x?x?xf32>, tensor<?x2x?xf32>, tensor<?xi64>) -> tensor<?x3xi64>
  func.return %sel : tensor<?x3xi64>
}

// CHECK-LABEL: func.func @declared_count(
// CHECK:         %[[SEL:.*]] = core.non_max_suppression(%boxes, %scores, %max, %{{.*}}) {center_point_box = 0 : i64} : (tensor<1x6x4xf32>, tensor<1x1x6xf32>, tensor<i64>, tensor<f32>) -> tensor<?x3xi64>
// CHECK-NEXT:    %[[SHAPE:.*]] = core.shape_of(%[[SEL]]) : (tensor<?x3xi64>) -> tensor<2xi64>
// CHECK:         %[[COUNT:.*]] = core.gather(%[[SHAPE]], %{{.*}}) {axis = 0 : i64}
// CHECK-NEXT:    %[[TWO:.*]] = core.constant() {value = dense<2> : tensor<1xi64>}
// CHECK-NEXT:    %[[SAME:.*]] = core.compare eq(%[[COUNT]], %[[TWO]])
// CHECK-NEXT:    %[[CHECKED:.*]] = core.check(%[[SEL]], %[[SAME]]) {message = "NonMaxSuppression: the count of kept boxes differs from 2, the model's"}
// CHECK:         %sel = core.reshape(%[[CHECKED]], %{{.*}}) : (tensor<?x3xi64>, tensor<2xi64>) -> tensor<2x3xi64>
func.func @declared_count(%boxes: tensor<1x6x4xf32>, %scores: tensor<1x1x6xf32>, %max: tensor<i64>) -> tensor<2x3xi64> {
  %sel = onnx.NonMaxSuppression(%boxes, %scores, %max) : (tensor<1x6x4xf32>, tensor<1x1x6xf32>, tensor<i64>) -> tensor<2x3xi64>
  func.return %sel : tensor<2x3xi64>
}
