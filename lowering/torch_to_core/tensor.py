"""ATen views, shapes, data movement and creation → core.

torch.export hands over each op with its result type already inferred
(static dims, `?` where only the run knows the size), so handlers take the
static shape from `op.result.type` and compute at run time only the `?`
dims, from the input's shape or from the op's symbolic sizes (0-d i64
tensors, see `sym`). Views are copies here: `view`, `permute`, `expand` and
friends become `core.reshape`, `core.transpose` and `core.broadcast`.

torch checks sizes and indices when it traces and relies on guards for the
rest; rung drops those guards, so wherever a wrong run-time size or index
would make a kernel read or write outside a buffer (a reshape to another
element count, an expand of a dim that is not 1, a gather index out of
range), the run checks it first with `core.check`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import IntegerType, StringAttr
from xdsl.ir import Attribute, SSAValue

from rung.dialects import core
from rung.dialects.dtypes import f64, i1, i64, numpy_dtype
from rung.dialects.torch import ConstantOp
from rung.dialects.torch import generated_ops as aten
from rung.lowering.kit import (
    CoreBuilder,
    DimOf,
    LoweringError,
    Size,
    declared,
    element_of,
    int_attr,
    iota,
    is_static,
    normalize_axis,
    ranked_shape,
    tensor,
)

from .registry import TABLE, Results, add_lowering, lowers
from .sym import as_i64, dim_value, sizes

Item = int | DimOf | SSAValue
"""One size of a shape being built: a number, a dim of a value, or a 0-d i64 tensor."""

_BIG = 2**62
"""An end at or beyond this means "to the end of the dim" (torch writes `sys.maxsize`)."""


# ---- shapes ----------------------------------------------------------------------------


def _vector(b: CoreBuilder, items: Sequence[Item]) -> SSAValue:
    """A 1-D i64 shape vector of numbers, dims of values and 0-d i64 tensors."""
    if not any(isinstance(i, SSAValue) for i in items):
        return b.shape_vector(items)  # type: ignore[arg-type]
    scalars = [dim_value(b, i.value, i.axis) if isinstance(i, DimOf) else i for i in items]
    return sizes(b, scalars)


def _scalar(b: CoreBuilder, value: int | SSAValue) -> SSAValue:
    """A number or a symbolic size as a 0-d i64 tensor."""
    return b.scalar(value, i64) if isinstance(value, int) else as_i64(b, value)


def _item(x: SSAValue, axis: int) -> Item:
    """Dim `axis` of `x`: a number where static, else read at run time."""
    d = ranked_shape(x)[axis]
    return d if d >= 0 else DimOf(x, axis)


def _reshape(b: CoreBuilder, x: SSAValue, items: Sequence[Item], out: Attribute) -> SSAValue:
    """`x` reshaped to `out`; its `?` dims are `items` (which hold as many elements as x)."""
    if is_static(out):
        return b.reshape(x, out)
    shape = ranked_shape(out)
    if len(items) != len(shape):
        raise LoweringError(f"{len(items)} sizes for a result of type {out}")
    known = [d if d >= 0 else item for d, item in zip(shape, items, strict=True)]
    new = core.ReshapeOp.create(operands=[x, _vector(b, known)], result_types=[out])
    return b.insert(new).results[0]


def _numel(b: CoreBuilder, x: SSAValue) -> SSAValue:
    """The element count of `x` as a 0-d i64 tensor (a constant when static)."""
    shape = ranked_shape(x)
    if all(d >= 0 for d in shape):
        return b.scalar(int(np.prod(shape, dtype=np.int64)), i64)
    return b.reduce("prod", b.shape_of(x), [0])


def _put(b: CoreBuilder, base: SSAValue, dim: int, value: SSAValue) -> SSAValue:
    """The 1-D i64 `base` with entry `dim` replaced by the 0-d `value`."""
    (rank,) = ranked_shape(base)
    if rank == 1:
        return b.reshape(value, tensor(i64, [1]))
    mask = b.constant(np.arange(rank) == dim)
    return b.select(mask, b.broadcast_to(value, base.type), base)


def _dims_vector(b: CoreBuilder, x: SSAValue) -> SSAValue:
    """The shape of `x` as a 1-D i64 tensor: a constant when static."""
    shape = ranked_shape(x)
    if all(d >= 0 for d in shape):
        return b.constant(np.array(shape, np.int64).reshape(len(shape)))
    return b.shape_of(x)


def _expand(
    b: CoreBuilder,
    x: SSAValue,
    out: Attribute,
    shape: SSAValue | None,
    same: Sequence[int] = (),
) -> SSAValue:
    """`x` broadcast (right-aligned) to `out`, whose `?` dims `shape` gives at run time.

    A `?` dim of x is either 1 (repeated) or the target's size: the run checks
    which, except for the dims in `same`, known to be the target's.
    """
    src, dst = ranked_shape(x), ranked_shape(out)
    offset = len(dst) - len(src)
    if offset < 0:
        raise LoweringError(f"cannot expand {x.type} to {out}")
    for j, d in enumerate(src):
        if d >= 0 and d != 1 and dst[j + offset] >= 0 and d != dst[j + offset]:
            raise LoweringError(f"cannot expand {x.type} to {out}")
    open_dims = [j for j, d in enumerate(src) if d < 0 and j not in same]
    if open_dims:
        target = shape if shape is not None else b.constant(np.array(dst, np.int64))
        picks = b.constant(np.array([j + offset for j in open_dims], np.int64))
        mine = b.gather(b.shape_of(x), b.constant(np.array(open_dims, np.int64)), 0)
        wanted = b.gather(target, picks, 0)
        fits = b.binary(
            "or", b.compare("eq", mine, wanted), b.compare("eq", mine, b.splat(1, mine))
        )
        message = "expand: a dim must be 1 or the size it expands to"
        x = b.check(x, fits, message, culprit=mine)
    return b.broadcast_to(x, out, shape=shape, always=any(d < 0 for d in src))


def _agree(
    b: CoreBuilder, v: SSAValue, dims: Sequence[Size], others: Sequence[Size], message: str
) -> SSAValue:
    """`v`, once `dims` equal `others` pairwise: static pairs now, the others at run time."""
    return _dims_hold(b, v, dims, others, "eq", message)


def _at_most(
    b: CoreBuilder, v: SSAValue, dims: Sequence[Size], bounds: Sequence[Size], message: str
) -> SSAValue:
    """`v`, once each of `dims` is at most the matching one of `bounds`."""
    return _dims_hold(b, v, dims, bounds, "le", message)


def _dims_hold(
    b: CoreBuilder,
    v: SSAValue,
    dims: Sequence[Size],
    others: Sequence[Size],
    pred: str,
    message: str,
) -> SSAValue:
    """`v`, once `pred` (eq or le) holds for each pair of sizes: static pairs are
    compared now, the others by the run (one dim of one value needs no check)."""
    holds = {"eq": lambda p, q: p == q, "le": lambda p, q: p <= q}[pred]
    unknown: list[tuple[Size, Size]] = []
    for d, o in zip(dims, others, strict=True):
        if isinstance(d, int) and isinstance(o, int):
            if not holds(d, o):
                raise LoweringError(f"{message}: {d} and {o}")
        elif not _same_dim(d, o):
            unknown.append((d, o))
    if not unknown:
        return v
    mine = b.shape_vector([d for d, _ in unknown])
    fits = b.compare(pred, mine, b.shape_vector([o for _, o in unknown]))
    return b.check(v, fits, message, culprit=mine)


def _same_dim(a: Size, c: Size) -> bool:
    """Whether two sizes are equal for certain: equal numbers, or one dim of one value."""
    if isinstance(a, int) or isinstance(c, int):
        return a == c
    return a.value is c.value and a.axis == c.axis


# ---- views and shapes ------------------------------------------------------------------


@lowers(
    aten.AtenCloneOp,
    aten.AtenAliasOp,
    aten.AtenDetachOp,
    aten.AtenLiftFreshCopyOp,
    aten.AtenContiguousOp,
)
def identity(b: CoreBuilder, op: aten.AtenCloneOp) -> Results:
    """Copies and aliases: values are immutable in core, so the input itself."""
    return [declared(b, op.self_, op.result.type, op.SCHEMA.qualified_name)]


@lowers(aten.AtenViewOp, aten.AtenReshapeOp)
def view(b: CoreBuilder, op: aten.AtenViewOp) -> Results:
    """A reshape; one -1 takes what the other sizes leave. A reshape whose sizes the run
    computes is checked to keep the element count (else it would read past x)."""
    x, out = op.self_, op.result.type
    name = "size" if isinstance(op, aten.AtenViewOp) else "shape"
    items: list[object] = list(op.arg(name))  # type: ignore[call-overload]
    shape = ranked_shape(out)
    if len(items) != len(shape):
        raise LoweringError(f"{len(items)} sizes for a result of type {out}")
    if is_static(out) and is_static(x.type):
        return [b.reshape(x, out)]
    message = (
        f"{op.SCHEMA.qualified_name}: the sizes must not be negative and must hold as many "
        "elements as the input"
    )
    total = _numel(b, x)
    if is_static(out):
        count = b.scalar(int(np.prod(shape, dtype=np.int64)), i64)
        return [b.reshape(b.check(x, b.compare("eq", total, count), message), out)]
    known: list[Item] = []
    free: int | None = None
    for i, (d, item) in enumerate(zip(shape, items, strict=True)):
        if d >= 0:
            known.append(d)
        elif isinstance(item, SSAValue):
            known.append(item)
        elif item == -1:
            free = i
        else:
            raise LoweringError(f"size {item!r} for a dim of {out}")
    if free is not None:  # the -1 where the result type does not know it: what is left
        rest_of = b.reduce("prod", _vector(b, known), [0]) if known else b.scalar(1, i64)
        known.insert(free, b.binary("div", total, b.binary("max", rest_of, b.scalar(1, i64))))
    target = _vector(b, known)
    count = b.reduce("prod", target, [0])
    natural = b.reduce("and", b.compare("ge", target, b.splat(0, target)), [0])
    fits = b.binary("and", b.compare("eq", count, total), natural)
    target = b.check(target, fits, message, culprit=count)
    new = core.ReshapeOp.create(operands=[x, target], result_types=[out])
    return [b.insert(new).results[0]]


@lowers(aten.AtenPermuteOp)
def permute(b: CoreBuilder, op: aten.AtenPermuteOp) -> Results:
    x = op.self_
    rank = len(ranked_shape(x))
    dims = [normalize_axis(d, rank) for d in op.arg("dims")]  # type: ignore[attr-defined]
    return [declared(b, b.transpose(x, dims), op.result.type, "permute")]


@lowers(aten.AtenTransposeIntOp)
def transpose(b: CoreBuilder, op: aten.AtenTransposeIntOp) -> Results:
    x = op.self_
    rank = len(ranked_shape(x))
    if rank == 0:
        return [x]
    a = normalize_axis(op.arg("dim0"), rank)  # type: ignore[arg-type]
    c = normalize_axis(op.arg("dim1"), rank)  # type: ignore[arg-type]
    perm = list(range(rank))
    perm[a], perm[c] = perm[c], perm[a]
    return [declared(b, b.transpose(x, perm), op.result.type, "transpose")]


@lowers(aten.AtenTOp)
def t(b: CoreBuilder, op: aten.AtenTOp) -> Results:
    x = op.self_
    if len(ranked_shape(x)) < 2:
        return [x]
    return [declared(b, b.transpose(x, [1, 0]), op.result.type, "t")]


@lowers(aten.AtenExpandOp)
def expand(b: CoreBuilder, op: aten.AtenExpandOp) -> Results:
    """A broadcast: -1 keeps x's dim, new dims go in front; sizes may be symbolic."""
    x, out = op.self_, op.result.type
    items: list[object] = list(op.arg("size"))  # type: ignore[call-overload]
    shape = ranked_shape(out)
    offset = len(items) - len(ranked_shape(x))
    if len(items) != len(shape) or offset < 0:
        raise LoweringError(f"expand of {x.type} by {len(items)} sizes to {out}")
    kept = [i - offset for i, item in enumerate(items) if i >= offset and item == -1]
    if is_static(out):
        return [_expand(b, x, out, None, kept)]
    target: list[Item] = []
    for i, (d, item) in enumerate(zip(shape, items, strict=True)):
        if d >= 0:
            target.append(d)
        elif isinstance(item, SSAValue):
            target.append(item)
        elif item == -1 and i >= offset:
            target.append(DimOf(x, i - offset))
        else:
            raise LoweringError(f"expand to size {item!r}")
    return [_expand(b, x, out, _vector(b, target), kept)]


def _squeezed(b: CoreBuilder, x: SSAValue, dims: Sequence[int], out: Attribute) -> SSAValue:
    """`x` without those of `dims` that are 1 (torch leaves the others alone)."""
    shape = ranked_shape(x)
    rank = len(shape)
    if rank == 0:
        return declared(b, x, out, "squeeze")
    drop = {normalize_axis(d, rank) for d in dims}
    ones = {d for d in drop if shape[d] == 1}
    unknown = {d for d in drop if shape[d] < 0}
    removed = rank - len(ranked_shape(out))
    if removed == len(ones):
        drop = ones
    elif removed == len(ones) + len(unknown):
        drop = ones | unknown
        message = "squeeze: a squeezed dim is not 1"
        x = _agree(b, x, [DimOf(x, d) for d in sorted(unknown)], [1] * len(unknown), message)
    else:
        raise LoweringError(f"squeeze of {x.type} to {out}: which `?` dims are 1 is unknown")
    kept = [_item(x, i) for i in range(rank) if i not in drop]
    return _reshape(b, x, kept, out)


@lowers(aten.AtenSqueezeDimOp)
def squeeze_dim(b: CoreBuilder, op: aten.AtenSqueezeDimOp) -> Results:
    return [_squeezed(b, op.self_, [op.arg("dim")], op.result.type)]  # type: ignore[list-item]


@lowers(aten.AtenSqueezeDimsOp)
def squeeze_dims(b: CoreBuilder, op: aten.AtenSqueezeDimsOp) -> Results:
    return [_squeezed(b, op.self_, op.arg("dim"), op.result.type)]  # type: ignore[arg-type]


@lowers(aten.AtenUnsqueezeOp)
def unsqueeze(b: CoreBuilder, op: aten.AtenUnsqueezeOp) -> Results:
    x = op.self_
    rank = len(ranked_shape(x))
    at = normalize_axis(op.arg("dim"), rank + 1)  # type: ignore[arg-type]
    items: list[Item] = [_item(x, i) for i in range(rank)]
    items.insert(at, 1)
    return [_reshape(b, x, items, op.result.type)]


@lowers(aten.AtenFlattenUsingIntsOp)
def flatten(b: CoreBuilder, op: aten.AtenFlattenUsingIntsOp) -> Results:
    x, out = op.self_, op.result.type
    shape = ranked_shape(x)
    rank = len(shape)
    if rank == 0:
        return [b.reshape(x, out)]
    start = normalize_axis(op.arg("start_dim"), rank)  # type: ignore[arg-type]
    end = normalize_axis(op.arg("end_dim"), rank)  # type: ignore[arg-type]
    merged = shape[start : end + 1]
    product: Item
    if all(d >= 0 for d in merged):
        product = int(np.prod(merged, dtype=np.int64))
    else:
        product = b.reduce("prod", b.slice(b.shape_of(x), [start], [end + 1 - start]), [0])
    items = [*(_item(x, i) for i in range(start)), product]
    items += [_item(x, i) for i in range(end + 1, rank)]
    return [_reshape(b, x, items, out)]


@lowers(aten.Aten_ToCopyOp, aten.AtenToDtypeOp)
def to_dtype(b: CoreBuilder, op: aten.Aten_ToCopyOp) -> Results:
    """A cast to the result's element type; layout, device and memory format change no value."""
    x, out = op.self_, op.result.type
    return [declared(b, b.cast(x, element_of(out)), out, op.SCHEMA.qualified_name)]


# ---- slicing and splitting -------------------------------------------------------------


def _slice_range(
    b: CoreBuilder, x: SSAValue, dim: int, start: object, end: object, step: object
) -> tuple[int | SSAValue, int | SSAValue]:
    """The first index and the count of torch's `x[start:end:step]` along `dim`.

    Negative bounds count from the end, then both are clamped into the dim
    (an end past it stops there, a start past the end gives nothing), as
    torch does: numbers where the dim and the bounds are static, 0-d i64
    tensors computed at run time otherwise.
    """
    if not isinstance(step, int) or step <= 0:
        raise LoweringError(f"slice step {step!r}: only positive numbers are supported")
    n = ranked_shape(x)[dim]
    if n >= 0 and not isinstance(start, SSAValue) and not isinstance(end, SSAValue):
        s = 0 if start is None else int(start)  # type: ignore[call-overload]
        e = n if end is None else int(end)  # type: ignore[call-overload]
        s, e = (v + n if v < 0 else v for v in (s, e))
        s = min(max(s, 0), n)
        e = min(max(e, s), n)
        count = -(-(e - s) // step)
        return (s if count else 0), count
    n_v = dim_value(b, x, dim)
    zero = b.scalar(0, i64)

    def clamp(v: object) -> SSAValue:
        if isinstance(v, int) and v >= 0:
            return b.binary("min", b.scalar(v, i64), n_v)
        if isinstance(v, int):
            return b.binary("max", b.binary("add", b.scalar(v, i64), n_v), zero)
        value = _scalar(b, v)  # type: ignore[arg-type]
        value = b.select(b.compare("lt", value, zero), b.binary("add", value, n_v), value)
        return b.binary("min", b.binary("max", value, zero), n_v)

    s_v: int | SSAValue = 0 if start is None or start == 0 else clamp(start)
    to_end = end is None or (isinstance(end, int) and end >= _BIG)
    e_v = n_v if to_end else clamp(end)
    if isinstance(s_v, int):
        span = e_v
    else:
        span = b.binary("sub", b.binary("max", e_v, s_v), s_v)
    if step == 1:
        return s_v, span
    ahead = b.binary("add", span, b.scalar(step - 1, i64))
    return s_v, b.binary("div", ahead, b.scalar(step, i64))


def _slice_dim(
    b: CoreBuilder, x: SSAValue, dim: int, start: int | SSAValue, count: int | SSAValue, step: int
) -> SSAValue:
    """`count` elements of `x` along `dim` from `start` by `step` (already in range)."""
    shape = ranked_shape(x)
    rank = len(shape)
    stride = [step if d == dim else 1 for d in range(rank)]
    if isinstance(start, int) and isinstance(count, int):
        first = [start if d == dim else 0 for d in range(rank)]
        size = [count if d == dim else -1 for d in range(rank)]
        return b.slice(x, first, size, stride)
    starts = b.constant(np.zeros(rank, np.int64))
    if not (isinstance(start, int) and start == 0):
        starts = _put(b, starts, dim, _scalar(b, start))
    counts = _put(b, _dims_vector(b, x), dim, _scalar(b, count))
    out = [
        (count if isinstance(count, int) else -1) if d == dim else n for d, n in enumerate(shape)
    ]
    new = core.SliceOp.create(
        operands=[x, starts, counts, b.constant(np.array(stride, np.int64))],
        result_types=[tensor(element_of(x.type), out)],
    )
    return b.insert(new).results[0]


def _dim_of(op: aten.AtenSliceTensorOp, x: SSAValue) -> int:
    return normalize_axis(op.arg("dim"), len(ranked_shape(x)))  # type: ignore[arg-type]


@lowers(aten.AtenSliceTensorOp)
def slice_(b: CoreBuilder, op: aten.AtenSliceTensorOp) -> Results:
    x, out = op.self_, op.result.type
    dim = _dim_of(op, x)
    start, end, step = op.arg("start"), op.arg("end"), op.arg("step")
    whole = start in (None, 0) and (end is None or isinstance(end, int) and end >= _BIG)
    if whole and step == 1:
        return [declared(b, x, out, "slice")]
    first, count = _slice_range(b, x, dim, start, end, step)
    return [declared(b, _slice_dim(b, x, dim, first, count, step), out, "slice")]  # type: ignore[arg-type]


@lowers(aten.AtenSelectIntOp)
def select(b: CoreBuilder, op: aten.AtenSelectIntOp) -> Results:
    """A gather at one index, checked against the dim (numbers now, symbols at run time)."""
    x = op.self_
    dim = _dim_of(op, x)  # type: ignore[arg-type]
    idx = b.wrap_indices(_scalar(b, op.arg("index")), b.dims(x)[dim], "select")  # type: ignore[arg-type]
    return [declared(b, b.gather(x, idx, dim), op.result.type, "select")]


def _pieces(
    b: CoreBuilder,
    x: SSAValue,
    dim: int,
    starts: Sequence[int | SSAValue],
    counts: Sequence[int | SSAValue],
    op: aten.AtenSplitTensorOp,
) -> Results:
    what = op.SCHEMA.qualified_name
    return [
        declared(b, _slice_dim(b, x, dim, s, c, 1), r.type, what)
        for s, c, r in zip(starts, counts, op.results, strict=True)
    ]


@lowers(aten.AtenSplitWithSizesOp)
def split_with_sizes(b: CoreBuilder, op: aten.AtenSplitWithSizesOp) -> Results:
    x = op.self_
    dim = _dim_of(op, x)  # type: ignore[arg-type]
    parts: list[int | SSAValue] = list(op.arg("split_sizes"))  # type: ignore[call-overload]
    if len(parts) != len(op.results):
        raise LoweringError(f"{len(parts)} sizes for {len(op.results)} results")
    n = ranked_shape(x)[dim]
    if n >= 0 and all(isinstance(p, int) for p in parts):
        if sum(parts) != n or any(p < 0 for p in parts):  # type: ignore[operator, arg-type]
            raise LoweringError(f"split_with_sizes: sizes {parts} do not split a dim of {n}")
        starts = [int(v) for v in np.cumsum([0, *parts[:-1]])]
        return _pieces(b, x, dim, starts, parts, op)  # type: ignore[arg-type]
    offset: int | SSAValue = 0
    starts_v: list[int | SSAValue] = []
    for p in parts:
        starts_v.append(offset)
        if isinstance(offset, int) and isinstance(p, int):
            offset += p
        else:
            offset = b.binary("add", _scalar(b, offset), _scalar(b, p))
    total = _scalar(b, offset)
    fits = b.compare("eq", total, dim_value(b, x, dim))
    for p in parts:  # a negative size would let the others reach past the dim
        if isinstance(p, SSAValue):
            fits = b.binary("and", fits, b.compare("ge", p, b.scalar(0, i64)))
        elif p < 0:
            raise LoweringError(f"split_with_sizes: a size of {p}")
    message = "split_with_sizes: the sizes must not be negative and must add up to the dim"
    x = b.check(x, fits, message, culprit=total)
    return _pieces(b, x, dim, starts_v, parts, op)


@lowers(aten.AtenSplitTensorOp, aten.AtenChunkOp)
def split(b: CoreBuilder, op: aten.AtenSplitTensorOp | aten.AtenChunkOp) -> Results:
    """Pieces of one size along `dim`, the last one shorter; the result count is fixed
    when torch traced, so a run-time dim is checked to give as many pieces."""
    x = op.self_
    dim = _dim_of(op, x)  # type: ignore[arg-type]
    count = len(op.results)
    n = ranked_shape(x)[dim]
    if isinstance(op, aten.AtenChunkOp):
        chunks = int(op.arg("chunks"))  # type: ignore[call-overload]
        size: int | SSAValue
        if n >= 0:
            size = -(-n // chunks)
        else:
            n_v = dim_value(b, x, dim)
            size = b.binary(
                "div", b.binary("add", n_v, b.scalar(chunks - 1, i64)), b.scalar(chunks, i64)
            )
    else:
        size = op.arg("split_size")  # type: ignore[assignment]
    if n >= 0 and isinstance(size, int):
        pieces = max(-(-n // size), 1) if size > 0 else 1
        if pieces != count:
            raise LoweringError(f"a split of {n} by {size} gives {pieces} pieces, not {count}")
        starts = [min(i * size, n) for i in range(count)]
        return _pieces(b, x, dim, starts, [min(size, n - s) for s in starts], op)
    n_v = dim_value(b, x, dim)
    size_v = _scalar(b, size)
    below = b.compare("le", n_v, b.binary("mul", size_v, b.scalar(count, i64)))
    above = b.binary(
        "or",
        b.compare("lt", b.binary("mul", size_v, b.scalar(count - 1, i64)), n_v),
        b.compare("eq", n_v, b.scalar(0, i64)),
    )
    message = f"{op.SCHEMA.qualified_name}: the dim does not split into {count} pieces"
    x = b.check(x, b.binary("and", below, above), message, culprit=n_v)
    starts_v: list[int | SSAValue] = []
    counts: list[int | SSAValue] = []
    for i in range(count):
        start = b.binary("min", b.binary("mul", size_v, b.scalar(i, i64)), n_v)
        starts_v.append(start)
        counts.append(b.binary("min", size_v, b.binary("sub", n_v, start)))
    return _pieces(b, x, dim, starts_v, counts, op)


@lowers(aten.AtenUnbindIntOp)
def unbind(b: CoreBuilder, op: aten.AtenUnbindIntOp) -> Results:
    x = op.self_
    dim = _dim_of(op, x)  # type: ignore[arg-type]
    count = len(op.results)
    x = _agree(b, x, [_item(x, dim)], [count], "unbind: the dim differs from the result count")  # type: ignore[list-item]
    return [
        declared(b, b.gather(x, b.scalar(i, i64), dim), r.type, "unbind")
        for i, r in enumerate(op.results)
    ]


# ---- joining ---------------------------------------------------------------------------


@lowers(aten.AtenCatOp)
def cat(b: CoreBuilder, op: aten.AtenCatOp) -> Results:
    """core.concat of the inputs that hold something (torch also takes 1-D empty tensors
    of any other rank), cast to the result's element type, their other dims checked."""
    out = op.result.type
    shape = ranked_shape(out)
    rank = len(shape)
    dim = normalize_axis(op.arg("dim"), rank)  # type: ignore[arg-type]
    element = element_of(out)
    inputs: list[SSAValue] = list(op.arg("tensors"))  # type: ignore[call-overload]
    ranked = [v for v in inputs if len(ranked_shape(v)) == rank]
    kept = [v for v in ranked if ranked_shape(v)[dim] != 0]
    if not kept:
        if is_static(out):
            return [b.constant(np.zeros(shape, numpy_dtype(element)))]
        kept = ranked[:1]
    if not kept:
        raise LoweringError(f"cat of no input of rank {rank}")
    kept = [b.cast(v, element) for v in kept]
    first = b.dims(kept[0])
    others = [d for d in range(rank) if d != dim]
    message = "cat: the inputs differ in a dim other than the one they are joined along"
    joined = [kept[0]] + [
        _agree(b, v, [b.dims(v)[d] for d in others], [first[d] for d in others], message)
        for v in kept[1:]
    ]
    return [declared(b, b.concat(joined, dim), out, "cat")]


@lowers(aten.AtenFlipOp)
def flip(b: CoreBuilder, op: aten.AtenFlipOp) -> Results:
    """A slice with stride -1 along the flipped dims."""
    x = op.self_
    shape = ranked_shape(x)
    rank = len(shape)
    dims = {normalize_axis(d, rank) for d in op.arg("dims")}  # type: ignore[attr-defined]
    if not dims:
        return [x]
    stride = [-1 if d in dims else 1 for d in range(rank)]
    if all(n >= 0 for n in shape):
        start = [shape[d] - 1 if d in dims else 0 for d in range(rank)]
        return [b.slice(x, start, [-1] * rank, stride)]
    mask = b.constant(np.array([d in dims for d in range(rank)]))
    dims_v = b.shape_of(x)
    last = b.binary("max", b.binary("sub", dims_v, b.splat(1, dims_v)), b.splat(0, dims_v))
    start_v = b.select(mask, last, b.splat(0, dims_v))
    new = core.SliceOp.create(
        operands=[x, start_v, dims_v, b.constant(np.array(stride, np.int64))], result_types=[x.type]
    )
    return [declared(b, b.insert(new).results[0], op.result.type, "flip")]


@lowers(aten.AtenRepeatOp)
def repeat(b: CoreBuilder, op: aten.AtenRepeatOp) -> Results:
    """Tile: x [d0, d1…] broadcast to [r0, d0, r1, d1…], then each (ri, di) pair merged.
    Extra repeats put new dims in front; repeats may be symbolic."""
    x, out = op.self_, op.result.type
    reps: list[int | SSAValue] = list(op.arg("repeats"))  # type: ignore[call-overload]
    shape = ranked_shape(x)
    lead = len(reps) - len(shape)
    if lead < 0:
        raise LoweringError(f"repeat of {x.type} by {len(reps)} repeats")
    element = element_of(x.type)
    full_shape = [1] * lead + list(shape)
    x = _reshape(
        b, x, [1] * lead + [_item(x, i) for i in range(len(shape))], tensor(element, full_shape)
    )
    rep_static = [r if isinstance(r, int) else -1 for r in reps]
    wide = [v for r, d in zip(rep_static, full_shape, strict=True) for v in (r, d)]
    odd = list(range(1, 2 * len(reps), 2))
    merged = [
        r * d if r >= 0 and d >= 0 else -1 for r, d in zip(rep_static, full_shape, strict=True)
    ]
    operands = [x]
    final: SSAValue | None = None
    if any(d < 0 for d in wide):
        reps_v, dims_v = _vector(b, reps), _dims_vector(b, x)
        picks = [i for k in range(len(reps)) for i in (k, len(reps) + k)]
        operands.append(b.gather(b.concat([reps_v, dims_v], 0), b.constant(np.array(picks)), 0))
        final = b.binary("mul", reps_v, dims_v)
    spread = core.BroadcastOp.create(
        operands=operands, result_types=[tensor(element, wide)], properties={"dims": core.ints(odd)}
    )
    value = b.reshape(b.insert(spread).results[0], tensor(element, merged), final)
    return [declared(b, value, out, "repeat")]


# ---- indexing --------------------------------------------------------------------------


def _index_tensors(
    b: CoreBuilder, x: SSAValue, entries: Sequence[SSAValue | None], what: str
) -> list[tuple[int, SSAValue]]:
    """The index tensors of an advanced index, each with the dim of x it indexes.

    None skips a dim. A bool mask covers as many dims as it has, and stands for
    one index tensor per dim: the coordinates of its true elements. Integer
    indices are checked against their dim's size and made non-negative.
    """
    shape = ranked_shape(x)
    found: list[tuple[int, SSAValue]] = []
    at = 0
    for entry in entries:
        if entry is None:
            at += 1
            continue
        if element_of(entry.type) == i1:
            k = len(ranked_shape(entry))
            if k == 0 or at + k > len(shape):
                raise LoweringError(f"{what}: a mask of rank {k} at dim {at} of {x.type}")
            message = f"{what}: the mask's shape differs from the dims it indexes"
            entry = _agree(b, entry, b.dims(entry), b.dims(x)[at : at + k], message)
            coords = core.NonZeroOp.create(operands=[entry], result_types=[tensor(i64, [k, -1])])
            coords_v = b.insert(coords).results[0]
            found += [(at + r, b.gather(coords_v, b.scalar(r, i64), 0)) for r in range(k)]
            at += k
            continue
        if at >= len(shape):
            raise LoweringError(f"{what}: too many indices for {x.type}")
        idx = b.wrap_indices(b.cast(entry, i64), b.dims(x)[at], what)
        found.append((at, idx))
        at += 1
    return found


def _entries(op: aten.AtenIndexTensorOp | aten.AtenIndexPutOp, name: str) -> list[SSAValue | None]:
    """A `Tensor?[]` argument with its absent entries as None (`op.arg` gives the
    present ones only)."""
    names = [a.name for a in op.SCHEMA.tensor_args]
    group = op.tensor_args()[names.index(name)]
    assert isinstance(group, list)
    return group


def _broadcast_shape(shapes: Sequence[Sequence[int]]) -> list[int]:
    """numpy's broadcast of static shapes, -1 where a `?` dim decides."""
    rank = max(len(s) for s in shapes)
    out = []
    for k in range(rank):
        dims = [s[k - rank + len(s)] for s in shapes if k - rank + len(s) >= 0]
        sized = {d for d in dims if d >= 0 and d != 1}
        if len(sized) > 1:
            raise LoweringError(f"index shapes {list(shapes)} cannot be broadcast together")
        out.append(sized.pop() if sized else 1 if all(d == 1 for d in dims) else -1)
    return out


def _tuples(b: CoreBuilder, idxs: Sequence[SSAValue]) -> SSAValue:
    """Index tensors of one shape B stacked into index tuples: `[*B, len(idxs)]`."""
    columns = [b.reshape_to(v, [*b.dims(v), 1]) for v in idxs]
    return b.concat(columns, len(ranked_shape(idxs[0])))


class _Advanced:
    """An advanced index of x: which dims the index tensors take, and their shape B.

    torch puts B where the indexed dims were when they are adjacent, else in
    front; core gathers and scatters by index tuples over x's leading dims,
    so x is transposed to put the indexed dims first.
    """

    def __init__(self, b: CoreBuilder, x: SSAValue, pairs: list[tuple[int, SSAValue]]) -> None:
        rank = len(ranked_shape(x))
        self.positions = [p for p, _ in pairs]
        values = [v for _, v in pairs]
        joint = tensor(i64, _broadcast_shape([ranked_shape(v) for v in values]))
        self.idxs = b.broadcast_all(values, joint)
        self.rest = [d for d in range(rank) if d not in self.positions]
        self.perm = self.positions + self.rest
        self.batch = len(ranked_shape(joint))
        first = self.positions[0]
        adjacent = self.positions == list(range(first, first + len(self.positions)))
        self.before = first if adjacent else 0
        """How many of x's dims stay in front of B in torch's result."""

    def result_items(self, b: CoreBuilder, x: SSAValue) -> list[Size]:
        """The sizes of torch's result, in its order."""
        dims = b.dims(x)
        rest = [dims[d] for d in self.rest]
        lead = b.dims(self.idxs[0])
        return [*rest[: self.before], *lead, *rest[self.before :]]

    def to_torch(self, b: CoreBuilder, v: SSAValue) -> SSAValue:
        """`[*B, *rest]` (core's order) to torch's order."""
        nb, before, total = self.batch, self.before, len(ranked_shape(v))
        perm = [*range(nb, nb + before), *range(nb), *range(nb + before, total)]
        return b.transpose(v, perm)

    def to_core(self, b: CoreBuilder, v: SSAValue) -> SSAValue:
        """torch's order to `[*B, *rest]`."""
        nb, before, total = self.batch, self.before, len(ranked_shape(v))
        perm = [*range(before, before + nb), *range(before), *range(before + nb, total)]
        return b.transpose(v, perm)


@lowers(aten.AtenIndexTensorOp)
def index(b: CoreBuilder, op: aten.AtenIndexTensorOp) -> Results:
    """One index tensor is a core.gather; several are gathered as index tuples
    (core.gather_nd) from x with the indexed dims moved first."""
    x, out = op.self_, op.result.type
    entries = _entries(op, "indices")
    pairs = _index_tensors(b, x, entries, "index")
    if not pairs:
        return [declared(b, x, out, "index")]
    if len(pairs) == 1:
        dim, idx = pairs[0]
        return [declared(b, b.gather(x, idx, dim), out, "index")]
    adv = _Advanced(b, x, pairs)
    shape = ranked_shape(x)
    moved = b.transpose(x, adv.perm)
    found = [*ranked_shape(adv.idxs[0]), *(shape[d] for d in adv.rest)]
    new = core.GatherNDOp.create(
        operands=[moved, _tuples(b, adv.idxs)],
        result_types=[tensor(element_of(x.type), found)],
        properties={"batch_dims": int_attr(0)},
    )
    return [declared(b, adv.to_torch(b, b.insert(new).results[0]), out, "index")]


@lowers(aten.AtenIndexPutOp)
def index_put(b: CoreBuilder, op: aten.AtenIndexPutOp) -> Results:
    """`x[indices] = values` (`+=` with accumulate): a scatter of index tuples into x
    with the indexed dims moved first; a mask given one value is a select."""
    x, out = op.self_, op.result.type
    element = element_of(x.type)
    values = b.cast(op.arg("values"), element)  # type: ignore[arg-type]
    entries = _entries(op, "indices")
    accumulate = bool(op.arg("accumulate"))
    masked = _masked_put(b, x, entries, values, accumulate)
    if masked is not None:
        return [declared(b, masked, out, "index_put")]
    pairs = _index_tensors(b, x, entries, "index_put")
    if not pairs:
        raise LoweringError("index_put without an index tensor")
    adv = _Advanced(b, x, pairs)
    items = adv.result_items(b, x)
    static = [s if isinstance(s, int) else s.static for s in items]
    target = tensor(element, static)
    shape = None if is_static(target) else b.shape_vector(items)
    updates = adv.to_core(b, _expand(b, values, target, shape))
    moved = b.transpose(x, adv.perm)
    new = core.ScatterNDOp.create(
        operands=[moved, _tuples(b, adv.idxs), updates],
        result_types=[moved.type],
        properties={"reduction": StringAttr("add" if accumulate else "none")},
    )
    back = [adv.perm.index(d) for d in range(len(adv.perm))]
    return [declared(b, b.transpose(b.insert(new).results[0], back), out, "index_put")]


def _masked_put(
    b: CoreBuilder,
    x: SSAValue,
    entries: Sequence[SSAValue | None],
    values: SSAValue,
    accumulate: bool,
) -> SSAValue | None:
    """`x[mask] = value` for one mask (after None entries) and one value: a select over x,
    with no data-dependent count. None for any other form."""
    present = [(i, e) for i, e in enumerate(entries) if e is not None]
    if len(present) != 1 or element_of(present[0][1].type) != i1:
        return None
    at, mask = present[0]
    if any(d != 1 for d in ranked_shape(values)):
        return None
    k = len(ranked_shape(mask))
    if at != sum(1 for e in entries[:at] if e is None) or k == 0 or at + k > len(ranked_shape(x)):
        return None
    message = "index_put: the mask's shape differs from the dims it indexes"
    mask = _agree(b, mask, b.dims(mask), b.dims(x)[at : at + k], message)
    spread = b.broadcast_in_dim(mask, list(range(at, at + k)), x)
    one = b.reshape(values, tensor(element_of(values.type), []))
    value = b.broadcast_to(one, x.type, like=x)
    if accumulate:
        value = b.binary("add", x, value)
    return b.select(spread, value, x)


@lowers(aten.AtenIndexSelectOp)
def index_select(b: CoreBuilder, op: aten.AtenIndexSelectOp) -> Results:
    x = op.self_
    dim = _dim_of(op, x)  # type: ignore[arg-type]
    idx = b.cast(op.arg("index"), i64)  # type: ignore[arg-type]
    if not ranked_shape(idx):
        idx = b.reshape(idx, tensor(i64, [1]))
    idx = b.wrap_indices(idx, b.dims(x)[dim], "index_select")
    return [declared(b, b.gather(x, idx, dim), op.result.type, "index_select")]


def _cropped(
    b: CoreBuilder, v: SSAValue, dims: Sequence[Size], skip: int | None, what: str
) -> SSAValue:
    """The leading `dims` of `v` (all of dim `skip`), which must hold them; the run checks
    the sizes it knows only then."""
    own = b.dims(v)
    axes = [d for d in range(len(own)) if d != skip]
    v = _at_most(b, v, [dims[d] for d in axes], [own[d] for d in axes], what)
    same = all(_same_dim(dims[d], own[d]) for d in axes)
    if same:
        return v
    rank = len(own)
    if all(isinstance(dims[d], int) for d in axes):
        size = [-1 if d == skip else int(dims[d]) for d in range(rank)]  # type: ignore[call-overload]
        return b.slice(v, [0] * rank, size)
    items = [own[d] if d == skip else dims[d] for d in range(rank)]
    static = [s if isinstance(s, int) else s.static for s in items]
    new = core.SliceOp.create(
        operands=[
            v,
            b.constant(np.zeros(rank, np.int64)),
            b.shape_vector(items),
            b.constant(np.ones(rank, np.int64)),
        ],
        result_types=[tensor(element_of(v.type), static)],
    )
    return b.insert(new).results[0]


@lowers(aten.AtenGatherOp)
def gather(b: CoreBuilder, op: aten.AtenGatherOp) -> Results:
    """core.gather_elements; torch's index may be smaller than x in the other dims, so x
    is cropped to it first."""
    x = op.self_
    dim = _dim_of(op, x)  # type: ignore[arg-type]
    idx = b.cast(op.arg("index"), i64)  # type: ignore[arg-type]
    if len(ranked_shape(idx)) != len(ranked_shape(x)):
        raise LoweringError(f"gather of {x.type} by an index of another rank, {idx.type}")
    source = _cropped(b, x, b.dims(idx), dim, "gather: the index is larger than the input")
    idx = b.wrap_indices(idx, b.dims(x)[dim], "gather")
    new = core.GatherElementsOp.create(
        operands=[source, idx],
        result_types=[tensor(element_of(x.type), ranked_shape(idx))],
        properties={"axis": int_attr(dim)},
    )
    return [declared(b, b.insert(new).results[0], op.result.type, "gather")]


_SCATTER_OPS = (
    aten.AtenScatterSrcOp,
    aten.AtenScatterValueOp,
    aten.AtenScatterAddOp,
    aten.AtenScatterReduceOp,
    aten.AtenScatterValueReduceOp,
    aten.AtenScatterReduceTwoOp,
)
_SCATTER_REDUCE = {"add": "add", "multiply": "mul", "sum": "add", "prod": "mul"}
_SCATTER_REDUCE.update({"amax": "max", "amin": "min", "mean": "add"})


@lowers(*_SCATTER_OPS)
def scatter(b: CoreBuilder, op: aten.AtenScatterSrcOp) -> Results:
    """core.scatter_elements of the part of `src` the index covers (or of one value).

    `scatter_reduce.two` combines by sum, prod, amax, amin or mean; without
    `include_self` the written positions start from the reduction's identity, and
    a mean divides by the number of values each position received (plus one for
    itself when it is included)."""
    x = op.self_
    element = element_of(x.type)
    dim = _dim_of(op, x)  # type: ignore[arg-type]
    what = op.SCHEMA.qualified_name
    idx = b.cast(op.arg("index"), i64)  # type: ignore[arg-type]
    if len(ranked_shape(idx)) != len(ranked_shape(x)):
        raise LoweringError(f"{what} into {x.type} by an index of another rank, {idx.type}")
    others = [d for d in range(len(ranked_shape(x))) if d != dim]
    idx = _at_most(
        b,
        idx,
        [b.dims(idx)[d] for d in others],
        [b.dims(x)[d] for d in others],
        f"{what}: the index is larger than the input",
    )
    if isinstance(op, aten.AtenScatterValueOp | aten.AtenScatterValueReduceOp):
        one = _fill(b, op.arg("value"), element)
        updates = b.broadcast_to(one, tensor(element, ranked_shape(idx)), like=idx)
    else:
        src = b.cast(op.arg("src"), element)  # type: ignore[arg-type]
        updates = _cropped(b, src, b.dims(idx), None, f"{what}: the index is larger than src")
    idx = b.wrap_indices(idx, b.dims(x)[dim], what)
    if isinstance(op, aten.AtenScatterAddOp):
        reduction = "add"
    elif isinstance(op, aten.AtenScatterSrcOp | aten.AtenScatterValueOp):
        reduction = "none"
    else:
        name = str(op.arg("reduce"))
        if name not in _SCATTER_REDUCE:
            raise LoweringError(f"{what}: reduce='{name}' is not supported")
        reduction = _SCATTER_REDUCE[name]

    def scattered(into: SSAValue, values: SSAValue, how: str) -> SSAValue:
        new = core.ScatterElementsOp.create(
            operands=[into, idx, values],
            result_types=[x.type],
            properties={"axis": int_attr(dim), "reduction": StringAttr(how)},
        )
        return b.insert(new).results[0]

    include_self = not isinstance(op, aten.AtenScatterReduceTwoOp) or bool(op.arg("include_self"))
    base = x
    if not include_self:
        identity = {"add": 0, "mul": 1, "max": -np.inf, "min": np.inf}[reduction]
        if isinstance(element, IntegerType) and not np.isfinite(identity):
            info = np.iinfo(numpy_dtype(element))
            identity = info.min if identity < 0 else info.max
        start = b.broadcast_to(
            b.scalar(identity, element), tensor(element, ranked_shape(idx)), like=idx
        )
        base = scattered(x, start, "none")
    result = scattered(base, updates, reduction)
    if isinstance(op, aten.AtenScatterReduceTwoOp) and str(op.arg("reduce")) == "mean":
        if isinstance(element, IntegerType):
            raise LoweringError(f"{what}: an integer mean is not supported")
        ones = b.broadcast_to(b.scalar(1, element), tensor(element, ranked_shape(idx)), like=idx)
        first = b.splat(1 if include_self else 0, x)
        counts = scattered(first, ones, "add")
        counts = b.binary("max", counts, b.splat(1, x))  # untouched positions keep themselves
        result = b.binary("div", result, counts)
    return [declared(b, result, op.result.type, what)]


def _put_slice(
    b: CoreBuilder,
    x: SSAValue,
    src: SSAValue,
    dim: int,
    start: int | SSAValue,
    count: int | SSAValue,
    step: int,
    what: str,
) -> SSAValue:
    """`x` with `src` written over `count` elements along `dim` from `start` by `step`.

    src must have x's shape but `count` along dim (the run checks sizes it knows
    only then); then every index `start + i * step` is in range.
    """
    src = b.cast(src, element_of(x.type))
    rank = len(ranked_shape(x))
    others = [d for d in range(rank) if d != dim]
    message = f"{what}: src does not have the shape of the slice it goes to"
    src = _agree(b, src, [b.dims(src)[d] for d in others], [b.dims(x)[d] for d in others], message)
    if isinstance(count, int):
        src = _agree(b, src, [b.dims(src)[dim]], [count], message)
    else:
        same = b.compare("eq", dim_value(b, src, dim), count)
        src = b.check(src, same, message)
    idx = iota(b, b.dims(src), dim)
    if step != 1:
        idx = b.binary("mul", idx, b.splat(step, idx))
    if not (isinstance(start, int) and start == 0):
        first = (
            b.splat(start, idx)
            if isinstance(start, int)
            else b.broadcast_to(start, idx.type, like=idx)
        )
        idx = b.binary("add", idx, first)
    new = core.ScatterElementsOp.create(
        operands=[x, idx, src],
        result_types=[x.type],
        properties={"axis": int_attr(dim), "reduction": StringAttr("none")},
    )
    return b.insert(new).results[0]


@lowers(aten.AtenSliceScatterOp)
def slice_scatter(b: CoreBuilder, op: aten.AtenSliceScatterOp) -> Results:
    x = op.self_
    dim = _dim_of(op, x)  # type: ignore[arg-type]
    step = op.arg("step")
    first, count = _slice_range(b, x, dim, op.arg("start"), op.arg("end"), step)
    value = _put_slice(b, x, op.arg("src"), dim, first, count, step, "slice_scatter")  # type: ignore[arg-type]
    return [declared(b, value, op.result.type, "slice_scatter")]


@lowers(aten.AtenSelectScatterOp)
def select_scatter(b: CoreBuilder, op: aten.AtenSelectScatterOp) -> Results:
    x = op.self_
    dim = _dim_of(op, x)  # type: ignore[arg-type]
    index = op.arg("index")
    n = ranked_shape(x)[dim]
    start: int | SSAValue
    if isinstance(index, int) and n >= 0:
        if not -n <= index < n:
            raise LoweringError(f"select_scatter: index {index} is out of range for a dim of {n}")
        start = index + n if index < 0 else index
    else:
        start = b.wrap_indices(_scalar(b, index), b.dims(x)[dim], "select_scatter")  # type: ignore[arg-type]
    src: SSAValue = op.arg("src")  # type: ignore[assignment]
    items: list[Item] = [_item(src, i) for i in range(len(ranked_shape(src)))]
    items.insert(dim, 1)
    static = [s if isinstance(s, int) else -1 for s in items]
    src = _reshape(b, src, items, tensor(element_of(src.type), static))
    value = _put_slice(b, x, src, dim, start, 1, 1, "select_scatter")
    return [declared(b, value, op.result.type, "select_scatter")]


@lowers(aten.AtenNonzeroOp)
def nonzero(b: CoreBuilder, op: aten.AtenNonzeroOp) -> Results:
    """core.nonzero gives `[rank, count]`; torch wants `[count, rank]`."""
    x = op.self_
    rank = len(ranked_shape(x))
    found = core.NonZeroOp.create(operands=[x], result_types=[tensor(i64, [rank, -1])])
    value = b.transpose(b.insert(found).results[0], [1, 0])
    return [declared(b, value, op.result.type, "nonzero")]


@lowers(aten.AtenCopyOp)
def copy(b: CoreBuilder, op: aten.AtenCopyOp) -> Results:
    """`src` broadcast to self's shape, in self's element type."""
    x = op.self_
    src = b.cast(op.arg("src"), element_of(x.type))  # type: ignore[arg-type]
    shape = None if is_static(x.type) else b.shape_of(x)
    return [declared(b, _expand(b, src, x.type, shape), op.result.type, "copy")]


# ---- creation --------------------------------------------------------------------------


def _fill(b: CoreBuilder, value: object, element: Attribute) -> SSAValue:
    """A scalar argument (a number, or a symbolic one) as a 0-d tensor of `element`."""
    if isinstance(value, SSAValue):
        return b.cast(value, element)
    if not isinstance(value, bool | int | float):
        raise LoweringError(f"a fill value of {value!r}")
    return b.scalar(value, element)


def _filled(b: CoreBuilder, out: Attribute, value: object, size: Sequence[object]) -> SSAValue:
    """A tensor of type `out` full of `value`; its `?` dims are the symbolic `size`s."""
    one = _fill(b, value, element_of(out))
    if is_static(out):
        return b.broadcast_to(one, out)
    shape = ranked_shape(out)
    items: list[Item] = []
    for d, s in zip(shape, size, strict=True):
        if d >= 0:
            items.append(d)
        elif isinstance(s, SSAValue):
            items.append(s)
        else:
            raise LoweringError(f"size {s!r} for a dim of {out}")
    return b.broadcast_to(one, out, shape=_vector(b, items))


_FILLS: dict[type, object] = {
    aten.AtenZerosOp: 0,
    aten.AtenOnesOp: 1,
    aten.AtenEmptyMemoryFormatOp: 0,
    aten.AtenEmptyStridedOp: 0,
}
"""Creation ops by the value they fill with (empty tensors get zeros)."""


@lowers(aten.AtenFullOp, *_FILLS)
def full(b: CoreBuilder, op: aten.AtenFullOp) -> Results:
    value = _FILLS[type(op)] if type(op) in _FILLS else op.arg("fill_value")
    size: list[object] = list(op.arg("size"))  # type: ignore[call-overload]
    return [_filled(b, op.result.type, value, size)]


_LIKE_FILLS: dict[type, object] = {aten.AtenZerosLikeOp: 0, aten.AtenOnesLikeOp: 1}


@lowers(aten.AtenFullLikeOp, aten.AtenFillScalarOp, *_LIKE_FILLS)
def full_like(b: CoreBuilder, op: aten.AtenFullLikeOp) -> Results:
    """A tensor shaped like self (read at run time where dynamic), full of one value."""
    if type(op) in _LIKE_FILLS:
        value = _LIKE_FILLS[type(op)]
    else:
        value = op.arg("value" if isinstance(op, aten.AtenFillScalarOp) else "fill_value")
    out = op.result.type
    one = _fill(b, value, element_of(out))
    return [b.broadcast_to(one, out, like=op.self_)]


@lowers(aten.AtenScalarTensorOp)
def scalar_tensor(b: CoreBuilder, op: aten.AtenScalarTensorOp) -> Results:
    out = op.result.type
    return [declared(b, _fill(b, op.arg("s"), element_of(out)), out, "scalar_tensor")]


@lowers(aten.AtenArangeOp, aten.AtenArangeStartOp, aten.AtenArangeStartStepOp)
def arange(b: CoreBuilder, op: aten.AtenArangeStartStepOp) -> Results:
    """`start + i * step` over an iota, computed in i64 for integer ranges and f64 for
    float ones (torch's accumulation types); the count ceil((end - start) / step) is
    read from the result type, or computed at run time for a symbolic bound."""
    out = op.result.type
    element = element_of(out)
    start = op.arg("start") if op.SCHEMA.arg("start") is not None else 0
    step = op.arg("step") if op.SCHEMA.arg("step") is not None else 1
    end = op.arg("end")
    (n,) = ranked_shape(out)
    exact = numpy_dtype(element).kind in "iub" and all(
        isinstance(v, int) or isinstance(v, SSAValue) and element_of(v.type) != f64
        for v in (start, step)
    )
    compute = i64 if exact else f64
    count: int | SSAValue = n if n >= 0 else _arange_count(b, start, end, step)
    values = b.cast(iota(b, [count], 0), compute)
    if isinstance(step, SSAValue) or step != 1:
        values = b.binary("mul", values, _spread(b, step, values))
    if isinstance(start, SSAValue) or start != 0:
        values = b.binary("add", values, _spread(b, start, values))
    return [declared(b, b.cast(values, element), out, "arange")]


def _spread(b: CoreBuilder, value: object, like: SSAValue) -> SSAValue:
    """A number or a symbolic scalar, in `like`'s element type and shape."""
    if isinstance(value, SSAValue):
        return b.broadcast_to(b.cast(value, element_of(like.type)), like.type, like=like)
    return b.splat(value, like)  # type: ignore[arg-type]


def _arange_count(b: CoreBuilder, start: object, end: object, step: object) -> SSAValue:
    """max(ceil((end - start) / step), 0) at run time, computed in f64 as torch does."""
    start_v, end_v, step_v = (_fill(b, v, f64) for v in (start, end, step))
    steps = b.unary("ceil", b.binary("div", b.binary("sub", end_v, start_v), step_v))
    return b.cast(b.binary("max", steps, b.scalar(0.0, f64)), i64)


def constant(b: CoreBuilder, op: ConstantOp) -> Results:
    """A parameter, buffer or lifted constant: the same data as a core.constant (a
    resource it names stays with the module)."""
    new = core.ConstantOp.create(properties={"value": op.value}, result_types=[op.result.type])
    return [b.insert(new).results[0]]


if ConstantOp not in TABLE:  # another family may lower the program's constants
    add_lowering(ConstantOp, constant)


@lowers(aten.AtenDiagonalOp)
def diagonal(b: CoreBuilder, op: aten.AtenDiagonalOp) -> Results:
    """The elements (i, i + offset) of dims dim1 and dim2, as a new last dim: the two dims
    moved last and merged, then one gather at positions fixed at compile time."""
    x = op.self_
    shape = ranked_shape(x)
    rank = len(shape)
    if rank < 2:
        raise LoweringError(f"diagonal of a {rank}-d tensor")
    d1 = normalize_axis(op.arg("dim1"), rank)  # type: ignore[arg-type]
    d2 = normalize_axis(op.arg("dim2"), rank)  # type: ignore[arg-type]
    if d1 == d2:
        raise LoweringError("diagonal of one dim with itself")
    n1, n2 = shape[d1], shape[d2]
    if n1 < 0 or n2 < 0:
        raise LoweringError("diagonal along dims known only at run time")
    offset = op.arg("offset")
    assert isinstance(offset, int)
    rows = np.arange(max(0, -offset), n1)
    rows = rows[rows + offset < n2]
    positions = (rows * n2 + rows + offset).astype(np.int64)
    rest = [d for d in range(rank) if d not in (d1, d2)]
    moved = b.transpose(x, [*rest, d1, d2])
    merged = b.reshape_to(moved, [*(b.dims(moved)[:-2]), n1 * n2])
    picked = b.gather(merged, b.constant(positions.reshape(len(positions))), rank - 2)
    return [declared(b, picked, op.result.type, "diagonal")]
