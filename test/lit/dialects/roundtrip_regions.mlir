// Graph attributes are named regions after the type: If's then_branch and
// else_branch, Loop's and Scan's body with its block arguments. Regions use
// values from the enclosing function, and a yield may return nothing.
// RUN: opt %s | opt | filecheck %s

// CHECK-LABEL: func.func @regions(
// CHECK-NEXT:    %y = onnx.If(%c) : (tensor<i1>) -> tensor<2xf32> then_branch {
// CHECK-NEXT:      %r = onnx.Relu(%x) : (tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:      onnx.Yield %r : tensor<2xf32>
// CHECK-NEXT:    } else_branch {
// CHECK-NEXT:      onnx.Yield %x : tensor<2xf32>
// CHECK-NEXT:    } loc("if_1")
// CHECK-NEXT:    %f = onnx.Loop(%n, %c, %x) : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> tensor<2xf32> body {
// CHECK-NEXT:    ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %acc: tensor<2xf32>):
// CHECK-NEXT:      %a = onnx.Add(%acc, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:      onnx.Yield %ci, %a : tensor<i1>, tensor<2xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %s, %p = onnx.Scan(%x, %xs) {num_scan_inputs = 1 : i64} : (tensor<2xf32>, tensor<5x2xf32>) -> (tensor<2xf32>, tensor<5x2xf32>) body {
// CHECK-NEXT:    ^bb0(%st: tensor<2xf32>, %e: tensor<2xf32>):
// CHECK-NEXT:      %nx = onnx.Add(%st, %e) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:      onnx.Yield %nx, %nx : tensor<2xf32>, tensor<2xf32>
// CHECK-NEXT:    } loc("scan")
// CHECK-NEXT:    func.return %y, %f, %s : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>

func.func @regions(%c: tensor<i1>, %x: tensor<2xf32>, %n: tensor<i64>, %xs: tensor<5x2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %y = onnx.If(%c) : (tensor<i1>) -> tensor<2xf32> then_branch {
    %r = onnx.Relu(%x) : (tensor<2xf32>) -> tensor<2xf32>
    onnx.Yield %r : tensor<2xf32>
  } else_branch {
    onnx.Yield %x : tensor<2xf32>
  } loc("if_1")
  %f = onnx.Loop(%n, %c, %x) : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> tensor<2xf32> body {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %acc: tensor<2xf32>):
    %a = onnx.Add(%acc, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    onnx.Yield %ci, %a : tensor<i1>, tensor<2xf32>
  }
  %s, %p = onnx.Scan(%x, %xs) {num_scan_inputs = 1 : i64} : (tensor<2xf32>, tensor<5x2xf32>) -> (tensor<2xf32>, tensor<5x2xf32>) body {
  ^bb0(%st: tensor<2xf32>, %e: tensor<2xf32>):
    %nx = onnx.Add(%st, %e) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    onnx.Yield %nx, %nx : tensor<2xf32>, tensor<2xf32>
  } loc("scan")
  func.return %y, %f, %s : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}
