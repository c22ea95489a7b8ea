// The sequence and optional handlers of convert-onnx-to-core on hand-written
// onnx-dialect IR: !onnx.seq values become !core.list (the function signature
// included) and !onnx.opt values !core.optional; each sequence op becomes
// core list ops, positions made non-negative with the list's length.
// RUN: opt %s -p convert-onnx-to-core | filecheck %s

// SequenceConstruct is core.list (elements of different shapes under a `?`
// bound); the constant position -1 becomes length + -1; SequenceLength is
// core.list_length.
// CHECK-LABEL: func.func @construct_at(%a: tensor<2xf32>, %b: tensor<3xf32>) -> (!core.list<tensor<?xf32>>, tensor<?xf32>, tensor<i64>) {
// CHECK-NEXT:    %s = core.list(%a, %b) : (tensor<2xf32>, tensor<3xf32>) -> !core.list<tensor<?xf32>>
// CHECK-NEXT:    %p = core.constant() {value = dense<-1> : tensor<i64>}
// CHECK-NEXT:    %[[M1:.*]] = core.constant() {value = dense<-1> : tensor<i64>}
// CHECK-NEXT:    %[[N:.*]] = core.list_length(%s) : (!core.list<tensor<?xf32>>) -> tensor<i64>
// CHECK-NEXT:    %[[I:.*]] = core.binary add(%[[N]], %[[M1]]) : (tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK-NEXT:    %last = core.list_get(%s, %[[I]]) : (!core.list<tensor<?xf32>>, tensor<i64>) -> tensor<?xf32>
// CHECK-NEXT:    %n = core.list_length(%s) : (!core.list<tensor<?xf32>>) -> tensor<i64>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %s, %last, %n
func.func @construct_at(%a: tensor<2xf32>, %b: tensor<3xf32>) -> (!onnx.seq<tensor<?xf32>>, tensor<?xf32>, tensor<i64>) {
  %s = onnx.SequenceConstruct(%a, %b) : (tensor<2xf32>, tensor<3xf32>) -> !onnx.seq<tensor<?xf32>>
  %p = onnx.Constant() {value = dense<-1> : tensor<i64>} : () -> tensor<i64>
  %last = onnx.SequenceAt(%s, %p) : (!onnx.seq<tensor<?xf32>>, tensor<i64>) -> tensor<?xf32>
  %n = onnx.SequenceLength(%s) : (!onnx.seq<tensor<?xf32>>) -> tensor<i64>
  func.return %s, %last, %n : !onnx.seq<tensor<?xf32>>, tensor<?xf32>, tensor<i64>
}

// A run-time position (int32) is cast to i64 and normalized by a select;
// SequenceErase without a position erases the last element (length - 1).
// CHECK-LABEL: func.func @insert_erase(%s: !core.list<tensor<?x4xf32>>, %x: tensor<2x4xf32>, %p: tensor<i32>) -> !core.list<tensor<?x4xf32>> {
// CHECK-NEXT:    %[[P:.*]] = core.cast(%p) : (tensor<i32>) -> tensor<i64>
// CHECK-NEXT:    %[[Z:.*]] = core.constant() {value = dense<0> : tensor<i64>}
// CHECK-NEXT:    %[[NEG:.*]] = core.compare lt(%[[P]], %[[Z]]) : (tensor<i64>, tensor<i64>) -> tensor<i1>
// CHECK-NEXT:    %[[N:.*]] = core.list_length(%s)
// CHECK-NEXT:    %[[W:.*]] = core.binary add(%[[P]], %[[N]])
// CHECK-NEXT:    %[[Q:.*]] = core.select(%[[NEG]], %[[W]], %[[P]]) : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK-NEXT:    %i = core.list_insert(%s, %x, %[[Q]]) : (!core.list<tensor<?x4xf32>>, tensor<2x4xf32>, tensor<i64>) -> !core.list<tensor<?x4xf32>>
// CHECK-NEXT:    %[[ONE:.*]] = core.constant() {value = dense<1> : tensor<i64>}
// CHECK-NEXT:    %[[N2:.*]] = core.list_length(%i)
// CHECK-NEXT:    %[[LAST:.*]] = core.binary sub(%[[N2]], %[[ONE]])
// CHECK-NEXT:    %e = core.list_erase(%i, %[[LAST]]) : (!core.list<tensor<?x4xf32>>, tensor<i64>) -> !core.list<tensor<?x4xf32>>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %e
func.func @insert_erase(%s: !onnx.seq<tensor<?x4xf32>>, %x: tensor<2x4xf32>, %p: tensor<i32>) -> !onnx.seq<tensor<?x4xf32>> {
  %i = onnx.SequenceInsert(%s, %x, %p) : (!onnx.seq<tensor<?x4xf32>>, tensor<2x4xf32>, tensor<i32>) -> !onnx.seq<tensor<?x4xf32>>
  %e = onnx.SequenceErase(%i) : (!onnx.seq<tensor<?x4xf32>>) -> !onnx.seq<tensor<?x4xf32>>
  func.return %e : !onnx.seq<tensor<?x4xf32>>
}

// ConcatFromSequence joins along an existing dim (core.list_concat), or with
// new_axis along a new one (core.list_stack, axis -2 of a rank-3 result -> 1).
// CHECK-LABEL: func.func @concat_stack(
// CHECK:         %c = core.list_concat(%s) {axis = 0 : i64} : (!core.list<tensor<?x4xf32>>) -> tensor<?x4xf32>
// CHECK-NEXT:    %k = core.list_stack(%t) {axis = 1 : i64} : (!core.list<tensor<2x4xf32>>) -> tensor<2x?x4xf32>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %c, %k
func.func @concat_stack(%s: !onnx.seq<tensor<?x4xf32>>, %t: !onnx.seq<tensor<2x4xf32>>) -> (tensor<?x4xf32>, tensor<2x?x4xf32>) {
  %c = onnx.ConcatFromSequence(%s) {axis = 0 : i64} : (!onnx.seq<tensor<?x4xf32>>) -> tensor<?x4xf32>
  %k = onnx.ConcatFromSequence(%t) {axis = -2 : i64, new_axis = 1 : i64} : (!onnx.seq<tensor<2x4xf32>>) -> tensor<2x?x4xf32>
  func.return %c, %k : tensor<?x4xf32>, tensor<2x?x4xf32>
}

// SplitToSequence with a constant split: static slices in a core.list. A scalar
// split of 2 on 5 rows gives pieces of 2, 2 and 1; without split, pieces of 1,
// squeezed when keepdims = 0.
// CHECK-LABEL: func.func @split_to_sequence(
// CHECK:         %[[A0:.*]] = core.slice(%x) {start = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<5x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[A1:.*]] = core.slice(%x) {start = array<i64: 2, 0>, stride = array<i64: 1, 1>} : (tensor<5x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[A2:.*]] = core.slice(%x) {start = array<i64: 4, 0>, stride = array<i64: 1, 1>} : (tensor<5x3xf32>) -> tensor<1x3xf32>
// CHECK-NEXT:    %a = core.list(%[[A0]], %[[A1]], %[[A2]]) : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<1x3xf32>) -> !core.list<tensor<?x3xf32>>
// CHECK-NEXT:    %[[B0:.*]] = core.slice(%x) {start = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<5x3xf32>) -> tensor<5x1xf32>
// CHECK-NEXT:    %[[B0S:.*]] = core.reshape(%[[B0]]) : (tensor<5x1xf32>) -> tensor<5xf32>
// CHECK-NEXT:    %[[B1:.*]] = core.slice(%x) {start = array<i64: 0, 1>, stride = array<i64: 1, 1>} : (tensor<5x3xf32>) -> tensor<5x1xf32>
// CHECK-NEXT:    %[[B1S:.*]] = core.reshape(%[[B1]]) : (tensor<5x1xf32>) -> tensor<5xf32>
// CHECK-NEXT:    %[[B2:.*]] = core.slice(%x) {start = array<i64: 0, 2>, stride = array<i64: 1, 1>} : (tensor<5x3xf32>) -> tensor<5x1xf32>
// CHECK-NEXT:    %[[B2S:.*]] = core.reshape(%[[B2]]) : (tensor<5x1xf32>) -> tensor<5xf32>
// CHECK-NEXT:    %b = core.list(%[[B0S]], %[[B1S]], %[[B2S]]) : (tensor<5xf32>, tensor<5xf32>, tensor<5xf32>) -> !core.list<tensor<5xf32>>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %a, %b
func.func @split_to_sequence(%x: tensor<5x3xf32>) -> (!onnx.seq<tensor<?x3xf32>>, !onnx.seq<tensor<5xf32>>) {
  %two = onnx.Constant() {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %a = onnx.SplitToSequence(%x, %two) : (tensor<5x3xf32>, tensor<i64>) -> !onnx.seq<tensor<?x3xf32>>
  %b = onnx.SplitToSequence(%x) {axis = 1 : i64, keepdims = 0 : i64} : (tensor<5x3xf32>) -> !onnx.seq<tensor<5xf32>>
  func.return %a, %b : !onnx.seq<tensor<?x3xf32>>, !onnx.seq<tensor<5xf32>>
}

// SequenceMap is a core.loop over the first sequence's length: trip i reads
// element i (the tensor input is used as it is), runs the body and appends.
// CHECK-LABEL: func.func @sequence_map(
// CHECK:         %[[N:.*]] = core.list_length(%s) : (!core.list<tensor<?xf32>>) -> tensor<i64>
// CHECK-NEXT:    %[[E:.*]] = core.list() : () -> !core.list<tensor<3xf32>>
// CHECK-NEXT:    %[[T:.*]] = core.constant() {value = dense<true> : tensor<i1>}
// CHECK-NEXT:    %out = core.loop(%[[N]], %[[T]], %[[E]]) : (tensor<i64>, tensor<i1>, !core.list<tensor<3xf32>>) -> !core.list<tensor<3xf32>> body {
// CHECK-NEXT:    ^{{.*}}(%[[I:.*]]: tensor<i64>, %[[C:.*]]: tensor<i1>, %[[ACC:.*]]: !core.list<tensor<3xf32>>):
// CHECK-NEXT:      %a = core.list_get(%s, %[[I]]) : (!core.list<tensor<?xf32>>, tensor<i64>) -> tensor<3xf32>
// CHECK-NEXT:      %y = core.binary mul(%a, %t) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:      %[[NEXT:.*]] = core.list_insert(%[[ACC]], %y, %[[I]]) : (!core.list<tensor<3xf32>>, tensor<3xf32>, tensor<i64>) -> !core.list<tensor<3xf32>>
// CHECK-NEXT:      core.yield(%[[C]], %[[NEXT]]) : (tensor<i1>, !core.list<tensor<3xf32>>) -> ()
// CHECK-NEXT:    }
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %out
func.func @sequence_map(%s: !onnx.seq<tensor<?xf32>>, %t: tensor<3xf32>) -> !onnx.seq<tensor<3xf32>> {
  %out = onnx.SequenceMap(%s, %t) : (!onnx.seq<tensor<?xf32>>, tensor<3xf32>) -> !onnx.seq<tensor<3xf32>> body {
  ^bb0(%a: tensor<3xf32>, %b: tensor<3xf32>):
    %y = onnx.Mul(%a, %b) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    onnx.Yield %y : tensor<3xf32>
  }
  func.return %out : !onnx.seq<tensor<3xf32>>
}

// Optionals: core.optional with or without a value, optional_has (a constant
// true on a plain tensor), optional_get (an optional sequence holds a list).
// CHECK-LABEL: func.func @optional(%x: tensor<3xf32>, %o: !core.optional<!core.list<tensor<?xf32>>>) -> (tensor<i1>, tensor<i1>, tensor<3xf32>, !core.list<tensor<?xf32>>) {
// CHECK-NEXT:    %full = core.optional(%x) : (tensor<3xf32>) -> !core.optional<tensor<3xf32>>
// CHECK-NEXT:    %empty = core.optional() : () -> !core.optional<tensor<3xf32>>
// CHECK-NEXT:    %has = core.optional_has(%empty) : (!core.optional<tensor<3xf32>>) -> tensor<i1>
// CHECK-NEXT:    %plain = core.constant() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
// CHECK-NEXT:    %got = core.optional_get(%full) : (!core.optional<tensor<3xf32>>) -> tensor<3xf32>
// CHECK-NEXT:    %s = core.optional_get(%o) : (!core.optional<!core.list<tensor<?xf32>>>) -> !core.list<tensor<?xf32>>
// CHECK-NOT:     onnx.
// CHECK-NEXT:    func.return %has, %plain, %got, %s
func.func @optional(%x: tensor<3xf32>, %o: !onnx.opt<!onnx.seq<tensor<?xf32>>>) -> (tensor<i1>, tensor<i1>, tensor<3xf32>, !onnx.seq<tensor<?xf32>>) {
  %full = onnx.Optional(%x) : (tensor<3xf32>) -> !onnx.opt<tensor<3xf32>>
  %empty = onnx.Optional() {type = tensor<3xf32>} : () -> !onnx.opt<tensor<3xf32>>
  %has = onnx.OptionalHasElement(%empty) : (!onnx.opt<tensor<3xf32>>) -> tensor<i1>
  %plain = onnx.OptionalHasElement(%x) : (tensor<3xf32>) -> tensor<i1>
  %got = onnx.OptionalGetElement(%full) : (!onnx.opt<tensor<3xf32>>) -> tensor<3xf32>
  %s = onnx.OptionalGetElement(%o) : (!onnx.opt<!onnx.seq<tensor<?xf32>>>) -> !onnx.seq<tensor<?xf32>>
  func.return %has, %plain, %got, %s : tensor<i1>, tensor<i1>, tensor<3xf32>, !onnx.seq<tensor<?xf32>>
}
