// A scatter copies its input into the result, then runs one nest over the
// updates that loads, combines (with the reduction's scalar op) and stores.
// Two updates may hit the same element, so every dim of that nest is
// `reduction`: it runs in order, and the last update wins for `none`.
// RUN: opt %s -p convert-core-to-kernel | filecheck %s

// CHECK-LABEL: func.func @scatter_elements(%x: memref<3x4xf32>, %i: memref<2x4xi64>, %u: memref<2x4xf32>) -> memref<3x4xf32>
// CHECK-NEXT:    %y = kernel.alloc() : memref<3x4xf32>
// CHECK-NEXT:    kernel.copy %x, %y : memref<3x4xf32>, memref<3x4xf32>
// CHECK-NEXT:    kernel.loop (%[[P:.*]], %[[Q:.*]]) in (2, 4) [reduction, reduction] {
// CHECK-NEXT:      %[[I:.*]] = kernel.load %i[%[[P]], %[[Q]]] : memref<2x4xi64>
// CHECK-NEXT:      %[[IX:.*]] = arith.index_cast %[[I]] : i64 to index
// CHECK-NEXT:      %[[U:.*]] = kernel.load %u[%[[P]], %[[Q]]] : memref<2x4xf32>
// CHECK-NEXT:      %[[OLD:.*]] = kernel.load %y[%[[IX]], %[[Q]]] : memref<3x4xf32>
// CHECK-NEXT:      %[[NEW:.*]] = arith.addf %[[OLD]], %[[U]] : f32
// CHECK-NEXT:      kernel.store %[[NEW]], %y[%[[IX]], %[[Q]]] : memref<3x4xf32>
// CHECK-NEXT:      kernel.yield
func.func @scatter_elements(%x: tensor<3x4xf32>, %i: tensor<2x4xi64>, %u: tensor<2x4xf32>) -> tensor<3x4xf32> {
  %y = core.scatter_elements add(%x, %i, %u) {axis = 0 : i64} : (tensor<3x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}

// Without a reduction the update is stored as it is; slabs of updates copy
// along the trailing dims.
// CHECK-LABEL: func.func @scatter_nd(%x: memref<?x3xf32>, %i: memref<2x1xi64>, %u: memref<2x3xf32>) -> memref<?x3xf32>
// CHECK-NEXT:    %[[N:.*]] = kernel.dim %x[0] : memref<?x3xf32>
// CHECK-NEXT:    %y = kernel.alloc(%[[N]]) : memref<?x3xf32>
// CHECK-NEXT:    kernel.copy %x, %y : memref<?x3xf32>, memref<?x3xf32>
// CHECK-NEXT:    kernel.loop (%[[P:.*]], %[[C:.*]]) in (2, 3) [reduction, reduction] {
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[I:.*]] = kernel.load %i[%[[P]], %[[Z]]] : memref<2x1xi64>
// CHECK-NEXT:      %[[IX:.*]] = arith.index_cast %[[I]] : i64 to index
// CHECK-NEXT:      %[[U:.*]] = kernel.load %u[%[[P]], %[[C]]] : memref<2x3xf32>
// CHECK-NEXT:      kernel.store %[[U]], %y[%[[IX]], %[[C]]] : memref<?x3xf32>
// CHECK-NEXT:      kernel.yield
func.func @scatter_nd(%x: tensor<?x3xf32>, %i: tensor<2x1xi64>, %u: tensor<2x3xf32>) -> tensor<?x3xf32> {
  %y = core.scatter_nd none(%x, %i, %u) : (tensor<?x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>) -> tensor<?x3xf32>
  func.return %y : tensor<?x3xf32>
}

// Each reduction is core.binary's scalar op for the element type.
// CHECK-LABEL: func.func @reductions
// CHECK:         kernel.loop (%{{.*}}) in (5) [reduction] {
// CHECK:           %[[I0:.*]] = kernel.load %i[%{{.*}}, %{{.*}}] : memref<5x2xi64>
// CHECK:           %[[I1:.*]] = kernel.load %i[%{{.*}}, %{{.*}}] : memref<5x2xi64>
// CHECK:           %[[OLD:.*]] = kernel.load %mx[%{{.*}}, %{{.*}}] : memref<4x3xi32>
// CHECK-NEXT:      %[[NEW:.*]] = arith.maxsi %[[OLD]], %{{.*}} : i32
// CHECK-NEXT:      kernel.store %[[NEW]], %mx
// CHECK:         kernel.loop (%{{.*}}) in (5) [reduction] {
// CHECK:           arith.minsi
// CHECK:         kernel.loop (%{{.*}}) in (5) [reduction] {
// CHECK:           arith.muli
// CHECK:         kernel.loop (%{{.*}}) in (2, 3) [reduction, reduction] {
// CHECK:           arith.maximumf
// CHECK:         kernel.loop (%{{.*}}) in (2, 3) [reduction, reduction] {
// CHECK:           arith.minimumf
func.func @reductions(%x: tensor<4x3xi32>, %i: tensor<5x2xi64>, %u: tensor<5xi32>, %f: tensor<3x4xf32>, %j: tensor<2x3xi64>, %v: tensor<2x3xf32>) -> (tensor<4x3xi32>, tensor<4x3xi32>, tensor<4x3xi32>, tensor<3x4xf32>, tensor<3x4xf32>) {
  %mx = core.scatter_nd max(%x, %i, %u) : (tensor<4x3xi32>, tensor<5x2xi64>, tensor<5xi32>) -> tensor<4x3xi32>
  %mn = core.scatter_nd min(%x, %i, %u) : (tensor<4x3xi32>, tensor<5x2xi64>, tensor<5xi32>) -> tensor<4x3xi32>
  %ml = core.scatter_nd mul(%x, %i, %u) : (tensor<4x3xi32>, tensor<5x2xi64>, tensor<5xi32>) -> tensor<4x3xi32>
  %fx = core.scatter_elements max(%f, %j, %v) {axis = 1 : i64} : (tensor<3x4xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<3x4xf32>
  %fn = core.scatter_elements min(%f, %j, %v) {axis = 1 : i64} : (tensor<3x4xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<3x4xf32>
  func.return %mx, %mn, %ml, %fx, %fn : tensor<4x3xi32>, tensor<4x3xi32>, tensor<4x3xi32>, tensor<3x4xf32>, tensor<3x4xf32>
}
