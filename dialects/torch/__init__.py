"""The torch dialect: one op per ATen (and prims) overload that exported programs hold.

The op classes are generated from torch's own schemas (`generated_ops.py`,
by `tools/gen_torch_dialect.py`); their syntax, verifier and accessors are
hand-written in `base.py`. `extras.py` holds what is not an ATen op: the
program's weights (`torch.constant`) and the arithmetic an FX graph does on
symbolic sizes (`torch.sym.add` ...). Importing this package does not import
torch.
"""

from xdsl.ir import Dialect

from .base import Arg, OpSchema, Ret, SymAttr, TorchOp, attribute_value
from .extras import EXTRA_OPS, ConstantOp, SymBinaryOp, SymUnaryOp
from .generated_ops import GENERATED_OPS, TORCH_VERSION

TORCH = Dialect("torch", [*GENERATED_OPS, *EXTRA_OPS], [SymAttr])

OPS_BY_NAME: dict[str, type[TorchOp]] = {op.SCHEMA.qualified_name: op for op in GENERATED_OPS}
"""Op classes by torch's qualified overload name (`aten::add.Tensor`, `aten::relu`)."""

__all__ = [
    "GENERATED_OPS",
    "OPS_BY_NAME",
    "TORCH",
    "TORCH_VERSION",
    "Arg",
    "ConstantOp",
    "OpSchema",
    "Ret",
    "SymAttr",
    "SymBinaryOp",
    "SymUnaryOp",
    "TorchOp",
    "attribute_value",
]
