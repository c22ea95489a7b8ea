"""`as_strided` → core: a view given by strides, over its input's elements in row-major order.

Values have no strides in rung, so the torch dialect defines `as_strided` on
its operand's elements in row-major order (the importer refuses it on an
input that is not contiguous in torch, where the storage would be another
tensor's). Decompositions emit it mostly as a no-op (a reduction's output
"viewed" with channels-last strides); with static sizes the element each
result position reads is known at compile time: the identity is a reshape,
anything else one gather of the flattened input at constant positions.
"""

from __future__ import annotations

import numpy as np

from rung.dialects.torch import generated_ops as aten
from rung.lowering.kit import CoreBuilder, LoweringError, ranked_shape

from .registry import Results, lowers


@lowers(aten.AtenAsStridedOp)
def as_strided(b: CoreBuilder, op: aten.AtenAsStridedOp) -> Results:
    x = op.self_
    size, stride = op.arg("size"), op.arg("stride")
    offset = op.arg("storage_offset") or 0
    if not all(isinstance(v, int) for v in [*size, *stride, offset]):  # type: ignore[misc]
        raise LoweringError("as_strided with sizes or strides known only at run time")
    shape = ranked_shape(x)
    if any(d < 0 for d in shape):
        raise LoweringError("as_strided of a tensor with run-time dims")
    numel = int(np.prod(shape, dtype=np.int64))
    grid = np.zeros(size, np.int64) + offset  # type: ignore[arg-type]
    for axis, (n, s) in enumerate(zip(size, stride, strict=True)):  # type: ignore[arg-type]
        along = np.arange(n, dtype=np.int64) * s
        grid = grid + along.reshape([-1 if i == axis else 1 for i in range(len(size))])  # type: ignore[arg-type]
    if grid.size and (grid.min() < 0 or grid.max() >= numel):
        raise LoweringError(
            f"as_strided reads positions {grid.min()}..{grid.max()} of a tensor of {numel}"
        )
    if grid.size == numel and np.array_equal(grid.reshape(-1), np.arange(numel)):
        return [b.reshape_to(x, list(size))]  # type: ignore[arg-type]
    flat = b.reshape_to(x, [numel])
    picked = b.gather(flat, b.constant(grid.reshape(-1)), 0)
    return [b.reshape_to(picked, list(size))]  # type: ignore[arg-type]
