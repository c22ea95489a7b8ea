"""core → kernel: the data-movement family (transpose, slice, concat, pad, gathers, scatters).

Each op but the scatters is one all-parallel nest over its result whose body
computes, from the result indices, where to read its input, loads there and
stores: the source index is plain index arithmetic (`start + i * stride`, a
loaded index, a clamped or mirrored index), so an elementwise consumer can
later inline the whole body. Nests run over the result in row-major order,
so stores (and, for slices, pads and gathers along outer axes, loads too)
walk contiguous memory. Concat writes one nest per input, each into its slab
of the result.

Scatters copy their input into the result and then run one nest over the
updates that loads, combines and stores. Two updates may hit the same
element, so their dims are marked `reduction`: the nest must run in order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseArrayBase, MemRefType, TensorType
from xdsl.ir import SSAValue

from rung.dialects import core

from .builder import Dim, KernelBuilder, static_value
from .constants import constant_array
from .elements import KernelLoweringError
from .elementwise import shape_operand_dims
from .registry import lowers


def _shape(v: SSAValue) -> list[int]:
    """The static shape of a tensor or buffer (`?` dims as negative numbers)."""
    t = v.type
    assert isinstance(t, TensorType | MemRefType)
    return list(t.get_shape())


def _ints(attr: DenseArrayBase | None) -> list[int]:
    assert attr is not None
    return [int(v) for v in attr.get_values()]


def load_index(b: KernelBuilder, buf: SSAValue, indices: Sequence[Dim]) -> SSAValue:
    """An element of an integer buffer (gather/scatter indices) as an index value."""
    return b.to_index(b.load(buf, indices))


def all_true(b: KernelBuilder, conds: Sequence[SSAValue]) -> SSAValue | None:
    """The conjunction of i1 conditions, or None when there are none."""
    result: SSAValue | None = None
    for c in conds:
        result = c if result is None else b.op1(arith.AndIOp, result, c)
    return result


def scalar_operand(b: KernelBuilder, tensor: SSAValue) -> SSAValue:
    """A rank-0 operand as a scalar: a literal when it is a constant, else one load."""
    buf = b.buffer(tensor)
    t = buf.type
    assert isinstance(t, MemRefType)
    values = constant_array(buf)
    if values is not None and values.size == 1:
        return b.const(values.reshape(-1)[0].item(), t.element_type)
    return b.load(buf, [0] * len(t.get_shape()))


# ---- transpose ---------------------------------------------------------------------------------


@lowers(core.TransposeOp)
def transpose(b: KernelBuilder, op: core.TransposeOp) -> list[SSAValue]:
    """A nest over the result reading `x[perm⁻¹(i)]`; a view when only unit dims move."""
    x = b.buffer(op.input)
    perm = _ints(op.perm)
    in_dims = b.dims(x)
    out_dims = [in_dims[p] for p in perm]
    shape = _shape(x)
    moved = [p for p in perm if shape[p] != 1]
    if moved == sorted(moved):
        return [b.view(x, out_dims)]
    out = b.alloc_for(op.result, out_dims)

    def body(b: KernelBuilder, ivs: list[SSAValue]) -> None:
        src: list[Dim] = [0] * len(perm)
        for i, p in enumerate(perm):
            src[p] = ivs[i]
        b.store(b.load(x, src), out, ivs)

    b.parallel(b.dims(out), body)
    return [out]


# ---- slice ---------------------------------------------------------------------------------------


@lowers(core.SliceOp)
def slice_(b: KernelBuilder, op: core.SliceOp) -> list[SSAValue]:
    """`out[i] = x[start + i * stride]`; run-time starts, sizes and strides are loaded once."""
    x = b.buffer(op.input)
    rank = len(_shape(x))
    if op.dynamic:
        start_buf, stride_buf = b.buffer(op.dynamic[0]), b.buffer(op.dynamic[2])
        starts: list[Dim] = [b.load_dim(start_buf, d) for d in range(rank)]
        strides: list[Dim] = [b.load_dim(stride_buf, d) for d in range(rank)]
        out_dims = shape_operand_dims(b, op.result, op.dynamic[1])
    else:
        if any(d < 0 for d in _shape(op.result)):
            raise KernelLoweringError(
                "the static form of core.slice needs a static result shape (use the start, "
                "size and stride operands for run-time sizes)"
            )
        starts, strides = list(_ints(op.start)), list(_ints(op.stride))
        out_dims = list(_shape(op.result))
    out = b.alloc_for(op.result, out_dims)

    def body(b: KernelBuilder, ivs: list[SSAValue]) -> None:
        src = [b.iadd(s, b.imul(i, st)) for s, i, st in zip(starts, ivs, strides, strict=True)]
        b.store(b.load(x, src), out, ivs)

    b.parallel(b.dims(out), body)
    return [out]


# ---- concat --------------------------------------------------------------------------------------


@lowers(core.ConcatOp)
def concat(b: KernelBuilder, op: core.ConcatOp) -> list[SSAValue]:
    """One nest per input, copying it into its slab of the result along `axis`.

    Nests take the result's sizes off the axis: a size static in the result or
    in any input is static for all of them.
    """
    axis = op.axis.value.data
    inputs = [b.buffer(v) for v in op.inputs]
    all_dims = [b.dims(x) for x in inputs]
    out_dims: list[Dim] = [d if d >= 0 else all_dims[0][k] for k, d in enumerate(_shape(op.result))]
    for dims in all_dims[1:]:  # a static size of any input beats a run-time one
        out_dims = [a if isinstance(a, int) else c for a, c in zip(out_dims, dims, strict=True)]
    total: Dim = 0
    for dims in all_dims:
        total = b.iadd(total, dims[axis])
    out_dims[axis] = total
    if len(inputs) == 1:
        return [b.view(inputs[0], out_dims)]
    out = b.alloc_for(op.result, out_dims)
    offset: Dim = 0
    for k, (x, dims) in enumerate(zip(inputs, all_dims, strict=True)):
        if k:
            offset = b.iadd(offset, all_dims[k - 1][axis])

        def body(b: KernelBuilder, ivs: list[SSAValue], x: SSAValue = x, at: Dim = offset) -> None:
            dst: list[Dim] = list(ivs)
            dst[axis] = b.iadd(ivs[axis], at)
            b.store(b.load(x, ivs), out, dst)

        bounds = list(out_dims)
        bounds[axis] = dims[axis]
        b.parallel(bounds, body)
    return [out]


# ---- pad -----------------------------------------------------------------------------------------


def _pads(b: KernelBuilder, op: core.PadOp, rank: int) -> tuple[list[Dim], list[Dim]]:
    """Low and high pads per dim: properties, or entries of the pads operand (loaded once)."""
    if not op.pads:
        return list(_ints(op.pad_low)), list(_ints(op.pad_high))
    buf = b.buffer(op.pads[0])
    return [b.load_dim(buf, d) for d in range(rank)], [
        b.load_dim(buf, rank + d) for d in range(rank)
    ]


def _nonneg(b: KernelBuilder, d: Dim) -> Dim:
    return b.imax(d, 0)


@lowers(core.PadOp)
def pad(b: KernelBuilder, op: core.PadOp) -> list[SSAValue]:
    """One nest over the result; each dim maps its index back into the (cropped) input.

    A negative pad crops: per dim the input is `x[crop_lo : n - crop_hi]` (size
    `m`), padded by `lo = max(pad_low, 0)` and `hi`. With `j = i - lo`:
    constant reads `x[j]` where `0 <= j < m` (one unsigned compare) and
    selects the fill value elsewhere; edge clamps `j` into `[0, m)`; wrap
    takes `j mod m`; reflect folds `j mod 2(m-1)` back into `[0, m)`. The
    modular indices are computed as `(i + p - lo mod p) mod p`, which is
    never negative, so unsigned index arithmetic serves.
    """
    mode = op.mode.data
    x = b.buffer(op.input)
    in_dims = b.dims(x)
    rank = len(in_dims)
    low, high = _pads(b, op, rank)
    crop_lo = [_nonneg(b, b.isub(0, p)) for p in low]
    crop_hi = [_nonneg(b, b.isub(0, p)) for p in high]
    lo = [_nonneg(b, p) for p in low]
    hi = [_nonneg(b, p) for p in high]
    kept = [b.isub(b.isub(n, c0), c1) for n, c0, c1 in zip(in_dims, crop_lo, crop_hi, strict=True)]
    out_dims = [
        d if d >= 0 else b.iadd(b.iadd(in_dims[k], low[k]), high[k])
        for k, d in enumerate(_shape(op.result))
    ]
    out = b.alloc_for(op.result, out_dims)
    padded = [
        not (static_value(a) == 0 and static_value(c) == 0) for a, c in zip(lo, hi, strict=True)
    ]
    empty = any(static_value(m) == 0 for m in kept)
    fill = scalar_operand(b, op.value) if mode == "constant" else None
    if empty and fill is None and any(padded) and 0 not in out_dims:
        raise KernelLoweringError(f"{mode} padding of an empty dim has no values to copy")
    last = [
        b.isub(m, 1) if mode == "edge" and pd else m for m, pd in zip(kept, padded, strict=True)
    ]
    shift: list[Dim] = [0] * rank
    period: list[Dim] = list(kept)
    if mode in ("wrap", "reflect"):
        for d in range(rank):
            if not padded[d]:
                continue
            p = b.imul(2, b.isub(kept[d], 1)) if mode == "reflect" else kept[d]
            period[d] = b.imax(p, 1)  # a period of 0 (one element to reflect) acts as 1
            shift[d] = b.isub(period[d], b.irem(lo[d], period[d]))

    def source(b: KernelBuilder, d: int, i: SSAValue, inside: list[SSAValue]) -> Dim:
        if not padded[d]:
            return i
        if mode == "constant":
            j = b.isub(i, lo[d])
            inside.append(b.icmp("ult", j, kept[d]))
            return b.select_index(inside[-1], j, 0)
        if mode == "edge":
            j = b.isub(i, lo[d])
            if static_value(lo[d]) != 0:
                j = b.imax(j, 0)
            if static_value(hi[d]) != 0:
                j = b.imin(j, last[d])
            return j
        j = b.irem(b.iadd(i, shift[d]), period[d])
        if mode == "wrap":
            return j
        return b.select_index(b.icmp("ult", j, kept[d]), j, b.isub(period[d], j))

    def body(b: KernelBuilder, ivs: list[SSAValue]) -> None:
        if empty:
            assert fill is not None
            b.store(fill, out, ivs)
            return
        inside: list[SSAValue] = []
        src = [b.iadd(source(b, d, i, inside), crop_lo[d]) for d, i in enumerate(ivs)]
        value = b.load(x, src)
        cond = all_true(b, inside)
        if cond is not None:
            assert fill is not None
            value = b.select(cond, value, fill)
        b.store(value, out, ivs)

    b.parallel(b.dims(out), body)
    return [out]


# ---- gathers -------------------------------------------------------------------------------------


@lowers(core.GatherOp)
def gather(b: KernelBuilder, op: core.GatherOp) -> list[SSAValue]:
    """`out[a…, k…, c…] = x[a…, indices[k…], c…]`: one nest over the result."""
    axis = op.axis.value.data
    x, idx = b.buffer(op.input), b.buffer(op.indices)
    in_dims, idx_dims = b.dims(x), b.dims(idx)
    k = len(idx_dims)
    out = b.alloc_for(op.result, [*in_dims[:axis], *idx_dims, *in_dims[axis + 1 :]])

    def body(b: KernelBuilder, ivs: list[SSAValue]) -> None:
        at = load_index(b, idx, ivs[axis : axis + k])
        b.store(b.load(x, [*ivs[:axis], at, *ivs[axis + k :]]), out, ivs)

    b.parallel(b.dims(out), body)
    return [out]


@lowers(core.GatherElementsOp)
def gather_elements(b: KernelBuilder, op: core.GatherElementsOp) -> list[SSAValue]:
    """`out[i] = x[i with dim axis replaced by indices[i]]`: one nest over the indices."""
    axis = op.axis.value.data
    x, idx = b.buffer(op.input), b.buffer(op.indices)
    out = b.alloc_for(op.result, b.dims(idx))

    def body(b: KernelBuilder, ivs: list[SSAValue]) -> None:
        src: list[Dim] = list(ivs)
        src[axis] = load_index(b, idx, ivs)
        b.store(b.load(x, src), out, ivs)

    b.parallel(b.dims(out), body)
    return [out]


def _depth(idx: SSAValue) -> int:
    """The length of index tuples (the last dim of the indices), which must be static."""
    depth = _shape(idx)[-1] if _shape(idx) else -1
    if depth < 0:
        raise KernelLoweringError(
            "the index tuples (the last dim of the indices) must have a static length"
        )
    return depth


@lowers(core.GatherNDOp)
def gather_nd(b: KernelBuilder, op: core.GatherNDOp) -> list[SSAValue]:
    """`out[p…, c…] = x[p[:batch]…, indices[p…, :]…, c…]`, p over `indices.shape[:-1]`."""
    batch = op.batch_dims.value.data
    x, idx = b.buffer(op.input), b.buffer(op.indices)
    depth = _depth(idx)
    in_dims, idx_dims = b.dims(x), b.dims(idx)
    q = len(idx_dims) - 1
    out = b.alloc_for(op.result, [*idx_dims[:q], *in_dims[batch + depth :]])

    def body(b: KernelBuilder, ivs: list[SSAValue]) -> None:
        tuple_ = [load_index(b, idx, [*ivs[:q], k]) for k in range(depth)]
        b.store(b.load(x, [*ivs[:batch], *tuple_, *ivs[q:]]), out, ivs)

    b.parallel(b.dims(out), body)
    return [out]


# ---- scatters ------------------------------------------------------------------------------------


def _scatter(
    b: KernelBuilder,
    op: core.ScatterElementsOp | core.ScatterNDOp,
    target: Callable[[KernelBuilder, list[SSAValue]], list[Dim]],
) -> list[SSAValue]:
    """Copy the input into the result, then combine each update into it, in order.

    `target(b, ivs)` gives the result indices an update at `ivs` goes to.
    """
    data, updates = b.buffer(op.input), b.buffer(op.updates)
    out = b.alloc_for(op.result, b.dims(data))
    b.copy(data, out)
    fn = op.reduction.data
    bounds = b.dims(updates)

    def body(b: KernelBuilder, ivs: list[SSAValue], _: list[SSAValue]) -> None:
        dst = target(b, ivs)
        value = b.load(updates, ivs)
        if fn != "none":
            value = b.binary(fn, b.load(out, dst), value)
        b.store(value, out, dst)

    b.loop(bounds, ["reduction"] * len(bounds), body)
    return [out]


@lowers(core.ScatterElementsOp)
def scatter_elements(b: KernelBuilder, op: core.ScatterElementsOp) -> list[SSAValue]:
    """`out[i with dim axis replaced by indices[i]] (op)= updates[i]`."""
    axis = op.axis.value.data
    idx = b.buffer(op.indices)

    def target(b: KernelBuilder, ivs: list[SSAValue]) -> list[Dim]:
        dst: list[Dim] = list(ivs)
        dst[axis] = load_index(b, idx, ivs)
        return dst

    return _scatter(b, op, target)


@lowers(core.ScatterNDOp)
def scatter_nd(b: KernelBuilder, op: core.ScatterNDOp) -> list[SSAValue]:
    """`out[indices[p, :]…, c…] (op)= updates[p…, c…]`, p over `indices.shape[:-1]`."""
    idx = b.buffer(op.indices)
    depth = _depth(idx)
    q = len(_shape(idx)) - 1

    def target(b: KernelBuilder, ivs: list[SSAValue]) -> list[Dim]:
        return [*(load_index(b, idx, [*ivs[:q], k]) for k in range(depth)), *ivs[q:]]

    return _scatter(b, op, target)
