// Scan outputs of run-time shape: the stacked buffer is still allocated before
// the loop, its row sizes recomputed there from what they depend on (dims of
// loop-invariant values, dims of the initial carried buffers, index arithmetic
// on them). A carried dim the body provably keeps needs no check; one it may
// change, with types that say it does not, is checked every iteration.
// RUN: opt %s -p convert-core-to-kernel | filecheck %s

// A Scan's state of batch size N passed through unchanged (as in k-nearest
// neighbours): each row has N elements, N read from the initial state.
// CHECK-LABEL: func.func @carried_batch
// CHECK:         %[[N:.*]] = kernel.dim %a[0] : memref<?x8xf32>
// CHECK-NEXT:    %r_rows = kernel.alloc(%[[N]]) : memref<3x?xf32>
// CHECK-NEXT:    %{{.*}}, %{{.*}}, %r = scf.while (%i = %{{.*}}, %ci = %{{.*}}, %x = %a) : (i64, i1, memref<?x8xf32>) -> (i64, i1, memref<?x8xf32>) {
// CHECK:         ^bb0(%[[I:.*]]: i64, %{{.*}}: i1, %[[X:.*]]: memref<?x8xf32>):
// CHECK:           %[[NI:.*]] = kernel.dim %[[X]][0] : memref<?x8xf32>
// CHECK:           %q = kernel.alloc(%[[NI]]) : memref<?xf32>
// CHECK-NOT:       cf.assert
// CHECK:           %[[ROWI:.*]] = arith.index_cast %[[I]] : i64 to index
// CHECK-NEXT:      %[[ROW:.*]] = kernel.subview %r_rows[%[[ROWI]]] : memref<3x?xf32> -> memref<?xf32>
// CHECK-NEXT:      kernel.copy %q, %[[ROW]] : memref<?xf32>, memref<?xf32>
// CHECK:           scf.yield %{{.*}}, %{{.*}}, %[[X]] : i64, i1, memref<?x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r, %r_rows : memref<?x8xf32>, memref<3x?xf32>
func.func @carried_batch(%a: tensor<?x8xf32>, %w: tensor<3x8xf32>) -> (tensor<?x8xf32>, tensor<3x?xf32>) {
  %n = core.constant() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
  %t = core.constant() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %r:2 = core.loop(%n, %t, %a) : (tensor<i64>, tensor<i1>, tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<3x?xf32>) body {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %x: tensor<?x8xf32>):
    %row = core.gather(%w, %i) {axis = 0 : i64} : (tensor<3x8xf32>, tensor<i64>) -> tensor<8xf32>
    %s = core.shape_of(%x) : (tensor<?x8xf32>) -> tensor<2xi64>
    %b = core.broadcast(%row, %s) {dims = array<i64: 1>} : (tensor<8xf32>, tensor<2xi64>) -> tensor<?x8xf32>
    %d = core.binary sub(%x, %b) : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    %q = core.reduce sum(%d) {axes = array<i64: 1>} : (tensor<?x8xf32>) -> tensor<?xf32>
    core.yield(%ci, %x, %q) : (tensor<i1>, tensor<?x8xf32>, tensor<?xf32>) -> ()
  }
  func.return %r#0, %r#1 : tensor<?x8xf32>, tensor<3x?xf32>
}

// Rows shaped like a loop-invariant input: its dims are read before the loop;
// the result is the buffer viewed with the final trip count.
// CHECK-LABEL: func.func @invariant_input
// CHECK:         %[[CAP:.*]] = arith.maxsi
// CHECK:         %[[D0:.*]] = kernel.dim %x[0] : memref<?x?xf32>
// CHECK-NEXT:    %[[D1:.*]] = kernel.dim %x[1] : memref<?x?xf32>
// CHECK-NEXT:    %r_rows = kernel.alloc(%[[CAP]], %[[D0]], %[[D1]]) : memref<?x?x?xf32>
// CHECK-NEXT:    %[[TRIPS:.*]], %{{.*}}, %r = scf.while
// CHECK:           kernel.subview %r_rows[%{{.*}}] : memref<?x?x?xf32> -> memref<?x?xf32>
// CHECK:         %[[T:.*]] = arith.index_cast %[[TRIPS]] : i64 to index
// CHECK-NEXT:    %r_1 = kernel.view %r_rows(%[[T]], %[[D0]], %[[D1]]) : memref<?x?x?xf32> -> memref<?x?x?xf32>
// CHECK-NEXT:    func.return %r, %r_1 : memref<2xf32>, memref<?x?x?xf32>
func.func @invariant_input(%m: tensor<i64>, %c: tensor<i1>, %a: tensor<2xf32>, %x: tensor<?x?xf32>) -> (tensor<2xf32>, tensor<?x?x?xf32>) {
  %r:2 = core.loop(%m, %c, %a) : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<?x?x?xf32>) body {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %y: tensor<2xf32>):
    %e = core.unary exp(%x) : (tensor<?x?xf32>) -> tensor<?x?xf32>
    core.yield(%ci, %y, %e) : (tensor<i1>, tensor<2xf32>, tensor<?x?xf32>) -> ()
  }
  func.return %r#0, %r#1 : tensor<2xf32>, tensor<?x?x?xf32>
}

// Index arithmetic on such dims (a concatenation's size) is recomputed before
// the loop; `neg` keeps the carried value's size, so no check is needed.
// CHECK-LABEL: func.func @hoisted_arith
// CHECK:         %[[CAP:.*]] = arith.maxsi
// CHECK:         %[[N:.*]] = kernel.dim %a[0] : memref<?x2xf32>
// CHECK-NEXT:    %[[TWICE:.*]] = arith.addi %[[N]], %[[N]] : index
// CHECK-NEXT:    %r_rows = kernel.alloc(%[[CAP]], %[[TWICE]]) : memref<?x?x2xf32>
// CHECK-NEXT:    scf.while
// CHECK-NOT:       cf.assert
// CHECK:           kernel.copy %s, %{{.*}} : memref<?x2xf32>, memref<?x2xf32>
// CHECK:         kernel.view %r_rows(%{{.*}}, %[[TWICE]]) : memref<?x?x2xf32> -> memref<?x?x2xf32>
func.func @hoisted_arith(%m: tensor<i64>, %c: tensor<i1>, %a: tensor<?x2xf32>) -> (tensor<?x2xf32>, tensor<?x?x2xf32>) {
  %r:2 = core.loop(%m, %c, %a) : (tensor<i64>, tensor<i1>, tensor<?x2xf32>) -> (tensor<?x2xf32>, tensor<?x?x2xf32>) body {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %x: tensor<?x2xf32>):
    %y = core.unary neg(%x) : (tensor<?x2xf32>) -> tensor<?x2xf32>
    %s = core.concat(%x, %y) {axis = 0 : i64} : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
    core.yield(%ci, %y, %s) : (tensor<i1>, tensor<?x2xf32>, tensor<?x2xf32>) -> ()
  }
  func.return %r#0, %r#1 : tensor<?x2xf32>, tensor<?x?x2xf32>
}

// The carried value grows (x ← concat(x, x)) while its type stays `?`: the rows
// are sized from the initial value and each is checked before it is written,
// so a second iteration fails the run instead of writing past the buffer.
// CHECK-LABEL: func.func @grows
// CHECK:         %[[N:.*]] = kernel.dim %a[0] : memref<?xf32>
// CHECK-NEXT:    %r_rows = kernel.alloc(%{{.*}}, %[[N]]) : memref<?x?xf32>
// CHECK:         ^bb0(%{{.*}}: i64, %{{.*}}: i1, %[[X:.*]]: memref<?xf32>):
// CHECK:           %[[NI:.*]] = kernel.dim %[[X]][0] : memref<?xf32>
// CHECK:           %[[SAME:.*]] = arith.cmpi eq, %[[NI]], %[[N]] : index
// CHECK-NEXT:      cf.assert %[[SAME]], "'core.loop' at <module>:node 'Loop_0': a scan output changed shape between iterations (its stacked buffer is sized before the loop)"
// CHECK-NEXT:      %[[ROW:.*]] = kernel.subview %r_rows[%{{.*}}] : memref<?x?xf32> -> memref<?xf32>
// CHECK-NEXT:      kernel.copy %[[X]], %[[ROW]] : memref<?xf32>, memref<?xf32>
func.func @grows(%m: tensor<i64>, %c: tensor<i1>, %a: tensor<?xf32>) -> (tensor<?xf32>, tensor<?x?xf32>) {
  %r:2 = core.loop(%m, %c, %a) : (tensor<i64>, tensor<i1>, tensor<?xf32>) -> (tensor<?xf32>, tensor<?x?xf32>) body {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %x: tensor<?xf32>):
    %y = core.concat(%x, %x) {axis = 0 : i64} : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    core.yield(%ci, %y, %x) : (tensor<i1>, tensor<?xf32>, tensor<?xf32>) -> ()
  } loc("Loop_0")
  func.return %r#0, %r#1 : tensor<?xf32>, tensor<?x?xf32>
}

// Two scans of one such size (the second reuses the size computed for the
// first): each row is checked.
// CHECK-LABEL: func.func @grows_two_scans
// CHECK:         %[[N:.*]] = kernel.dim %a[0] : memref<?xf32>
// CHECK-NEXT:    %[[TWICE:.*]] = arith.addi %[[N]], %[[N]] : index
// CHECK-NEXT:    %r_rows = kernel.alloc(%{{.*}}, %[[TWICE]]) : memref<?x?xf32>
// CHECK-NEXT:    %r_rows_1 = kernel.alloc(%{{.*}}, %[[TWICE]]) : memref<?x?xf32>
// CHECK:           cf.assert
// CHECK-NEXT:      kernel.subview %r_rows[
// CHECK:           cf.assert
// CHECK-NEXT:      kernel.subview %r_rows_1[
func.func @grows_two_scans(%m: tensor<i64>, %c: tensor<i1>, %a: tensor<?xf32>) -> (tensor<?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) {
  %r:3 = core.loop(%m, %c, %a) : (tensor<i64>, tensor<i1>, tensor<?xf32>) -> (tensor<?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) body {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %x: tensor<?xf32>):
    %y = core.concat(%x, %x) {axis = 0 : i64} : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    %z = core.unary neg(%y) : (tensor<?xf32>) -> tensor<?xf32>
    core.yield(%ci, %y, %y, %z) : (tensor<i1>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) -> ()
  } loc("Loop_1")
  func.return %r#0, %r#1, %r#2 : tensor<?xf32>, tensor<?x?xf32>, tensor<?x?xf32>
}
