"""The `kernel-fuse-elementwise` pass: Fuse elementwise producer nests into the nests that read them."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass


@dataclass(frozen=True)
class FuseElementwisePass(ModulePass):
    """Fuse elementwise producer nests into the nests that read them."""

    name = "kernel-fuse-elementwise"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        return None
