// scatter_reduce without include_self starts the written positions from the
// reduction's identity and divides a mean by the count each position got;
// round.decimals scales, rounds half to even and scales back; max without a
// dim reduces every dim.
// RUN: opt %s -p convert-torch-to-core | filecheck %s

// CHECK-LABEL: func.func @scatter_mean(
// CHECK:         %[[IDX:.*]] = core.check
// CHECK:         %[[BASE:.*]] = core.scatter_elements none(%x, %[[IDX]], %{{.*}}) {axis = 0 : i64}
// CHECK:         %[[SUM:.*]] = core.scatter_elements add(%[[BASE]], %[[IDX]], %s) {axis = 0 : i64}
// CHECK:         %[[COUNT:.*]] = core.scatter_elements add(%{{.*}}, %[[IDX]], %{{.*}}) {axis = 0 : i64}
// CHECK:         %[[ATLEAST1:.*]] = core.binary max(%[[COUNT]], %{{.*}})
// CHECK:         %y = core.binary div(%[[SUM]], %[[ATLEAST1]])
func.func @scatter_mean(%x: tensor<4x5xf32>, %i: tensor<3x5xi64>, %s: tensor<3x5xf32>) -> tensor<4x5xf32> {
  %y = torch.aten.scatter_reduce.two(%x, %i, %s) {dim = 0, reduce = "mean", include_self = false} : (tensor<4x5xf32>, tensor<3x5xi64>, tensor<3x5xf32>) -> tensor<4x5xf32>
  func.return %y : tensor<4x5xf32>
}

// CHECK-LABEL: func.func @round2(
// CHECK:         %[[S:.*]] = core.broadcast
// CHECK-NEXT:    %[[UP:.*]] = core.binary mul(%x, %[[S]])
// CHECK-NEXT:    %[[R:.*]] = core.unary round(%[[UP]])
// CHECK-NEXT:    %y = core.binary div(%[[R]], %[[S]])
func.func @round2(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = torch.aten.round.decimals(%x) {decimals = 2} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// CHECK-LABEL: func.func @whole_max(
// CHECK-NEXT:    %y = core.reduce max(%x) {axes = array<i64: 0, 1>} : (tensor<4x5xf32>) -> tensor<f32>
func.func @whole_max(%x: tensor<4x5xf32>) -> tensor<f32> {
  %y = torch.aten.max(%x) : (tensor<4x5xf32>) -> tensor<f32>
  func.return %y : tensor<f32>
}

// diagonal: dims 0 and 1 moved last and merged, the positions i * 4 + i + 1.
// CHECK-LABEL: func.func @diagonal(
// CHECK:         core.transpose(%x) {perm = array<i64: 2, 0, 1>}
// CHECK:         core.reshape
// CHECK:         %[[POS:.*]] = core.constant() {value = dense<[1, 6, 11]> : tensor<3xi64>}
// CHECK:         core.gather(%{{.*}}, %[[POS]]) {axis = 1 : i64}
func.func @diagonal(%x: tensor<3x4x5xf32>) -> tensor<5x3xf32> {
  %y = torch.aten.diagonal(%x) {offset = 1} : (tensor<3x4x5xf32>) -> tensor<5x3xf32>
  func.return %y : tensor<5x3xf32>
}
