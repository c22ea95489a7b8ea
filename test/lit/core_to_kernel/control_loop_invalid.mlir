// Loops whose scan outputs cannot be allocated before the loop are refused,
// each with its op, location and reason: no bound on the rows, or rows whose
// size is not known before the loop.
// RUN: opt %s -p convert-core-to-kernel --split-input-file --verify-diagnostics 2>&1 | filecheck %s

// A loop ended only by its condition (ONNX Loop without M: the trip count is
// the largest i64) has no bound on the rows of its scan outputs.
// CHECK-NOT: Traceback
// CHECK:     {{^}}failed to lower 'core.loop' at <module>:node 'Loop_0': a loop with scan outputs and a trip count of 9223372036854775807 (above 16777216; a loop ended only by its condition) is not supported: the scan outputs cannot be allocated before the loop
func.func @cond_only(%c: tensor<i1>, %a: tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) {
  %m = core.constant() {value = dense<9223372036854775807> : tensor<i64>} : () -> tensor<i64>
  %r:2 = core.loop(%m, %c, %a) : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) body {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %x: tensor<2xf32>):
    %y = core.unary neg(%x) : (tensor<2xf32>) -> tensor<2xf32>
    core.yield(%ci, %y, %y) : (tensor<i1>, tensor<2xf32>, tensor<2xf32>) -> ()
  } loc("Loop_0")
  func.return %r#0, %r#1 : tensor<2xf32>, tensor<?x2xf32>
}

// -----

// A scan output whose size depends on the iteration number.
// CHECK:     {{^}}failed to lower 'core.loop' at <module>:node 'Loop_1': a scan output of type memref<?xf32> has a run-time shape that depends on the iteration number, so its stacked buffer cannot be allocated before the loop
// CHECK-NOT: Traceback
func.func @iteration_rows(%m: tensor<i64>, %c: tensor<i1>, %a: tensor<2xf32>) -> (tensor<2xf32>, tensor<?x?xf32>) {
  %r:2 = core.loop(%m, %c, %a) : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<?x?xf32>) body {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %x: tensor<2xf32>):
    %one = core.constant() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
    %shape = core.reshape(%i, %one) : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
    %z = core.constant() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %row = core.broadcast(%z, %shape) {dims = array<i64>} : (tensor<f32>, tensor<1xi64>) -> tensor<?xf32>
    core.yield(%ci, %x, %row) : (tensor<i1>, tensor<2xf32>, tensor<?xf32>) -> ()
  } loc("Loop_1")
  func.return %r#0, %r#1 : tensor<2xf32>, tensor<?x?xf32>
}

// -----

// A scan output whose size is computed in the body (a count of nonzeros).
// CHECK:     {{^}}failed to lower 'core.loop' at <module>:node 'Loop_2': a scan output of type memref<?x1xi64> has a run-time shape that is computed inside the loop (by 'kernel.loop'), so its stacked buffer cannot be allocated before the loop
// CHECK-NOT: Traceback
func.func @computed_rows(%m: tensor<i64>, %c: tensor<i1>, %a: tensor<?xf32>) -> (tensor<?xf32>, tensor<?x?x1xi64>) {
  %r:2 = core.loop(%m, %c, %a) : (tensor<i64>, tensor<i1>, tensor<?xf32>) -> (tensor<?xf32>, tensor<?x?x1xi64>) body {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %x: tensor<?xf32>):
    %nz = core.nonzero(%x) : (tensor<?xf32>) -> tensor<1x?xi64>
    %t = core.transpose(%nz) {perm = array<i64: 1, 0>} : (tensor<1x?xi64>) -> tensor<?x1xi64>
    core.yield(%ci, %x, %t) : (tensor<i1>, tensor<?xf32>, tensor<?x1xi64>) -> ()
  } loc("Loop_2")
  func.return %r#0, %r#1 : tensor<?xf32>, tensor<?x?x1xi64>
}

// -----

// A scan of a carried value whose type changes in the body (`?` in, 3 out):
// its initial size says nothing of the later rows.
// CHECK:     {{^}}failed to lower 'core.loop' at <module>:node 'Loop_3': a scan output of type memref<?xf32> has a run-time shape that depends on loop-carried value #0, whose shape changes through the loop (tensor<?xf32> -> tensor<3xf32>), so its stacked buffer cannot be allocated before the loop
// CHECK-NOT: Traceback
func.func @carried_changes_type(%m: tensor<i64>, %c: tensor<i1>, %a: tensor<?xf32>) -> (tensor<?xf32>, tensor<?x?xf32>) {
  %r:2 = core.loop(%m, %c, %a) : (tensor<i64>, tensor<i1>, tensor<?xf32>) -> (tensor<?xf32>, tensor<?x?xf32>) body {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %x: tensor<?xf32>):
    %y = core.constant() {value = dense<1.0> : tensor<3xf32>} : () -> tensor<3xf32>
    core.yield(%ci, %y, %x) : (tensor<i1>, tensor<3xf32>, tensor<?xf32>) -> ()
  } loc("Loop_3")
  func.return %r#0, %r#1 : tensor<?xf32>, tensor<?x?xf32>
}
