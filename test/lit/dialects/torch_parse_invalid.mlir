// What the torch dialect's parser refuses, each with one diagnostic naming
// the op: a wrong number of tensor arguments, operand types that do not
// match the operands, a symbol whose type is not a size, and an unknown
// argument (with the closest name).
// RUN: opt %s --split-input-file --verify-diagnostics --parsing-diagnostics 2>&1 | filecheck %s

// CHECK-NOT: Traceback
// CHECK:     torch.aten.relu: 2 tensor arguments, expected 1 (self)
// CHECK:     torch.aten.relu: 1 operands but 2 operand types
// CHECK:     torch.aten.view: a symbol must be i64, f64 or i1, got tensor<i64>
// CHECK:     torch.aten._softmax: unknown argument 'dimm'; did you mean 'dim'?
// CHECK-NOT: Traceback

func.func @arity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = torch.aten.relu(%x, %x) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

func.func @types(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = torch.aten.relu(%x) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

func.func @symbol(%x: tensor<6xf32>, %n: tensor<i64>) -> tensor<?xf32> {
  %y = torch.aten.view(%x) {size = [%n]} : (tensor<6xf32>, tensor<i64>) -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}

// -----

func.func @unknown(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = torch.aten._softmax(%x) {dimm = 1, half_to_float = false} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
