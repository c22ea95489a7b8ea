// An 8-bit float computes as float and is stored through a codec: its bits have
// no scalar form, so a bitcast from or to one is refused, naming the types.
// RUN: not opt %s -p convert-core-to-kernel 2>&1 | filecheck %s

// CHECK-NOT: Traceback
// CHECK:     failed to lower 'core.bitcast' at <module>:node 'bc': core.bitcast of f8E4M3FN to i8 has no kernel lowering
func.func @narrow(%x: tensor<4xf8E4M3FN>) -> tensor<4xi8> {
  %y = core.bitcast(%x) : (tensor<4xf8E4M3FN>) -> tensor<4xi8> loc("bc")
  func.return %y : tensor<4xi8>
}
