// A concat is one all-parallel nest per input, each storing its input into
// its slab of the result: the index along the axis is offset by the sizes of
// the inputs before it (run-time sizes add up at run time). Off the axis,
// the nests use sizes that are static in any input. One input is the result.
// RUN: opt %s -p convert-core-to-kernel | filecheck %s

// CHECK-LABEL: func.func @concat(%a: memref<2x1xf32>, %b: memref<2x?xf32>, %c: memref<?x3xf32>) -> memref<2x?xf32>
// CHECK-NEXT:    %[[NB:.*]] = kernel.dim %b[1] : memref<2x?xf32>
// CHECK:         %[[T1:.*]] = arith.addi %{{.*}}, %[[NB]] : index
// CHECK:         %[[TOTAL:.*]] = arith.addi %[[T1]], %{{.*}} : index
// CHECK-NEXT:    %y = kernel.alloc(%[[TOTAL]]) : memref<2x?xf32>
// CHECK-NEXT:    kernel.loop (%[[I:.*]], %[[J:.*]]) in (2, 1) [parallel, parallel] {
// CHECK-NEXT:      %[[V:.*]] = kernel.load %a[%[[I]], %[[J]]] : memref<2x1xf32>
// CHECK-NEXT:      kernel.store %[[V]], %y[%[[I]], %[[J]]] : memref<2x?xf32>
// CHECK:         kernel.loop (%[[I:.*]], %[[J:.*]]) in (2, %[[NB]]) [parallel, parallel] {
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[K:.*]] = arith.addi %[[J]], %[[ONE]] : index
// CHECK-NEXT:      %[[V:.*]] = kernel.load %b[%[[I]], %[[J]]] : memref<2x?xf32>
// CHECK-NEXT:      kernel.store %[[V]], %y[%[[I]], %[[K]]] : memref<2x?xf32>
// CHECK:         %[[OFF:.*]] = arith.addi %{{.*}}, %[[NB]] : index
// CHECK-NEXT:    kernel.loop (%[[I:.*]], %[[J:.*]]) in (2, 3) [parallel, parallel] {
// CHECK-NEXT:      %[[K:.*]] = arith.addi %[[J]], %[[OFF]] : index
// CHECK-NEXT:      %[[V:.*]] = kernel.load %c[%[[I]], %[[J]]] : memref<?x3xf32>
// CHECK-NEXT:      kernel.store %[[V]], %y[%[[I]], %[[K]]] : memref<2x?xf32>
// CHECK-NOT:     kernel.loop
// CHECK:         func.return %y
func.func @concat(%a: tensor<2x1xf32>, %b: tensor<2x?xf32>, %c: tensor<?x3xf32>) -> tensor<2x?xf32> {
  %y = core.concat(%a, %b, %c) {axis = 1 : i64} : (tensor<2x1xf32>, tensor<2x?xf32>, tensor<?x3xf32>) -> tensor<2x?xf32>
  func.return %y : tensor<2x?xf32>
}

// Along the outer axis each slab is contiguous; static offsets fold.
// CHECK-LABEL: func.func @outer(%a: memref<2x4xi64>, %b: memref<3x4xi64>) -> memref<5x4xi64>
// CHECK-NEXT:    %y = kernel.alloc() : memref<5x4xi64>
// CHECK-NEXT:    kernel.loop (%{{.*}}, %{{.*}}) in (2, 4) [parallel, parallel]
// CHECK:         kernel.loop (%[[I:.*]], %[[J:.*]]) in (3, 4) [parallel, parallel] {
// CHECK-NEXT:      %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[K:.*]] = arith.addi %[[I]], %[[TWO]] : index
// CHECK-NEXT:      %[[V:.*]] = kernel.load %b[%[[I]], %[[J]]] : memref<3x4xi64>
// CHECK-NEXT:      kernel.store %[[V]], %y[%[[K]], %[[J]]] : memref<5x4xi64>
func.func @outer(%a: tensor<2x4xi64>, %b: tensor<3x4xi64>) -> tensor<5x4xi64> {
  %y = core.concat(%a, %b) {axis = 0 : i64} : (tensor<2x4xi64>, tensor<3x4xi64>) -> tensor<5x4xi64>
  func.return %y : tensor<5x4xi64>
}

// CHECK-LABEL: func.func @single(%a: memref<2x3xf32>) -> memref<2x3xf32>
// CHECK-NEXT:    func.return %a
func.func @single(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = core.concat(%a) {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
