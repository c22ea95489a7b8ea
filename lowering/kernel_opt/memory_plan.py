"""The `kernel-plan-memory` pass: static-size buffers share one scratch arena by liveness.

Bufferization gives every tensor its own `kernel.alloc`. Most of them die
long before the function returns, so this pass lays the buffers of static
size out in one arena, letting buffers whose lifetimes do not overlap share
bytes; peak memory then stays near the largest live set rather than the sum
of all tensors.

Liveness is over the function body's top-level ops, in order. A buffer lives
from its `kernel.alloc` to the last top-level op that uses it; a use inside a
nested region (a loop body) counts at the top-level op that holds it, and a
use of anything that may alias the buffer counts as a use of it: views and
subviews (of views...), and, conservatively, results of ops it flows into,
results of region ops it is yielded from (`scf.if`) and the block arguments
that carry it around a loop (`scf.while`). Buffers that the function returns,
directly or through an alias, live to the end: code generation copies
outputs out of them after the body has run. Function arguments and
`kernel.constant`s are not the plan's to place.

Placement is greedy interval packing: buffers are taken in a fixed order
(largest first, among other orders; the smallest arena wins) and each goes to
the lowest 64-byte aligned offset that overlaps no already placed buffer whose
lifetime overlaps its own.

Buffers of run-time size, buffers allocated inside nested regions, and all
buffers of a function that another function calls (the arena belongs to one
run of the entry function) stay heap allocations; each one that does not
escape its block gets a `kernel.dealloc` after its last use there, so that a
long chain of run-time sized ops, or a loop allocating in its body, does not
hold every intermediate until the end of the run.

The function records `kernel.arena_bytes` (the arena size), `kernel.peak_bytes`
(the most bytes of static buffers live at one op: a lower bound for any
arena) and `kernel.total_bytes` (the sum over all planned buffers: the arena
without reuse), all counting each buffer rounded up to 64 bytes.
`plan_summary(module)` reads them back.

    %a = kernel.alloc() {offset = 0 : i64} : memref<16xf32>
    ... last use of %a ...
    %b = kernel.alloc() {offset = 0 : i64} : memref<16xf32>   // reuses %a's bytes
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    NameLoc,
    SymbolRefAttr,
    i64,
)
from xdsl.dialects.func import CallOp as FuncCallOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import IsTerminator

from rung.dialects import kernel
from rung.lowering.generic.walk import ops_of_type
from rung.lowering.kit.errors import LoweringError

ALIGN = 64
"""Every arena offset is a multiple of this; the runtime aligns the arena base to it."""

ARENA_BYTES = "kernel.arena_bytes"
PEAK_BYTES = "kernel.peak_bytes"
TOTAL_BYTES = "kernel.total_bytes"


def align(n: int) -> int:
    """`n` rounded up to a multiple of ALIGN."""
    return (n + ALIGN - 1) // ALIGN * ALIGN


def element_bytes(t: Attribute) -> int | None:
    """Bytes per element as code generation stores it (`bool` for i1); None if unknown."""
    if isinstance(t, IndexType):
        return 8
    width = getattr(t, "bitwidth", None)
    if isinstance(width, int) and width > 0:
        return (width + 7) // 8
    return None


def static_bytes(t: Attribute) -> int | None:
    """The exact byte size of a buffer type of static shape; None otherwise."""
    if not isinstance(t, MemRefType):
        return None
    shape = t.get_shape()
    if any(d < 0 for d in shape):
        return None
    size = element_bytes(t.element_type)
    if size is None:
        return None
    return math.prod(shape) * size


# ---- aliases and uses -------------------------------------------------------------------------


def _memrefs(values: Iterable[SSAValue]) -> Iterator[SSAValue]:
    return (v for v in values if isinstance(v.type, MemRefType))


def _region_values(op: Operation) -> Iterator[SSAValue]:
    """The results of `op` and the arguments of its regions' blocks: where a buffer
    handed to the op (or yielded inside it) may reappear."""
    yield from _memrefs(op.results)
    for region in op.regions:
        for block in region.blocks:
            yield from _memrefs(block.args)


def _aliases_through(user: Operation) -> Iterator[SSAValue]:
    """Values that may share storage with a buffer `user` takes as an operand."""
    if isinstance(user, kernel.DeallocOp):
        return
    if user.regions:
        yield from _region_values(user)  # scf.if / scf.while / loops carrying buffers
    else:
        yield from _memrefs(user.results)  # kernel.view, kernel.subview, anything else
    if user.has_trait(IsTerminator):
        parent = user.parent_op()
        if parent is not None and not isinstance(parent, FuncOp):
            yield from _region_values(parent)  # scf.yield, scf.condition, kernel.yield


def alias_closure(root: SSAValue) -> list[SSAValue]:
    """`root` and every value that may share its storage, conservatively: views and
    subviews (of views...), results of region ops it flows into or out of, and the
    block arguments that carry it around a loop."""
    seen: dict[SSAValue, None] = {root: None}
    work = [root]
    while work:
        value = work.pop()
        for use in value.uses:
            for alias in _aliases_through(use.operation):
                if alias not in seen:
                    seen[alias] = None
                    work.append(alias)
    return list(seen)


def ancestor_in(op: Operation, block: Block) -> Operation | None:
    """The op of `block` that is or contains `op`; None if `op` is outside `block`."""
    current: Operation | None = op
    while current is not None and current.parent_block() is not block:
        current = current.parent_op()
    return current


@dataclass
class Lifetime:
    """Where one buffer allocated in a block is used, counted at that block's ops."""

    alloc: kernel.AllocOp
    start: int
    end: int
    escapes: bool
    """Used by the block's terminator (returned or yielded), or outside the block."""
    deallocs: list[kernel.DeallocOp]
    """Existing deallocs of the buffer or of an alias."""
    last: Operation
    """The op of the block at `end`: a dealloc goes after it."""


def block_lifetimes(block: Block) -> list[Lifetime]:
    """The lifetime of every `kernel.alloc` directly in `block`, in block order."""
    ops = list(block.ops)
    index = {op: i for i, op in enumerate(ops)}
    terminator = ops[-1] if ops and ops[-1].has_trait(IsTerminator) else None
    lifetimes = []
    for op in ops:
        if not isinstance(op, kernel.AllocOp):
            continue
        start = end = index[op]
        escapes = False
        deallocs: list[kernel.DeallocOp] = []
        for value in alias_closure(op.result):
            for use in value.uses:
                user = use.operation
                if isinstance(user, kernel.DeallocOp):
                    deallocs.append(user)
                    continue
                top = ancestor_in(user, block)
                if top is None:
                    escapes = True
                    continue
                if top is terminator:
                    escapes = True
                end = max(end, index[top])
        lifetimes.append(Lifetime(op, start, end, escapes, deallocs, ops[end]))
    return lifetimes


# ---- placement --------------------------------------------------------------------------------


@dataclass
class Slot:
    """A buffer to place: its lifetime [start, end] (inclusive) and 64-aligned size."""

    start: int
    end: int
    size: int
    offset: int = 0

    def overlaps(self, other: Slot) -> bool:
        return self.start <= other.end and other.start <= self.end


def _conflicts(slots: Sequence[Slot]) -> list[list[int]]:
    """For each slot, the slots whose lifetimes overlap its own (a sweep by start)."""
    conflicts: list[list[int]] = [[] for _ in slots]
    active: list[int] = []
    for i in sorted(range(len(slots)), key=lambda i: slots[i].start):
        s = slots[i]
        active = [j for j in active if slots[j].end >= s.start]
        for j in active:
            conflicts[i].append(j)
            conflicts[j].append(i)
        active.append(i)
    return conflicts


def _first_fit(
    slots: Sequence[Slot], order: Sequence[int], conflicts: Sequence[Sequence[int]]
) -> tuple[int, list[int]]:
    """Place slots in `order` at the lowest free offset; (arena bytes, offsets)."""
    offsets = [0] * len(slots)
    placed = [False] * len(slots)
    arena = 0
    for i in order:
        s = slots[i]
        if s.size == 0:
            continue
        busy = sorted((offsets[j], offsets[j] + slots[j].size) for j in conflicts[i] if placed[j])
        offset = 0
        for lo, hi in busy:
            if offset + s.size <= lo:
                break
            offset = max(offset, hi)
        offsets[i] = offset
        placed[i] = True
        arena = max(arena, offset + s.size)
    return arena, offsets


ORDERS: tuple[Callable[[Slot, int], tuple[int, ...]], ...] = (
    lambda s, i: (-s.size, s.start, i),
    lambda s, i: (-s.size * (s.end - s.start + 1), -s.size, s.start, i),
    lambda s, i: (s.start, -s.size, i),
)
"""Orders to try: largest first, largest size x lifetime first, earliest first."""


def place(slots: Sequence[Slot], reuse: bool = True) -> int:
    """Set every slot's offset; gives the arena size in bytes."""
    if not reuse:
        offset = 0
        for s in slots:
            s.offset = offset
            offset += s.size
        return offset
    conflicts = _conflicts(slots)
    best: tuple[int, list[int]] | None = None
    for key in ORDERS:
        order = sorted(range(len(slots)), key=lambda i: key(slots[i], i))
        result = _first_fit(slots, order, conflicts)
        if best is None or result[0] < best[0]:
            best = result
    assert best is not None
    for s, offset in zip(slots, best[1], strict=True):
        s.offset = offset
    return best[0]


def peak_bytes(slots: Iterable[Slot], points: int) -> int:
    """The most bytes live at one of `points` program points."""
    delta = [0] * (points + 1)
    for s in slots:
        delta[s.start] += s.size
        delta[s.end + 1] -= s.size
    peak = live = 0
    for d in delta:
        live += d
        peak = max(peak, live)
    return peak


# ---- the pass ---------------------------------------------------------------------------------


def _insert_deallocs(lifetimes: Iterable[Lifetime]) -> None:
    """A `kernel.dealloc` after the last use of each heap buffer that stays in its block."""
    anchors: dict[Operation, Operation] = {}
    for life in lifetimes:
        if life.alloc.offset is None and not life.escapes and not life.deallocs:
            dealloc = kernel.DeallocOp(life.alloc.result)
            anchor = anchors.get(life.last, life.last)
            block = anchor.parent_block()
            assert block is not None
            block.insert_op_after(dealloc, anchor)
            anchors[life.last] = dealloc


def _is_planned(alloc: kernel.AllocOp) -> bool:
    return not alloc.dynamic_sizes and static_bytes(alloc.result.type) is not None


MOST_BYTES = 2**62
"""The largest buffer a program may hold: offsets and sizes must stay within i64."""


def _node(op: Operation) -> str:
    loc = op.location
    return f"node '{loc.desc.data}'" if isinstance(loc, NameLoc) else "an unnamed node"


def plan_function(func: FuncOp, reuse: bool = True, arena: bool = True) -> None:
    """Plan `func`'s buffers; with `arena` False (a callee) every buffer stays on the heap."""
    body = func.body.block
    nested = [
        b for op in ops_of_type(func, Operation) for region in op.regions for b in region.blocks
    ][1:]  # the body's own block comes first: `func` is the first op
    for block in nested:
        for op in block.ops:
            if isinstance(op, kernel.AllocOp):
                op.properties.pop("offset", None)
        _insert_deallocs(block_lifetimes(block))

    # An arena buffer is never freed: drop deallocs someone wrote for one.
    for op in list(body.ops):
        if isinstance(op, kernel.AllocOp) and arena and _is_planned(op):
            for value in alias_closure(op.result):
                for use in list(value.uses):
                    if isinstance(use.operation, kernel.DeallocOp):
                        use.operation.detach()
                        use.operation.erase()

    points = len(list(body.ops))
    lifetimes = block_lifetimes(body)
    planned: list[tuple[Lifetime, Slot]] = []
    for life in lifetimes:
        size = static_bytes(life.alloc.result.type)
        if size is not None and size > MOST_BYTES:
            raise LoweringError(
                f"{_node(life.alloc)}: a buffer of type {life.alloc.result.type} would take "
                f"{size} bytes, more than the {MOST_BYTES} a program may address"
            )
        if not (arena and _is_planned(life.alloc)) or size is None:
            life.alloc.properties.pop("offset", None)
            continue
        planned.append((life, Slot(life.start, life.end, align(size))))
    slots = [slot for _, slot in planned]
    arena_bytes = place(slots, reuse)
    for life, slot in planned:
        life.alloc.properties["offset"] = IntegerAttr(slot.offset, i64)
    _insert_deallocs(lifetimes)
    func.attributes[ARENA_BYTES] = IntegerAttr(arena_bytes, i64)
    func.attributes[PEAK_BYTES] = IntegerAttr(peak_bytes(slots, points), i64)
    func.attributes[TOTAL_BYTES] = IntegerAttr(sum(s.size for s in slots), i64)


@dataclass(frozen=True)
class PlanMemoryPass(ModulePass):
    """Place static-size buffers in one scratch arena, sharing storage by liveness."""

    name = "kernel-plan-memory"

    no_reuse: bool = False
    """Give every buffer bytes of its own (to debug a suspected plan, and to measure)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        called = {
            call.callee.root_reference.data
            for call in ops_of_type(op, FuncCallOp)
            if isinstance(call.callee, SymbolRefAttr)
        }
        for func in op.body.block.ops:
            if isinstance(func, FuncOp) and func.body.blocks:
                plan_function(func, reuse=not self.no_reuse, arena=func.sym_name.data not in called)


def plan_summary(module: ModuleOp, entry: str | None = None) -> dict[str, int]:
    """The memory plan of the entry function (the first, or `entry`): arena, peak and total
    bytes, and how many top-level buffers are in the arena or on the heap."""
    funcs = [f for f in module.body.block.ops if isinstance(f, FuncOp)]
    if entry is not None:
        funcs = [f for f in funcs if f.sym_name.data == entry]
    if not funcs:
        raise ValueError("the module has no function" + (f" '{entry}'" if entry else ""))
    func = funcs[0]
    summary: dict[str, int] = {}
    for key in (ARENA_BYTES, PEAK_BYTES, TOTAL_BYTES):
        attr = func.attributes.get(key)
        summary[key.removeprefix("kernel.")] = (
            attr.value.data if isinstance(attr, IntegerAttr) else 0
        )
    allocs = [op for op in func.body.block.ops if isinstance(op, kernel.AllocOp)]
    summary["arena_buffers"] = sum(1 for a in allocs if a.offset is not None)
    summary["heap_buffers"] = sum(1 for a in allocs if a.offset is None)
    return summary


__all__ = ["ALIGN", "PlanMemoryPass", "Slot", "place", "plan_function", "plan_summary"]
