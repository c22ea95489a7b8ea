// core-fold-constants evaluates core ops whose operands are constants (or
// splats and iotas of constants) with the core interpreter. Broadcasts and
// iotas themselves stay: they are cheaper than the tensors they stand for.
// Ops on run-time values, and results above the size limit, are not folded.
// RUN: opt %s -p core-fold-constants,dce | filecheck %s

// CHECK-LABEL: func.func @shape_chain(%x: tensor<2x6xf32>)
// CHECK-NEXT:    %[[S:.*]] = core.constant() {value = dense<[3, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
// CHECK-NEXT:    %y = core.reshape(%x, %[[S]]) : (tensor<2x6xf32>, tensor<2xi64>) -> tensor<3x4xf32>
// CHECK-NEXT:    func.return %y
func.func @shape_chain(%x: tensor<2x6xf32>) -> tensor<3x4xf32> {
  %s = core.constant() {value = dense<[2, 6]> : tensor<2xi64>} : () -> tensor<2xi64>
  %m = core.constant() {value = dense<[3, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %p = core.binary mul(%s, %m) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %d = core.constant() {value = dense<[2, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %q = core.binary div(%p, %d) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %y = core.reshape(%x, %q) : (tensor<2x6xf32>, tensor<2xi64>) -> tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}

// CHECK-LABEL: func.func @mask(%x: tensor<2x3xf32>)
// CHECK-NEXT:    %[[M:.*]] = core.constant() {value = dense<{{\[\[}}true, true, true], [false, true, true]]> : tensor<2x3xi1>}
// CHECK-NEXT:    %[[Z:.*]] = core.constant() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[ZB:.*]] = core.broadcast(%[[Z]])
// CHECK-NEXT:    %y = core.select(%[[M]], %x, %[[ZB]])
func.func @mask(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c = core.iota() {dim = 1 : i64} : () -> tensor<2x3xi64>
  %r = core.iota() {dim = 0 : i64} : () -> tensor<2x3xi64>
  %k = core.compare ge(%c, %r) : (tensor<2x3xi64>, tensor<2x3xi64>) -> tensor<2x3xi1>
  %z = core.constant() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %zb = core.broadcast(%z) {dims = array<i64>} : (tensor<f32>) -> tensor<2x3xf32>
  %y = core.select(%k, %x, %zb) : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @not_folded(%x: tensor<2xi64>)
// CHECK-NEXT:    %[[C:.*]] = core.constant()
// CHECK-NEXT:    %y = core.binary add(%x, %[[C]])
// CHECK-NEXT:    %[[O:.*]] = core.constant() {value = dense<1.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[BIG:.*]] = core.broadcast(%[[O]]) {dims = array<i64>} : (tensor<f32>) -> tensor<512x512xf32>
// CHECK-NEXT:    %big = core.unary exp(%[[BIG]]) : (tensor<512x512xf32>) -> tensor<512x512xf32>
func.func @not_folded(%x: tensor<2xi64>) -> (tensor<2xi64>, tensor<512x512xf32>) {
  %c = core.constant() {value = dense<[1, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %y = core.binary add(%x, %c) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %o = core.constant() {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %b = core.broadcast(%o) {dims = array<i64>} : (tensor<f32>) -> tensor<512x512xf32>
  %big = core.unary exp(%b) : (tensor<512x512xf32>) -> tensor<512x512xf32>
  func.return %y, %big : tensor<2xi64>, tensor<512x512xf32>
}

// The shape of a statically shaped tensor is a constant.
// CHECK-LABEL: func.func @static_shape(%x: tensor<2x5xf32>)
// CHECK-NEXT:    %s = core.constant() {value = dense<[2, 5]> : tensor<2xi64>} : () -> tensor<2xi64>
// CHECK-NEXT:    func.return %s
func.func @static_shape(%x: tensor<2x5xf32>) -> tensor<2xi64> {
  %s = core.shape_of(%x) : (tensor<2x5xf32>) -> tensor<2xi64>
  func.return %s : tensor<2xi64>
}
