// The linalg handler of convert-onnx-to-core (Einsum) on hand-written onnx-dialect
// IR: each pair of operands becomes one rank-3 core.matmul [batch, free,
// contracted] between reshapes/transposes; indices nobody needs are summed out
// with core.reduce; a repeated index is a gather on the merged axes. Einsum
// needs static shapes: a dynamic one is refused (see legality_pass_invalid.mlir).
// RUN: opt %s -p convert-onnx-to-core | filecheck %s

// A matrix product with a transposed output.
// CHECK-LABEL: func.func @matmul_transposed(
// CHECK:         %[[A:.*]] = core.reshape(%a) : (tensor<2x3xf32>) -> tensor<1x2x3xf32>
// CHECK-NEXT:    %[[B:.*]] = core.reshape(%b) : (tensor<3x4xf32>) -> tensor<1x3x4xf32>
// CHECK-NEXT:    %[[MM:.*]] = core.matmul(%[[A]], %[[B]]) {acc = f32} : (tensor<1x2x3xf32>, tensor<1x3x4xf32>) -> tensor<1x2x4xf32>
// CHECK-NEXT:    %[[R:.*]] = core.reshape(%[[MM]]) : (tensor<1x2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %y = core.transpose(%[[R]]) {perm = array<i64: 1, 0>} : (tensor<2x4xf32>) -> tensor<4x2xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @matmul_transposed(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<4x2xf32> {
  %y = onnx.Einsum(%a, %b) {equation = "ij,jk->ki"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<4x2xf32>
  func.return %y : tensor<4x2xf32>
}

// An index missing from the output is summed out.
// CHECK-LABEL: func.func @row_sum(
// CHECK:         %y = core.reduce sum(%a) {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @row_sum(%a: tensor<2x3xf32>) -> tensor<2xf32> {
  %y = onnx.Einsum(%a) {equation = "ij->i"} : (tensor<2x3xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// Implicit output (no "->"): the letters seen once, sorted; an outer product is
// a matmul with a contracted dim of 1.
// CHECK-LABEL: func.func @outer(
// CHECK:         %[[A:.*]] = core.reshape(%a) : (tensor<2xf32>) -> tensor<1x2x1xf32>
// CHECK-NEXT:    %[[B:.*]] = core.reshape(%b) : (tensor<3xf32>) -> tensor<1x1x3xf32>
// CHECK-NEXT:    %[[MM:.*]] = core.matmul(%[[A]], %[[B]]) {acc = f32} : (tensor<1x2x1xf32>, tensor<1x1x3xf32>) -> tensor<1x2x3xf32>
// CHECK-NEXT:    %y = core.reshape(%[[MM]]) : (tensor<1x2x3xf32>) -> tensor<2x3xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @outer(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %y = onnx.Einsum(%a, %b) {equation = "i,j"} : (tensor<2xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// Three operands fold left to right: two matmuls.
// CHECK-LABEL: func.func @chain(
// CHECK:         %[[AB:.*]] = core.matmul(%{{.*}}, %{{.*}}) {acc = f32} : (tensor<1x2x3xf32>, tensor<1x3x4xf32>) -> tensor<1x2x4xf32>
// CHECK:         %[[C:.*]] = core.reshape(%c) : (tensor<4x5xf32>) -> tensor<1x4x5xf32>
// CHECK-NEXT:    %[[ABC:.*]] = core.matmul(%{{.*}}, %[[C]]) {acc = f32} : (tensor<1x2x4xf32>, tensor<1x4x5xf32>) -> tensor<1x2x5xf32>
// CHECK-NEXT:    %y = core.reshape(%[[ABC]]) : (tensor<1x2x5xf32>) -> tensor<2x5xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @chain(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<4x5xf32>) -> tensor<2x5xf32> {
  %y = onnx.Einsum(%a, %b, %c) {equation = "ij,jk,kl->il"} : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  func.return %y : tensor<2x5xf32>
}

// A trace: the diagonal (flat positions 0, 4, 8 of the 3x3 matrix), then a sum.
// CHECK-LABEL: func.func @trace(
// CHECK:         %[[F:.*]] = core.reshape(%a) : (tensor<3x3xf32>) -> tensor<9xf32>
// CHECK-NEXT:    %[[I:.*]] = core.constant() {value = dense<[0, 4, 8]> : tensor<3xi64>}
// CHECK-NEXT:    %[[D:.*]] = core.gather(%[[F]], %[[I]]) {axis = 0 : i64} : (tensor<9xf32>, tensor<3xi64>) -> tensor<3xf32>
// CHECK-NEXT:    %y = core.reduce sum(%[[D]]) {axes = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @trace(%a: tensor<3x3xf32>) -> tensor<f32> {
  %y = onnx.Einsum(%a) {equation = "ii"} : (tensor<3x3xf32>) -> tensor<f32>
  func.return %y : tensor<f32>
}

// Ellipsis dims are batch dims where both operands have them (5) and free dims
// of the lhs where only it has them (2): the lhs is transposed to put the shared
// batch first, the result transposed back.
// CHECK-LABEL: func.func @batch_ellipsis(
// CHECK:         %[[T:.*]] = core.transpose(%a) {perm = array<i64: 1, 0, 2, 3>} : (tensor<2x5x3x4xf32>) -> tensor<5x2x3x4xf32>
// CHECK-NEXT:    %[[A:.*]] = core.reshape(%[[T]]) : (tensor<5x2x3x4xf32>) -> tensor<5x6x4xf32>
// CHECK-NEXT:    %[[MM:.*]] = core.matmul(%[[A]], %b) {acc = f32} : (tensor<5x6x4xf32>, tensor<5x4x6xf32>) -> tensor<5x6x6xf32>
// CHECK-NEXT:    %[[R:.*]] = core.reshape(%[[MM]]) : (tensor<5x6x6xf32>) -> tensor<5x2x3x6xf32>
// CHECK-NEXT:    %y = core.transpose(%[[R]]) {perm = array<i64: 1, 0, 2, 3>} : (tensor<5x2x3x6xf32>) -> tensor<2x5x3x6xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @batch_ellipsis(%a: tensor<2x5x3x4xf32>, %b: tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32> {
  %y = onnx.Einsum(%a, %b) {equation = "...ij,...jk->...ik"} : (tensor<2x5x3x4xf32>, tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32>
  func.return %y : tensor<2x5x3x6xf32>
}
