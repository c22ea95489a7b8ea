"""ONNX → core: one small handler per ONNX op, grouped by op family.

`math` (elementwise, activations, constants), `nn`, `linalg`, `tensor`,
`image`, `detection`, `reduce`, `rnn`, `control`, `sequence`, `quantization`
and `ml` each register their handlers in `registry.TABLE` (by op class);
`OnnxToCorePass` applies them and reports what is left. Handlers are written
with `rung.lowering.kit`; plugins add their own with `registry.add_lowering`.
"""

from . import (  # noqa: F401  (register handlers)
    control,
    detection,
    image,
    linalg,
    math,
    ml,
    nn,
    quantization,
    reduce,
    rnn,
    sequence,
    tensor,
)
from .lower_pass import OnnxToCorePass

__all__ = ["OnnxToCorePass"]
