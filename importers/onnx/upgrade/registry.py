"""The rule tables: one rule per `(domain, op_type, version it upgrades from)`.

Rule modules register with `@upgrades(("Pad", 2), ...)`; experimental ops
that onnx removed (no schema left) register with `@experimental("Crop")`.
The driver looks rules up here, never by op name in code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from onnx import NodeProto

from .context import Ctx
from .history import DEFAULT


@dataclass
class Out:
    """A rule's replacement for a node.

    `nodes` replaces the node in order. If the original node object is among
    them it keeps being upgraded, from `version` when given, otherwise from the
    next version of its (possibly new) op type.
    """

    nodes: list[NodeProto]
    version: int | None = None


Rule = Callable[[Ctx, NodeProto], "Out | None"]
RULES: dict[tuple[str, str, int], Rule] = {}
# (op, from_version) -> predicate: True if the converter must not touch
# the node (no adapter, or an adapter that is wrong for it).
CONVERTER_WRONG: dict[tuple[str, int], Callable[[NodeProto], bool]] = {}


def always(_node: NodeProto) -> bool:
    """`converter_wrong` for transitions the converter never gets right."""
    return True


def upgrades(
    *keys: tuple[str, int],
    domain: str = DEFAULT,
    converter_wrong: Callable[[NodeProto], bool] | None = None,
) -> Callable[[Rule], Rule]:
    """Register a rule for `(op_type, from_version)` keys.

    `converter_wrong` marks nodes `onnx.version_converter` mishandles or cannot
    handle; they are hidden from it and go through this rule instead.
    """

    def register(fn: Rule) -> Rule:
        for op, version in keys:
            RULES[(domain, op, version)] = fn
            if converter_wrong is not None:
                CONVERTER_WRONG[(op, version)] = converter_wrong
        return fn

    return register


EXPERIMENTAL: dict[str, Callable[[Ctx, NodeProto], Out]] = {}
"""Rules for experimental ops onnx removed, by op type (default domain)."""


def experimental(op_type: str) -> Callable[[Callable[..., Out]], Callable[..., Out]]:
    """Register the rule that replaces the removed experimental op `op_type`."""

    def register(fn: Callable[..., Out]) -> Callable[..., Out]:
        EXPERIMENTAL[op_type] = fn
        return fn

    return register
