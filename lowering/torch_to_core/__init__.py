"""torch → core: one small handler (or rule) per ATen op, grouped by op family.

`sym` (symbolic sizes), `math` (elementwise ops and activations), `nn`
(convolution, pooling, normalization, softmax, resampling, embedding),
`linalg` (matrix products), `reduce` (reductions, arg-reductions, sorting,
cumulative sums), `strided` (`as_strided`) and `tensor` (views, shapes, data movement, creation)
register their handlers in `registry.TABLE`; `TorchToCorePass` applies them
and reports what is left. Handlers are written with `rung.lowering.kit`, as
the ONNX frontend's are, and reach the same core ops, so everything below
core is shared.
"""

from . import linalg, math, nn, reduce, strided, sym, tensor  # noqa: F401  (register handlers)
from .lower_pass import TorchToCorePass

__all__ = ["TorchToCorePass"]
