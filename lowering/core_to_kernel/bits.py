"""core.bitcast → a parallel nest reinterpreting each element.

    kernel.loop (%i) in (3) [parallel] {
      %a = kernel.load %x[%i] : memref<3xf32>
      %r = arith.bitcast %a : f32 to i32
      kernel.store %r, %y[%i] : memref<3xi32>
    }

`arith.bitcast` keeps the bits (C code generation reads a float's bytes as an
integer and back); a bool is the byte 0 or 1, so to and from i1 is a widening
or a `!= 0`. The 8/6/4-bit floats, which compute as float and are stored
through codecs, are refused.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.ir import Attribute, SSAValue

from rung.dialects import core
from rung.dialects.onnx.dtypes import NARROW_FLOAT_TYPES

from .builder import KernelBuilder
from .elements import KernelLoweringError
from .registry import lowers


def _is_bool(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.width.data == 1


@lowers(core.BitcastOp)
def bitcast(b: KernelBuilder, op: core.BitcastOp) -> list[SSAValue]:
    source, result = op.input.type, op.result.type
    assert isinstance(source, TensorType) and isinstance(result, TensorType)
    src, to = source.element_type, result.element_type
    if isinstance(src, NARROW_FLOAT_TYPES) or isinstance(to, NARROW_FLOAT_TYPES):
        raise KernelLoweringError(f"core.bitcast of {src} to {to} has no kernel lowering")
    x = b.buffer(op.input)
    out = b.alloc_for(op.result, b.dims(x))

    def reinterpret(b: KernelBuilder, value: SSAValue) -> SSAValue:
        if src == to:
            return value
        if _is_bool(src) or _is_bool(to):
            return b.cast(value, to)
        return b.op1(arith.BitcastOp, value, to)

    def body(b: KernelBuilder, ivs: list[SSAValue]) -> None:
        b.store(reinterpret(b, b.load(x, ivs)), out, ivs)

    b.parallel(b.dims(out), body)
    return [out]
