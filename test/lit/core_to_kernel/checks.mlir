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
