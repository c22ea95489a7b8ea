"""The `kernel-coalesce` pass: merge adjacent dims of a nest that walk memory as one dim.

An elementwise nest over a `[C, 7, 7]` feature map is written as three dims, so
its innermost loop runs 7 times: less than one AVX-512 vector, all epilogue and
no vector loop. Where every access indexes its buffer with the two dims' ivs
in adjacent positions, in order, and the buffer's inner size there is the inner
dim's bound, the pair is one dim of their product over a view of each buffer
that merges those two positions: `x[c, h, w]` becomes `x'[c, h * 7 + w]`, the
same element. Applied again, a copy over whole buffers becomes one loop.

    kernel.loop (%c, %h, %w) in (64, 7, 7) [parallel, parallel, parallel] {
      %v = kernel.load %x[%c, %h, %w] : memref<64x7x7xf32>
      kernel.store %v, %y[%c, %h, %w] : memref<64x7x7xf32>
    }
    ==> kernel.loop (%i) in (3136) [parallel] {
      %v = kernel.load %x2[%i] : memref<3136xf32>  (views of %x and %y)
      ...

The merged dim enumerates its iterations in the same order as the pair did
(row-major), so the nest does exactly what it did; only the C is shorter (one
loop and index expression fewer, which gcc also spends less time on) and the
vectorized loop longer. A pair merges only when both dims have the same kind,
static bounds and unit steps, the nest has no `iter_args`, the ivs appear only
as such index pairs of loads and stores (no arithmetic on them, no bound of an
inner nest), and the buffers are defined outside every nest around it, with static
shapes: the views go before the outermost nest, so that no body holds one.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IndexType, MemRefType, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from rung.dialects import kernel
from rung.lowering.generic.walk import rewrite_each

from .analysis import loop_like, move_body

Access = kernel.LoadOp | kernel.StoreOp


def _position(op: Operation, v: SSAValue) -> int | None:
    """The one place of `v` among the indices of a load or store, else None (absent, there
    twice, the stored value, or another op)."""
    if not isinstance(op, kernel.LoadOp | kernel.StoreOp):
        return None
    if isinstance(op, kernel.StoreOp) and op.value == v:
        return None
    places = [i for i, index in enumerate(op.indices) if index == v]
    return places[0] if len(places) == 1 else None


def _mergeable_accesses(loop: kernel.LoopOp, d: int) -> list[tuple[Access, int]] | None:
    """The loads and stores that index with dims d and d + 1 of `loop`, each with the place
    of dim d's iv, if every use of the two ivs is such an adjacent pair that a view can
    merge; else None."""
    outer, inner = loop.ivs[d], loop.ivs[d + 1]
    bound = loop.bounds()[d + 1]
    found: dict[Operation, int] = {}
    for use in [*outer.uses, *inner.uses]:
        op = use.operation
        if op in found:
            continue
        p, q = _position(op, outer), _position(op, inner)
        if p is None or q != p + 1:
            return None
        assert isinstance(op, kernel.LoadOp | kernel.StoreOp)
        t = op.buffer.type
        if not isinstance(t, MemRefType) or any(s < 0 for s in t.get_shape()):
            return None
        if t.get_shape()[q] != bound or _outermost(loop, op.buffer) is None:
            return None
        found[op] = p
    return list(found.items())  # type: ignore[arg-type]


def _outermost(loop: kernel.LoopOp, buffer: SSAValue) -> kernel.LoopOp | None:
    """The outermost nest around (or being) `loop`, where a view of `buffer` goes before it;
    None when `buffer` is defined inside a nest: a view in a nest's body would keep the
    other passes (which know the ops of a body) from parallelizing or reordering it."""
    outer: Operation = loop
    while isinstance(outer.parent_op(), kernel.LoopOp):
        outer = outer.parent_op()  # type: ignore[assignment]
    owner = buffer.owner
    parent = owner.parent_op() if isinstance(owner, Operation) else owner.parent_op()
    while parent is not None:
        if parent is outer:
            return None
        parent = parent.parent_op()
    return outer  # type: ignore[return-value]


def _storage(buffer: SSAValue) -> SSAValue:
    """What a new view of `buffer` views: the source of a static view (views of views are
    views of the storage), else the buffer itself."""
    owner = buffer.owner
    if isinstance(owner, kernel.ViewOp) and not owner.dynamic_sizes:
        source = owner.source.type
        if isinstance(source, MemRefType) and all(s >= 0 for s in source.get_shape()):
            return owner.source
    return buffer


def mergeable_dim(loop: kernel.LoopOp) -> int | None:
    """The outer dim of the innermost pair of `loop`'s dims that can merge, if any."""
    found = _mergeable(loop)
    return None if found is None else found[0]


def _mergeable(loop: kernel.LoopOp) -> tuple[int, list[tuple[Access, int]]] | None:
    """`mergeable_dim`, with the accesses that merging it rewrites."""
    if loop.results:  # iter_args
        return None
    bounds, kinds, steps = loop.bounds(), loop.kinds, loop.step_sizes
    for d in reversed(range(loop.rank - 1)):
        pair = (d, d + 1)
        if kinds[d] != kinds[d + 1] or any(steps[i] != 1 for i in pair):
            continue
        if not all(isinstance(bounds[i], int) for i in pair):
            continue
        accesses = _mergeable_accesses(loop, d)
        if accesses is not None:
            return d, accesses
    return None


def merge_dims(
    loop: kernel.LoopOp,
    d: int,
    rewriter: PatternRewriter,
    accesses: list[tuple[Access, int]] | None = None,
) -> kernel.LoopOp:
    """`loop` with dims d and d + 1 as one (see the module doc); views of its buffers go
    before it. The caller puts the result in `loop`'s place. `accesses`, if given, are
    `_mergeable_accesses(loop, d)`, already found."""
    if accesses is None:
        accesses = _mergeable_accesses(loop, d)
    assert accesses is not None
    bounds, kinds, steps = loop.bounds(), loop.kinds, loop.step_sizes
    outer_bound, inner_bound = bounds[d], bounds[d + 1]
    assert isinstance(outer_bound, int) and isinstance(inner_bound, int)
    block = Block(arg_types=[IndexType()] * (loop.rank - 1))
    merged = block.args[d]
    outer_iv, inner_iv = loop.ivs[d], loop.ivs[d + 1]
    views: dict[tuple[SSAValue, int], SSAValue] = {}
    for op, p in accesses:
        buffer = op.buffer
        key = (buffer, p)
        if key not in views:
            t = buffer.type
            assert isinstance(t, MemRefType)
            shape = list(t.get_shape())
            shape[p : p + 2] = [shape[p] * shape[p + 1]]
            view = kernel.ViewOp(_storage(buffer), kernel.memref_type(t.element_type, shape), [])
            outer = _outermost(loop, buffer)
            assert outer is not None
            rewriter.insert(view, InsertPoint.before(outer))
            views[key] = view.result
        indices = list(op.indices)
        indices[p : p + 2] = [merged]
        # The access keeps its result (a load's element type is the view's): only its
        # operands change, in place.
        if isinstance(op, kernel.LoadOp):
            op.operands = [views[key], *indices]
        else:
            op.operands = [op.value, views[key], *indices]
        rewriter.notify_op_modified(op)
    assert not outer_iv.uses and not inner_iv.uses
    for buffer, _ in views:  # an earlier merge's view, now read through a view of its own
        if isinstance(buffer.owner, kernel.ViewOp) and not buffer.uses:
            rewriter.erase(buffer.owner)
    ivs = [*block.args[:d], merged, merged, *block.args[d + 1 :]]
    move_body(loop, ivs, block)
    return loop_like(
        loop,
        [*bounds[:d], outer_bound * inner_bound, *bounds[d + 2 :]],
        [*kinds[:d], *kinds[d + 1 :]],
        [*steps[:d], *steps[d + 1 :]],
        block,
    )


class CoalesceDims(RewritePattern):
    """Merge pairs of a nest's dims, innermost first, while some pair can merge."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: kernel.LoopOp, rewriter: PatternRewriter) -> None:
        current = op
        while (found := _mergeable(current)) is not None:
            new = merge_dims(current, found[0], rewriter, found[1])
            rewriter.replace(current, new, new.results)
            current = new


@dataclass(frozen=True)
class CoalescePass(ModulePass):
    """Merge adjacent dims of a nest that walk memory as one dim."""

    name = "kernel-coalesce"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_each(op, kernel.LoopOp, CoalesceDims())


__all__ = ["CoalesceDims", "CoalescePass", "merge_dims", "mergeable_dim"]
