"""Reductions, arg-reductions, running sums and products, sort and nonzero.

`core.reduce` follows ONNX on the edge cases: sums and products of f16/bf16
accumulate in f32 and are rounded once at the end (as the kernel level
does), and an empty reduction gives the identity of its function: 0 (sum),
1 (prod), -inf or the smallest integer (max), +inf or the largest integer
(min), true (and), false (or).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.ir import Attribute

from rung.dialects import core
from rung.errors import EvaluationError

from .interpreter import (
    Args,
    Scope,
    Value,
    accumulator,
    evaluates,
    highest,
    ints,
    lowest,
    result_dtype,
)

REDUCE: dict[str, Callable[..., np.ndarray]] = {
    "sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min,
    "and": np.all, "or": np.any,
}  # fmt: skip

_INITIAL: dict[str, Callable[[np.dtype], np.ndarray]] = {"max": lowest, "min": highest}
"""The start of the reductions numpy gives no identity of (it raises on an empty input)."""


@evaluates(core.ReduceOp)
def reduce(ev: Scope, op: core.ReduceOp, args: Args) -> list[Value]:
    x = np.asarray(args[0])
    out = _reduce(op.fn.data, x, ints(op.axes), op.input.type, False)
    return [out.astype(result_dtype(op.result))]


@evaluates(core.MaskedReduceOp)
def masked_reduce(ev: Scope, op: core.MaskedReduceOp, args: Args) -> list[Value]:
    """core.reduce over the flagged dims, which stay as size 1 (numpy's keepdims)."""
    x = np.asarray(args[0])
    mask = np.asarray(args[1]).reshape(-1)
    if mask.shape != (x.ndim,):
        raise EvaluationError(
            f"core.masked_reduce: a mask of {mask.size} flags for a rank-{x.ndim} input"
        )
    axes = tuple(int(i) for i in np.flatnonzero(mask))
    return [_reduce(op.fn.data, x, axes, op.input.type, True).astype(result_dtype(op.result))]


def _reduce(fn: str, x: np.ndarray, axes: tuple[int, ...], t: Attribute, keep: bool) -> np.ndarray:
    """numpy's reduction `fn` of `x` over `axes`, from the identity, sums in the accumulator."""
    if fn in ("sum", "prod"):
        element = t.element_type  # type: ignore[attr-defined]
        out = REDUCE[fn](x.astype(accumulator(element)), axis=axes, keepdims=keep)
    elif fn in _INITIAL:
        out = REDUCE[fn](x, axis=axes, initial=_INITIAL[fn](x.dtype), keepdims=keep)
    else:
        out = REDUCE[fn](x, axis=axes, keepdims=keep)
    return np.asarray(out)


@evaluates(core.ArgReduceOp)
def arg_reduce(ev: Scope, op: core.ArgReduceOp, args: Args) -> list[Value]:
    """The first index of the max/min along `axis`, or the last one when `last` is set."""
    x = np.asarray(args[0])
    axis = op.axis.value.data
    fn = np.argmax if op.fn.data == "max" else np.argmin
    if op.last.value.data:
        flipped = np.flip(x, axis=axis)
        return [(x.shape[axis] - 1 - fn(flipped, axis=axis)).astype(np.int64)]
    return [fn(x, axis=axis).astype(np.int64)]


@evaluates(core.CumulativeOp)
def cumulative(ev: Scope, op: core.CumulativeOp, args: Args) -> list[Value]:
    """Running sum/product in the element type, rounded at each step as ONNX's reference
    does; the exclusive form starts from the identity."""
    x = np.asarray(args[0])
    axis = op.axis.value.data
    reverse = bool(op.reverse.value.data)
    if reverse:
        x = np.flip(x, axis=axis)
    fn = np.cumsum if op.fn.data == "sum" else np.cumprod
    out = fn(x, axis=axis).astype(x.dtype)
    if op.exclusive.value.data:
        out = _shift_in(out, axis, 0 if op.fn.data == "sum" else 1)
    if reverse:
        out = np.flip(out, axis=axis)
    return [out]


def _shift_in(x: np.ndarray, axis: int, identity: int) -> np.ndarray:
    """`x` moved one place along `axis`: the identity enters first, the last entry falls
    off, and an empty axis stays empty."""
    out = np.full_like(x, identity)
    into = [slice(None)] * x.ndim
    into[axis] = slice(1, None)
    take = [slice(None)] * x.ndim
    take[axis] = slice(None, -1)
    out[tuple(into)] = x[tuple(take)]
    return out


@evaluates(core.SortOp)
def sort(ev: Scope, op: core.SortOp, args: Args) -> list[Value]:
    """A stable sort, so equal keys keep their order (descending: by negated keys)."""
    x = np.asarray(args[0])
    axis = op.axis.value.data
    key = x.astype(np.float64) if np.issubdtype(x.dtype, np.integer) else x
    if op.descending.value.data:
        key = -key
    idx = np.argsort(key, axis=axis, kind="stable")
    return [np.take_along_axis(x, idx, axis=axis), idx.astype(np.int64)]


@evaluates(core.NonZeroOp)
def nonzero(ev: Scope, op: core.NonZeroOp, args: Args) -> list[Value]:
    """The indices of the non-zero elements, one row per dim: [rank, count]."""
    return [np.array(np.nonzero(args[0]), dtype=np.int64).reshape(np.ndim(args[0]), -1)]


__all__ = ["REDUCE"]
