// rung's `dce`: ops whose results are unused and that have no other effect go,
// chains of them included; ops with effects, and what they use, stay.
// RUN: opt %s -p dce | filecheck %s

// CHECK-LABEL: func.func @chain
// CHECK-NOT:     arith.muli
// CHECK-NOT:     arith.addi
// CHECK:         func.return %i
func.func @chain(%i: index) -> index {
  %a = arith.muli %i, %i : index
  %b = arith.addi %a, %i : index
  func.return %i : index
}

// A nest that only reads is dead; one that stores stays, with what it uses.
// CHECK-LABEL: func.func @nests
// CHECK:         %[[TWO:.*]] = arith.constant 2.0
// CHECK-NEXT:    kernel.loop
// CHECK:           kernel.store %[[TWO]]
// CHECK-NOT:     kernel.loop
// CHECK:         func.return
func.func @nests(%x: memref<4xf32>) {
  %two = arith.constant 2.0 : f32
  kernel.loop (%i) in (4) [parallel] {
    kernel.store %two, %x[%i] : memref<4xf32>
    kernel.yield
  }
  %s = kernel.loop (%j) in (4) [reduction] iter_args(%acc = %two : f32) -> f32 {
    %v = kernel.load %x[%j] : memref<4xf32>
    %n = arith.addf %acc, %v : f32
    kernel.yield %n : f32
  }
  func.return
}
