// RUN: opt %s --print-op-generic | filecheck %s
// RUN: opt %s --print-op-generic | opt | filecheck %s --check-prefix=CUSTOM

// --print-op-generic prints every op in MLIR's generic syntax (attributes of
// onnx ops become properties), and opt reads that syntax back.

func.func @relu(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = onnx.LeakyRelu(%a) {alpha = 0.5 : f32} : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// CHECK:      "builtin.module"() ({
// CHECK-NEXT:   "func.func"() <{sym_name = "relu", function_type = (tensor<2xf32>) -> tensor<2xf32>}> ({
// CHECK-NEXT:   ^bb0(%a: tensor<2xf32>):
// CHECK-NEXT:     %0 = "onnx.LeakyRelu"(%a) <{alpha = 5.000000e-01 : f32}> : (tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:     "func.return"(%0) : (tensor<2xf32>) -> ()
// CHECK-NEXT:   }) : () -> ()
// CHECK-NEXT: }) : () -> ()

// CUSTOM:      func.func @relu(%a: tensor<2xf32>) -> tensor<2xf32> {
// CUSTOM-NEXT:   %0 = onnx.LeakyRelu(%a) {alpha = 5.000000e-01 : f32} : (tensor<2xf32>) -> tensor<2xf32>
