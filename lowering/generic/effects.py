"""Memory effects and op traits, looked up once: what `cse` and `dce` ask of every op.

xDSL's `get_effects` collects an op's effect traits anew at each call, and an
op with `RecursiveMemoryEffect` (a loop nest) walks its whole body each time.
CSE and DCE ask it of every op, and of a nest as often as it is nested, so in
a deep module most of their time went there. `Effects` answers with the same
sets as `xdsl.traits.get_effects`, remembering what it computed: it is meant
for one pass over IR whose effects do not change meanwhile (merging and
erasing ops at the end of the pass does not change the effects of the ops that
stay).
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet

from xdsl.dialects.builtin import UnregisteredOp
from xdsl.ir import Operation, SSAValue
from xdsl.traits import (
    EffectInstance,
    IsTerminator,
    MemoryEffect,
    MemoryEffectKind,
    OpTrait,
    RecursiveMemoryEffect,
    SymbolOpInterface,
    get_effects,
)

_EffectSet = AbstractSet[EffectInstance]

_EFFECT_TRAITS: dict[type[Operation], tuple[MemoryEffect, ...]] = {}
_HAS_TRAIT: dict[tuple[type[Operation], type[OpTrait]], bool] = {}


def has_trait(op: Operation, trait: type[OpTrait], *, value_if_unregistered: bool = True) -> bool:
    """`op.has_trait(trait)`, looked up once per op class (traits belong to the class)."""
    cls = type(op)
    if isinstance(op, UnregisteredOp):
        return op.has_trait(trait, value_if_unregistered=value_if_unregistered)
    key = (cls, trait)
    found = _HAS_TRAIT.get(key)
    if found is None:
        found = _HAS_TRAIT[key] = op.has_trait(trait)
    return found


def _effect_traits(op: Operation) -> tuple[MemoryEffect, ...]:
    cls = type(op)
    found = _EFFECT_TRAITS.get(cls)
    if found is None:
        found = _EFFECT_TRAITS[cls] = tuple(op.get_traits_of_type(MemoryEffect))
    return found


class Effects:
    """`get_effects` with a memory, for one pass over IR whose effects stay put."""

    def __init__(self) -> None:
        self._known: dict[int, _EffectSet | None] = {}

    def of(self, op: Operation) -> _EffectSet | None:
        """The effects of `op` (nested ops included where its traits say so); None when
        unknown."""
        key = id(op)
        if key in self._known:
            return self._known[key]
        if isinstance(op, UnregisteredOp):
            found = get_effects(op)
        else:
            found = self._compute(op)
        self._known[key] = found
        return found

    def _compute(self, op: Operation) -> _EffectSet | None:
        traits = _effect_traits(op)
        if not traits:
            return None
        effects: set[EffectInstance] = set()
        for trait in traits:
            if isinstance(trait, RecursiveMemoryEffect):
                for region in op.regions:
                    for block in region.blocks:
                        for inner in block.ops:
                            nested = self.of(inner)
                            if nested is None:
                                return None
                            effects |= nested
                continue
            own = trait.get_effects(op)
            if own is None:
                return None
            effects |= own
        return effects

    def side_effect_free(self, op: Operation) -> bool:
        """`xdsl.traits.is_side_effect_free`."""
        effects = self.of(op)
        return effects is not None and not effects

    def only_reads(self, op: Operation) -> bool:
        """`xdsl.traits.only_has_effect(op, READ)`."""
        effects = self.of(op)
        return effects is not None and all(e.kind == MemoryEffectKind.READ for e in effects)

    def would_be_dead(self, op: Operation) -> bool:
        """`xdsl.transforms.dead_code_elimination.would_be_trivially_dead`: no effect
        beyond its results (reads, and allocations of values it defines, are fine)."""
        if has_trait(op, IsTerminator, value_if_unregistered=False):
            return False
        if has_trait(op, SymbolOpInterface, value_if_unregistered=False):
            return False
        effects = self.of(op)
        return effects is not None and all(
            e.kind == MemoryEffectKind.READ
            or (
                e.kind == MemoryEffectKind.ALLOC
                and isinstance(v := e.value, SSAValue)
                and op.is_ancestor(v.owner)  # type: ignore[arg-type]
            )
            for e in effects
        )

    def is_dead(self, op: Operation) -> bool:
        """`is_trivially_dead`: unused results and no other effect."""
        return all(r.first_use is None for r in op.results) and self.would_be_dead(op)


__all__ = ["Effects", "has_trait"]
