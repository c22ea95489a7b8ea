// kernel-tile on transposes: the dim walking the strided read's last index
// and the innermost dim are tiled by 32; static bounds divisible by 32 give
// static point bounds, others min(32, N - t); small transposes stay.
// RUN: opt %s -p kernel-tile | filecheck %s

// CHECK-LABEL: func.func @transpose_2048
// CHECK:         kernel.loop (%[[TI:.*]], %[[TJ:.*]]) in (2048, 2048) step (32, 32) [parallel, parallel] {
// CHECK-NEXT:      kernel.loop (%[[PI:.*]], %[[PJ:.*]]) in (32, 32) [parallel, parallel] {
// CHECK-NEXT:        %[[I:.*]] = arith.addi %[[TI]], %[[PI]] : index
// CHECK-NEXT:        %[[J:.*]] = arith.addi %[[TJ]], %[[PJ]] : index
// CHECK-NEXT:        %v = kernel.load %x[%[[J]], %[[I]]] : memref<2048x2048xf32>
// CHECK-NEXT:        kernel.store %v, %y[%[[I]], %[[J]]] : memref<2048x2048xf32>
// CHECK-NEXT:        kernel.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      kernel.yield
// CHECK-NEXT:    }
func.func @transpose_2048(%x: memref<2048x2048xf32>, %y: memref<2048x2048xf32>) {
  kernel.loop (%i, %j) in (2048, 2048) [parallel, parallel] {
    %v = kernel.load %x[%j, %i] : memref<2048x2048xf32>
    kernel.store %v, %y[%i, %j] : memref<2048x2048xf32>
    kernel.yield
  }
  func.return
}

// A batched transpose of the last two dims, with a bound that 32 does not
// divide and a run-time one: the batch dim stays whole in the outer nest.
// CHECK-LABEL: func.func @batched_ragged
// CHECK:         kernel.loop (%b, %[[TI:.*]], %[[TJ:.*]]) in (3, 1000, %n) step (1, 32, 32) [parallel, parallel, parallel] {
// CHECK-NEXT:      %[[N1:.*]] = arith.constant 1000 : index
// CHECK-NEXT:      %[[C1:.*]] = arith.constant 32 : index
// CHECK-NEXT:      %[[L1:.*]] = arith.subi %[[N1]], %[[TI]] : index
// CHECK-NEXT:      %[[B1:.*]] = arith.minsi %[[C1]], %[[L1]] : index
// CHECK-NEXT:      %[[C2:.*]] = arith.constant 32 : index
// CHECK-NEXT:      %[[L2:.*]] = arith.subi %n, %[[TJ]] : index
// CHECK-NEXT:      %[[B2:.*]] = arith.minsi %[[C2]], %[[L2]] : index
// CHECK-NEXT:      kernel.loop (%{{.*}}, %{{.*}}) in (%[[B1]], %[[B2]]) [parallel, parallel] {
func.func @batched_ragged(%x: memref<3x?x1000xf32>, %y: memref<3x1000x?xf32>, %n: index) {
  kernel.loop (%b, %i, %j) in (3, 1000, %n) [parallel, parallel, parallel] {
    %v = kernel.load %x[%b, %j, %i] : memref<3x?x1000xf32>
    kernel.store %v, %y[%b, %i, %j] : memref<3x1000x?xf32>
    kernel.yield
  }
  func.return
}

// Too small to gain (fits in L2), and a copy that needs no tiling.
// CHECK-LABEL: func.func @stays
// CHECK-NOT:     step
func.func @stays(%x: memref<64x64xf32>, %y: memref<64x64xf32>, %z: memref<512x512xf32>, %w: memref<512x512xf32>) {
  kernel.loop (%i, %j) in (64, 64) [parallel, parallel] {
    %v = kernel.load %x[%j, %i] : memref<64x64xf32>
    kernel.store %v, %y[%i, %j] : memref<64x64xf32>
    kernel.yield
  }
  kernel.loop (%i, %j) in (512, 512) [parallel, parallel] {
    %v = kernel.load %z[%i, %j] : memref<512x512xf32>
    kernel.store %v, %w[%i, %j] : memref<512x512xf32>
    kernel.yield
  }
  func.return
}
