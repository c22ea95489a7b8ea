// Control flow, lists and optionals back to ONNX: core.if and core.loop have
// ONNX's semantics, so their regions move into If and Loop (ending in
// onnx.Yield) and the ops inside are converted in place; lists are ONNX
// sequences and optionals ONNX optionals.
// RUN: opt %s -p convert-core-to-onnx | filecheck %s

// CHECK-LABEL: func.func @if_(
// CHECK:         %y = onnx.If(%c) : (tensor<i1>) -> tensor<2xf32> then_branch {
// CHECK-NEXT:      %n = onnx.Neg(%x) : (tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:      onnx.Yield %n : tensor<2xf32>
// CHECK-NEXT:    } else_branch {
// CHECK-NEXT:      onnx.Yield %x : tensor<2xf32>
// CHECK-NEXT:    }
// CHECK-NOT:     core.
func.func @if_(%c: tensor<i1>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %y = core.if(%c) : (tensor<i1>) -> tensor<2xf32> then {
    %n = core.unary neg(%x) : (tensor<2xf32>) -> tensor<2xf32>
    core.yield(%n) : (tensor<2xf32>) -> ()
  } else {
    core.yield(%x) : (tensor<2xf32>) -> ()
  }
  func.return %y : tensor<2xf32>
}

// CHECK-LABEL: func.func @loop(
// CHECK:         %s, %all = onnx.Loop(%m, %c, %x) : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) body {
// CHECK-NEXT:    ^bb0(%i: tensor<i64>, %go: tensor<i1>, %v: tensor<2xf32>):
// CHECK-NEXT:      %w = onnx.Add(%v, %v) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:      onnx.Yield %go, %w, %v : tensor<i1>, tensor<2xf32>, tensor<2xf32>
// CHECK-NEXT:    }
func.func @loop(%m: tensor<i64>, %c: tensor<i1>, %x: tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) {
  %s, %all = core.loop(%m, %c, %x) : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) body {
  ^bb0(%i: tensor<i64>, %go: tensor<i1>, %v: tensor<2xf32>):
    %w = core.binary add(%v, %v) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    core.yield(%go, %w, %v) : (tensor<i1>, tensor<2xf32>, tensor<2xf32>) -> ()
  }
  func.return %s, %all : tensor<2xf32>, tensor<?x2xf32>
}

// CHECK-LABEL: func.func @lists(
// CHECK:         %l = onnx.SequenceConstruct(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> !onnx.seq<tensor<2xf32>>
// CHECK-NEXT:    %e = onnx.SequenceEmpty() {dtype = 1 : i64} : () -> !onnx.seq<tensor<2xf32>>
// CHECK-NEXT:    %l2 = onnx.SequenceInsert(%l, %x, %k) : (!onnx.seq<tensor<2xf32>>, tensor<2xf32>, tensor<i64>) -> !onnx.seq<tensor<2xf32>>
// CHECK-NEXT:    %n = onnx.SequenceLength(%l2) : (!onnx.seq<tensor<2xf32>>) -> tensor<i64>
// CHECK-NEXT:    %g = onnx.SequenceAt(%l2, %k)
// CHECK-NEXT:    %st = onnx.ConcatFromSequence(%l2) {axis = 0 : i64, new_axis = 1 : i64} : (!onnx.seq<tensor<2xf32>>) -> tensor<?x2xf32>
// CHECK-NEXT:    %o = onnx.Optional(%x) : (tensor<2xf32>) -> !onnx.opt<tensor<2xf32>>
// CHECK-NEXT:    %h = onnx.OptionalHasElement(%o) : (!onnx.opt<tensor<2xf32>>) -> tensor<i1>
func.func @lists(%x: tensor<2xf32>, %k: tensor<i64>) -> (!core.list<tensor<2xf32>>, tensor<i64>, tensor<2xf32>, tensor<?x2xf32>, tensor<i1>) {
  %l = core.list(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> !core.list<tensor<2xf32>>
  %e = core.list() : () -> !core.list<tensor<2xf32>>
  %l2 = core.list_insert(%l, %x, %k) : (!core.list<tensor<2xf32>>, tensor<2xf32>, tensor<i64>) -> !core.list<tensor<2xf32>>
  %n = core.list_length(%l2) : (!core.list<tensor<2xf32>>) -> tensor<i64>
  %g = core.list_get(%l2, %k) : (!core.list<tensor<2xf32>>, tensor<i64>) -> tensor<2xf32>
  %st = core.list_stack(%l2) {axis = 0 : i64} : (!core.list<tensor<2xf32>>) -> tensor<?x2xf32>
  %o = core.optional(%x) : (tensor<2xf32>) -> !core.optional<tensor<2xf32>>
  %h = core.optional_has(%o) : (!core.optional<tensor<2xf32>>) -> tensor<i1>
  func.return %e, %n, %g, %st, %h : !core.list<tensor<2xf32>>, tensor<i64>, tensor<2xf32>, tensor<?x2xf32>, tensor<i1>
}
