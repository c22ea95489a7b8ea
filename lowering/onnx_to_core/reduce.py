"""Reductions and sorting ONNX ops → core: Reduce*, ArgMax/ArgMin, CumSum, TopK.

`core.reduce` drops the reduced axes, so `keepdims=1` is a reshape back to
the ONNX result type. The composite reductions (mean, L1, L2, log-sum,
log-sum-exp, sum of squares) are elementwise ops around a core sum/max.
`axes` must be a constant, or follow from the static types: they decide the
result's rank. TopK's K may arrive at run time (checked against its axis).

Empty-set reductions (a reduced dim of size 0) are resolved here, because
numpy (the core spec) has no identity for max/min: the result is then a
constant of the reduction's identity (-inf for max, 0 for sum, ...).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Attribute, SSAValue

from rung.dialects import core
from rung.dialects.dtypes import i1, i64, numpy_dtype
from rung.dialects.onnx import generated_ops as onnx
from rung.lowering.kit import (
    CoreBuilder,
    LoweringError,
    constant_ints,
    element_of,
    int_attr,
    is_static,
    normalize_axis,
    ranked_shape,
    shape_of_type,
    tensor,
)

from .registry import Results, lowers

Reduction = (
    onnx.ReduceSumOp | onnx.ReduceMeanOp | onnx.ReduceMaxOp | onnx.ReduceMinOp
    | onnx.ReduceProdOp | onnx.ReduceL1Op | onnx.ReduceL2Op | onnx.ReduceLogSumOp
    | onnx.ReduceLogSumExpOp | onnx.ReduceSumSquareOp
)  # fmt: skip
"""The Reduce* ops: `data`, optional `axes`, `keepdims` and `noop_with_empty_axes`."""

_FN: dict[type[Reduction], str] = {
    onnx.ReduceMaxOp: "max", onnx.ReduceMinOp: "min", onnx.ReduceProdOp: "prod",
    onnx.ReduceSumOp: "sum", onnx.ReduceMeanOp: "sum", onnx.ReduceL1Op: "sum",
    onnx.ReduceL2Op: "sum", onnx.ReduceLogSumOp: "sum", onnx.ReduceLogSumExpOp: "sum",
    onnx.ReduceSumSquareOp: "sum",
}  # fmt: skip
"""The core reduction at the heart of each Reduce* op."""

_NOOP_ON_SIZE_ONE = (
    onnx.ReduceSumOp, onnx.ReduceMaxOp, onnx.ReduceMinOp, onnx.ReduceProdOp, onnx.ReduceMeanOp,
)  # fmt: skip
"""Reductions that change nothing when they reduce dims of size 1 only."""


def _rank(x: SSAValue) -> int:
    shape = shape_of_type(x.type)
    if shape is None:
        raise LoweringError("reductions need a ranked input")
    return len(shape)


def _reduce_axes(op: Reduction, x: SSAValue) -> list[list[int]] | None:
    """The candidate sets of axes to reduce (sorted, non-negative); None for the identity.

    No `axes` (or an empty one) means all axes, unless `noop_with_empty_axes`
    is set; then nothing is reduced. Constant axes give one candidate. Axes
    known only at run time are recovered from the static result type: every
    set of axes that turns the input type into the result type is a
    candidate (sets differing only in size-1 dims are the same reduction),
    and `_select_axes` picks among several at run time.
    """
    axes_value = op.axes
    rank = _rank(x)
    noop = bool(op.attr("noop_with_empty_axes"))
    axes_shape = None if axes_value is None else shape_of_type(axes_value.type)
    if axes_value is None or axes_shape == (0,):
        return None if noop else [list(range(rank))]
    found = constant_ints(axes_value)
    if found is not None:
        if not found:
            return None if noop else [list(range(rank))]
        return [sorted({normalize_axis(a, rank) for a in found})]
    return _axes_from_types(op, x, noop)


def _axes_from_types(op: Reduction, x: SSAValue, noop: bool) -> list[list[int]] | None:
    """Candidate axes for run-time `axes`, from the input and result types."""
    ins = shape_of_type(x.type)
    out = shape_of_type(op.reduced.type)
    why = "axes must be a constant, or follow from static input and result shapes"
    if ins is None or out is None or any(d < 0 for d in ins + out):
        raise LoweringError(
            f"{why}; axes is a run-time value and the shapes are not both static "
            f"({x.type} -> {op.reduced.type})"
        )
    rank = len(ins)
    size_one = [i for i in range(rank) if ins[i] == 1]
    if op.attr("keepdims"):
        if len(out) != rank:
            raise LoweringError(why)
        definite = [i for i in range(rank) if out[i] == 1 and ins[i] != 1]
        if any(out[i] not in (ins[i], 1) for i in range(rank)):
            raise LoweringError(why)
        if definite:
            return [definite]
        if not noop or not size_one:
            return None if noop else [size_one]
        if isinstance(op, _NOOP_ON_SIZE_ONE):
            return None  # reducing size-1 dims changes nothing
        raise LoweringError("cannot tell from the shapes whether the reduction is a no-op")
    k = rank - len(out)
    if k == 0 and noop:
        return None
    candidates: dict[tuple[int, ...], list[int]] = {}
    for removed in combinations(range(rank), k):
        if [d for i, d in enumerate(ins) if i not in removed] == list(out):
            key = tuple(i for i in removed if ins[i] != 1)
            candidates.setdefault(key, list(removed))
    if not candidates:
        raise LoweringError(why)
    if len(candidates) > 8:
        raise LoweringError("too many ways to reduce to the result shape; make axes a constant")
    return list(candidates.values())


def _axes_mask(b: CoreBuilder, op: Reduction, rank: int) -> SSAValue:
    """`mask[i]` (i1, shape [rank]): whether the run-time axes name dim i."""
    axes = op.axes
    assert axes is not None
    shape = shape_of_type(axes.type)
    if shape is None or len(shape) != 1 or shape[0] < 0:
        raise LoweringError("run-time axes need a static length")
    n = shape[0]
    axes = b.cast(axes, i64)
    negative = b.compare("lt", axes, b.splat(0, axes))
    axes = b.select(negative, b.binary("add", axes, b.splat(rank, axes)), axes)
    grid = tensor(i64, [n, rank])
    spread = b.insert(
        core.BroadcastOp.create(
            operands=[axes], result_types=[grid], properties={"dims": core.ints([0])}
        )
    ).results[0]
    dims = b.constant(np.broadcast_to(np.arange(rank, dtype=np.int64), (n, rank)).copy())
    hits = b.compare("eq", spread, dims)
    return b.reduce("or", hits, [0])


def _select_axes(
    b: CoreBuilder,
    op: Reduction,
    x: SSAValue,
    candidates: list[list[int]],
    results: list[SSAValue],
) -> SSAValue:
    """Pick, at run time, the result of the candidate whose axes the `axes` input names."""
    if len(results) == 1:
        return results[0]
    shape = shape_of_type(x.type) or ()
    rank = len(shape)
    mask = _axes_mask(b, op, rank)
    chosen = results[-1]
    for axes, result in zip(candidates[:-1], results[:-1], strict=True):
        want = b.constant(np.array([i in axes for i in range(rank)]))
        ignore = b.constant(np.array([d == 1 for d in shape]))
        agree = b.binary("or", b.compare("eq", mask, want), ignore)
        cond = b.reduce("and", agree, [0])
        cond = b.broadcast_to(cond, tensor(element_of(cond.type), shape_of_type(result.type) or ()))
        chosen = b.select(cond, result, chosen)
    return chosen


def _kept_shape(b: CoreBuilder, x: SSAValue, axes: Sequence[int]) -> SSAValue:
    """The run-time shape of `x` with the reduced axes set to 1 (for a dynamic keepdims)."""
    rank = _rank(x)
    mask = np.array([i in axes for i in range(rank)])
    return b.select(b.constant(mask), b.constant(np.ones(rank, np.int64)), b.shape_of(x))


def _keep(
    b: CoreBuilder,
    reduced: SSAValue,
    x: SSAValue,
    axes: Sequence[int],
    out: Attribute,
    keepdims: bool,
) -> SSAValue:
    """Reshape a core.reduce result back to the rank of `x` when keepdims is set.

    The shape comes from `x` (reduced dims become 1), not from `out`, which
    may be unranked when ONNX shape inference could not see the axes.
    """
    if not keepdims:
        return reduced
    shape = shape_of_type(x.type) or ()
    target = tensor(element_of(reduced.type), [1 if i in axes else d for i, d in enumerate(shape)])
    if is_static(target):
        return b.reshape(reduced, target)
    return b.reshape(reduced, target, _kept_shape(b, x, axes))


def _expand(b: CoreBuilder, reduced: SSAValue, x: SSAValue, axes: Sequence[int]) -> SSAValue:
    """Broadcast a reduced value back over the reduced axes to the shape of `x`."""
    kept = [i for i in range(_rank(x)) if i not in axes]
    return b.broadcast_in_dim(reduced, kept, x)


def _empty_identity(x: SSAValue, axes: Sequence[int]) -> bool:
    shape = shape_of_type(x.type) or ()
    return any(shape[a] == 0 for a in axes)


def _identity_constant(b: CoreBuilder, out: Attribute, value: float | bool) -> SSAValue:
    shape = shape_of_type(out)
    if shape is None or any(d < 0 for d in shape):
        raise LoweringError("an empty-set reduction with a dynamic result is not supported")
    dtype = numpy_dtype(element_of(out))
    return b.constant(np.full(shape, value, dtype=dtype))


def _lowest(dtype: np.dtype) -> float | bool:
    if dtype == np.bool_:
        return False
    if np.issubdtype(dtype, np.integer):
        return int(np.iinfo(dtype).min)
    return -np.inf


def _highest(dtype: np.dtype) -> float | bool:
    if dtype == np.bool_:
        return True
    if np.issubdtype(dtype, np.integer):
        return int(np.iinfo(dtype).max)
    return np.inf


def _identity(op: Reduction, dtype: np.dtype) -> float | bool:
    """The result of reducing an empty set."""
    if isinstance(op, onnx.ReduceMaxOp):
        return _lowest(dtype)
    if isinstance(op, onnx.ReduceMinOp):
        return _highest(dtype)
    if isinstance(op, onnx.ReduceProdOp):
        return 1
    if isinstance(op, onnx.ReduceLogSumOp | onnx.ReduceLogSumExpOp):
        return -np.inf
    if isinstance(op, onnx.ReduceMeanOp):
        return np.nan
    return 0


@lowers(*_FN)
def reduce(b: CoreBuilder, op: Reduction) -> Results:
    x = op.data
    candidates = _reduce_axes(op, x)
    if candidates is None:
        return [x]
    results = [_reduce_one(b, op, x, axes) for axes in candidates]
    return [_select_axes(b, op, x, candidates, results)]


def _reduce_one(b: CoreBuilder, op: Reduction, x: SSAValue, axes: list[int]) -> SSAValue:
    """The reduction of `x` over `axes`, in the op's result type."""
    out = op.reduced.type
    keepdims = bool(op.attr("keepdims"))
    if _empty_identity(x, axes):
        return _identity_constant(b, out, _identity(op, numpy_dtype(element_of(out))))
    if isinstance(op, onnx.ReduceLogSumExpOp):
        return _keep(b, _log_sum_exp(b, x, axes), x, axes, out, keepdims)
    source = x
    if isinstance(op, onnx.ReduceL1Op):
        source = b.unary("abs", x)
    elif isinstance(op, onnx.ReduceL2Op | onnx.ReduceSumSquareOp):
        source = b.binary("mul", x, x)
    reduced = b.reduce(_FN[type(op)], source, axes)
    if isinstance(op, onnx.ReduceMeanOp):
        reduced = b.binary("div", reduced, b.count(x, axes, reduced))
    elif isinstance(op, onnx.ReduceL2Op):
        reduced = b.unary("sqrt", reduced)
    elif isinstance(op, onnx.ReduceLogSumOp):
        reduced = b.unary("log", reduced)
    return _keep(b, reduced, x, axes, out, keepdims)


def _log_sum_exp(b: CoreBuilder, x: SSAValue, axes: Sequence[int]) -> SSAValue:
    """log(sum(exp(x - m))) + m with m the max, so large inputs do not overflow.

    Where the max is infinite (all -inf, or a +inf) it is replaced by 0, so
    the result is the naive formula's (-inf or inf) instead of NaN.
    """
    peak = b.reduce("max", x, axes)
    infinite = b.unary("isinf", peak, tensor(i1, shape_of_type(peak.type) or ()))
    safe = b.select(infinite, b.splat(0, peak), peak)
    shifted = b.binary("sub", x, _expand(b, safe, x, axes))
    total = b.reduce("sum", b.unary("exp", shifted), axes)
    return b.binary("add", b.unary("log", total), safe)


@lowers(onnx.ArgMaxOp, onnx.ArgMinOp)
def arg_reduce(b: CoreBuilder, op: onnx.ArgMaxOp | onnx.ArgMinOp) -> Results:
    x = op.data
    shape = shape_of_type(x.type)
    if shape is None:
        raise LoweringError("ArgMax/ArgMin need a ranked input")
    axis = normalize_axis(int(op.attr("axis")), len(shape))  # type: ignore[arg-type]
    if shape[axis] == 0:
        raise LoweringError("ArgMax/ArgMin of an empty axis has no answer")
    result = tensor(i64, [d for i, d in enumerate(shape) if i != axis])
    new = core.ArgReduceOp.create(
        operands=[x],
        result_types=[result],
        properties={
            "fn": StringAttr("max" if isinstance(op, onnx.ArgMaxOp) else "min"),
            "axis": int_attr(axis),
            "last": int_attr(1 if op.attr("select_last_index") else 0),
        },
    )
    reduced = b.insert(new).results[0]
    return [_keep(b, reduced, x, [axis], op.reduced.type, bool(op.attr("keepdims")))]


@lowers(onnx.CumSumOp, onnx.CumProdOp)
def cumulative(b: CoreBuilder, op: onnx.CumSumOp | onnx.CumProdOp) -> Results:
    """core.cumulative along `axis`; an axis known only at run time picks among all dims."""
    name = op.SCHEMA.op_type
    x, axis_value = op.x, op.axis
    rank = _rank(x)
    if rank == 0:
        raise LoweringError(f"{name} needs an input of rank 1 or more")
    axis = constant_ints(axis_value)
    if axis is not None and len(axis) != 1:
        raise LoweringError(f"{name}'s axis must be a scalar")
    candidates = [normalize_axis(axis[0], rank)] if axis is not None else list(range(rank))
    results = [_cumulative(b, op, a) for a in candidates]
    if len(results) == 1:
        return results
    # Select by the run-time axis (normalized): the last candidate is the fallback.
    runtime = b.cast(axis_value, i64)
    runtime = b.reshape(runtime, tensor(i64, []))
    negative = b.compare("lt", runtime, b.scalar(0, i64))
    runtime = b.select(negative, b.binary("add", runtime, b.scalar(rank, i64)), runtime)
    chosen = results[-1]
    for a, result in zip(candidates[:-1], results[:-1], strict=True):
        cond = b.compare("eq", runtime, b.scalar(a, i64))
        cond = b.broadcast_to(cond, tensor(element_of(cond.type), shape_of_type(x.type) or ()), x)
        chosen = b.select(cond, result, chosen)
    return [chosen]


def _cumulative(b: CoreBuilder, op: onnx.CumSumOp | onnx.CumProdOp, axis: int) -> SSAValue:
    new = core.CumulativeOp.create(
        operands=[op.x],
        result_types=[op.x.type],
        properties={
            "fn": StringAttr("prod" if isinstance(op, onnx.CumProdOp) else "sum"),
            "axis": int_attr(axis),
            "exclusive": int_attr(1 if op.attr("exclusive") else 0),
            "reverse": int_attr(1 if op.attr("reverse") else 0),
        },
    )
    return b.insert(new).results[0]


@lowers(onnx.TopKOp)
def top_k(b: CoreBuilder, op: onnx.TopKOp) -> Results:
    """A stable sort (ties keep the lower index first, as ONNX asks) and a slice of K.

    `sorted=0` lets ONNX return any order; the sorted order is one of them.
    K may be a run-time value and the axis a dynamic dim (exporters take
    `min(300, n)` boxes of `n` found): the run then checks K against the
    axis (and against the size the outputs declare, if they do), and fails
    with an error naming the node rather than read past the sorted values.
    """
    x = op.X
    shape = shape_of_type(x.type)
    if shape is None:
        raise LoweringError("TopK needs a ranked input")
    rank = len(shape)
    axis = normalize_axis(int(op.attr("axis")), rank)  # type: ignore[arg-type]
    constant_k = constant_ints(op.K)
    if constant_k is not None and len(constant_k) != 1:
        raise LoweringError("TopK's K must hold one value")
    out = shape_of_type(op.Values.type)
    declared = out[axis] if out is not None and len(out) == rank else -1
    k = constant_k[0] if constant_k is not None else declared  # -1: only the run knows
    if k >= 0 and shape[axis] >= 0 and not 0 <= k <= shape[axis]:
        raise LoweringError(f"K={k} is out of range for a dim of size {shape[axis]}")
    k_value = None if constant_k is not None else _run_time_k(b, op.K)
    if k_value is not None and k >= 0:
        matches = b.compare("eq", k_value, b.constant(np.array([k], np.int64)))
        message = f"TopK: K differs from {k}, the size its outputs declare along axis {axis}"
        if shape[axis] >= 0:
            x = b.check(x, matches, message)  # the slice below is static: guard the sort
        else:
            k_value = b.check(k_value, matches, message)
    sort = core.SortOp.create(
        operands=[x],
        result_types=[x.type, tensor(i64, shape)],
        properties={
            "axis": int_attr(axis),
            "descending": int_attr(1 if op.attr("largest") else 0),
        },
    )
    b.insert(sort)
    if k >= 0 and shape[axis] >= 0:
        sizes = [k if i == axis else -1 for i in range(rank)]  # -1: the whole dim
        return [b.slice(value, [0] * rank, sizes) for value in sort.results]
    if k_value is None:
        k_value = b.constant(np.array([k], np.int64))
    sizes = _sizes_with(b, x, _checked_k(b, k_value, x, axis), axis)
    return [_leading(b, value, sizes, axis, k) for value in sort.results]


def _run_time_k(b: CoreBuilder, k: SSAValue) -> SSAValue:
    """TopK's K input as a 1-element i64 tensor."""
    shape = shape_of_type(k.type)
    if shape is None or int(np.prod(shape)) != 1:
        raise LoweringError(f"TopK's K must hold one value, got {k.type}")
    if element_of(k.type) != i64:
        k = b.cast(k, i64)
    return b.reshape(k, tensor(i64, [1]))


def _checked_k(b: CoreBuilder, k: SSAValue, x: SSAValue, axis: int) -> SSAValue:
    """`k` once the run has checked 0 <= K <= the size of `axis` of `x`."""
    size = b.shape_vector([b.dims(x)[axis]])
    fits = b.binary(
        "and",
        b.compare("ge", k, b.constant(np.array([0], np.int64))),
        b.compare("le", k, size),
    )
    return b.check(k, fits, f"TopK: K is negative or larger than the size of axis {axis}")


def _sizes_with(b: CoreBuilder, x: SSAValue, k: SSAValue, axis: int) -> SSAValue:
    """The run-time shape of `x` with `k` (a 1-element i64 tensor) along `axis`."""
    rank = len(ranked_shape(x))
    on_axis = b.constant(np.array([i == axis for i in range(rank)]))
    return b.select(on_axis, b.broadcast_to(k, tensor(i64, [rank])), b.shape_of(x))


def _leading(b: CoreBuilder, x: SSAValue, sizes: SSAValue, axis: int, static_k: int) -> SSAValue:
    """The first `sizes[axis]` entries of `x` along `axis` (the whole of the other dims);
    the result's dim there is `static_k`, or `?` when that is -1."""
    shape = ranked_shape(x)
    rank = len(shape)
    result = tensor(element_of(x.type), [static_k if i == axis else d for i, d in enumerate(shape)])
    new = core.SliceOp.create(
        operands=[
            x,
            b.constant(np.zeros(rank, np.int64)),
            sizes,
            b.constant(np.ones(rank, np.int64)),
        ],
        result_types=[result],
    )
    return b.insert(new).results[0]
