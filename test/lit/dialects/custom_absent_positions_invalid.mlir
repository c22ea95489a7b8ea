// Regression: onnx.Custom checks its absent_inputs / absent_outputs positions
// (an out-of-range position used to crash the printer).
// RUN: not opt %s 2>&1 | filecheck %s

// CHECK-NOT: Traceback
// CHECK:     opt: error: {{.*}}onnx.Custom{{.*}}absent_inputs
// CHECK-NOT: Traceback

"builtin.module"() ({
  "func.func"() <{sym_name = "f", function_type = (tensor<2xf32>) -> ()}> ({
  ^bb0(%a: tensor<2xf32>):
    "onnx.Custom"(%a) <{domain = "my.ops", op_type = "Thing", absent_inputs = array<i64: 5>}> : (tensor<2xf32>) -> ()
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
