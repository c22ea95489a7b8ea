"""Reductions, arg-reductions, sorting and cumulative sums → core.

`core.reduce` drops the reduced dims, so `keepdim=True` is a reshape back
(run-time sizes read from the input). ATen's dims are constants: `None`, and
for most ops `[]`, mean every dim (`any.dims` alone reads `[]` as none). The
result's element type is the op's declared one (integer sums and products
give i64; `dtype=` casts the input first); half-precision floats are summed
in f32. A mean divides by `CoreBuilder.count`, read at run time over dynamic
dims, so one compiled library serves every batch size.

`max.dim` / `min.dim` / `argmax` / `argmin` give the first index of the
extreme (`core.arg_reduce`), as torch does. `sort` and `topk` use core's
stable sort: among equal values the lower index comes first. torch's own
unstable sort and its topk may order ties otherwise; values always agree,
and indices agree wherever the values differ.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Attribute, SSAValue

from rung.dialects import core
from rung.dialects.dtypes import bf16, f16, f32, i1, i64
from rung.dialects.torch import TorchOp
from rung.dialects.torch import generated_ops as aten
from rung.lowering.kit import (
    CoreBuilder,
    LoweringError,
    element_of,
    int_attr,
    normalize_axis,
    ranked_shape,
    tensor,
)

from .linalg import fitted
from .registry import Results, lowers


def _axes(dims: object, rank: int, empty_is_all: bool = True) -> list[int]:
    """The dims an op reduces, sorted and non-negative: `None` is every dim, and so is
    `[]` unless `empty_is_all` is false. A 0-d input has none (torch accepts 0 and -1)."""
    if isinstance(dims, int):
        dims = [dims]
    if dims is None or (not dims and empty_is_all):
        return list(range(rank))
    if not isinstance(dims, list) or not all(isinstance(d, int) for d in dims):
        raise LoweringError(f"the dims to reduce must be constants, got {dims!r}")
    if rank == 0:
        for d in dims:
            normalize_axis(d, 1)
        return []
    return sorted({normalize_axis(d, rank) for d in dims})


def _keep(b: CoreBuilder, reduced: SSAValue, x: SSAValue, axes: Sequence[int]) -> SSAValue:
    """`reduced` with the reduced dims of `x` back as size 1 (keepdim=True)."""
    sizes = [1 if i in axes else d for i, d in enumerate(b.dims(x))]
    return b.reshape_to(reduced, sizes)


def _finish(
    b: CoreBuilder, reduced: SSAValue, x: SSAValue, axes: Sequence[int], op: TorchOp
) -> SSAValue:
    """The reduction in the op's result type, its dims kept where `keepdim` asks."""
    declared = op.results[0].type
    reduced = b.cast(reduced, element_of(declared))
    if op.SCHEMA.arg("keepdim") is not None and op.arg("keepdim"):
        reduced = _keep(b, reduced, x, axes)
    return fitted(b, reduced, declared)


def _reduce(b: CoreBuilder, fn: str, x: SSAValue, axes: Sequence[int]) -> SSAValue:
    """core.reduce, or `x` itself when there is nothing to reduce."""
    return b.reduce(fn, x, axes) if axes else x


def _compute_type(element: Attribute) -> Attribute:
    """Where sums of `element` accumulate: f32 for the half-precision floats."""
    return f32 if element in (f16, bf16) else element


def _input(b: CoreBuilder, op: TorchOp) -> SSAValue:
    """The input cast to the result's element type (`dtype=`, integer promotion), in the
    type sums accumulate in."""
    element = element_of(op.results[0].type)
    return b.cast(op.self_, _compute_type(element))  # type: ignore[attr-defined]


# ---- sum, mean, prod, amax, amin, any -----------------------------------------------------


@lowers(aten.AtenSumDimIntListOp, aten.AtenSumOp)
def sum_(b: CoreBuilder, op: aten.AtenSumDimIntListOp | aten.AtenSumOp) -> Results:
    x = op.self_
    axes = _axes(op.arg("dim") if isinstance(op, aten.AtenSumDimIntListOp) else None, _rank(x))
    return [_finish(b, _reduce(b, "sum", _input(b, op), axes), x, axes, op)]


@lowers(aten.AtenMeanDimOp, aten.AtenMeanOp)
def mean(b: CoreBuilder, op: aten.AtenMeanDimOp | aten.AtenMeanOp) -> Results:
    """The sum over the count of what it adds, the count read at run time over `?` dims."""
    x = op.self_
    axes = _axes(op.arg("dim") if isinstance(op, aten.AtenMeanDimOp) else None, _rank(x))
    total = _reduce(b, "sum", _input(b, op), axes)
    return [_finish(b, b.binary("div", total, b.count(x, axes, total)), x, axes, op)]


@lowers(aten.AtenProdOp, aten.AtenProdDimIntOp)
def prod(b: CoreBuilder, op: aten.AtenProdOp | aten.AtenProdDimIntOp) -> Results:
    x = op.self_
    axes = _axes(op.arg("dim") if isinstance(op, aten.AtenProdDimIntOp) else None, _rank(x))
    return [_finish(b, _reduce(b, "prod", _input(b, op), axes), x, axes, op)]


@lowers(aten.AtenAmaxOp, aten.AtenAminOp, aten.AtenMaxOp, aten.AtenMinOp)
def amax(b: CoreBuilder, op: aten.AtenAmaxOp | aten.AtenAminOp) -> Results:
    """amax / amin over dims; `max` / `min` without a dim over all of them, to 0-d."""
    x = op.self_
    whole = isinstance(op, aten.AtenMaxOp | aten.AtenMinOp)
    axes = list(range(_rank(x))) if whole else _axes(op.arg("dim"), _rank(x))
    fn = "max" if isinstance(op, aten.AtenAmaxOp | aten.AtenMaxOp) else "min"
    return [_finish(b, _reduce(b, fn, x, axes), x, axes, op)]


@lowers(aten.AtenAnyOp, aten.AtenAnyDimOp, aten.AtenAnyDimsOp)
def any_(b: CoreBuilder, op: aten.AtenAnyOp | aten.AtenAnyDimOp | aten.AtenAnyDimsOp) -> Results:
    """Whether any element is non-zero; `any.dims` with `[]` reduces nothing."""
    x = op.self_
    dims = None if isinstance(op, aten.AtenAnyOp) else op.arg("dim")
    axes = _axes(dims, _rank(x), empty_is_all=not isinstance(op, aten.AtenAnyDimsOp))
    flags = x if element_of(x.type) == i1 else b.compare("ne", x, b.splat(0, x))
    return [_finish(b, _reduce(b, "or", flags, axes), x, axes, op)]


# ---- variance -------------------------------------------------------------------------------


def _correction(op: TorchOp) -> float:
    """The divisor's correction: `correction` (1 when absent), or `unbiased` of var.dim."""
    if isinstance(op, aten.AtenVarDimOp):
        return 1 if op.arg("unbiased") else 0
    value = op.arg("correction")
    if value is None:
        return 1
    if not isinstance(value, int | float):
        raise LoweringError(f"correction must be a number known before the run, got {value!r}")
    return value


def _variance(
    b: CoreBuilder, x: SSAValue, axes: Sequence[int], correction: float
) -> tuple[SSAValue, SSAValue]:
    """(variance, mean) over `axes`: the squared deviations from the mean summed and divided
    by max(0, N - correction), as torch does (N = 1, correction 1 gives nan or inf)."""
    total = _reduce(b, "sum", x, axes)
    count = b.count(x, axes, total)
    average = b.binary("div", total, count)
    kept = [i for i in range(_rank(x)) if i not in axes]
    deviation = b.binary("sub", x, b.broadcast_in_dim(average, kept, x))
    squares = _reduce(b, "sum", b.binary("mul", deviation, deviation), axes)
    reduced = [ranked_shape(x)[a] for a in axes]
    if all(d >= 0 for d in reduced):
        divisor = b.splat(max(float(np.prod(reduced)) - correction, 0), squares)
    elif correction == 0:
        divisor = count
    else:
        divisor = b.binary("sub", count, b.splat(correction, count))
        divisor = b.binary("max", divisor, b.splat(0, divisor))
    return b.binary("div", squares, divisor), average


@lowers(aten.AtenVarCorrectionOp, aten.AtenVarDimOp)
def var(b: CoreBuilder, op: aten.AtenVarCorrectionOp | aten.AtenVarDimOp) -> Results:
    x = op.self_
    axes = _axes(op.arg("dim"), _rank(x))
    variance, _ = _variance(b, _input(b, op), axes, _correction(op))
    return [_finish(b, variance, x, axes, op)]


@lowers(aten.AtenVarMeanCorrectionOp)
def var_mean(b: CoreBuilder, op: aten.AtenVarMeanCorrectionOp) -> Results:
    x = op.self_
    axes = _axes(op.arg("dim"), _rank(x))
    variance, average = _variance(b, _input(b, op), axes, _correction(op))
    results = []
    for value, declared in zip((variance, average), op.results, strict=True):
        value = b.cast(value, element_of(declared.type))
        if op.arg("keepdim"):
            value = _keep(b, value, x, axes)
        results.append(fitted(b, value, declared.type))
    return results


# ---- max / min along a dim, argmax, argmin -----------------------------------------------


def _arg_reduce(b: CoreBuilder, fn: str, x: SSAValue, axis: int) -> SSAValue:
    """The first index (i64) of the max/min along `axis`, which the result drops."""
    shape = ranked_shape(x)
    if shape[axis] == 0:
        raise LoweringError(f"arg{fn} of an empty dim has no answer")
    new = core.ArgReduceOp.create(
        operands=[x],
        result_types=[tensor(i64, [d for i, d in enumerate(shape) if i != axis])],
        properties={"fn": StringAttr(fn), "axis": int_attr(axis), "last": int_attr(0)},
    )
    return b.insert(new).results[0]


@lowers(aten.AtenMaxDimOp, aten.AtenMinDimOp)
def max_dim(b: CoreBuilder, op: aten.AtenMaxDimOp | aten.AtenMinDimOp) -> Results:
    """(values, indices) of the max/min along `dim`; ties give the first index."""
    x = op.self_
    fn = "max" if isinstance(op, aten.AtenMaxDimOp) else "min"
    axes = _axes(op.arg("dim"), _rank(x))
    if not axes:  # a 0-d input: itself, at index 0
        return [x, b.scalar(0, i64)]
    values = b.reduce(fn, x, axes)
    indices = _arg_reduce(b, fn, x, axes[0])
    keep = bool(op.arg("keepdim"))
    results = []
    for value, declared in zip((values, indices), op.results, strict=True):
        if keep:
            value = _keep(b, value, x, axes)
        results.append(fitted(b, value, declared.type))
    return results


@lowers(aten.AtenArgmaxOp, aten.AtenArgminOp)
def argmax(b: CoreBuilder, op: aten.AtenArgmaxOp | aten.AtenArgminOp) -> Results:
    """The first index of the max/min along `dim`; over the flattened input without one."""
    x = op.self_
    fn = "max" if isinstance(op, aten.AtenArgmaxOp) else "min"
    rank = _rank(x)
    dim = op.arg("dim")
    keep = bool(op.arg("keepdim"))
    if dim is None:
        index = _arg_reduce(b, fn, _flat(b, x), 0)
        if keep:
            index = b.reshape(index, tensor(i64, [1] * rank))
        return [fitted(b, index, op.result.type)]
    axes = _axes(dim, rank)
    if not axes:
        return [b.scalar(0, i64)]
    index = _arg_reduce(b, fn, x, axes[0])
    if keep:
        index = _keep(b, index, x, axes)
    return [fitted(b, index, op.result.type)]


def _flat(b: CoreBuilder, x: SSAValue) -> SSAValue:
    """`x` as a vector, its length read at run time where a dim is dynamic."""
    shape = ranked_shape(x)
    el = element_of(x.type)
    if all(d >= 0 for d in shape):
        return b.reshape(x, tensor(el, [int(np.prod(shape, dtype=np.int64))]))
    count = b.reshape(b.reduce("prod", b.shape_of(x), [0]), tensor(i64, [1]))
    return b.reshape(x, tensor(el, [-1]), count)


# ---- cumulative sums, sorting ----------------------------------------------------------------


@lowers(aten.AtenCumsumOp)
def cumsum(b: CoreBuilder, op: aten.AtenCumsumOp) -> Results:
    x = op.self_
    axes = _axes(op.arg("dim"), _rank(x))
    value = _input(b, op)
    if axes:
        new = core.CumulativeOp.create(
            operands=[value],
            result_types=[value.type],
            properties={
                "fn": StringAttr("sum"),
                "axis": int_attr(axes[0]),
                "exclusive": int_attr(0),
                "reverse": int_attr(0),
            },
        )
        value = b.insert(new).results[0]
    return [fitted(b, b.cast(value, element_of(op.result.type)), op.result.type)]


def _sort(b: CoreBuilder, x: SSAValue, axis: int, descending: bool) -> tuple[SSAValue, SSAValue]:
    """core.sort along `axis`: stable, so equal values keep their order."""
    new = core.SortOp.create(
        operands=[x],
        result_types=[x.type, tensor(i64, ranked_shape(x))],
        properties={"axis": int_attr(axis), "descending": int_attr(int(descending))},
    )
    values, indices = b.insert(new).results
    return values, indices


@lowers(aten.AtenSortOp, aten.AtenSortStableOp)
def sort(b: CoreBuilder, op: aten.AtenSortOp) -> Results:
    """A stable sort, which also serves `sort.stable` (and any unstable order)."""
    x = op.self_
    axes = _axes(op.arg("dim"), _rank(x))
    if not axes:
        return [x, b.scalar(0, i64)]
    values, indices = _sort(b, x, axes[0], bool(op.arg("descending")))
    return [fitted(b, values, op.values.type), fitted(b, indices, op.indices.type)]


@lowers(aten.AtenTopkOp)
def topk(b: CoreBuilder, op: aten.AtenTopkOp) -> Results:
    """The first k of a stable sort (descending for the largest); `sorted=False` allows
    any order, and the sorted one is one of them.

    k may be a size only the run knows, and the dim a dynamic one: the run then
    checks 0 <= k <= the dim before anything reads past it.
    """
    x = op.self_
    shape = ranked_shape(x)
    rank = len(shape)
    if rank == 0:
        raise LoweringError("topk of a 0-d tensor is not supported")
    axis = normalize_axis(op.arg("dim"), rank)  # type: ignore[arg-type]
    k = op.arg("k")
    if isinstance(k, int):
        if k < 0 or (shape[axis] >= 0 and k > shape[axis]):
            raise LoweringError(f"k={k} is out of range for a dim of size {shape[axis]}")
        if shape[axis] < 0:
            x = _checked_k(b, x, b.constant(np.array([k], np.int64)), axis)
        sorted_ = _sort(b, x, axis, bool(op.arg("largest")))
        sizes = [k if i == axis else -1 for i in range(rank)]  # -1: the whole dim
        return [
            fitted(b, b.slice(v, [0] * rank, sizes), r.type)
            for v, r in zip(sorted_, op.results, strict=True)
        ]
    if not isinstance(k, SSAValue):
        raise LoweringError(f"k must be a size, got {k!r}")
    k_vector = b.reshape(b.cast(k, i64), tensor(i64, [1]))
    x = _checked_k(b, x, k_vector, axis)
    on_axis = b.constant(np.array([i == axis for i in range(rank)]))
    sizes = b.select(on_axis, b.broadcast_to(k_vector, tensor(i64, [rank])), b.shape_of(x))
    sorted_ = _sort(b, x, axis, bool(op.arg("largest")))
    return [
        fitted(b, _leading(b, v, sizes, axis), r.type)
        for v, r in zip(sorted_, op.results, strict=True)
    ]


def _checked_k(b: CoreBuilder, x: SSAValue, k: SSAValue, axis: int) -> SSAValue:
    """`x` once the run has checked that 0 <= k (a 1-element i64 tensor) <= its dim `axis`."""
    size = b.shape_vector([b.dims(x)[axis]])
    fits = b.binary(
        "and", b.compare("ge", k, b.constant(np.array([0], np.int64))), b.compare("le", k, size)
    )
    return b.check(x, fits, f"topk: k is negative or larger than dim {axis}", culprit=k)


def _leading(b: CoreBuilder, x: SSAValue, sizes: SSAValue, axis: int) -> SSAValue:
    """The first `sizes[axis]` entries of `x` along `axis` (its other dims whole)."""
    shape = ranked_shape(x)
    rank = len(shape)
    result = tensor(element_of(x.type), [-1 if i == axis else d for i, d in enumerate(shape)])
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


@lowers(aten.Aten_LocalScalarDenseOp)
def local_scalar_dense(b: CoreBuilder, op: aten.Aten_LocalScalarDenseOp) -> Results:
    """`tensor.item()`: the one element as a 0-d tensor of the scalar's type."""
    x = op.self_
    shape = ranked_shape(x)
    if any(d != 1 for d in shape):
        raise LoweringError(f"item() needs a tensor of one element, got {x.type}")
    element = element_of(x.type)
    value = b.reshape(x, tensor(element, []))
    result = op.result.type
    if result == i1 and element != i1:
        return [b.compare("ne", value, b.splat(0, value))]
    return [b.cast(value, result)]


def _rank(x: SSAValue) -> int:
    return len(ranked_shape(x))


__all__: list[str] = []
