"""core → kernel: reductions, arg-reductions, cumulative ops, sort and nonzero.

Reductions (`core.reduce`) take one of two forms, chosen by which dim of the
input walks memory with unit stride (its last dim of a size other than 1):

- that dim is reduced (the common case: softmax, layer norm, a mean over the
  last axes): one parallel nest over the kept dims, and inside it a reduction
  loop over the reduced dims carrying the accumulator in `iter_args`. The
  inner loop reads the input contiguously and the sum lives in a register.
- that dim is kept (a sum over the batch or the channels of NCHW): the result
  is first set to the identity, then one nest over the input in its own
  order, reduced dims marked `reduction`, adds each element into the result
  buffer. Its innermost dim is a kept dim, so input and result are both read
  contiguously; the `iter_args` form would stride through the input there.

Both add elements in row-major order of the reduced dims. Sums and products
of f16/bf16 accumulate in f32 (in a scratch buffer in the second form) and
are rounded once at the end; `and`/`or`, and any reduction of booleans,
accumulate in i1. An empty reduction gives the identity. The scalar
semantics come from `KernelBuilder.binary`, so `max`/`min` propagate NaN as
core.binary does.

`core.masked_reduce` (dims chosen at run time by a mask) always takes the
second form, with every loop marked `reduction`, the result's index being
the input's with the flagged dims set to 0.

`core.cumulative` follows the same choice: a running value in `iter_args`
when the axis is innermost, otherwise a nest that reads the previous line of
the result. `core.arg_reduce` carries (best value, index) in `iter_args`.
`core.sort` is a call of the stable merge sort `rung_sort` of the C runtime,
which takes two scratch buffers (keys, permutation) so that it never
allocates. `core.nonzero` counts first, allocates its result with the count
as a run-time size, then fills it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    TensorType,
    f32,
    f64,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, Region, SSAValue

from rung.dialects import core, kernel

from .builder import Dim, KernelBuilder, KernelLoweringError, is_float
from .registry import lowers

_COMBINE = {"sum": "add", "prod": "mul", "max": "max", "min": "min", "and": "and", "or": "or"}
"""The core.binary function that folds one element into a reduction."""

_BOOLEAN = {"sum": "or", "max": "or", "or": "or", "prod": "and", "min": "and", "and": "and"}
"""What each reduction is on booleans (numpy's sum of bools is non-zero iff any is)."""


def _element(v: SSAValue) -> Attribute:
    t = v.type
    assert isinstance(t, TensorType)
    return t.element_type


def _static_size(d: Dim) -> int | None:
    return d if isinstance(d, int) else None


def _innermost(dims: Sequence[Dim]) -> int | None:
    """The last dim whose size is not a static 1 (the one walking memory), if any."""
    for i in range(len(dims) - 1, -1, -1):
        if _static_size(dims[i]) != 1:
            return i
    return None


def identity(b: KernelBuilder, fn: str, t: Attribute) -> SSAValue:
    """The value an empty reduction gives."""
    if fn in ("sum", "or"):
        return b.const(0, t)
    if fn in ("prod", "and"):
        return b.const(1, t)
    if fn == "max":
        return b.lowest(t)
    if fn == "min":
        return b.highest(t)
    raise KernelLoweringError(f"unknown reduction '{fn}'")


class _Reduction:
    """How one core.reduce accumulates: the function, the accumulator type, conversions."""

    def __init__(self, fn: str, element: Attribute, result: Attribute) -> None:
        self.result = result
        if fn in ("and", "or") or element == i1:
            self.fn = _BOOLEAN[fn]
            self.acc: Attribute = i1
        elif fn in ("sum", "prod") and isinstance(element, Float16Type | BFloat16Type):
            self.fn = fn
            self.acc = f32
        else:
            self.fn = fn
            self.acc = element

    def init(self, b: KernelBuilder) -> SSAValue:
        return identity(b, self.fn, self.acc)

    def take(self, b: KernelBuilder, x: SSAValue) -> SSAValue:
        """An input element as an accumulator value."""
        return b.cast(x, self.acc)

    def fold(self, b: KernelBuilder, acc: SSAValue, x: SSAValue) -> SSAValue:
        return b.binary(_COMBINE[self.fn], acc, x)

    def finish(self, b: KernelBuilder, acc: SSAValue) -> SSAValue:
        return b.cast(acc, self.result)


def _merge(axes: Sequence[int], kept: Sequence[Dim], reduced: Sequence[Dim]) -> list[Dim]:
    """The full index of an input element from its kept and reduced parts."""
    k, r = iter(kept), iter(reduced)
    rank = len(kept) + len(reduced)
    return [next(r) if i in axes else next(k) for i in range(rank)]


@lowers(core.ReduceOp)
def reduce(b: KernelBuilder, op: core.ReduceOp) -> list[SSAValue]:
    """The iter_args form, or `_reduce_into_buffer` when the innermost dim is kept."""
    x = b.buffer(op.input)
    dims = b.dims(x)
    axes = core.ints_of(op.axes)  # noqa: SLF001
    kept_dims = [d for i, d in enumerate(dims) if i not in axes]
    red_dims = [d for i, d in enumerate(dims) if i in axes]
    how = _Reduction(op.fn.data, _element(op.input), _element(op.result))
    out = b.alloc_for(op.result, kept_dims)
    inner = _innermost(dims)
    if axes and inner is not None and inner not in axes:
        _reduce_into_buffer(b, x, out, dims, axes, how)
        return [out]

    def body(b: KernelBuilder, kept: list[SSAValue]) -> None:
        def step(b: KernelBuilder, red: list[SSAValue], accs: list[SSAValue]) -> list[SSAValue]:
            value = how.take(b, b.load(x, _merge(axes, kept, red)))
            return [how.fold(b, accs[0], value)]

        if axes:
            (acc,) = b.reduce_loop(red_dims, [how.init(b)], step)
        else:  # nothing reduced: the input, converted as the reduction would
            acc = how.take(b, b.load(x, kept))
        b.store(how.finish(b, acc), out, kept)

    b.parallel(kept_dims, body)
    return [out]


def _reduce_into_buffer(
    b: KernelBuilder,
    x: SSAValue,
    out: SSAValue,
    dims: Sequence[Dim],
    axes: Sequence[int],
    how: _Reduction,
) -> None:
    """The form whose innermost dim is kept: accumulate into a buffer over the input's order."""
    kept_dims = [d for i, d in enumerate(dims) if i not in axes]
    acc = out if how.acc == how.result else b.alloc(how.acc, kept_dims)

    def init(b: KernelBuilder, ivs: list[SSAValue]) -> None:
        b.store(how.init(b), acc, ivs)

    b.parallel(kept_dims, init)

    def body(b: KernelBuilder, ivs: list[SSAValue], _: list[SSAValue]) -> None:
        kept = [iv for i, iv in enumerate(ivs) if i not in axes]
        value = how.take(b, b.load(x, ivs))
        b.store(how.fold(b, b.load(acc, kept), value), acc, kept)

    kinds = ["reduction" if i in axes else "parallel" for i in range(len(dims))]
    b.loop(dims, kinds, body)
    if acc is not out:

        def finish(b: KernelBuilder, ivs: list[SSAValue]) -> None:
            b.store(how.finish(b, b.load(acc, ivs)), out, ivs)

        b.parallel(kept_dims, finish)


@lowers(core.MaskedReduceOp)
def masked_reduce(b: KernelBuilder, op: core.MaskedReduceOp) -> list[SSAValue]:
    """The result is set to the identity, then one nest over the input adds each element
    at its index with the flagged dims set to 0.

    Which dims are reduced is known only at run time, so every loop of the nest
    is marked `reduction` (two input elements may meet in one result element).
    """
    x = b.buffer(op.input)
    mask = b.buffer(op.mask)
    dims = b.dims(x)
    flags = [b.load(mask, [i]) for i in range(len(dims))]
    out_dims: list[Dim] = [
        d if _static_size(d) == 1 else b.select_index(flag, 1, d)
        for d, flag in zip(dims, flags, strict=True)
    ]
    how = _Reduction(op.fn.data, _element(op.input), _element(op.result))
    out = b.alloc_for(op.result, out_dims)
    acc = out if how.acc == how.result else b.alloc(how.acc, out_dims)

    def init(b: KernelBuilder, ivs: list[SSAValue]) -> None:
        b.store(how.init(b), acc, ivs)

    b.parallel(out_dims, init)

    def body(b: KernelBuilder, ivs: list[SSAValue], _: list[SSAValue]) -> None:
        at = [
            0 if _static_size(d) == 1 else b.select_index(flag, 0, iv)
            for d, flag, iv in zip(dims, flags, ivs, strict=True)
        ]
        value = how.take(b, b.load(x, ivs))
        b.store(how.fold(b, b.load(acc, at), value), acc, at)

    b.loop(dims, ["reduction"] * len(dims), body)
    if acc is not out:

        def finish(b: KernelBuilder, ivs: list[SSAValue]) -> None:
            b.store(how.finish(b, b.load(acc, ivs)), out, ivs)

        b.parallel(out_dims, finish)
    return [out]


def _better(b: KernelBuilder, fn: str, last: bool, v: SSAValue, best: SSAValue) -> SSAValue:
    """Whether `v` replaces `best` (numpy's argmax/argmin; the first NaN wins, or the last)."""
    if not is_float(v.type):
        strict, loose = ("gt", "ge") if fn == "max" else ("lt", "le")
        return b.compare(loose if last else strict, v, best)
    if last:  # v is NaN, or v is at least as good (ordered)
        pred = "oge" if fn == "max" else "ole"
        nan = b.op1(arith.CmpfOp, v, v, "uno")
        return b.op1(arith.OrIOp, nan, b.op1(arith.CmpfOp, v, best, pred))
    # best is not NaN, and v is NaN or strictly better
    pred = "ugt" if fn == "max" else "ult"
    ordered = b.op1(arith.CmpfOp, best, best, "ord")
    return b.op1(arith.AndIOp, ordered, b.op1(arith.CmpfOp, v, best, pred))


@lowers(core.ArgReduceOp)
def arg_reduce(b: KernelBuilder, op: core.ArgReduceOp) -> list[SSAValue]:
    """Carries (best, index) from the identity of max/min, so an empty axis gives 0."""
    x = b.buffer(op.input)
    dims = b.dims(x)
    axis = op.axis.value.data
    fn = op.fn.data
    last = bool(op.last.value.data)
    element = _element(op.input)
    kept_dims = [d for i, d in enumerate(dims) if i != axis]
    out = b.alloc_for(op.result, kept_dims)

    def body(b: KernelBuilder, kept: list[SSAValue]) -> None:
        def step(b: KernelBuilder, k: list[SSAValue], accs: list[SSAValue]) -> list[SSAValue]:
            best, where = accs
            v = b.load(x, [*kept[:axis], k[0], *kept[axis:]])
            better = _better(b, fn, last, v, best)
            return [b.select(better, v, best), b.select(better, k[0], where)]

        start = b.lowest(element) if fn == "max" else b.highest(element)
        _, where = b.reduce_loop([dims[axis]], [start, b.index(0)], step)
        b.store(b.from_index(where, i64), out, kept)

    b.parallel(kept_dims, body)
    return [out]


@lowers(core.CumulativeOp)
def cumulative(b: KernelBuilder, op: core.CumulativeOp) -> list[SSAValue]:
    """Accumulates in the element type, rounding each step, as the reference does."""
    x = b.buffer(op.input)
    dims = b.dims(x)
    axis = op.axis.value.data
    fn = "add" if op.fn.data == "sum" else "mul"
    exclusive = bool(op.exclusive.value.data)
    reverse = bool(op.reverse.value.data)
    element = _element(op.input)
    out = b.alloc_for(op.result, dims)
    n = dims[axis]
    others = [d for i, d in enumerate(dims) if i != axis]

    def at(ivs: Sequence[Dim], p: Dim) -> list[Dim]:
        return [*ivs[:axis], p, *ivs[axis:]]

    inner = _innermost(dims)
    if inner is None or inner <= axis:
        # the axis walks memory: a running value in iter_args
        def line(b: KernelBuilder, ivs: list[SSAValue]) -> None:
            def step(b: KernelBuilder, k: list[SSAValue], accs: list[SSAValue]) -> list[SSAValue]:
                p = b.isub(b.isub(n, 1), k[0]) if reverse else k[0]
                new = b.binary(fn, accs[0], b.load(x, at(ivs, p)))
                b.store(accs[0] if exclusive else new, out, at(ivs, p))
                return [new]

            b.reduce_loop([n], [b.const(0 if fn == "add" else 1, element)], step)

        b.parallel(others, line)
        return [out]

    # a dim after the axis walks memory: each line of the result from the one before it
    first: Dim = b.isub(n, 1) if reverse else 0

    def start(b: KernelBuilder, ivs: list[SSAValue], _: list[SSAValue]) -> None:
        rest = [iv for i, iv in enumerate(ivs) if i != axis]
        if exclusive:
            value = b.const(0 if fn == "add" else 1, element)
        else:
            value = b.load(x, at(rest, first))
        b.store(value, out, at(rest, first))

    b.loop(at(others, b.imin(n, 1)), ["parallel"] * len(dims), start)

    def step(b: KernelBuilder, ivs: list[SSAValue], _: list[SSAValue]) -> None:
        k = ivs[axis]
        rest = [iv for i, iv in enumerate(ivs) if i != axis]
        if reverse:
            p, prev = b.isub(b.isub(n, 2), k), b.isub(b.isub(n, 1), k)
        else:
            p, prev = b.iadd(k, 1), k
        value = b.load(x, at(rest, prev if exclusive else p))
        b.store(b.binary(fn, b.load(out, at(rest, prev)), value), out, at(rest, p))

    kinds = ["reduction" if i == axis else "parallel" for i in range(len(dims))]
    b.loop(at(others, b.imax(b.isub(n, 1), 0)), kinds, step)
    return [out]


@lowers(core.SortOp)
def sort(b: KernelBuilder, op: core.SortOp) -> list[SSAValue]:
    """A runtime call: a stable merge sort is long C and gains nothing from being generated."""
    x = b.buffer(op.input)
    dims = b.dims(x)
    axis = op.axis.value.data
    if not 0 <= axis < len(dims):
        raise KernelLoweringError(f"core.sort: axis {axis} of a rank-{len(dims)} tensor")
    values = b.alloc_for(op.values, dims)
    indices = b.alloc_for(op.indices, dims)
    n = dims[axis]
    keys = b.alloc(f64, [n])
    perm = b.alloc(i64, [b.imul(2, n)])
    descending = op.descending.value.data
    b.insert(kernel.CallOp("sort", [x, values, indices, keys, perm], [axis, descending]))
    return [values, indices]


def _nonzero(b: KernelBuilder, x: SSAValue, ivs: Sequence[SSAValue]) -> SSAValue:
    """Whether an element is non-zero (NaN is)."""
    v = b.load(x, ivs)
    return b.compare("ne", v, b.const(0, v.type))


def _if(b: KernelBuilder, cond: SSAValue, then: Callable[[KernelBuilder], None]) -> None:
    """`scf.if` without results: `then` fills its block."""
    block = Block()
    then(b.nested(block))
    block.add_op(scf.YieldOp())
    b.insert(scf.IfOp(cond, [], Region(block)))


@lowers(core.NonZeroOp)
def nonzero(b: KernelBuilder, op: core.NonZeroOp) -> list[SSAValue]:
    """Two passes, since the result's size is known only after counting."""
    x = b.buffer(op.input)
    dims = b.dims(x)
    rank = len(dims)

    def count(b: KernelBuilder, ivs: list[SSAValue], accs: list[SSAValue]) -> list[SSAValue]:
        return [b.iadd(accs[0], b.select_index(_nonzero(b, x, ivs), 1, 0))]

    (total,) = b.reduce_loop(dims, [b.index(0)], count)
    out = b.alloc_for(op.result, [rank, total])

    def fill(b: KernelBuilder, ivs: list[SSAValue], accs: list[SSAValue]) -> list[SSAValue]:
        hit = _nonzero(b, x, ivs)

        def store(b: KernelBuilder) -> None:
            for d, iv in enumerate(ivs):
                b.store(b.from_index(iv, i64), out, [d, accs[0]])

        _if(b, hit, store)
        return [b.iadd(accs[0], b.select_index(hit, 1, 0))]

    b.reduce_loop(dims, [b.index(0)], fill)
    return [out]


__all__ = ["identity"]
