// RUN: rm -f %t.mlir
// RUN: opt %s -p cse -o %t.mlir
// RUN: filecheck %s --input-file %t.mlir
// RUN: not opt %t.mlir --output %t.mlir 2>&1 | filecheck %s --check-prefix=SELF
// RUN: filecheck %s --input-file %t.mlir

// -o (or --output) writes the result to a file instead of stdout. opt refuses
// to overwrite its own input, and leaves the file as it was.

func.func @f(%i: i32) -> i32 {
  %a = arith.addi %i, %i : i32
  %b = arith.addi %i, %i : i32
  %m = arith.muli %a, %b : i32
  func.return %m : i32
}

// CHECK-LABEL: func.func @f
// CHECK-NEXT:    %[[A:.*]] = arith.addi %i, %i : i32
// CHECK-NEXT:    arith.muli %[[A]], %[[A]] : i32

// SELF: opt: error: refusing to write output over the input file
