// core.cumulative. When the axis is innermost, a parallel nest over the other
// dims around a reduction loop carrying the running value; `exclusive` stores
// the value before the element is folded in, `reverse` walks n-1-k. When a
// later dim walks memory, the first line along the axis is set, then a nest
// (axis dim marked reduction, innermost dim contiguous) computes each line
// from the one before it.
// RUN: opt %s -p convert-core-to-kernel | filecheck %s

// CHECK-LABEL: func.func @prod_last(%x: memref<?x5xi32>) -> memref<?x5xi32>
// CHECK:         %[[N:.*]] = kernel.dim %x[0]
// CHECK-NEXT:    %c = kernel.alloc(%[[N]]) : memref<?x5xi32>
// CHECK-NEXT:    kernel.loop (%[[I:.*]]) in (%[[N]]) [parallel] {
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT:      kernel.loop (%[[K:.*]]) in (5) [reduction] iter_args(%[[ACC:.*]] = %[[ONE]] : i32) -> i32 {
// CHECK-NEXT:        %[[V:.*]] = kernel.load %x[%[[I]], %[[K]]] : memref<?x5xi32>
// CHECK-NEXT:        %[[P:.*]] = arith.muli %[[ACC]], %[[V]] : i32
// CHECK-NEXT:        kernel.store %[[P]], %c[%[[I]], %[[K]]] : memref<?x5xi32>
// CHECK-NEXT:        kernel.yield %[[P]] : i32
func.func @prod_last(%x: tensor<?x5xi32>) -> tensor<?x5xi32> {
  %c = core.cumulative prod(%x) {axis = 1 : i64, exclusive = 0 : i64, reverse = 0 : i64} : (tensor<?x5xi32>) -> tensor<?x5xi32>
  func.return %c : tensor<?x5xi32>
}

// CHECK-LABEL: func.func @sum_last_exclusive_reverse(%x: memref<3x4xf32>) -> memref<3x4xf32>
// CHECK:           kernel.loop (%[[K:.*]]) in (4) [reduction] iter_args(%[[ACC:.*]] = %{{.*}} : f32) -> f32 {
// CHECK-NEXT:        %[[THREE:.*]] = arith.constant 3 : index
// CHECK-NEXT:        %[[P:.*]] = arith.subi %[[THREE]], %[[K]] : index
// CHECK-NEXT:        %[[V:.*]] = kernel.load %x[%{{.*}}, %[[P]]] : memref<3x4xf32>
// CHECK-NEXT:        %[[S:.*]] = arith.addf %[[ACC]], %[[V]] : f32
// CHECK-NEXT:        kernel.store %[[ACC]], %c[%{{.*}}, %[[P]]] : memref<3x4xf32>
// CHECK-NEXT:        kernel.yield %[[S]] : f32
func.func @sum_last_exclusive_reverse(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %c = core.cumulative sum(%x) {axis = 1 : i64, exclusive = 1 : i64, reverse = 1 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return %c : tensor<3x4xf32>
}

// CHECK-LABEL: func.func @sum_first(%x: memref<?x5xf32>) -> memref<?x5xf32>
// CHECK:         %[[N:.*]] = kernel.dim %x[0]
// CHECK-NEXT:    %c = kernel.alloc(%[[N]]) : memref<?x5xf32>
// CHECK:         %[[ONE:.*]] = arith.minsi %[[N]], %{{.*}} : index
// CHECK-NEXT:    kernel.loop (%{{.*}}, %[[J:.*]]) in (%[[ONE]], 5) [parallel, parallel] {
// CHECK:           %[[V:.*]] = kernel.load %x[%[[Z:.*]], %[[J]]] : memref<?x5xf32>
// CHECK:           kernel.store %[[V]], %c[%{{.*}}, %[[J]]] : memref<?x5xf32>
// CHECK:         %[[REST:.*]] = arith.maxsi
// CHECK-NEXT:    kernel.loop (%[[K:.*]], %[[J2:.*]]) in (%[[REST]], 5) [reduction, parallel] {
// CHECK:           %[[P:.*]] = arith.addi %[[K]], %{{.*}} : index
// CHECK-NEXT:      %[[X:.*]] = kernel.load %x[%[[P]], %[[J2]]] : memref<?x5xf32>
// CHECK-NEXT:      %[[PREV:.*]] = kernel.load %c[%[[K]], %[[J2]]] : memref<?x5xf32>
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[PREV]], %[[X]] : f32
// CHECK-NEXT:      kernel.store %[[S]], %c[%[[P]], %[[J2]]] : memref<?x5xf32>
func.func @sum_first(%x: tensor<?x5xf32>) -> tensor<?x5xf32> {
  %c = core.cumulative sum(%x) {axis = 0 : i64, exclusive = 0 : i64, reverse = 0 : i64} : (tensor<?x5xf32>) -> tensor<?x5xf32>
  func.return %c : tensor<?x5xf32>
}

// Exclusive and reverse along a leading axis: the last line is the identity,
// line p is line p+1 combined with the input's line p+1.
// CHECK-LABEL: func.func @prod_first_exclusive_reverse(%x: memref<3x4xf32>) -> memref<3x4xf32>
// CHECK:         kernel.loop (%{{.*}}, %[[J:.*]]) in (1, 4) [parallel, parallel] {
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[LAST:.*]] = arith.constant 2 : index
// CHECK-NEXT:      kernel.store %[[ONE]], %c[%[[LAST]], %[[J]]] : memref<3x4xf32>
// CHECK:         kernel.loop (%[[K:.*]], %[[J2:.*]]) in (2, 4) [reduction, parallel] {
// CHECK:           %[[P:.*]] = arith.subi %{{.*}}, %[[K]] : index
// CHECK:           %[[Q:.*]] = arith.subi %{{.*}}, %[[K]] : index
// CHECK-NEXT:      %[[X:.*]] = kernel.load %x[%[[Q]], %[[J2]]] : memref<3x4xf32>
// CHECK-NEXT:      %[[PREV:.*]] = kernel.load %c[%[[Q]], %[[J2]]] : memref<3x4xf32>
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[PREV]], %[[X]] : f32
// CHECK-NEXT:      kernel.store %[[M]], %c[%[[P]], %[[J2]]] : memref<3x4xf32>
func.func @prod_first_exclusive_reverse(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %c = core.cumulative prod(%x) {axis = 0 : i64, exclusive = 1 : i64, reverse = 1 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return %c : tensor<3x4xf32>
}
