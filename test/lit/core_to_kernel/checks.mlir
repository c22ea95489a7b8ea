// core.check becomes a cf.assert of its condition (loaded when it has one element,
// reduced with `and` otherwise); its message names the node. The checked value
// keeps its buffer.
// RUN: opt %s -p convert-core-to-kernel | filecheck %s

// CHECK-LABEL: func.func @check_one(%k: memref<1xi64>, %ok: memref<1xi1>) -> memref<1xi64>
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[C:.*]] = kernel.load %ok[%[[Z]]] : memref<1xi1>
// CHECK-NEXT:    cf.assert %[[C]], "node 'top_k': TopK: K is negative or larger than the size of axis 1"
// CHECK-NEXT:    func.return %k : memref<1xi64>
func.func @check_one(%k: tensor<1xi64>, %ok: tensor<1xi1>) -> tensor<1xi64> {
  %y = core.check(%k, %ok) {message = "TopK: K is negative or larger than the size of axis 1"} : (tensor<1xi64>, tensor<1xi1>) -> tensor<1xi64> loc("top_k")
  func.return %y : tensor<1xi64>
}

// CHECK-LABEL: func.func @check_all(%x: memref<?x3xf32>, %ok: memref<?xi1>) -> memref<?x3xf32>
// CHECK-NEXT:    %[[N:.*]] = kernel.dim %ok[0] : memref<?xi1>
// CHECK-NEXT:    %[[T:.*]] = arith.constant true
// CHECK-NEXT:    %[[ALL:.*]] = kernel.loop (%[[I:.*]]) in (%[[N]]) [reduction] iter_args(%[[ACC:.*]] = %[[T]] : i1) -> i1 {
// CHECK-NEXT:      %[[V:.*]] = kernel.load %ok[%[[I]]] : memref<?xi1>
// CHECK-NEXT:      %[[A:.*]] = arith.andi %[[ACC]], %[[V]] : i1
// CHECK-NEXT:      kernel.yield %[[A]] : i1
// CHECK-NEXT:    }
// CHECK-NEXT:    cf.assert %[[ALL]], "an unnamed node: rows out of range"
// CHECK-NEXT:    func.return %x : memref<?x3xf32>
func.func @check_all(%x: tensor<?x3xf32>, %ok: tensor<?xi1>) -> tensor<?x3xf32> {
  %y = core.check(%x, %ok) {message = "rows out of range"} : (tensor<?x3xf32>, tensor<?xi1>) -> tensor<?x3xf32>
  func.return %y : tensor<?x3xf32>
}

// A check with a culprit becomes a kernel.check that quotes the culprit's first failing
// element: the reduction carries it beside the conjunction, converted to i64 (or f64
// for floats).
// CHECK-LABEL: func.func @check_quoting(%i: memref<?xi32>, %ok: memref<?xi1>) -> memref<?xi32>
// CHECK-NEXT:    %[[N:.*]] = kernel.dim %ok[0] : memref<?xi1>
// CHECK-NEXT:    %[[T:.*]] = arith.constant true
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %[[ALL:.*]], %[[GOT:.*]] = kernel.loop (%[[J:.*]]) in (%[[N]]) [reduction] iter_args(%[[ACC:.*]] = %[[T]] : i1, %[[PREV:.*]] = %[[Z]] : i64) -> i1, i64 {
// CHECK-NEXT:      %[[V:.*]] = kernel.load %ok[%[[J]]] : memref<?xi1>
// CHECK-NEXT:      %[[F:.*]] = arith.constant false
// CHECK-NEXT:      %[[BAD:.*]] = arith.cmpi eq, %[[V]], %[[F]] : i1
// CHECK-NEXT:      %[[FIRST:.*]] = arith.andi %[[ACC]], %[[BAD]] : i1
// CHECK-NEXT:      %[[HOLDS:.*]] = arith.andi %[[ACC]], %[[V]] : i1
// CHECK-NEXT:      %[[X:.*]] = kernel.load %i[%[[J]]] : memref<?xi32>
// CHECK-NEXT:      %[[W:.*]] = arith.extsi %[[X]] : i32 to i64
// CHECK-NEXT:      %[[KEEP:.*]] = arith.select %[[FIRST]], %[[W]], %[[PREV]] : i64
// CHECK-NEXT:      kernel.yield %[[HOLDS]], %[[KEEP]] : i1, i64
// CHECK-NEXT:    }
// CHECK-NEXT:    kernel.check %[[ALL]], %[[GOT]] "node 'g': Gather: an index is out of range" : i64
// CHECK-NEXT:    func.return %i : memref<?xi32>
func.func @check_quoting(%i: tensor<?xi32>, %ok: tensor<?xi1>) -> tensor<?xi32> {
  %y = core.check(%i, %ok, %i) {message = "Gather: an index is out of range"} : (tensor<?xi32>, tensor<?xi1>, tensor<?xi32>) -> tensor<?xi32> loc("g")
  func.return %y : tensor<?xi32>
}

// A culprit of one element is quoted for every failing element.
// CHECK-LABEL: func.func @check_quoting_one(%d: memref<f32>, %ok: memref<i1>) -> memref<f32>
// CHECK-NEXT:    %[[C:.*]] = kernel.load %ok[] : memref<i1>
// CHECK-NEXT:    %[[D:.*]] = kernel.load %d[] : memref<f32>
// CHECK-NEXT:    %[[W:.*]] = arith.extf %[[D]] : f32 to f64
// CHECK-NEXT:    kernel.check %[[C]], %[[W]] "node 'h': OneHot's depth is bad" : f64
func.func @check_quoting_one(%d: tensor<f32>, %ok: tensor<i1>) -> tensor<f32> {
  %y = core.check(%d, %ok, %d) {message = "OneHot's depth is bad"} : (tensor<f32>, tensor<i1>, tensor<f32>) -> tensor<f32> loc("h")
  func.return %y : tensor<f32>
}
