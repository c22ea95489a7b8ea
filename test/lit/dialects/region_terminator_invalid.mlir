// A graph region is one block ending in onnx.Yield: a region whose last op is
// not a terminator, an empty region, a block with no terminator and a region
// ending in another dialect's terminator are all refused.
// RUN: opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s

// CHECK-NOT: Traceback
// CHECK:     Operation onnx.Relu terminates block in single-block region but is not a terminator
// CHECK:     {{^}}// {{-----}}
// CHECK:     onnx.If: graph 'then_branch' must have exactly one block
// CHECK:     {{^}}// {{-----}}
// CHECK:     Operation onnx.Loop contains empty block in single-block region that expects at least a terminator
// CHECK:     {{^}}// {{-----}}
// CHECK:     'func.return' expects parent op 'func.func'
// CHECK-NOT: Traceback

func.func @no_yield(%c: tensor<i1>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %y = onnx.If(%c) : (tensor<i1>) -> tensor<2xf32> then_branch {
    %r = onnx.Relu(%x) : (tensor<2xf32>) -> tensor<2xf32>
  } else_branch {
    onnx.Yield %x : tensor<2xf32>
  }
  func.return %y : tensor<2xf32>
}

// -----

func.func @empty_region(%c: tensor<i1>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %y = onnx.If(%c) : (tensor<i1>) -> tensor<2xf32> then_branch {
  } else_branch {
    onnx.Yield %x : tensor<2xf32>
  }
  func.return %y : tensor<2xf32>
}

// -----

func.func @empty_block(%n: tensor<i64>, %c: tensor<i1>) {
  onnx.Loop(%n, %c) : (tensor<i64>, tensor<i1>) -> () body {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>):
  }
  func.return
}

// -----

func.func @wrong_terminator(%c: tensor<i1>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %y = onnx.If(%c) : (tensor<i1>) -> tensor<2xf32> then_branch {
    func.return %x : tensor<2xf32>
  } else_branch {
    onnx.Yield %x : tensor<2xf32>
  }
  func.return %y : tensor<2xf32>
}
