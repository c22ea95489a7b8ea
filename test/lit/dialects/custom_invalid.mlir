// onnx.Custom needs one graph name per region.
// RUN: not opt %s 2>&1 | filecheck %s

// CHECK-NOT: Traceback
// CHECK:     opt: error: {{.*}}custom_invalid.mlir: onnx.Custom: 1 regions but 2 graph names
// CHECK-NEXT:  in operation:
// CHECK-NEXT:    "onnx.Custom"(%a) <{domain = "my.ops", op_type = "Thing", graph_names = ["body", "other"]}> ({
// CHECK-NOT: Traceback

"builtin.module"() ({
  "func.func"() <{sym_name = "f", function_type = (tensor<2xf32>) -> ()}> ({
  ^bb0(%a: tensor<2xf32>):
    "onnx.Custom"(%a) <{domain = "my.ops", op_type = "Thing", graph_names = ["body", "other"]}> ({
      "onnx.Yield"() : () -> ()
    }) : (tensor<2xf32>) -> ()
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
