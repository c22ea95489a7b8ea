"""Constants, shapes and data movement: the core ops that compute no new numbers.

Ops whose result shape may be dynamic (`broadcast`, `reshape`, `iota`, the
operand form of `slice` and `pad`) take it from the result type where it is
static and from their shape operands otherwise.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.ir import SSAValue

from rung.dialects import core
from rung.dialects.constants import constant_value

from .interpreter import Args, Scope, Value, evaluates, ints, result_dtype, static_shape


def _target_shape(result: SSAValue, shape_args: Args) -> tuple[int, ...]:
    static = static_shape(result)
    if static is not None:
        return static
    return tuple(int(d) for d in shape_args[0])


# ---- constants and shapes ---------------------------------------------------------------


@evaluates(core.ConstantOp)
def constant(ev: Scope, op: core.ConstantOp, args: Args) -> list[Value]:
    return [constant_value(op.value, ev.module)]


@evaluates(core.IotaOp)
def iota(ev: Scope, op: core.IotaOp, args: Args) -> list[Value]:
    """Counts along `dim`, repeated along the others; dynamic sizes come as operands."""
    shape = list(op.result.type.get_shape())  # type: ignore[attr-defined]
    dynamic = iter(int(a) for a in args)
    shape = [next(dynamic) if d < 0 else d for d in shape]
    dim = op.dim.value.data
    view = [1] * len(shape)
    view[dim] = shape[dim]
    values = np.arange(shape[dim]).reshape(view)
    return [np.broadcast_to(values, shape).astype(result_dtype(op.result))]


@evaluates(core.ShapeOfOp)
def shape_of(ev: Scope, op: core.ShapeOfOp, args: Args) -> list[Value]:
    return [np.array(np.shape(args[0]), dtype=np.int64)]


# ---- layout -------------------------------------------------------------------------------


@evaluates(core.BroadcastOp)
def broadcast(ev: Scope, op: core.BroadcastOp, args: Args) -> list[Value]:
    """Input dim i becomes result dim `dims[i]`; the other result dims repeat it."""
    out = _target_shape(op.result, args[1:])
    view = [1] * len(out)
    for i, d in enumerate(ints(op.dims)):
        view[d] = np.shape(args[0])[i]
    return [np.broadcast_to(np.reshape(args[0], view), out).copy()]


@evaluates(core.ReshapeOp)
def reshape(ev: Scope, op: core.ReshapeOp, args: Args) -> list[Value]:
    return [np.reshape(args[0], _target_shape(op.result, args[1:]))]


@evaluates(core.TransposeOp)
def transpose(ev: Scope, op: core.TransposeOp, args: Args) -> list[Value]:
    return [np.transpose(args[0], ints(op.perm))]


@evaluates(core.SliceOp)
def slice_(ev: Scope, op: core.SliceOp, args: Args) -> list[Value]:
    """`size` elements from `start` by `stride` (which may be negative) along each dim."""
    if len(args) == 4:
        start, size, stride = (tuple(int(v) for v in a) for a in args[1:])
    else:
        start, stride = ints(op.start), ints(op.stride)
        size = tuple(op.result.type.get_shape())  # type: ignore[attr-defined]
    index = []
    for s, n, st in zip(start, size, stride, strict=True):
        stop = s + n * st
        index.append(slice(s, None if stop < 0 else stop, st))
    return [np.asarray(args[0])[tuple(index)]]


@evaluates(core.ConcatOp)
def concat(ev: Scope, op: core.ConcatOp, args: Args) -> list[Value]:
    return [np.concatenate(args, axis=op.axis.value.data)]


@evaluates(core.PadOp)
def pad(ev: Scope, op: core.PadOp, args: Args) -> list[Value]:
    """Negative pads crop; the rest are filled by `mode` (constant, reflect, edge, wrap)."""
    x, value = np.asarray(args[0]), args[1]
    if op.pads:
        pads = [int(p) for p in np.asarray(args[2]).reshape(-1)]
        lo, hi = tuple(pads[: x.ndim]), tuple(pads[x.ndim :])
    else:
        lo, hi = ints(op.pad_low), ints(op.pad_high)
    crop = tuple(slice(max(-a, 0), n - max(-b, 0)) for a, b, n in zip(lo, hi, x.shape, strict=True))
    x = x[crop]
    widths = [(max(a, 0), max(b, 0)) for a, b in zip(lo, hi, strict=True)]
    mode = op.mode.data
    if mode == "constant":
        return [np.pad(x, widths, mode="constant", constant_values=np.asarray(value).item())]
    return [np.pad(x, widths, mode={"reflect": "reflect", "edge": "edge", "wrap": "wrap"}[mode])]


# ---- gather and scatter -------------------------------------------------------------------


@evaluates(core.GatherOp)
def gather(ev: Scope, op: core.GatherOp, args: Args) -> list[Value]:
    return [np.take(args[0], args[1], axis=op.axis.value.data)]


@evaluates(core.GatherElementsOp)
def gather_elements(ev: Scope, op: core.GatherElementsOp, args: Args) -> list[Value]:
    return [np.take_along_axis(args[0], args[1], axis=op.axis.value.data)]


@evaluates(core.GatherNDOp)
def gather_nd(ev: Scope, op: core.GatherNDOp, args: Args) -> list[Value]:
    """Each innermost index tuple picks a slice of data, per batch entry."""
    data, indices = np.asarray(args[0]), np.asarray(args[1])
    b = op.batch_dims.value.data
    batch = data.shape[:b]
    depth = indices.shape[-1]
    out_inner = indices.shape[b:-1] + data.shape[b + depth :]
    # Sizes are spelled out: with no tuples at all, a -1 in a reshape would be ambiguous.
    count = int(np.prod(batch, dtype=np.int64))
    tuples = int(np.prod(indices.shape[b:-1], dtype=np.int64))
    sliced = data.shape[b + depth :]
    flat_data = data.reshape((count, *data.shape[b:]))
    flat_idx = indices.reshape((count, tuples, depth))
    out = np.empty((count, tuples, *sliced), dtype=data.dtype)
    for k in range(count):
        for p in range(tuples):
            out[k, p] = flat_data[k][tuple(flat_idx[k, p])]
    return [out.reshape(batch + out_inner)]


_SCATTER: dict[str, Callable[[Value, Value], Value]] = {
    "none": lambda old, new: new,
    "add": lambda old, new: old + new,
    "mul": lambda old, new: old * new,
    "max": lambda old, new: np.maximum(old, new),
    "min": lambda old, new: np.minimum(old, new),
}
"""How an update combines with the element it lands on, by `reduction`."""


@evaluates(core.ScatterElementsOp)
def scatter_elements(ev: Scope, op: core.ScatterElementsOp, args: Args) -> list[Value]:
    """Updates in index order, so that repeated indices combine in a defined order."""
    data, indices, updates = (np.asarray(a) for a in args)
    out = data.copy()
    axis = op.axis.value.data
    combine = _SCATTER[op.reduction.data]
    for pos in np.ndindex(*indices.shape):
        target = list(pos)
        target[axis] = int(indices[pos])
        t = tuple(target)
        out[t] = combine(out[t], updates[pos])
    return [out]


@evaluates(core.ScatterNDOp)
def scatter_nd(ev: Scope, op: core.ScatterNDOp, args: Args) -> list[Value]:
    data, indices, updates = (np.asarray(a) for a in args)
    out = data.copy()
    combine = _SCATTER[op.reduction.data]
    for pos in np.ndindex(*indices.shape[:-1]):
        t = tuple(int(i) for i in indices[pos])
        out[t] = combine(out[t], updates[pos])
    return [out]


__all__: list[str] = []
