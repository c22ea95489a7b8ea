// A reduction whose innermost input dim is kept (a column sum, a sum over the
// channels of NCHW) sets the result to the identity, then accumulates into it
// in one nest over the input in its own order, reduced dims marked reduction:
// the innermost loop reads input and result contiguously. f16 sums go through
// an f32 scratch buffer and are rounded once at the end.
// RUN: opt %s -p convert-core-to-kernel | filecheck %s

// CHECK-LABEL: func.func @sum_middle(%x: memref<3x4x5xf32>) -> memref<3x5xf32>
// CHECK:         %y = kernel.alloc() : memref<3x5xf32>
// CHECK-NEXT:    kernel.loop (%[[A:.*]], %[[B:.*]]) in (3, 5) [parallel, parallel] {
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      kernel.store %[[Z]], %y[%[[A]], %[[B]]] : memref<3x5xf32>
// CHECK-NEXT:      kernel.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    kernel.loop (%[[I:.*]], %[[K:.*]], %[[J:.*]]) in (3, 4, 5) [parallel, reduction, parallel] {
// CHECK-NEXT:      %[[V:.*]] = kernel.load %x[%[[I]], %[[K]], %[[J]]] : memref<3x4x5xf32>
// CHECK-NEXT:      %[[OLD:.*]] = kernel.load %y[%[[I]], %[[J]]] : memref<3x5xf32>
// CHECK-NEXT:      %[[NEW:.*]] = arith.addf %[[OLD]], %[[V]] : f32
// CHECK-NEXT:      kernel.store %[[NEW]], %y[%[[I]], %[[J]]] : memref<3x5xf32>
// CHECK-NEXT:      kernel.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y
func.func @sum_middle(%x: tensor<3x4x5xf32>) -> tensor<3x5xf32> {
  %y = core.reduce sum(%x) {axes = array<i64: 1>} : (tensor<3x4x5xf32>) -> tensor<3x5xf32>
  func.return %y : tensor<3x5xf32>
}

// Run-time sizes: the outermost dim is reduced, the kept dim is innermost.
// CHECK-LABEL: func.func @max_columns(%x: memref<?x?xf32>) -> memref<?xf32>
// CHECK:         %[[N:.*]] = kernel.dim %x[0]
// CHECK:         %[[M:.*]] = kernel.dim %x[1]
// CHECK-NEXT:    %y = kernel.alloc(%[[M]]) : memref<?xf32>
// CHECK-NEXT:    kernel.loop (%{{.*}}) in (%[[M]]) [parallel] {
// CHECK-NEXT:      arith.constant 0xff800000 : f32
// CHECK:         kernel.loop (%[[R:.*]], %[[C:.*]]) in (%[[N]], %[[M]]) [reduction, parallel] {
// CHECK:           arith.maximumf
// CHECK:           kernel.store %{{.*}}, %y[%[[C]]] : memref<?xf32>
func.func @max_columns(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  %y = core.reduce max(%x) {axes = array<i64: 0>} : (tensor<?x?xf32>) -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}

// CHECK-LABEL: func.func @sum_f16(%x: memref<2x7x3xf16>) -> memref<2x3xf16>
// CHECK:         %y = kernel.alloc() : memref<2x3xf16>
// CHECK-NEXT:    %[[ACC:.*]] = kernel.alloc() : memref<2x3xf32>
// CHECK:         kernel.loop {{.*}} in (2, 7, 3) [parallel, reduction, parallel] {
// CHECK:           arith.extf %{{.*}} : f16 to f32
// CHECK:           kernel.store %{{.*}}, %[[ACC]]
// CHECK:         kernel.loop {{.*}} in (2, 3) [parallel, parallel] {
// CHECK-NEXT:      %[[S:.*]] = kernel.load %[[ACC]]
// CHECK-NEXT:      %[[H:.*]] = arith.truncf %[[S]] : f32 to f16
// CHECK-NEXT:      kernel.store %[[H]], %y
func.func @sum_f16(%x: tensor<2x7x3xf16>) -> tensor<2x3xf16> {
  %y = core.reduce sum(%x) {axes = array<i64: 1>} : (tensor<2x7x3xf16>) -> tensor<2x3xf16>
  func.return %y : tensor<2x3xf16>
}

// Trailing dims of size 1 do not walk memory: reducing the dim before them is
// still the iter_args form.
// CHECK-LABEL: func.func @trailing_ones(%x: memref<3x4x1xf32>) -> memref<3x1xf32>
// CHECK:         kernel.loop (%{{.*}}, %{{.*}}) in (3, 1) [parallel, parallel] {
// CHECK:           kernel.loop (%{{.*}}) in (4) [reduction] iter_args
func.func @trailing_ones(%x: tensor<3x4x1xf32>) -> tensor<3x1xf32> {
  %y = core.reduce sum(%x) {axes = array<i64: 1>} : (tensor<3x4x1xf32>) -> tensor<3x1xf32>
  func.return %y : tensor<3x1xf32>
}
