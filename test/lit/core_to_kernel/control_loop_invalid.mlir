// Loops whose scan outputs cannot be allocated before the loop are refused,
// each with its op, location and reason.
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

// A scan output whose shape is known only inside the loop.
// CHECK:     {{^}}failed to lower 'core.loop' at <module>:node 'Loop_1': a scan output of type memref<?xf32> has a run-time shape, which is not known before the loop (the stacked buffer is allocated before it)
// CHECK-NOT: Traceback
func.func @runtime_rows(%m: tensor<i64>, %c: tensor<i1>, %a: tensor<?xf32>) -> (tensor<?xf32>, tensor<?x?xf32>) {
  %r:2 = core.loop(%m, %c, %a) : (tensor<i64>, tensor<i1>, tensor<?xf32>) -> (tensor<?xf32>, tensor<?x?xf32>) body {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %x: tensor<?xf32>):
    %y = core.unary neg(%x) : (tensor<?xf32>) -> tensor<?xf32>
    core.yield(%ci, %y, %y) : (tensor<i1>, tensor<?xf32>, tensor<?xf32>) -> ()
  } loc("Loop_1")
  func.return %r#0, %r#1 : tensor<?xf32>, tensor<?x?xf32>
}
