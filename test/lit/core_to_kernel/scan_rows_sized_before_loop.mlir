// RUN: opt %s -p core-hoist-loop-invariants,convert-core-to-kernel | filecheck %s

// A scan output whose row size the body computes from shapes known before the
// loop: once core-hoist-loop-invariants has moved that arithmetic out, its sizes
// buffer is filled before the loop and only read in it, so the row size is loaded
// before the loop and sizes the stacked buffer there.

// CHECK-LABEL: func.func @rows
// CHECK:         %sizes = kernel.alloc() : memref<2xi64>
// CHECK:         %[[ROWS:.*]] = arith.maxsi
// CHECK:         %[[AT:.*]] = kernel.load %sizes[%{{.*}}] : memref<2xi64>
// CHECK-NEXT:    %[[SIZE:.*]] = arith.index_cast %[[AT]] : i64 to index
// CHECK-NEXT:    %r_rows = kernel.alloc(%[[ROWS]], %[[SIZE]]) : memref<?x?x1xf32>
// CHECK-NEXT:    scf.while
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
