// The legality check of convert-onnx-to-core: every onnx op left after the
// rewrite is reported, one line each, with its op name (and opset, or domain
// and type for onnx.Custom), the module's source file, its node, and why: no
// lowering at all, or the reason its handler refused. The pass then fails
// (exit 1, no traceback); --verify-diagnostics prints the report and exits 0;
// allow-partial keeps what could not be lowered in place, the rest lowered.
// RUN: not opt %s -p convert-onnx-to-core 2>&1 | filecheck %s
// RUN: opt %s -p convert-onnx-to-core --verify-diagnostics | filecheck %s --check-prefix=DIAG
// RUN: opt %s -p 'convert-onnx-to-core{allow-partial=true}' | filecheck %s --check-prefix=PARTIAL

// CHECK-NOT: Traceback
// CHECK:     opt: error: {{.*}}legality_pass_invalid.mlir: failed to lower 'com.example::Frob' (onnx.Custom) at model.onnx:node 'frob': no lowering to core
// CHECK-NEXT: failed to lower 'onnx.RandomUniform' (opset {{[0-9]+}}) at model.onnx:node 'rand': no lowering to core
// CHECK-NEXT: failed to lower 'onnx.Einsum' (opset {{[0-9]+}}) at model.onnx:node 'mm': Einsum needs inputs of known rank
// CHECK-NEXT: failed to lower 'onnx.MaxPool' (opset {{[0-9]+}}) at model.onnx:an unnamed node: MaxPool's Indices output is not supported
// CHECK-NOT: Traceback

// DIAG:      failed to lower 'com.example::Frob' (onnx.Custom) at model.onnx:node 'frob': no lowering to core
// DIAG-NEXT: failed to lower 'onnx.RandomUniform' (opset {{[0-9]+}}) at model.onnx:node 'rand': no lowering to core
// DIAG-NEXT: failed to lower 'onnx.Einsum' (opset {{[0-9]+}}) at model.onnx:node 'mm': Einsum needs inputs of known rank
// DIAG-NEXT: failed to lower 'onnx.MaxPool' (opset {{[0-9]+}}) at model.onnx:an unnamed node: MaxPool's Indices output is not supported
// DIAG-NOT:  builtin.module

// PARTIAL-LABEL: func.func @custom(
// PARTIAL:         %t = core.binary add(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("add")
// PARTIAL-NEXT:    %y = onnx.Custom "com.example" "Frob"(%t) : (tensor<4xf32>) -> tensor<4xf32> loc("frob")
// PARTIAL-LABEL: func.func @random(
// PARTIAL:         onnx.RandomUniform
// PARTIAL-LABEL: func.func @einsum_unranked(
// PARTIAL:         onnx.Einsum
// PARTIAL-LABEL: func.func @maxpool_indices(
// PARTIAL:         onnx.MaxPool

builtin.module attributes {onnx.source = "model.onnx"} {
  // A custom-domain op: no handler.
  func.func @custom(%x: tensor<4xf32>) -> tensor<4xf32> {
    %t = onnx.Add(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("add")
    %y = onnx.Custom "com.example" "Frob"(%t) : (tensor<4xf32>) -> tensor<4xf32> loc("frob")
    func.return %y : tensor<4xf32>
  }

  // An ai.onnx op with neither a handler nor an ONNX function body.
  func.func @random() -> tensor<2xf32> {
    %y = onnx.RandomUniform() {shape = array<i64: 2>} : () -> tensor<2xf32> loc("rand")
    func.return %y : tensor<2xf32>
  }

  // Handlers refuse forms they do not lower, and say why.
  func.func @einsum_unranked(%a: tensor<*xf32>, %b: tensor<3x4xf32>) -> tensor<?x4xf32> {
    %y = onnx.Einsum(%a, %b) {equation = "ij,jk->ik"} : (tensor<*xf32>, tensor<3x4xf32>) -> tensor<?x4xf32> loc("mm")
    func.return %y : tensor<?x4xf32>
  }

  func.func @maxpool_indices(%x: tensor<1x1x4x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>) {
    %y, %i = onnx.MaxPool(%x) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>)
    func.return %y, %i : tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>
  }
}
