"""The `cse` pass: common subexpression elimination in time linear in the module's size.

It merges an op into an earlier identical one (same name, attributes,
properties, operands, result types and region structure) that dominates it,
with the rules of xDSL's `cse` (`xdsl.transforms.common_subexpression_elimination`):

- an op visible in a block is visible in the regions nested in it, except
  in an op isolated from above, which starts afresh;
- an op with side effects is left alone, except one that only reads: it
  merges into an identical op of the same block when no op between them may
  write;
- terminators, and ops whose regions have several blocks, are left alone;
- ops already dead are erased.

xDSL's pass copies every op known in a block into a new table for each
region nested in it, so a function of n top-level ops and n loop nests costs
n² (24 s of a 20,000-node model's 87 s in core-to-kernel, against 2 s at
5,000 nodes). Here the tables of enclosing blocks are chained, not copied: a
lookup asks each enclosing block in turn, as deep as the nesting, and the
hash of an op is computed once per lookup.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.traits import IsolatedFromAbove, IsTerminator, MemoryEffectKind
from xdsl.transforms.common_subexpression_elimination import OperationInfo

from .effects import Effects, has_trait


class _Key:
    """An op as a table key: equal to another op's key when the two ops are identical."""

    __slots__ = ("hash", "op")

    def __init__(self, op: Operation) -> None:
        self.op = op
        self.hash = hash(OperationInfo(op))

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, _Key)
            and self.hash == other.hash
            and OperationInfo(self.op) == OperationInfo(other.op)
        )


class _Scopes:
    """The ops known in each enclosing block, innermost last."""

    def __init__(self) -> None:
        self.tables: list[dict[_Key, Operation]] = []

    def find(self, key: _Key) -> Operation | None:
        for table in reversed(self.tables):
            found = table.get(key)
            if found is not None:
                return found
        return None

    def holds(self, op: Operation) -> bool:
        """Whether an op identical to `op` is known (xDSL's test before rewiring a use)."""
        return self.find(_Key(op)) is not None


@dataclass
class _Driver:
    rewriter: Rewriter
    scopes: _Scopes
    to_erase: list[Operation]
    effects: Effects

    def block(self, block: Block) -> None:
        for op in block.ops:
            if op.regions:
                if has_trait(op, IsolatedFromAbove):
                    outer = self.scopes
                    self.scopes = _Scopes()
                    for region in op.regions:
                        self.region(region)
                    self.scopes = outer
                else:
                    for region in op.regions:
                        self.region(region)
            self.operation(op)

    def region(self, region: Region) -> None:
        if len(region.blocks) != 1:
            return
        self.scopes.tables.append({})
        try:
            self.block(region.block)
        finally:
            self.scopes.tables.pop()

    def operation(self, op: Operation) -> None:
        if has_trait(op, IsTerminator):
            return
        if self.effects.is_dead(op):
            self.to_erase.append(op)
            return
        if any(len(region.blocks) > 1 for region in op.regions):
            return
        if not self.effects.side_effect_free(op):
            if not self.effects.only_reads(op):
                return
            key = _Key(op)
            existing = self.scopes.find(key)
            if (
                existing is not None
                and op.parent_block() is existing.parent_block()
                and not self.writes_between(existing, op)
            ):
                self.replace(op, existing)
                return
            self.scopes.tables[-1][key] = op
            return
        key = _Key(op)
        existing = self.scopes.find(key)
        if existing is not None:
            self.replace(op, existing)
            return
        self.scopes.tables[-1][key] = op

    def writes_between(self, first: Operation, last: Operation) -> bool:
        """Whether an op from `first` up to (not including) `last`, in one block, may
        write (xDSL's `has_other_side_effecting_op_in_between`)."""
        op: Operation | None = first
        while op is not None and op is not last:
            effects = self.effects.of(op)
            if effects is None or any(e.kind is MemoryEffectKind.WRITE for e in effects):
                return True
            op = op.next_op
        return False

    def replace(self, op: Operation, existing: Operation) -> None:
        """Use `existing`'s results for `op`'s, as xDSL does: a result is rewired only
        when none of its users is itself a known op; `op` goes once unused."""
        for old, new in zip(op.results, existing.results, strict=True):
            if all(not self.scopes.holds(use.operation) for use in old.uses):
                old.replace_all_uses_with(new)
        if all(not r.uses for r in op.results):
            self.to_erase.append(op)


def eliminate_common_subexpressions(root: Operation | Region | Block) -> None:
    """Merge identical ops under `root` (see the module doc)."""
    driver = _Driver(Rewriter(), _Scopes(), [], Effects())
    if isinstance(root, Operation):
        for region in root.regions:
            driver.region(region)
    elif isinstance(root, Region):
        driver.region(root)
    else:
        driver.scopes.tables.append({})
        driver.block(root)
    erased: set[int] = set()
    for op in driver.to_erase:
        if id(op) not in erased and op.parent is not None:
            erased.add(id(op))
            driver.rewriter.erase_op(op)


@dataclass(frozen=True)
class CommonSubexpressionEliminationPass(ModulePass):
    """Merge ops that compute the same value (common subexpressions), in linear time."""

    name = "cse"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        eliminate_common_subexpressions(op)


__all__ = ["CommonSubexpressionEliminationPass", "eliminate_common_subexpressions"]
