// The matrix-product handlers of convert-torch-to-core on hand-written torch IR:
// mm / bmm / addmm / baddbmm are core.matmul, addmm's bias broadcast to the
// product (at run time over a dynamic batch) and scaled by beta and alpha;
// linear and matmul (programs not decomposed) fold a stack of matrices times
// one matrix into a single 2-D matmul; _cdist_forward reduces the pairwise
// differences.
// RUN: opt %s -p convert-torch-to-core | filecheck %s

// nn.Linear after decomposition, with a dynamic batch: the bias is broadcast to
// the product's run-time shape.
// CHECK-LABEL: func.func @linear_layer(
// CHECK:         %[[MM:.*]] = core.matmul(%x, %w) {acc = f32} : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:    %[[S:.*]] = core.shape_of(%[[MM]]) : (tensor<?x3xf32>) -> tensor<2xi64>
// CHECK-NEXT:    %[[B:.*]] = core.broadcast(%bias, %[[S]]) {dims = array<i64: 1>} : (tensor<3xf32>, tensor<2xi64>) -> tensor<?x3xf32>
// CHECK-NEXT:    %y = core.binary add(%[[MM]], %[[B]]) : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NOT:     torch.
// CHECK-NEXT:    func.return %y
func.func @linear_layer(%x: tensor<?x4xf32>, %w: tensor<4x3xf32>, %bias: tensor<3xf32>) -> tensor<?x3xf32> {
  %y = torch.aten.addmm(%bias, %x, %w) : (tensor<3xf32>, tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  func.return %y : tensor<?x3xf32>
}

// alpha scales the product, beta the addend.
// CHECK-LABEL: func.func @addmm_scaled(
// CHECK:         %[[MM:.*]] = core.matmul(%a, %w) {acc = f32} : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[A:.*]] = core.constant() {value = dense<2.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[AB:.*]] = core.broadcast(%[[A]]) {dims = array<i64>} : (tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[P:.*]] = core.binary mul(%[[MM]], %[[AB]])
// CHECK-NEXT:    %[[BETA:.*]] = core.constant() {value = dense<5.000000e-01> : tensor<f32>}
// CHECK-NEXT:    %[[BB:.*]] = core.broadcast(%[[BETA]]) {dims = array<i64>} : (tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[C:.*]] = core.binary mul(%c, %[[BB]])
// CHECK-NEXT:    %y = core.binary add(%[[P]], %[[C]])
// CHECK-NOT:     torch.
// CHECK-NEXT:    func.return %y
func.func @addmm_scaled(%c: tensor<2x3xf32>, %a: tensor<2x4xf32>, %w: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %y = torch.aten.addmm(%c, %a, %w) {beta = 0.5, alpha = 2} : (tensor<2x3xf32>, tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// beta = 0 ignores the addend (its NaNs too); bmm is a batched core.matmul.
// CHECK-LABEL: func.func @batched(
// CHECK:         %y = core.matmul(%a, %k) {acc = f32} : (tensor<6x5x8xf32>, tensor<6x8x7xf32>) -> tensor<6x5x7xf32>
// CHECK-NEXT:    %s = core.matmul(%a, %k) {acc = f32} : (tensor<6x5x8xf32>, tensor<6x8x7xf32>) -> tensor<6x5x7xf32>
// CHECK-NOT:     torch.
// CHECK-NEXT:    func.return %y, %s
func.func @batched(%c: tensor<6x5x7xf32>, %a: tensor<6x5x8xf32>, %k: tensor<6x8x7xf32>) -> (tensor<6x5x7xf32>, tensor<6x5x7xf32>) {
  %y = torch.aten.baddbmm(%c, %a, %k) {beta = 0} : (tensor<6x5x7xf32>, tensor<6x5x8xf32>, tensor<6x8x7xf32>) -> tensor<6x5x7xf32>
  %s = torch.aten.bmm(%a, %k) : (tensor<6x5x8xf32>, tensor<6x8x7xf32>) -> tensor<6x5x7xf32>
  func.return %y, %s : tensor<6x5x7xf32>, tensor<6x5x7xf32>
}

// linear of a [?, 5, 4] input: the weight is transposed once, the input's rows
// flattened to [?, 4] (their count read at run time), and the result reshaped
// back to [batch, 5, 3] before the bias is added.
// CHECK-LABEL: func.func @linear_3d(
// CHECK:         %[[WT:.*]] = core.transpose(%w) {perm = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
// CHECK:         %[[ROWS:.*]] = core.reshape(%x, %{{.*}}) : (tensor<?x5x4xf32>, tensor<2xi64>) -> tensor<?x4xf32>
// CHECK-NEXT:    %[[MM:.*]] = core.matmul(%[[ROWS]], %[[WT]]) {acc = f32} : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
// CHECK:         %[[BACK:.*]] = core.reshape(%[[MM]], %{{.*}}) : (tensor<?x3xf32>, tensor<3xi64>) -> tensor<?x5x3xf32>
// CHECK:         %[[B:.*]] = core.broadcast(%bias, %{{.*}}) {dims = array<i64: 2>} : (tensor<3xf32>, tensor<3xi64>) -> tensor<?x5x3xf32>
// CHECK-NEXT:    %y = core.binary add(%[[BACK]], %[[B]])
// CHECK-NOT:     torch.
// CHECK-NEXT:    func.return %y
func.func @linear_3d(%x: tensor<?x5x4xf32>, %w: tensor<3x4xf32>, %bias: tensor<3xf32>) -> tensor<?x5x3xf32> {
  %y = torch.aten.linear(%x, %w, %bias) : (tensor<?x5x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<?x5x3xf32>
  func.return %y : tensor<?x5x3xf32>
}

// matmul of a matrix and a vector: the vector gets a unit dim, dropped again.
// CHECK-LABEL: func.func @matmul_vector(
// CHECK:         %[[V:.*]] = core.reshape(%v) : (tensor<4xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[MM:.*]] = core.matmul(%x, %[[V]]) {acc = f32} : (tensor<2x4xf32>, tensor<4x1xf32>) -> tensor<2x1xf32>
// CHECK-NEXT:    %y = core.reshape(%[[MM]]) : (tensor<2x1xf32>) -> tensor<2xf32>
// CHECK-NOT:     torch.
// CHECK-NEXT:    func.return %y
func.func @matmul_vector(%x: tensor<2x4xf32>, %v: tensor<4xf32>) -> tensor<2xf32> {
  %y = torch.aten.matmul(%x, %v) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// cdist with p = 2: the differences [3, 5, 4] squared, summed, square-rooted;
// with p = 1 their magnitudes summed.
// CHECK-LABEL: func.func @cdist(
// CHECK:         %[[L:.*]] = core.reshape(%a) : (tensor<3x4xf32>) -> tensor<3x1x4xf32>
// CHECK-NEXT:    %[[R:.*]] = core.reshape(%b) : (tensor<5x4xf32>) -> tensor<1x5x4xf32>
// CHECK-NEXT:    %[[LB:.*]] = core.broadcast(%[[L]]) {dims = array<i64: 0, 1, 2>} : (tensor<3x1x4xf32>) -> tensor<3x5x4xf32>
// CHECK-NEXT:    %[[RB:.*]] = core.broadcast(%[[R]]) {dims = array<i64: 0, 1, 2>} : (tensor<1x5x4xf32>) -> tensor<3x5x4xf32>
// CHECK-NEXT:    %[[D:.*]] = core.binary sub(%[[LB]], %[[RB]])
// CHECK-NEXT:    %[[SQ:.*]] = core.binary mul(%[[D]], %[[D]])
// CHECK-NEXT:    %[[SUM:.*]] = core.reduce sum(%[[SQ]]) {axes = array<i64: 2>} : (tensor<3x5x4xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:    %e = core.unary sqrt(%[[SUM]])
// CHECK:         %[[D1:.*]] = core.binary sub
// CHECK-NEXT:    %[[ABS:.*]] = core.unary abs(%[[D1]])
// CHECK-NEXT:    %m = core.reduce sum(%[[ABS]]) {axes = array<i64: 2>} : (tensor<3x5x4xf32>) -> tensor<3x5xf32>
// CHECK-NOT:     torch.
// CHECK-NEXT:    func.return %e, %m
func.func @cdist(%a: tensor<3x4xf32>, %b: tensor<5x4xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>) {
  %e = torch.aten._cdist_forward(%a, %b) {p = 2.0, compute_mode = none} : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<3x5xf32>
  %m = torch.aten._cdist_forward(%a, %b) {p = 1.0, compute_mode = none} : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<3x5xf32>
  func.return %e, %m : tensor<3x5xf32>, tensor<3x5xf32>
}
