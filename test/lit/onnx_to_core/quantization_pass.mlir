// The quantization handlers of convert-onnx-to-core on hand-written onnx-dialect
// IR: no quantized types in core, so these are float arithmetic around
// core.cast. Scale and zero point are first broadcast to the input's shape
// (per tensor, per axis, or blocked); integer results round half to even and
// clamp to the type's range in float before the cast.
// RUN: opt %s -p convert-onnx-to-core | filecheck %s

// Per tensor, to int8: clamp(round(x / s) + z, -128, 127), then cast.
// CHECK-LABEL: func.func @quantize_per_tensor(
// CHECK:         %[[S:.*]] = core.broadcast(%s) {dims = array<i64>} : (tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[Z:.*]] = core.broadcast(%z) {dims = array<i64>} : (tensor<i8>) -> tensor<4xi8>
// CHECK-NEXT:    %[[D:.*]] = core.binary div(%x, %[[S]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[R:.*]] = core.unary round(%[[D]])
// CHECK-NEXT:    %[[ZF:.*]] = core.cast(%[[Z]]) : (tensor<4xi8>) -> tensor<4xf32>
// CHECK-NEXT:    %[[A:.*]] = core.binary add(%[[R]], %[[ZF]])
// CHECK-NEXT:    %[[LO:.*]] = core.constant() {value = dense<-1.280000e+02> : tensor<f32>}
// CHECK-NEXT:    %[[LOB:.*]] = core.broadcast(%[[LO]])
// CHECK-NEXT:    %[[MX:.*]] = core.binary max(%[[A]], %[[LOB]])
// CHECK-NEXT:    %[[HI:.*]] = core.constant() {value = dense<1.270000e+02> : tensor<f32>}
// CHECK-NEXT:    %[[HIB:.*]] = core.broadcast(%[[HI]])
// CHECK-NEXT:    %[[MN:.*]] = core.binary min(%[[MX]], %[[HIB]])
// CHECK-NEXT:    %q = core.cast(%[[MN]]) : (tensor<4xf32>) -> tensor<4xi8>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %q
func.func @quantize_per_tensor(%x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<4xi8> {
  %q = onnx.QuantizeLinear(%x, %s, %z) : (tensor<4xf32>, tensor<f32>, tensor<i8>) -> tensor<4xi8>
  func.return %q : tensor<4xi8>
}

// To float8 (saturate, the default): no rounding step (the cast rounds), and the
// clamp is the type's finite range, +-448 for f8E4M3FN.
// CHECK-LABEL: func.func @quantize_float8(
// CHECK:         %[[D:.*]] = core.binary div(%x, %{{.*}})
// CHECK-NOT:     core.unary round
// CHECK:         %[[A:.*]] = core.binary add(%[[D]], %{{.*}})
// CHECK-NEXT:    %[[LO:.*]] = core.constant() {value = dense<-4.480000e+02> : tensor<f32>}
// CHECK:         %[[MX:.*]] = core.binary max(%[[A]], %{{.*}})
// CHECK-NEXT:    %[[HI:.*]] = core.constant() {value = dense<4.480000e+02> : tensor<f32>}
// CHECK:         %[[MN:.*]] = core.binary min(%[[MX]], %{{.*}})
// CHECK-NEXT:    %q = core.cast(%[[MN]]) : (tensor<4xf32>) -> tensor<4xf8E4M3FN>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %q
func.func @quantize_float8(%x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<f8E4M3FN>) -> tensor<4xf8E4M3FN> {
  %q = onnx.QuantizeLinear(%x, %s, %z) : (tensor<4xf32>, tensor<f32>, tensor<f8E4M3FN>) -> tensor<4xf8E4M3FN>
  func.return %q : tensor<4xf8E4M3FN>
}

// Per axis (axis 0), no zero point: x * broadcast(scale) in f32. (The order of
// the cast and the scale's broadcast does not matter.)
// CHECK-LABEL: func.func @dequantize_per_axis(
// CHECK-DAG:     %[[QF:.*]] = core.cast(%q) : (tensor<2x3xi8>) -> tensor<2x3xf32>
// CHECK-DAG:     %[[S:.*]] = core.broadcast(%s) {dims = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x3xf32>
// CHECK:         %d = core.binary mul(%[[QF]], %[[S]]) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %d
func.func @dequantize_per_axis(%q: tensor<2x3xi8>, %s: tensor<2xf32>) -> tensor<2x3xf32> {
  %d = onnx.DequantizeLinear(%q, %s) {axis = 0 : i64} : (tensor<2x3xi8>, tensor<2xf32>) -> tensor<2x3xf32>
  func.return %d : tensor<2x3xf32>
}

// Blocked (block_size 2 on axis 1): each scale repeated twice along a new dim,
// merged ([2, 6]) and cut to the input's 5 columns.
// CHECK-LABEL: func.func @dequantize_blocked(
// CHECK-DAG:     %[[QF:.*]] = core.cast(%q) : (tensor<2x5xi8>) -> tensor<2x5xf32>
// CHECK-DAG:     %[[W:.*]] = core.broadcast(%s) {dims = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3x2xf32>
// CHECK-DAG:     %[[F:.*]] = core.reshape(%[[W]]) : (tensor<2x3x2xf32>) -> tensor<2x6xf32>
// CHECK-DAG:     %[[S:.*]] = core.slice(%[[F]]) {start = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<2x6xf32>) -> tensor<2x5xf32>
// CHECK:         %d = core.binary mul(%[[QF]], %[[S]]) : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %d
func.func @dequantize_blocked(%q: tensor<2x5xi8>, %s: tensor<2x3xf32>) -> tensor<2x5xf32> {
  %d = onnx.DequantizeLinear(%q, %s) {axis = 1 : i64, block_size = 2 : i64} : (tensor<2x5xi8>, tensor<2x3xf32>) -> tensor<2x5xf32>
  func.return %d : tensor<2x5xf32>
}

// DynamicQuantizeLinear on a dynamic batch: scale = (max(x, 0) - min(x, 0)) / 255
// over all axes, zero point = clamp(round(0 - min / scale), 0, 255); both are
// broadcast to x's run-time shape for the uint8 quantization.
// CHECK-LABEL: func.func @dynamic_quantize(
// CHECK:         %[[ZERO:.*]] = core.constant() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[MIN:.*]] = core.reduce min(%x) {axes = array<i64: 0, 1>} : (tensor<?x4xf32>) -> tensor<f32>
// CHECK-NEXT:    %[[LO:.*]] = core.binary min(%[[MIN]], %[[ZERO]])
// CHECK-NEXT:    %[[MAX:.*]] = core.reduce max(%x) {axes = array<i64: 0, 1>} : (tensor<?x4xf32>) -> tensor<f32>
// CHECK-NEXT:    %[[HI:.*]] = core.binary max(%[[MAX]], %[[ZERO]])
// CHECK-NEXT:    %[[SPAN:.*]] = core.binary sub(%[[HI]], %[[LO]])
// CHECK-NEXT:    %[[Q:.*]] = core.constant() {value = dense<2.550000e+02> : tensor<f32>}
// CHECK-NEXT:    %s = core.binary div(%[[SPAN]], %[[Q]]) : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK-NEXT:    %[[LS:.*]] = core.binary div(%[[LO]], %s)
// CHECK-NEXT:    %[[ZP:.*]] = core.binary sub(%[[ZERO]], %[[LS]])
// CHECK-NEXT:    %[[ZR:.*]] = core.unary round(%[[ZP]])
// CHECK-NEXT:    %[[ZC:.*]] = core.binary max(%[[ZR]], %[[ZERO]])
// CHECK-NEXT:    %[[Q2:.*]] = core.constant() {value = dense<2.550000e+02> : tensor<f32>}
// CHECK-NEXT:    %[[ZPF:.*]] = core.binary min(%[[ZC]], %[[Q2]])
// CHECK-NEXT:    %z = core.cast(%[[ZPF]]) : (tensor<f32>) -> tensor<ui8>
// CHECK-NEXT:    %[[SX:.*]] = core.shape_of(%x) : (tensor<?x4xf32>) -> tensor<2xi64>
// CHECK-NEXT:    %[[SB:.*]] = core.broadcast(%s, %[[SX]]) {dims = array<i64>} : (tensor<f32>, tensor<2xi64>) -> tensor<?x4xf32>
// CHECK-NEXT:    %[[SX2:.*]] = core.shape_of(%x)
// CHECK-NEXT:    %[[ZB:.*]] = core.broadcast(%[[ZPF]], %[[SX2]]) {dims = array<i64>} : (tensor<f32>, tensor<2xi64>) -> tensor<?x4xf32>
// CHECK-NEXT:    %[[D:.*]] = core.binary div(%x, %[[SB]])
// CHECK-NEXT:    %[[R:.*]] = core.unary round(%[[D]])
// CHECK-NEXT:    %[[A:.*]] = core.binary add(%[[R]], %[[ZB]])
// CHECK:         %[[MX:.*]] = core.binary max(%[[A]], %{{.*}})
// CHECK:         %[[MN:.*]] = core.binary min(%[[MX]], %{{.*}})
// CHECK-NEXT:    %y = core.cast(%[[MN]]) : (tensor<?x4xf32>) -> tensor<?x4xui8>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y, %s, %z
func.func @dynamic_quantize(%x: tensor<?x4xf32>) -> (tensor<?x4xui8>, tensor<f32>, tensor<ui8>) {
  %y, %s, %z = onnx.DynamicQuantizeLinear(%x) : (tensor<?x4xf32>) -> (tensor<?x4xui8>, tensor<f32>, tensor<ui8>)
  func.return %y, %s, %z : tensor<?x4xui8>, tensor<f32>, tensor<ui8>
}
