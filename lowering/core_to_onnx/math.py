"""Elementwise ops back to ONNX: unary, binary, compare, select, cast, bitcast.

Core never broadcasts, so operands already have one shape and ONNX's
broadcasting never comes into play. Most functions have an ONNX op of their
own; the rest are short compositions with the same results (`rsqrt`,
`ne`, `atan2`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import AnyFloat, IntegerType
from xdsl.ir import Attribute, SSAValue

from rung.dialects import core
from rung.dialects.onnx.dtypes import NARROW_FLOAT_TYPES

from .emitter import Emitter, element, exports

UNARY = {
    "neg": "Neg",
    "abs": "Abs",
    "exp": "Exp",
    "log": "Log",
    "sqrt": "Sqrt",
    "reciprocal": "Reciprocal",
    "sin": "Sin",
    "cos": "Cos",
    "tan": "Tan",
    "asin": "Asin",
    "acos": "Acos",
    "atan": "Atan",
    "sinh": "Sinh",
    "cosh": "Cosh",
    "tanh": "Tanh",
    "asinh": "Asinh",
    "acosh": "Acosh",
    "atanh": "Atanh",
    "erf": "Erf",
    "sigmoid": "Sigmoid",
    "floor": "Floor",
    "ceil": "Ceil",
    "round": "Round",
    "sign": "Sign",
    "not": "Not",
    "bitwise_not": "BitwiseNot",
    "isnan": "IsNaN",
}
"""Core unary functions with an ONNX op of the same meaning (Round: half to even too)."""

BINARY = {
    "add": "Add",
    "sub": "Sub",
    "mul": "Mul",
    "div": "Div",
    "pow": "Pow",
    "max": "Max",
    "min": "Min",
    "and": "And",
    "or": "Or",
    "xor": "Xor",
    "bitwise_and": "BitwiseAnd",
    "bitwise_or": "BitwiseOr",
    "bitwise_xor": "BitwiseXor",
}

COMPARE = {
    "eq": "Equal",
    "lt": "Less",
    "le": "LessOrEqual",
    "gt": "Greater",
    "ge": "GreaterOrEqual",
}


@exports(core.UnaryOp)
def unary(e: Emitter, op: core.UnaryOp) -> Sequence[SSAValue]:
    fn, x, out = op.fn.data, op.input, op.result.type
    if fn in UNARY:
        return [e.node(UNARY[fn], [x], out)]
    if fn == "rsqrt":
        return [e.node("Reciprocal", [e.node("Sqrt", [x], out)], out)]
    if fn == "isinf":
        return [e.node("IsInf", [x], out)]
    if fn == "isposinf":
        return [e.node("IsInf", [x], out, detect_negative=0)]
    if fn == "isneginf":
        return [e.node("IsInf", [x], out, detect_positive=0)]
    if fn in ("lower", "upper"):
        return [_change_case(e, x, out, fn)]
    raise e.fail(f"no ONNX op computes '{fn}'")


def _change_case(e: Emitter, x: SSAValue, out: Attribute, fn: str) -> SSAValue:
    """StringNormalizer works on a 1-D tensor: flatten, change case, shape back."""
    from rung.dialects.onnx.types import StringType

    from .emitter import shape, tensor

    if not isinstance(element(x), StringType):
        raise e.fail(f"'{fn}' changes the case of strings, not of {element(x)}")
    dims = shape(x)
    flat = e.node("Reshape", [x, e.i64s([-1])], tensor(element(x), [-1]))
    changed = e.node(
        "StringNormalizer",
        [flat],
        tensor(element(x), [-1]),
        case_change_action="LOWER" if fn == "lower" else "UPPER",
        is_case_sensitive=1,
        locale="C",  # core changes the case of ASCII letters only, as the C locale does
    )
    target = e.node("Shape", [x], tensor(IntegerType(64), [len(dims) if dims else -1]))
    return e.node("Reshape", [changed, target], out)


@exports(core.BinaryOp)
def binary(e: Emitter, op: core.BinaryOp) -> Sequence[SSAValue]:
    fn, a, b, out = op.fn.data, op.lhs, op.rhs, op.result.type
    if fn in BINARY:
        operands = e.elementwise_operands([a, b])
        if fn == "add":
            from .nn import conv_with_bias

            fused = conv_with_bias(e, *operands, out) or conv_with_bias(e, *operands[::-1], out)
            if fused is not None:
                return [fused]
        if fn == "mul":
            from .nn import conv_with_scale

            fused = conv_with_scale(e, *operands, out) or conv_with_scale(e, *operands[::-1], out)
            if fused is not None:
                return [fused]
        if fn == "div":
            from .nn import average_pool

            mean = average_pool(e, *operands, out)
            if mean is not None:
                return [mean]
        return [e.node(BINARY[fn], operands, out)]
    if fn == "rem":  # the dividend's sign: C's fmod
        return [e.node("Mod", [a, b], out, fmod=1)]
    if fn == "mod":  # the divisor's sign (ONNX Mod-28 does floor modulo of floats too)
        return [e.node("Mod", [a, b], out)]
    if fn in ("shift_left", "shift_right"):
        direction = "LEFT" if fn == "shift_left" else "RIGHT"
        return [e.node("BitShift", [a, b], out, direction=direction)]
    if fn == "atan2":
        return [_atan2(e, a, b, out)]
    raise e.fail(f"no ONNX op computes '{fn}'")


def _atan2(e: Emitter, y: SSAValue, x: SSAValue, out: Attribute) -> SSAValue:
    """C's atan2 from Atan: atan(y / x), moved by ±pi where x is negative (signed zeros
    count), with the two quotients that are NaN (both zero, both infinite) spelled out."""
    from .emitter import I1, shape, tensor

    elem = element(y)
    if not isinstance(elem, AnyFloat):
        raise e.fail(f"atan2 of {elem}")
    mask = tensor(I1, shape(y))

    def const(value: float) -> SSAValue:
        return e.scalar_like(value, elem)

    def where(cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return e.node("Where", [cond, a, b], out)

    def negative(v: SSAValue) -> SSAValue:  # the sign bit: true for -0.0 too
        zero = e.node("Equal", [v, const(0.0)], mask)
        return e.node("Less", [where(zero, e.node("Reciprocal", [v], out), v), const(0.0)], mask)

    def signed(cond: SSAValue, value: float) -> SSAValue:
        return where(cond, const(-value), const(value))

    pi = 3.141592653589793
    x_neg, y_neg = negative(x), negative(y)
    base = e.node("Atan", [e.node("Div", [y, x], out)], out)
    moved = where(x_neg, e.node("Add", [base, signed(y_neg, pi)], out), base)
    zeros = e.node(
        "And",
        [e.node("Equal", [y, const(0.0)], mask), e.node("Equal", [x, const(0.0)], mask)],
        mask,
    )
    infinities = e.node("And", [e.node("IsInf", [y], mask), e.node("IsInf", [x], mask)], mask)
    on_zeros = where(x_neg, signed(y_neg, pi), y)
    quarter = where(x_neg, const(3 * pi / 4), const(pi / 4))
    on_infinities = where(y_neg, e.node("Neg", [quarter], out), quarter)
    return where(zeros, on_zeros, where(infinities, on_infinities, moved))


@exports(core.CompareOp)
def compare(e: Emitter, op: core.CompareOp) -> Sequence[SSAValue]:
    pred, out = op.pred.data, op.result.type
    operands = e.elementwise_operands([op.lhs, op.rhs])
    if pred == "ne":
        return [e.node("Not", [e.node("Equal", operands, out)], out)]
    return [e.node(COMPARE[pred], operands, out)]


@exports(core.SelectOp)
def select(e: Emitter, op: core.SelectOp) -> Sequence[SSAValue]:
    operands = e.elementwise_operands([op.cond, op.on_true, op.on_false])
    return [e.node("Where", operands, op.result.type)]


@exports(core.CastOp)
def cast(e: Emitter, op: core.CastOp) -> Sequence[SSAValue]:
    from rung.importers.onnx.export import onnx_element_type

    target = element(op.result)
    to = onnx_element_type(target)
    saturate = None
    if isinstance(target, NARROW_FLOAT_TYPES):
        # Core saturates only when told; ONNX Cast does by default.
        saturate = op.saturate.value.data if op.saturate is not None else 0
    return [e.node("Cast", [op.input], op.result.type, to=to, saturate=saturate)]


@exports(core.BitcastOp)
def bitcast(e: Emitter, op: core.BitcastOp) -> Sequence[SSAValue]:
    from rung.importers.onnx.export import onnx_element_type

    to = onnx_element_type(element(op.result))
    return [e.node("BitCast", [op.input], op.result.type, to=to)]
