"""core → kernel: bufferization and one small handler per core op, grouped by op family.

`elementwise` (constants, shapes, elementwise ops, broadcast, reshape),
`tensor` (data movement: transpose, slice, concat, pad, gathers, scatters),
`reduce` (reductions, arg-reductions, cumulative ops, sort, nonzero),
`linalg` (matmul, conv, conv_transpose, pooling), `detection`
(non_max_suppression), `control` (if, loop), `sequence` (lists and
optionals), `bits` (bitcast) and `checks` (run-time checks)
register their handlers in `registry.TABLE` (by core op class);
`CoreToKernelPass` applies them and reports what is left.
"""

from . import (  # noqa: F401  (register handlers)
    bits,
    checks,
    control,
    detection,
    elementwise,
    linalg,
    reduce,
    sequence,
    tensor,
)
from .lower_pass import CoreToKernelPass

__all__ = ["CoreToKernelPass"]
