// RUN: opt %s -p core-fold-constants | filecheck %s

// A select on an all-false or all-true constant mask is the chosen operand,
// so the constant stays visible (Reshape's "0 copies the input dim" masks).

// CHECK-LABEL: func.func @all_false
// CHECK-NOT:     core.select
// CHECK:         func.return %shape
func.func @all_false(%x: tensor<?x4xf32>) -> tensor<2xi64> {
  %shape = core.constant() {value = dense<[-1, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %dims = core.shape_of(%x) : (tensor<?x4xf32>) -> tensor<2xi64>
  %mask = core.constant() {value = dense<false> : tensor<2xi1>} : () -> tensor<2xi1>
  %r = core.select(%mask, %dims, %shape) : (tensor<2xi1>, tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  func.return %r : tensor<2xi64>
}

// CHECK-LABEL: func.func @all_true
// CHECK-NOT:     core.select
// CHECK:         func.return %dims
func.func @all_true(%x: tensor<?x4xf32>) -> tensor<2xi64> {
  %shape = core.constant() {value = dense<[-1, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %dims = core.shape_of(%x) : (tensor<?x4xf32>) -> tensor<2xi64>
  %mask = core.constant() {value = dense<true> : tensor<2xi1>} : () -> tensor<2xi1>
  %r = core.select(%mask, %dims, %shape) : (tensor<2xi1>, tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  func.return %r : tensor<2xi64>
}

// A mixed mask picks per element: nothing to fold unless both sides are constant.
// CHECK-LABEL: func.func @mixed
// CHECK:         core.select
func.func @mixed(%x: tensor<?x4xf32>) -> tensor<2xi64> {
  %shape = core.constant() {value = dense<[-1, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %dims = core.shape_of(%x) : (tensor<?x4xf32>) -> tensor<2xi64>
  %mask = core.constant() {value = dense<[true, false]> : tensor<2xi1>} : () -> tensor<2xi1>
  %r = core.select(%mask, %dims, %shape) : (tensor<2xi1>, tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  func.return %r : tensor<2xi64>
}
