"""The `kernel-drop-dead-buffers` pass: remove buffers that are written but never read.

Bufferization gives every core result a buffer, and fusion or static shapes
can leave some with no reader: a shape vector whose entries were all used as
known sizes, or a producer whose every load was inlined. Their stores (and
then, through `dce`, the loops around them) are dead.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from rung.dialects import kernel
from rung.lowering.generic.walk import ops_of_type


def _only_written(alloc: kernel.AllocOp) -> bool:
    uses = [use.operation for use in alloc.result.uses]
    return bool(uses) and all(
        isinstance(u, kernel.StoreOp) and u.buffer is alloc.result for u in uses
    )


@dataclass(frozen=True)
class DropDeadBuffersPass(ModulePass):
    """Erase allocations whose only uses are stores into them, with those stores."""

    name = "kernel-drop-dead-buffers"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        changed = True
        while changed:
            changed = False
            for alloc in ops_of_type(op, kernel.AllocOp):
                if alloc.result.uses and not _only_written(alloc):
                    continue
                for use in list(alloc.result.uses):
                    use.operation.detach()
                    use.operation.erase()
                alloc.detach()
                alloc.erase()
                changed = True
