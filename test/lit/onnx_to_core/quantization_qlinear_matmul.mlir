// QLinearMatMul: an exact i32 product of the zero-point-shifted inputs, one f64
// rescale by a_scale * b_scale / y_scale, then rounding, y's zero point, saturation.
// RUN: opt %s -p convert-onnx-to-core | filecheck %s

// CHECK-LABEL: func.func @qlinear_matmul(
// CHECK:         %[[A:.*]] = core.binary sub({{.*}}) : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
// CHECK:         %[[B:.*]] = core.binary sub({{.*}}) : (tensor<4x3xi32>, tensor<4x3xi32>) -> tensor<4x3xi32>
// CHECK:         %[[P:.*]] = core.matmul(%[[A]], %[[B]]) {acc = i32} : {{.*}} -> tensor<2x3xi32>
// CHECK:         %[[S:.*]] = core.binary mul(%as, %bs)
// CHECK:         %[[R:.*]] = core.binary div(%[[S]], %ys)
// CHECK:         core.cast(%[[P]]) : (tensor<2x3xi32>) -> tensor<2x3xf64>
// CHECK:         core.unary round
// CHECK:         core.binary max
// CHECK:         dense<2.550000e+02> : tensor<f64>
// CHECK:         %y = core.cast(%{{.*}}) : (tensor<2x3xf64>) -> tensor<2x3xui8>
// CHECK-NOT:     onnx.
func.func @qlinear_matmul(%a: tensor<2x4xui8>, %as: tensor<f32>, %az: tensor<ui8>, %b: tensor<4x3xui8>, %bs: tensor<f32>, %bz: tensor<ui8>, %ys: tensor<f32>, %yz: tensor<ui8>) -> tensor<2x3xui8> {
  %y = onnx.QLinearMatMul(%a, %as, %az, %b, %bs, %bz, %ys, %yz) : (tensor<2x4xui8>, tensor<f32>, tensor<ui8>, tensor<4x3xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<2x3xui8>
  func.return %y : tensor<2x3xui8>
}
