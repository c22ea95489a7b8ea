"""ONNX BitCast → core.bitcast: the same bits under another element type of one width.

%y = core.bitcast(%x) : (tensor<3xf32>) -> tensor<3xi32>
"""

from __future__ import annotations

from xdsl.utils.exceptions import VerifyException

from rung.dialects import core
from rung.dialects.onnx import generated_ops as onnx
from rung.lowering.kit import CoreBuilder, LoweringError, element_of, ranked_shape, tensor

from .registry import Results, lowers


@lowers(onnx.BitCastOp)
def bitcast(b: CoreBuilder, op: onnx.BitCastOp) -> Results:
    x = op.input
    result = tensor(element_of(op.output.type), ranked_shape(x))
    new = core.BitcastOp.create(operands=[x], result_types=[result])
    try:
        new.verify_()
    except VerifyException as err:  # widths differ: the model is wrong, and says so here
        raise LoweringError(f"BitCast: {err}") from None
    return [b.retype(b.insert(new).results[0], op.output.type)]
