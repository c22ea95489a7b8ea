// An element type outside the op's type constraint is refused, naming the
// input, its ONNX type and what the constraint allows.
// RUN: not opt %s 2>&1 | filecheck %s
// RUN: opt %s --verify-diagnostics | filecheck %s --check-prefix=DIAG

// CHECK-NOT: Traceback
// CHECK:     opt: error: {{.*}}type_constraint_invalid.mlir: onnx.Relu: input 'X' has type tensor<2xi1> (tensor(bool)), but 'T' allows only tensor(float), {{.*}}tensor(double), tensor(bfloat16)
// CHECK-NEXT:  in operation:
// CHECK-NEXT:    %y = "onnx.Relu"(%x) : (tensor<2xi1>) -> tensor<2xi1>
// CHECK-NOT: Traceback

// DIAG:      "onnx.Relu"(%x) : (tensor<2xi1>) -> tensor<2xi1>
// DIAG-NEXT: ^^^^^^^^^^^^^^^^-
// DIAG-NEXT: | Operation does not verify: onnx.Relu: input 'X' has type tensor<2xi1> (tensor(bool)), but 'T' allows only

func.func @f(%x: tensor<2xi1>) -> tensor<2xi1> {
  %y = onnx.Relu(%x) : (tensor<2xi1>) -> tensor<2xi1>
  func.return %y : tensor<2xi1>
}
