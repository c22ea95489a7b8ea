// Forms of the data-movement ops the kernel level cannot lower are reported
// with the op, its location and the reason, never a traceback.
// RUN: not opt %s -p convert-core-to-kernel 2>&1 | filecheck %s --check-prefix=FIRST
// RUN: opt %s --split-input-file --verify-diagnostics -p convert-core-to-kernel | filecheck %s

// FIRST-NOT: Traceback
// FIRST:     opt: error: {{.*}}tensor_invalid.mlir: failed to lower 'core.slice' at <module>:node 'Slice_0': the static form of core.slice needs a static result shape (use the start, size and stride operands for run-time sizes)
// FIRST-NOT: Traceback

// CHECK: failed to lower 'core.slice' at <module>:node 'Slice_0': the static form of core.slice needs a static result shape
func.func @slice(%x: tensor<?x6xf32>) -> tensor<?x3xf32> {
  %y = core.slice(%x) {start = array<i64: 0, 1>, stride = array<i64: 1, 2>} : (tensor<?x6xf32>) -> tensor<?x3xf32> loc("Slice_0")
  func.return %y : tensor<?x3xf32>
}

// -----

// CHECK: failed to lower 'core.pad' at <module>:node 'Pad_1': reflect padding of an empty dim has no values to copy
func.func @pad(%x: tensor<0x3xf32>, %v: tensor<f32>) -> tensor<2x3xf32> {
  %y = core.pad reflect(%x, %v) {pad_low = array<i64: 1, 0>, pad_high = array<i64: 1, 0>} : (tensor<0x3xf32>, tensor<f32>) -> tensor<2x3xf32> loc("Pad_1")
  func.return %y : tensor<2x3xf32>
}

// -----

// Constant padding of an empty input only fills: no load, and no error.
// CHECK-LABEL: func.func @pad_empty_constant
// CHECK-NOT:     kernel.load %x
// CHECK:         kernel.store
func.func @pad_empty_constant(%x: tensor<0x3xf32>, %v: tensor<f32>) -> tensor<2x3xf32> {
  %y = core.pad constant(%x, %v) {pad_low = array<i64: 1, 0>, pad_high = array<i64: 1, 0>} : (tensor<0x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

// CHECK: failed to lower 'core.gather_nd' at <module>:node 'GatherND_2': the index tuples (the last dim of the indices) must have a static length
func.func @gather_nd(%x: tensor<4x3xf32>, %i: tensor<2x?xi64>) -> tensor<2x?xf32> {
  %y = core.gather_nd(%x, %i) {batch_dims = 0 : i64} : (tensor<4x3xf32>, tensor<2x?xi64>) -> tensor<2x?xf32> loc("GatherND_2")
  func.return %y : tensor<2x?xf32>
}

// -----

// CHECK: failed to lower 'core.scatter_nd' at <module>:node 'ScatterND_3': the index tuples (the last dim of the indices) must have a static length
func.func @scatter_nd(%x: tensor<4x3xf32>, %i: tensor<2x?xi64>, %u: tensor<?xf32>) -> tensor<4x3xf32> {
  %y = core.scatter_nd add(%x, %i, %u) : (tensor<4x3xf32>, tensor<2x?xi64>, tensor<?xf32>) -> tensor<4x3xf32> loc("ScatterND_3")
  func.return %y : tensor<4x3xf32>
}
