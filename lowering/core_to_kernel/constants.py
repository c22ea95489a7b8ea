"""Reading constant buffers back as numpy, for patterns that specialize on them."""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from rung.dialects import kernel
from rung.dialects.constants import constant_value
from rung.dialects.resources import owning_module


def constant_array(buf: SSAValue) -> np.ndarray | None:
    """The contents of a buffer made by `kernel.constant`, else None."""
    owner = buf.owner
    if not isinstance(owner, kernel.ConstantOp):
        return None
    return constant_value(owner.value, owning_module(owner))
