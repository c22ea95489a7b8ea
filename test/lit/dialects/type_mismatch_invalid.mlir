// Two inputs bound to the same type variable must have the same type.
// RUN: not opt %s 2>&1 | filecheck %s

// CHECK-NOT: Traceback
// CHECK:     opt: error: {{.*}}type_mismatch_invalid.mlir: onnx.Add: input 'B' is tensor(double) but input 'A' is tensor(float); both are bound to type 'T'
// CHECK-NEXT:  in operation:
// CHECK-NEXT:    %y = "onnx.Add"(%a, %b) : (tensor<2xf32>, tensor<2xf64>) -> tensor<2xf32>
// CHECK-NOT: Traceback

func.func @f(%a: tensor<2xf32>, %b: tensor<2xf64>) -> tensor<2xf32> {
  %y = onnx.Add(%a, %b) : (tensor<2xf32>, tensor<2xf64>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
