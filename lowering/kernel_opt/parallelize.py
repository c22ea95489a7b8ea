"""The `kernel-parallelize` pass: Mark outer parallel loops for OpenMP where the work pays for the threads."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass


@dataclass(frozen=True)
class ParallelizePass(ModulePass):
    """Mark outer parallel loops for OpenMP where the work pays for the threads."""

    name = "kernel-parallelize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        return None
