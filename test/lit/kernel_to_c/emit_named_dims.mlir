// Inputs whose dims carry one symbolic name (`onnx.dim_params`) must agree at run time:
// `_run` refuses a call that breaks this before it reads anything, naming both inputs.
// Static dims and unnamed dims are not compared.
// RUN: opt %s -t c | filecheck %s

// CHECK:      if (inputs[1].shape[0] != inputs[0].shape[0]) return rung_error("input 1 ('b')", "dim 0 ('batch') differs from dim 0 of input 0 ('a'), which has the same name");
// CHECK-NEXT: if (inputs[2].shape[1] != inputs[0].shape[0]) return rung_error("input 2 ('c')", "dim 1 ('batch') differs from dim 0 of input 0 ('a'), which has the same name");
// CHECK-NOT:  which has the same name
func.func @named(%a: memref<?x?xf32> {onnx.name = "a", onnx.dim_params = ["batch", "seq"]},
                 %b: memref<?x4xf32> {onnx.name = "b", onnx.dim_params = ["batch", ""]},
                 %c: memref<2x?xf32> {onnx.name = "c", onnx.dim_params = ["", "batch"]},
                 %d: memref<?xf32> {onnx.name = "d", onnx.dim_params = ["other"]}) {
  func.return
}
