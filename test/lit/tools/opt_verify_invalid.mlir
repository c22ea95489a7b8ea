// RUN: not opt %s 2>&1 | filecheck %s

// IR that parses but does not verify: the first line names the file and the
// verifier's complaint, the next ones the offending op. Exit code 1.

func.func @wrong_return(%a: i32) -> i64 {
  func.return %a : i32
}

// CHECK:      opt: error: {{.*}}opt_verify_invalid.mlir: Expected arguments to have the same types as the function output types: expected [i64], got [i32]
// CHECK-NEXT:   in operation:
// CHECK-NEXT:     "func.return"(%a) : (i32) -> ()
// CHECK-NOT:  Traceback
