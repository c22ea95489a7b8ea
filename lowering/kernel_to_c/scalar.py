"""Emitters of scalar arithmetic (`arith`, `math`, `kernel.remf`): one C expression each.

Each op becomes one local variable. Constants are not emitted at all: their
uses spell them inline. Half and narrower floats compute as float and round
back after each op; integers wrap through their unsigned type, as the IR
defines overflow and C does not.
"""

from __future__ import annotations

from collections.abc import Callable
from math import prod

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
)
from xdsl.ir import Attribute, Operation, SSAValue

from rung.dialects import kernel

from .bits import reinterpret
from .c_types import CodegenError, is_float, libm, rounded, scalar_type, sub_byte, unsigned_of
from .emitter import Emitter, add_emitter, emits

Expression = Callable[[Operation, list[str]], str]
"""The C expression of a scalar op's result, given the C expressions of its operands."""


def expression(*op_types: type[Operation]) -> Callable[[Expression], Expression]:
    """Register an op whose one result is a C expression of its operands.

    The result becomes a new local. A 2/4-bit integer result computes in a
    byte and is wrapped to its width here, after every op.
    """

    def register(fn: Expression) -> Expression:
        def emit_expression(e: Emitter, op: Operation) -> None:
            args = [e.value(v) for v in op.operands]
            result = op.results[0]
            expr = fn(op, args)
            if sub_byte(result.type) is not None:
                expr = rounded(result.type, expr)
            e.define(result, expr)

        for op_type in op_types:
            add_emitter(op_type, emit_expression)
        return fn

    return register


def _type(op: Operation) -> Attribute:
    return op.results[0].type


@emits(arith.ConstantOp)
def constant(e: Emitter, op: arith.ConstantOp) -> None:
    """Nothing to emit: `Emitter.value` writes the literal at each use."""
    if not isinstance(op.value, FloatAttr | IntegerAttr):
        raise CodegenError(f"unsupported constant {op.value}")


# ---- arithmetic -------------------------------------------------------------------------------

_FLOAT_BINARY = {arith.AddfOp: "+", arith.SubfOp: "-", arith.MulfOp: "*", arith.DivfOp: "/"}
_WRAPPING = {arith.AddiOp: "+", arith.SubiOp: "-", arith.MuliOp: "*"}
_BITWISE = {arith.AndIOp: "&", arith.OrIOp: "|", arith.XOrIOp: "^"}
_SIGNED_DIVISION = {arith.DivSIOp: "/", arith.RemSIOp: "%"}
_UNSIGNED_DIVISION = {arith.DivUIOp: "/", arith.RemUIOp: "%"}
_ROUNDED_DIVISION = {arith.FloorDivSIOp: "rung_floordiv", arith.CeilDivSIOp: "rung_ceildiv"}
_INT_EXTREMA = {arith.MaxSIOp: ">", arith.MaxUIOp: ">", arith.MinSIOp: "<", arith.MinUIOp: "<"}
_FLOAT_EXTREMA = {arith.MaxnumfOp: "fmax", arith.MinnumfOp: "fmin"}
_NAN_EXTREMA = {arith.MaximumfOp: ">", arith.MinimumfOp: "<"}


@expression(*_FLOAT_BINARY)
def float_binary(op: Operation, args: list[str]) -> str:
    return rounded(_type(op), f"{args[0]} {_FLOAT_BINARY[type(op)]} {args[1]}")


@expression(*_WRAPPING)
def wrapping(op: Operation, args: list[str]) -> str:
    """Index arithmetic is plain `int64_t`; integer arithmetic wraps through unsigned."""
    t, sym = _type(op), _WRAPPING[type(op)]
    if isinstance(t, IndexType):
        return f"{args[0]} {sym} {args[1]}"
    ut, ct = unsigned_of(t), scalar_type(t)
    return f"({ct})(({ut}){args[0]} {sym} ({ut}){args[1]})"


@expression(*_BITWISE)
def bitwise(op: Operation, args: list[str]) -> str:
    return f"({scalar_type(_type(op))})({args[0]} {_BITWISE[type(op)]} {args[1]})"


@expression(*_SIGNED_DIVISION)
def signed_division(op: Operation, args: list[str]) -> str:
    return f"{args[0]} {_SIGNED_DIVISION[type(op)]} {args[1]}"


@expression(*_UNSIGNED_DIVISION)
def unsigned_division(op: Operation, args: list[str]) -> str:
    t = _type(op)
    ut = unsigned_of(t)
    sym = _UNSIGNED_DIVISION[type(op)]
    return f"({scalar_type(t)})(({ut}){args[0]} {sym} ({ut}){args[1]})"


@expression(*_ROUNDED_DIVISION)
def rounded_division(op: Operation, args: list[str]) -> str:
    return f"{_ROUNDED_DIVISION[type(op)]}({args[0]}, {args[1]})"


@expression(*_INT_EXTREMA)
def int_extremum(op: Operation, args: list[str]) -> str:
    a, b = args
    return f"({a} {_INT_EXTREMA[type(op)]} {b} ? {a} : {b})"


@expression(*_FLOAT_EXTREMA)
def float_extremum(op: Operation, args: list[str]) -> str:
    """`fmax`/`fmin`: a NaN operand gives the other one."""
    return f"{libm(_FLOAT_EXTREMA[type(op)], _type(op))}({args[0]}, {args[1]})"


@expression(*_NAN_EXTREMA)
def nan_extremum(op: Operation, args: list[str]) -> str:
    """`maximumf`/`minimumf`: a NaN operand gives NaN.

    A clamp against a constant bound (ReLU, ReLU6, HardSwish, Clip) is a mask blend
    (`rung_maximumf`): gcc folds the bound, then keeps the `?:` as a branch (a
    compare that might trap is not speculated), and the loop stays scalar. The max
    of two run-time values (a max pool, Max) keeps the `?:`, and so does a clamp of
    values read with a stride along the innermost loop (a ReLU fused into a strided
    max pool): gcc does not vectorize those loops, and in scalar code the branch is
    faster than the blend."""
    a, b = args
    if (
        scalar_type(_type(op)) == "float"
        and any(_constant_bound(v) for v in op.operands)
        and _reads_rows(op)
    ):
        return f"{_MASKED_EXTREMA[type(op)]}({a}, {b})"
    return f"(({a} != {a} || {a} {_NAN_EXTREMA[type(op)]} {b}) ? {a} : {b})"


def _reads_rows(op: Operation) -> bool:
    """Whether every load `op` is computed from reads its innermost loop's last index at
    unit stride (or not at all): a loop gcc can vectorize."""
    loop = op.parent_op()
    if not isinstance(loop, kernel.LoopOp) or not loop.ivs:
        return False
    row = loop.ivs[-1]
    seen: set[Operation] = set()
    todo = [v.owner for v in op.operands if isinstance(v.owner, Operation)]
    while todo:
        owner = todo.pop()
        if owner in seen or owner.parent_op() is not loop or len(seen) > 64:
            continue
        seen.add(owner)
        if isinstance(owner, kernel.LoadOp):
            if owner.indices and _stride(owner.indices[-1], row, 16) not in (0, 1):
                return False
            continue
        todo.extend(v.owner for v in owner.operands if isinstance(v.owner, Operation))
    return True


def _stride(index: SSAValue, iv: SSAValue, budget: int) -> int | None:
    """How far `index` moves per step of `iv`: 0, 1, or None (anything else, or unknown)."""
    if index is iv:
        return 1
    owner = index.owner
    if not isinstance(owner, Operation) or isinstance(owner, kernel.LoopOp):
        return 0
    if budget == 0:
        return None
    strides = [_stride(v, iv, budget - 1) for v in owner.operands]
    if all(s == 0 for s in strides):
        return 0
    if isinstance(owner, arith.AddiOp) and set(strides) == {0, 1}:
        return 1
    if isinstance(owner, arith.SubiOp) and strides == [1, 0]:
        return 1
    return None


def _constant_bound(value: SSAValue) -> bool:
    """A compile-time constant: a literal, or a load from a constant buffer."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp):
        return True
    return _constant_buffer(value) is not None


def _constant_buffer(value: SSAValue) -> kernel.ConstantOp | None:
    """The constant buffer (seen through views) that `value` is loaded from, if any."""
    owner = value.owner
    if not isinstance(owner, kernel.LoadOp):
        return None
    buffer = owner.buffer.owner
    while isinstance(buffer, kernel.ViewOp | kernel.SubviewOp):
        buffer = buffer.source.owner
    return buffer if isinstance(buffer, kernel.ConstantOp) else None


def _constant_number(value: SSAValue) -> float | None:
    """The number `value` always is: a literal, or a load from a constant buffer whose
    elements are all that number (a scalar weight such as Pow's exponent)."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp):
        attr = owner.value
        return float(attr.value.data) if isinstance(attr, FloatAttr | IntegerAttr) else None
    buffer = _constant_buffer(value)
    if buffer is None or not isinstance(buffer.value, DenseIntOrFPElementsAttr):
        return None
    if not 0 < prod(buffer.result.type.get_shape()) <= 16:
        return None
    values = buffer.value.get_values()
    if any(v != values[0] for v in values):
        return None
    return float(values[0])


_MASKED_EXTREMA = {arith.MaximumfOp: "rung_maximumf", arith.MinimumfOp: "rung_minimumf"}


@expression(arith.NegfOp)
def negf(op: Operation, args: list[str]) -> str:
    return f"-{args[0]}"


@expression(arith.SelectOp)
def select(op: Operation, args: list[str]) -> str:
    """A float select in a row loop that also calls a `rung_math.h` function is a mask
    blend (`rung_math_select`). Given a `?:`, gcc moves the function's work into the
    branch that needs it (or duplicates it for a constant arm: `exp(c ? 0 : x)`), and
    the loop stays scalar: Softmax's flushed terms, ELU, SELU, CELU."""
    loop = op.parent_op()
    if (
        scalar_type(_type(op)) == "float"
        and isinstance(loop, kernel.LoopOp)
        and calls_rung_math(loop)
        and _reads_rows(op)
    ):
        return f"rung_math_select({args[0]}, {args[1]}, {args[2]})"
    return f"{args[0]} ? {args[1]} : {args[2]}"


def calls_rung_math(loop: kernel.LoopOp) -> bool:
    """Whether `loop` calls a vectorizable `rung_math.h` function (exp, tanh, erf, log of
    a float)."""
    return any(
        type(other) in _RUNG_MATH and not isinstance(_type(other), Float64Type)
        for other in loop.body.walk()
    )


@expression(arith.ShLIOp, arith.ShRUIOp, arith.ShRSIOp)
def shift(op: Operation, args: list[str]) -> str:
    """Shifts by a negative amount or by the width or more are 0 (the sign for an
    arithmetic right shift), as numpy and ONNX define them; C leaves them undefined."""
    t = _type(op)
    ct, ut = scalar_type(t), unsigned_of(t)
    width = 64 if isinstance(t, IndexType) else t.width.data  # type: ignore[attr-defined]
    a, b = args
    inside = f"(uint64_t){b} < {width}"
    if isinstance(op, arith.ShLIOp):
        return f"({inside} ? ({ct})(({ut}){a} << {b}) : ({ct})0)"
    if isinstance(op, arith.ShRUIOp):
        return f"({inside} ? ({ct})(({ut}){a} >> {b}) : ({ct})0)"
    return f"({inside} ? ({ct})({a} >> {b}) : ({ct})({a} < 0 ? -1 : 0))"


@expression(kernel.RemFOp)
def remf(op: Operation, args: list[str]) -> str:
    t = _type(op)
    return rounded(t, f"{libm('fmod', t)}({args[0]}, {args[1]})")


# ---- comparisons ------------------------------------------------------------------------------

_CMPI = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
_CMPF = [
    "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
    "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true",
]  # fmt: skip
_RELATIONS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


@expression(arith.CmpiOp)
def cmpi(op: arith.CmpiOp, args: list[str]) -> str:
    """Unsigned predicates compare the operands cast to the unsigned type of their width."""
    pred = _CMPI[op.predicate.value.data]
    sym = _RELATIONS[pred[1:] if pred[0] in "su" else pred]
    a, b = args
    if pred[0] == "u":
        ut = unsigned_of(op.lhs.type)
        a, b = f"({ut}){a}", f"({ut}){b}"
    return f"{a} {sym} {b}"


@expression(arith.CmpfOp)
def cmpf(op: arith.CmpfOp, args: list[str]) -> str:
    """Ordered predicates are C's comparisons; unordered ones are also true on NaN."""
    pred = _CMPF[op.predicate.value.data]
    a, b = args
    nan = f"({a} != {a} || {b} != {b})"
    if pred in ("oeq", "ogt", "oge", "olt", "ole"):
        return f"{a} {_RELATIONS[pred[1:]]} {b}"
    if pred == "une":
        return f"{a} != {b}"
    if pred == "one":
        return f"({a} < {b} || {a} > {b})"
    if pred == "uno":
        return nan
    if pred == "ord":
        return f"!{nan}"
    if pred in ("ueq", "ugt", "uge", "ult", "ule"):
        return f"({nan} || {a} {_RELATIONS[pred[1:]]} {b})"
    return "true" if pred == "true" else "false"


# ---- conversions ------------------------------------------------------------------------------


@expression(
    arith.IndexCastOp, arith.SIToFPOp, arith.ExtSIOp, arith.TruncIOp, arith.ExtFOp,
    arith.TruncFOp, arith.FPToSIOp, arith.FPToUIOp, arith.BitcastOp,
)  # fmt: skip
def cast(op: Operation, args: list[str]) -> str:
    t = _type(op)
    if isinstance(op, arith.BitcastOp) and is_float(t) != is_float(op.operands[0].type):
        return reinterpret(op.operands[0].type, t, args[0])
    if sub_byte(t) is not None and isinstance(op, arith.FPToSIOp | arith.FPToUIOp):
        return f"(int64_t){args[0]}"  # truncated in range; `expression` wraps it
    return rounded(t, f"({scalar_type(t)}){args[0]}")


@expression(arith.UIToFPOp, arith.ExtUIOp)
def unsigned_cast(op: Operation, args: list[str]) -> str:
    """The operand is read as unsigned first."""
    t, src = _type(op), op.operands[0].type
    return rounded(t, f"({scalar_type(t)})({unsigned_of(src)}){args[0]}")


# ---- math -------------------------------------------------------------------------------------

_LIBM = {
    math.ExpOp: "exp", math.LogOp: "log", math.SqrtOp: "sqrt", math.SinOp: "sin",
    math.CosOp: "cos", math.TanOp: "tan", math.AsinOp: "asin", math.AcosOp: "acos",
    math.AtanOp: "atan", math.SinhOp: "sinh", math.CoshOp: "cosh", math.TanhOp: "tanh",
    math.AsinhOp: "asinh", math.AcoshOp: "acosh", math.AtanhOp: "atanh", math.ErfOp: "erf",
    math.FloorOp: "floor", math.CeilOp: "ceil", math.AbsFOp: "fabs",
    math.RoundEvenOp: "nearbyint", math.RoundOp: "round", math.TruncOp: "trunc",
    math.PowFOp: "pow", math.Atan2Op: "atan2", math.Log2Op: "log2", math.Log10Op: "log10",
    math.Log1pOp: "log1p", math.ExpM1Op: "expm1", math.Exp2Op: "exp2", math.CbrtOp: "cbrt",
    math.FmaOp: "fma", math.CopySignOp: "copysign",
}  # fmt: skip
"""math ops that are one libm call of the same operands (`expf`, `exp` for f64)."""

_RUNG_MATH = {
    math.ExpOp: "rung_expf", math.TanhOp: "rung_tanhf", math.ErfOp: "rung_erff",
    math.LogOp: "rung_logf",
}  # fmt: skip
"""math ops whose float (and narrower) versions call the runtime's `rung_math.h`
instead of libm: a loop calling libm stays scalar, one calling these vectorizes."""


def math_function(op: Operation) -> str:
    """The C function of a math op for its result type."""
    t = _type(op)
    if type(op) in _RUNG_MATH and not isinstance(t, Float64Type):
        return _RUNG_MATH[type(op)]
    return libm(_LIBM[type(op)], t)


@expression(*_LIBM)
def libm_call(op: Operation, args: list[str]) -> str:
    if isinstance(op, math.PowFOp) and scalar_type(_type(op)) in ("float", "double"):
        power = _small_power(op, args[0])
        if power is not None:
            return power
    return rounded(_type(op), f"{math_function(op)}({', '.join(args)})")


def _small_power(op: math.PowFOp, x: str) -> str | None:
    """`x^n` for a constant n in 1..4 as products, as onnxruntime computes a square or a
    cube (GPT-2's GELU cubes its input), and n in 0.25, 0.5, 0.75, 1.5 from square roots
    (LRN raises to 0.75: AlexNet, GoogLeNet, ZFNet). A loop calling `pow` stays scalar.

    The roots keep pow's special values: pow(-0, n) = +0 (`0.0f +` turns sqrt's -0 into
    +0), pow(-inf, n) = +inf (sqrt gives NaN), and a negative base gives NaN. They are
    within 2 ulp of pow: sqrt is correctly rounded, and each product adds one rounding."""
    n = _constant_number(op.rhs)
    if n in (1.0, 2.0, 3.0, 4.0):
        return {
            1.0: x,
            2.0: f"({x} * {x})",
            3.0: f"({x} * {x} * {x})",
            4.0: f"(({x} * {x}) * ({x} * {x}))",
        }[n]
    if n not in (0.25, 0.5, 0.75, 1.5):
        return None
    sqrt = libm("sqrt", _type(op))
    root = {
        0.25: f"0.0f + {sqrt}({sqrt}({x}))",
        0.5: f"0.0f + {sqrt}({x})",
        0.75: f"{sqrt}({x}) * {sqrt}({sqrt}({x}))",
        1.5: f"{x} * {sqrt}({x})",
    }[n]
    return f"({x} == -INFINITY ? INFINITY : {root})"


@expression(math.RsqrtOp)
def rsqrt(op: Operation, args: list[str]) -> str:
    t = _type(op)
    one = "1.0" if isinstance(t, Float64Type) else "1.0f"
    return rounded(t, f"{one} / {libm('sqrt', t)}({args[0]})")


@expression(math.AbsIOp)
def absi(op: Operation, args: list[str]) -> str:
    return f"({scalar_type(_type(op))})({args[0]} < 0 ? -{args[0]} : {args[0]})"


@expression(math.IPowIOp)
def ipowi(op: Operation, args: list[str]) -> str:
    return f"({scalar_type(_type(op))})rung_ipow((int64_t){args[0]}, (int64_t){args[1]})"


@expression(math.FPowIOp)
def fpowi(op: Operation, args: list[str]) -> str:
    t = _type(op)
    return rounded(t, f"{libm('pow', t)}({args[0]}, {args[1]})")
