// RUN: opt %s --split-input-file --verify-diagnostics | filecheck %s

// With --verify-diagnostics a chunk that fails to verify prints its
// diagnostic on stdout instead of its IR, and opt exits with 0, so that the
// message itself can be checked. The other chunks are processed as usual.

func.func @wrong_return(%a: i32) -> i64 {
  func.return %a : i32
}

// CHECK:      Expected arguments to have the same types as the function output types: expected [i64], got [i32]
// CHECK:      "func.return"(%a) : (i32) -> ()
// CHECK-NEXT: ^^^^^^^^^^^^^
// CHECK-NEXT: | Operation does not verify: Expected arguments to have the same types as the function output types

// -----

func.func @fine(%a: i32) -> i32 {
  func.return %a : i32
}

// CHECK:      func.func @fine(%a: i32) -> i32
