// The control-flow handlers of convert-onnx-to-core on hand-written onnx-dialect
// IR: If and Loop become core.if and core.loop; their graphs move into the core
// op's regions and the onnx ops inside are lowered like any others.
// RUN: opt %s -p convert-onnx-to-core | filecheck %s

// If becomes core.if: the graphs move into its regions, are lowered in place
// (the broadcast of %b happens inside the branch), and end in core.yield.
// CHECK-LABEL: func.func @if_broadcast(
// CHECK:         %y = core.if(%c) : (tensor<i1>) -> tensor<2x3xf32> then {
// CHECK-NEXT:      %[[B:.*]] = core.broadcast(%b) {dims = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:      %a = core.binary add(%x, %[[B]]) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:      core.yield(%a) : (tensor<2x3xf32>) -> ()
// CHECK-NEXT:    } else {
// CHECK-NEXT:      core.yield(%x) : (tensor<2x3xf32>) -> ()
// CHECK-NEXT:    }
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @if_broadcast(%c: tensor<i1>, %x: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %y = onnx.If(%c) : (tensor<i1>) -> tensor<2x3xf32> then_branch {
    %a = onnx.Add(%x, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    onnx.Yield %a : tensor<2x3xf32>
  } else_branch {
    onnx.Yield %x : tensor<2x3xf32>
  }
  func.return %y : tensor<2x3xf32>
}

// Dynamic shapes inside a branch: the broadcast reads the outer value's shape.
// CHECK-LABEL: func.func @if_dynamic(
// CHECK:         %y = core.if(%c) : (tensor<i1>) -> tensor<?x3xf32> then {
// CHECK-NEXT:      %[[Z:.*]] = core.constant() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT:      %[[S:.*]] = core.shape_of(%x) : (tensor<?x3xf32>) -> tensor<2xi64>
// CHECK-NEXT:      %[[ZB:.*]] = core.broadcast(%[[Z]], %[[S]]) {dims = array<i64>} : (tensor<f32>, tensor<2xi64>) -> tensor<?x3xf32>
// CHECK-NEXT:      %a = core.binary max(%x, %[[ZB]])
// CHECK-NEXT:      core.yield(%a) : (tensor<?x3xf32>) -> ()
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %n = core.unary neg(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:      core.yield(%n) : (tensor<?x3xf32>) -> ()
// CHECK-NEXT:    }
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %y
func.func @if_dynamic(%c: tensor<i1>, %x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %y = onnx.If(%c) : (tensor<i1>) -> tensor<?x3xf32> then_branch {
    %a = onnx.Relu(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
    onnx.Yield %a : tensor<?x3xf32>
  } else_branch {
    %n = onnx.Neg(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
    onnx.Yield %n : tensor<?x3xf32>
  }
  func.return %y : tensor<?x3xf32>
}

// Loop becomes core.loop with the same operands and body arguments (iteration,
// condition, carried); the body yields the condition, the carried value and a
// per-iteration output, stacked along a new first dim of unknown size.
// CHECK-LABEL: func.func @loop_scan(
// CHECK:         %cond = core.constant() {value = dense<true> : tensor<i1>}
// CHECK-NEXT:    %final, %scan_out = core.loop(%n, %cond, %init) : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) body {
// CHECK-NEXT:    ^{{.*}}(%iter: tensor<i64>, %cond_in: tensor<i1>, %acc: tensor<2xf32>):
// CHECK-NEXT:      %acc_out = core.binary add(%acc, %acc) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:      %each = core.cast(%iter) : (tensor<i64>) -> tensor<f32>
// CHECK-NEXT:      %[[E:.*]] = core.broadcast(%each) {dims = array<i64>} : (tensor<f32>) -> tensor<2xf32>
// CHECK-NEXT:      %row = core.binary mul(%acc_out, %[[E]])
// CHECK-NEXT:      core.yield(%cond_in, %acc_out, %row) : (tensor<i1>, tensor<2xf32>, tensor<2xf32>) -> ()
// CHECK-NEXT:    }
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %final, %scan_out
func.func @loop_scan(%n: tensor<i64>, %init: tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) {
  %cond = onnx.Constant() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %final, %scan_out = onnx.Loop(%n, %cond, %init) : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) body {
  ^bb0(%iter: tensor<i64>, %cond_in: tensor<i1>, %acc: tensor<2xf32>):
    %cond_out = onnx.Identity(%cond_in) : (tensor<i1>) -> tensor<i1>
    %acc_out = onnx.Add(%acc, %acc) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %each = onnx.Cast(%iter) {to = 1 : i64} : (tensor<i64>) -> tensor<f32>
    %row = onnx.Mul(%acc_out, %each) : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
    onnx.Yield %cond_out, %acc_out, %row : tensor<i1>, tensor<2xf32>, tensor<2xf32>
  }
  func.return %final, %scan_out : tensor<2xf32>, tensor<?x2xf32>
}

// An absent trip count becomes the largest i64: a while loop on the condition.
// CHECK-LABEL: func.func @loop_while(
// CHECK:         %c = core.constant() {value = dense<true> : tensor<i1>}
// CHECK-NEXT:    %[[M:.*]] = core.constant() {value = dense<9223372036854775807> : tensor<i64>}
// CHECK-NEXT:    %r = core.loop(%[[M]], %c, %x) : (tensor<i64>, tensor<i1>, tensor<f32>) -> tensor<f32> body {
// CHECK-NEXT:    ^{{.*}}(%i: tensor<i64>, %ci: tensor<i1>, %v: tensor<f32>):
// CHECK-NEXT:      %d = core.binary add(%v, %v)
// CHECK-NEXT:      %lim = core.constant() {value = dense<1.000000e+02> : tensor<f32>}
// CHECK-NEXT:      %go = core.compare lt(%d, %lim) : (tensor<f32>, tensor<f32>) -> tensor<i1>
// CHECK-NEXT:      core.yield(%go, %d) : (tensor<i1>, tensor<f32>) -> ()
// CHECK-NEXT:    }
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %r
func.func @loop_while(%x: tensor<f32>) -> tensor<f32> {
  %c = onnx.Constant() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %r = onnx.Loop(none, %c, %x) : (none, tensor<i1>, tensor<f32>) -> tensor<f32> body {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %v: tensor<f32>):
    %d = onnx.Add(%v, %v) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %lim = onnx.Constant() {value = dense<1.0e+02> : tensor<f32>} : () -> tensor<f32>
    %go = onnx.Less(%d, %lim) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    onnx.Yield %go, %d : tensor<i1>, tensor<f32>
  }
  func.return %r : tensor<f32>
}
