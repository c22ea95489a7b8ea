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
    element_of,
    int_attr,
    is_static,
    normalize_axis,
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
    if is_static(out):
        return [b.reshape(x, out)]
    target = constant_ints(op.shape)
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


def _runtime_reshape(b: CoreBuilder, op: onnx.ReshapeOp) -> SSAValue:
    """Reshape to a shape known only at run time, with ONNX's 0 and -1 rules.

    0 copies the input's dim (unless allowzero), and -1 takes what is left:
    both are computed with core ops on the shape tensors.
    """
    x, shape_v = op.data, op.shape
    (rank_out,) = ranked_shape(shape_v)  # the shape operand is 1-D: its length is the result rank
    if rank_out < 0:
        raise LoweringError("Reshape to a shape of unknown rank")
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
    rest = b.broadcast_to(b.binary("div", total, known), tensor(i64, [rank_out]))
    target = b.select(is_free, rest, target)
    new = core.ReshapeOp.create(operands=[x, target], result_types=[op.reshaped.type])
    return b.insert(new).results[0]


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


def _constant_axes(axes_v: SSAValue | None) -> list[int]:
    axes = constant_ints(axes_v)
    if axes is None:
        raise LoweringError("Squeeze/Unsqueeze of a dynamic input needs constant axes")
    return axes


def _runtime_squeeze(b: CoreBuilder, op: onnx.SqueezeOp) -> SSAValue:
    """Squeeze of a dynamically shaped input: `shape_of(x)` without the squeezed dims."""
    x = op.data
    shape = ranked_shape(x)
    axes = _constant_axes(op.axes)
    in_shape = b.shape_of(x)
    drop = {normalize_axis(a, len(shape)) for a in axes}
    pieces = [b.slice(in_shape, [i], [1], [1]) for i in range(len(shape)) if i not in drop]
    return _reshape_to_pieces(b, x, pieces, op.squeezed.type)


def _runtime_unsqueeze(b: CoreBuilder, op: onnx.UnsqueezeOp) -> SSAValue:
    """Unsqueeze of a dynamically shaped input: `shape_of(x)` with 1s inserted."""
    x = op.data
    shape = ranked_shape(x)
    axes = _constant_axes(op.axes)
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
            raise LoweringError("Split's split input must be a constant (or the parts static)")
    else:
        if n < 0:
            raise LoweringError("Split of a dynamic dim")
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
    x, starts_v, ends_v, axes_v, steps_v = op.data, op.starts, op.ends, op.axes, op.steps
    shape = ranked_shape(x)
    rank = len(shape)
    count = ranked_shape(starts_v)[0]
    if count < 0:
        raise LoweringError("Slice with a dynamic number of axes")
    vec = tensor(i64, [count])
    if axes_v is None:
        axes = b.constant(np.arange(count, dtype=np.int64))
    else:
        axes = b.wrap_indices(b.cast(axes_v, i64), rank)
    steps = b.constant(np.ones(count, np.int64)) if steps_v is None else b.cast(steps_v, i64)
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
        # ceil(span / step) for spans and steps of the same sign, else 0.
        span = b.binary("sub", clamp(ends_v), starts)
        step_less_one = b.binary(
            "sub",
            steps,
            b.select(
                b.compare("lt", steps, b.splat(0, steps)), b.splat(-1, steps), b.splat(1, steps)
            ),
        )
        size = b.binary("div", b.binary("add", span, step_less_one), steps)
        size = b.binary("max", size, b.splat(0, size))
        sizes = spread(size, full_dims)
        if shape_of_type(out) is None:
            out = tensor(element_of(x.type), [-1] * rank)
    ones = b.constant(np.ones(rank, np.int64))
    zeros = b.constant(np.zeros(rank, np.int64))
    new = core.SliceOp.create(
        operands=[x, spread(starts, zeros), sizes, spread(steps, ones)], result_types=[out]
    )
    return b.insert(new).results[0]


# ---- gather and scatter -----------------------------------------------------------------


_GATHERS: dict[type[OnnxOp], type[core.CoreOp]] = {
    onnx.GatherOp: core.GatherOp,
    onnx.GatherElementsOp: core.GatherElementsOp,
}


@lowers(*_GATHERS)
def gather(b: CoreBuilder, op: onnx.GatherOp | onnx.GatherElementsOp) -> Results:
    """Gather and GatherElements: indices made non-negative, then the core op."""
    data = op.data
    shape = ranked_shape(data)
    axis = normalize_axis(int(op.attr("axis")), len(shape))  # type: ignore[arg-type]
    idx = b.wrap_indices(op.indices, b.dims(data)[axis])
    new = _GATHERS[type(op)].create(
        operands=[data, idx], result_types=[op.output.type], properties={"axis": int_attr(axis)}
    )
    return [b.insert(new).results[0]]


def _normalize_tuples(b: CoreBuilder, idx: SSAValue, dims: Sequence[Size]) -> SSAValue:
    """Normalize index tuples (the last dim of `idx`) against the dims they index,
    numbers or `DimOf`s read at run time."""
    data = constant_array(idx)
    if data is not None and not (data < 0).any():
        return idx
    if all(isinstance(d, int) for d in dims):
        sizes = np.array(dims, dtype=numpy_dtype(element_of(idx.type)))
        if data is not None:
            return b.constant(np.where(data < 0, data + sizes, data).astype(data.dtype))
        if is_static(idx.type):
            return b.wrap_indices(idx, b.broadcast_to(b.constant(sizes), idx.type))
    return b.wrap_indices(idx, b.sizes_like(dims, idx))


@lowers(onnx.GatherNDOp)
def gather_nd(b: CoreBuilder, op: onnx.GatherNDOp) -> Results:
    data, idx = op.data, op.indices
    batch = int(op.attr("batch_dims"))  # type: ignore[call-overload]
    depth = ranked_shape(idx)[-1]
    if depth < 0:
        raise LoweringError("GatherND with a dynamic index depth")
    idx = _normalize_tuples(b, idx, b.dims(data)[batch : batch + depth])
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
    idx = b.wrap_indices(op.indices, b.dims(data)[axis])
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
        raise LoweringError("ScatterND with a dynamic index depth")
    idx = _normalize_tuples(b, idx, b.dims(data)[:depth])
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
    if count < 0:
        raise LoweringError("Expand to a shape of unknown length")
    in_shape = ranked_shape(x)
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
    return b.broadcast_to(x, result, shape=shape)


@lowers(onnx.TileOp)
def tile(b: CoreBuilder, op: onnx.TileOp) -> Results:
    """Broadcast x [d0, d1…] to [r0, d0, r1, d1…], then merge each (ri, di) pair."""
    x = op.input
    shape = _static_shape(x, "Tile")
    repeats = constant_ints(op.repeats)
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


@lowers(onnx.PadOp)
def pad(b: CoreBuilder, op: onnx.PadOp) -> Results:
    x, pads_v, value_v, axes_v = op.data, op.pads, op.constant_value, op.axes
    rank = len(ranked_shape(x))
    element = element_of(x.type)
    value = b.scalar(0, element) if value_v is None else _scalar_of(b, value_v)
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
    n = rank if axes_v is None else ranked_shape(axes_v)[0]
    if n < 0 or shape_of_type(pads_v.type) != (2 * n,):
        raise LoweringError("Pad's run-time pads must be a 1-D tensor of 2 values per axis")
    pads = b.cast(pads_v, i64)
    if axes_v is not None:
        axes = b.wrap_indices(b.cast(axes_v, i64), rank)
        halves = []
        for half in range(2):
            part = b.slice(pads, [half * n], [n], [1])
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


@lowers(onnx.RangeOp)
def range_(b: CoreBuilder, op: onnx.RangeOp) -> Results:
    start_v, limit_v, delta_v = op.start, op.limit, op.delta
    result = op.output.type
    values = [constant_array(v) for v in (start_v, limit_v, delta_v)]
    if any(v is None for v in values):
        return [_runtime_range(b, start_v, limit_v, delta_v, result)]
    start, limit, delta = (np.asarray(v).reshape(()) for v in values)  # type: ignore[arg-type]
    count = max(int(np.ceil((limit - start) / delta)), 0)
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
    if shape is None and not is_static(shape_v.type):
        raise LoweringError("ConstantOfShape needs a shape of static rank")
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


@lowers(onnx.TriluOp)
def trilu(b: CoreBuilder, op: onnx.TriluOp) -> Results:
    """Keep x where `col - row >= k` (upper) or `<= k` (lower), else 0."""
    x, k_v = op.input, op.k
    shape = ranked_shape(x)
    rows, cols = shape[-2:]
    if rows < 0 or cols < 0:
        raise LoweringError("Trilu needs static matrix dims")
    diff = b.binary("sub", _iota(b, [rows, cols], 1), _iota(b, [rows, cols], 0))
    if k_v is None:
        k = b.splat(0, diff)
    else:
        k_const = constant_ints(k_v)
        if k_const is not None:
            k = b.splat(k_const[0], diff)
        else:
            k = b.broadcast_to(_scalar_of(b, b.cast(k_v, i64)), diff.type)
    keep = b.compare("ge" if op.attr("upper") else "le", diff, k)
    if len(shape) > 2:
        keep = b.broadcast_to(keep, tensor(element_of(keep.type), shape), x)
    return [b.select(keep, x, b.splat(0, x))]


@lowers(onnx.OneHotOp)
def one_hot(b: CoreBuilder, op: onnx.OneHotOp) -> Results:
    """`values[1]` where iota along `axis` equals the (normalized) index, else `values[0]`."""
    idx, values = op.indices, op.values
    out = op.output.type
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


@lowers(onnx.DepthToSpaceOp)
def depth_to_space(b: CoreBuilder, op: onnx.DepthToSpaceOp) -> Results:
    x = op.input
    n, c, h, w = _static_shape(x, "DepthToSpace")
    bs = int(op.attr("blocksize"))  # type: ignore[call-overload]
    element = element_of(x.type)
    if op.attr("mode") == "CRD":
        split, perm = [n, c // (bs * bs), bs, bs, h, w], [0, 1, 4, 2, 5, 3]
    else:
        split, perm = [n, bs, bs, c // (bs * bs), h, w], [0, 3, 4, 1, 5, 2]
    moved = b.transpose(b.reshape(x, tensor(element, split)), perm)
    return [b.reshape(moved, tensor(element, [n, c // (bs * bs), h * bs, w * bs]))]


@lowers(onnx.SpaceToDepthOp)
def space_to_depth(b: CoreBuilder, op: onnx.SpaceToDepthOp) -> Results:
    x = op.input
    n, c, h, w = _static_shape(x, "SpaceToDepth")
    bs = int(op.attr("blocksize"))  # type: ignore[call-overload]
    element = element_of(x.type)
    split = b.reshape(x, tensor(element, [n, c, h // bs, bs, w // bs, bs]))
    perm = [0, 1, 3, 5, 2, 4] if op.attr("mode") == "CRD" else [0, 3, 5, 1, 2, 4]
    moved = b.transpose(split, perm)
    return [b.reshape(moved, tensor(element, [n, c * bs * bs, h // bs, w // bs]))]


@lowers(onnx.NonZeroOp)
def nonzero(b: CoreBuilder, op: onnx.NonZeroOp) -> Results:
    new = core.NonZeroOp.create(operands=[op.X], result_types=[op.Y.type])
    return [b.insert(new).results[0]]


@lowers(onnx.EyeLikeOp)
def eye_like(b: CoreBuilder, op: onnx.EyeLikeOp) -> Results:
    rows, cols = _static_shape(op.input, "EyeLike")
    dtype = numpy_dtype(element_of(op.output.type))
    k = int(op.attr("k"))  # type: ignore[call-overload]
    return [b.constant(np.eye(rows, cols, k, dtype=dtype))]
