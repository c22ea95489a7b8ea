// core.masked_reduce (dims chosen at run time by a mask of i1): the mask is read
// once; each result dim is 1 where flagged, else the input's (a static 1 stays
// 1). The result starts at the identity, then one nest over the input, every
// loop a `reduction` (which dims meet is unknown), folds each element in at its
// index with the flagged dims set to 0. f16 sums accumulate in an f32 buffer,
// rounded once at the end.
// RUN: opt %s -p convert-core-to-kernel | filecheck %s

// CHECK-LABEL: func.func @sum_masked(%x: memref<?x1x4xf16>, %m: memref<3xi1>) -> memref<?x1x?xf16>
// CHECK:         %[[N:.*]] = kernel.dim %x[0] : memref<?x1x4xf16>
// CHECK:         %[[F0:.*]] = kernel.load %m[%{{.*}}] : memref<3xi1>
// CHECK:         %[[F1:.*]] = kernel.load %m[%{{.*}}] : memref<3xi1>
// CHECK:         %[[F2:.*]] = kernel.load %m[%{{.*}}] : memref<3xi1>
// CHECK:         %[[D0:.*]] = arith.select %[[F0]], %{{.*}}, %[[N]] : index
// CHECK:         %[[D2:.*]] = arith.select %[[F2]], %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    %y = kernel.alloc(%[[D0]], %[[D2]]) : memref<?x1x?xf16>
// CHECK-NEXT:    %[[ACC:.*]] = kernel.alloc(%[[D0]], %[[D2]]) : memref<?x1x?xf32>
// CHECK-NEXT:    kernel.loop (%[[A:.*]], %[[B:.*]], %[[C:.*]]) in (%[[D0]], 1, %[[D2]]) [parallel, parallel, parallel] {
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      kernel.store %[[Z]], %[[ACC]][%[[A]], %[[B]], %[[C]]]
// CHECK:         kernel.loop (%[[I:.*]], %[[J:.*]], %[[K:.*]]) in (%[[N]], 1, 4) [reduction, reduction, reduction] {
// CHECK:           %[[I0:.*]] = arith.select %[[F0]], %{{.*}}, %[[I]] : index
// CHECK:           %[[K0:.*]] = arith.select %[[F2]], %{{.*}}, %[[K]] : index
// CHECK-NEXT:      %[[V:.*]] = kernel.load %x[%[[I]], %[[J]], %[[K]]] : memref<?x1x4xf16>
// CHECK-NEXT:      %[[W:.*]] = arith.extf %[[V]] : f16 to f32
// CHECK:           %[[OLD:.*]] = kernel.load %[[ACC]][%[[I0]], %{{.*}}, %[[K0]]] : memref<?x1x?xf32>
// CHECK-NEXT:      %[[NEW:.*]] = arith.addf %[[OLD]], %[[W]] : f32
// CHECK:           kernel.store %[[NEW]], %[[ACC]][%[[I0]], %{{.*}}, %[[K0]]] : memref<?x1x?xf32>
// CHECK:         kernel.loop (%{{.*}}) in (%[[D0]], 1, %[[D2]]) [parallel, parallel, parallel] {
// CHECK:           arith.truncf %{{.*}} : f32 to f16
// CHECK:         func.return %y : memref<?x1x?xf16>
func.func @sum_masked(%x: tensor<?x1x4xf16>, %m: tensor<3xi1>) -> tensor<?x1x?xf16> {
  %y = core.masked_reduce sum(%x, %m) : (tensor<?x1x4xf16>, tensor<3xi1>) -> tensor<?x1x?xf16>
  func.return %y : tensor<?x1x?xf16>
}

// max of integers starts from the smallest one and accumulates in the result.
// CHECK-LABEL: func.func @max_masked(%x: memref<2x3xi32>, %m: memref<2xi1>) -> memref<?x?xi32>
// CHECK:         %y = kernel.alloc(%{{.*}}, %{{.*}}) : memref<?x?xi32>
// CHECK-NEXT:    kernel.loop
// CHECK-NEXT:      %[[L:.*]] = arith.constant -2147483648 : i32
// CHECK:         kernel.loop (%{{.*}}, %{{.*}}) in (2, 3) [reduction, reduction] {
// CHECK:           arith.maxsi
// CHECK:           kernel.store %{{.*}}, %y[%{{.*}}, %{{.*}}] : memref<?x?xi32>
// CHECK-NOT:     kernel.alloc
// CHECK:         func.return %y
func.func @max_masked(%x: tensor<2x3xi32>, %m: tensor<2xi1>) -> tensor<?x?xi32> {
  %y = core.masked_reduce max(%x, %m) : (tensor<2x3xi32>, tensor<2xi1>) -> tensor<?x?xi32>
  func.return %y : tensor<?x?xi32>
}
