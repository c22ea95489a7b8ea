// core lists and optionals become !kernel.list / !kernel.optional values. A list
// keeps only its element type (each element has its own run-time shape); a
// position is checked against the length by a cf.assert naming the node before
// the op that uses it; list_concat and list_stack are loops over the elements,
// each read as a view (kernel.list_get) whose dims are checked and copied from.
// RUN: opt %s -p convert-core-to-kernel | filecheck %s

// CHECK-LABEL: func.func @construct_get(%a: memref<3xf32>, %b: memref<?xf32>, %i: memref<i64>) -> (memref<?xf32>, memref<i64>)
// CHECK-NEXT:    %l = kernel.list_new(%a, %b) : (memref<3xf32>, memref<?xf32>) -> !kernel.list<f32>
// CHECK-NEXT:    %[[P:.*]] = kernel.load %i[] : memref<i64>
// CHECK-NEXT:    %[[I:.*]] = arith.index_cast %[[P]] : i64 to index
// CHECK-NEXT:    %[[N:.*]] = kernel.list_length %l : !kernel.list<f32>
// CHECK:         %[[GE:.*]] = arith.cmpi sge, %[[I]], %{{.*}} : index
// CHECK-NEXT:    %[[LT:.*]] = arith.cmpi slt, %[[I]], %[[N]] : index
// CHECK-NEXT:    %[[OK:.*]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK-NEXT:    cf.assert %[[OK]], "'core.list_get' at <module>:node 'at': the sequence position is out of range [0, the length - 1]"
// CHECK-NEXT:    %e = kernel.list_get %l[%[[I]]] : !kernel.list<f32> -> memref<?xf32>
// CHECK-NEXT:    %[[M:.*]] = kernel.list_length %l : !kernel.list<f32>
// CHECK-NEXT:    %n = kernel.alloc() : memref<i64>
// CHECK-NEXT:    %[[M64:.*]] = arith.index_cast %[[M]] : index to i64
// CHECK-NEXT:    kernel.store %[[M64]], %n[] : memref<i64>
// CHECK-NEXT:    func.return %e, %n : memref<?xf32>, memref<i64>
func.func @construct_get(%a: tensor<3xf32>, %b: tensor<?xf32>, %i: tensor<i64>) -> (tensor<?xf32>, tensor<i64>) {
  %l = core.list(%a, %b) : (tensor<3xf32>, tensor<?xf32>) -> !core.list<tensor<?xf32>>
  %e = core.list_get(%l, %i) : (!core.list<tensor<?xf32>>, tensor<i64>) -> tensor<?xf32> loc("at")
  %n = core.list_length(%l) : (!core.list<tensor<?xf32>>) -> tensor<i64>
  func.return %e, %n : tensor<?xf32>, tensor<i64>
}

// Insertion may append (a position equal to the length); lists of unranked
// tensors are lists of their element type.
// CHECK-LABEL: func.func @insert_erase(%l: !kernel.list<i64>, %t: memref<2xi64>, %i: memref<i64>) -> !kernel.list<i64>
// CHECK:         arith.cmpi sle
// CHECK:         cf.assert %{{.*}}, "{{.*}}the sequence position is out of range [0, the length]"
// CHECK-NEXT:    %m = kernel.list_insert %l, %t, %{{.*}} : !kernel.list<i64>, memref<2xi64>
// CHECK:         kernel.list_length %m : !kernel.list<i64>
// CHECK:         cf.assert %{{.*}}, "{{.*}}the sequence position is out of range [0, the length - 1]"
// CHECK-NEXT:    %r = kernel.list_erase %m, %{{.*}} : !kernel.list<i64>
// CHECK-NEXT:    func.return %r : !kernel.list<i64>
func.func @insert_erase(%l: !core.list<tensor<*xi64>>, %t: tensor<2xi64>, %i: tensor<i64>) -> !core.list<tensor<*xi64>> {
  %m = core.list_insert(%l, %t, %i) : (!core.list<tensor<*xi64>>, tensor<2xi64>, tensor<i64>) -> !core.list<tensor<*xi64>>
  %r = core.list_erase(%m, %i) : (!core.list<tensor<*xi64>>, tensor<i64>) -> !core.list<tensor<*xi64>>
  func.return %r : !core.list<tensor<*xi64>>
}

// Concat: a first pass sums the sizes along the axis (checking the other dims
// against element 0's), a second copies each element at its offset. The
// result's static dim 2 is a claim, checked against element 0's dim.
// CHECK-LABEL: func.func @concat(%l: !kernel.list<f32>) -> memref<2x?xf32>
// CHECK:         %[[N:.*]] = kernel.list_length %l : !kernel.list<f32>
// CHECK:         cf.assert %{{.*}}, "{{.*}}the sequence is empty"
// CHECK:         %[[FIRST:.*]] = kernel.list_get %l[%{{.*}}] : !kernel.list<f32> -> memref<?x?xf32>
// CHECK-NEXT:    %[[D0:.*]] = kernel.dim %[[FIRST]][0] : memref<?x?xf32>
// CHECK:         %[[TOTAL:.*]] = kernel.loop (%[[K:.*]]) in (%[[N]]) [reduction] iter_args(%[[ACC:.*]] = %{{.*}} : index) -> index {
// CHECK-NEXT:      %[[E:.*]] = kernel.list_get %l[%[[K]]] : !kernel.list<f32> -> memref<?x?xf32>
// CHECK-NEXT:      %[[E0:.*]] = kernel.dim %[[E]][0] : memref<?x?xf32>
// CHECK-NEXT:      %[[E1:.*]] = kernel.dim %[[E]][1] : memref<?x?xf32>
// CHECK-NEXT:      %[[SAME:.*]] = arith.cmpi eq, %[[E0]], %[[D0]] : index
// CHECK-NEXT:      cf.assert %[[SAME]], "{{.*}}the sequence's tensors differ in a dim other than the axis"
// CHECK-NEXT:      %[[SUM:.*]] = arith.addi %[[ACC]], %[[E1]] : index
// CHECK-NEXT:      kernel.yield %[[SUM]] : index
// CHECK-NEXT:    }
// CHECK:         cf.assert %{{.*}}, "{{.*}}the result does not have the declared shape tensor<2x?xf32>"
// CHECK-NEXT:    %y = kernel.alloc(%[[TOTAL]]) : memref<2x?xf32>
// CHECK:         kernel.loop (%{{.*}}) in (%[[N]]) [reduction] iter_args(%[[AT:.*]] = %{{.*}} : index) -> index {
// CHECK:           kernel.loop (%[[R:.*]], %[[C:.*]]) in (%{{.*}}, %{{.*}}) [parallel, parallel] {
// CHECK-NEXT:        %[[C2:.*]] = arith.addi %[[C]], %[[AT]] : index
// CHECK-NEXT:        %[[V:.*]] = kernel.load %{{.*}}[%[[R]], %[[C]]] : memref<?x?xf32>
// CHECK-NEXT:        kernel.store %[[V]], %y[%[[R]], %[[C2]]] : memref<2x?xf32>
func.func @concat(%l: !core.list<tensor<2x?xf32>>) -> tensor<2x?xf32> {
  %y = core.list_concat(%l) {axis = 1 : i64} : (!core.list<tensor<2x?xf32>>) -> tensor<2x?xf32>
  func.return %y : tensor<2x?xf32>
}

// Stack: every element must have element 0's shape; each is copied into its slab.
// CHECK-LABEL: func.func @stack(%l: !kernel.list<f32>) -> memref<?x3xf32>
// CHECK:         %y = kernel.alloc(%[[N:.*]]) : memref<?x3xf32>
// CHECK-NEXT:    kernel.loop (%[[K:.*]]) in (%[[N]]) [reduction] {
// CHECK-NEXT:      %[[E:.*]] = kernel.list_get %l[%[[K]]] : !kernel.list<f32> -> memref<?xf32>
// CHECK:           cf.assert %{{.*}}, "{{.*}}the sequence's tensors differ in shape"
// CHECK-NEXT:      kernel.loop (%[[J:.*]]) in (%{{.*}}) [parallel] {
// CHECK-NEXT:        %[[V:.*]] = kernel.load %[[E]][%[[J]]] : memref<?xf32>
// CHECK-NEXT:        kernel.store %[[V]], %y[%[[K]], %[[J]]] : memref<?x3xf32>
func.func @stack(%l: !core.list<tensor<3xf32>>) -> tensor<?x3xf32> {
  %y = core.list_stack(%l) {axis = 0 : i64} : (!core.list<tensor<3xf32>>) -> tensor<?x3xf32>
  func.return %y : tensor<?x3xf32>
}

// Optionals: has is an i1 stored in a buffer; get asserts a value is held.
// CHECK-LABEL: func.func @optionals(%o: !kernel.optional<memref<4xf32>>, %x: memref<4xf32>) -> (memref<i1>, memref<4xf32>, !kernel.optional<memref<4xf32>>)
// CHECK-NEXT:    %[[H:.*]] = kernel.optional_has %o : !kernel.optional<memref<4xf32>>
// CHECK-NEXT:    %h = kernel.alloc() : memref<i1>
// CHECK-NEXT:    kernel.store %[[H]], %h[] : memref<i1>
// CHECK-NEXT:    %[[H2:.*]] = kernel.optional_has %o : !kernel.optional<memref<4xf32>>
// CHECK-NEXT:    cf.assert %[[H2]], "{{.*}}the optional holds no value"
// CHECK-NEXT:    %v = kernel.optional_get %o : !kernel.optional<memref<4xf32>>
// CHECK-NEXT:    %w = kernel.optional_new(%x) : !kernel.optional<memref<4xf32>>
func.func @optionals(%o: !core.optional<tensor<4xf32>>, %x: tensor<4xf32>) -> (tensor<i1>, tensor<4xf32>, !core.optional<tensor<4xf32>>) {
  %h = core.optional_has(%o) : (!core.optional<tensor<4xf32>>) -> tensor<i1>
  %v = core.optional_get(%o) : (!core.optional<tensor<4xf32>>) -> tensor<4xf32>
  %w = core.optional(%x) : (tensor<4xf32>) -> !core.optional<tensor<4xf32>>
  func.return %h, %v, %w : tensor<i1>, tensor<4xf32>, !core.optional<tensor<4xf32>>
}

// A loop whose carried value starts as an optional and is yielded as a list
// carries the optional; the list yielded is wrapped, the final value read.
// CHECK-LABEL: func.func @loop_optional_to_list
// CHECK:         scf.while ({{.*}}) : (i64, i1, !kernel.optional<!kernel.list<f32>>) -> (i64, i1, !kernel.optional<!kernel.list<f32>>)
// CHECK:           %[[W:.*]] = kernel.optional_new(%{{.*}}) : !kernel.optional<!kernel.list<f32>>
// CHECK:           scf.yield %{{.*}}, %{{.*}}, %[[W]] : i64, i1, !kernel.optional<!kernel.list<f32>>
// CHECK:         cf.assert %{{.*}}, "{{.*}}the optional holds no value"
// CHECK-NEXT:    %r = kernel.optional_get %{{.*}} : !kernel.optional<!kernel.list<f32>>
// CHECK-NEXT:    func.return %r : !kernel.list<f32>
func.func @loop_optional_to_list(%n: tensor<i64>, %c: tensor<i1>, %o: !core.optional<!core.list<tensor<f32>>>) -> !core.list<tensor<f32>> {
  %r = core.loop(%n, %c, %o) : (tensor<i64>, tensor<i1>, !core.optional<!core.list<tensor<f32>>>) -> !core.list<tensor<f32>> body {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %oi: !core.optional<!core.list<tensor<f32>>>):
    %l = core.optional_get(%oi) : (!core.optional<!core.list<tensor<f32>>>) -> !core.list<tensor<f32>>
    core.yield(%ci, %l) : (tensor<i1>, !core.list<tensor<f32>>) -> ()
  }
  func.return %r : !core.list<tensor<f32>>
}

// String tensors are buffers of !onnx.string; equality compares bytes (kernel.str_cmp).
// CHECK-LABEL: func.func @strings(%x: memref<2x!onnx.string>) -> memref<2xi1>
// CHECK-NEXT:    %c = kernel.constant #onnx.strings<["a", "b"] : tensor<2x!onnx.string>>
// CHECK:           %[[A:.*]] = kernel.load %x[%[[I:.*]]] : memref<2x!onnx.string>
// CHECK-NEXT:      %[[B:.*]] = kernel.load %c[%[[I]]] : memref<2x!onnx.string>
// CHECK-NEXT:      %[[S:.*]] = kernel.str_cmp %[[A]], %[[B]]
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : i32
// CHECK-NEXT:      %[[EQ:.*]] = arith.cmpi eq, %[[S]], %[[Z]] : i32
// CHECK-NEXT:      kernel.store %[[EQ]], %z[%[[I]]] : memref<2xi1>
func.func @strings(%x: tensor<2x!onnx.string>) -> tensor<2xi1> {
  %c = core.constant() {value = #onnx.strings<["a", "b"] : tensor<2x!onnx.string>>} : () -> tensor<2x!onnx.string>
  %z = core.compare eq(%x, %c) : (tensor<2x!onnx.string>, tensor<2x!onnx.string>) -> tensor<2xi1>
  func.return %z : tensor<2xi1>
}

// The case of a string's ASCII letters changes into a new string (kernel.str_case).
// CHECK-LABEL: func.func @string_case(%x: memref<?x!onnx.string>) -> memref<?x!onnx.string>
// CHECK:           %[[S:.*]] = kernel.load %x[%[[I:.*]]] : memref<?x!onnx.string>
// CHECK-NEXT:      %[[U:.*]] = kernel.str_case upper %[[S]]
// CHECK-NEXT:      kernel.store %[[U]], %y[%[[I]]] : memref<?x!onnx.string>
func.func @string_case(%x: tensor<?x!onnx.string>) -> tensor<?x!onnx.string> {
  %y = core.unary upper(%x) : (tensor<?x!onnx.string>) -> tensor<?x!onnx.string>
  func.return %y : tensor<?x!onnx.string>
}
