// RUN: opt %s -p core-hoist-loop-invariants | filecheck %s

// A row taken at the iteration number has the shape of the other dims, whatever
// the iteration: the shape arithmetic that reshapes it moves before the loop, so
// the loop's stacked output can be sized there.

// CHECK-LABEL: func.func @rows
// CHECK:         %[[SHAPE:.*]] = core.shape_of(%x) : (tensor<?x?xf32>) -> tensor<2xi64>
// CHECK-NEXT:    %[[TAIL:.*]] = core.slice(%[[SHAPE]]) {start = array<i64: 1>, stride = array<i64: 1>} : (tensor<2xi64>) -> tensor<1xi64>
// CHECK-NEXT:    %[[ONE:.*]] = core.constant() {value = dense<1> : tensor<1xi64>}
// CHECK-NEXT:    %[[SIZES:.*]] = core.concat(%[[TAIL]], %[[ONE]]) {axis = 0 : i64}
// CHECK-NEXT:    core.loop
// CHECK-NEXT:    ^{{.*}}(%[[I:.*]]: tensor<i64>, %{{.*}}: tensor<i1>):
// CHECK-NEXT:      %[[ROW:.*]] = core.gather(%x, %[[I]])
// CHECK-NEXT:      core.reshape(%[[ROW]], %[[SIZES]])
// CHECK-NEXT:      core.yield
func.func @rows(%x: tensor<?x?xf32>, %n: tensor<i64>) -> tensor<?x?x1xf32> {
  %true = core.constant() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %r = core.loop(%n, %true) : (tensor<i64>, tensor<i1>) -> (tensor<?x?x1xf32>) body {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>):
    %row = core.gather(%x, %i) {axis = 0 : i64} : (tensor<?x?xf32>, tensor<i64>) -> tensor<?xf32>
    %s = core.shape_of(%row) : (tensor<?xf32>) -> tensor<1xi64>
    %one = core.constant() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
    %sizes = core.concat(%s, %one) {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %col = core.reshape(%row, %sizes) : (tensor<?xf32>, tensor<2xi64>) -> tensor<?x1xf32>
    core.yield(%c, %col) : (tensor<i1>, tensor<?x1xf32>) -> ()
  }
  func.return %r : tensor<?x?x1xf32>
}

// The shape of a matmul's result is the lhs's [B…, M] and the rhs's N, both
// known before the loop here; an integer division stays in the loop unless its
// divisor cannot be zero (a max with one, as a Reshape's inferred dim has).

// CHECK-LABEL: func.func @matmul_and_division
// CHECK:         %[[A:.*]] = core.shape_of(%a)
// CHECK:         %[[B:.*]] = core.shape_of(%b)
// CHECK:         %q = core.binary div(%s, %safe)
// CHECK:         core.loop
// CHECK-NEXT:    ^
// CHECK-NEXT:      core.matmul
// CHECK-NEXT:      core.binary div(%q, %dd)
// CHECK-NEXT:      core.yield
func.func @matmul_and_division(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %n: tensor<i64>, %d: tensor<i64>) -> tensor<?x2xi64> {
  %true = core.constant() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %r = core.loop(%n, %true) : (tensor<i64>, tensor<i1>) -> (tensor<?x2xi64>) body {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>):
    %p = core.matmul(%a, %b) {acc = f32} : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    %s = core.shape_of(%p) : (tensor<?x?xf32>) -> tensor<2xi64>
    %one = core.constant() {value = dense<1> : tensor<2xi64>} : () -> tensor<2xi64>
    %safe = core.binary max(%s, %one) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
    %q = core.binary div(%s, %safe) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
    %dd = core.broadcast(%d) {dims = array<i64>} : (tensor<i64>) -> tensor<2xi64>
    %u = core.binary div(%q, %dd) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
    core.yield(%c, %u) : (tensor<i1>, tensor<2xi64>) -> ()
  }
  func.return %r : tensor<?x2xi64>
}

// A value carried by the loop is not invariant: what reads it stays.

// CHECK-LABEL: func.func @carried
// CHECK:         core.loop
// CHECK-NEXT:    ^{{.*}}(%{{.*}}: tensor<i64>, %{{.*}}: tensor<i1>, %[[S:.*]]: tensor<?xf32>):
// CHECK-NEXT:      core.shape_of(%[[S]])
func.func @carried(%x: tensor<?xf32>, %n: tensor<i64>) -> tensor<?x1xi64> {
  %true = core.constant() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %f, %r = core.loop(%n, %true, %x) : (tensor<i64>, tensor<i1>, tensor<?xf32>) -> (tensor<?xf32>, tensor<?x1xi64>) body {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %s: tensor<?xf32>):
    %shape = core.shape_of(%s) : (tensor<?xf32>) -> tensor<1xi64>
    core.yield(%c, %s, %shape) : (tensor<i1>, tensor<?xf32>, tensor<1xi64>) -> ()
  }
  func.return %r : tensor<?x1xi64>
}
