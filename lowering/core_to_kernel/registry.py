"""The table of core → kernel lowerings: one small handler per core op.

A handler gets a `KernelBuilder` (appending to the function being built) and
the core op; it reads its operands' buffers with `b.buffer(...)`, emits
allocations and loop nests, and returns one buffer per result. It raises
`KernelLoweringError` for forms it does not handle; the pass then reports the
op, its location and the reason.

    @lowers(core.UnaryOp)
    def unary(b: KernelBuilder, op: core.UnaryOp) -> list[SSAValue]:
        ...
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.ir import Operation, SSAValue

from .builder import KernelBuilder

Handler = Callable[[KernelBuilder, Operation], Sequence[SSAValue]]

HANDLERS: dict[str, Handler] = {}
"""Handlers by core op name (`core.unary`)."""


def lowers(*op_types: type[Operation]) -> Callable[[Handler], Handler]:
    """Register a handler for core op classes."""

    def register(handler: Handler) -> Handler:
        for cls in op_types:
            if cls.name in HANDLERS:
                raise ValueError(f"two kernel lowerings for {cls.name}")
            HANDLERS[cls.name] = handler
        return handler

    return register
