"""A numpy interpreter of the core dialect: the executable specification of each op.

It sits beside the dialects, not in `lowering` or `runtime`, because both
use it: lowering folds constant subgraphs by evaluating core ops
(`CoreInterpreter.eval`), and the runtime's `core` execution level runs
whole modules with it (`evaluate`). So it must be below both on the ladder.

It favours being obviously right over being fast: every op is a few lines of
numpy that restate the semantics in `rung.dialects.core`. Lowerings are
checked against it, and it against ONNX's expected outputs. Each op's
handler is registered by op class (`@evaluates(core.MatmulOp)`) in the module
of its family, as the lowerings are split; an op with no handler raises
`UnsupportedOpError`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from rung.errors import RungError

from . import bits, checks, control, detection, elementwise, linalg, reduce, sequence, tensor
from .interpreter import HANDLERS, CoreInterpreter, Env, Scope, Value, evaluates

_FAMILIES = (bits, checks, control, detection, elementwise, linalg, reduce, sequence, tensor)
"""Imported for their registrations."""


def evaluate(module: ModuleOp, inputs: Sequence[Value]) -> list[Value]:
    """Run the module's (first) function on positional inputs."""
    func = next((op for op in module.body.block.ops if isinstance(op, FuncOp)), None)
    if func is None:
        raise RungError("the module has no function to run")
    return CoreInterpreter(module).run(func, inputs)


__all__ = ["HANDLERS", "CoreInterpreter", "Env", "Scope", "Value", "evaluate", "evaluates"]
