"""Elementwise ONNX ops → core: arithmetic, comparisons, casts, activations, constants.

ONNX broadcasts implicitly; core does not, so every binary op first brings
its operands to the result's shape with `CoreBuilder.broadcast_all`.
Activations are compositions of core elementwise ops.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import Attribute, Operation, SSAValue

from rung.dialects import core
from rung.dialects.dtypes import f32, i64, numpy_dtype
from rung.dialects.onnx import OnnxOp
from rung.dialects.onnx import generated_ops as onnx
from rung.lowering.kit import (
    CoreBuilder,
    Elementwise,
    LoweringError,
    element_of,
    install,
    shape_of_type,
    tensor,
)

from .registry import TABLE, Results, lowers

# ---- arithmetic and logic ---------------------------------------------------------------


def _read(op: Operation, name: str) -> object:
    """An onnx op's operand by its schema field name (`A`, `B`), as rules read them."""
    return getattr(op, name)


RULES: tuple[Elementwise, ...] = (
    *(
        Elementwise(source, "binary", fn, ("A", "B"))
        for source, fn in (
            (onnx.AddOp, "add"), (onnx.SubOp, "sub"), (onnx.MulOp, "mul"), (onnx.DivOp, "div"),
            (onnx.AndOp, "and"), (onnx.OrOp, "or"), (onnx.XorOp, "xor"),
            (onnx.BitwiseAndOp, "bitwise_and"), (onnx.BitwiseOrOp, "bitwise_or"),
            (onnx.BitwiseXorOp, "bitwise_xor"),
        )
    ),
    *(
        Elementwise(source, "compare", pred, ("A", "B"))
        for source, pred in (
            (onnx.EqualOp, "eq"), (onnx.LessOp, "lt"), (onnx.LessOrEqualOp, "le"),
            (onnx.GreaterOp, "gt"), (onnx.GreaterOrEqualOp, "ge"),
        )
    ),
)  # fmt: skip
"""ONNX ops that are one core elementwise op of their operands, broadcast (`kit.rules`)."""

install(TABLE, RULES, _read)


@lowers(onnx.PowOp)
def power(b: CoreBuilder, op: onnx.PowOp) -> Results:
    base, exponent = b.broadcast_all([op.X, op.Y], op.Z.type)
    return [b.binary("pow", base, exponent)]


@lowers(onnx.ModOp)
def modulo(b: CoreBuilder, op: onnx.ModOp) -> Results:
    lhs, rhs = b.broadcast_all([op.A, op.B], op.C.type)
    return [b.binary("rem" if op.attr("fmod") else "mod", lhs, rhs)]


@lowers(onnx.BitShiftOp)
def bit_shift(b: CoreBuilder, op: onnx.BitShiftOp) -> Results:
    lhs, rhs = b.broadcast_all([op.X, op.Y], op.Z.type)
    fn = "shift_left" if op.attr("direction") == "LEFT" else "shift_right"
    return [b.binary(fn, lhs, rhs)]


_VARIADIC: dict[type[OnnxOp], str] = {onnx.MaxOp: "max", onnx.MinOp: "min", onnx.SumOp: "add"}


@lowers(*_VARIADIC)
def variadic(b: CoreBuilder, op: onnx.MaxOp | onnx.MinOp | onnx.SumOp) -> Results:
    values = b.broadcast_all(op.data_0, op.results[0].type)
    fn = _VARIADIC[type(op)]
    acc = values[0]
    for v in values[1:]:
        acc = b.binary(fn, acc, v)
    return [acc]


@lowers(onnx.MeanOp)
def mean(b: CoreBuilder, op: onnx.MeanOp) -> Results:
    values = b.broadcast_all(op.data_0, op.mean.type)
    acc = values[0]
    for v in values[1:]:
        acc = b.binary("add", acc, v)
    return [b.binary("div", acc, b.splat(len(values), acc))]


@lowers(onnx.WhereOp)
def where(b: CoreBuilder, op: onnx.WhereOp) -> Results:
    cond, x, y = b.broadcast_all([op.condition, op.X, op.Y], op.output.type)
    return [b.select(cond, x, y)]


# ---- unary --------------------------------------------------------------------------

_UNARY: dict[type[OnnxOp], str] = {
    onnx.AbsOp: "abs", onnx.NegOp: "neg", onnx.ExpOp: "exp", onnx.LogOp: "log",
    onnx.SqrtOp: "sqrt", onnx.ReciprocalOp: "reciprocal", onnx.SinOp: "sin",
    onnx.CosOp: "cos", onnx.TanOp: "tan", onnx.AsinOp: "asin", onnx.AcosOp: "acos",
    onnx.AtanOp: "atan", onnx.SinhOp: "sinh", onnx.CoshOp: "cosh", onnx.TanhOp: "tanh",
    onnx.AsinhOp: "asinh", onnx.AcoshOp: "acosh", onnx.AtanhOp: "atanh", onnx.ErfOp: "erf",
    onnx.SigmoidOp: "sigmoid", onnx.FloorOp: "floor", onnx.CeilOp: "ceil",
    onnx.RoundOp: "round", onnx.SignOp: "sign", onnx.NotOp: "not",
    onnx.BitwiseNotOp: "bitwise_not", onnx.IsNaNOp: "isnan",
}  # fmt: skip


@lowers(*_UNARY)
def unary(b: CoreBuilder, op: OnnxOp) -> Results:
    (x,) = op.operands
    return [b.unary(_UNARY[type(op)], x, _like_input(x, op.results[0].type))]


def _like_input(x: SSAValue, declared: Attribute) -> Attribute:
    """The declared element type in the input's shape: an elementwise result has the
    shape its input has, whatever (more or less static) shape ONNX declared for it."""
    shape = shape_of_type(x.type)
    if shape is None or shape_of_type(declared) is None:
        return declared
    return tensor(element_of(declared), shape)


@lowers(onnx.IsInfOp)
def is_inf(b: CoreBuilder, op: onnx.IsInfOp) -> Results:
    x = op.X
    pos, neg = op.attr("detect_positive"), op.attr("detect_negative")
    fn = {(1, 1): "isinf", (1, 0): "isposinf", (0, 1): "isneginf"}.get((pos, neg))  # type: ignore[call-overload]
    if fn is None:
        return [b.compare("lt", x, x)]  # detects nothing: x < x is always false
    return [b.unary(fn, x, _like_input(x, op.Y.type))]


@lowers(onnx.IdentityOp)
def identity(b: CoreBuilder, op: onnx.IdentityOp) -> Results:
    return [op.input]


@lowers(onnx.CastOp)
def cast(b: CoreBuilder, op: onnx.CastOp) -> Results:
    return [b.cast(op.input, element_of(op.output.type), saturate=bool(op.attr("saturate")))]


@lowers(onnx.CastLikeOp)
def cast_like(b: CoreBuilder, op: onnx.CastLikeOp) -> Results:
    element = element_of(op.target_type.type)
    return [b.cast(op.input, element, saturate=bool(op.attr("saturate")))]


# ---- activations ------------------------------------------------------------------------


def _float(op: OnnxOp, name: str) -> float:
    """A FLOAT attribute (with its schema default)."""
    return float(op.attr(name))  # type: ignore[arg-type]


@lowers(onnx.ReluOp)
def relu(b: CoreBuilder, op: onnx.ReluOp) -> Results:
    return [b.binary("max", op.X, b.splat(0, op.X))]


@lowers(onnx.LeakyReluOp)
def leaky_relu(b: CoreBuilder, op: onnx.LeakyReluOp) -> Results:
    x = op.X
    scaled = b.binary("mul", x, b.splat(_float(op, "alpha"), x))
    return [b.select(b.compare("lt", x, b.splat(0, x)), scaled, x)]


@lowers(onnx.PReluOp)
def prelu(b: CoreBuilder, op: onnx.PReluOp) -> Results:
    x = op.X
    _, slope = b.broadcast_all([x, op.slope], op.Y.type)
    return [b.select(b.compare("lt", x, b.splat(0, x)), b.binary("mul", x, slope), x)]


@lowers(onnx.ThresholdedReluOp)
def thresholded_relu(b: CoreBuilder, op: onnx.ThresholdedReluOp) -> Results:
    x = op.X
    above = b.compare("gt", x, b.splat(_float(op, "alpha"), x))
    return [b.select(above, x, b.splat(0, x))]


def _elu(b: CoreBuilder, x: SSAValue, alpha: float) -> SSAValue:
    """alpha * (exp(x) - 1) where x < 0, else x."""
    negative = b.binary("mul", b.binary("sub", b.unary("exp", x), b.splat(1, x)), b.splat(alpha, x))
    return b.select(b.compare("lt", x, b.splat(0, x)), negative, x)


@lowers(onnx.EluOp)
def elu(b: CoreBuilder, op: onnx.EluOp) -> Results:
    return [_elu(b, op.X, _float(op, "alpha"))]


@lowers(onnx.SeluOp)
def selu(b: CoreBuilder, op: onnx.SeluOp) -> Results:
    x = op.X
    inner = _elu(b, x, _float(op, "alpha"))
    return [b.binary("mul", inner, b.splat(_float(op, "gamma"), x))]


@lowers(onnx.CeluOp)
def celu(b: CoreBuilder, op: onnx.CeluOp) -> Results:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    x, alpha = op.X, _float(op, "alpha")
    inner = b.binary("div", x, b.splat(alpha, x))
    neg = b.binary("mul", b.binary("sub", b.unary("exp", inner), b.splat(1, x)), b.splat(alpha, x))
    zero = b.splat(0, x)
    return [b.binary("add", b.binary("max", x, zero), b.binary("min", neg, zero))]


def _hard_sigmoid(b: CoreBuilder, x: SSAValue, alpha: float, beta: float) -> SSAValue:
    linear = b.binary("add", b.binary("mul", x, b.splat(alpha, x)), b.splat(beta, x))
    return b.binary("max", b.binary("min", linear, b.splat(1, x)), b.splat(0, x))


@lowers(onnx.HardSigmoidOp)
def hard_sigmoid(b: CoreBuilder, op: onnx.HardSigmoidOp) -> Results:
    return [_hard_sigmoid(b, op.X, _float(op, "alpha"), _float(op, "beta"))]


@lowers(onnx.HardSwishOp)
def hard_swish(b: CoreBuilder, op: onnx.HardSwishOp) -> Results:
    return [b.binary("mul", op.X, _hard_sigmoid(b, op.X, 1 / 6, 0.5))]


def _softplus(b: CoreBuilder, x: SSAValue) -> SSAValue:
    """log(1 + exp(x)), computed as max(x, 0) + log(1 + exp(-|x|)) to stay finite."""
    zero = b.splat(0, x)
    tail = b.unary(
        "log", b.binary("add", b.splat(1, x), b.unary("exp", b.unary("neg", b.unary("abs", x))))
    )
    return b.binary("add", b.binary("max", x, zero), tail)


@lowers(onnx.SoftplusOp)
def softplus(b: CoreBuilder, op: onnx.SoftplusOp) -> Results:
    return [_softplus(b, op.X)]


@lowers(onnx.SoftsignOp)
def softsign(b: CoreBuilder, op: onnx.SoftsignOp) -> Results:
    x = op.input
    return [b.binary("div", x, b.binary("add", b.splat(1, x), b.unary("abs", x)))]


@lowers(onnx.MishOp)
def mish(b: CoreBuilder, op: onnx.MishOp) -> Results:
    return [b.binary("mul", op.X, b.unary("tanh", _softplus(b, op.X)))]


@lowers(onnx.SwishOp)
def swish(b: CoreBuilder, op: onnx.SwishOp) -> Results:
    x = op.X
    scaled = b.binary("mul", x, b.splat(_float(op, "alpha"), x))
    return [b.binary("mul", x, b.unary("sigmoid", scaled))]


@lowers(onnx.GeluOp)
def gelu(b: CoreBuilder, op: onnx.GeluOp) -> Results:
    x = op.X
    half = b.binary("mul", x, b.splat(0.5, x))
    if op.attr("approximate") == "tanh":
        cube = b.binary("mul", b.binary("mul", x, x), x)
        inner = b.binary("add", x, b.binary("mul", cube, b.splat(0.044715, x)))
        inner = b.binary("mul", inner, b.splat(float(np.sqrt(2 / np.pi)), x))
        return [b.binary("mul", half, b.binary("add", b.splat(1, x), b.unary("tanh", inner)))]
    erf = b.unary("erf", b.binary("mul", x, b.splat(float(1 / np.sqrt(2)), x)))
    return [b.binary("mul", half, b.binary("add", b.splat(1, x), erf))]


@lowers(onnx.ClipOp)
def clip(b: CoreBuilder, op: onnx.ClipOp) -> Results:
    out = op.input
    if op.min is not None:
        _, low = b.broadcast_all([op.input, op.min], op.input.type)
        out = b.binary("max", out, low)
    if op.max is not None:
        _, high = b.broadcast_all([op.input, op.max], op.input.type)
        out = b.binary("min", out, high)
    return [out]


@lowers(onnx.ShrinkOp)
def shrink(b: CoreBuilder, op: onnx.ShrinkOp) -> Results:
    x, lambd, bias = op.input, _float(op, "lambd"), _float(op, "bias")
    below = b.compare("lt", x, b.splat(-lambd, x))
    above = b.compare("gt", x, b.splat(lambd, x))
    zero = b.splat(0, x)
    plus = b.binary("add", x, b.splat(bias, x))
    minus = b.binary("sub", x, b.splat(bias, x))
    return [b.select(below, plus, b.select(above, minus, zero))]


# ---- constants --------------------------------------------------------------------------


@lowers(onnx.ConstantOp)
def constant(b: CoreBuilder, op: onnx.ConstantOp) -> Results:
    value = op.value
    if value is not None:  # dense, resource or string-tensor data
        new = core.ConstantOp.create(properties={"value": value}, result_types=[op.output.type])
        return [b.insert(new).results[0]]
    out_element = element_of(op.output.type)
    for key, element in (
        ("value_float", f32), ("value_floats", f32), ("value_int", i64), ("value_ints", i64),
    ):  # fmt: skip
        if key in op.properties:
            array = np.asarray(op.attr(key), dtype=numpy_dtype(element))
            return [b.constant(array.astype(numpy_dtype(out_element)))]
    for key in ("value_string", "value_strings"):
        if key in op.properties:
            return [b.constant(np.asarray(op.attr(key), dtype=object))]
    raise LoweringError("sparse constants have no core form")
