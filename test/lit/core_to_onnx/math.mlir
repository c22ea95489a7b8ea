// Elementwise ops back to ONNX. Core's explicit broadcasts are undone where
// ONNX's implicit broadcasting gives the same (one operand keeps the full
// shape); rsqrt and ne are two nodes; rem is Mod with fmod, mod is Mod.
// RUN: opt %s -p convert-core-to-onnx | filecheck %s

// CHECK-LABEL: func.func @math(
// CHECK:         %[[Q:.*]] = onnx.Sqrt(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %r = onnx.Reciprocal(%[[Q]])
// CHECK-NEXT:    %s = onnx.Add(%r, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %f = onnx.Mod(%s, %b) {fmod = 1 : i64}
// CHECK-NEXT:    %m = onnx.Mod(%s, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[E:.*]] = onnx.Equal(%a, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT:    %n = onnx.Not(%[[E]])
// CHECK-NEXT:    %l = onnx.LessOrEqual(%a, %b)
// CHECK-NEXT:    %w = onnx.Where(%c, %m, %a)
// CHECK-NEXT:    %i = onnx.Cast(%w) {to = 6 : i64} : (tensor<2x3xf32>) -> tensor<2x3xi32>
// CHECK-NEXT:    %p = onnx.IsInf(%a) {detect_negative = 0 : i64}
// CHECK-NEXT:    %z = onnx.Round(%a)
// CHECK-NEXT:    func.return
func.func @math(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %c: tensor<2x3xi1>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x3xi1>, tensor<2x3xf32>) {
  %r = core.unary rsqrt(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %s = core.binary add(%r, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %f = core.binary rem(%s, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %m = core.binary mod(%s, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %n = core.compare ne(%a, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %l = core.compare le(%a, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %w = core.select(%c, %m, %a) : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %i = core.cast(%w) : (tensor<2x3xf32>) -> tensor<2x3xi32>
  %p = core.unary isposinf(%a) : (tensor<2x3xf32>) -> tensor<2x3xi1>
  %z = core.unary round(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %f, %s, %n, %l, %w, %i, %p, %z : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x3xi1>, tensor<2x3xf32>
}

// A bias added through core.broadcast: ONNX's Add broadcasts the [1, 4, 1, 1]
// constant itself, so no Expand is left.
// CHECK-LABEL: func.func @bias(
// CHECK:         %[[B:.*]] = onnx.Constant() {value = dense<{{.*}}> : tensor<1x4x1x1xf32>}
// CHECK-NEXT:    %y = onnx.Add(%x, %[[B]]) : (tensor<1x4x5x5xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x5x5xf32>
// CHECK-NOT:     onnx.Expand
// CHECK:         func.return %y
func.func @bias(%x: tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32> {
  %b = core.constant() {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %e = core.broadcast(%b) {dims = array<i64: 1>} : (tensor<4xf32>) -> tensor<1x4x5x5xf32>
  %y = core.binary add(%x, %e) : (tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  func.return %y : tensor<1x4x5x5xf32>
}

// Two broadcast operands: the first keeps its Expand, so the result keeps its shape.
// CHECK-LABEL: func.func @both_broadcast(
// CHECK:         %[[E:.*]] = onnx.Expand
// CHECK:         %y = onnx.Mul(%[[E]], %{{.*}}) : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
func.func @both_broadcast(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %x = core.broadcast(%a) {dims = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3xf32>
  %z = core.broadcast(%b) {dims = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3xf32>
  %y = core.binary mul(%x, %z) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
