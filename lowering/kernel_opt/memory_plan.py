"""The `kernel-plan-memory` pass: Place static-size buffers in one scratch arena, sharing storage by liveness."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass


@dataclass(frozen=True)
class PlanMemoryPass(ModulePass):
    """Place static-size buffers in one scratch arena, sharing storage by liveness."""

    name = "kernel-plan-memory"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        return None
