// Data movement back to ONNX: broadcast is Unsqueeze + Expand (a constant is
// reshaped instead), a static slice's sizes become ends (INT64_MIN where a
// reversed window reaches index 0), reshape keeps 0 as a size (allowzero),
// pad takes all low pads then all high pads, iota is a Range expanded to the
// result, and core.check passes its value through (ONNX has no assertion).
// RUN: opt %s -p convert-core-to-onnx | filecheck %s

// CHECK-LABEL: func.func @broadcast(
// CHECK:         %[[AX:.*]] = onnx.Constant() {value = dense<[0, 2]> : tensor<2xi64>}
// CHECK-NEXT:    %[[U:.*]] = onnx.Unsqueeze(%x, %[[AX]]) : (tensor<3xf32>, tensor<2xi64>) -> tensor<1x3x1xf32> loc("b_1")
// CHECK-NEXT:    %[[S:.*]] = onnx.Constant() {value = dense<[2, 3, 4]> : tensor<3xi64>}
// CHECK-NEXT:    %y = onnx.Expand(%[[U]], %[[S]]) : (tensor<1x3x1xf32>, tensor<3xi64>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    %[[C:.*]] = onnx.Constant() {value = dense<{{.*}}> : tensor<1x3x1xf32>}
// CHECK-NEXT:    %[[S2:.*]] = onnx.Constant() {value = dense<[2, 3, 4]> : tensor<3xi64>}
// CHECK-NEXT:    %z = onnx.Expand(%[[C]], %[[S2]])
// CHECK-NEXT:    func.return %y, %z
func.func @broadcast(%x: tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  %y = core.broadcast(%x) {dims = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3x4xf32> loc("b")
  %c = core.constant() {value = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %z = core.broadcast(%c) {dims = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3x4xf32> loc("c")
  func.return %y, %z : tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @dynamic_broadcast(
// CHECK:         %y = onnx.Expand(%{{.*}}, %s) : (tensor<1x3xf32>, tensor<2xi64>) -> tensor<?x3xf32>
func.func @dynamic_broadcast(%x: tensor<3xf32>, %s: tensor<2xi64>) -> tensor<?x3xf32> {
  %y = core.broadcast(%x, %s) {dims = array<i64: 1>} : (tensor<3xf32>, tensor<2xi64>) -> tensor<?x3xf32>
  func.return %y : tensor<?x3xf32>
}

// CHECK-LABEL: func.func @slices(
// CHECK:         onnx.Constant() {value = dense<[0, 1]> : tensor<2xi64>}
// CHECK-NEXT:    onnx.Constant() {value = dense<[1, 3]> : tensor<2xi64>}
// CHECK-NEXT:    onnx.Constant() {value = dense<[4, -9223372036854775808]> : tensor<2xi64>}
// CHECK-NEXT:    onnx.Constant() {value = dense<[1, -1]> : tensor<2xi64>}
// CHECK-NEXT:    %y = onnx.Slice(%x, {{.*}}) : (tensor<4x4xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<3x4xf32>
func.func @slices(%x: tensor<4x4xf32>) -> tensor<3x4xf32> {
  %y = core.slice(%x) {start = array<i64: 1, 3>, stride = array<i64: 1, -1>} : (tensor<4x4xf32>) -> tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}

// CHECK-LABEL: func.func @reshape_pad_transpose(
// CHECK:         %r = onnx.Reshape(%x, %{{.*}}) {allowzero = 1 : i64} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<6xf32>
// CHECK:         onnx.Constant() {value = dense<[1, 0, 2, -1]> : tensor<4xi64>}
// CHECK-NEXT:    %p = onnx.Pad(%x, %{{.*}}, %v) {mode = "constant"} : (tensor<2x3xf32>, tensor<4xi64>, tensor<f32>) -> tensor<5x2xf32>
// CHECK:         %q = onnx.Pad(%x, %{{.*}}) {mode = "reflect"}
// CHECK-NEXT:    %t = onnx.Transpose(%x) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
func.func @reshape_pad_transpose(%x: tensor<2x3xf32>, %v: tensor<f32>) -> (tensor<6xf32>, tensor<5x2xf32>, tensor<5x2xf32>, tensor<3x2xf32>) {
  %r = core.reshape(%x) : (tensor<2x3xf32>) -> tensor<6xf32>
  %p = core.pad constant(%x, %v) {pad_low = array<i64: 1, 0>, pad_high = array<i64: 2, -1>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<5x2xf32>
  %q = core.pad reflect(%x, %v) {pad_low = array<i64: 1, 0>, pad_high = array<i64: 2, -1>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<5x2xf32>
  %t = core.transpose(%x) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %r, %p, %q, %t : tensor<6xf32>, tensor<5x2xf32>, tensor<5x2xf32>, tensor<3x2xf32>
}

// CHECK-LABEL: func.func @iota_shape_check(
// CHECK:         %[[N:.*]] = onnx.Shape(%x) : (tensor<?x4xf32>) -> tensor<2xi64>
// CHECK:         onnx.Range
// CHECK:         onnx.Reshape
// CHECK:         %i = onnx.Expand
// CHECK:         %k = onnx.Identity(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK-NOT:     core.
func.func @iota_shape_check(%x: tensor<?x4xf32>, %n: tensor<i64>, %ok: tensor<i1>) -> (tensor<2xi64>, tensor<?x4xi64>, tensor<?x4xf32>) {
  %s = core.shape_of(%x) : (tensor<?x4xf32>) -> tensor<2xi64>
  %i = core.iota(%n) {dim = 1 : i64} : (tensor<i64>) -> tensor<?x4xi64>
  %k = core.check(%x, %ok) {message = "ok"} : (tensor<?x4xf32>, tensor<i1>) -> tensor<?x4xf32>
  func.return %s, %i, %k : tensor<2xi64>, tensor<?x4xi64>, tensor<?x4xf32>
}

// CHECK-LABEL: func.func @gather_scatter(
// CHECK:         %g = onnx.Gather(%x, %i) {axis = 1 : i64}
// CHECK-NEXT:    %e = onnx.GatherElements(%x, %j) {axis = 0 : i64}
// CHECK-NEXT:    %s = onnx.ScatterElements(%x, %j, %x) {axis = 0 : i64, reduction = "add"}
// CHECK-NEXT:    %c = onnx.Concat(%x, %x) {axis = 0 : i64}
func.func @gather_scatter(%x: tensor<2x2xf32>, %i: tensor<3xi64>, %j: tensor<2x2xi64>) -> (tensor<2x3xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<4x2xf32>) {
  %g = core.gather(%x, %i) {axis = 1 : i64} : (tensor<2x2xf32>, tensor<3xi64>) -> tensor<2x3xf32>
  %e = core.gather_elements(%x, %j) {axis = 0 : i64} : (tensor<2x2xf32>, tensor<2x2xi64>) -> tensor<2x2xf32>
  %s = core.scatter_elements add(%x, %j, %x) {axis = 0 : i64} : (tensor<2x2xf32>, tensor<2x2xi64>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %c = core.concat(%x, %x) {axis = 0 : i64} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  func.return %g, %e, %s, %c : tensor<2x3xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<4x2xf32>
}
