// What the lowerings of shape ops with shape operands of run-time length hand
// the kernel level: a checked `?`-long vector given its static length is a
// view (the check, an assert, comes first); the tail of a `?`-long vector at a
// run-time start (Expand's left-padding) is a nest of static size; run-time
// axes scattered into a static mask loop over the run-time count.
// RUN: opt %s -p convert-core-to-kernel | filecheck %s

// CHECK-LABEL: func.func @to_static_length(%s: memref<?xi64>, %ok: memref<1xi1>) -> memref<3xi64>
// CHECK:         %[[OK:.*]] = kernel.load %ok[%{{.*}}] : memref<1xi1>
// CHECK-NEXT:    cf.assert %[[OK]], "an unnamed node: needs 3 values"
// CHECK-NEXT:    %r = kernel.view %s() : memref<?xi64> -> memref<3xi64>
// CHECK-NEXT:    func.return %r : memref<3xi64>
func.func @to_static_length(%s: tensor<?xi64>, %ok: tensor<1xi1>) -> tensor<3xi64> {
  %c = core.check(%s, %ok) {message = "needs 3 values"} : (tensor<?xi64>, tensor<1xi1>) -> tensor<?xi64>
  %r = core.reshape(%c) : (tensor<?xi64>) -> tensor<3xi64>
  func.return %r : tensor<3xi64>
}

// CHECK-LABEL: func.func @tail(%s: memref<?xi64>, %at: memref<1xi64>) -> memref<3xi64>
// CHECK:         %[[AT:.*]] = kernel.load %at[%{{.*}}] : memref<1xi64>
// CHECK-NEXT:    %[[START:.*]] = arith.index_cast %[[AT]] : i64 to index
// CHECK-NEXT:    %r = kernel.alloc() : memref<3xi64>
// CHECK-NEXT:    kernel.loop (%[[I:.*]]) in (3) [parallel] {
// CHECK-NEXT:      %[[J:.*]] = arith.addi %[[START]], %[[I]] : index
// CHECK-NEXT:      %[[V:.*]] = kernel.load %s[%[[J]]] : memref<?xi64>
// CHECK-NEXT:      kernel.store %[[V]], %r[%[[I]]] : memref<3xi64>
func.func @tail(%s: tensor<?xi64>, %at: tensor<1xi64>) -> tensor<3xi64> {
  %size = core.constant() {value = dense<3> : tensor<1xi64>} : () -> tensor<1xi64>
  %one = core.constant() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %r = core.slice(%s, %at, %size, %one) : (tensor<?xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  func.return %r : tensor<3xi64>
}

// CHECK-LABEL: func.func @mask(%axes: memref<?xi64>, %ones: memref<?xi64>) -> memref<4xi64>
// CHECK:         %m = kernel.alloc() : memref<4xi64>
// CHECK-NEXT:    kernel.copy %{{.*}}, %m : memref<4xi64>, memref<4xi64>
// CHECK-NEXT:    %[[N:.*]] = kernel.dim %ones[0] : memref<?xi64>
// CHECK-NEXT:    kernel.loop (%[[I:.*]]) in (%[[N]]) [reduction] {
// CHECK-NEXT:      %[[A:.*]] = kernel.load %axes[%[[I]]] : memref<?xi64>
// CHECK-NEXT:      %[[AI:.*]] = arith.index_cast %[[A]] : i64 to index
// CHECK-NEXT:      %[[V:.*]] = kernel.load %ones[%[[I]]] : memref<?xi64>
// CHECK-NEXT:      kernel.store %[[V]], %m[%[[AI]]] : memref<4xi64>
func.func @mask(%axes: tensor<?xi64>, %ones: tensor<?xi64>) -> tensor<4xi64> {
  %zeros = core.constant() {value = dense<0> : tensor<4xi64>} : () -> tensor<4xi64>
  %m = core.scatter_elements none(%zeros, %axes, %ones) {axis = 0 : i64} : (tensor<4xi64>, tensor<?xi64>, tensor<?xi64>) -> tensor<4xi64>
  func.return %m : tensor<4xi64>
}
