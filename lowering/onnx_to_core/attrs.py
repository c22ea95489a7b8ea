"""What ONNX → core handlers need beyond the lowering kit: reading ONNX ops.

Everything frontend-neutral (the `CoreBuilder`, shapes, constant folding) is
in `rung.lowering.kit`; handlers import it from there. This module holds the
ONNX side: reading ONNX attributes with their schema defaults in the form a
handler wants (typed ops and their generated accessors do the rest).
"""

from __future__ import annotations

from collections.abc import Sequence

from rung.dialects.onnx import OnnxOp


def ints_attr(op: OnnxOp, name: str, default: Sequence[int]) -> list[int]:
    """An INTS attribute as a list, `default` where the op leaves it out (and the
    schema has no default of its own)."""
    value = op.attr(name)
    if value is None:
        return list(default)
    return [int(v) for v in value]  # type: ignore[union-attr]


__all__ = ["ints_attr"]
