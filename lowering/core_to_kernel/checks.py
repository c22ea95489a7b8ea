"""core → kernel: `core.check` becomes a `cf.assert`, which the C code turns into a failed run.

The checked value keeps its buffer (no copy). The condition is loaded (it
usually has one element) or reduced with `and` over its elements, and the
message names the node, so the error the caller sees says which op got a bad
run-time value.
"""

from __future__ import annotations

from xdsl.dialects import cf
from xdsl.dialects.builtin import NameLoc
from xdsl.ir import Operation, SSAValue

from rung.dialects import core
from rung.dialects.dtypes import i1

from .builder import KernelBuilder
from .registry import lowers


def _node(op: Operation) -> str:
    loc = op.location
    return f"node '{loc.desc.data}'" if isinstance(loc, NameLoc) else "an unnamed node"


@lowers(core.CheckOp)
def check(b: KernelBuilder, op: core.CheckOp) -> list[SSAValue]:
    cond = b.buffer(op.cond)
    dims = b.dims(cond)
    if all(d == 1 for d in dims):
        holds = b.load(cond, [0] * len(dims))
    else:

        def step(b: KernelBuilder, ivs: list[SSAValue], acc: list[SSAValue]) -> list[SSAValue]:
            return [b.binary("and", acc[0], b.load(cond, ivs))]

        (holds,) = b.reduce_loop(dims, [b.const(True, i1)], step)
    b.insert(cf.AssertOp(holds, f"{_node(op)}: {op.message.data}"))
    return [b.buffer(op.input)]


__all__ = ["check"]
