// A reduction whose innermost input dim is reduced: one parallel nest over the
// kept dims around a reduction loop that carries the accumulator in iter_args.
// Empty reductions store the identity; and/or accumulate in i1; reducing
// nothing converts each element as the reduction would.
// RUN: opt %s -p convert-core-to-kernel | filecheck %s

// CHECK-LABEL: func.func @sum_last(%x: memref<?x8xf32>) -> memref<?xf32>
// CHECK:         %[[N:.*]] = kernel.dim %x[0] : memref<?x8xf32>
// CHECK-NEXT:    %y = kernel.alloc(%[[N]]) : memref<?xf32>
// CHECK-NEXT:    kernel.loop (%[[I:.*]]) in (%[[N]]) [parallel] {
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[S:.*]] = kernel.loop (%[[K:.*]]) in (8) [reduction] iter_args(%[[ACC:.*]] = %[[Z]] : f32) -> f32 {
// CHECK-NEXT:        %[[V:.*]] = kernel.load %x[%[[I]], %[[K]]] : memref<?x8xf32>
// CHECK-NEXT:        %[[T:.*]] = arith.addf %[[ACC]], %[[V]] : f32
// CHECK-NEXT:        kernel.yield %[[T]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      kernel.store %[[S]], %y[%[[I]]] : memref<?xf32>
func.func @sum_last(%x: tensor<?x8xf32>) -> tensor<?xf32> {
  %y = core.reduce sum(%x) {axes = array<i64: 1>} : (tensor<?x8xf32>) -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}

// Reduced dims need not be adjacent: the inner loop runs over both, in order.
// CHECK-LABEL: func.func @max_outer_and_last(%x: memref<2x3x4xi32>) -> memref<3xi32>
// CHECK:         kernel.loop (%[[J:.*]]) in (3) [parallel] {
// CHECK-NEXT:      %[[L:.*]] = arith.constant -2147483648 : i32
// CHECK-NEXT:      kernel.loop (%[[A:.*]], %[[C:.*]]) in (2, 4) [reduction, reduction] iter_args(%[[ACC:.*]] = %[[L]] : i32) -> i32 {
// CHECK-NEXT:        %[[V:.*]] = kernel.load %x[%[[A]], %[[J]], %[[C]]] : memref<2x3x4xi32>
// CHECK-NEXT:        arith.maxsi %[[ACC]], %[[V]] : i32
func.func @max_outer_and_last(%x: tensor<2x3x4xi32>) -> tensor<3xi32> {
  %y = core.reduce max(%x) {axes = array<i64: 0, 2>} : (tensor<2x3x4xi32>) -> tensor<3xi32>
  func.return %y : tensor<3xi32>
}

// A full reduction gives a rank-0 buffer; min starts from +inf.
// CHECK-LABEL: func.func @min_all(%x: memref<4x5xf64>) -> memref<f64>
// CHECK:         %y = kernel.alloc() : memref<f64>
// CHECK-NEXT:    %[[H:.*]] = arith.constant 0x7ff0000000000000 : f64
// CHECK-NEXT:    %[[M:.*]] = kernel.loop (%{{.*}}, %{{.*}}) in (4, 5) [reduction, reduction] iter_args(%{{.*}} = %[[H]] : f64) -> f64 {
// CHECK:           arith.minimumf
// CHECK:         kernel.store %[[M]], %y[] : memref<f64>
func.func @min_all(%x: tensor<4x5xf64>) -> tensor<f64> {
  %y = core.reduce min(%x) {axes = array<i64: 0, 1>} : (tensor<4x5xf64>) -> tensor<f64>
  func.return %y : tensor<f64>
}

// An empty reduction stores the identity (1 for prod) and has no loop.
// CHECK-LABEL: func.func @prod_empty(%x: memref<3x0xf32>) -> memref<3xf32>
// CHECK:         kernel.loop (%[[I:.*]]) in (3) [parallel] {
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      kernel.store %[[ONE]], %y[%[[I]]] : memref<3xf32>
// CHECK-NEXT:      kernel.yield
// CHECK-NEXT:    }
func.func @prod_empty(%x: tensor<3x0xf32>) -> tensor<3xf32> {
  %y = core.reduce prod(%x) {axes = array<i64: 1>} : (tensor<3x0xf32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}

// f16 sums accumulate in f32 and round once.
// CHECK-LABEL: func.func @sum_f16(%x: memref<2x6xf16>) -> memref<2xf16>
// CHECK:         kernel.loop {{.*}} in (6) [reduction] iter_args({{.*}} : f32) -> f32 {
// CHECK:           arith.extf %{{.*}} : f16 to f32
// CHECK-NEXT:      arith.addf {{.*}} : f32
// CHECK:         arith.truncf %{{.*}} : f32 to f16
func.func @sum_f16(%x: tensor<2x6xf16>) -> tensor<2xf16> {
  %y = core.reduce sum(%x) {axes = array<i64: 1>} : (tensor<2x6xf16>) -> tensor<2xf16>
  func.return %y : tensor<2xf16>
}

// `and` on floats tests each element against zero and accumulates in i1.
// CHECK-LABEL: func.func @and_f32(%x: memref<2x3xf32>) -> memref<2xf32>
// CHECK:         %[[T:.*]] = arith.constant true
// CHECK-NEXT:    kernel.loop {{.*}} in (3) [reduction] iter_args(%[[ACC:.*]] = %[[T]] : i1) -> i1 {
// CHECK:           %[[NZ:.*]] = arith.cmpf une
// CHECK-NEXT:      arith.andi %[[ACC]], %[[NZ]] : i1
// CHECK:         arith.uitofp %{{.*}} : i1 to f32
func.func @and_f32(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %y = core.reduce and(%x) {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// Reducing no axes copies (sum of booleans is `or`, so the i1 passes through).
// CHECK-LABEL: func.func @sum_none(%x: memref<4xi1>) -> memref<4xi1>
// CHECK:         kernel.loop (%[[I:.*]]) in (4) [parallel] {
// CHECK-NEXT:      %[[V:.*]] = kernel.load %x[%[[I]]] : memref<4xi1>
// CHECK-NEXT:      kernel.store %[[V]], %y[%[[I]]] : memref<4xi1>
func.func @sum_none(%x: tensor<4xi1>) -> tensor<4xi1> {
  %y = core.reduce sum(%x) {axes = array<i64>} : (tensor<4xi1>) -> tensor<4xi1>
  func.return %y : tensor<4xi1>
}
