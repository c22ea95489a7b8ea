"""`core.check`: the value passes through, or the evaluation fails with the check's message."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import NameLoc

from rung.dialects import core
from rung.errors import EvaluationError

from .interpreter import Args, Scope, Value, evaluates


@evaluates(core.CheckOp)
def check(ev: Scope, op: core.CheckOp, args: Args) -> list[Value]:
    holds = np.asarray(args[1])
    if not np.all(holds):
        loc = op.location
        node = f"node '{loc.desc.data}'" if isinstance(loc, NameLoc) else "an unnamed node"
        raise EvaluationError(f"{node}: {op.message.data}{_got(holds, args)}")
    return [args[0]]


def _got(holds: np.ndarray, args: Args) -> str:
    """`, got V`: the culprit's first element whose condition failed (as the C code says it)."""
    if len(args) < 3:
        return ""
    culprit = np.asarray(args[2])
    value = culprit.flat[0] if culprit.size == 1 else culprit[~holds.astype(bool)].flat[0]
    if np.issubdtype(culprit.dtype, np.integer):
        return f", got {int(value)}"
    return f", got {float(value):g}"
