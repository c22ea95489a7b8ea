"""Reductions and sorting ONNX ops → core: Reduce*, ArgMax/ArgMin, CumSum, TopK.

`core.reduce` drops the reduced axes, so `keepdims=1` is a reshape back to
the ONNX result type. The composite reductions (mean, L1, L2, log-sum,
log-sum-exp, sum of squares) are elementwise ops around a core sum/max.
Constant `axes` give a core.reduce. Axes known only at run time give a
core.masked_reduce over a mask of the named dims, which keeps them as size 1;
keepdims=0 then drops them with a reshape to a shape computed at run time
(the result's rank must be declared, or follow from a static number of axes).
TopK's K may arrive at run time (checked against its axis).

Empty-set reductions over constant axes (a reduced dim of static size 0) are
resolved here: the result is a constant of the reduction's identity (-inf for
max, 0 for sum, ...). Over run-time axes, core.masked_reduce starts from the
identity, so an empty set gives it with no special case.
"""

from __future__ import annotations

from collections.abc import Sequence

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
    declared,
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


def _rank(x: SSAValue) -> int:
    shape = shape_of_type(x.type)
    if shape is None:
        raise LoweringError("reductions need a ranked input")
    return len(shape)


def _run_time_axes(op: Reduction) -> bool:
    """Whether the axes are an input that is neither a constant nor empty by its type."""
    axes = op.axes
    if axes is None or shape_of_type(axes.type) == (0,):
        return False
    return constant_ints(axes) is None


def _reduce_axes(op: Reduction, x: SSAValue) -> list[int] | None:
    """The constant axes to reduce (sorted, non-negative); None for the identity.

    No `axes` (or an empty one) means all axes, unless `noop_with_empty_axes`
    is set; then nothing is reduced.
    """
    axes_value = op.axes
    rank = _rank(x)
    noop = bool(op.attr("noop_with_empty_axes"))
    empty = axes_value is None or shape_of_type(axes_value.type) == (0,)
    found = [] if empty else constant_ints(axes_value)
    assert found is not None, "run-time axes take the masked path"
    if not found:
        return None if noop else list(range(rank))
    return sorted({normalize_axis(a, rank) for a in found})


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
    if _run_time_axes(op):
        return [_reduce_masked(b, op, x)]
    axes = _reduce_axes(op, x)
    if axes is None:
        return [x]
    return [_reduce_one(b, op, x, axes)]


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


# ---- axes known only at run time ------------------------------------------------------


def _reduce_masked(b: CoreBuilder, op: Reduction, x: SSAValue) -> SSAValue:
    """The reduction over run-time axes: a core.masked_reduce, whose result keeps the
    reduced dims as 1, then (keepdims=0) a reshape that drops them.

    The result's rank must be known: with keepdims=0 it comes from the declared
    result rank, or else from a static number of axes; the run checks that the
    axes name as many distinct dims. The run also checks each axis is in range.
    """
    rank = _rank(x)
    keepdims = bool(op.attr("keepdims"))
    removed = None if keepdims else _removed_count(op, rank)
    axes = op.axes
    assert axes is not None
    mask = _axes_mask(b, axes, rank, bool(op.attr("noop_with_empty_axes")))
    reduced = _reduce_flagged(b, op, x, mask)
    if removed is not None:
        reduced = _drop_flagged(b, reduced, mask, removed)
    return declared(b, reduced, op.reduced.type, "the reduction")


def _removed_count(op: Reduction, rank: int) -> int:
    """How many dims a keepdims=0 reduction over run-time axes drops."""
    out = shape_of_type(op.reduced.type)
    axes = op.axes
    assert axes is not None
    length = shape_of_type(axes.type)
    users_rank = _rank_through_users(op.reduced)
    if out is not None:
        removed = rank - len(out)
    elif length is not None and len(length) == 1 and length[0] >= 0:
        removed = length[0]
    elif users_rank is not None:
        removed = rank - users_rank
    else:
        raise LoweringError(
            "keepdims=0 over run-time axes needs a ranked result, a static number of axes "
            "or a ranked value computed from the result elementwise"
        )
    if not 0 <= removed <= rank:
        raise LoweringError(f"reducing a rank-{rank} input cannot give {op.reduced.type}")
    return removed


_RANK_KEEPING = (
    onnx.CastOp, onnx.CastLikeOp, onnx.IdentityOp, onnx.SqrtOp, onnx.ExpOp, onnx.LogOp,
    onnx.AbsOp, onnx.NegOp, onnx.ReciprocalOp,
)  # fmt: skip
"""Ops whose result has the rank of their first operand."""


def _rank_through_users(v: SSAValue) -> int | None:
    """The rank of `v` as its users declare it: an expanded ReduceL2 or ReduceLogSum
    reduces into an unranked value, then takes its square root or log into the
    graph's ranked output."""
    seen: set[SSAValue] = set()
    todo = [v]
    while todo:
        value = todo.pop()
        if value in seen:
            continue
        seen.add(value)
        for use in value.uses:
            user = use.operation
            if not isinstance(user, _RANK_KEEPING) or use.index != 0:
                continue
            shape = shape_of_type(user.results[0].type)
            if shape is not None:
                return len(shape)
            todo.append(user.results[0])
    return None


def _axes_mask(b: CoreBuilder, axes: SSAValue, rank: int, noop: bool) -> SSAValue:
    """`mask[i]` (i1, shape [rank]): whether the run-time axes name dim i.

    Axes are normalized and checked to lie in [-rank, rank); duplicates are
    harmless. Empty axes flag every dim, unless `noop` (then none, and the
    composite ops are their elementwise part alone, as in ONNX's reference and
    onnxruntime: ReduceL1 gives |x|).
    """
    length = shape_of_type(axes.type)
    if length is None or len(length) != 1:
        raise LoweringError(f"axes must be a 1-D tensor, got {axes.type}")
    given = b.cast(axes, i64)
    axes = b.wrap_indices(given, rank)
    fits = b.binary(
        "and", b.compare("ge", axes, b.splat(0, axes)), b.compare("lt", axes, b.splat(rank, axes))
    )
    axes = b.check(axes, fits, f"axes must lie in [{-rank}, {rank - 1}]", culprit=given)
    grid = tensor(i64, [length[0], rank])
    shape = None
    if length[0] < 0:
        shape = b.concat([b.shape_of(axes), b.constant(np.array([rank], np.int64))], 0)
    spread = _spread(b, axes, grid, [0], shape)
    dims = _spread(b, b.constant(np.arange(rank, dtype=np.int64)), grid, [1], shape)
    mask = b.reduce("or", b.compare("eq", spread, dims), [0])
    if length[0] >= 0 or noop:
        return mask
    count = b.reshape(b.shape_of(axes), tensor(i64, []))
    empty = b.compare("eq", count, b.scalar(0, i64))
    return b.binary("or", mask, b.broadcast_to(empty, mask.type))


def _spread(
    b: CoreBuilder, x: SSAValue, grid: Attribute, dims: list[int], shape: SSAValue | None
) -> SSAValue:
    """`x` broadcast into `grid` along `dims` (a `?` grid takes its shape from `shape`)."""
    result = tensor(element_of(x.type), shape_of_type(grid) or ())
    new = core.BroadcastOp.create(
        operands=[x] if shape is None else [x, shape],
        result_types=[result],
        properties={"dims": core.ints(dims)},
    )
    return b.insert(new).results[0]


def _masked(b: CoreBuilder, fn: str, x: SSAValue, mask: SSAValue) -> SSAValue:
    """core.masked_reduce: the flagged dims become 1 (a `?` unless statically 1 already)."""
    result = tensor(element_of(x.type), [1 if d == 1 else -1 for d in ranked_shape(x)])
    new = core.MaskedReduceOp.create(
        operands=[x, mask], result_types=[result], properties={"fn": StringAttr(fn)}
    )
    return b.insert(new).results[0]


def _reduce_flagged(b: CoreBuilder, op: Reduction, x: SSAValue, mask: SSAValue) -> SSAValue:
    """The Reduce* op over the flagged dims, which stay as size 1."""
    if isinstance(op, onnx.ReduceLogSumExpOp):
        return _masked_log_sum_exp(b, x, mask)
    source = x
    if isinstance(op, onnx.ReduceL1Op):
        source = b.unary("abs", x)
    elif isinstance(op, onnx.ReduceL2Op | onnx.ReduceSumSquareOp):
        source = b.binary("mul", x, x)
    reduced = _masked(b, _FN[type(op)], source, mask)
    if isinstance(op, onnx.ReduceMeanOp):
        reduced = b.binary("div", reduced, _masked_count(b, x, mask, reduced))
    elif isinstance(op, onnx.ReduceL2Op):
        reduced = b.unary("sqrt", reduced)
    elif isinstance(op, onnx.ReduceLogSumOp):
        reduced = b.unary("log", reduced)
    return reduced


def _masked_count(b: CoreBuilder, x: SSAValue, mask: SSAValue, like: SSAValue) -> SSAValue:
    """How many elements each result of a masked reduction combines, shaped like `like`."""
    rank = _rank(x)
    sizes = b.select(mask, b.shape_of(x), b.constant(np.ones(rank, np.int64)))
    n = b.cast(b.reduce("prod", sizes, [0]), element_of(like.type))
    return b.broadcast_to(n, like.type, like)


def _masked_log_sum_exp(b: CoreBuilder, x: SSAValue, mask: SSAValue) -> SSAValue:
    """`_log_sum_exp` over the flagged dims (the max is broadcast back at run time)."""
    peak = _masked(b, "max", x, mask)
    infinite = b.unary("isinf", peak, tensor(i1, ranked_shape(peak)))
    safe = b.select(infinite, b.splat(0, peak), peak)
    spread = b.broadcast_to(
        safe, tensor(element_of(safe.type), ranked_shape(x)), like=x, always=True
    )
    total = _masked(b, "sum", b.unary("exp", b.binary("sub", x, spread)), mask)
    return b.binary("add", b.unary("log", total), safe)


def _drop_flagged(b: CoreBuilder, reduced: SSAValue, mask: SSAValue, removed: int) -> SSAValue:
    """`reduced` without its flagged dims (keepdims=0), once the run has checked that
    the axes name `removed` distinct dims.

    The kept dims, in order, are the first ones of a stable sort of the flags.
    """
    rank = len(ranked_shape(reduced))
    flags = b.cast(mask, i64)
    count = b.reduce("sum", flags, [0])
    matches = b.compare("eq", count, b.scalar(removed, i64))
    reduced = b.check(reduced, matches, f"the axes must name exactly {removed} distinct dims")
    kept = rank - removed
    element = element_of(reduced.type)
    if kept == 0:
        return b.reshape(reduced, tensor(element, []))
    if removed == 0:
        return reduced
    sort = core.SortOp.create(
        operands=[flags],
        result_types=[flags.type, tensor(i64, [rank])],
        properties={"axis": int_attr(0), "descending": int_attr(0)},
    )
    order = b.insert(sort).results[1]
    dims = b.gather(b.shape_of(reduced), b.slice(order, [0], [kept]), 0)
    return b.reshape(reduced, tensor(element, [-1] * kept), dims)


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
    """TopK's K input as a 1-element i64 tensor; a K of dynamic shape is first checked
    at run time to hold exactly one value."""
    shape = shape_of_type(k.type)
    if shape is None or any(d not in (1, -1) for d in shape):
        raise LoweringError(f"TopK's K must hold one value, got {k.type}")
    if -1 in shape:
        count = b.reduce("prod", b.shape_of(k), [0])
        k = b.check(k, b.compare("eq", count, b.scalar(1, i64)), "TopK: K must hold one value")
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
    message = f"TopK: K is negative or larger than the size of axis {axis}"
    return b.check(k, fits, message, culprit=k)


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
