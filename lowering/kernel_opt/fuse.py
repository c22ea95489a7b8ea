"""The `kernel-fuse-elementwise` pass: fuse elementwise producer nests into the nests that read them.

core → kernel gives every elementwise op a nest of its own that stores into
a buffer of its own, so `relu(x + b)` writes and re-reads a whole tensor.
This pass inlines such a *producer* nest into its *consumers*: every
`kernel.load %t[idx]` of its buffer becomes a copy of the producer's body
computing that element at `idx`. When no load of the buffer is left, the
producer nest and the buffer's `kernel.alloc` go away.

    %t = kernel.alloc() : memref<8xf32>                 kernel.loop (%j) in (8) [parallel] {
    kernel.loop (%i) in (8) [parallel] {                  %a = kernel.load %x[%j] : ...
      %a = kernel.load %x[%i] : ...              ==>      %s = arith.addf %a, %a : f32
      %s = arith.addf %a, %a : f32                        %r = arith.maximumf %s, %z : f32
      kernel.store %s, %t[%i] : ...                       kernel.store %r, %y[%j] : ...
    }                                                   }
    kernel.loop (%j) in (8) [parallel] {
      %v = kernel.load %t[%j] : ...
      %r = arith.maximumf %v, %z : f32
      kernel.store %r, %y[%j] : ...
    }

A producer is an all-parallel nest without iter_args whose body only loads,
computes with arith/math/kernel.remf, and stores once, into a buffer from a
`kernel.alloc` of its block, at exactly its ivs in order, over bounds equal to
that buffer's dims (so it writes every element once). The buffer is written
by nothing else and the producer does not read it.

Legality, for each consumer (the op of the producer's block holding a load):
no op from the producer up to and including the consumer may write storage
the producer reads, so the inlined body sees the values the nest saw.

Fusion is all or nothing: it happens only when *every* use of the buffer is a
load that can take the inlined body (a `kernel.dim`, or a `kernel.dealloc`,
are fine too), because inlining into some consumers while the producer stays
would only add work. Loads through a `kernel.view` that only splits dims (a
Reshape before a Transpose, as attention heads are split) count too: their
indices map back with multiplies and adds. A buffer returned by the function,
viewed otherwise, copied, or used by `kernel.matmul` or `kernel.call` stays.

Against recomputation (the heuristic):
- each consumer reads the buffer at one index per iteration point (loads
  with identical indices in one block count once and share the value);
- the producer body is *cheap* when it has at most `CHEAP_OPS` scalar ops and
  none is a division, remainder or libm call (`math.exp`, `math.erf`, ...);
- a cheap body may be inlined into any number of consumers, whatever their
  iteration domains (a broadcast or `x + 1` recomputed costs less than a
  round trip through memory);
- any other body is inlined only into a single consumer whose loads run at
  most once per element of the buffer: the domain of the loops around the
  load (inside the consumer) is no larger than the buffer, compared
  statically, with equal run-time sizes cancelling out;
- a body of more than `SERIAL_OPS` scalar ops is not inlined into a loop
  carrying iter_args (a sum, a pooling window): such a loop runs serially in
  C (floats are not reassociated), while the producer's own nest vectorizes.
  A fused bias + BatchNorm + ReLU inside a 2x2 max-pool window measured 25%
  slower than the vectorized nest plus the pool.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, ModuleOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from rung.dialects import kernel
from rung.lowering.generic.walk import rewrite_each

from .analysis import (
    Roots,
    ancestor_in,
    conflicts,
    enclosing_loops,
    is_constant,
    is_expensive,
    is_scalar_op,
    reads,
    repeats_outside_nests,
    root,
    static_bound,
    writes,
)

CHEAP_OPS = 4
"""A producer body with at most this many scalar ops (and no expensive one) is cheap."""

SERIAL_OPS = 1
"""The most scalar ops inlined into a loop carrying iter_args (see the module doc)."""


# ---- what a producer is ----------------------------------------------------------------------


@dataclass(frozen=True)
class Producer:
    """An elementwise nest that fills the whole buffer `target`, once per element."""

    loop: kernel.LoopOp
    store: kernel.StoreOp
    alloc: kernel.AllocOp
    reads: Roots
    ops: int
    """Scalar ops (constants aside) computing one element."""
    cheap: bool

    @property
    def target(self) -> SSAValue:
        return self.alloc.result


def buffer_dims(alloc: kernel.AllocOp) -> list[int | SSAValue]:
    """The sizes of an allocated buffer: numbers, or its run-time size operands."""
    dynamic = iter(alloc.dynamic_sizes)
    return [d if d >= 0 else next(dynamic) for d in alloc.result.type.get_shape()]


def _same_size(bound: int | SSAValue, size: int | SSAValue) -> bool:
    if isinstance(bound, SSAValue) and isinstance(size, SSAValue):
        return bound is size
    a, b = static_bound(bound), static_bound(size)
    return a is not None and a == b


def as_producer(loop: kernel.LoopOp) -> Producer | None:
    """`loop` seen as an elementwise producer, or None if it is not one."""
    if loop.results or any(k != "parallel" for k in loop.kinds):  # results: iter_args
        return None
    if any(s != 1 for s in loop.step_sizes):
        return None
    stores = []
    scalar = []
    for op in loop.body.block.ops:
        kind = type(op)
        if kind is kernel.StoreOp:
            stores.append(op)
        elif kind is kernel.LoadOp or kind is kernel.YieldOp:
            continue
        elif not is_scalar_op(op):
            return None
        elif not is_constant(op):
            scalar.append(op)
    if len(stores) != 1:
        return None
    store = stores[0]
    if tuple(store.indices) != loop.ivs:
        return None
    alloc = store.buffer.owner
    if not isinstance(alloc, kernel.AllocOp) or alloc.parent is not loop.parent:
        return None
    if not all(_same_size(b, d) for b, d in zip(loop.bounds(), buffer_dims(alloc), strict=True)):
        return None
    read = reads(loop)
    if read is None or alloc.result in read:
        return None
    cheap = len(scalar) <= CHEAP_OPS and not any(is_expensive(op) for op in scalar)
    return Producer(loop, store, alloc, read, len(scalar), cheap)


# ---- where it can go -----------------------------------------------------------------------------


@dataclass
class Consumer:
    """An op after the producer, in its block, that loads the producer's buffer."""

    op: Operation
    loads: list[kernel.LoadOp]
    """One load per distinct index: these get the inlined body."""
    repeats: list[tuple[kernel.LoadOp, kernel.LoadOp]]
    """(load, earlier load of the same block and indices whose value it takes)."""


def _domain_fits(load: kernel.LoadOp, consumer: Operation, sizes: list[int | SSAValue]) -> bool:
    """Whether the loops around `load`, inside `consumer`, run at most `prod(sizes)` times."""
    block = consumer.parent
    assert block is not None
    if repeats_outside_nests(load, block):
        return False
    pending = [s for s in sizes if isinstance(s, SSAValue) and static_bound(s) is None]
    budget = 1
    for s in sizes:
        n = static_bound(s)
        if n is not None:
            budget *= n
    used = 1
    for loop in enclosing_loops(load, block):
        for bound, step in zip(loop.bounds(), loop.step_sizes, strict=True):
            n = static_bound(bound)
            if n is not None:
                used *= -(-n // step)
            elif step == 1 and bound in pending:
                pending.remove(bound)
            else:
                return False
    return used <= budget


def _group_loads(holder: Operation, loads: list[kernel.LoadOp]) -> Consumer:
    """Loads of one block at the same indices read the same element: the first one serves."""
    consumer = Consumer(holder, [], [])
    groups: dict[tuple[int, ...], list[kernel.LoadOp]] = {}
    for load in loads:
        key = (id(load.parent), id(load.buffer), *(id(i) for i in load.indices))
        groups.setdefault(key, []).append(load)
    for group in groups.values():
        first = group[0]
        for load in group[1:]:
            if load.is_before_in_block(first):
                first = load
        consumer.loads.append(first)
        consumer.repeats.extend((load, first) for load in group if load is not first)
    return consumer


def _in_register_reduction(load: kernel.LoadOp, consumer: Operation) -> bool:
    """Whether `load` runs inside a loop carrying iter_args, or a control-flow loop (within
    `consumer`)."""
    block = consumer.parent
    assert block is not None
    if repeats_outside_nests(load, block):
        return True
    return any(loop.inits for loop in enclosing_loops(load, block))


def expansion(source: Attribute, view: Attribute) -> list[list[int]] | None:
    """For each dim of `source`, the consecutive dims of `view` that split it, or None.

    A reshape that only splits dims (`[128, 256]` as `[1, 128, 4, 64]`) maps
    view indices to source indices with multiplies and adds; others (merges,
    run-time sizes) would need divisions and are not followed.
    """
    if not isinstance(source, MemRefType) or not isinstance(view, MemRefType):
        return None
    src, out = list(source.get_shape()), list(view.get_shape())
    if any(d <= 0 for d in (*src, *out)):
        return None
    groups: list[list[int]] = []
    k = 0
    for d in src:
        group, size = [], 1
        while k < len(out) and (size * out[k] < d or (size * out[k] == d and size < d)):
            group.append(k)
            size *= out[k]
            k += 1
        while k < len(out) and out[k] == 1 and size == d:
            group.append(k)
            k += 1
        if size != d:
            return None
        groups.append(group)
    return groups if k == len(out) else None


def _loads_of(p: Producer) -> list[kernel.LoadOp] | None:
    """Every load of the producer's buffer, through views that split its dims; None if the
    buffer has another use (dims and deallocs aside)."""
    found = []
    for use in list(p.target.uses):
        user = use.operation
        if user is p.store or isinstance(user, kernel.DeallocOp | kernel.DimOp):
            continue
        if isinstance(user, kernel.ViewOp) and expansion(p.target.type, user.result.type):
            users = [u.operation for u in user.result.uses]
            if not all(isinstance(u, kernel.LoadOp) for u in users):
                return None
            found.extend(users)  # type: ignore[arg-type]
        elif isinstance(user, kernel.LoadOp):
            found.append(user)
        else:
            return None
    return found


Written = dict[Operation, Roots | None]
"""What ops write (`analysis.writes`), remembered while the pass runs: inlining adds
loads and scalar ops to consumers, never a store, so what an op writes stays what it
was, and a producer need not walk again the nests that earlier ones walked."""


def plan(p: Producer, written: Written | None = None) -> list[Consumer] | None:
    """The consumers to inline `p` into, or None when it must stay (see the module doc);
    `written` remembers what the ops on the way write."""
    block = p.loop.parent
    assert block is not None
    loads: dict[Operation, list[kernel.LoadOp]] = {}
    found = _loads_of(p)
    if found is None:
        return None
    for user in found:
        holder = ancestor_in(user, block)
        if holder is None or holder is p.loop:
            return None
        loads.setdefault(holder, []).append(user)
    if not loads:
        return None
    consumers = [_group_loads(holder, found) for holder, found in loads.items()]
    sizes = buffer_dims(p.alloc)
    for consumer in consumers:
        if len(consumer.loads) != 1:
            return None
        if not p.cheap:
            if len(consumers) != 1 or not _domain_fits(consumer.loads[0], consumer.op, sizes):
                return None
        if p.ops > SERIAL_OPS and _in_register_reduction(consumer.loads[0], consumer.op):
            return None
    if not _safe_to_move_to(p, {c.op for c in consumers}, {} if written is None else written):
        return None
    return consumers


def _safe_to_move_to(p: Producer, consumers: set[Operation], written: Written) -> bool:
    """Whether every consumer comes after the producer, with no op on the way (the
    consumers included) that may write what the producer reads.

    One walk to the last consumer: a producer read by every block of a deep
    model (a broadcast weight) would otherwise be walked to once per consumer,
    from the start, which is quadratic in the model's size.
    """
    pending = set(consumers)
    op = p.loop.next_op
    while op is not None and pending:
        if op not in written:
            written[op] = writes(op)
        if conflicts(written[op], p.reads):
            return False
        pending.discard(op)
        op = op.next_op
    return not pending


# ---- the rewrite ---------------------------------------------------------------------------------


def _source_indices(p: Producer, load: kernel.LoadOp, rewriter: PatternRewriter) -> list[SSAValue]:
    """The indices of the producer's buffer that `load` (maybe through a view) reads."""
    if load.buffer is p.target:
        return list(load.indices)
    groups = expansion(p.target.type, load.buffer.type)
    assert groups is not None
    shape = load.buffer.type.get_shape()  # type: ignore[attr-defined]

    def emit(op: Operation) -> SSAValue:
        rewriter.insert(op, InsertPoint.before(load))
        return op.results[0]

    indices = []
    for group in groups:
        index: SSAValue | None = None
        for k in group:
            if shape[k] == 1:
                continue
            if index is None:
                index = load.indices[k]
                continue
            size = emit(arith.ConstantOp(IntegerAttr(shape[k], IndexType())))
            index = emit(arith.AddiOp(emit(arith.MuliOp(index, size)), load.indices[k]))
        indices.append(
            index if index is not None else emit(arith.ConstantOp(IntegerAttr(0, IndexType())))
        )
    return indices


def inline_at(p: Producer, load: kernel.LoadOp, rewriter: PatternRewriter) -> None:
    """Replace `load` by the producer's body computed at the element the load reads."""
    indices = _source_indices(p, load, rewriter)
    mapping: dict[SSAValue, SSAValue] = dict(zip(p.loop.ivs, indices, strict=True))
    for op in p.loop.body.block.ops:
        if op is p.store or isinstance(op, kernel.YieldOp):
            continue
        rewriter.insert(op.clone(value_mapper=mapping), InsertPoint.before(load))
    value = mapping.get(p.store.value, p.store.value)
    rewriter.replace(load, [], [value])


def move_to(p: Producer, load: kernel.LoadOp, rewriter: PatternRewriter) -> None:
    """`inline_at` for the producer's only load: its body is moved, not copied.

    A chain of n elementwise ops fuses one producer at a time into a body that
    grows by one op each step; copying that body at every step costs n² ops,
    moving it costs n. The producer's nest is erased right after, so nothing
    else needs the original.
    """
    indices = _source_indices(p, load, rewriter)
    ivs = list(p.loop.ivs)
    value = dict(zip(ivs, indices, strict=True)).get(p.store.value, p.store.value)
    body = [
        op
        for op in p.loop.body.block.ops
        if op is not p.store and not isinstance(op, kernel.YieldOp)
    ]
    for op in body:
        op.detach()
    rewriter.insert(body, InsertPoint.before(load))
    for iv, index in zip(ivs, indices, strict=True):
        rewriter.replace_all_uses_with(iv, index)
    rewriter.replace(load, [], [value])


class FoldDimOfAlloc(RewritePattern):
    """`kernel.dim` of a new buffer or view is its size operand (or a constant).

    Loop bounds then name the size itself, not the buffer, so a fused-away
    buffer has no `kernel.dim` users left.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: kernel.DimOp, rewriter: PatternRewriter) -> None:
        owner = op.buffer.owner
        if not isinstance(owner, kernel.AllocOp | kernel.ViewOp):
            return
        t = owner.result.type
        assert isinstance(t, MemRefType)
        d = op.dim.value.data
        size = t.get_shape()[d]
        if size >= 0:
            rewriter.replace(op, arith.ConstantOp(IntegerAttr(size, IndexType())))
            return
        position = sum(1 for s in t.get_shape()[:d] if s < 0)
        rewriter.replace(op, [], [owner.dynamic_sizes[position]])


class InlineElementwiseProducer(RewritePattern):
    """Inline an elementwise producer nest into every consumer, then erase it and its buffer.

    `written`, if given, remembers what ops write from one rewrite to the next (see
    `Written`): only for a walk that applies no pattern adding a store.
    """

    def __init__(self, written: Written | None = None) -> None:
        self.written = written

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: kernel.LoopOp, rewriter: PatternRewriter) -> None:
        p = as_producer(op)
        if p is None:
            return
        consumers = plan(p, self.written)
        if consumers is None:
            return
        loads = [load for consumer in consumers for load in consumer.loads]
        for consumer in consumers:
            for load, first in consumer.repeats:
                rewriter.replace(load, [], [first.result])
            for load in consumer.loads:
                (move_to if len(loads) == 1 else inline_at)(p, load, rewriter)
        rewriter.erase(op)
        for use in list(p.target.uses):
            user = use.operation
            if isinstance(user, kernel.DeallocOp | kernel.ViewOp):
                rewriter.erase(user)
            elif isinstance(user, kernel.DimOp):
                FoldDimOfAlloc().match_and_rewrite(user, rewriter)
        rewriter.erase(p.alloc)


def loops_to_revisit(inserted: list[Operation]) -> set[Operation]:
    """After a sweep, the nests whose fusion it may have changed, from the ops it inserted
    (inlined bodies, moved or copied into consumers): the nests around them, whose bodies
    grew, and the producers of the buffers their loads read, whose loads moved into
    other consumers. Only these are offered again, rather than every nest of the model."""
    loops: set[Operation] = set()
    buffers: set[SSAValue] = set()
    for op in inserted:
        parent = op.parent_op()
        while parent is not None and parent not in loops:
            if isinstance(parent, kernel.LoopOp):
                loops.add(parent)
            parent = parent.parent_op()
        if isinstance(op, kernel.LoadOp):
            buffer = root(op.buffer)
            if isinstance(buffer.owner, kernel.AllocOp):  # a producer's (weights have none)
                buffers.add(buffer)
    for buffer in buffers:
        for use in buffer.uses:
            if isinstance(use.operation, kernel.StoreOp):
                loop = use.operation.parent_op()
                if isinstance(loop, kernel.LoopOp):
                    loops.add(loop)
    return loops


@dataclass(frozen=True)
class FuseElementwisePass(ModulePass):
    """Fuse elementwise producer nests into the nests that read them."""

    name = "kernel-fuse-elementwise"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_each(op, kernel.DimOp, FoldDimOfAlloc())
        rewrite_each(
            op,
            kernel.LoopOp,
            InlineElementwiseProducer(written={}),
            repeat=True,
            erase_dead=True,
            revisit=loops_to_revisit,
        )


__all__ = ["FoldDimOfAlloc", "FuseElementwisePass", "InlineElementwiseProducer"]
