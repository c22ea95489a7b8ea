// The ai.onnx.ml handlers of convert-onnx-to-core on hand-written onnx-dialect
// IR: attribute parameters become constants, composed with elementwise ops,
// gathers, reductions and matmuls.
// RUN: opt %s -p convert-onnx-to-core | filecheck %s

// Binarizer: x > threshold, cast back to x's type; for integers the threshold
// is floored (x > 1.5 is x > 1).
// CHECK-LABEL: func.func @binarizer(
// CHECK:         %[[T:.*]] = core.constant() {value = dense<5.000000e-01> : tensor<f32>}
// CHECK-NEXT:    %[[TB:.*]] = core.broadcast(%[[T]]) {dims = array<i64>} : (tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[GT:.*]] = core.compare gt(%x, %[[TB]]) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT:    %b = core.cast(%[[GT]]) : (tensor<2x3xi1>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[TI:.*]] = core.constant() {value = dense<1> : tensor<i32>}
// CHECK-NEXT:    %[[TIB:.*]] = core.broadcast(%[[TI]]) {dims = array<i64>} : (tensor<i32>) -> tensor<4xi32>
// CHECK-NEXT:    %[[GTI:.*]] = core.compare gt(%i, %[[TIB]]) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
// CHECK-NEXT:    %c = core.cast(%[[GTI]]) : (tensor<4xi1>) -> tensor<4xi32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %b, %c
func.func @binarizer(%x: tensor<2x3xf32>, %i: tensor<4xi32>) -> (tensor<2x3xf32>, tensor<4xi32>) {
  %b = onnx.ml.Binarizer(%x) {threshold = 5.000000e-01 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %c = onnx.ml.Binarizer(%i) {threshold = 1.500000e+00 : f32} : (tensor<4xi32>) -> tensor<4xi32>
  func.return %b, %c : tensor<2x3xf32>, tensor<4xi32>
}

// Scaler on a dynamic batch: (x - offset) * scale in f32; the per-feature
// offset is broadcast along the last dim, the single scale to every element.
// CHECK-LABEL: func.func @scaler_dynamic(
// CHECK:         %[[X:.*]] = core.cast(%x) : (tensor<?x3xf64>) -> tensor<?x3xf32>
// CHECK-NEXT:    %[[OFF:.*]] = core.constant() {value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>}
// CHECK-NEXT:    %[[S:.*]] = core.shape_of(%[[X]]) : (tensor<?x3xf32>) -> tensor<2xi64>
// CHECK-NEXT:    %[[OFFB:.*]] = core.broadcast(%[[OFF]], %[[S]]) {dims = array<i64: 1>} : (tensor<3xf32>, tensor<2xi64>) -> tensor<?x3xf32>
// CHECK-NEXT:    %[[D:.*]] = core.binary sub(%[[X]], %[[OFFB]])
// CHECK-NEXT:    %[[SC:.*]] = core.constant() {value = dense<5.000000e-01> : tensor<f32>}
// CHECK-NEXT:    %[[S2:.*]] = core.shape_of(%[[D]])
// CHECK-NEXT:    %[[SCB:.*]] = core.broadcast(%[[SC]], %[[S2]]) {dims = array<i64>} : (tensor<f32>, tensor<2xi64>) -> tensor<?x3xf32>
// CHECK-NEXT:    %y = core.binary mul(%[[D]], %[[SCB]]) : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @scaler_dynamic(%x: tensor<?x3xf64>) -> tensor<?x3xf32> {
  %y = onnx.ml.Scaler(%x) {offset = array<f32: 1.000000e+00, 2.000000e+00, 3.000000e+00>, scale = array<f32: 5.000000e-01>} : (tensor<?x3xf64>) -> tensor<?x3xf32>
  func.return %y : tensor<?x3xf32>
}

// Normalizer L2: each row divided by its norm, a zero-norm row kept as it is.
// CHECK-LABEL: func.func @normalizer(
// CHECK:         %[[SQ:.*]] = core.binary mul(%x, %x)
// CHECK-NEXT:    %[[SUM:.*]] = core.reduce sum(%[[SQ]]) {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
// CHECK-NEXT:    %[[N:.*]] = core.unary sqrt(%[[SUM]])
// CHECK-NEXT:    %[[NB:.*]] = core.broadcast(%[[N]]) {dims = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x3xf32>
// CHECK:         %[[Z:.*]] = core.compare eq(%[[NB]], %{{.*}}) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT:    %[[Q:.*]] = core.binary div(%x, %[[NB]])
// CHECK-NEXT:    %y = core.select(%[[Z]], %x, %[[Q]]) : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @normalizer(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = onnx.ml.Normalizer(%x) {norm = "L2"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// LinearRegressor: x · coefficientsᵀ (the [targets, features] table transposed
// into a constant) + intercepts, on a dynamic batch.
// CHECK-LABEL: func.func @linear_regressor(
// CHECK:         %[[W:.*]] = core.constant() {value = dense<{{\[\[}}1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>}
// CHECK-NEXT:    %[[MM:.*]] = core.matmul(%x, %[[W]]) {acc = f32} : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
// CHECK-NEXT:    %[[B:.*]] = core.constant() {value = dense<[5.000000e-01, -5.000000e-01]> : tensor<2xf32>}
// CHECK-NEXT:    %[[S:.*]] = core.shape_of(%[[MM]]) : (tensor<?x2xf32>) -> tensor<2xi64>
// CHECK-NEXT:    %[[BB:.*]] = core.broadcast(%[[B]], %[[S]]) {dims = array<i64: 1>} : (tensor<2xf32>, tensor<2xi64>) -> tensor<?x2xf32>
// CHECK-NEXT:    %r = core.binary add(%[[MM]], %[[BB]]) : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %r
func.func @linear_regressor(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %r = onnx.ml.LinearRegressor(%x) {coefficients = array<f32: 1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00>, intercepts = array<f32: 5.000000e-01, -5.000000e-01>, targets = 2 : i64} : (tensor<?x2xf32>) -> tensor<?x2xf32>
  func.return %r : tensor<?x2xf32>
}

// ArrayFeatureExtractor: a gather on the last axis, constant indices normalized.
// CHECK-LABEL: func.func @array_feature_extractor(
// CHECK:         %[[I:.*]] = core.constant() {value = dense<[3, 1]> : tensor<2xi64>}
// CHECK-NEXT:    %y = core.gather(%x, %[[I]]) {axis = 1 : i64} : (tensor<2x4xf32>, tensor<2xi64>) -> tensor<2x2xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @array_feature_extractor(%x: tensor<2x4xf32>) -> tensor<2x2xf32> {
  %i = onnx.Constant() {value = dense<[-1, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %y = onnx.ml.ArrayFeatureExtractor(%x, %i) : (tensor<2x4xf32>, tensor<2xi64>) -> tensor<2x2xf32>
  func.return %y : tensor<2x2xf32>
}

// LabelEncoder: every element compared with the keys; the first hit's position
// picks the value, no hit keeps the default. The repeated key 1 keeps its last
// value (30), so the table is {1: 30, 2: 20}.
// CHECK-LABEL: func.func @label_encoder(
// CHECK:         %[[DEF:.*]] = core.constant() {value = dense<-1.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[DEFB:.*]] = core.broadcast(%[[DEF]]) {dims = array<i64>} : (tensor<f32>) -> tensor<3xf32>
// CHECK-NEXT:    %[[XS:.*]] = core.broadcast(%x) {dims = array<i64: 0>} : (tensor<3xi64>) -> tensor<3x2xi64>
// CHECK-NEXT:    %[[K:.*]] = core.constant() {value = dense<[1, 2]> : tensor<2xi64>}
// CHECK-NEXT:    %[[KS:.*]] = core.broadcast(%[[K]]) {dims = array<i64: 1>} : (tensor<2xi64>) -> tensor<3x2xi64>
// CHECK-NEXT:    %[[HIT:.*]] = core.compare eq(%[[XS]], %[[KS]]) : (tensor<3x2xi64>, tensor<3x2xi64>) -> tensor<3x2xi1>
// CHECK-NEXT:    %[[FOUND:.*]] = core.reduce or(%[[HIT]]) {axes = array<i64: 1>} : (tensor<3x2xi1>) -> tensor<3xi1>
// CHECK-NEXT:    %[[HI:.*]] = core.cast(%[[HIT]]) : (tensor<3x2xi1>) -> tensor<3x2xi32>
// CHECK-NEXT:    %[[POS:.*]] = core.arg_reduce max(%[[HI]]) {axis = 1 : i64, last = 0 : i64} : (tensor<3x2xi32>) -> tensor<3xi64>
// CHECK-NEXT:    %[[V:.*]] = core.constant() {value = dense<[3.000000e+01, 2.000000e+01]> : tensor<2xf32>}
// CHECK-NEXT:    %[[G:.*]] = core.gather(%[[V]], %[[POS]]) {axis = 0 : i64} : (tensor<2xf32>, tensor<3xi64>) -> tensor<3xf32>
// CHECK-NEXT:    %y = core.select(%[[FOUND]], %[[G]], %[[DEFB]]) : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @label_encoder(%x: tensor<3xi64>) -> tensor<3xf32> {
  %y = onnx.ml.LabelEncoder(%x) {keys_int64s = array<i64: 1, 2, 1>, values_floats = array<f32: 1.000000e+01, 2.000000e+01, 3.000000e+01>, default_float = -1.000000e+00 : f32} : (tensor<3xi64>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}
