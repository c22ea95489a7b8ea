// rung's `cse`: an op merges into an identical earlier op that dominates it.
// RUN: opt %s -p cse | filecheck %s

// An op of a block is visible in the regions nested in it; an op of a nested
// region is not visible after that region.
// CHECK-LABEL: func.func @nested
// CHECK:         %[[C:.*]] = arith.constant 4 : index
// CHECK-NOT:     arith.constant 4 : index
// CHECK:         kernel.store %[[C]]
// CHECK:         kernel.loop
// CHECK:           %[[ONE:.*]] = arith.constant 1 : index
// CHECK:           arith.addi %[[C]], %[[ONE]]
// CHECK:         %[[ONE_AGAIN:.*]] = arith.constant 1 : index
// CHECK:         func.return %[[C]], %[[ONE_AGAIN]]
func.func @nested(%x: memref<4xindex>) -> (index, index) {
  %c = arith.constant 4 : index
  %c0 = arith.constant 0 : index
  kernel.store %c, %x[%c0] : memref<4xindex>
  kernel.loop (%i) in (4) [parallel] {
    %c2 = arith.constant 4 : index
    %one = arith.constant 1 : index
    %s = arith.addi %c2, %one : index
    kernel.store %s, %x[%i] : memref<4xindex>
    kernel.yield
  }
  %c3 = arith.constant 4 : index
  %one2 = arith.constant 1 : index
  func.return %c3, %one2 : index, index
}

// Sibling regions do not see each other's ops.
// CHECK-LABEL: func.func @siblings
// CHECK:         kernel.loop
// CHECK:           arith.constant 2.0
// CHECK:         kernel.loop
// CHECK:           arith.constant 2.0
func.func @siblings(%x: memref<4xf32>, %y: memref<4xf32>) {
  kernel.loop (%i) in (4) [parallel] {
    %two = arith.constant 2.0 : f32
    kernel.store %two, %x[%i] : memref<4xf32>
    kernel.yield
  }
  kernel.loop (%j) in (4) [parallel] {
    %two = arith.constant 2.0 : f32
    kernel.store %two, %y[%j] : memref<4xf32>
    kernel.yield
  }
  func.return
}

// A load merges into an identical earlier load of its block only when nothing
// in between may write.
// CHECK-LABEL: func.func @loads
// CHECK:         %[[A:.*]] = kernel.load %x[%i]
// CHECK-NEXT:    %[[S:.*]] = arith.addf %[[A]], %[[A]]
// CHECK-NEXT:    kernel.store
// CHECK-NEXT:    %[[B:.*]] = kernel.load %x[%i]
// CHECK-NEXT:    func.return %[[S]], %[[B]]
func.func @loads(%x: memref<4xf32>, %i: index, %v: f32) -> (f32, f32) {
  %a = kernel.load %x[%i] : memref<4xf32>
  %a2 = kernel.load %x[%i] : memref<4xf32>
  %s = arith.addf %a, %a2 : f32
  kernel.store %v, %x[%i] : memref<4xf32>
  %b = kernel.load %x[%i] : memref<4xf32>
  func.return %s, %b : f32, f32
}

// Ops already dead go; an op with effects stays.
// CHECK-LABEL: func.func @dead
// CHECK-NOT:     arith.muli
// CHECK:         kernel.store
func.func @dead(%x: memref<4xindex>, %i: index) {
  %unused = arith.muli %i, %i : index
  kernel.store %i, %x[%i] : memref<4xindex>
  func.return
}
