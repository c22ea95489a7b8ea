"""The `kernel-tile` pass: Tile loop nests of matmul and conv for cache reuse."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass


@dataclass(frozen=True)
class TilePass(ModulePass):
    """Tile loop nests of matmul and conv for cache reuse."""

    name = "kernel-tile"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        return None
