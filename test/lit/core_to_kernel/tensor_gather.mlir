// Gathers are one all-parallel nest over the result: the body loads the index
// (cast to `index`) at the result's positions and then the input there, so
// the inner dims, copied whole, walk contiguous memory on both sides.
// RUN: opt %s -p convert-core-to-kernel | filecheck %s

// out[a, k0, k1, c] = x[a, i[k0, k1], c]
// CHECK-LABEL: func.func @gather(%x: memref<5x?x4xf32>, %i: memref<2x3xi64>) -> memref<5x2x3x4xf32>
// CHECK:         %y = kernel.alloc() : memref<5x2x3x4xf32>
// CHECK-NEXT:    kernel.loop (%[[A:.*]], %[[K0:.*]], %[[K1:.*]], %[[C:.*]]) in (5, 2, 3, 4) [parallel, parallel, parallel, parallel] {
// CHECK-NEXT:      %[[I:.*]] = kernel.load %i[%[[K0]], %[[K1]]] : memref<2x3xi64>
// CHECK-NEXT:      %[[IX:.*]] = arith.index_cast %[[I]] : i64 to index
// CHECK-NEXT:      %[[V:.*]] = kernel.load %x[%[[A]], %[[IX]], %[[C]]] : memref<5x?x4xf32>
// CHECK-NEXT:      kernel.store %[[V]], %y[%[[A]], %[[K0]], %[[K1]], %[[C]]] : memref<5x2x3x4xf32>
func.func @gather(%x: tensor<5x?x4xf32>, %i: tensor<2x3xi64>) -> tensor<5x2x3x4xf32> {
  %y = core.gather(%x, %i) {axis = 1 : i64} : (tensor<5x?x4xf32>, tensor<2x3xi64>) -> tensor<5x2x3x4xf32>
  func.return %y : tensor<5x2x3x4xf32>
}

// A rank-0 index drops the axis; run-time sizes come from the operands.
// CHECK-LABEL: func.func @scalar_index(%x: memref<?x?xf32>, %i: memref<i32>) -> memref<?xf32>
// CHECK:         %[[N:.*]] = kernel.dim %x[1] : memref<?x?xf32>
// CHECK-NEXT:    %y = kernel.alloc(%[[N]]) : memref<?xf32>
// CHECK-NEXT:    kernel.loop (%[[J:.*]]) in (%[[N]]) [parallel] {
// CHECK-NEXT:      %[[I:.*]] = kernel.load %i[] : memref<i32>
// CHECK-NEXT:      %[[IX:.*]] = arith.index_cast %[[I]] : i32 to index
// CHECK-NEXT:      %[[V:.*]] = kernel.load %x[%[[IX]], %[[J]]] : memref<?x?xf32>
func.func @scalar_index(%x: tensor<?x?xf32>, %i: tensor<i32>) -> tensor<?xf32> {
  %y = core.gather(%x, %i) {axis = 0 : i64} : (tensor<?x?xf32>, tensor<i32>) -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}

// out[r, k] = x[r, i[r, k]]
// CHECK-LABEL: func.func @gather_elements(%x: memref<3x4xf32>, %i: memref<3x2xi32>) -> memref<3x2xf32>
// CHECK-NEXT:    %y = kernel.alloc() : memref<3x2xf32>
// CHECK-NEXT:    kernel.loop (%[[R:.*]], %[[K:.*]]) in (3, 2) [parallel, parallel] {
// CHECK-NEXT:      %[[I:.*]] = kernel.load %i[%[[R]], %[[K]]] : memref<3x2xi32>
// CHECK-NEXT:      %[[IX:.*]] = arith.index_cast %[[I]] : i32 to index
// CHECK-NEXT:      %[[V:.*]] = kernel.load %x[%[[R]], %[[IX]]] : memref<3x4xf32>
// CHECK-NEXT:      kernel.store %[[V]], %y[%[[R]], %[[K]]] : memref<3x2xf32>
func.func @gather_elements(%x: tensor<3x4xf32>, %i: tensor<3x2xi32>) -> tensor<3x2xf32> {
  %y = core.gather_elements(%x, %i) {axis = 1 : i64} : (tensor<3x4xf32>, tensor<3x2xi32>) -> tensor<3x2xf32>
  func.return %y : tensor<3x2xf32>
}

// batch_dims = 1: out[b, p, c] = x[b, i[b, p, 0], i[b, p, 1], c]
// CHECK-LABEL: func.func @gather_nd(%x: memref<2x3x4x5xf32>, %i: memref<2x6x2xi64>) -> memref<2x6x5xf32>
// CHECK-NEXT:    %y = kernel.alloc() : memref<2x6x5xf32>
// CHECK-NEXT:    kernel.loop (%[[B:.*]], %[[P:.*]], %[[C:.*]]) in (2, 6, 5) [parallel, parallel, parallel] {
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[I0:.*]] = kernel.load %i[%[[B]], %[[P]], %[[Z]]] : memref<2x6x2xi64>
// CHECK-NEXT:      %[[X0:.*]] = arith.index_cast %[[I0]] : i64 to index
// CHECK-NEXT:      %[[O:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[I1:.*]] = kernel.load %i[%[[B]], %[[P]], %[[O]]] : memref<2x6x2xi64>
// CHECK-NEXT:      %[[X1:.*]] = arith.index_cast %[[I1]] : i64 to index
// CHECK-NEXT:      %[[V:.*]] = kernel.load %x[%[[B]], %[[X0]], %[[X1]], %[[C]]] : memref<2x3x4x5xf32>
// CHECK-NEXT:      kernel.store %[[V]], %y[%[[B]], %[[P]], %[[C]]] : memref<2x6x5xf32>
func.func @gather_nd(%x: tensor<2x3x4x5xf32>, %i: tensor<2x6x2xi64>) -> tensor<2x6x5xf32> {
  %y = core.gather_nd(%x, %i) {batch_dims = 1 : i64} : (tensor<2x3x4x5xf32>, tensor<2x6x2xi64>) -> tensor<2x6x5xf32>
  func.return %y : tensor<2x6x5xf32>
}
