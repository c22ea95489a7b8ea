"""Facts about kernel IR that the loop-nest optimizations share.

Every pass here must stay correct on IR it does not understand, so the
questions are asked conservatively: "which buffers may this op write?"
answers `None` (anything) for an op it does not know, and "which loop dims
does this index depend on?" follows only pure index arithmetic.

Buffers are compared by their *root*: a `kernel.view` is the same storage as
its source, so a write through a view is a write of the source. Distinct
allocations, constants and function arguments are distinct storage (the
runtime passes each input in its own array and copies outputs out).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, MemRefType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.traits import Pure

from rung.dialects import kernel

Roots = frozenset[SSAValue]

SCALAR_PREFIXES = ("arith.", "math.")
"""Dialects of side-effect-free scalar ops that loop bodies compute with."""

EXPENSIVE_OPS = frozenset({
    "arith.divf", "arith.divsi", "arith.divui", "arith.remsi", "arith.remui",
    "arith.floordivsi", "arith.ceildivsi", "kernel.remf",
})  # fmt: skip
"""Scalar ops that cost much more than an add (a division, a remainder)."""

CHEAP_MATH = frozenset({
    "math.absf", "math.absi", "math.floor", "math.ceil", "math.trunc", "math.copysign",
    "math.fma", "math.roundeven", "math.round",
})  # fmt: skip
"""`math` ops that are a few instructions; every other `math` op is a libm call."""


def is_scalar_op(op: Operation) -> bool:
    """A side-effect-free scalar computation (arith, math, kernel.remf) without regions."""
    if op.regions:
        return False
    return op.name.startswith(SCALAR_PREFIXES) or isinstance(op, kernel.RemFOp)


def is_constant(op: Operation) -> bool:
    return isinstance(op, arith.ConstantOp)


def is_expensive(op: Operation) -> bool:
    """A scalar op worth counting as many adds: division, remainder or a libm call."""
    if op.name in EXPENSIVE_OPS:
        return True
    return op.name.startswith("math.") and op.name not in CHEAP_MATH


# ---- buffers and effects ---------------------------------------------------------------------


def root(buffer: SSAValue) -> SSAValue:
    """The storage a buffer value shares (itself unless it is a view of another buffer).

    Any op making a buffer from buffers (`kernel.view`, `kernel.subview`, ops
    this module does not know) is taken to alias its first buffer operand;
    only `kernel.alloc` and `kernel.constant` make new storage.
    """
    while True:
        owner = buffer.owner
        kind = type(owner)
        if kind is kernel.ViewOp:  # the common case, first
            buffer = owner.operands[0]
            continue
        if kind is kernel.AllocOp or kind is kernel.ConstantOp or not isinstance(owner, Operation):
            return buffer
        sources = [v for v in owner.operands if isinstance(v.type, MemRefType)]
        if not sources:
            return buffer
        buffer = sources[0]


def _roots(values: Iterable[SSAValue]) -> Roots:
    return frozenset(root(v) for v in values if isinstance(v.type, MemRefType))


_STRUCTURAL = (
    "kernel.loop",
    "kernel.yield",
    "scf.if",
    "scf.for",
    "scf.yield",
    "scf.while",
    "scf.condition",
    "func.return",
)
"""Ops whose own effects are only those of the ops they hold."""


def writes(op: Operation) -> Roots | None:
    """The storage `op` (and every op nested in it) may write; None when unknown."""
    found: set[SSAValue] = set()
    for inner in _nested(op):
        kind = type(inner)
        if kind is kernel.StoreOp:
            found.add(root(inner.operands[1]))
        elif kind in _WRITES_NOTHING or _plain_scalar(inner):
            continue
        else:
            own = _own_writes(inner)
            if own is None:
                return None
            found |= own
    return frozenset(found)


def reads(op: Operation) -> Roots | None:
    """The storage `op` (and every op nested in it) may read; None when unknown."""
    found: set[SSAValue] = set()
    for inner in _nested(op):
        kind = type(inner)
        if kind is kernel.LoadOp:
            found.add(root(inner.operands[0]))
        elif kind in _READS_NOTHING or _plain_scalar(inner):
            continue
        else:
            own = _own_reads(inner)
            if own is None:
                return None
            found |= own
    return frozenset(found)


_COMMON = (kernel.LoopOp, kernel.YieldOp, kernel.AllocOp, kernel.ConstantOp, kernel.ViewOp)
_READS_NOTHING = frozenset({*_COMMON, kernel.StoreOp, kernel.DeallocOp, kernel.DimOp})
_WRITES_NOTHING = frozenset({*_COMMON, kernel.LoadOp, kernel.DimOp})
"""The ops whose own effects `_own_reads` and `_own_writes` find empty, by class: `reads`
and `writes` ask of every op of a nest, often of every nest of a model."""


def _plain_scalar(op: Operation) -> bool:
    return not op.regions and op.name.startswith(SCALAR_PREFIXES)


def _nested(op: Operation) -> list[Operation]:
    """`op` and the ops nested in it, in `op.walk()`'s order, without a generator per op."""
    found = [op]
    for region in op.regions:
        for block in region.blocks:
            inner = block.first_op
            while inner is not None:
                if inner.regions:
                    found.extend(_nested(inner))
                else:
                    found.append(inner)
                inner = inner.next_op
    return found


def _own_writes(op: Operation) -> Roots | None:
    if isinstance(op, kernel.StoreOp):
        return _roots([op.buffer])
    if isinstance(op, kernel.CopyOp):
        return _roots([op.target])
    if isinstance(op, kernel.MatmulOp):
        return _roots([op.out])
    if isinstance(op, kernel.CallOp):
        return _roots(op.data_buffers)  # an epilogue's buffers are only read
    if isinstance(op, kernel.DeallocOp):
        return _roots(op.operands)
    if isinstance(op, kernel.LoadOp):
        return frozenset()
    return _no_effect(op)


def _own_reads(op: Operation) -> Roots | None:
    if isinstance(op, kernel.LoadOp):
        return _roots([op.buffer])
    if isinstance(op, kernel.CopyOp):
        return _roots([op.source])
    if isinstance(op, kernel.MatmulOp | kernel.CallOp):
        return _roots(op.operands)
    if isinstance(op, kernel.StoreOp | kernel.DeallocOp | kernel.DimOp):
        return frozenset()
    return _no_effect(op)


def _no_effect(op: Operation) -> Roots | None:
    """Empty for ops known to touch no storage themselves, None for unknown ones."""
    if op.name in _STRUCTURAL or is_scalar_op(op):
        return frozenset()
    if isinstance(op, kernel.AllocOp | kernel.ConstantOp | kernel.ViewOp | kernel.DimOp):
        return frozenset()
    if op.has_trait(Pure) and not op.regions:
        return frozenset()
    if not op.regions and not any(isinstance(v.type, MemRefType) for v in op.operands):
        return frozenset()  # kernel IR has no global memory: no buffer, no access
    return None


def conflicts(written: Roots | None, touched: Roots) -> bool:
    """Whether writes to `written` (None: unknown) may change storage in `touched`."""
    return written is None or bool(written & touched)


# ---- loops ---------------------------------------------------------------------------------------


def static_value(v: SSAValue) -> int | None:
    """The value of an index constant, or None."""
    owner = v.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def static_bound(b: int | SSAValue) -> int | None:
    return b if isinstance(b, int) else static_value(b)


def trip_counts(loop: kernel.LoopOp) -> list[int | None]:
    """Iterations of each dim, None where the bound is known only at run time."""
    out: list[int | None] = []
    for b, s in zip(loop.bounds(), loop.step_sizes, strict=True):
        n = static_bound(b)
        out.append(None if n is None else -(-n // s))
    return out


def iteration_count(loop: kernel.LoopOp) -> int | None:
    """Iterations of the whole nest, None if any dim is dynamic."""
    total = 1
    for n in trip_counts(loop):
        if n is None:
            return None
        total *= n
    return total


def enclosing_loops(op: Operation, stop: Block) -> list[kernel.LoopOp]:
    """The `kernel.loop`s around `op` (itself included), up to the block `stop`."""
    loops = []
    current: Operation | None = op
    while current is not None and current.parent is not stop:
        if isinstance(current, kernel.LoopOp):
            loops.append(current)
        current = current.parent_op()
    if isinstance(current, kernel.LoopOp):
        loops.append(current)
    return loops


def ancestor_in(op: Operation, block: Block) -> Operation | None:
    """The op of `block` that is `op` or holds it; None if `op` is not inside `block`."""
    current: Operation | None = op
    while current is not None and current.parent is not block:
        current = current.parent_op()
    return current


LOOP_OPS = ("kernel.loop", "scf.for", "scf.while", "scf.parallel")
"""Ops that may run their regions more than once."""


def inside_loop(op: Operation) -> bool:
    """Whether `op` is nested in a loop (a `kernel.loop`, or an `scf` loop of control flow)."""
    parent = op.parent_op()
    while parent is not None:
        if parent.name in LOOP_OPS:
            return True
        parent = parent.parent_op()
    return False


def repeats_outside_nests(op: Operation, stop: Block) -> bool:
    """Whether an op around `op` (up to the block `stop`) other than a `kernel.loop` may run
    its regions more than once (an `scf.while` of control flow), or is unknown."""
    current: Operation | None = op
    while current is not None and current.parent is not stop:
        current = current.parent_op()
        if current is None:
            return True
        if not isinstance(current, kernel.LoopOp) and current.name != "scf.if":
            return True
    return False


def ops_between(first: Operation, last: Operation) -> Iterator[Operation]:
    """The ops of one block strictly after `first`, up to and including `last`."""
    op = first.next_op
    while op is not None:
        yield op
        if op is last:
            return
        op = op.next_op


def body_ops(loop: kernel.LoopOp) -> Iterator[Operation]:
    """Every op inside the nest's body, nested ones included (the yield too)."""
    for op in loop.body.block.ops:
        yield from _nested(op)


# ---- index expressions ---------------------------------------------------------------------------


def index_dims(v: SSAValue, ivs: Sequence[SSAValue]) -> frozenset[int]:
    """The dims (positions in `ivs`) an index value depends on.

    Follows every op defined inside the nest, loads too (a gathered index
    depends on the dims its load indices depend on); values from outside the
    nest depend on none.
    """
    memo: dict[SSAValue, frozenset[int]] = {}
    positions = {iv: d for d, iv in enumerate(ivs)}
    body = ivs[0].owner if ivs else None

    def visit(x: SSAValue) -> frozenset[int]:
        if x in positions:
            return frozenset({positions[x]})
        if x in memo:
            return memo[x]
        memo[x] = frozenset()
        owner = x.owner
        found: frozenset[int] = frozenset()
        if isinstance(owner, Operation) and isinstance(body, Block) and body.is_ancestor(owner):
            for operand in owner.operands:
                found |= visit(operand)
        memo[x] = found
        return found

    return visit(v)


def unit_dim(v: SSAValue, ivs: Sequence[SSAValue]) -> int | None:
    """The dim `d` if `v` is `ivs[d]` plus or minus values that no dim changes."""
    if v in ivs:
        return list(ivs).index(v)
    owner = v.owner
    if isinstance(owner, arith.AddiOp | arith.SubiOp):
        lhs, rhs = owner.lhs, owner.rhs
        if not index_dims(rhs, ivs):
            return unit_dim(lhs, ivs)
        if isinstance(owner, arith.AddiOp) and not index_dims(lhs, ivs):
            return unit_dim(rhs, ivs)
    return None


@dataclass(frozen=True)
class Access:
    """One load or store of a loop body, seen from a nest's dims."""

    op: kernel.LoadOp | kernel.StoreOp
    dims: tuple[frozenset[int], ...]
    """For each index of the access, the nest dims it depends on."""
    unit: int | None
    """The dim its last index walks with unit stride, if any."""

    @property
    def is_store(self) -> bool:
        return isinstance(self.op, kernel.StoreOp)

    def depends_on(self, d: int) -> bool:
        return any(d in s for s in self.dims)

    def stride_class(self, d: int) -> int:
        """+1 if dim d walks the access with unit stride, 0 if not at all, -1 if by jumps."""
        if not self.depends_on(d):
            return 0
        if self.unit == d and all(d not in s for s in self.dims[:-1]):
            return 1
        return -1

    def position(self, d: int) -> int | None:
        """How far from the last index the first index depending on d is (0: the last)."""
        for p, s in enumerate(reversed(self.dims)):
            if d in s:
                return p
        return None


def accesses(loop: kernel.LoopOp) -> list[Access]:
    """The loads and stores in a nest's body (nested loops included), by the nest's dims."""
    return accesses_of(body_ops(loop), loop.ivs)


def accesses_of(ops: Iterable[Operation], ivs: Sequence[SSAValue]) -> list[Access]:
    """The loads and stores among `ops`, by the dims whose indices are `ivs`.

    `ivs` may join the ivs of nested loops (outermost first), to see a
    parallel nest and the reduction loop in its body as one nest.
    """
    found = []
    for op in ops:
        if isinstance(op, kernel.LoadOp | kernel.StoreOp):
            dims = tuple(index_dims(i, ivs) for i in op.indices)
            unit = unit_dim(op.indices[-1], ivs) if op.indices else None
            found.append(Access(op, dims, unit))
    return found


def loop_work(loop: kernel.LoopOp) -> int | None:
    """Scalar ops the nest executes: iterations times body ops, inner nests multiplied.

    None when some trip count is known only at run time.
    """
    iterations = iteration_count(loop)
    if iterations is None:
        return None
    per = 0
    for op in loop.body.block.ops:
        if isinstance(op, kernel.LoopOp):
            inner = loop_work(op)
            if inner is None:
                return None
            per += inner
        elif not isinstance(op, kernel.YieldOp | arith.ConstantOp):
            per += len(_nested(op))
    return iterations * max(per, 1)


def loop_like(
    loop: kernel.LoopOp,
    bounds: Sequence[int | SSAValue],
    kinds: Sequence[str],
    steps: Sequence[int],
    block: Block,
) -> kernel.LoopOp:
    """A new nest (no iter_args) with `loop`'s `omp` and attributes, to take its place."""
    from xdsl.ir import Region

    new = kernel.LoopOp(bounds, kinds, Region(block), steps=steps)
    if loop.omp is not None:
        new.properties["omp"] = loop.omp
    new.attributes.update(loop.attributes)
    return new


def move_body(loop: kernel.LoopOp, ivs: Sequence[SSAValue], block: Block) -> None:
    """Move every op of `loop`'s body into `block`, the old ivs replaced by `ivs`."""
    old = loop.body.block
    for arg, new in zip(old.args, ivs, strict=True):
        arg.replace_all_uses_with(new)
    for op in list(old.ops):
        op.detach()
        block.add_op(op)


_KNOWN_BODY_OPS = (
    "kernel.load",
    "kernel.store",
    "kernel.loop",
    "kernel.yield",
    "kernel.dim",
    "kernel.remf",
    "scf.if",
    "scf.yield",
)


def simple_body(loop: kernel.LoopOp) -> bool:
    """Whether the body holds only loads, stores, nests, scalar ops and `scf.if`.

    The loop passes reorder iterations only of such nests, whose effects they
    can see; a call, a copy or an op they do not know leaves the nest alone.
    """
    return all(op.name in _KNOWN_BODY_OPS or is_scalar_op(op) for op in body_ops(loop))


__all__ = [
    "Access",
    "accesses",
    "accesses_of",
    "ancestor_in",
    "body_ops",
    "conflicts",
    "enclosing_loops",
    "index_dims",
    "inside_loop",
    "is_expensive",
    "is_scalar_op",
    "iteration_count",
    "loop_work",
    "move_body",
    "loop_like",
    "ops_between",
    "reads",
    "repeats_outside_nests",
    "root",
    "simple_body",
    "static_bound",
    "trip_counts",
    "unit_dim",
    "writes",
]
