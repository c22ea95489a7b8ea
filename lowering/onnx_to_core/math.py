"""Elementwise ONNX ops → core: arithmetic, comparisons, casts, activations, constants.

ONNX broadcasts implicitly; core does not, so every binary op first brings
its operands to the result's shape with `CoreBuilder.broadcast_all`.
Activations are compositions of core elementwise ops.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import Operation, SSAValue

from rung.dialects.onnx import OnnxOp, StringTensorAttr

from .builder import CoreBuilder, LoweringError, element_of, numpy_dtype
from .registry import Results, lowers


def _inputs(op: Operation) -> list[SSAValue]:
    assert isinstance(op, OnnxOp)
    return [v for v in op.onnx_inputs() if v is not None]


def _out(op: Operation) -> SSAValue:
    return op.results[0]


# ---- arithmetic and logic ---------------------------------------------------------------

_BINARY = {
    "Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div",
    "And": "and", "Or": "or", "Xor": "xor",
    "BitwiseAnd": "bitwise_and", "BitwiseOr": "bitwise_or", "BitwiseXor": "bitwise_xor",
}  # fmt: skip


@lowers(*_BINARY)
def binary(b: CoreBuilder, op: Operation) -> Results:
    lhs, rhs = b.broadcast_all(_inputs(op), _out(op).type)
    return [b.binary(_BINARY[op.name.split(".")[-1]], lhs, rhs)]


@lowers("Pow")
def power(b: CoreBuilder, op: Operation) -> Results:
    base, exponent = _inputs(op)
    (base,) = b.broadcast_all([base], _out(op).type)
    (exponent,) = b.broadcast_all([exponent], _out(op).type)
    return [b.binary("pow", base, exponent)]


@lowers("Mod")
def modulo(b: CoreBuilder, op: Operation) -> Results:
    assert isinstance(op, OnnxOp)
    lhs, rhs = b.broadcast_all(_inputs(op), _out(op).type)
    return [b.binary("rem" if op.attr("fmod") else "mod", lhs, rhs)]


@lowers("BitShift")
def bit_shift(b: CoreBuilder, op: Operation) -> Results:
    assert isinstance(op, OnnxOp)
    lhs, rhs = b.broadcast_all(_inputs(op), _out(op).type)
    fn = "shift_left" if op.attr("direction") == "LEFT" else "shift_right"
    return [b.binary(fn, lhs, rhs)]


_VARIADIC = {"Max": "max", "Min": "min", "Sum": "add"}


@lowers("Max", "Min", "Sum")
def variadic(b: CoreBuilder, op: Operation) -> Results:
    values = b.broadcast_all(_inputs(op), _out(op).type)
    fn = _VARIADIC[op.name.split(".")[-1]]
    acc = values[0]
    for v in values[1:]:
        acc = b.binary(fn, acc, v)
    return [acc]


@lowers("Mean")
def mean(b: CoreBuilder, op: Operation) -> Results:
    values = b.broadcast_all(_inputs(op), _out(op).type)
    acc = values[0]
    for v in values[1:]:
        acc = b.binary("add", acc, v)
    return [b.binary("div", acc, b.splat(len(values), acc))]


_COMPARE = {
    "Equal": "eq", "Less": "lt", "LessOrEqual": "le", "Greater": "gt", "GreaterOrEqual": "ge",
}  # fmt: skip


@lowers(*_COMPARE)
def compare(b: CoreBuilder, op: Operation) -> Results:
    a, c = _inputs(op)
    shape_type = _out(op).type
    a, c = (b.broadcast_all([v], _with_shape_of(shape_type, v))[0] for v in (a, c))
    return [b.compare(_COMPARE[op.name.split(".")[-1]], a, c)]


def _with_shape_of(shape_type: object, like: SSAValue) -> object:
    from .builder import shape_of_type, tensor

    shape = shape_of_type(shape_type)  # type: ignore[arg-type]
    if shape is None:
        raise LoweringError("needs a ranked result")
    return tensor(element_of(like.type), shape)


@lowers("Where")
def where(b: CoreBuilder, op: Operation) -> Results:
    cond, x, y = _inputs(op)
    out = _out(op).type
    (cond,) = b.broadcast_all([cond], _with_shape_of(out, cond))
    x, y = b.broadcast_all([x, y], out)
    return [b.select(cond, x, y)]


# ---- unary --------------------------------------------------------------------------

_UNARY = {
    "Abs": "abs", "Neg": "neg", "Exp": "exp", "Log": "log", "Sqrt": "sqrt",
    "Reciprocal": "reciprocal", "Sin": "sin", "Cos": "cos", "Tan": "tan", "Asin": "asin",
    "Acos": "acos", "Atan": "atan", "Sinh": "sinh", "Cosh": "cosh", "Tanh": "tanh",
    "Asinh": "asinh", "Acosh": "acosh", "Atanh": "atanh", "Erf": "erf", "Sigmoid": "sigmoid",
    "Floor": "floor", "Ceil": "ceil", "Round": "round", "Sign": "sign", "Not": "not",
    "BitwiseNot": "bitwise_not", "IsNaN": "isnan",
}  # fmt: skip


@lowers(*_UNARY)
def unary(b: CoreBuilder, op: Operation) -> Results:
    (x,) = _inputs(op)
    return [b.unary(_UNARY[op.name.split(".")[-1]], x, _out(op).type)]


@lowers("IsInf")
def is_inf(b: CoreBuilder, op: Operation) -> Results:
    assert isinstance(op, OnnxOp)
    (x,) = _inputs(op)
    pos, neg = op.attr("detect_positive"), op.attr("detect_negative")
    fn = {(1, 1): "isinf", (1, 0): "isposinf", (0, 1): "isneginf"}.get((pos, neg))
    if fn is None:
        return [b.compare("lt", x, x)]  # detects nothing: x < x is always false
    return [b.unary(fn, x, _out(op).type)]


@lowers("Identity")
def identity(b: CoreBuilder, op: Operation) -> Results:
    return [_inputs(op)[0]]


@lowers("Cast")
def cast(b: CoreBuilder, op: Operation) -> Results:
    assert isinstance(op, OnnxOp)
    (x,) = _inputs(op)
    return [b.cast(x, element_of(_out(op).type), saturate=bool(op.attr("saturate")))]


@lowers("CastLike")
def cast_like(b: CoreBuilder, op: Operation) -> Results:
    assert isinstance(op, OnnxOp)
    x, like = _inputs(op)
    return [b.cast(x, element_of(like.type), saturate=bool(op.attr("saturate")))]


# ---- activations ------------------------------------------------------------------------


def _scalar(b: CoreBuilder, value: float, like: SSAValue) -> SSAValue:
    return b.splat(value, like)


@lowers("Relu")
def relu(b: CoreBuilder, op: Operation) -> Results:
    (x,) = _inputs(op)
    return [b.binary("max", x, _scalar(b, 0, x))]


@lowers("LeakyRelu")
def leaky_relu(b: CoreBuilder, op: Operation) -> Results:
    assert isinstance(op, OnnxOp)
    (x,) = _inputs(op)
    scaled = b.binary("mul", x, _scalar(b, op.attr("alpha"), x))
    return [b.select(b.compare("lt", x, _scalar(b, 0, x)), scaled, x)]


@lowers("PRelu")
def prelu(b: CoreBuilder, op: Operation) -> Results:
    x, slope = _inputs(op)
    (slope,) = b.broadcast_all([slope], _out(op).type)
    return [b.select(b.compare("lt", x, _scalar(b, 0, x)), b.binary("mul", x, slope), x)]


@lowers("ThresholdedRelu")
def thresholded_relu(b: CoreBuilder, op: Operation) -> Results:
    assert isinstance(op, OnnxOp)
    (x,) = _inputs(op)
    above = b.compare("gt", x, _scalar(b, op.attr("alpha"), x))
    return [b.select(above, x, _scalar(b, 0, x))]


def _elu_core(b: CoreBuilder, x: SSAValue, alpha: float) -> SSAValue:
    """alpha * (exp(x) - 1) where x < 0, else x."""
    negative = b.binary(
        "mul", b.binary("sub", b.unary("exp", x), _scalar(b, 1, x)), _scalar(b, alpha, x)
    )
    return b.select(b.compare("lt", x, _scalar(b, 0, x)), negative, x)


@lowers("Elu")
def elu(b: CoreBuilder, op: Operation) -> Results:
    assert isinstance(op, OnnxOp)
    (x,) = _inputs(op)
    return [_elu_core(b, x, op.attr("alpha"))]  # type: ignore[arg-type]


@lowers("Selu")
def selu(b: CoreBuilder, op: Operation) -> Results:
    assert isinstance(op, OnnxOp)
    (x,) = _inputs(op)
    inner = _elu_core(b, x, op.attr("alpha"))  # type: ignore[arg-type]
    return [b.binary("mul", inner, _scalar(b, op.attr("gamma"), x))]  # type: ignore[arg-type]


@lowers("Celu")
def celu(b: CoreBuilder, op: Operation) -> Results:
    assert isinstance(op, OnnxOp)
    (x,) = _inputs(op)
    alpha = op.attr("alpha")
    # max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
    inner = b.binary("div", x, _scalar(b, alpha, x))  # type: ignore[arg-type]
    neg = b.binary(
        "mul",
        b.binary("sub", b.unary("exp", inner), _scalar(b, 1, x)),
        _scalar(b, alpha, x),  # type: ignore[arg-type]
    )
    zero = _scalar(b, 0, x)
    return [b.binary("add", b.binary("max", x, zero), b.binary("min", neg, zero))]


def _hard_sigmoid(b: CoreBuilder, x: SSAValue, alpha: float, beta: float) -> SSAValue:
    linear = b.binary("add", b.binary("mul", x, _scalar(b, alpha, x)), _scalar(b, beta, x))
    return b.binary("max", b.binary("min", linear, _scalar(b, 1, x)), _scalar(b, 0, x))


@lowers("HardSigmoid")
def hard_sigmoid(b: CoreBuilder, op: Operation) -> Results:
    assert isinstance(op, OnnxOp)
    (x,) = _inputs(op)
    return [_hard_sigmoid(b, x, op.attr("alpha"), op.attr("beta"))]  # type: ignore[arg-type]


@lowers("HardSwish")
def hard_swish(b: CoreBuilder, op: Operation) -> Results:
    (x,) = _inputs(op)
    return [b.binary("mul", x, _hard_sigmoid(b, x, 1 / 6, 0.5))]


def _softplus(b: CoreBuilder, x: SSAValue) -> SSAValue:
    """log(1 + exp(x)), computed as max(x, 0) + log(1 + exp(-|x|)) to stay finite."""
    zero = _scalar(b, 0, x)
    tail = b.unary(
        "log", b.binary("add", _scalar(b, 1, x), b.unary("exp", b.unary("neg", b.unary("abs", x))))
    )
    return b.binary("add", b.binary("max", x, zero), tail)


@lowers("Softplus")
def softplus(b: CoreBuilder, op: Operation) -> Results:
    (x,) = _inputs(op)
    return [_softplus(b, x)]


@lowers("Softsign")
def softsign(b: CoreBuilder, op: Operation) -> Results:
    (x,) = _inputs(op)
    return [b.binary("div", x, b.binary("add", _scalar(b, 1, x), b.unary("abs", x)))]


@lowers("Mish")
def mish(b: CoreBuilder, op: Operation) -> Results:
    (x,) = _inputs(op)
    return [b.binary("mul", x, b.unary("tanh", _softplus(b, x)))]


@lowers("Swish")
def swish(b: CoreBuilder, op: Operation) -> Results:
    assert isinstance(op, OnnxOp)
    (x,) = _inputs(op)
    scaled = b.binary("mul", x, _scalar(b, op.attr("alpha"), x))  # type: ignore[arg-type]
    return [b.binary("mul", x, b.unary("sigmoid", scaled))]


@lowers("Gelu")
def gelu(b: CoreBuilder, op: Operation) -> Results:
    assert isinstance(op, OnnxOp)
    (x,) = _inputs(op)
    half = b.binary("mul", x, _scalar(b, 0.5, x))
    if op.attr("approximate") == "tanh":
        cube = b.binary("mul", b.binary("mul", x, x), x)
        inner = b.binary("add", x, b.binary("mul", cube, _scalar(b, 0.044715, x)))
        inner = b.binary("mul", inner, _scalar(b, float(np.sqrt(2 / np.pi)), x))
        return [b.binary("mul", half, b.binary("add", _scalar(b, 1, x), b.unary("tanh", inner)))]
    erf = b.unary("erf", b.binary("mul", x, _scalar(b, float(1 / np.sqrt(2)), x)))
    return [b.binary("mul", half, b.binary("add", _scalar(b, 1, x), erf))]


@lowers("Clip")
def clip(b: CoreBuilder, op: Operation) -> Results:
    assert isinstance(op, OnnxOp)
    x, low, high = (op.onnx_inputs() + [None, None])[:3]
    assert x is not None
    out = x
    if low is not None:
        (low,) = b.broadcast_all([low], x.type)
        out = b.binary("max", out, low)
    if high is not None:
        (high,) = b.broadcast_all([high], x.type)
        out = b.binary("min", out, high)
    return [out]


@lowers("Shrink")
def shrink(b: CoreBuilder, op: Operation) -> Results:
    assert isinstance(op, OnnxOp)
    (x,) = _inputs(op)
    lambd, bias = op.attr("lambd"), op.attr("bias")
    below = b.compare("lt", x, _scalar(b, -lambd, x))  # type: ignore[operator]
    above = b.compare("gt", x, _scalar(b, lambd, x))  # type: ignore[arg-type]
    zero = _scalar(b, 0, x)
    plus = b.binary("add", x, _scalar(b, bias, x))  # type: ignore[arg-type]
    minus = b.binary("sub", x, _scalar(b, bias, x))  # type: ignore[arg-type]
    return [b.select(below, plus, b.select(above, minus, zero))]


# ---- constants --------------------------------------------------------------------------


@lowers("Constant")
def constant(b: CoreBuilder, op: Operation) -> Results:
    assert isinstance(op, OnnxOp)
    attrs = op.onnx_attributes()
    if "value" in attrs and not isinstance(attrs["value"], StringTensorAttr):
        from rung.dialects import core

        new = core.ConstantOp.create(
            properties={"value": attrs["value"]}, result_types=[_out(op).type]
        )
        return [b.insert(new).results[0]]
    out_type = _out(op).type
    for key, dtype in (
        ("value_float", np.float32), ("value_floats", np.float32),
        ("value_int", np.int64), ("value_ints", np.int64),
    ):  # fmt: skip
        if key in attrs:
            value = np.asarray(op.attr(key), dtype=dtype)
            return [b.constant(value.astype(numpy_dtype(element_of(out_type))))]
    raise LoweringError("string and sparse constants have no core form")
