// f32 matmuls become one kernel.matmul (the C runtime's GEMM) on rank-3 views;
// a matrix broadcast over the batch is read once (batch 1) and a transposed
// right operand is read in place (transpose_rhs), so neither copy is needed.
// f16 is widened to f32 around the GEMM; other types get a loop nest with a
// reduction carrying the sum in the acc type.
// RUN: opt %s -p convert-core-to-kernel | filecheck %s

// CHECK-LABEL: func.func @batched(%a: memref<2x3x4xf32>, %b: memref<2x4x5xf32>) -> memref<2x3x5xf32>
// CHECK-NEXT:    %c = kernel.alloc() : memref<2x3x5xf32>
// CHECK-NEXT:    kernel.matmul %a, %b, %c : memref<2x3x4xf32>, memref<2x4x5xf32>, memref<2x3x5xf32>
// CHECK-NEXT:    func.return %c
func.func @batched(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %c = core.matmul(%a, %b) {acc = f32} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  func.return %c : tensor<2x3x5xf32>
}

// CHECK-LABEL: func.func @plain(%a: memref<3x4xf32>, %b: memref<4x5xf32>) -> memref<3x5xf32>
// CHECK:         %[[A:.*]] = kernel.view %a() : memref<3x4xf32> -> memref<1x3x4xf32>
// CHECK-NEXT:    %[[B:.*]] = kernel.view %b() : memref<4x5xf32> -> memref<1x4x5xf32>
// CHECK-NEXT:    %[[C:.*]] = kernel.view %c() : memref<3x5xf32> -> memref<1x3x5xf32>
// CHECK-NEXT:    kernel.matmul %[[A]], %[[B]], %[[C]] : memref<1x3x4xf32>, memref<1x4x5xf32>, memref<1x3x5xf32>
func.func @plain(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %c = core.matmul(%a, %b) {acc = f32} : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  func.return %c : tensor<3x5xf32>
}

// CHECK-LABEL: func.func @shared_weight
// CHECK:         %[[W:.*]] = kernel.view %w() : memref<4x5xf32> -> memref<1x4x5xf32>
// CHECK-NEXT:    kernel.matmul %a, %[[W]], %c : memref<2x3x4xf32>, memref<1x4x5xf32>, memref<2x3x5xf32>
func.func @shared_weight(%a: tensor<2x3x4xf32>, %w: tensor<4x5xf32>) -> tensor<2x3x5xf32> {
  %b = core.broadcast(%w) {dims = array<i64: 1, 2>} : (tensor<4x5xf32>) -> tensor<2x4x5xf32>
  %c = core.matmul(%a, %b) {acc = f32} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  func.return %c : tensor<2x3x5xf32>
}

// CHECK-LABEL: func.func @transposed_rhs
// CHECK:         %[[W:.*]] = kernel.view %w() : memref<5x4xf32> -> memref<1x5x4xf32>
// CHECK:         kernel.matmul %{{.*}}, %[[W]], %{{.*}} {transpose_rhs} : memref<1x3x4xf32>, memref<1x5x4xf32>, memref<1x3x5xf32>
func.func @transposed_rhs(%a: tensor<3x4xf32>, %w: tensor<5x4xf32>) -> tensor<3x5xf32> {
  %b = core.transpose(%w) {perm = array<i64: 1, 0>} : (tensor<5x4xf32>) -> tensor<4x5xf32>
  %c = core.matmul(%a, %b) {acc = f32} : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  func.return %c : tensor<3x5xf32>
}

// CHECK-LABEL: func.func @dynamic_batch(%a: memref<?x3x4xf32>, %b: memref<?x4x5xf32>) -> memref<?x3x5xf32>
// CHECK:         %[[N:.*]] = kernel.dim %a[0]
// CHECK:         %c = kernel.alloc(%[[N]]) : memref<?x3x5xf32>
// CHECK:         %[[B:.*]] = kernel.view %b(%[[N]]) : memref<?x4x5xf32> -> memref<?x4x5xf32>
// CHECK:         kernel.matmul %a, %[[B]], %c : memref<?x3x4xf32>, memref<?x4x5xf32>, memref<?x3x5xf32>
func.func @dynamic_batch(%a: tensor<?x3x4xf32>, %b: tensor<?x4x5xf32>) -> tensor<?x3x5xf32> {
  %c = core.matmul(%a, %b) {acc = f32} : (tensor<?x3x4xf32>, tensor<?x4x5xf32>) -> tensor<?x3x5xf32>
  func.return %c : tensor<?x3x5xf32>
}

// CHECK-LABEL: func.func @half(%a: memref<3x4xf16>, %b: memref<4x5xf16>) -> memref<3x5xf16>
// CHECK:         %[[W:.*]] = kernel.alloc() : memref<3x5xf32>
// CHECK:         arith.extf %{{.*}} : f16 to f32
// CHECK:         arith.extf %{{.*}} : f16 to f32
// CHECK:         kernel.matmul {{.*}} : memref<1x3x4xf32>, memref<1x4x5xf32>, memref<1x3x5xf32>
// CHECK:         %[[V:.*]] = kernel.load %[[W]]
// CHECK-NEXT:    arith.truncf %[[V]] : f32 to f16
func.func @half(%a: tensor<3x4xf16>, %b: tensor<4x5xf16>) -> tensor<3x5xf16> {
  %c = core.matmul(%a, %b) {acc = f16} : (tensor<3x4xf16>, tensor<4x5xf16>) -> tensor<3x5xf16>
  func.return %c : tensor<3x5xf16>
}

// CHECK-LABEL: func.func @integer(%a: memref<2x3x4xi8>, %b: memref<2x4x5xi8>) -> memref<2x3x5xi32>
// CHECK-NOT:     kernel.matmul
// CHECK:         kernel.loop (%[[B:.*]], %[[I:.*]], %[[J:.*]]) in (2, 3, 5) [parallel, parallel, parallel] {
// CHECK:           %[[Z:.*]] = arith.constant 0 : i32
// CHECK-NEXT:      %[[S:.*]] = kernel.loop (%[[K:.*]]) in (4) [reduction] iter_args(%[[ACC:.*]] = %[[Z]] : i32) -> i32 {
// CHECK-NEXT:        %[[X:.*]] = kernel.load %a[%[[B]], %[[I]], %[[K]]] : memref<2x3x4xi8>
// CHECK-NEXT:        %[[XE:.*]] = arith.extsi %[[X]] : i8 to i32
// CHECK-NEXT:        %[[Y:.*]] = kernel.load %b[%[[B]], %[[K]], %[[J]]] : memref<2x4x5xi8>
// CHECK-NEXT:        %[[YE:.*]] = arith.extsi %[[Y]] : i8 to i32
// CHECK-NEXT:        %[[P:.*]] = arith.muli %[[XE]], %[[YE]] : i32
// CHECK-NEXT:        %[[T:.*]] = arith.addi %[[ACC]], %[[P]] : i32
// CHECK-NEXT:        kernel.yield %[[T]] : i32
// CHECK-NEXT:      }
// CHECK-NEXT:      kernel.store %[[S]], %c[%[[B]], %[[I]], %[[J]]] : memref<2x3x5xi32>
func.func @integer(%a: tensor<2x3x4xi8>, %b: tensor<2x4x5xi8>) -> tensor<2x3x5xi32> {
  %c = core.matmul(%a, %b) {acc = i32} : (tensor<2x3x4xi8>, tensor<2x4x5xi8>) -> tensor<2x3x5xi32>
  func.return %c : tensor<2x3x5xi32>
}

// CHECK-LABEL: func.func @double
// CHECK-NOT:     kernel.matmul
// CHECK:         kernel.loop {{.*}} [reduction] iter_args({{.*}} : f64) -> f64
func.func @double(%a: tensor<3x4xf64>, %b: tensor<4x5xf64>) -> tensor<3x5xf64> {
  %c = core.matmul(%a, %b) {acc = f64} : (tensor<3x4xf64>, tensor<4x5xf64>) -> tensor<3x5xf64>
  func.return %c : tensor<3x5xf64>
}

// A transposed constant (a Gemm's weight with transB) is read in place, as
// [1, N, K] with `transpose_rhs`: C generation packs it for the GEMM once, at
// init, so the weights file holds one copy in the model's own layout.
// CHECK-LABEL: func.func @transposed_constant
// CHECK:         %[[W:.*]] = kernel.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK:         %[[V:.*]] = kernel.view %[[W]]() : memref<2x3xf32> -> memref<1x2x3xf32>
// CHECK:         kernel.matmul %{{.*}}, %[[V]], %{{.*}} {transpose_rhs} : memref<1x8x3xf32>, memref<1x2x3xf32>, memref<1x8x2xf32>
func.func @transposed_constant(%a: tensor<8x3xf32>) -> tensor<8x2xf32> {
  %w = core.constant() {value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %b = core.transpose(%w) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %c = core.matmul(%a, %b) {acc = f32} : (tensor<8x3xf32>, tensor<3x2xf32>) -> tensor<8x2xf32>
  func.return %c : tensor<8x2xf32>
}

// With at most 4 rows the transposed form is a set of dot products.
// CHECK-LABEL: func.func @transposed_constant_few_rows
// CHECK:         kernel.matmul %{{.*}}, %{{.*}}, %{{.*}} {transpose_rhs} : memref<1x4x3xf32>, memref<1x2x3xf32>, memref<1x4x2xf32>
func.func @transposed_constant_few_rows(%a: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = core.constant() {value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %b = core.transpose(%w) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %c = core.matmul(%a, %b) {acc = f32} : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  func.return %c : tensor<4x2xf32>
}

// A transposed weight broadcast over the batch (how exporters write a tied
// language-model head, x[1, S, H] @ W^T) is one matrix read in place: the
// matmul reads %w itself, so the nests of the transpose and the broadcast are
// dead (kernel-drop-dead-buffers removes them).
// CHECK-LABEL: func.func @transposed_then_broadcast
// CHECK:         %[[V:.*]] = kernel.view %w() : memref<5x3xf32> -> memref<1x5x3xf32>
// CHECK:         kernel.matmul %{{.*}}, %[[V]], %{{.*}} {transpose_rhs} : memref<1x8x3xf32>, memref<1x5x3xf32>, memref<1x8x5xf32>
func.func @transposed_then_broadcast(%a: tensor<1x8x3xf32>, %w: tensor<5x3xf32>) -> tensor<1x8x5xf32> {
  %t = core.transpose(%w) {perm = array<i64: 1, 0>} : (tensor<5x3xf32>) -> tensor<3x5xf32>
  %b = core.broadcast(%t) {dims = array<i64: 1, 2>} : (tensor<3x5xf32>) -> tensor<1x3x5xf32>
  %c = core.matmul(%a, %b) {acc = f32} : (tensor<1x8x3xf32>, tensor<1x3x5xf32>) -> tensor<1x8x5xf32>
  func.return %c : tensor<1x8x5xf32>
}
