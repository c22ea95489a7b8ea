"""ONNX → core: one small handler per ONNX op, grouped by op family.

`math` (elementwise, activations, constants), `nn`, `linalg`, `det`, `tensor`,
`selection` (Compress, ReverseSequence), `strings` (StringNormalizer),
`bitcast`, `image`, `detection`, `causal_conv` (CausalConvWithState),
`reduce`, `rnn`, `control`, `sequence`, `signal` (DFT, STFT, MelWeightMatrix),
`quantization` and `ml` each register their handlers in `registry.TABLE` (by op class);
`OnnxToCorePass` applies them and reports what is left. Handlers are written
with `rung.lowering.kit`; plugins add their own with `registry.add_lowering`.
"""

from . import (  # noqa: F401  (register handlers)
    bitcast,
    causal_conv,
    control,
    det,
    detection,
    image,
    linalg,
    math,
    ml,
    nn,
    quantization,
    reduce,
    rnn,
    selection,
    sequence,
    signal,
    strings,
    tensor,
)
from .lower_pass import OnnxToCorePass

__all__ = ["OnnxToCorePass"]
