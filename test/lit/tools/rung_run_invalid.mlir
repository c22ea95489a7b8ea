// RUN: not rung run %s 2>&1 | filecheck %s
// RUN: not rung run %s --random-inputs --level nope 2>&1 | filecheck %s --check-prefix=LEVEL
// RUN: not rung run %s --input x=%s 2>&1 | filecheck %s --check-prefix=NPY

// Bad input to `rung run` is one `rung: error:` line (plus the list of the
// model's inputs where it helps), exit code 1 and no traceback.

func.func @main(%x: tensor<?x2xf32> {onnx.name = "x", onnx.dim_params = ["N", ""]}) -> (tensor<?x2xf32> {onnx.name = "y"}) {
  %y = onnx.Relu(%x) : (tensor<?x2xf32>) -> tensor<?x2xf32>
  func.return %y : tensor<?x2xf32>
}

// CHECK:      rung: error: missing input 'x'; the model's inputs are:
// CHECK-NEXT:   x: tensor(float) [N, 2]
// CHECK-NEXT: give each as --input NAME=FILE.npy, or use --random-inputs
// CHECK-NOT:  Traceback

// LEVEL: rung: error: unknown level 'nope'; known levels: onnx

// NPY: rung: error: cannot read input 'x' from '{{.*}}rung_run_invalid.mlir': not a .npy file (no NumPy header)
