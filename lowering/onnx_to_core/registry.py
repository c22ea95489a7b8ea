"""The table of ONNX → core lowerings: one small handler per onnx op class.

A handler receives a `CoreBuilder` positioned at the op and the typed op
itself, and returns the op's replacement values by ONNX output position (None
where an output is absent). Operands and results come from the op's
generated accessors, attributes from `op.attr(name)` (with the schema's
default). It raises `LoweringError` for forms it does not handle; the op is
then left in place and the legality check reports the reason.

    from rung.dialects.onnx import generated_ops as onnx

    @lowers(onnx.LeakyReluOp)
    def leaky_relu(b: CoreBuilder, op: onnx.LeakyReluOp) -> Results:
        x = op.X
        scaled = b.binary("mul", x, b.splat(op.attr("alpha"), x))
        return [b.select(b.compare("lt", x, b.splat(0, x)), scaled, x)]

Ops of custom domains (`onnx.Custom "com.example" "Twice"`) are keyed by
`(domain, op_type)`; their handler gets the `CustomOp`, with its operands in
`op.onnx_inputs()` and its attributes in `op.attributes`. Outside this package
(a plugin, a test) lowerings are added and removed with `add_lowering` and
`remove_lowering`:

    add_lowering(("com.example", "Twice"), twice)
    remove_lowering(("com.example", "Twice"))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from xdsl.ir import Operation, SSAValue

from rung.dialects.onnx import CustomOp, OnnxOp
from rung.lowering.kit import CoreBuilder, HandlerTable, Key

Results = Sequence[SSAValue | None]
"""What a handler returns: replacement values by ONNX output position."""

Handler = Callable[[CoreBuilder, Any], Results]
"""`handler(b, op)`, `op` being an instance of the class it is registered for."""


def custom_key(op: Operation) -> tuple[str, str] | None:
    """The (domain, op_type) of an `onnx.Custom` op, which is looked up by name."""
    if isinstance(op, CustomOp):
        return (op.domain.data, op.op_type.data)
    return None


TABLE: HandlerTable[Handler] = HandlerTable("ONNX → core", (OnnxOp, CustomOp), custom_key)
"""Every ONNX → core lowering, by onnx op class or custom (domain, op_type)."""


def lowers(*ops: Key) -> Callable[[Handler], Handler]:
    """Register a handler for onnx op classes (or custom (domain, op_type) keys)."""
    return TABLE.lowers(*ops)


def add_lowering(op: Key, handler: Handler, *, replace: bool = False) -> Handler | None:
    """Register `handler` for an onnx op class or a custom `(domain, op_type)`.

    An op that already has a lowering keeps it unless `replace` is set; the
    replaced handler is returned so that it can be put back.
    """
    return TABLE.add(op, handler, replace=replace)


def remove_lowering(op: Key) -> Handler:
    """Unregister the lowering of an onnx op class or a custom `(domain, op_type)`."""
    return TABLE.remove(op)


def lowering_for(op: Operation) -> Handler | None:
    """The handler that lowers `op`, if any."""
    return TABLE.lookup(op)


__all__ = [
    "TABLE",
    "Handler",
    "Results",
    "add_lowering",
    "custom_key",
    "lowering_for",
    "lowers",
    "remove_lowering",
]
