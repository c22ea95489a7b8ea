"""Elementwise core ops: unary, binary, compare, select and cast, by tables of numpy functions.

Floating-point errors (overflow, division by zero, invalid) are not raised:
they give inf and NaN, as in C.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from rung.dialects import core
from rung.dialects.dtypes import saturation_bound

from .interpreter import Args, Scope, Value, evaluates, result_dtype

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return (1 / (1 + np.exp(-x.astype(np.float64)))).astype(x.dtype)


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}
_ASCII_UPPER = {c + 32: c for c in range(ord("A"), ord("Z") + 1)}


def _ascii_case(table: dict[int, int]) -> Callable[[np.ndarray], np.ndarray]:
    """Strings with their ASCII letters mapped by `table` (other characters unchanged)."""

    def apply(x: np.ndarray) -> np.ndarray:
        flat = [str(s).translate(table) for s in x.reshape(-1)]
        return np.array(flat, dtype=object).reshape(x.shape)

    return apply


UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "neg": np.negative,
    "abs": np.abs,
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: (1 / np.sqrt(x)).astype(x.dtype),
    "reciprocal": lambda x: (1 / x).astype(x.dtype),
    "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "erf": lambda x: _erf(x).astype(x.dtype),
    "sigmoid": _sigmoid,
    "floor": np.floor, "ceil": np.ceil, "round": np.round,
    "sign": np.sign,
    "not": np.logical_not,
    "bitwise_not": np.invert,
    "isnan": np.isnan,
    "isinf": np.isinf,
    "isposinf": np.isposinf,
    "isneginf": np.isneginf,
    "lower": _ascii_case(_ASCII_LOWER),
    "upper": _ascii_case(_ASCII_UPPER),
}  # fmt: skip


def _int_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer division truncating toward zero, as C and ONNX do."""
    q = np.floor_divide(a, b)
    fix = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
    return (q + fix).astype(a.dtype)


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(a.dtype, np.integer):
        return _int_div(a, b)
    return np.divide(a, b).astype(a.dtype)


def _pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(a.dtype, np.integer):
        return np.power(a.astype(np.int64), b.astype(np.int64)).astype(a.dtype)
    return np.power(a, b.astype(a.dtype)).astype(a.dtype)


BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": _div,
    "rem": np.fmod, "mod": np.mod, "pow": _pow,
    "max": np.maximum, "min": np.minimum, "atan2": np.arctan2,
    "and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor,
    "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
    "shift_left": np.left_shift, "shift_right": np.right_shift,
}  # fmt: skip

COMPARE: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less,
    "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
}  # fmt: skip


@evaluates(core.UnaryOp)
def unary(ev: Scope, op: core.UnaryOp, args: Args) -> list[Value]:
    with np.errstate(all="ignore"):
        return [np.asarray(UNARY[op.fn.data](args[0]))]


@evaluates(core.BinaryOp)
def binary(ev: Scope, op: core.BinaryOp, args: Args) -> list[Value]:
    with np.errstate(all="ignore"):
        out = np.asarray(BINARY[op.fn.data](args[0], args[1]))
    return [out.astype(result_dtype(op.result), copy=False)]


@evaluates(core.CompareOp)
def compare(ev: Scope, op: core.CompareOp, args: Args) -> list[Value]:
    return [np.asarray(COMPARE[op.pred.data](args[0], args[1]))]


@evaluates(core.SelectOp)
def select(ev: Scope, op: core.SelectOp, args: Args) -> list[Value]:
    return [np.where(args[0], args[1], args[2])]


@evaluates(core.CastOp)
def cast(ev: Scope, op: core.CastOp, args: Args) -> list[Value]:
    """A saturating cast to an 8/6/4-bit float clamps out-of-range values and infinities to
    the largest finite value; any other cast is numpy's conversion."""
    dtype = result_dtype(op.result)
    x = np.asarray(args[0])
    saturate = op.saturate is not None and op.saturate.value.data
    top = saturation_bound(dtype) if saturate else None
    if top is not None:
        x = np.clip(x.astype(np.float32), -top, top)
    with np.errstate(all="ignore"):
        return [x.astype(dtype)]


__all__ = ["BINARY", "COMPARE", "UNARY"]
