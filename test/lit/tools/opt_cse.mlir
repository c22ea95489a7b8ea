// RUN: opt %s -p cse | filecheck %s

// cse merges the two identical additions into one.

func.func @twice(%i: i32) -> i32 {
  %a = arith.addi %i, %i : i32
  %b = arith.addi %i, %i : i32
  %m = arith.muli %a, %b : i32
  func.return %m : i32
}

// CHECK-LABEL: func.func @twice
// CHECK-NEXT:    %[[A:.*]] = arith.addi %i, %i : i32
// CHECK-NEXT:    %[[M:.*]] = arith.muli %[[A]], %[[A]] : i32
// CHECK-NEXT:    func.return %[[M]] : i32
