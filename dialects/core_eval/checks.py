"""`core.check`: the value passes through, or the evaluation fails with the check's message."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import NameLoc

from rung.dialects import core
from rung.errors import EvaluationError

from .interpreter import Args, Scope, Value, evaluates


@evaluates(core.CheckOp)
def check(ev: Scope, op: core.CheckOp, args: Args) -> list[Value]:
    if not np.all(np.asarray(args[1])):
        loc = op.location
        node = f"node '{loc.desc.data}'" if isinstance(loc, NameLoc) else "an unnamed node"
        raise EvaluationError(f"{node}: {op.message.data}")
    return [args[0]]
