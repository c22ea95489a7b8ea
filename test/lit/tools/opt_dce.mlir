// RUN: opt %s -p dce | filecheck %s
// RUN: opt %s | filecheck %s --check-prefix=NOPASS

// dce removes side-effect-free ops whose results nobody uses; without a pass
// opt changes nothing.

func.func @dead(%i: i32) -> i32 {
  %unused = arith.muli %i, %i : i32
  %c7 = arith.constant 7 : i32
  %a = arith.addi %i, %i : i32
  func.return %a : i32
}

// CHECK-LABEL: func.func @dead
// CHECK-NEXT:    %[[A:.*]] = arith.addi %i, %i : i32
// CHECK-NEXT:    func.return %[[A]] : i32

// NOPASS: %unused = arith.muli %i, %i : i32
// NOPASS: %c7 = arith.constant 7 : i32
