// RUN: not opt %s 2>&1 | filecheck %s
// RUN: opt %s --allow-unregistered-dialect | filecheck %s --check-prefix=ALLOWED

// An op of a dialect opt does not know is an error, unless
// --allow-unregistered-dialect is given.

func.func @f(%a: i32) -> i32 {
  %0 = "mystery.op"(%a) : (i32) -> i32
  func.return %0 : i32
}

// CHECK:   opt: error: {{.*}}opt_unregistered_invalid.mlir:8:{{[0-9]+}}: Operation mystery.op is not registered
// ALLOWED: %0 = "mystery.op"(%a) : (i32) -> i32
