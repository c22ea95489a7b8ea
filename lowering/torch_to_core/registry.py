"""The table of torch → core lowerings: one small handler per torch op class.

A handler receives a `CoreBuilder` positioned at the op and the typed op,
and returns the op's replacement values by result position. Arguments come
by schema name: `op.arg("dim")` gives a scalar argument as a Python value
(its default where the program left it out), a symbolic one (`SymInt`) as a
0-d i64 core tensor, and a tensor argument as its value. It raises
`LoweringError` for forms it does not handle; the legality check then names
the op, its FX node and the user's source line.

    from rung.dialects.torch import generated_ops as aten

    @lowers(aten.AtenSoftplusOp)
    def softplus(b: CoreBuilder, op: aten.AtenSoftplusOp) -> Results:
        ...

Most one-to-one lowerings are not handlers but rules (`rung.lowering.kit.rules`),
installed into the same table. Plugins add and remove handlers with
`add_lowering` and `remove_lowering`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from xdsl.ir import Operation, SSAValue

from rung.dialects.torch import TorchOp
from rung.dialects.torch.extras import EXTRA_OPS
from rung.lowering.kit import CoreBuilder, HandlerTable, Key

Results = Sequence[SSAValue | None]
"""What a handler returns: replacement values by result position."""

Handler = Callable[[CoreBuilder, Any], Results]
"""`handler(b, op)`, `op` being an instance of the class it is registered for."""

TABLE: HandlerTable[Handler] = HandlerTable("torch → core", (TorchOp, *EXTRA_OPS))
"""Every torch → core lowering, by torch op class."""


def lowers(*ops: Key) -> Callable[[Handler], Handler]:
    """Register a handler for torch op classes."""
    return TABLE.lowers(*ops)


def add_lowering(op: Key, handler: Handler, *, replace: bool = False) -> Handler | None:
    """Register `handler` for a torch op class; gives the handler it replaced, if any."""
    return TABLE.add(op, handler, replace=replace)


def remove_lowering(op: Key) -> Handler:
    """Unregister the lowering of a torch op class."""
    return TABLE.remove(op)


def lowering_for(op: Operation) -> Handler | None:
    """The handler that lowers `op`, if any."""
    return TABLE.lookup(op)


__all__ = [
    "TABLE",
    "Handler",
    "Results",
    "add_lowering",
    "lowering_for",
    "lowers",
    "remove_lowering",
]
