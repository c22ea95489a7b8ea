"""core.bitcast: the same bytes under another dtype of one width."""

from __future__ import annotations

import numpy as np

from rung.dialects import core

from .interpreter import Args, Scope, Value, evaluates, result_dtype


@evaluates(core.BitcastOp)
def bitcast(ev: Scope, op: core.BitcastOp, args: Args) -> list[Value]:
    """A bool is the byte 0 or 1; a byte read as bool is true when it is not 0."""
    shape = np.shape(args[0])
    x = np.ascontiguousarray(args[0]).reshape(-1)  # a rank-0 array cannot change its dtype
    dtype = result_dtype(op.result)
    if x.dtype == np.bool_:
        x = x.view(np.uint8)
    if dtype == np.bool_:
        return [(x.view(np.uint8) != 0).reshape(shape)]
    return [x.view(dtype).reshape(shape)]
