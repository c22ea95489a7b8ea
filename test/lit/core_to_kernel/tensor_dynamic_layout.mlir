// What the dynamic lowerings of Trilu, EyeLike, OneHot, GatherND and ScatterND
// hand the kernel level: an iota whose sizes are rank-0 operands (loaded once,
// then the nest's bounds), and index tuples of `?` depth given a static depth
// by a reshape with a shape operand, a view, so the nests load a fixed number
// of index entries.
// RUN: opt %s -p convert-core-to-kernel | filecheck %s

// CHECK-LABEL: func.func @iota_sized(%n: memref<i64>, %m: memref<i64>) -> memref<?x?xi64>
// CHECK-NEXT:    %[[N:.*]] = kernel.load %n[] : memref<i64>
// CHECK-NEXT:    %[[NI:.*]] = arith.index_cast %[[N]] : i64 to index
// CHECK-NEXT:    %[[M:.*]] = kernel.load %m[] : memref<i64>
// CHECK-NEXT:    %[[MI:.*]] = arith.index_cast %[[M]] : i64 to index
// CHECK-NEXT:    %r = kernel.alloc(%[[NI]], %[[MI]]) : memref<?x?xi64>
// CHECK-NEXT:    kernel.loop (%{{.*}}, %[[J:.*]]) in (%[[NI]], %[[MI]]) [parallel, parallel] {
// CHECK-NEXT:      %[[V:.*]] = arith.index_cast %[[J]] : index to i64
// CHECK-NEXT:      kernel.store %[[V]], %r
func.func @iota_sized(%n: tensor<i64>, %m: tensor<i64>) -> tensor<?x?xi64> {
  %r = core.iota(%n, %m) {dim = 1 : i64} : (tensor<i64>, tensor<i64>) -> tensor<?x?xi64>
  func.return %r : tensor<?x?xi64>
}

// out[p, c] = x[i[p, 0], i[p, 1], c]
// CHECK-LABEL: func.func @gather_nd_depth(%x: memref<?x?x?xf32>, %i: memref<?x?xi64>, %s: memref<2xi64>) -> memref<?x?xf32>
// CHECK:         %[[P:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK-NEXT:    %j = kernel.view %i(%[[P]]) : memref<?x?xi64> -> memref<?x2xi64>
// CHECK:         %[[C:.*]] = kernel.dim %x[2] : memref<?x?x?xf32>
// CHECK-NEXT:    %y = kernel.alloc(%[[P]], %[[C]]) : memref<?x?xf32>
// CHECK-NEXT:    kernel.loop (%[[Q:.*]], %[[K:.*]]) in (%[[P]], %[[C]]) [parallel, parallel] {
// CHECK:           %[[I0:.*]] = kernel.load %j[%[[Q]], %{{.*}}] : memref<?x2xi64>
// CHECK:           %[[I1:.*]] = kernel.load %j[%[[Q]], %{{.*}}] : memref<?x2xi64>
// CHECK:           %[[V:.*]] = kernel.load %x[%{{.*}}, %{{.*}}, %[[K]]] : memref<?x?x?xf32>
// CHECK-NEXT:      kernel.store %[[V]], %y[%[[Q]], %[[K]]] : memref<?x?xf32>
func.func @gather_nd_depth(%x: tensor<?x?x?xf32>, %i: tensor<?x?xi64>, %s: tensor<2xi64>) -> tensor<?x?xf32> {
  %j = core.reshape(%i, %s) : (tensor<?x?xi64>, tensor<2xi64>) -> tensor<?x2xi64>
  %y = core.gather_nd(%x, %j) {batch_dims = 0 : i64} : (tensor<?x?x?xf32>, tensor<?x2xi64>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}

// out[i[p, 0], i[p, 1]] += u[p], in order
// CHECK-LABEL: func.func @scatter_nd_depth(
// CHECK:         %j = kernel.view %i(%{{.*}}) : memref<?x?xi64> -> memref<?x2xi64>
// CHECK:         kernel.copy %x, %y : memref<?x?xf32>, memref<?x?xf32>
// CHECK-NEXT:    %[[N:.*]] = kernel.dim %u[0] : memref<?xf32>
// CHECK-NEXT:    kernel.loop (%[[Q:.*]]) in (%[[N]]) [reduction] {
// CHECK:           kernel.load %j[%[[Q]], %{{.*}}] : memref<?x2xi64>
// CHECK:           kernel.load %j[%[[Q]], %{{.*}}] : memref<?x2xi64>
// CHECK:           %[[NEW:.*]] = kernel.load %u[%[[Q]]] : memref<?xf32>
// CHECK-NEXT:      %[[OLD:.*]] = kernel.load %y[%{{.*}}, %{{.*}}] : memref<?x?xf32>
// CHECK-NEXT:      %{{.*}} = arith.addf %[[OLD]], %[[NEW]] : f32
func.func @scatter_nd_depth(%x: tensor<?x?xf32>, %i: tensor<?x?xi64>, %s: tensor<2xi64>, %u: tensor<?xf32>) -> tensor<?x?xf32> {
  %j = core.reshape(%i, %s) : (tensor<?x?xi64>, tensor<2xi64>) -> tensor<?x2xi64>
  %y = core.scatter_nd add(%x, %j, %u) : (tensor<?x?xf32>, tensor<?x2xi64>, tensor<?xf32>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}
