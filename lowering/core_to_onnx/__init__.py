"""core → ONNX: the core dialect written back as onnx-dialect IR, and from there as ONNX.

A way out of rung for any tool that reads ONNX: the optimised core level
(constants folded, batch norms folded into convolutions) exported as a model
onnxruntime runs with the same results. Handlers are grouped by op family:
`math` (elementwise), `tensor` (constants, shapes, data movement), `nn`
(matmul, convolutions, pooling, NonMaxSuppression), `reduce` (reductions,
running sums, sort) and `control` (if, loop, lists, optionals, ZipMap); each
registers itself in `emitter.TABLE`. `CoreToOnnxPass` applies them;
`core_module_to_model` adds the ModelProto, its initializers and the check.
"""

from . import control, math, nn, reduce, tensor  # noqa: F401  (register handlers)
from .lower_pass import CoreToOnnxPass, convert_core_to_onnx
from .model import core_module_to_model, onnx_module_to_model

__all__ = ["CoreToOnnxPass", "convert_core_to_onnx", "core_module_to_model", "onnx_module_to_model"]
