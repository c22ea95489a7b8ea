// The torch dialect's verifier checks each op against its ATen schema:
// argument names (with a suggestion), kinds, required arguments, tensor
// operands, and symbol references. Unknown arguments in the custom syntax
// get a suggestion (see torch_parse_invalid.mlir). Each error is one diagnostic, no traceback.
// RUN: opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s

// CHECK-NOT: Traceback
// CHECK:     torch.aten.convolution: missing required argument 'groups'
// CHECK:     property 'dimm' is not defined by the operation 'torch.aten._softmax'
// CHECK:     torch.aten.permute: argument 'dims' must be a list
// CHECK:     torch.aten.add.Tensor: argument 'alpha' must be an ATen Scalar, got "two"
// CHECK:     torch.sym.binary: unknown function 'times'
// CHECK-NOT: Traceback

func.func @missing(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x7x7xf32>) -> tensor<1x4x4x4xf32> {
  %y = torch.aten.convolution(%x, %w, none) {stride = [2, 2], padding = [3, 3], dilation = [1, 1], transposed = false, output_padding = [0, 0]} : (tensor<1x3x8x8xf32>, tensor<4x3x7x7xf32>, none) -> tensor<1x4x4x4xf32>
  func.return %y : tensor<1x4x4x4xf32>
}

// -----

func.func @unknown(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = "torch.aten._softmax"(%x) <{operandSegmentSizes = array<i32: 1, 0>, dimm = 1 : i64, half_to_float = false}> : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

func.func @kind(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %y = "torch.aten.permute"(%x) <{operandSegmentSizes = array<i32: 1, 0>, dims = 1 : i64}> : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %y : tensor<3x2xf32>
}

// -----

func.func @scalar(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = torch.aten.add.Tensor(%x, %x) {alpha = "two"} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

func.func @sym(%a: i64) -> i64 {
  %y = torch.sym.binary "times" %a, %a : i64, i64 -> i64
  func.return %y : i64
}
