"""ONNX → core: one small handler per ONNX op, grouped by op family.

`math` (elementwise, activations, constants), `nn`, `tensor`, `reduce`,
`control`, `sequence`, `quantization` and `ml` each register their handlers in
`registry.HANDLERS`; `OnnxToCorePass` applies them and reports what is left.
"""

from . import (  # noqa: F401  (register handlers)
    control,
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
