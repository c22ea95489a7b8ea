"""The `kernel-interchange` pass: Reorder loop dims so the innermost dim walks memory with unit stride."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass


@dataclass(frozen=True)
class InterchangePass(ModulePass):
    """Reorder loop dims so the innermost dim walks memory with unit stride."""

    name = "kernel-interchange"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        return None
