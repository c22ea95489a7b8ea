// core.loop becomes scf.while carrying (trip count i64, condition i1, carried
// buffers...). The before-region tests `trip < max_trips && cond`; the
// after-region stores the trip count and condition into 0-d buffers for the
// body, lowers the body, copies each per-iteration scan output into row `trip`
// of a buffer allocated before the loop, and yields trip + 1, the new
// condition and the new carried buffers. Scan results are those buffers viewed
// with the final trip count as first dim.
// RUN: opt %s -p convert-core-to-kernel | filecheck %s

// A run-time trip count: the scan buffer has max(max_trips, 0) rows; the carried
// buffers are swapped each iteration; the body computes its condition.
// CHECK-LABEL: func.func @counted_scan_swap
// CHECK:         %[[MAX:.*]] = kernel.load %m[] : memref<i64>
// CHECK-NEXT:    %[[C0:.*]] = kernel.load %c[] : memref<i1>
// CHECK-NEXT:    %[[TRIPBUF:.*]] = kernel.alloc() : memref<i64>
// CHECK-NEXT:    %[[CONDBUF:.*]] = kernel.alloc() : memref<i1>
// CHECK-NEXT:    %[[MAXI:.*]] = arith.index_cast %[[MAX]] : i64 to index
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[CAP:.*]] = arith.maxsi %[[MAXI]], %[[ZERO]] : index
// CHECK-NEXT:    %[[START:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %r_rows = kernel.alloc(%[[CAP]]) : memref<?x2xf32>
// CHECK-NEXT:    %[[TRIPS:.*]], %{{.*}}, %r, %r_1 = scf.while (%i = %[[START]], %ci = %[[C0]], %x = %a, %y = %b) : (i64, i1, memref<2xf32>, memref<2xf32>) -> (i64, i1, memref<2xf32>, memref<2xf32>) {
// CHECK-NEXT:      %[[LT:.*]] = arith.cmpi slt, %i, %[[MAX]] : i64
// CHECK-NEXT:      %[[GO:.*]] = arith.andi %[[LT]], %ci : i1
// CHECK-NEXT:      scf.condition(%[[GO]]) %i, %ci, %x, %y : i64, i1, memref<2xf32>, memref<2xf32>
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^bb0(%[[I:.*]]: i64, %[[CI:.*]]: i1, %[[X:.*]]: memref<2xf32>, %[[Y:.*]]: memref<2xf32>):
// CHECK-NEXT:      kernel.store %[[I]], %[[TRIPBUF]][] : memref<i64>
// CHECK-NEXT:      kernel.store %[[CI]], %[[CONDBUF]][] : memref<i1>
// CHECK-NEXT:      %s = kernel.alloc() : memref<2xf32>
// CHECK:           %{{.*}} = kernel.load %[[TRIPBUF]][] : memref<i64>
// CHECK:           kernel.store %{{.*}}, %go[] : memref<i1>
// CHECK-NEXT:      %[[NEWC:.*]] = kernel.load %go[] : memref<i1>
// CHECK-NEXT:      %[[ROWI:.*]] = arith.index_cast %[[I]] : i64 to index
// CHECK-NEXT:      %[[ROW:.*]] = kernel.subview %r_rows[%[[ROWI]]] : memref<?x2xf32> -> memref<2xf32>
// CHECK-NEXT:      kernel.copy %s, %[[ROW]] : memref<2xf32>, memref<2xf32>
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-NEXT:      %[[NEXT:.*]] = arith.addi %[[I]], %[[ONE]] : i64
// CHECK-NEXT:      scf.yield %[[NEXT]], %[[NEWC]], %[[Y]], %[[X]] : i64, i1, memref<2xf32>, memref<2xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[N:.*]] = arith.index_cast %[[TRIPS]] : i64 to index
// CHECK-NEXT:    %r_2 = kernel.view %r_rows(%[[N]]) : memref<?x2xf32> -> memref<?x2xf32>
// CHECK-NEXT:    func.return %r, %r_1, %r_2 : memref<2xf32>, memref<2xf32>, memref<?x2xf32>
func.func @counted_scan_swap(%m: tensor<i64>, %c: tensor<i1>, %a: tensor<2xf32>, %b: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<?x2xf32>) {
  %r:3 = core.loop(%m, %c, %a, %b) : (tensor<i64>, tensor<i1>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<?x2xf32>) body {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %x: tensor<2xf32>, %y: tensor<2xf32>):
    %s = core.binary add(%x, %y) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %three = core.constant() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
    %go = core.compare lt(%i, %three) : (tensor<i64>, tensor<i64>) -> tensor<i1>
    core.yield(%go, %y, %x, %s) : (tensor<i1>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> ()
  }
  func.return %r#0, %r#1, %r#2 : tensor<2xf32>, tensor<2xf32>, tensor<?x2xf32>
}

// A constant trip count and a constant true condition that the body forwards
// (as for LSTM, GRU, RNN and Scan): the before-region tests only the count,
// the scan buffer is static and is the result itself.
// CHECK-LABEL: func.func @fixed_trips
// CHECK:         %[[N:.*]] = arith.constant 3 : i64
// CHECK:         %r_rows = kernel.alloc() : memref<3x2xf32>
// CHECK-NEXT:    %{{.*}}, %{{.*}}, %r = scf.while
// CHECK-NEXT:      %[[LT:.*]] = arith.cmpi slt, %i, %[[N]] : i64
// CHECK-NEXT:      scf.condition(%[[LT]]) %i, %ci, %x : i64, i1, memref<2xf32>
// CHECK:           math.exp
// CHECK:           kernel.subview %r_rows[%{{.*}}] : memref<3x2xf32> -> memref<2xf32>
// CHECK:           scf.yield %{{.*}}, %{{.*}}, %e : i64, i1, memref<2xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r, %r_rows : memref<2xf32>, memref<3x2xf32>
func.func @fixed_trips(%h: tensor<2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
  %n = core.constant() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
  %t = core.constant() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %r:2 = core.loop(%n, %t, %h) : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) body {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %x: tensor<2xf32>):
    %e = core.unary exp(%x) : (tensor<2xf32>) -> tensor<2xf32>
    core.yield(%ci, %e, %e) : (tensor<i1>, tensor<2xf32>, tensor<2xf32>) -> ()
  }
  func.return %r#0, %r#1 : tensor<2xf32>, tensor<3x2xf32>
}

// Types around the loop differ (a static initial value, a body argument of
// run-time size): the carried buffer takes the general type; the initial
// value is cast with a view.
// CHECK-LABEL: func.func @general_carried
// CHECK:         %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[A:.*]] = kernel.view %a(%[[ONE]]) : memref<1xf32> -> memref<?xf32>
// CHECK:         %{{.*}}, %{{.*}}, %r = scf.while (%i = %{{.*}}, %ci = %{{.*}}, %x = %[[A]]) : (i64, i1, memref<?xf32>) -> (i64, i1, memref<?xf32>) {
// CHECK:           scf.yield %{{.*}}, %{{.*}}, %y : i64, i1, memref<?xf32>
// CHECK:         func.return %r : memref<?xf32>
func.func @general_carried(%m: tensor<i64>, %c: tensor<i1>, %a: tensor<1xf32>) -> tensor<?xf32> {
  %r = core.loop(%m, %c, %a) : (tensor<i64>, tensor<i1>, tensor<1xf32>) -> tensor<?xf32> body {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %x: tensor<?xf32>):
    %y = core.unary neg(%x) : (tensor<?xf32>) -> tensor<?xf32>
    core.yield(%ci, %y) : (tensor<i1>, tensor<?xf32>) -> ()
  }
  func.return %r : tensor<?xf32>
}

// The body carries its iteration number on: the buffer holding it is rewritten
// at the start of the next iteration, so the carried value is a copy.
// CHECK-LABEL: func.func @carries_iteration
// CHECK:         %[[TRIPBUF:.*]] = kernel.alloc() : memref<i64>
// CHECK:         ^bb0(%[[I:.*]]: i64, %{{.*}}: i1, %[[PREV:.*]]: memref<i64>):
// CHECK-NEXT:      kernel.store %[[I]], %[[TRIPBUF]][] : memref<i64>
// CHECK:           %[[COPY:.*]] = kernel.alloc() : memref<i64>
// CHECK-NEXT:      kernel.copy %[[TRIPBUF]], %[[COPY]] : memref<i64>, memref<i64>
// CHECK:           kernel.copy %[[PREV]], %{{.*}} : memref<i64>, memref<i64>
// CHECK:           scf.yield %{{.*}}, %{{.*}}, %[[COPY]] : i64, i1, memref<i64>
func.func @carries_iteration(%m: tensor<i64>, %c: tensor<i1>, %p: tensor<i64>) -> (tensor<i64>, tensor<?xi64>) {
  %r:2 = core.loop(%m, %c, %p) : (tensor<i64>, tensor<i1>, tensor<i64>) -> (tensor<i64>, tensor<?xi64>) body {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %prev: tensor<i64>):
    core.yield(%ci, %i, %prev) : (tensor<i1>, tensor<i64>, tensor<i64>) -> ()
  }
  func.return %r#0, %r#1 : tensor<i64>, tensor<?xi64>
}

// A scan output nobody reads is not filled: no buffer bounded by the trip count
// is needed (so a loop ended only by its condition is fine), and the result is
// an empty placeholder that dead-buffer elimination removes.
// CHECK-LABEL: func.func @unused_scan
// CHECK-NOT:     kernel.subview
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %{{.*}} = kernel.alloc(%[[ZERO]]) : memref<?x2xf32>
// CHECK-NEXT:    func.return %r : memref<2xf32>
func.func @unused_scan(%c: tensor<i1>, %a: tensor<2xf32>) -> tensor<2xf32> {
  %m = core.constant() {value = dense<9223372036854775807> : tensor<i64>} : () -> tensor<i64>
  %r:2 = core.loop(%m, %c, %a) : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) body {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %x: tensor<2xf32>):
    %y = core.unary neg(%x) : (tensor<2xf32>) -> tensor<2xf32>
    core.yield(%ci, %y, %y) : (tensor<i1>, tensor<2xf32>, tensor<2xf32>) -> ()
  }
  func.return %r#0 : tensor<2xf32>
}
