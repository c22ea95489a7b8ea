"""The table of core → kernel lowerings: one small handler per core op class.

A handler gets a `KernelBuilder` (appending to the function being built) and
the core op; it reads its operands' buffers with `b.buffer(...)`, emits
allocations and loop nests, and returns one buffer per result. It raises
`KernelLoweringError` for forms it does not handle; the pass then reports the
op, its location and the reason.

    @lowers(core.UnaryOp)
    def unary(b: KernelBuilder, op: core.UnaryOp) -> list[SSAValue]:
        x = b.buffer(op.input)
        out = b.alloc_for(op.result, b.dims(x))
        ...
        return [out]

Outside this package (a plugin, a test), `add_lowering(core.XOp, handler)`
adds one and `remove_lowering(core.XOp)` takes it away again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from xdsl.ir import Operation, SSAValue

from rung.dialects import core
from rung.lowering.kit import HandlerTable

from .builder import KernelBuilder

Handler = Callable[[KernelBuilder, Any], Sequence[SSAValue]]
"""`handler(b, op)`, `op` being an instance of the core op class it is registered for."""

TABLE: HandlerTable[Handler] = HandlerTable("core → kernel", (core.CoreOp,))
"""Every core → kernel lowering, by core op class."""


def lowers(*op_classes: type[core.CoreOp]) -> Callable[[Handler], Handler]:
    """Register a handler for core op classes."""
    return TABLE.lowers(*op_classes)


def add_lowering(
    op_class: type[core.CoreOp], handler: Handler, *, replace: bool = False
) -> Handler | None:
    """Register `handler` for a core op class; gives the handler it replaced, if any."""
    return TABLE.add(op_class, handler, replace=replace)


def remove_lowering(op_class: type[core.CoreOp]) -> Handler:
    """Unregister the lowering of a core op class."""
    return TABLE.remove(op_class)


def lowering_for(op: Operation) -> Handler | None:
    """The handler that lowers `op`, if any."""
    return TABLE.lookup(op)


__all__ = ["TABLE", "Handler", "add_lowering", "lowering_for", "lowers", "remove_lowering"]
