// Elementwise core ops become one all-parallel nest each; a broadcast loads its
// input with expanded dims pinned to 0; a reshape is a free view; run-time
// dims are read with kernel.dim; shape_of of a static tensor is a constant.
// RUN: opt %s -p convert-core-to-kernel | filecheck %s

// CHECK-LABEL: func.func @add_relu(%x: memref<?x4xf32>, %y: memref<4xf32>) -> memref<?x4xf32>
// CHECK:         %[[N:.*]] = kernel.dim %x[0] : memref<?x4xf32>
// CHECK:         %yb = kernel.alloc(%[[N]]) : memref<?x4xf32>
// CHECK-NEXT:    kernel.loop (%[[I:.*]], %[[J:.*]]) in (%[[N]], 4) [parallel, parallel] {
// CHECK-NEXT:      %[[V:.*]] = kernel.load %y[%[[J]]] : memref<4xf32>
// CHECK-NEXT:      kernel.store %[[V]], %yb[%[[I]], %[[J]]] : memref<?x4xf32>
// CHECK:         %s = kernel.alloc(%[[N]]) : memref<?x4xf32>
// CHECK-NEXT:    kernel.loop
// CHECK:           arith.addf
// CHECK:         %zb = kernel.alloc(%[[N]]) : memref<?x4xf32>
// CHECK:         %r = kernel.alloc(%[[N]]) : memref<?x4xf32>
// CHECK-NEXT:    kernel.loop
// CHECK:           arith.maximumf
// CHECK:         func.return %r : memref<?x4xf32>
func.func @add_relu(%x: tensor<?x4xf32>, %y: tensor<4xf32>) -> tensor<?x4xf32> {
  %shape = core.shape_of(%x) : (tensor<?x4xf32>) -> tensor<2xi64>
  %yb = core.broadcast(%y, %shape) {dims = array<i64: 1>} : (tensor<4xf32>, tensor<2xi64>) -> tensor<?x4xf32>
  %s = core.binary add(%x, %yb) : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %z = core.constant() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %zb = core.broadcast(%z, %shape) {dims = array<i64>} : (tensor<f32>, tensor<2xi64>) -> tensor<?x4xf32>
  %r = core.binary max(%s, %zb) : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  func.return %r : tensor<?x4xf32>
}

// Integer division truncates (divsi); mod takes the divisor's sign (a fix-up select).
// CHECK-LABEL: func.func @int_ops
// CHECK:         arith.divsi
// CHECK:         arith.remsi
// CHECK:         arith.select
func.func @int_ops(%a: tensor<3xi32>, %b: tensor<3xi32>) -> (tensor<3xi32>, tensor<3xi32>) {
  %d = core.binary div(%a, %b) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  %m = core.binary mod(%a, %b) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  func.return %d, %m : tensor<3xi32>, tensor<3xi32>
}

// Unsigned types pick unsigned ops; casts pick the conversion by signedness.
// CHECK-LABEL: func.func @unsigned
// CHECK:         arith.divui
// CHECK:         arith.cmpi ult
// CHECK:         arith.uitofp
func.func @unsigned(%a: tensor<3xui8>, %b: tensor<3xui8>) -> (tensor<3xui8>, tensor<3xi1>, tensor<3xf32>) {
  %d = core.binary div(%a, %b) : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  %c = core.compare lt(%a, %b) : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xi1>
  %f = core.cast(%a) : (tensor<3xui8>) -> tensor<3xf32>
  func.return %d, %c, %f : tensor<3xui8>, tensor<3xi1>, tensor<3xf32>
}

// CHECK-LABEL: func.func @reshape_is_a_view
// CHECK:         %[[V:.*]] = kernel.view %x() : memref<2x6xf32> -> memref<3x4xf32>
// CHECK-NEXT:    func.return %[[V]]
func.func @reshape_is_a_view(%x: tensor<2x6xf32>) -> tensor<3x4xf32> {
  %s = core.constant() {value = dense<[3, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
  %y = core.reshape(%x, %s) : (tensor<2x6xf32>, tensor<2xi64>) -> tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}

// CHECK-LABEL: func.func @static_shape_of
// CHECK-NEXT:    %[[C:.*]] = kernel.constant dense<[2, 6]> : tensor<2xi64>
// CHECK-NEXT:    func.return %[[C]]
func.func @static_shape_of(%x: tensor<2x6xf32>) -> tensor<2xi64> {
  %s = core.shape_of(%x) : (tensor<2x6xf32>) -> tensor<2xi64>
  func.return %s : tensor<2xi64>
}

// CHECK-LABEL: func.func @iota
// CHECK:         kernel.loop (%[[I:.*]], %[[J:.*]]) in (2, 3) [parallel, parallel] {
// CHECK-NEXT:      %[[X:.*]] = arith.index_cast %[[J]] : index to i64
// CHECK-NEXT:      kernel.store %[[X]]
func.func @iota() -> tensor<2x3xi64> {
  %r = core.iota() {dim = 1 : i64} : () -> tensor<2x3xi64>
  func.return %r : tensor<2x3xi64>
}
