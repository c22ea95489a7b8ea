"""Tensor-manipulation ONNX ops → core: reshapes, slicing, gather/scatter, padding, shapes.

Most of these ops only move data, so they become one or a few core data
movement ops. ONNX resolves many things at run time that core wants
explicit: negative indices are normalized with `select(idx < 0, idx + dim,
idx)`, Slice's starts/ends are clamped here, and shapes, axes, pads and
repeats must be constants (the result types inferred by ONNX are static in
the common case). Where a dynamic form would need a shape we cannot build,
the handler raises `LoweringError` so the legality check names the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import StringAttr, i64
from xdsl.ir import Attribute, SSAValue

from rung.dialects import core
from rung.dialects.dtypes import numpy_dtype
from rung.dialects.onnx import OnnxOp
from rung.dialects.onnx import generated_ops as onnx
from rung.lowering.kit import (
    CoreBuilder,
    LoweringError,
    Size,
    constant_array,
    constant_ints,
    declared,
    element_of,
    int_attr,
    is_static,
    normalize_axis,
    one_value,
    ranked_shape,
    shape_of_type,
    tensor,
)

from .registry import Results, lowers


def _static_shape(v: SSAValue | Attribute, what: str) -> tuple[int, ...]:
    shape = ranked_shape(v)
    if any(d < 0 for d in shape):
        raise LoweringError(f"{what} needs a static shape, got {list(shape)}")
    return shape


def _reshape_to_result(
    b: CoreBuilder, x: SSAValue, out: Attribute, target: Sequence[int] | None = None
) -> SSAValue:
    """Reshape to the op's inferred result type `out`, or to `target` computed here.

    Reshape-like ops (Reshape, Flatten, Squeeze, Unsqueeze) only relabel the
    row-major order; with a static result shape, core.reshape says
    everything. When ONNX inference left the result dynamic but the handler
    could compute it, the static reshape is retyped to the declared type.
    """
    if is_static(out):
        return b.reshape(x, out)
    if target is None or any(d < 0 for d in target):
        raise LoweringError(f"needs a static result shape, got {out}")
    return b.retype(b.reshape(x, tensor(element_of(x.type), target)), out)


def _scalar_of(b: CoreBuilder, v: SSAValue) -> SSAValue:
    """A one-element tensor as a rank-0 tensor."""
    return b.reshape(v, tensor(element_of(v.type), []))


# ---- reshapes ---------------------------------------------------------------------------


@lowers(onnx.ReshapeOp)
def reshape(b: CoreBuilder, op: onnx.ReshapeOp) -> Results:
    x, out = op.data, op.reshaped.type
    target = constant_ints(op.shape)
    if is_static(out):
        if target is not None or is_static(op.shape.type) and not ranked_shape(op.shape)[0]:
            return [b.reshape(x, out)]
        # The declared shape is a claim about a shape the run computes: it is checked.
        return [declared(b, _runtime_reshape(b, op, free=True), out, "Reshape")]
    in_shape = ranked_shape(x)
    if target is None or any(d < 0 for d in in_shape):
        return [_runtime_reshape(b, op)]
    if not op.attr("allowzero"):
        target = [in_shape[i] if t == 0 else t for i, t in enumerate(target)]
    if -1 in target:
        known = int(np.prod([t for t in target if t != -1]))
        total = int(np.prod(in_shape))
        target = [total // known if t == -1 else t for t in target] if known else target
    return [_reshape_to_result(b, x, out, target)]


def _runtime_reshape(b: CoreBuilder, op: onnx.ReshapeOp, free: bool = False) -> SSAValue:
    """Reshape to a shape known only at run time, with ONNX's 0 and -1 rules.

    0 copies the input's dim (unless allowzero), and -1 takes what is left:
    both are computed with core ops on the shape tensors. The run checks that
    the shape has at most one -1 and no other negative size, and that it holds
    as many elements as the input. With `free`, every result dim is `?` (the
    caller checks the declared ones).
    """
    x, shape_v, out = op.data, op.shape, op.reshaped.type
    # The shape operand is 1-D: its length is the result rank, else the declared rank
    # says it (and the run checks the operand's length).
    rank_out = _result_rank(shape_v, out, "Reshape")
    shape_v = _vector_of(b, shape_v, rank_out, "Reshape's shape")
    if shape_of_type(out) is None or free:
        out = tensor(element_of(x.type), [-1] * rank_out)
    rank_in = len(ranked_shape(x))
    in_shape = b.shape_of(x)
    target = shape_v
    if not op.attr("allowzero") and rank_in:
        # Position i takes input dim i where the target says 0 (i < rank_in).
        n = min(rank_in, rank_out)
        head = b.slice(in_shape, [0], [n], [1]) if n < rank_in else in_shape
        if n < rank_out:
            pad = b.constant(np.zeros(rank_out - n, np.int64))
            head = b.insert(
                core.ConcatOp.create(
                    operands=[head, pad],
                    result_types=[tensor(i64, [rank_out])],
                    properties={"axis": int_attr(0)},
                )
            ).results[0]
        zero = b.constant(np.zeros(rank_out, np.int64))
        target = b.select(b.compare("eq", target, zero), head, target)
    minus = b.constant(np.full(rank_out, -1, np.int64))
    is_free = b.compare("eq", target, minus)
    known = b.reduce(
        "prod", b.select(is_free, b.constant(np.ones(rank_out, np.int64)), target), [0]
    )
    total = b.reduce("prod", in_shape, [0])
    # A 0 among the known sizes leaves nothing for -1 to take; dividing by 1 keeps
    # integer division by zero (a trap in C) out of the run.
    known = b.binary("max", known, b.splat(1, known))
    rest = b.broadcast_to(b.binary("div", total, known), tensor(i64, [rank_out]))
    target = b.select(is_free, rest, target)
    target = _checked_sizes(b, target, shape_v, is_free, total)
    new = core.ReshapeOp.create(operands=[x, target], result_types=[out])
    return b.insert(new).results[0]


def _checked_sizes(
    b: CoreBuilder, target: SSAValue, asked: SSAValue, is_free: SSAValue, total: SSAValue
) -> SSAValue:
    """`target`, once the run has checked the shape asked for: one -1 at most, no other
    negative size, and as many elements as the input (else the result would be read
    past the input's buffer, or from part of it)."""
    message = "Reshape: the shape may hold one -1 and no other negative size"
    constant = constant_array(asked)
    if constant is not None:
        if (constant < -1).any() or (constant == -1).sum() > 1:
            raise LoweringError(f"{message}, got {constant.tolist()}")
    else:
        frees = b.reduce("sum", b.cast(is_free, i64), [0])
        valid = b.binary(
            "and",
            b.compare("ge", asked, b.splat(-1, asked)),
            b.broadcast_to(b.compare("le", frees, b.scalar(1, i64)), is_free.type),
        )
        target = b.check(target, valid, message)
    same = b.compare("eq", b.reduce("prod", target, [0]), total)
    return b.check(target, same, "Reshape: the shape does not hold as many elements as the input")


def _result_rank(shape_v: SSAValue, out: Attribute, what: str) -> int:
    """The rank a 1-D shape operand gives the result: its static length, else the rank of
    the declared result type (the caller checks the length at run time)."""
    shape = ranked_shape(shape_v)
    if len(shape) != 1:
        raise LoweringError(f"{what}'s shape must be a 1-D tensor, got {shape_v.type}")
    if shape[0] >= 0:
        return shape[0]
    declared = shape_of_type(out)
    if declared is None:
        raise LoweringError(f"{what} to a shape of unknown length, with a result of unknown rank")
    return len(declared)


def _flatten_target(op: onnx.FlattenOp, shape: tuple[int, ...]) -> list[int] | None:
    axis = int(op.attr("axis"))  # type: ignore[call-overload]
    axis = axis + len(shape) if axis < 0 else axis
    return [int(np.prod(shape[:axis])), int(np.prod(shape[axis:]))]


def _squeeze_target(op: onnx.SqueezeOp, shape: tuple[int, ...]) -> list[int] | None:
    if op.axes is None:
        return [d for d in shape if d != 1]
    axes = constant_ints(op.axes)
    if axes is None:
        return None
    drop = {normalize_axis(a, len(shape)) for a in axes}
    return [d for i, d in enumerate(shape) if i not in drop]


def _unsqueeze_target(op: onnx.UnsqueezeOp, shape: tuple[int, ...]) -> list[int] | None:
    axes = constant_ints(op.axes)
    if axes is None:
        return None
    rank = len(shape) + len(axes)
    ones = {normalize_axis(a, rank) for a in axes}
    rest = iter(shape)
    return [1 if i in ones else next(rest) for i in range(rank)]


def _runtime_flatten(b: CoreBuilder, op: onnx.FlattenOp) -> SSAValue:
    """Flatten with dynamic dims: [prod(dims[:axis]), prod(dims[axis:])] at run time."""
    x = op.input
    rank = len(ranked_shape(x))
    axis = int(op.attr("axis"))  # type: ignore[call-overload]
    axis = axis + rank if axis < 0 else axis
    dims = b.shape_of(x)
    parts = []
    for lo, hi in ((0, axis), (axis, rank)):
        if hi > lo:
            piece = b.slice(dims, [lo], [hi - lo], [1])
            parts.append(b.reshape(b.reduce("prod", piece, [0]), tensor(i64, [1])))
        else:
            parts.append(b.constant(np.ones(1, np.int64)))
    shape = b.insert(
        core.ConcatOp.create(
            operands=parts,
            result_types=[tensor(i64, [2])],
            properties={"axis": int_attr(0)},
        )
    ).results[0]
    return b.insert(
        core.ReshapeOp.create(operands=[x, shape], result_types=[op.output.type])
    ).results[0]


def _runtime_squeeze(b: CoreBuilder, op: onnx.SqueezeOp) -> SSAValue:
    """Squeeze of a dynamically shaped input: `shape_of(x)` without the squeezed dims."""
    x = op.data
    shape = ranked_shape(x)
    axes = constant_ints(op.axes)
    if axes is None:
        return _squeeze_at_run_time(b, op)
    in_shape = b.shape_of(x)
    drop = {normalize_axis(a, len(shape)) for a in axes}
    pieces = [b.slice(in_shape, [i], [1], [1]) for i in range(len(shape)) if i not in drop]
    return _reshape_to_pieces(b, x, pieces, op.squeezed.type)


def _runtime_unsqueeze(b: CoreBuilder, op: onnx.UnsqueezeOp) -> SSAValue:
    """Unsqueeze of a dynamically shaped input: `shape_of(x)` with 1s inserted."""
    x = op.data
    shape = ranked_shape(x)
    axes = constant_ints(op.axes)
    if axes is None:
        return _unsqueeze_at_run_time(b, op)
    in_shape = b.shape_of(x)
    pieces: list[SSAValue] = []
    rank = len(shape) + len(axes)
    ones = {normalize_axis(a, rank) for a in axes}
    src = 0
    for i in range(rank):
        if i in ones:
            pieces.append(b.constant(np.array([1], np.int64)))
        else:
            pieces.append(b.slice(in_shape, [src], [1], [1]))
            src += 1
    return _reshape_to_pieces(b, x, pieces, op.expanded.type)


def _squeeze_at_run_time(b: CoreBuilder, op: onnx.SqueezeOp) -> SSAValue:
    """Squeeze by axes known at run time (or, without axes, of the dims that are 1 then).

    The result rank is `rank - len(axes)` when the axes' length is static, else the
    declared one; the run checks the axes against it, and that squeezed dims are 1.
    """
    x, axes_v, out = op.data, op.axes, op.squeezed.type
    rank = len(ranked_shape(x))
    dims = b.shape_of(x)
    one = b.splat(1, dims)
    if axes_v is None and shape_of_type(out) is None:
        return _squeeze_static_ones(b, x, out)
    if axes_v is None:
        rank_out = _declared_rank(out, "Squeeze of a dynamic input without axes")
        drop = b.cast(b.compare("eq", dims, one), i64)
    else:
        count = ranked_shape(axes_v)[0]
        rank_out = rank - count if count >= 0 else _declared_rank(out, "Squeeze by run-time axes")
        drop = _axes_mask(b, axes_v, rank, rank - rank_out, "Squeeze")
        squeezable = b.binary(
            "or", b.compare("eq", drop, b.splat(0, drop)), b.compare("eq", dims, one)
        )
        drop = b.check(drop, squeezable, "Squeeze: a squeezed dim is not 1")
    keep = b.binary("sub", b.splat(1, drop), drop)
    fits = b.compare("eq", b.reduce("sum", keep, [0]), b.scalar(rank_out, i64))
    keep = b.check(keep, fits, f"Squeeze: the result has rank {rank_out}")
    return _reshape_run_time(b, x, _compacted(b, dims, keep, rank_out), out)


def _unsqueeze_at_run_time(b: CoreBuilder, op: onnx.UnsqueezeOp) -> SSAValue:
    """Unsqueeze by axes known at run time: 1 where the axes say, x's dims in order elsewhere.

    The result rank is `rank + len(axes)` when the axes' length is static, else the
    declared one; the run checks the axes against it.
    """
    x, axes_v, out = op.data, op.axes, op.expanded.type
    rank = len(ranked_shape(x))
    count = ranked_shape(axes_v)[0]
    rank_out = rank + count if count >= 0 else _declared_rank(out, "Unsqueeze by run-time axes")
    ones = _axes_mask(b, axes_v, rank_out, rank_out - rank, "Unsqueeze")
    if rank == 0:
        return _reshape_run_time(b, x, b.splat(1, ones), out)
    # A kept position takes the input dim numbered by the kept positions before it.
    keep = b.binary("sub", b.splat(1, ones), ones)
    source = b.binary("min", _count_before(b, keep), b.splat(rank - 1, keep))
    picked = b.gather(b.shape_of(x), source, 0)
    shape = b.select(b.compare("eq", ones, b.splat(1, ones)), b.splat(1, ones), picked)
    return _reshape_run_time(b, x, shape, out)


def _squeeze_static_ones(b: CoreBuilder, x: SSAValue, out: Attribute) -> SSAValue:
    """Squeeze without axes, with a result of unknown rank: the dims that are 1 statically.

    Whether a `?` dim is 1 decides the result rank, which nothing else tells; the
    compiled rank keeps the `?` dims, and the run fails if one of them is 1.
    """
    shape = ranked_shape(x)
    open_dims = [i for i, d in enumerate(shape) if d < 0]
    dims = b.shape_of(x)
    if open_dims:
        sizes = b.gather(dims, b.constant(np.array(open_dims, np.int64)), 0)
        not_one = b.compare("ne", sizes, b.splat(1, sizes))
        message = "Squeeze without axes: a dynamic dim is 1, which the compiled rank excludes"
        dims = b.check(dims, not_one, message)
    pieces = [b.slice(dims, [i], [1], [1]) for i, d in enumerate(shape) if d != 1]
    kept = tensor(element_of(x.type), [d for d in shape if d != 1])
    return b.retype(_reshape_to_pieces(b, x, pieces, kept), out)


def _declared_rank(out: Attribute, what: str) -> int:
    declared = shape_of_type(out)
    if declared is None:
        raise LoweringError(f"{what} needs a result of known rank")
    return len(declared)


def _axes_mask(b: CoreBuilder, axes_v: SSAValue, rank: int, count: int, what: str) -> SSAValue:
    """1 at the dims that run-time `axes` name (negative ones count from the end), else 0.

    The run checks that there are `count` axes, each in `[-rank, rank)`, none repeated.
    """
    axes = b.cast(axes_v, i64)
    if len(ranked_shape(axes)) != 1:
        raise LoweringError(f"{what}'s axes must be a 1-D tensor, got {axes_v.type}")
    in_range = b.binary(
        "and",
        b.compare("ge", axes, b.splat(-rank, axes)),
        b.compare("lt", axes, b.splat(rank, axes)),
    )
    axes = b.check(axes, in_range, f"{what}: an axis is out of range for rank {rank}", culprit=axes)
    length = b.compare("eq", b.shape_of(axes), b.constant(np.array([count], np.int64)))
    axes = b.check(axes, length, f"{what} needs {count} axes")
    axes = b.wrap_indices(axes, rank)
    mask = b.insert(
        core.ScatterElementsOp.create(
            operands=[b.constant(np.zeros(rank, np.int64)), axes, b.splat(1, axes)],
            result_types=[tensor(i64, [rank])],
            properties={"axis": int_attr(0), "reduction": StringAttr("none")},
        )
    ).results[0]
    distinct = b.compare("eq", b.reduce("sum", mask, [0]), b.scalar(count, i64))
    return b.check(mask, distinct, f"{what}'s axes must not repeat")


def _count_before(b: CoreBuilder, flags: SSAValue) -> SSAValue:
    """`out[j] = sum(flags[:j])` for a static-length 1-D i64 `flags`."""
    (n,) = ranked_shape(flags)
    square = tensor(i64, [n, n])
    rows = b.insert(
        core.BroadcastOp.create(
            operands=[flags], result_types=[square], properties={"dims": core.ints([1])}
        )
    ).results[0]
    before = b.constant(np.tri(n, n, -1, dtype=bool))  # before[j, t] = t < j
    return b.reduce("sum", b.select(before, rows, b.splat(0, rows)), [1])


def _compacted(b: CoreBuilder, values: SSAValue, keep: SSAValue, n: int) -> SSAValue:
    """The entries of static-length 1-D `values` where `keep` is 1, in order, as `n` entries."""
    (m,) = ranked_shape(values)
    if n == 0:
        return b.constant(np.zeros(0, np.int64))
    grid = tensor(i64, [n, m])

    def across(v: SSAValue) -> SSAValue:
        new = core.BroadcastOp.create(
            operands=[v], result_types=[grid], properties={"dims": core.ints([1])}
        )
        return b.insert(new).results[0]

    slot = b.constant(np.repeat(np.arange(n, dtype=np.int64)[:, None], m, axis=1))
    hit = b.binary(
        "and",
        b.compare("eq", across(_count_before(b, keep)), slot),
        b.compare("eq", across(keep), b.splat(1, slot)),
    )
    return b.reduce("sum", b.select(hit, across(values), b.splat(0, slot)), [1])


def _reshape_run_time(b: CoreBuilder, x: SSAValue, shape: SSAValue, out: Attribute) -> SSAValue:
    """`x` reshaped to the 1-D run-time `shape`, then given the declared type `out`."""
    (rank,) = ranked_shape(shape)
    new = core.ReshapeOp.create(
        operands=[x, shape], result_types=[tensor(element_of(x.type), [-1] * rank)]
    )
    return b.retype(b.insert(new).results[0], out)


def _reshape_to_pieces(
    b: CoreBuilder, x: SSAValue, pieces: Sequence[SSAValue], out: Attribute
) -> SSAValue:
    """Reshape `x` to the run-time shape that the 1-element `pieces` spell out."""
    if not pieces:
        return b.reshape(x, tensor(element_of(x.type), []))
    joined = pieces[0]
    if len(pieces) > 1:
        joined = b.insert(
            core.ConcatOp.create(
                operands=list(pieces),
                result_types=[tensor(i64, [len(pieces)])],
                properties={"axis": int_attr(0)},
            )
        ).results[0]
    new = core.ReshapeOp.create(operands=[x, joined], result_types=[out])
    return b.insert(new).results[0]


_RESHAPE_LIKE: dict[
    type[OnnxOp],
    tuple[
        Callable[[Any, tuple[int, ...]], list[int] | None],
        Callable[[CoreBuilder, Any], SSAValue],
    ],
] = {
    onnx.FlattenOp: (_flatten_target, _runtime_flatten),
    onnx.SqueezeOp: (_squeeze_target, _runtime_squeeze),
    onnx.UnsqueezeOp: (_unsqueeze_target, _runtime_unsqueeze),
}
"""Per op: its static result shape from the input's (None when unknown here), and
its reshape to a shape computed at run time."""


@lowers(*_RESHAPE_LIKE)
def reshape_like(b: CoreBuilder, op: onnx.FlattenOp | onnx.SqueezeOp | onnx.UnsqueezeOp) -> Results:
    static_target, runtime = _RESHAPE_LIKE[type(op)]
    x, out = op.operands[0], op.results[0].type
    shape = ranked_shape(x)
    target = static_target(op, shape) if all(d >= 0 for d in shape) else None
    if target is None and not is_static(out):
        return [runtime(b, op)]
    return [_reshape_to_result(b, x, out, target)]


@lowers(onnx.TransposeOp)
def transpose(b: CoreBuilder, op: onnx.TransposeOp) -> Results:
    x = op.data
    rank = len(ranked_shape(x))
    perm = op.attr("perm")
    perm_list = list(range(rank))[::-1] if perm is None else [int(p) for p in perm]  # type: ignore[attr-defined]
    return [b.transpose(x, [normalize_axis(p, rank) for p in perm_list])]


# ---- joining and splitting --------------------------------------------------------------


@lowers(onnx.ConcatOp)
def concat(b: CoreBuilder, op: onnx.ConcatOp) -> Results:
    inputs = list(op.inputs)
    out = op.concat_result.type
    axis = normalize_axis(int(op.attr("axis")), len(ranked_shape(out)))  # type: ignore[arg-type]
    # Empty inputs contribute nothing (ONNX allows them, e.g. a [0] shape piece).
    kept = [v for v in inputs if ranked_shape(v)[axis] != 0] or inputs[:1]
    if len(kept) == 1 and kept[0].type == out:
        return [kept[0]]
    new = core.ConcatOp.create(
        operands=kept, result_types=[out], properties={"axis": int_attr(axis)}
    )
    return [b.insert(new).results[0]]


@lowers(onnx.SplitOp)
def split(b: CoreBuilder, op: onnx.SplitOp) -> Results:
    x, split_v = op.input, op.split
    shape = ranked_shape(x)
    axis = normalize_axis(int(op.attr("axis")), len(shape))  # type: ignore[arg-type]
    n = shape[axis]
    outputs = len(op.outputs)
    result_dims = [ranked_shape(r)[axis] for r in op.outputs]
    if split_v is not None:
        sizes = constant_ints(split_v) or result_dims
        if any(d < 0 for d in sizes):
            return _runtime_split(b, op, axis)
    else:
        if n < 0:
            return _runtime_split(b, op, axis)
        num = op.attr("num_outputs") or outputs
        chunk = -(-n // int(num))  # type: ignore[call-overload]
        sizes = [min(chunk, max(n - i * chunk, 0)) for i in range(outputs)]
    if len(sizes) != outputs:
        raise LoweringError(f"Split into {len(sizes)} parts but the op has {outputs} outputs")
    results: list[SSAValue | None] = []
    offset = 0
    for size in sizes:
        start = [0] * len(shape)
        start[axis] = offset if size > 0 else 0
        size_list = [-1] * len(shape)
        size_list[axis] = size
        results.append(b.slice(x, start, size_list, [1] * len(shape)))
        offset += size
    return results


def _runtime_split(b: CoreBuilder, op: onnx.SplitOp, axis: int) -> Results:
    """Split by sizes known at run time: the `split` input, or equal parts of a dynamic dim.

    Equal parts are `ceil(n / outputs)` long, the last ones shorter (opset 18's
    rule). Each part is a core.slice with run-time start and size along `axis`;
    the run checks that given sizes are not negative and add up to the dim.
    """
    x = op.input
    rank = len(ranked_shape(x))
    outputs = len(op.outputs)
    dims = b.shape_of(x)
    n = b.slice(dims, [axis], [1])
    starts: list[SSAValue] = []
    sizes: list[SSAValue] = []
    if op.split is None:
        chunk = b.binary("div", b.binary("add", n, b.splat(outputs - 1, n)), b.splat(outputs, n))
        for i in range(outputs):
            offset = b.binary("min", b.binary("mul", chunk, b.splat(i, n)), n)
            starts.append(offset)
            sizes.append(b.binary("min", chunk, b.binary("sub", n, offset)))
    else:
        split = _vector_of(b, b.cast(op.split, i64), outputs, "Split's split")
        natural = b.compare("ge", split, b.splat(0, split))
        split = b.check(split, natural, "Split's sizes must not be negative", culprit=split)
        total = b.compare("eq", b.reduce("sum", split, [0]), _scalar_of(b, n))
        split = b.check(split, total, "Split's sizes must add up to the dim")
        for i in range(outputs):
            before = b.reduce("sum", b.slice(split, [0], [i]), [0]) if i else b.scalar(0, i64)
            starts.append(b.reshape(before, tensor(i64, [1])))
            sizes.append(b.slice(split, [i], [1]))
    at_axis = b.constant(np.arange(rank) == axis)
    zeros, ones = (b.constant(np.full(rank, v, np.int64)) for v in (0, 1))
    results: list[SSAValue | None] = []
    for start, size, out in zip(starts, sizes, op.outputs, strict=True):
        vector = tensor(i64, [rank])
        start_v = b.select(at_axis, b.broadcast_to(start, vector), zeros)
        size_v = b.select(at_axis, b.broadcast_to(size, vector), dims)
        part = [-1 if d == axis else s for d, s in enumerate(ranked_shape(x))]
        new = core.SliceOp.create(
            operands=[x, start_v, size_v, ones],
            result_types=[tensor(element_of(x.type), part)],
        )
        results.append(b.retype(b.insert(new).results[0], out.type))
    return results


@lowers(onnx.SliceOp)
def slice_(b: CoreBuilder, op: onnx.SliceOp) -> Results:
    x = op.data
    shape = ranked_shape(x)
    rank = len(shape)
    starts, ends = constant_ints(op.starts), constant_ints(op.ends)
    axes = constant_ints(op.axes) if op.axes is not None else None
    steps = constant_ints(op.steps) if op.steps is not None else None
    if (
        starts is None
        or ends is None
        or (op.axes is not None and axes is None)
        or (op.steps is not None and steps is None)
    ):
        return [_runtime_slice(b, op)]
    axes = list(range(len(starts))) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    start_all = [0] * rank
    size_all = [-1] * rank
    stride_all = [1] * rank
    for s, e, a, st in zip(starts, ends, axes, steps, strict=True):
        a = normalize_axis(a, rank)
        n = shape[a]
        if n < 0:
            return [_runtime_slice(b, op)]
        if st == 0:
            raise LoweringError("Slice step 0")
        s = s + n if s < 0 else s
        e = e + n if e < 0 else e
        if st > 0:
            s, e = min(max(s, 0), n), min(max(e, 0), n)
            size = max(0, -(-(e - s) // st))
        else:
            s, e = min(max(s, 0), n - 1), min(max(e, -1), n - 1)
            size = max(0, -(-(s - e) // -st))
        start_all[a] = s if size > 0 else 0
        size_all[a] = size
        stride_all[a] = st
    return [b.slice(x, start_all, size_all, stride_all)]


def _runtime_slice(b: CoreBuilder, op: onnx.SliceOp) -> SSAValue:
    """Slice with run-time starts/ends/axes/steps, or along dynamic dims.

    Starts are normalized and clamped at run time (`[0, n]`, or `[0, n-1]`
    for negative steps) and scattered into full-rank start/stride vectors.
    Sizes come from the result type where it is static, else they are
    computed like the starts: `max(0, ceil((end - start) / step))`.
    """
    x = op.data
    shape = ranked_shape(x)
    rank = len(shape)
    starts_v, ends_v, axes_v, steps_v, count = _slice_operands(b, op)
    vec = tensor(i64, [count])
    if axes_v is None:
        axes = (
            b.constant(np.arange(count, dtype=np.int64))
            if count >= 0
            else _iota_like(b, b.cast(starts_v, i64))
        )
    else:
        axes = b.wrap_indices(b.cast(axes_v, i64), rank, "Slice's axes")
    if steps_v is None:
        steps = b.constant(np.ones(count, np.int64)) if count >= 0 else b.splat(1, axes)
    else:
        steps = b.cast(steps_v, i64)
        if constant_array(steps_v) is None:
            nonzero = b.compare("ne", steps, b.splat(0, steps))
            steps = b.check(steps, nonzero, "Slice's steps must not be 0", culprit=steps)
    full_dims = (
        b.constant(np.array(shape, np.int64)) if all(d >= 0 for d in shape) else b.shape_of(x)
    )
    dims = b.insert(
        core.GatherOp.create(
            operands=[full_dims, axes], result_types=[vec], properties={"axis": int_attr(0)}
        )
    ).results[0]
    backwards = b.cast(b.compare("lt", steps, b.splat(0, steps)), i64)
    upper = b.binary("sub", dims, backwards)
    lower = b.binary("sub", b.splat(0, steps), backwards)

    def clamp(v: SSAValue) -> SSAValue:
        v = b.wrap_indices(b.cast(v, i64), dims)
        return b.binary("min", b.binary("max", v, lower), upper)

    starts = b.binary("max", clamp(starts_v), b.splat(0, steps))

    def spread(values: SSAValue, base: SSAValue) -> SSAValue:
        new = core.ScatterElementsOp.create(
            operands=[base, axes, values],
            result_types=[tensor(i64, [rank])],
            properties={"axis": int_attr(0), "reduction": StringAttr("none")},
        )
        return b.insert(new).results[0]

    out = op.output.type
    if is_static(out):
        sizes = b.constant(np.array(ranked_shape(out), np.int64))
    else:
        # ceil(span / step) for spans and steps of the same sign, else 0, written as
        # (span - sign) / step + 1 so that a huge step cannot overflow.
        span = b.binary("sub", clamp(ends_v), starts)
        sign = b.select(
            b.compare("lt", steps, b.splat(0, steps)), b.splat(-1, steps), b.splat(1, steps)
        )
        ahead = b.binary("div", b.binary("sub", span, sign), steps)
        size = b.select(
            b.compare("gt", b.binary("mul", span, sign), b.splat(0, span)),
            b.binary("add", ahead, b.splat(1, ahead)),
            b.splat(0, span),
        )
        sizes = spread(size, full_dims)
        if shape_of_type(out) is None:
            out = tensor(element_of(x.type), [-1] * rank)
    ones = b.constant(np.ones(rank, np.int64))
    zeros = b.constant(np.zeros(rank, np.int64))
    new = core.SliceOp.create(
        operands=[x, spread(starts, zeros), sizes, spread(steps, ones)], result_types=[out]
    )
    return b.insert(new).results[0]


def _slice_operands(
    b: CoreBuilder, op: onnx.SliceOp
) -> tuple[SSAValue, SSAValue, SSAValue | None, SSAValue | None, int]:
    """Slice's starts, ends, axes and steps, of one length: the `count` of sliced axes.

    One static length types them all (run-time lengths are checked against it);
    without any, `count` is -1 and the run checks that the lengths agree.
    """
    vectors = [op.starts, op.ends, op.axes, op.steps]
    lengths = []
    for v in vectors:
        if v is not None and len(ranked_shape(v)) != 1:
            raise LoweringError(f"Slice's starts, ends, axes and steps must be 1-D, got {v.type}")
        lengths.append(-1 if v is None else ranked_shape(v)[0])
    count = max(lengths)
    names = ("starts", "ends", "axes", "steps")
    if count >= 0:
        checked = [
            None if v is None else _vector_of(b, v, count, f"Slice's {name}")
            for v, name in zip(vectors, names, strict=True)
        ]
    else:
        length = b.shape_of(op.starts)
        message = "Slice's starts, ends, axes and steps must have one length"
        checked = [op.starts] + [
            None if v is None else b.check(v, b.compare("eq", b.shape_of(v), length), message)
            for v in vectors[1:]
        ]
    starts, ends, axes, steps = checked
    assert starts is not None and ends is not None
    return starts, ends, axes, steps, count


def _iota_like(b: CoreBuilder, v: SSAValue) -> SSAValue:
    """0, 1, … as long as the 1-D `v` (whose length is known at run time)."""
    n = b.reshape(b.shape_of(v), tensor(i64, []))
    new = core.IotaOp.create(operands=[n], result_types=[v.type], properties={"dim": int_attr(0)})
    return b.insert(new).results[0]


# ---- gather and scatter -----------------------------------------------------------------


_GATHERS: dict[type[OnnxOp], type[core.CoreOp]] = {
    onnx.GatherOp: core.GatherOp,
    onnx.GatherElementsOp: core.GatherElementsOp,
}


@lowers(*_GATHERS)
def gather(b: CoreBuilder, op: onnx.GatherOp | onnx.GatherElementsOp) -> Results:
    """Gather and GatherElements: indices checked and made non-negative, then the core op."""
    data = op.data
    shape = ranked_shape(data)
    axis = normalize_axis(int(op.attr("axis")), len(shape))  # type: ignore[arg-type]
    idx = b.wrap_indices(op.indices, b.dims(data)[axis], op.name.removeprefix("onnx."))
    new = _GATHERS[type(op)].create(
        operands=[data, idx], result_types=[op.output.type], properties={"axis": int_attr(axis)}
    )
    return [b.insert(new).results[0]]


def _normalize_tuples(b: CoreBuilder, idx: SSAValue, dims: Sequence[Size], what: str) -> SSAValue:
    """Index tuples (the last dim of `idx`) checked to lie in [-dim, dim) of the dims
    they index (numbers or `DimOf`s read at run time), and made non-negative."""
    data = constant_array(idx)
    if all(isinstance(d, int) for d in dims):
        sizes = np.array(dims, dtype=numpy_dtype(element_of(idx.type)))
        if data is not None:
            bad = (data < -sizes) | (data >= sizes)
            if bad.any():
                raise LoweringError(f"{what}: index {int(data[bad][0])} is out of range")
            if not (data < 0).any():
                return idx
            return b.constant(np.where(data < 0, data + sizes, data).astype(data.dtype))
        if is_static(idx.type):
            return b.wrap_indices(idx, b.broadcast_to(b.constant(sizes), idx.type), what)
    return b.wrap_indices(idx, b.sizes_like(dims, idx), what)


def _with_depth(b: CoreBuilder, idx: SSAValue, depth: int, most: int, what: str) -> SSAValue:
    """`idx`, whose last dim is `?`, typed with index tuples of `depth` entries (which the
    ranks imply); the run checks that they have that many."""
    if not 1 <= depth <= most:
        raise LoweringError(
            f"{what}: the ranks imply index tuples of {depth} entries, which cannot index "
            f"{most} dims"
        )
    shape = ranked_shape(idx)
    dims = b.shape_of(idx)
    last = b.slice(dims, [len(shape) - 1], [1])
    same = b.compare("eq", last, b.constant(np.array([depth], np.int64)))
    idx = b.check(idx, same, f"{what}: the index tuples must have {depth} entries")
    return b.reshape(idx, tensor(element_of(idx.type), [*shape[:-1], depth]), dims)


def _dims_agree(
    b: CoreBuilder, v: SSAValue, dims: Sequence[Size], others: Sequence[Size], message: str
) -> SSAValue:
    """`v`, once `dims` equal `others` pairwise: static pairs are compared here, pairs
    with a run-time dim by the run, before `v` is used."""
    if len(dims) != len(others):
        raise LoweringError(message)
    unknown = []
    for d, o in zip(dims, others, strict=True):
        if isinstance(d, int) and isinstance(o, int):
            if d != o:
                raise LoweringError(message)
        elif not _same_size(d, o):
            unknown.append((d, o))
    if not unknown:
        return v
    same = b.compare(
        "eq", b.shape_vector([d for d, _ in unknown]), b.shape_vector([o for _, o in unknown])
    )
    return b.check(v, same, message)


def _same_size(first: Size, second: Size) -> bool:
    """Whether two sizes are one dim of one value (so equal without a check)."""
    if isinstance(first, int) or isinstance(second, int):
        return False
    return first.value is second.value and first.axis == second.axis


@lowers(onnx.GatherNDOp)
def gather_nd(b: CoreBuilder, op: onnx.GatherNDOp) -> Results:
    data, idx = op.data, op.indices
    batch = int(op.attr("batch_dims"))  # type: ignore[call-overload]
    depth = ranked_shape(idx)[-1]
    if depth < 0:
        # The result's rank is q - 1 + r - depth - batch_dims: it fixes the depth.
        out_shape = shape_of_type(op.output.type)
        if out_shape is None:
            raise LoweringError("GatherND with a dynamic index depth and a result of unknown rank")
        rank_q, rank_r = len(ranked_shape(idx)), len(ranked_shape(data))
        depth = rank_q - 1 + rank_r - batch - len(out_shape)
        idx = _with_depth(b, idx, depth, rank_r - batch, "GatherND")
    message = "GatherND: the batch dims of data and indices differ"
    idx = _dims_agree(b, idx, b.dims(idx)[:batch], b.dims(data)[:batch], message)
    idx = _normalize_tuples(b, idx, b.dims(data)[batch : batch + depth], "GatherND")
    new = core.GatherNDOp.create(
        operands=[data, idx],
        result_types=[op.output.type],
        properties={"batch_dims": int_attr(batch)},
    )
    return [b.insert(new).results[0]]


def _reduction(op: onnx.ScatterElementsOp | onnx.ScatterNDOp) -> StringAttr:
    return StringAttr(str(op.attr("reduction") or "none"))


@lowers(onnx.ScatterElementsOp)
def scatter_elements(b: CoreBuilder, op: onnx.ScatterElementsOp) -> Results:
    data = op.data
    shape = ranked_shape(data)
    axis = normalize_axis(int(op.attr("axis")), len(shape))  # type: ignore[arg-type]
    idx = b.wrap_indices(op.indices, b.dims(data)[axis], "ScatterElements")
    new = core.ScatterElementsOp.create(
        operands=[data, idx, op.updates],
        result_types=[op.output.type],
        properties={"axis": int_attr(axis), "reduction": _reduction(op)},
    )
    return [b.insert(new).results[0]]


@lowers(onnx.ScatterNDOp)
def scatter_nd(b: CoreBuilder, op: onnx.ScatterNDOp) -> Results:
    data, idx, updates = op.data, op.indices, op.updates
    depth = ranked_shape(idx)[-1]
    if depth < 0:
        # The updates' rank is q - 1 + r - depth: it fixes the depth.
        rank_q, rank_r = len(ranked_shape(idx)), len(ranked_shape(data))
        depth = rank_q - 1 + rank_r - len(ranked_shape(updates))
        idx = _with_depth(b, idx, depth, rank_r, "ScatterND")
    expected = [*b.dims(idx)[:-1], *b.dims(data)[depth:]]
    message = "ScatterND: the updates' shape is not indices.shape[:-1] + data.shape[k:]"
    updates = _dims_agree(b, updates, b.dims(updates), expected, message)
    idx = _normalize_tuples(b, idx, b.dims(data)[:depth], "ScatterND")
    new = core.ScatterNDOp.create(
        operands=[data, idx, updates],
        result_types=[op.output.type],
        properties={"reduction": _reduction(op)},
    )
    return [b.insert(new).results[0]]


# ---- expanding and padding --------------------------------------------------------------


@lowers(onnx.ExpandOp)
def expand(b: CoreBuilder, op: onnx.ExpandOp) -> Results:
    x, shape_v = op.input, op.shape
    out = op.output.type
    if is_static(out):
        return [b.broadcast_to(x, out)]
    target = constant_ints(shape_v)
    in_shape = ranked_shape(x)
    if target is None or any(d < 0 for d in in_shape):
        return [_runtime_expand(b, x, shape_v, out)]
    static = tensor(element_of(x.type), np.broadcast_shapes(in_shape, tuple(target)))
    return [b.retype(b.broadcast_to(x, static), out)]


def _runtime_expand(b: CoreBuilder, x: SSAValue, shape_v: SSAValue, out: Attribute) -> SSAValue:
    """Expand to a shape known at run time: ONNX's two-way broadcast of x's shape and it.

    Both shapes are left-padded with ones to the result rank; a dim of 1 yields
    to the other side's.
    """
    count = ranked_shape(shape_v)[0]
    in_shape = ranked_shape(x)
    if count < 0:
        shape_v = _shape_to_rank(b, b.cast(shape_v, i64), _result_rank(shape_v, out, "Expand"), x)
        count = ranked_shape(shape_v)[0]
    rank = max(count, len(in_shape))

    def padded(dims: SSAValue, n: int) -> SSAValue:
        if n == rank:
            return dims
        return b.concat([b.constant(np.ones(rank - n, np.int64)), dims], 0)

    target = padded(b.cast(shape_v, i64), count)
    dims = padded(b.shape_of(x), len(in_shape))
    shape = b.select(b.compare("eq", target, b.splat(1, target)), dims, target)
    declared = shape_of_type(out)
    result = out if declared is not None else tensor(element_of(x.type), [-1] * rank)
    # `always`: x may have the result's type and still `?` dims of 1 to expand.
    return b.broadcast_to(x, result, shape=shape, always=True)


def _shape_to_rank(b: CoreBuilder, shape_v: SSAValue, rank: int, x: SSAValue) -> SSAValue:
    """Expand's shape of run-time length, left-padded with ones to the result `rank`.

    The result rank is the larger of the shape's length and x's rank: the run
    checks that it is `rank`. The padding is the tail of `[1] * rank + shape`.
    """
    rank_in = len(ranked_shape(x))
    if rank < rank_in:
        raise LoweringError(f"Expand of a rank-{rank_in} input to a result of rank {rank}")
    length = b.shape_of(shape_v)
    bound = b.constant(np.array([rank], np.int64))
    fits = b.compare("le" if rank == rank_in else "eq", length, bound)
    length = b.check(length, fits, f"Expand: the result must have rank {rank}")
    ones = b.constant(np.ones(rank, np.int64))
    new = core.SliceOp.create(
        operands=[b.concat([ones, shape_v], 0), length, bound, b.constant(np.ones(1, np.int64))],
        result_types=[tensor(i64, [rank])],
    )
    return b.insert(new).results[0]


@lowers(onnx.TileOp)
def tile(b: CoreBuilder, op: onnx.TileOp) -> Results:
    """Broadcast x [d0, d1…] to [r0, d0, r1, d1…], then merge each (ri, di) pair."""
    x = op.input
    repeats = constant_ints(op.repeats)
    if not is_static(x.type) or (repeats is None and not is_static(op.output.type)):
        return [_runtime_tile(b, x, op.repeats, repeats, op.output.type)]
    shape = _static_shape(x, "Tile")
    if repeats is None:
        # A runtime repeats input: the inferred result shape still fixes it.
        out_shape = _static_shape(op.output, "Tile with runtime repeats")
        repeats = [o // d if d else 1 for o, d in zip(out_shape, shape, strict=True)]
    element = element_of(x.type)
    interleaved = [v for r, d in zip(repeats, shape, strict=True) for v in (r, d)]
    dims = list(range(1, 2 * len(shape), 2))
    wide = b.insert(
        core.BroadcastOp.create(
            operands=[x],
            result_types=[tensor(element, interleaved)],
            properties={"dims": core.ints(dims)},
        )
    ).results[0]
    out = tensor(element, [r * d for r, d in zip(repeats, shape, strict=True)])
    return [b.reshape(wide, out)]


def _runtime_tile(
    b: CoreBuilder,
    x: SSAValue,
    repeats_v: SSAValue,
    repeats: Sequence[int] | None,
    out: Attribute,
) -> SSAValue:
    """Tile with run-time dims or repeats: the same broadcast and merge, with the shapes
    `[r0, d0, r1, d1…]` and `[r0 * d0, r1 * d1…]` computed at run time."""
    shape = ranked_shape(x)
    rank = len(shape)
    element = element_of(x.type)
    if repeats is not None:
        if len(repeats) != rank or any(r < 0 for r in repeats):
            raise LoweringError(
                f"Tile's repeats {list(repeats)} do not fit an input of rank {rank}"
            )
        reps_static = list(repeats)
        reps = b.constant(np.array(repeats, np.int64))
    else:
        reps_static = [-1] * rank
        reps = _vector_of(b, b.cast(repeats_v, i64), rank, "Tile's repeats")
        fits = b.compare("ge", reps, b.splat(0, reps))
        reps = b.check(reps, fits, "Tile's repeats must not be negative", culprit=reps)
    dims = b.shape_vector(b.dims(x))
    picks = b.constant(np.array([i for d in range(rank) for i in (d, rank + d)], np.int64))
    interleaved = b.gather(b.concat([reps, dims], 0), picks, 0)
    wide_static = [v for r, d in zip(reps_static, shape, strict=True) for v in (r, d)]
    wide = _spread(b, x, list(range(1, 2 * rank, 2)), wide_static, interleaved)
    out_static = [
        r * d if r >= 0 and d >= 0 else -1 for r, d in zip(reps_static, shape, strict=True)
    ]
    merged = b.reshape(wide, tensor(element, out_static), b.binary("mul", reps, dims))
    return b.retype(merged, out)


@lowers(onnx.PadOp)
def pad(b: CoreBuilder, op: onnx.PadOp) -> Results:
    x, pads_v, value_v, axes_v = op.data, op.pads, op.constant_value, op.axes
    rank = len(ranked_shape(x))
    element = element_of(x.type)
    value = b.scalar(0, element) if value_v is None else one_value(b, value_v, "Pad's value")
    mode = str(op.attr("mode"))
    out = op.output.type
    pads = constant_ints(pads_v)
    axes = list(range(rank)) if axes_v is None else constant_ints(axes_v)
    if pads is None or axes is None:
        return [_runtime_pad(b, x, value, pads_v, axes_v, mode, out)]
    axes = [normalize_axis(a, rank) for a in axes]
    if len(pads) != 2 * len(axes):
        raise LoweringError(f"Pad has {len(pads)} pads for {len(axes)} axes")
    low, high = [0] * rank, [0] * rank
    for i, a in enumerate(axes):
        low[a], high[a] = pads[i], pads[i + len(axes)]
    in_shape = ranked_shape(x)
    result = out
    if not is_static(out) and all(d >= 0 for d in in_shape):
        result = tensor(
            element, [n + lo + hi for n, lo, hi in zip(in_shape, low, high, strict=True)]
        )
    new = core.PadOp.create(
        operands=[x, value],
        result_types=[result],
        properties={
            "mode": StringAttr(mode),
            "pad_low": core.ints(low),
            "pad_high": core.ints(high),
        },
    )
    return [b.retype(b.insert(new).results[0], out)]


def _runtime_pad(
    b: CoreBuilder,
    x: SSAValue,
    value: SSAValue,
    pads_v: SSAValue,
    axes_v: SSAValue | None,
    mode: str,
    out: Attribute,
) -> SSAValue:
    """Pad by pads known only at run time: core.pad's pads operand, one entry per dim.

    Pads given for some `axes` only (constant or not) are scattered into
    full-rank zero vectors of low and high pads.
    """
    rank = len(ranked_shape(x))
    n = _padded_axes(pads_v, axes_v, rank)
    pads = b.cast(pads_v, i64)
    if n >= 0:
        pads = _vector_of(b, pads, 2 * n, "Pad's pads")
    if axes_v is not None:
        axes = b.cast(axes_v, i64)
        if n >= 0:
            axes = _vector_of(b, axes, n, "Pad's axes")
            parts = [b.slice(pads, [half * n], [n], [1]) for half in range(2)]
        else:
            parts = _halves(b, pads, axes)
        axes = b.wrap_indices(axes, rank)
        halves = []
        for part in parts:
            scatter = core.ScatterElementsOp.create(
                operands=[b.constant(np.zeros(rank, np.int64)), axes, part],
                result_types=[tensor(i64, [rank])],
                properties={"axis": int_attr(0), "reduction": StringAttr("none")},
            )
            halves.append(b.insert(scatter).results[0])
        pads = b.insert(
            core.ConcatOp.create(
                operands=halves,
                result_types=[tensor(i64, [2 * rank])],
                properties={"axis": int_attr(0)},
            )
        ).results[0]
    result = out if shape_of_type(out) is not None else tensor(element_of(x.type), [-1] * rank)
    new = core.PadOp.create(
        operands=[x, value, pads], result_types=[result], properties={"mode": StringAttr(mode)}
    )
    return b.insert(new).results[0]


def _padded_axes(pads_v: SSAValue, axes_v: SSAValue | None, rank: int) -> int:
    """How many axes Pad pads: all, or the static length of `axes` or of half the pads;
    -1 when only the run knows."""
    if len(ranked_shape(pads_v)) != 1:
        raise LoweringError(f"Pad's pads must be a 1-D tensor, got {pads_v.type}")
    if axes_v is None:
        return rank
    (n,) = ranked_shape(axes_v)
    if n >= 0:
        return n
    (length,) = ranked_shape(pads_v)
    if length >= 0 and length % 2:
        raise LoweringError(f"Pad's pads need 2 values per axis, got {pads_v.type}")
    return length // 2 if length >= 0 else -1


def _halves(b: CoreBuilder, pads: SSAValue, axes: SSAValue) -> list[SSAValue]:
    """The low and high halves of run-time `pads`, checked to hold 2 values per axis."""
    n = b.shape_of(axes)
    fits = b.compare("eq", b.shape_of(pads), b.binary("mul", n, b.splat(2, n)))
    pads = b.check(pads, fits, "Pad's pads need 2 values per axis")
    one = b.constant(np.ones(1, np.int64))
    return [
        b.insert(
            core.SliceOp.create(operands=[pads, start, n, one], result_types=[tensor(i64, [-1])])
        ).results[0]
        for start in (b.constant(np.zeros(1, np.int64)), n)
    ]


# ---- shapes and generated tensors ------------------------------------------------------


@lowers(onnx.ShapeOp)
def shape_(b: CoreBuilder, op: onnx.ShapeOp) -> Results:
    x = op.data
    shape = ranked_shape(x)
    rank = len(shape)
    start = int(op.attr("start") or 0)  # type: ignore[call-overload]
    end_attr = op.attr("end")
    end = rank if end_attr is None else int(end_attr)  # type: ignore[call-overload]
    start = min(max(start + rank if start < 0 else start, 0), rank)
    end = min(max(end + rank if end < 0 else end, 0), rank)
    size = max(end - start, 0)
    part = shape[start : start + size]
    if all(d >= 0 for d in part):
        return [b.constant(np.array(part, dtype=np.int64))]
    return [b.slice(b.shape_of(x), [start if size else 0], [size], [1])]


@lowers(onnx.SizeOp)
def size_(b: CoreBuilder, op: onnx.SizeOp) -> Results:
    x = op.data
    shape = ranked_shape(x)
    if all(d >= 0 for d in shape):
        return [b.constant(np.array(int(np.prod(shape)), dtype=np.int64))]
    return [b.reduce("prod", b.shape_of(x), [0])]


_MOST_ELEMENTS = 2**48
"""A bound on a count read at run time before it becomes an i64 (a float's cast is
undefined past the i64 range); far above what any buffer holds."""

_RANGE_COUNT = (
    f"Range's count ceil((limit - start) / delta) must be finite and at most {_MOST_ELEMENTS}"
)


@lowers(onnx.RangeOp)
def range_(b: CoreBuilder, op: onnx.RangeOp) -> Results:
    start_v, limit_v, delta_v = op.start, op.limit, op.delta
    result = op.output.type
    values = [constant_array(v) for v in (start_v, limit_v, delta_v)]
    if any(v is None for v in values):
        return [_runtime_range(b, start_v, limit_v, delta_v, result)]
    start, limit, delta = (np.asarray(v).reshape(()) for v in values)  # type: ignore[arg-type]
    with np.errstate(all="ignore"):
        steps = float(np.ceil(np.float64(limit - start) / np.float64(delta)))
    if not steps <= _MOST_ELEMENTS:  # NaN too
        raise LoweringError(f"{_RANGE_COUNT}, got {steps:g}")
    count = max(int(steps), 0)
    dtype = numpy_dtype(element_of(result))
    out = (start + np.arange(count) * delta).astype(dtype)
    return [b.retype(b.constant(out), result)]


def _runtime_range(
    b: CoreBuilder, start: SSAValue, limit: SSAValue, delta: SSAValue, out: Attribute
) -> SSAValue:
    """`start + iota(n) * delta` with `n = max(ceil((limit - start) / delta), 0)` at run time.

    The count is computed in f64, as ONNX's reference does; the values in
    the result type, so integer ranges stay exact.
    """
    from xdsl.dialects.builtin import f64

    element = element_of(start.type)
    start, limit, delta = (_scalar_of(b, v) for v in (start, limit, delta))
    wide = [b.cast(v, f64) for v in (start, limit, delta)]
    steps = b.unary("ceil", b.binary("div", b.binary("sub", wide[1], wide[0]), wide[2]))
    fits = b.compare("le", steps, b.splat(float(_MOST_ELEMENTS), steps))  # false for NaN
    steps = b.check(steps, fits, _RANGE_COUNT, culprit=steps)
    count = b.cast(b.binary("max", steps, b.splat(0, steps)), i64)
    line = tensor(i64, [-1])
    iota = b.insert(
        core.IotaOp.create(operands=[count], result_types=[line], properties={"dim": int_attr(0)})
    ).results[0]
    values = b.cast(iota, element)
    shape = b.reshape(count, tensor(i64, [1]))
    start_v, delta_v = (b.broadcast_to(v, values.type, shape=shape) for v in (start, delta))
    result = b.binary("add", start_v, b.binary("mul", values, delta_v))
    return b.retype(result, out) if is_static(out) else result


@lowers(onnx.ConstantOfShapeOp)
def constant_of_shape(b: CoreBuilder, op: onnx.ConstantOfShapeOp) -> Results:
    out = op.output.type
    element = element_of(out)
    shape_v = op.input
    shape = list(ranked_shape(out)) if is_static(out) else constant_ints(shape_v)
    if shape is None:
        # The shape's length is the result rank (or the declared rank says it).
        rank = _result_rank(shape_v, out, "ConstantOfShape")
        shape_v = _vector_of(b, b.cast(shape_v, i64), rank, "ConstantOfShape's shape")
        if shape_of_type(out) is None:
            out = tensor(element, [-1] * rank)
    value_attr = op.value
    if value_attr is None:
        value: float | int = 0
    else:
        from rung.dialects.constants import constant_value
        from rung.dialects.resources import owning_module

        value = constant_value(value_attr, owning_module(op)).reshape(-1)[0].item()
    if shape is None:  # a runtime shape: broadcast to it
        return [b.broadcast_to(b.scalar(value, element), out, shape=shape_v)]
    filled = b.broadcast_to(b.scalar(value, element), tensor(element, shape))
    return [b.retype(filled, out)]


def _iota(b: CoreBuilder, shape: Sequence[int], dim: int) -> SSAValue:
    new = core.IotaOp.create(
        operands=[], result_types=[tensor(i64, shape)], properties={"dim": int_attr(dim)}
    )
    return b.insert(new).results[0]


def _iota_sized(b: CoreBuilder, sizes: Sequence[Size | SSAValue], dim: int) -> SSAValue:
    """core.iota over `sizes`: numbers, `DimOf`s, or rank-0 i64 values known at run time.

    Each run-time size becomes one of the op's dynamic-dim operands.
    """
    static: list[int] = []
    operands: list[SSAValue] = []
    for size in sizes:
        if isinstance(size, int):
            static.append(size)
            continue
        if not isinstance(size, SSAValue):
            size = b.reshape(b.shape_vector([size]), tensor(i64, []))
        static.append(-1)
        operands.append(size)
    new = core.IotaOp.create(
        operands=operands, result_types=[tensor(i64, static)], properties={"dim": int_attr(dim)}
    )
    return b.insert(new).results[0]


def _diagonal_offsets(b: CoreBuilder, x: SSAValue) -> SSAValue:
    """`col - row` over the last two dims of `x` (a matrix's diagonal numbers, 0 on the
    main one); run-time dims are read from `x`."""
    rows, cols = ranked_shape(x)[-2:]
    if rows >= 0 and cols >= 0:
        return b.binary("sub", _iota(b, [rows, cols], 1), _iota(b, [rows, cols], 0))
    sizes = b.dims(x)[-2:]
    return b.binary("sub", _iota_sized(b, sizes, 1), _iota_sized(b, sizes, 0))


@lowers(onnx.TriluOp)
def trilu(b: CoreBuilder, op: onnx.TriluOp) -> Results:
    """Keep x where `col - row >= k` (upper) or `<= k` (lower), else 0."""
    x, k_v = op.input, op.k
    shape = ranked_shape(x)
    diff = _diagonal_offsets(b, x)
    if k_v is None:
        k = b.splat(0, diff)
    else:
        k_const = constant_ints(k_v)
        if k_const is not None:
            k = b.splat(k_const[0], diff)
        else:
            k_scalar = one_value(b, b.cast(k_v, i64), "Trilu's k")
            k = b.broadcast_to(k_scalar, diff.type, diff)
    keep = b.compare("ge" if op.attr("upper") else "le", diff, k)
    if len(shape) > 2:
        keep = b.broadcast_to(keep, tensor(element_of(keep.type), shape), x)
    return [b.select(keep, x, b.splat(0, x))]


@lowers(onnx.OneHotOp)
def one_hot(b: CoreBuilder, op: onnx.OneHotOp) -> Results:
    """`values[1]` where iota along `axis` equals the (normalized) index, else `values[0]`."""
    idx, values = op.indices, op.values
    out = op.output.type
    if not is_static(out):
        return [_runtime_one_hot(b, op)]
    out_shape = _static_shape(out, "OneHot")
    axis = normalize_axis(int(op.attr("axis")), len(out_shape))  # type: ignore[arg-type]
    # The depth is the result's dim along axis (static even when depth is an input).
    depth = out_shape[axis]
    if numpy_dtype(element_of(idx.type)).kind == "f":
        idx = b.unary("floor", idx)  # ONNX casts float indices toward -inf
    idx_i = b.cast(idx, i64)
    idx_i = b.wrap_indices(idx_i, depth)
    dims = [d for d in range(len(out_shape)) if d != axis]
    spread = b.insert(
        core.BroadcastOp.create(
            operands=[idx_i],
            result_types=[tensor(i64, out_shape)],
            properties={"dims": core.ints(dims)},
        )
    ).results[0]
    hot = b.compare("eq", _iota(b, out_shape, axis), spread)
    element = element_of(values.type)
    off_on = [
        b.broadcast_to(_scalar_of(b, b.slice(values, [i], [1], [1])), tensor(element, out_shape))
        for i in (0, 1)
    ]
    return [b.select(hot, off_on[1], off_on[0])]


def _run_time_depth(b: CoreBuilder, depth: SSAValue) -> SSAValue:
    """OneHot's depth read at run time, as an i64 scalar, checked to be a count.

    A float depth is checked before the cast (NaN, an infinity or 1e30 have no
    i64 value: the cast would be undefined), an integer one after it.
    """
    value = one_value(b, depth, "OneHot's depth")
    message = f"OneHot's depth must be a number of classes in [0, {_MOST_ELEMENTS}]"
    if numpy_dtype(element_of(value.type)).kind == "f":
        low = b.compare("ge", value, b.splat(0, value))
        high = b.compare("le", value, b.splat(float(_MOST_ELEMENTS), value))
        value = b.check(value, b.binary("and", low, high), message, culprit=value)
        return b.cast(value, i64)
    value = b.cast(value, i64)
    fits = b.binary(
        "and",
        b.compare("ge", value, b.splat(0, value)),
        b.compare("le", value, b.splat(_MOST_ELEMENTS, value)),
    )
    return b.check(value, fits, message, culprit=value)


def _runtime_one_hot(b: CoreBuilder, op: onnx.OneHotOp) -> SSAValue:
    """OneHot with run-time dims: the indices' dims, with the depth (a value read at
    run time unless it is a constant) inserted at `axis`."""
    idx = op.indices
    shape = ranked_shape(idx)
    axis = normalize_axis(int(op.attr("axis")), len(shape) + 1)  # type: ignore[arg-type]
    depth_data = constant_array(op.depth)
    if depth_data is not None and depth_data.size == 1:
        depth: int | SSAValue = int(depth_data.reshape(-1)[0])
        if depth < 0:
            raise LoweringError(f"OneHot's depth must not be negative, got {depth}")
        depth_v = b.constant(np.array(depth, np.int64))
    else:
        depth = depth_v = _run_time_depth(b, op.depth)
    out_static = [*shape[:axis], depth if isinstance(depth, int) else -1, *shape[axis:]]
    shape_v: SSAValue | None = None
    if any(d < 0 for d in out_static):
        idx_shape = b.shape_vector(b.dims(idx))
        parts = [b.reshape(depth_v, tensor(i64, [1]))]
        if axis:
            parts.insert(0, b.slice(idx_shape, [0], [axis]))
        if axis < len(shape):
            parts.append(b.slice(idx_shape, [axis], [len(shape) - axis]))
        shape_v = b.concat(parts, 0)
    if numpy_dtype(element_of(idx.type)).kind == "f":
        idx = b.unary("floor", idx)  # ONNX casts float indices toward -inf
    idx_i = b.cast(idx, i64)
    sizes = depth if isinstance(depth, int) else b.broadcast_to(depth_v, idx_i.type, idx_i)
    idx_i = b.wrap_indices(idx_i, sizes)
    others = [d for d in range(len(out_static)) if d != axis]
    spread = _spread(b, idx_i, others, out_static, shape_v)
    line = _spread(b, _iota_sized(b, [depth], 0), [axis], out_static, shape_v)
    hot = b.compare("eq", line, spread)
    pair = _vector_of(b, op.values, 2, "OneHot's values")
    target = tensor(element_of(pair.type), out_static)
    off_on = [
        b.broadcast_to(_scalar_of(b, b.slice(pair, [i], [1], [1])), target, shape=shape_v)
        for i in (0, 1)
    ]
    return b.retype(b.select(hot, off_on[1], off_on[0]), op.output.type)


def _spread(
    b: CoreBuilder, x: SSAValue, dims: Sequence[int], out: Sequence[int], shape: SSAValue | None
) -> SSAValue:
    """core.broadcast of `x` into the shape `out` (-1 where `shape` has the run-time size);
    `dims[i]` is the result dim of x's dim i."""
    operands = [x] if shape is None or all(d >= 0 for d in out) else [x, shape]
    new = core.BroadcastOp.create(
        operands=operands,
        result_types=[tensor(element_of(x.type), out)],
        properties={"dims": core.ints(dims)},
    )
    return b.insert(new).results[0]


def _vector_of(b: CoreBuilder, v: SSAValue, n: int, what: str) -> SSAValue:
    """`v`, a 1-D tensor that must hold `n` values, typed `tensor<n x …>`; a run-time
    length is checked."""
    shape = ranked_shape(v)
    if len(shape) != 1 or shape[0] not in (-1, n):
        raise LoweringError(f"{what} must be a 1-D tensor of {n} values, got {v.type}")
    if shape[0] == n:
        return v
    same = b.compare("eq", b.shape_of(v), b.constant(np.array([n], np.int64)))
    v = b.check(v, same, f"{what} must hold {n} values")
    return b.reshape(v, tensor(element_of(v.type), [n]))


_Term = int | tuple[int, int, int]
"""One entry of a shape built from another's: a number, or `(axis, mul, div)` for
`dim[axis] * mul // div`."""


def _scaled_dims(
    b: CoreBuilder, x: SSAValue, terms: Sequence[_Term]
) -> tuple[list[int], SSAValue | None]:
    """The shape `terms` make of x's dims: its static form (-1 where only the run time
    knows) and, when some entry is dynamic, the run-time shape vector."""
    shape = ranked_shape(x)
    static = [
        t if isinstance(t, int) else (shape[t[0]] * t[1] // t[2] if shape[t[0]] >= 0 else -1)
        for t in terms
    ]
    if all(d >= 0 for d in static):
        return static, None
    picks, muls, divs, adds = [], [], [], []
    for t in terms:
        axis, mul, div = (0, 0, 1) if isinstance(t, int) else t
        picks.append(axis)
        muls.append(mul)
        divs.append(div)
        adds.append(t if isinstance(t, int) else 0)
    columns = [b.constant(np.array(c, np.int64)) for c in (picks, muls, divs, adds)]
    dims = b.gather(b.shape_of(x), columns[0], 0)
    for fn, column in zip(("mul", "div", "add"), columns[1:], strict=True):
        dims = b.binary(fn, dims, column)
    return static, dims


def _reshape_scaled(b: CoreBuilder, v: SSAValue, of: SSAValue, terms: Sequence[_Term]) -> SSAValue:
    """`v` reshaped to the shape `terms` make of the dims of `of` (see `_scaled_dims`)."""
    static, dims = _scaled_dims(b, of, terms)
    return b.reshape(v, tensor(element_of(v.type), static), dims)


def _divisible(b: CoreBuilder, x: SSAValue, axes: Sequence[int], by: int, what: str) -> SSAValue:
    """`x`, whose dims `axes` must be multiples of `by`; run-time dims are checked."""
    shape = ranked_shape(x)
    if any(shape[a] >= 0 and shape[a] % by for a in axes):
        raise LoweringError(f"{what}, got {x.type}")
    sizes = [b.dims(x)[a] for a in axes if shape[a] < 0]
    if not sizes or by == 1:
        return x
    rem = b.binary("rem", b.shape_vector(sizes), b.constant(np.full(len(sizes), by, np.int64)))
    return b.check(x, b.compare("eq", rem, b.constant(np.zeros(len(sizes), np.int64))), what)


def _image_input(x: SSAValue, what: str) -> None:
    if len(ranked_shape(x)) != 4:
        raise LoweringError(f"{what} needs a 4-D input, got {x.type}")


@lowers(onnx.DepthToSpaceOp)
def depth_to_space(b: CoreBuilder, op: onnx.DepthToSpaceOp) -> Results:
    """Split the channels into (bs, bs, c / bs²) (DCR) or (c / bs², bs, bs) (CRD), then
    move the blocks into the rows and columns."""
    x = op.input
    _image_input(x, "DepthToSpace")
    bs = int(op.attr("blocksize"))  # type: ignore[call-overload]
    what = "DepthToSpace: the channels must be a multiple of blocksize squared"
    x = _divisible(b, x, [1], bs * bs, what)
    n, c, h, w = (0, 1, 1), (1, 1, bs * bs), (2, 1, 1), (3, 1, 1)
    if op.attr("mode") == "CRD":
        split, perm = [n, c, bs, bs, h, w], [0, 1, 4, 2, 5, 3]
    else:
        split, perm = [n, bs, bs, c, h, w], [0, 3, 4, 1, 5, 2]
    moved = b.transpose(_reshape_scaled(b, x, x, split), perm)
    out = _reshape_scaled(b, moved, x, [n, c, (2, bs, 1), (3, bs, 1)])
    return [b.retype(out, op.output.type)]


@lowers(onnx.SpaceToDepthOp)
def space_to_depth(b: CoreBuilder, op: onnx.SpaceToDepthOp) -> Results:
    """Split rows and columns into blocks of bs, then move the blocks into the channels."""
    x = op.input
    _image_input(x, "SpaceToDepth")
    bs = int(op.attr("blocksize"))  # type: ignore[call-overload]
    what = "SpaceToDepth: the height and width must be multiples of blocksize"
    x = _divisible(b, x, [2, 3], bs, what)
    n, c, h, w = (0, 1, 1), (1, 1, 1), (2, 1, bs), (3, 1, bs)
    split = _reshape_scaled(b, x, x, [n, c, h, bs, w, bs])
    perm = [0, 1, 3, 5, 2, 4] if op.attr("mode") == "CRD" else [0, 3, 5, 1, 2, 4]
    moved = b.transpose(split, perm)
    out = _reshape_scaled(b, moved, x, [n, (1, bs * bs, 1), h, w])
    return [b.retype(out, op.output.type)]


@lowers(onnx.NonZeroOp)
def nonzero(b: CoreBuilder, op: onnx.NonZeroOp) -> Results:
    new = core.NonZeroOp.create(operands=[op.X], result_types=[op.Y.type])
    return [b.insert(new).results[0]]


@lowers(onnx.EyeLikeOp)
def eye_like(b: CoreBuilder, op: onnx.EyeLikeOp) -> Results:
    """A constant for a static shape; else 1 where `col - row == k`, read at run time."""
    x = op.input
    if len(ranked_shape(x)) != 2:
        raise LoweringError(f"EyeLike needs a 2-D input, got {x.type}")
    element = element_of(op.output.type)
    k = int(op.attr("k"))  # type: ignore[call-overload]
    if is_static(x.type):
        rows, cols = ranked_shape(x)
        return [b.constant(np.eye(rows, cols, k, dtype=numpy_dtype(element)))]
    diff = _diagonal_offsets(b, x)
    on = b.compare("eq", diff, b.splat(k, diff))
    result = tensor(element, ranked_shape(x))
    ones, zeros = (b.broadcast_to(b.scalar(v, element), result, x) for v in (1, 0))
    return [b.retype(b.select(on, ones, zeros), op.output.type)]
