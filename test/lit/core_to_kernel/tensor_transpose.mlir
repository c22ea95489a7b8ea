// A transpose is one all-parallel nest over the result (stores walk it in
// order) that loads the input at the permuted indices; run-time dims are read
// with kernel.dim. Moving only unit dims keeps the element order: a free view.
// RUN: opt %s -p convert-core-to-kernel | filecheck %s

// CHECK-LABEL: func.func @transpose(%x: memref<2x3x4xf32>) -> memref<4x2x3xf32>
// CHECK-NEXT:    %y = kernel.alloc() : memref<4x2x3xf32>
// CHECK-NEXT:    kernel.loop (%[[I:.*]], %[[J:.*]], %[[K:.*]]) in (4, 2, 3) [parallel, parallel, parallel] {
// CHECK-NEXT:      %[[V:.*]] = kernel.load %x[%[[J]], %[[K]], %[[I]]] : memref<2x3x4xf32>
// CHECK-NEXT:      kernel.store %[[V]], %y[%[[I]], %[[J]], %[[K]]] : memref<4x2x3xf32>
// CHECK-NEXT:      kernel.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %y = core.transpose(%x) {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  func.return %y : tensor<4x2x3xf32>
}

// CHECK-LABEL: func.func @dynamic(%x: memref<?x3xf32>) -> memref<3x?xf32>
// CHECK-NEXT:    %[[N:.*]] = kernel.dim %x[0] : memref<?x3xf32>
// CHECK-NEXT:    %y = kernel.alloc(%[[N]]) : memref<3x?xf32>
// CHECK-NEXT:    kernel.loop (%[[I:.*]], %[[J:.*]]) in (3, %[[N]]) [parallel, parallel] {
// CHECK-NEXT:      %[[V:.*]] = kernel.load %x[%[[J]], %[[I]]] : memref<?x3xf32>
// CHECK-NEXT:      kernel.store %[[V]], %y[%[[I]], %[[J]]] : memref<3x?xf32>
func.func @dynamic(%x: tensor<?x3xf32>) -> tensor<3x?xf32> {
  %y = core.transpose(%x) {perm = array<i64: 1, 0>} : (tensor<?x3xf32>) -> tensor<3x?xf32>
  func.return %y : tensor<3x?xf32>
}

// CHECK-LABEL: func.func @unit_dims(%x: memref<3x1x4xf32>) -> memref<1x3x4xf32>
// CHECK-NEXT:    %y = kernel.view %x() : memref<3x1x4xf32> -> memref<1x3x4xf32>
// CHECK-NEXT:    func.return %y
func.func @unit_dims(%x: tensor<3x1x4xf32>) -> tensor<1x3x4xf32> {
  %y = core.transpose(%x) {perm = array<i64: 1, 0, 2>} : (tensor<3x1x4xf32>) -> tensor<1x3x4xf32>
  func.return %y : tensor<1x3x4xf32>
}
