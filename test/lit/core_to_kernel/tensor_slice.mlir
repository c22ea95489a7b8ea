// A slice is one all-parallel nest over the result loading x[start + i * stride]
// (strides may be negative). The dynamic form loads its starts, strides and
// the `?` sizes once, before the nest; entries of constant operands fold into
// the index arithmetic (start 0 and stride 1 leave the loop index as it is).
// RUN: opt %s -p convert-core-to-kernel | filecheck %s

// CHECK-LABEL: func.func @static(%x: memref<5x6xf32>) -> memref<3x3xf32>
// CHECK-NEXT:    %y = kernel.alloc() : memref<3x3xf32>
// CHECK-NEXT:    kernel.loop (%[[I:.*]], %[[J:.*]]) in (3, 3) [parallel, parallel] {
// CHECK-NEXT:      %[[M2:.*]] = arith.constant -2 : index
// CHECK-NEXT:      %[[A:.*]] = arith.muli %[[I]], %[[M2]] : index
// CHECK-NEXT:      %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT:      %[[R:.*]] = arith.addi %[[C4]], %[[A]] : index
// CHECK-NEXT:      %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[B:.*]] = arith.muli %[[J]], %[[C2]] : index
// CHECK-NEXT:      %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[C:.*]] = arith.addi %[[C1]], %[[B]] : index
// CHECK-NEXT:      %[[V:.*]] = kernel.load %x[%[[R]], %[[C]]] : memref<5x6xf32>
// CHECK-NEXT:      kernel.store %[[V]], %y[%[[I]], %[[J]]] : memref<3x3xf32>
func.func @static(%x: tensor<5x6xf32>) -> tensor<3x3xf32> {
  %y = core.slice(%x) {start = array<i64: 4, 1>, stride = array<i64: -2, 2>} : (tensor<5x6xf32>) -> tensor<3x3xf32>
  func.return %y : tensor<3x3xf32>
}

// CHECK-LABEL: func.func @dynamic(%x: memref<?x6xf32>, %start: memref<2xi64>, %size: memref<2xi64>, %stride: memref<2xi64>) -> memref<?x4xf32>
// CHECK:         %[[S0:.*]] = kernel.load %start[%{{.*}}] : memref<2xi64>
// CHECK-NEXT:    %[[START0:.*]] = arith.index_cast %[[S0]] : i64 to index
// CHECK:         %[[S1:.*]] = kernel.load %start[%{{.*}}] : memref<2xi64>
// CHECK-NEXT:    %[[START1:.*]] = arith.index_cast %[[S1]] : i64 to index
// CHECK:         %[[T0:.*]] = kernel.load %stride[%{{.*}}] : memref<2xi64>
// CHECK-NEXT:    %[[STRIDE0:.*]] = arith.index_cast %[[T0]] : i64 to index
// CHECK:         %[[T1:.*]] = kernel.load %stride[%{{.*}}] : memref<2xi64>
// CHECK-NEXT:    %[[STRIDE1:.*]] = arith.index_cast %[[T1]] : i64 to index
// CHECK:         %[[N0:.*]] = kernel.load %size[%{{.*}}] : memref<2xi64>
// CHECK-NEXT:    %[[N:.*]] = arith.index_cast %[[N0]] : i64 to index
// CHECK-NEXT:    %y = kernel.alloc(%[[N]]) : memref<?x4xf32>
// CHECK-NEXT:    kernel.loop (%[[I:.*]], %[[J:.*]]) in (%[[N]], 4) [parallel, parallel] {
// CHECK-NEXT:      %[[A:.*]] = arith.muli %[[I]], %[[STRIDE0]] : index
// CHECK-NEXT:      %[[R:.*]] = arith.addi %[[START0]], %[[A]] : index
// CHECK-NEXT:      %[[B:.*]] = arith.muli %[[J]], %[[STRIDE1]] : index
// CHECK-NEXT:      %[[C:.*]] = arith.addi %[[START1]], %[[B]] : index
// CHECK-NEXT:      %[[V:.*]] = kernel.load %x[%[[R]], %[[C]]] : memref<?x6xf32>
// CHECK-NEXT:      kernel.store %[[V]], %y[%[[I]], %[[J]]] : memref<?x4xf32>
func.func @dynamic(%x: tensor<?x6xf32>, %start: tensor<2xi64>, %size: tensor<2xi64>, %stride: tensor<2xi64>) -> tensor<?x4xf32> {
  %y = core.slice(%x, %start, %size, %stride) : (tensor<?x6xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}

// CHECK-LABEL: func.func @constant_operands(%x: memref<?x6xf32>, %size: memref<2xi64>) -> memref<?x3xf32>
// CHECK-NOT:     kernel.load %start
// CHECK-NOT:     kernel.load %stride
// CHECK:         %y = kernel.alloc(%{{.*}}) : memref<?x3xf32>
// CHECK-NEXT:    kernel.loop (%[[I:.*]], %[[J:.*]]) in (%{{.*}}, 3) [parallel, parallel] {
// CHECK-NEXT:      %[[M2:.*]] = arith.constant -2 : index
// CHECK-NEXT:      %[[B:.*]] = arith.muli %[[J]], %[[M2]] : index
// CHECK-NEXT:      %[[C5:.*]] = arith.constant 5 : index
// CHECK-NEXT:      %[[C:.*]] = arith.addi %[[C5]], %[[B]] : index
// CHECK-NEXT:      %[[V:.*]] = kernel.load %x[%[[I]], %[[C]]] : memref<?x6xf32>
// CHECK-NEXT:      kernel.store %[[V]], %y[%[[I]], %[[J]]] : memref<?x3xf32>
func.func @constant_operands(%x: tensor<?x6xf32>, %size: tensor<2xi64>) -> tensor<?x3xf32> {
  %start = core.constant() {value = dense<[0, 5]> : tensor<2xi64>} : () -> tensor<2xi64>
  %stride = core.constant() {value = dense<[1, -2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %y = core.slice(%x, %start, %size, %stride) : (tensor<?x6xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x3xf32>
  func.return %y : tensor<?x3xf32>
}
