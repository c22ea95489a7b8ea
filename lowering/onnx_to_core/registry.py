"""The table of ONNX → core lowerings: one small handler per ONNX op.

A handler receives a `CoreBuilder` positioned at the op and the op itself, and
returns the op's replacement values by ONNX output position (None where an
output is absent). It raises `LoweringError` for forms it does not handle;
the op is then left in place and the legality check reports the reason.

    @lowers(onnx.ReluOp)
    def relu(b: CoreBuilder, op: onnx.ReluOp) -> Results:
        return [b.binary("max", op.X, b.splat(0, op.X))]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.ir import Operation, SSAValue

from .builder import CoreBuilder

Results = Sequence[SSAValue | None]
"""What a handler returns: replacement values by ONNX output position."""

Handler = Callable[[CoreBuilder, Operation], Results]

HANDLERS: dict[str, Handler] = {}
"""Handlers by dialect op name (`onnx.Relu`, `onnx.ml.Binarizer`)."""


def lowers(*op_types: str | type[Operation], domain: str = "") -> Callable[[Handler], Handler]:
    """Register a handler for ONNX op classes (strings name ops of `domain`, '' is ai.onnx)."""
    prefix = "onnx.ml." if domain == "ai.onnx.ml" else "onnx."

    def register(handler: Handler) -> Handler:
        for op_type in op_types:
            name = prefix + op_type if isinstance(op_type, str) else op_type.name
            if name in HANDLERS:
                raise ValueError(f"two lowerings for {name}")
            HANDLERS[name] = handler
        return handler

    return register
