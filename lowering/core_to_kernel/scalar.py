"""Scalar semantics of core's elementwise functions, as arith and math ops.

Each function here states, for one element, what `rung.dialects.core_eval`
states for whole arrays: integer `div` truncates, `mod` takes the divisor's
sign, `max`/`min` propagate NaN, `round` is half-to-even, casts from float to
integer truncate and casts to i1 test `!= 0`.

They emit through any `ScalarEmitter` (in practice the `KernelBuilder`, whose
`unary`/`binary`/`compare`/`cast` methods call them), so that this module
does not depend on the builder.
"""

from __future__ import annotations

import math
from typing import Protocol

from xdsl.dialects import arith
from xdsl.dialects import math as m
from xdsl.dialects.builtin import IndexType, IntegerType, f32
from xdsl.ir import Attribute, SSAValue

from rung.dialects import kernel
from rung.dialects.kernel_values import StrCaseOp, StrCmpOp
from rung.dialects.onnx.types import StringType

from .elements import KernelLoweringError, is_float, is_unsigned


class ScalarEmitter(Protocol):
    """What the scalar semantics need from a builder: single ops and constants."""

    def op1(self, cls: type, *args: object, **kw: object) -> SSAValue: ...

    def const(self, value: float | int | bool, type: Attribute) -> SSAValue: ...

    def select(self, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue: ...


_FLOAT_MATH: dict[str, type] = {
    "exp": m.ExpOp, "log": m.LogOp, "sqrt": m.SqrtOp, "rsqrt": m.RsqrtOp,
    "sin": m.SinOp, "cos": m.CosOp, "tan": m.TanOp,
    "asin": m.AsinOp, "acos": m.AcosOp, "atan": m.AtanOp,
    "sinh": m.SinhOp, "cosh": m.CoshOp, "tanh": m.TanhOp,
    "asinh": m.AsinhOp, "acosh": m.AcoshOp, "atanh": m.AtanhOp,
    "erf": m.ErfOp, "floor": m.FloorOp, "ceil": m.CeilOp, "round": m.RoundEvenOp,
    "abs": m.AbsFOp,
}  # fmt: skip


def unary(b: ScalarEmitter, fn: str, x: SSAValue) -> SSAValue:
    t = x.type
    if isinstance(t, StringType) and fn in ("lower", "upper"):
        return b.op1(StrCaseOp, fn, x)
    if is_float(t):
        if fn in _FLOAT_MATH:
            return b.op1(_FLOAT_MATH[fn], x)
        if fn == "neg":
            return b.op1(arith.NegfOp, x)
        if fn == "reciprocal":
            return b.op1(arith.DivfOp, b.const(1.0, t), x)
        if fn == "sigmoid":
            e = b.op1(m.ExpOp, b.op1(arith.NegfOp, x))
            one = b.const(1.0, t)
            return b.op1(arith.DivfOp, one, b.op1(arith.AddfOp, one, e))
        if fn == "sign":
            zero = b.const(0.0, t)
            pos = compare(b, "gt", x, zero)
            neg = compare(b, "lt", x, zero)
            return b.select(pos, b.const(1.0, t), b.select(neg, b.const(-1.0, t), x))
        if fn == "isnan":
            return b.op1(arith.CmpfOp, x, x, "uno")
        if fn == "isinf":
            return b.op1(arith.CmpfOp, b.op1(m.AbsFOp, x), b.const(math.inf, t), "oeq")
        if fn == "isposinf":
            return b.op1(arith.CmpfOp, x, b.const(math.inf, t), "oeq")
        if fn == "isneginf":
            return b.op1(arith.CmpfOp, x, b.const(-math.inf, t), "oeq")
    elif isinstance(t, IntegerType):
        if fn == "neg":
            return b.op1(arith.SubiOp, b.const(0, t), x)
        if fn == "abs":
            if is_unsigned(t):
                return x
            return b.op1(m.AbsIOp, x)
        if fn == "sign":
            zero = b.const(0, t)
            pos = compare(b, "gt", x, zero)
            if is_unsigned(t):
                return b.select(pos, b.const(1, t), zero)
            neg = compare(b, "lt", x, zero)
            return b.select(pos, b.const(1, t), b.select(neg, b.const(-1, t), zero))
        if fn in ("not", "bitwise_not"):
            return b.op1(arith.XOrIOp, x, b.const(-1, t))
        if fn in ("floor", "ceil", "round"):
            return x
        if fn in ("isnan", "isinf", "isposinf", "isneginf"):
            return b.const(0, IntegerType(1))
    raise KernelLoweringError(f"core.unary {fn} on {t} has no kernel lowering")


def _int_op(t: Attribute, signed: type, unsigned: type) -> type:
    return unsigned if is_unsigned(t) else signed


def binary(b: ScalarEmitter, fn: str, x: SSAValue, y: SSAValue) -> SSAValue:
    t = x.type
    if fn == "pow" and y.type != t:
        y = cast(b, y, t)
    if is_float(t):
        simple = {
            "add": arith.AddfOp, "sub": arith.SubfOp, "mul": arith.MulfOp,
            "div": arith.DivfOp, "max": arith.MaximumfOp, "min": arith.MinimumfOp,
            "pow": m.PowFOp, "atan2": m.Atan2Op, "rem": kernel.RemFOp,
        }  # fmt: skip
        if fn in simple:
            return b.op1(simple[fn], x, y)
        if fn == "mod":
            r = b.op1(kernel.RemFOp, x, y)
            zero = b.const(0.0, t)
            fix = b.op1(
                arith.AndIOp,
                compare(b, "ne", r, zero),
                compare(b, "ne", compare(b, "lt", r, zero), compare(b, "lt", y, zero)),
            )
            return b.select(fix, b.op1(arith.AddfOp, r, y), r)
    elif isinstance(t, IntegerType | IndexType):
        simple = {
            "add": arith.AddiOp, "sub": arith.SubiOp, "mul": arith.MuliOp,
            "and": arith.AndIOp, "or": arith.OrIOp, "xor": arith.XOrIOp,
            "bitwise_and": arith.AndIOp, "bitwise_or": arith.OrIOp, "bitwise_xor": arith.XOrIOp,
            "shift_left": arith.ShLIOp,
            "shift_right": _int_op(t, arith.ShRSIOp, arith.ShRUIOp),
            "div": _int_op(t, arith.DivSIOp, arith.DivUIOp),
            "rem": _int_op(t, arith.RemSIOp, arith.RemUIOp),
            "max": _int_op(t, arith.MaxSIOp, arith.MaxUIOp),
            "min": _int_op(t, arith.MinSIOp, arith.MinUIOp),
            "pow": m.IPowIOp,
        }  # fmt: skip
        if fn in simple:
            return b.op1(simple[fn], x, y)
        if fn == "mod":
            if is_unsigned(t):
                return b.op1(arith.RemUIOp, x, y)
            r = b.op1(arith.RemSIOp, x, y)
            zero = b.const(0, t)
            fix = b.op1(
                arith.AndIOp,
                compare(b, "ne", r, zero),
                compare(b, "ne", compare(b, "lt", r, zero), compare(b, "lt", y, zero)),
            )
            return b.select(fix, b.op1(arith.AddiOp, r, y), r)
    raise KernelLoweringError(f"core.binary {fn} on {t} has no kernel lowering")


_FLOAT_PRED = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge"}
_SIGNED_PRED = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge"}
_UNSIGNED_PRED = {"eq": "eq", "ne": "ne", "lt": "ult", "le": "ule", "gt": "ugt", "ge": "uge"}


def compare(b: ScalarEmitter, pred: str, x: SSAValue, y: SSAValue) -> SSAValue:
    t = x.type
    if is_float(t):
        return b.op1(arith.CmpfOp, x, y, _FLOAT_PRED[pred])
    if isinstance(t, StringType):  # bytewise, by the sign of strcmp
        x, y = b.op1(StrCmpOp, x, y), b.const(0, IntegerType(32))
    table = _UNSIGNED_PRED if is_unsigned(t) else _SIGNED_PRED
    return b.op1(arith.CmpiOp, x, y, table[pred])


def cast(b: ScalarEmitter, x: SSAValue, to: Attribute) -> SSAValue:
    src = x.type
    if src == to:
        return x
    if isinstance(src, StringType) or isinstance(to, StringType):
        raise KernelLoweringError(f"a cast from {src} to {to} has no kernel lowering")
    if isinstance(to, IntegerType) and to.width.data == 1:
        zero = b.const(0.0 if is_float(src) else 0, src)
        return compare(b, "ne", x, zero)
    if is_float(src) and is_float(to):
        wider = _float_width(to) > _float_width(src)
        if _float_width(to) == _float_width(src):  # f16 <-> bf16: through f32
            return cast(b, cast(b, x, f32), to)
        return b.op1(arith.ExtFOp if wider else arith.TruncFOp, x, to)
    if is_float(src):
        return b.op1(arith.FPToUIOp if is_unsigned(to) else arith.FPToSIOp, x, to)
    if is_float(to):
        return b.op1(arith.UIToFPOp if is_unsigned(src) else arith.SIToFPOp, x, to)
    if isinstance(src, IndexType) or isinstance(to, IndexType):
        return b.op1(arith.IndexCastOp, x, to)
    assert isinstance(src, IntegerType) and isinstance(to, IntegerType)
    ws, wt = src.width.data, to.width.data
    if wt > ws:
        return b.op1(arith.ExtUIOp if is_unsigned(src) else arith.ExtSIOp, x, to)
    if wt < ws:
        return b.op1(arith.TruncIOp, x, to)
    return b.op1(arith.BitcastOp, x, to)


def _float_width(t: Attribute) -> int:
    """The bit width of a float type (the 8/6/4-bit floats report theirs)."""
    width = getattr(t, "bitwidth", None)
    assert isinstance(width, int)
    return width
