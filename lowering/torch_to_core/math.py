"""Elementwise ATen ops → core: arithmetic, comparisons, logic, rounding and activations.

torch broadcasts and promotes types implicitly; core does neither. The op's
result type already carries torch's type promotion, so arithmetic casts every
operand to the result's element type (an integer tensor plus 0.5, or divided
by another, is a float computation) and broadcasts it to the result's shape.
Comparisons give `bool`, so their operands meet in a common type instead
(`kit.promoted`), a float Scalar lifting an integer tensor to float32 as
torch's promotion does.

Most ops are one core op of their operands: they are rules (`RULES`). The
handlers cover what a rule cannot say: `alpha`, rounding modes, operands that
must keep their type (`isnan`), and what core composes from several ops
(`expm1`, `trunc`, the activations).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects.builtin import AnyFloat
from xdsl.ir import Attribute, Operation, SSAValue

from rung.dialects.dtypes import f32, i1, i64
from rung.dialects.torch import TorchOp
from rung.dialects.torch import generated_ops as aten
from rung.lowering.kit import (
    CoreBuilder,
    Elementwise,
    LoweringError,
    element_of,
    install,
    promoted,
    ranked_shape,
    tensor,
)

from .registry import TABLE, Results, lowers


def _read(op: Operation, name: str) -> object:
    """A torch op's argument by schema name, as rules read them."""
    assert isinstance(op, TorchOp)
    return op.arg(name)


# ---- one core op of the operands ---------------------------------------------------------

_UNARY: dict[type[TorchOp], str] = {
    aten.AtenAbsOp: "abs", aten.AtenNegOp: "neg", aten.AtenReciprocalOp: "reciprocal",
    aten.AtenSqrtOp: "sqrt", aten.AtenRsqrtOp: "rsqrt", aten.AtenExpOp: "exp",
    aten.AtenLogOp: "log", aten.AtenSinOp: "sin", aten.AtenCosOp: "cos", aten.AtenTanOp: "tan",
    aten.AtenAsinOp: "asin", aten.AtenAcosOp: "acos", aten.AtenAtanOp: "atan",
    aten.AtenSinhOp: "sinh", aten.AtenCoshOp: "cosh", aten.AtenTanhOp: "tanh",
    aten.AtenAsinhOp: "asinh", aten.AtenAcoshOp: "acosh", aten.AtenAtanhOp: "atanh",
    aten.AtenErfOp: "erf", aten.AtenSigmoidOp: "sigmoid",
    aten.AtenLogicalNotOp: "not", aten.AtenBitwiseNotOp: "bitwise_not",
}  # fmt: skip
"""`fn(self)`; the operand is cast to the result's type first (`exp` of an int is a float,
`logical_not` of a float reads it as a bool)."""

_BINARY: dict[type[TorchOp], str] = {
    aten.AtenMulTensorOp: "mul", aten.AtenMulScalarOp: "mul",
    aten.AtenDivTensorOp: "div", aten.AtenDivScalarOp: "div",
    aten.AtenRemainderTensorOp: "mod", aten.AtenRemainderScalarOp: "mod",
    aten.AtenFmodTensorOp: "rem", aten.AtenFmodScalarOp: "rem",
    aten.AtenMaximumOp: "max", aten.AtenMinimumOp: "min", aten.AtenAtan2Op: "atan2",
    aten.AtenLogicalAndOp: "and", aten.AtenLogicalOrOp: "or", aten.AtenLogicalXorOp: "xor",
    aten.AtenBitwiseAndTensorOp: "bitwise_and", aten.AtenBitwiseAndScalarOp: "bitwise_and",
    aten.AtenBitwiseOrTensorOp: "bitwise_or", aten.AtenBitwiseOrScalarOp: "bitwise_or",
    aten.AtenBitwiseXorTensorOp: "bitwise_xor", aten.AtenBitwiseXorScalarOp: "bitwise_xor",
}  # fmt: skip
"""`fn(self, other)` in the result's type: true division of ints is a float one, and
`logical_*` read their operands as bools (`remainder` is core's floor `mod`, `fmod` its `rem`)."""

_POW: tuple[type[TorchOp], ...] = (
    aten.AtenPowTensorTensorOp,
    aten.AtenPowTensorScalarOp,
    aten.AtenPowScalarOp,
)

_COMPARE_TENSOR: dict[type[TorchOp], str] = {
    aten.AtenEqTensorOp: "eq", aten.AtenNeTensorOp: "ne", aten.AtenLtTensorOp: "lt",
    aten.AtenLeTensorOp: "le", aten.AtenGtTensorOp: "gt", aten.AtenGeTensorOp: "ge",
}  # fmt: skip

RULES: tuple[Elementwise, ...] = (
    *(Elementwise(source, "unary", fn, ("self",)) for source, fn in _UNARY.items()),
    *(Elementwise(source, "binary", fn, ("self", "other")) for source, fn in _BINARY.items()),
    *(Elementwise(source, "binary", "pow", ("self", "exponent")) for source in _POW),
    *(
        Elementwise(source, "compare", pred, ("self", "other"))
        for source, pred in _COMPARE_TENSOR.items()
    ),
)
"""ATen ops that are one core elementwise op of their operands (`kit.rules`)."""

install(TABLE, RULES, _read)


# ---- operands --------------------------------------------------------------------------


def _is_float(element: Attribute) -> bool:
    return isinstance(element, AnyFloat)


def _value(b: CoreBuilder, v: object, element: Attribute) -> SSAValue:
    """A tensor or a Scalar argument (a number, or a symbolic size) in `element`."""
    if isinstance(v, SSAValue):
        return b.cast(v, element)
    if isinstance(v, bool | int | float):
        return b.scalar(v, element)
    raise LoweringError(f"operand {v!r} is not a tensor or a number")


def _operands(
    b: CoreBuilder, op: Operation, values: Sequence[object], element: Attribute | None = None
) -> list[SSAValue]:
    """`values` in one element type (the result's unless given), broadcast to the result's shape."""
    result = op.results[0].type
    element = element or element_of(result)
    cast = [_value(b, v, element) for v in values]
    return b.broadcast_all(cast, tensor(element, ranked_shape(result)))


def _times(b: CoreBuilder, x: SSAValue, factor: float) -> SSAValue:
    """`x * factor`; nothing to do for 1 (elu's default scales)."""
    return x if factor == 1 else b.binary("mul", x, b.splat(factor, x))


# ---- arithmetic with a scale or a rounding mode -----------------------------------------

_ADD_SUB: dict[type[TorchOp], str] = {
    aten.AtenAddTensorOp: "add", aten.AtenAddScalarOp: "add",
    aten.AtenSubTensorOp: "sub", aten.AtenSubScalarOp: "sub",
}  # fmt: skip


def _scaled(b: CoreBuilder, y: SSAValue, alpha: object) -> SSAValue:
    """`alpha * y`, the scale of add/sub's second operand (nothing to do for 1)."""
    if not isinstance(alpha, SSAValue) and alpha == 1:
        return y
    factor = _value(b, alpha, element_of(y.type))
    return b.binary("mul", y, b.broadcast_to(factor, y.type, like=y))


def _add_or_sub(b: CoreBuilder, fn: str, x: SSAValue, y: SSAValue) -> SSAValue:
    if element_of(x.type) == i1:
        if fn == "sub":
            raise LoweringError("subtracting bool tensors is not defined")
        fn = "or"  # torch adds bools as a logical or
    return b.binary(fn, x, y)


@lowers(*_ADD_SUB)
def add_sub(b: CoreBuilder, op: aten.AtenAddTensorOp) -> Results:
    """`self ± alpha * other`."""
    x, y = _operands(b, op, [op.arg("self"), op.arg("other")])
    return [_add_or_sub(b, _ADD_SUB[type(op)], x, _scaled(b, y, op.arg("alpha")))]


@lowers(aten.AtenRsubScalarOp)
def rsub(b: CoreBuilder, op: aten.AtenRsubScalarOp) -> Results:
    """`other - alpha * self`."""
    x, y = _operands(b, op, [op.arg("self"), op.arg("other")])
    return [_add_or_sub(b, "sub", y, _scaled(b, x, op.arg("alpha")))]


def _trunc(b: CoreBuilder, x: SSAValue) -> SSAValue:
    """Rounding toward zero, which core spells as floor or ceil by the sign."""
    negative = b.compare("lt", x, b.splat(0, x))
    return b.select(negative, b.unary("ceil", x), b.unary("floor", x))


def _floor_div(b: CoreBuilder, x: SSAValue, y: SSAValue) -> SSAValue:
    """`x // y` as torch computes it.

    For integers `x - mod(x, y)` is an exact multiple of `y`, so core's
    truncating division gives the floor. For floats torch divides `x - fmod(x, y)`
    and rounds that near-integer, so that `1 // 0.1` is 9 (the quotient is just
    below 10) where `floor(1 / 0.1)` would give 10; dividing by zero gives inf.
    """
    if not _is_float(element_of(x.type)):
        return b.binary("div", b.binary("sub", x, b.binary("mod", x, y)), y)
    zero = b.splat(0, x)
    rem = b.binary("rem", x, y)
    div = b.binary("div", b.binary("sub", x, rem), y)
    signs_differ = b.binary("xor", b.compare("lt", y, zero), b.compare("lt", rem, zero))
    borrow = b.binary("and", b.compare("ne", rem, zero), signs_differ)
    div = b.select(borrow, b.binary("sub", div, b.splat(1, x)), div)
    floor = b.unary("floor", div)
    up = b.compare("gt", b.binary("sub", div, floor), b.splat(0.5, x))
    floor = b.select(up, b.binary("add", floor, b.splat(1, x)), floor)
    return b.select(b.compare("eq", y, zero), b.binary("div", x, y), floor)


@lowers(aten.AtenDivTensorModeOp, aten.AtenDivScalarModeOp)
def div_mode(b: CoreBuilder, op: aten.AtenDivTensorModeOp) -> Results:
    """Division rounded as `rounding_mode` says: None (true division), "trunc" or "floor"."""
    mode = op.arg("rounding_mode")
    x, y = _operands(b, op, [op.arg("self"), op.arg("other")])
    integer = not _is_float(element_of(x.type))
    if mode is None:
        return [b.binary("div", x, y)]
    if mode == "trunc":
        quotient = b.binary("div", x, y)  # core's integer division truncates already
        return [quotient if integer else _trunc(b, quotient)]
    if mode == "floor":
        return [_floor_div(b, x, y)]
    raise LoweringError(f"rounding_mode {mode!r} is not supported")


# ---- comparisons with a Scalar ----------------------------------------------------------

_COMPARE_SCALAR: dict[type[TorchOp], str] = {
    aten.AtenEqScalarOp: "eq", aten.AtenNeScalarOp: "ne", aten.AtenLtScalarOp: "lt",
    aten.AtenLeScalarOp: "le", aten.AtenGtScalarOp: "gt", aten.AtenGeScalarOp: "ge",
}  # fmt: skip


def _with_scalar(x: SSAValue, scalar: object) -> Attribute:
    """The type a tensor and a Scalar meet in: a float Scalar makes an integer tensor float32,
    an integer one makes a bool tensor int64 (torch's default types), else the tensor's."""
    if isinstance(scalar, SSAValue):
        return promoted([x, scalar])
    element = element_of(x.type)
    if isinstance(scalar, float) and not _is_float(element):
        return f32
    if isinstance(scalar, int) and not isinstance(scalar, bool) and element == i1:
        return i64
    return element


@lowers(*_COMPARE_SCALAR)
def compare_scalar(b: CoreBuilder, op: aten.AtenEqScalarOp) -> Results:
    """`self <pred> other`; `int_tensor > 0.5` compares in float, not against 0."""
    x, other = op.self_, op.arg("other")
    lhs, rhs = _operands(b, op, [x, other], _with_scalar(x, other))
    return [b.compare(_COMPARE_SCALAR[type(op)], lhs, rhs)]


# ---- functions core composes ------------------------------------------------------------

_ROUNDING: dict[type[TorchOp], str] = {
    aten.AtenFloorOp: "floor", aten.AtenCeilOp: "ceil",
    aten.AtenRoundOp: "round", aten.AtenTruncOp: "trunc",
}  # fmt: skip


@lowers(*_ROUNDING)
def rounding(b: CoreBuilder, op: aten.AtenFloorOp) -> Results:
    """floor, ceil, round (half to even, as torch) and trunc; integers are already whole."""
    (x,) = _operands(b, op, [op.self_])
    fn = _ROUNDING[type(op)]
    if not _is_float(element_of(x.type)):
        return [x]
    return [_trunc(b, x) if fn == "trunc" else b.unary(fn, x)]


@lowers(aten.AtenRoundDecimalsOp)
def round_decimals(b: CoreBuilder, op: aten.AtenRoundDecimalsOp) -> Results:
    """Half-to-even rounding to `decimals` places, computed as torch does: scaled by
    10**decimals (divided by 10**-decimals when negative), rounded, scaled back."""
    (x,) = _operands(b, op, [op.self_])
    if not _is_float(element_of(x.type)):
        return [x]
    decimals = op.arg("decimals")
    if not isinstance(decimals, int):
        raise LoweringError(f"decimals must be a number, got {decimals!r}")
    if decimals >= 0:
        scale = b.splat(10.0**decimals, x)
        return [b.binary("div", b.unary("round", b.binary("mul", x, scale)), scale)]
    scale = b.splat(10.0**-decimals, x)
    return [b.binary("mul", b.unary("round", b.binary("div", x, scale)), scale)]


@lowers(aten.AtenSignOp)
def sign(b: CoreBuilder, op: aten.AtenSignOp) -> Results:
    """-1, 0 or 1; torch's sign of NaN is 0, where core's keeps the NaN."""
    (x,) = _operands(b, op, [op.self_])
    signs = b.unary("sign", x)
    if not _is_float(element_of(x.type)):
        return [signs]
    return [b.select(b.compare("ne", x, x), b.splat(0, x), signs)]


@lowers(aten.AtenIsnanOp, aten.AtenIsinfOp)
def is_nan_or_inf(b: CoreBuilder, op: aten.AtenIsnanOp) -> Results:
    """A predicate of the operand in its own type (a rule would cast it to bool first)."""
    x = op.self_
    if not _is_float(element_of(x.type)):
        return [b.compare("ne", x, x)]  # integers are never NaN nor infinite
    fn = "isnan" if isinstance(op, aten.AtenIsnanOp) else "isinf"
    return [b.unary(fn, x, op.result.type)]


def _expm1(b: CoreBuilder, x: SSAValue) -> SSAValue:
    """`exp(x) - 1`, accurate near 0: Kahan's `(u - 1) * x / log(u)` with `u = exp(x)`.

    `exp(x) - 1` alone loses every digit of a tiny `x`; the quotient cancels the
    rounding error of `u`. Where `u` is 1, 0 or inf the quotient is not defined
    and `x`, `u - 1` (= -1) or inf is the answer.
    """
    u = b.unary("exp", x)
    um1 = b.binary("sub", u, b.splat(1, x))
    kahan = b.binary("div", b.binary("mul", um1, x), b.unary("log", u))
    out = b.select(b.compare("eq", um1, b.splat(-1, x)), um1, kahan)
    out = b.select(b.compare("eq", u, b.splat(1, x)), x, out)
    return b.select(b.unary("isposinf", u, tensor(i1, ranked_shape(u))), u, out)


def _log1p(b: CoreBuilder, x: SSAValue) -> SSAValue:
    """`log(1 + x)`, accurate near 0: Kahan's `log(u) * x / (u - 1)` with `u = 1 + x`."""
    u = b.binary("add", b.splat(1, x), x)
    kahan = b.binary(
        "div", b.binary("mul", b.unary("log", u), x), b.binary("sub", u, b.splat(1, x))
    )
    out = b.select(b.compare("eq", u, b.splat(1, x)), x, kahan)
    return b.select(b.unary("isposinf", u, tensor(i1, ranked_shape(u))), u, out)


@lowers(aten.AtenExpm1Op)
def expm1(b: CoreBuilder, op: aten.AtenExpm1Op) -> Results:
    (x,) = _operands(b, op, [op.self_])
    return [_expm1(b, x)]


@lowers(aten.AtenLog1pOp)
def log1p(b: CoreBuilder, op: aten.AtenLog1pOp) -> Results:
    (x,) = _operands(b, op, [op.self_])
    return [_log1p(b, x)]


_LOG_BASE: dict[type[TorchOp], float] = {aten.AtenLog2Op: 2.0, aten.AtenLog10Op: 10.0}


@lowers(*_LOG_BASE)
def log_base(b: CoreBuilder, op: aten.AtenLog2Op) -> Results:
    """`log(x) / log(base)`."""
    (x,) = _operands(b, op, [op.self_])
    scale = 1 / math.log(_LOG_BASE[type(op)])
    return [b.binary("mul", b.unary("log", x), b.splat(scale, x))]


# ---- selection ----------------------------------------------------------------------------


@lowers(aten.AtenWhereSelfOp, aten.AtenWhereScalarOtherOp)
def where(b: CoreBuilder, op: aten.AtenWhereSelfOp) -> Results:
    """`condition ? self : other`, the choices in the result's type, all three broadcast."""
    element = element_of(op.result.type)
    cond = _value(b, op.condition, i1)
    x, y = (_value(b, op.arg(name), element) for name in ("self", "other"))
    cond, x, y = b.broadcast_all([cond, x, y], op.result.type)
    return [b.select(cond, x, y)]


@lowers(aten.AtenMaskedFillScalarOp)
def masked_fill(b: CoreBuilder, op: aten.AtenMaskedFillScalarOp) -> Results:
    """`value` where `mask` holds, else `self`."""
    element = element_of(op.result.type)
    mask = _value(b, op.mask, i1)
    x, value = (_value(b, op.arg(name), element) for name in ("self", "value"))
    mask, value, x = b.broadcast_all([mask, value, x], op.result.type)
    return [b.select(mask, value, x)]


# ---- clamps and activations ---------------------------------------------------------------

_BOUNDS: dict[type[TorchOp], tuple[str | float | None, str | float | None]] = {
    aten.AtenClampOp: ("min", "max"),
    aten.AtenClampTensorOp: ("min", "max"),
    aten.AtenHardtanhOp: ("min_val", "max_val"),
    aten.AtenReluOp: (0, None),
    aten.AtenRelu6Op: (0, 6),
}
"""Where each clamp reads its bounds: argument names, or fixed numbers (None: unbounded)."""


@lowers(*_BOUNDS)
def clamp(b: CoreBuilder, op: aten.AtenClampOp) -> Results:
    """`min(max(self, low), high)`: a NaN stays NaN, and `low > high` gives `high`, as torch."""
    bounds = [op.arg(v) if isinstance(v, str) else v for v in _BOUNDS[type(op)]]
    present = [v for v in bounds if v is not None]
    x, *values = _operands(b, op, [op.arg("self"), *present])
    it = iter(values)
    low, high = (next(it) if v is not None else None for v in bounds)
    if low is not None:
        x = b.binary("max", x, low)
    if high is not None:
        x = b.binary("min", x, high)
    return [x]


def _float_operand(b: CoreBuilder, op: Operation) -> SSAValue:
    """An activation's input in the result's (float) type and shape."""
    assert isinstance(op, TorchOp)
    (x,) = _operands(b, op, [op.arg("self")])
    if not _is_float(element_of(x.type)):
        raise LoweringError(f"{op.name} of {element_of(x.type)} tensors is not defined")
    return x


def _number(op: TorchOp, name: str) -> float:
    """A Scalar argument an activation's formula is built with: a number when lowering."""
    value = op.arg(name)
    if isinstance(value, SSAValue) or not isinstance(value, int | float):
        raise LoweringError(f"{name} = {value!r}: only a number is supported")
    return float(value)


@lowers(aten.AtenLeakyReluOp)
def leaky_relu(b: CoreBuilder, op: aten.AtenLeakyReluOp) -> Results:
    """`x` where positive, else `negative_slope * x`."""
    x = _float_operand(b, op)
    scaled = _times(b, x, _number(op, "negative_slope"))
    return [b.select(b.compare("gt", x, b.splat(0, x)), x, scaled)]


@lowers(aten.AtenEluOp)
def elu(b: CoreBuilder, op: aten.AtenEluOp) -> Results:
    """`scale * x` where positive, else `scale * alpha * expm1(input_scale * x)`."""
    x = _float_operand(b, op)
    alpha, scale, input_scale = (_number(op, n) for n in ("alpha", "scale", "input_scale"))
    negative = _times(b, _expm1(b, _times(b, x, input_scale)), alpha * scale)
    positive = _times(b, x, scale)
    return [b.select(b.compare("gt", x, b.splat(0, x)), positive, negative)]


@lowers(aten.AtenGeluOp)
def gelu(b: CoreBuilder, op: aten.AtenGeluOp) -> Results:
    """`x/2 * (1 + erf(x/√2))`, or with `approximate="tanh"` its tanh approximation."""
    x = _float_operand(b, op)
    half = b.binary("mul", x, b.splat(0.5, x))
    approximate = op.arg("approximate")
    if approximate == "tanh":
        cube = b.binary("mul", b.binary("mul", x, x), x)
        inner = b.binary("add", x, b.binary("mul", cube, b.splat(0.044715, x)))
        inner = b.binary("mul", inner, b.splat(math.sqrt(2 / math.pi), x))
        curve = b.unary("tanh", inner)
    elif approximate == "none":
        curve = b.unary("erf", b.binary("mul", x, b.splat(math.sqrt(0.5), x)))
    else:
        raise LoweringError(f"approximate={approximate!r} is not supported")
    return [b.binary("mul", half, b.binary("add", b.splat(1, x), curve))]


@lowers(aten.AtenSiluOp)
def silu(b: CoreBuilder, op: aten.AtenSiluOp) -> Results:
    """`x * sigmoid(x)`."""
    x = _float_operand(b, op)
    return [b.binary("mul", x, b.unary("sigmoid", x))]


def _relu6_of_shifted(b: CoreBuilder, x: SSAValue) -> SSAValue:
    """`min(max(x + 3, 0), 6) / 6`: hardsigmoid, as torch computes it."""
    shifted = b.binary("add", x, b.splat(3, x))
    clamped = b.binary("min", b.binary("max", shifted, b.splat(0, x)), b.splat(6, x))
    return b.binary("div", clamped, b.splat(6, x))


@lowers(aten.AtenHardsigmoidOp)
def hardsigmoid(b: CoreBuilder, op: aten.AtenHardsigmoidOp) -> Results:
    return [_relu6_of_shifted(b, _float_operand(b, op))]


@lowers(aten.AtenHardswishOp)
def hardswish(b: CoreBuilder, op: aten.AtenHardswishOp) -> Results:
    """`x * hardsigmoid(x)`."""
    x = _float_operand(b, op)
    return [b.binary("mul", x, _relu6_of_shifted(b, x))]


__all__ = ["RULES"]
