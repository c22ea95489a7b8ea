// A pad is one all-parallel nest over the result. Per padded dim the result
// index i maps back to j = i - pad_low: constant mode loads where j is in
// range (one unsigned compare, the load index clamped) and selects the fill
// elsewhere; edge clamps j; wrap and reflect take (i + shift) mod period, and
// reflect folds the upper half back. Negative pads crop: the crop is added to
// the source index. Run-time pads are loaded once, before the nest.
// RUN: opt %s -p convert-core-to-kernel | filecheck %s

// CHECK-LABEL: func.func @constant(%x: memref<2x3xf32>) -> memref<5x4xf32>
// CHECK:         %y = kernel.alloc() : memref<5x4xf32>
// CHECK-NEXT:    %[[FILL:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:    kernel.loop (%[[I:.*]], %[[J:.*]]) in (5, 4) [parallel, parallel] {
// CHECK-NEXT:      %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[I0:.*]] = arith.subi %[[I]], %[[C1]] : index
// CHECK-NEXT:      %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[IN0:.*]] = arith.cmpi ult, %[[I0]], %[[C2]] : index
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[S0:.*]] = arith.select %[[IN0]], %[[I0]], %[[Z]] : index
// CHECK-NEXT:      %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[IN1:.*]] = arith.cmpi ult, %[[J]], %[[C2]] : index
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[S1:.*]] = arith.select %[[IN1]], %[[J]], %[[Z]] : index
// CHECK-NEXT:      %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[CROP:.*]] = arith.addi %[[S1]], %[[C1]] : index
// CHECK-NEXT:      %[[V:.*]] = kernel.load %x[%[[S0]], %[[CROP]]] : memref<2x3xf32>
// CHECK-NEXT:      %[[IN:.*]] = arith.andi %[[IN0]], %[[IN1]] : i1
// CHECK-NEXT:      %[[R:.*]] = arith.select %[[IN]], %[[V]], %[[FILL]] : f32
// CHECK-NEXT:      kernel.store %[[R]], %y[%[[I]], %[[J]]] : memref<5x4xf32>
func.func @constant(%x: tensor<2x3xf32>) -> tensor<5x4xf32> {
  %v = core.constant() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %y = core.pad constant(%x, %v) {pad_low = array<i64: 1, -1>, pad_high = array<i64: 2, 2>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<5x4xf32>
  func.return %y : tensor<5x4xf32>
}

// An unpadded dim keeps its index; the last index is computed once.
// CHECK-LABEL: func.func @edge(%x: memref<?x3xf32>, %v: memref<f32>) -> memref<?x5xf32>
// CHECK-NEXT:    %[[N:.*]] = kernel.dim %x[0] : memref<?x3xf32>
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[M:.*]] = arith.addi %[[N]], %[[C1]] : index
// CHECK-NEXT:    %y = kernel.alloc(%[[M]]) : memref<?x5xf32>
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[LAST:.*]] = arith.subi %[[N]], %[[C1]] : index
// CHECK-NEXT:    kernel.loop (%[[I:.*]], %[[J:.*]]) in (%[[M]], 5) [parallel, parallel] {
// CHECK-NEXT:      %[[S0:.*]] = arith.minsi %[[I]], %[[LAST]] : index
// CHECK-NEXT:      %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[J0:.*]] = arith.subi %[[J]], %[[C2]] : index
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[S1:.*]] = arith.maxsi %[[J0]], %[[Z]] : index
// CHECK-NEXT:      %[[V:.*]] = kernel.load %x[%[[S0]], %[[S1]]] : memref<?x3xf32>
// CHECK-NEXT:      kernel.store %[[V]], %y[%[[I]], %[[J]]] : memref<?x5xf32>
func.func @edge(%x: tensor<?x3xf32>, %v: tensor<f32>) -> tensor<?x5xf32> {
  %y = core.pad edge(%x, %v) {pad_low = array<i64: 0, 2>, pad_high = array<i64: 1, 0>} : (tensor<?x3xf32>, tensor<f32>) -> tensor<?x5xf32>
  func.return %y : tensor<?x5xf32>
}

// wrap: (i + 4 - 3 mod 4) mod 4.
// CHECK-LABEL: func.func @wrap(%x: memref<4xf32>, %v: memref<f32>) -> memref<9xf32>
// CHECK:         kernel.loop (%[[I:.*]]) in (9) [parallel] {
// CHECK-NEXT:      %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[A:.*]] = arith.addi %[[I]], %[[C1]] : index
// CHECK-NEXT:      %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT:      %[[J:.*]] = arith.remui %[[A]], %[[C4]] : index
// CHECK-NEXT:      %[[V:.*]] = kernel.load %x[%[[J]]] : memref<4xf32>
func.func @wrap(%x: tensor<4xf32>, %v: tensor<f32>) -> tensor<9xf32> {
  %y = core.pad wrap(%x, %v) {pad_low = array<i64: 3>, pad_high = array<i64: 2>} : (tensor<4xf32>, tensor<f32>) -> tensor<9xf32>
  func.return %y : tensor<9xf32>
}

// reflect: period 2 * (4 - 1) = 6, j = (i + 3) mod 6, folded to 6 - j when j >= 4.
// CHECK-LABEL: func.func @reflect(%x: memref<4xf32>, %v: memref<f32>) -> memref<9xf32>
// CHECK:         kernel.loop (%[[I:.*]]) in (9) [parallel] {
// CHECK-NEXT:      %[[C3:.*]] = arith.constant 3 : index
// CHECK-NEXT:      %[[A:.*]] = arith.addi %[[I]], %[[C3]] : index
// CHECK-NEXT:      %[[C6:.*]] = arith.constant 6 : index
// CHECK-NEXT:      %[[J:.*]] = arith.remui %[[A]], %[[C6]] : index
// CHECK-NEXT:      %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT:      %[[LOW:.*]] = arith.cmpi ult, %[[J]], %[[C4]] : index
// CHECK-NEXT:      %[[C6:.*]] = arith.constant 6 : index
// CHECK-NEXT:      %[[F:.*]] = arith.subi %[[C6]], %[[J]] : index
// CHECK-NEXT:      %[[S:.*]] = arith.select %[[LOW]], %[[J]], %[[F]] : index
// CHECK-NEXT:      %[[V:.*]] = kernel.load %x[%[[S]]] : memref<4xf32>
func.func @reflect(%x: tensor<4xf32>, %v: tensor<f32>) -> tensor<9xf32> {
  %y = core.pad reflect(%x, %v) {pad_low = array<i64: 3>, pad_high = array<i64: 2>} : (tensor<4xf32>, tensor<f32>) -> tensor<9xf32>
  func.return %y : tensor<9xf32>
}

// Run-time pads (low, then high) may be negative: crop = max(-pad, 0), pad = max(pad, 0).
// CHECK-LABEL: func.func @runtime_pads(%x: memref<4xf32>, %v: memref<f32>, %pads: memref<2xi64>) -> memref<?xf32>
// CHECK:         %[[L0:.*]] = kernel.load %pads[%{{.*}}] : memref<2xi64>
// CHECK-NEXT:    %[[LO:.*]] = arith.index_cast %[[L0]] : i64 to index
// CHECK:         %[[H0:.*]] = kernel.load %pads[%{{.*}}] : memref<2xi64>
// CHECK-NEXT:    %[[HI:.*]] = arith.index_cast %[[H0]] : i64 to index
// CHECK:         %[[NEG:.*]] = arith.subi %{{.*}}, %[[LO]] : index
// CHECK:         %[[CROP:.*]] = arith.maxsi %[[NEG]], %{{.*}} : index
// CHECK:         %[[PAD:.*]] = arith.maxsi %[[LO]], %{{.*}} : index
// CHECK:         %[[K1:.*]] = arith.subi %{{.*}}, %[[CROP]] : index
// CHECK-NEXT:    %[[KEPT:.*]] = arith.subi %[[K1]], %{{.*}} : index
// CHECK:         %[[N:.*]] = arith.addi %{{.*}}, %[[HI]] : index
// CHECK-NEXT:    %y = kernel.alloc(%[[N]]) : memref<?xf32>
// CHECK-NEXT:    %[[FILL:.*]] = kernel.load %v[] : memref<f32>
// CHECK-NEXT:    kernel.loop (%[[I:.*]]) in (%[[N]]) [parallel] {
// CHECK-NEXT:      %[[J:.*]] = arith.subi %[[I]], %[[PAD]] : index
// CHECK-NEXT:      %[[IN:.*]] = arith.cmpi ult, %[[J]], %[[KEPT]] : index
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[S:.*]] = arith.select %[[IN]], %[[J]], %[[Z]] : index
// CHECK-NEXT:      %[[SRC:.*]] = arith.addi %[[S]], %[[CROP]] : index
// CHECK-NEXT:      %[[V:.*]] = kernel.load %x[%[[SRC]]] : memref<4xf32>
// CHECK-NEXT:      %[[R:.*]] = arith.select %[[IN]], %[[V]], %[[FILL]] : f32
// CHECK-NEXT:      kernel.store %[[R]], %y[%[[I]]] : memref<?xf32>
func.func @runtime_pads(%x: tensor<4xf32>, %v: tensor<f32>, %pads: tensor<2xi64>) -> tensor<?xf32> {
  %y = core.pad constant(%x, %v, %pads) : (tensor<4xf32>, tensor<f32>, tensor<2xi64>) -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}
