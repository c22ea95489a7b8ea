"""The `kernel-fuse-epilogue` pass: fuse an elementwise nest into the nest whose result it reads.

`kernel-fuse-elementwise` moves elementwise *producers* into their consumers.
It cannot move anything into a nest that does more than compute one element
from loads, such as a depthwise conv summing its window per point or a pooling
nest, so the bias and activation after such a nest still write and re-read the
whole tensor. This pass does the converse: an elementwise *consumer* that reads
the nest's buffer at its own indices runs inside the nest, right after the
nest's store, on the value just stored.

    %t = kernel.alloc() : memref<8x8xf32>             %y = kernel.alloc() : memref<8x8xf32>
    kernel.loop (%i, %j) in (8, 8) [parallel] {       kernel.loop (%i, %j) in (8, 8) [parallel] {
      %s = kernel.loop (%k) ... iter_args(...)          %s = kernel.loop (%k) ... iter_args(...)
      kernel.store %s, %t[%i, %j]                ==>    %b = kernel.load %bias[%i]
    }                                                   %r = arith.addf %s, %b : f32
    %y = kernel.alloc() : memref<8x8xf32>               kernel.store %r, %y[%i, %j]
    kernel.loop (%a, %c) in (8, 8) [parallel] {       }
      %v = kernel.load %t[%a, %c]
      %b = kernel.load %bias[%a]
      %r = arith.addf %v, %b : f32
      kernel.store %r, %y[%a, %c]
    }

The producer is an all-parallel nest (its inner nests may reduce) that stores
into a buffer of its block once, at exactly its indices, over bounds equal to
the buffer's dims, and does not read it. The consumer is the buffer's only
reader: an elementwise nest (see `fuse.as_producer`) over the same bounds that
loads the buffer only at its own indices. Moving the consumer's work earlier is
legal when no op between the two nests touches what the consumer writes or
writes what it reads. Values the consumer uses that are defined between the two
(its output buffer's allocation, views, constants, dims) move up with it when
their own operands allow.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from rung.dialects import kernel
from rung.lowering.generic.walk import ops_of_type, rewrite_each

from .analysis import conflicts, ops_between, reads, root, writes
from .fuse import FoldDimOfAlloc, Producer, as_producer, buffer_dims

MOVABLE = (kernel.AllocOp, kernel.ViewOp, kernel.DimOp, kernel.ConstantOp, arith.ConstantOp)
"""Ops between the two nests that may move above the producer: they only name storage or
values, with no effect on any buffer."""


@dataclass(frozen=True)
class Epilogue:
    """A producer nest and the elementwise consumer nest that moves into it."""

    loop: kernel.LoopOp
    store: kernel.StoreOp
    alloc: kernel.AllocOp
    consumer: Producer
    loads: list[kernel.LoadOp]
    hoisted: list[Operation]
    """Ops between the nests that the consumer needs, in order, to move above the producer."""


def _sole_store(loop: kernel.LoopOp) -> kernel.StoreOp | None:
    """The one store of an all-parallel nest, at its top level and at exactly its indices."""
    if loop.inits or any(k != "parallel" for k in loop.kinds):
        return None
    if any(s != 1 for s in loop.step_sizes):
        return None
    stores = ops_of_type(loop, kernel.StoreOp)
    if len(stores) != 1:
        return None
    store = stores[0]
    if store.parent is not loop.body.block or tuple(store.indices) != loop.ivs:
        return None
    return store


def _same_bounds(a: kernel.LoopOp, b: kernel.LoopOp) -> bool:
    ab, bb = a.bounds(), b.bounds()
    return len(ab) == len(bb) and all(
        x is y if isinstance(x, SSAValue) or isinstance(y, SSAValue) else x == y
        for x, y in zip(ab, bb, strict=True)
    )


def _dominates(v: SSAValue, loop: kernel.LoopOp, moving: set[Operation]) -> bool:
    """Whether `v` is available before `loop` (or comes from an op that will move there)."""
    owner = v.owner
    if isinstance(owner, Block):
        return _outside(loop, owner)
    if owner in moving:
        return True
    block = loop.parent
    if owner.parent is not block:
        return owner.parent is not None and _outside(loop, owner.parent)
    return owner.is_before_in_block(loop)


def _outside(loop: kernel.LoopOp, block: Block) -> bool:
    """Whether `block` encloses `loop` (its values dominate the loop)."""
    op: Operation | None = loop
    while op is not None:
        if op.parent is block:
            return True
        op = op.parent_op()
    return False


def _hoisted(p: kernel.LoopOp, c: kernel.LoopOp) -> list[Operation] | None:
    """The ops between the nests that the consumer uses, to move above the producer; None if
    one of them cannot move."""
    between = list(ops_between(p, c))[:-1]
    position = {op: i for i, op in enumerate(between)}
    needed: set[Operation] = set()
    pending = [v for op in ops_of_type(c, Operation) for v in op.operands]
    while pending:
        v = pending.pop()
        owner = v.owner
        if isinstance(owner, Operation) and owner in position and owner not in needed:
            if not isinstance(owner, MOVABLE):
                return None
            needed.add(owner)
            pending.extend(owner.operands)
    moving = set(needed)
    for op in needed:
        if not all(_dominates(v, p, moving) for v in op.operands):
            return None
    return sorted(needed, key=position.__getitem__)


def plan(loop: kernel.LoopOp) -> Epilogue | None:
    """The consumer to fuse into `loop`, or None (see the module doc)."""
    store = _sole_store(loop)
    if store is None or as_producer(loop) is not None:  # elementwise ones are fused forward
        return None
    alloc = store.buffer.owner
    if not isinstance(alloc, kernel.AllocOp) or alloc.parent is not loop.parent:
        return None
    target = alloc.result
    bounds = loop.bounds()
    dims = buffer_dims(alloc)
    if len(bounds) != len(dims) or not all(
        b is d if isinstance(b, SSAValue) or isinstance(d, SSAValue) else b == d
        for b, d in zip(bounds, dims, strict=True)
    ):
        return None
    read = reads(loop)
    if read is None or target in read:
        return None
    loads: list[kernel.LoadOp] = []
    holders: set[Operation] = set()
    for use in target.uses:
        user = use.operation
        if user is store or isinstance(user, kernel.DeallocOp | kernel.DimOp):
            continue
        if not isinstance(user, kernel.LoadOp):
            return None
        loads.append(user)
        holder = user
        while holder is not None and holder.parent is not loop.parent:
            holder = holder.parent_op()
        if holder is None:
            return None
        holders.add(holder)
    if len(holders) != 1:
        return None
    (consumer_op,) = holders
    if not isinstance(consumer_op, kernel.LoopOp) or not loop.is_before_in_block(consumer_op):
        return None
    consumer = as_producer(consumer_op)
    if consumer is None or not _same_bounds(loop, consumer_op):
        return None
    if any(load.parent is not consumer_op.body.block for load in loads):
        return None
    if any(tuple(load.indices) != consumer_op.ivs for load in loads):
        return None
    hoisted = _hoisted(loop, consumer_op)
    if hoisted is None or not _legal(loop, consumer_op, consumer, target):
        return None
    return Epilogue(loop, store, alloc, consumer, loads, hoisted)


def _legal(p: kernel.LoopOp, c: kernel.LoopOp, consumer: Producer, target: SSAValue) -> bool:
    """No op from the producer up to the consumer touches what the consumer writes, or writes
    what it reads (the producer's own buffer aside)."""
    out = frozenset({root(consumer.target)})
    inputs = consumer.reads - {root(target)}
    if conflicts(writes(p), inputs | out):
        return False
    read_p = reads(p)
    if read_p is None or read_p & out:
        return False
    for op in list(ops_between(p, c))[:-1]:
        if conflicts(writes(op), inputs | out):
            return False
        seen = reads(op)
        if seen is None or seen & out:
            return False
    return True


class FuseEpilogue(RewritePattern):
    """Move the elementwise consumer of a nest's buffer into the nest, after its store."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: kernel.LoopOp, rewriter: PatternRewriter) -> None:
        e = plan(op)
        if e is None:
            return
        for moved in e.hoisted:
            moved.detach()
            rewriter.insert(moved, InsertPoint.before(op))
        consumer = e.consumer
        mapping: dict[SSAValue, SSAValue] = dict(zip(consumer.loop.ivs, op.ivs, strict=True))
        for load in e.loads:
            mapping[load.result] = e.store.value
        anchor = InsertPoint.after(e.store)
        for inner in consumer.loop.body.block.ops:
            if inner in e.loads or isinstance(inner, kernel.YieldOp):
                continue
            clone = inner.clone(value_mapper=mapping)
            rewriter.insert(clone, anchor)
            anchor = InsertPoint.after(clone)
        rewriter.erase(e.store)
        rewriter.erase(consumer.loop)
        for use in list(e.alloc.result.uses):
            user = use.operation
            if isinstance(user, kernel.DimOp):
                FoldDimOfAlloc().match_and_rewrite(user, rewriter)
            else:
                rewriter.erase(user)
        rewriter.erase(e.alloc)


@dataclass(frozen=True)
class FuseEpiloguePass(ModulePass):
    """Fuse elementwise consumer nests into the nests whose buffers they read."""

    name = "kernel-fuse-epilogue"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_each(op, kernel.LoopOp, FuseEpilogue(), repeat=True)


__all__ = ["FuseEpilogue", "FuseEpiloguePass", "plan"]
