// RUN: rm -rf %t && mkdir %t
// RUN: not rung compile %s -o %t/out 2>&1 | filecheck %s
// RUN: not rung compile %S/Inputs/add_relu.onnxtxt -o %t/out --prefix 9lives 2>&1 | filecheck %s --check-prefix=PREFIX
// RUN: env CC=/nonexistent/cc not rung compile %S/Inputs/add_relu.onnxtxt -o %t/out 2>&1 | filecheck %s --check-prefix=NOCC
// RUN: env CC=false not rung compile %S/Inputs/add_relu.onnxtxt -o %t/out 2>&1 | filecheck %s --check-prefix=CCFAIL
// RUN: ls -A %t | filecheck %s --allow-empty --check-prefix=EMPTY

// Bad input to `rung compile` is a `rung: error:` message and exit code 1, and
// nothing is written: not the output folder, not a temporary folder.

func.func @main(%x: tensor<2xf32> {onnx.name = "x"}) -> (tensor<2xf32> {onnx.name = "y"}) {
  %y = onnx.Relu(%x) : (tensor<2xf32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}

// CHECK: rung: error:
// CHECK-NOT: Traceback

// PREFIX: rung: error: invalid prefix '9lives': use a C identifier of ASCII letters, digits and '_', starting with a letter

// NOCC: rung: error: no C compiler: '/nonexistent/cc' was not found (set $CC to a C compiler such as gcc or clang)

// The runtime object (built once per machine and compiler) is the first thing compiled.
// CCFAIL: rung: error: the C compiler '{{.*}}false' failed (exit code 1) on rung_runtime.c

// EMPTY-NOT: {{.}}
