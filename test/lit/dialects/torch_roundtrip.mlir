// The torch dialect's readable syntax: tensor arguments by position (`none`
// for an absent one, `[...]` for a list), scalar arguments by name, symbolic
// sizes as SSA values inside them, and the FX node's location. Printing and
// reading back gives the same text; the generic form reads back too.
// RUN: opt %s | filecheck %s
// RUN: opt %s | opt | filecheck %s
// RUN: opt %s --print-op-generic | opt | filecheck %s --check-prefix=BACK
// RUN: opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @ops(
// CHECK:       %s = torch.aten.sym_size.int(%h) {dim = 0} : (tensor<?x768xf32>) -> i64
// CHECK-NEXT:  %two = arith.constant 2 : i64
// CHECK-NEXT:  %t = torch.sym.binary "mul" %s, %two : i64, i64 -> i64
// CHECK-NEXT:  %v = torch.aten.view(%h) {size = [%t, 384]} : (tensor<?x768xf32>, i64) -> tensor<?x384xf32>
// CHECK-NEXT:  %y = torch.aten.convolution(%x, %w, none) {stride = [2, 2], padding = [3, 3], dilation = [1, 1], transposed = false, output_padding = [0, 0], groups = 1} : (tensor<1x3x8x8xf32>, tensor<4x3x7x7xf32>, none) -> tensor<1x4x4x4xf32> loc("conv1"("model.py":12:0))
// CHECK-NEXT:  %a = torch.aten.add.Tensor(%y, %y) {alpha = 1.5} : (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
// CHECK-NEXT:  %c = torch.aten.cat([%y, %a]) {dim = 1} : (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x8x4x4xf32>
// CHECK-NEXT:  %i = torch.aten.index.Tensor(%y, [none, %idx]) : (tensor<1x4x4x4xf32>, none, tensor<2xi64>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:  %k = torch.aten._to_copy(%y) {dtype = f16} : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf16>
// CHECK-NEXT:  %m = torch.aten.mul.Scalar(%y) {other = -1.0e-05} : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
// CHECK-NEXT:  %f = torch.aten.full() {size = [2], fill_value = -inf, dtype = f32} : () -> tensor<2xf32>
// CHECK-NEXT:  %mx, %ix = torch.aten.max.dim(%y) {dim = 1} : (tensor<1x4x4x4xf32>) -> (tensor<1x4x4xf32>, tensor<1x4x4xi64>)
// CHECK-NEXT:  %w2 = torch.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32> loc("fc.weight")

// BACK: %v = torch.aten.view(%h) {size = [%t, 384]} : (tensor<?x768xf32>, i64) -> tensor<?x384xf32>
// BACK: %i = torch.aten.index.Tensor(%y, [none, %idx])

// GENERIC: %v = "torch.aten.view"(%h, %t) <{size = [#torch.sym<0>, 384 : i64], operandSegmentSizes = array<i32: 1, 1>}>

func.func @ops(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x7x7xf32>, %h: tensor<?x768xf32>, %idx: tensor<2xi64>) -> tensor<1x4x4x4xf32> {
  %s = torch.aten.sym_size.int(%h) {dim = 0} : (tensor<?x768xf32>) -> i64
  %two = arith.constant 2 : i64
  %t = torch.sym.binary "mul" %s, %two : i64, i64 -> i64
  %v = torch.aten.view(%h) {size = [%t, 384]} : (tensor<?x768xf32>, i64) -> tensor<?x384xf32>
  %y = torch.aten.convolution(%x, %w, none) {stride = [2, 2], padding = [3, 3], dilation = [1, 1], transposed = false, output_padding = [0, 0], groups = 1} : (tensor<1x3x8x8xf32>, tensor<4x3x7x7xf32>, none) -> tensor<1x4x4x4xf32> loc("conv1"("model.py":12:0))
  %a = torch.aten.add.Tensor(%y, %y) {alpha = 1.5} : (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %c = torch.aten.cat([%y, %a]) {dim = 1} : (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x8x4x4xf32>
  %i = torch.aten.index.Tensor(%y, [none, %idx]) : (tensor<1x4x4x4xf32>, none, tensor<2xi64>) -> tensor<1x2x4x4xf32>
  %k = torch.aten._to_copy(%y) {dtype = f16} : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf16>
  %m = torch.aten.mul.Scalar(%y) {other = -1.0e-05} : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %f = torch.aten.full() {size = [2], fill_value = -inf, dtype = f32} : () -> tensor<2xf32>
  %mx, %ix = torch.aten.max.dim(%y) {dim = 1} : (tensor<1x4x4x4xf32>) -> (tensor<1x4x4xf32>, tensor<1x4x4xi64>)
  %w2 = torch.constant dense<[1.0, 2.0]> : tensor<2xf32> loc("fc.weight")
  func.return %y : tensor<1x4x4x4xf32>
}
