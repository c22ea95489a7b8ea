"""The onnx dialect: one op per ONNX op (ai.onnx and ai.onnx.ml), at its latest version.

The op classes are generated (`generated_ops.py`); syntax, verifiers and
attribute defaults are hand-written in `base.py`, types in `types.py`, the
terminator of graph-attribute regions (`onnx.Yield`) in `regions.py`, and
`onnx.Custom`, the op for nodes of domains the dialect does not model, in
`extras.py`.
"""

from xdsl.ir import Dialect

from .base import Arity, AttrInfo, OnnxOp, OpSchema, Param, attribute_value
from .extras import EXTRA_OPS, CustomOp, YieldOp
from .generated_ops import GENERATED_OPS, ONNX_VERSION, OPSET_VERSIONS
from .types import (
    ONNX_TYPES,
    MapType,
    OptType,
    SeqType,
    SparseTensorAttr,
    StringTensorAttr,
    StringType,
    UnknownType,
)

ONNX = Dialect("onnx", [*GENERATED_OPS, *EXTRA_OPS], list(ONNX_TYPES))

OPS_BY_TYPE: dict[tuple[str, str], type[OnnxOp]] = {
    (op.SCHEMA.domain, op.SCHEMA.op_type): op for op in GENERATED_OPS
}
"""Op classes by ONNX (domain, op_type); the default domain is ''."""

__all__ = [
    "ONNX",
    "ONNX_VERSION",
    "OPSET_VERSIONS",
    "OPS_BY_TYPE",
    "Arity",
    "AttrInfo",
    "CustomOp",
    "MapType",
    "OnnxOp",
    "OpSchema",
    "OptType",
    "Param",
    "SeqType",
    "SparseTensorAttr",
    "StringTensorAttr",
    "StringType",
    "UnknownType",
    "YieldOp",
    "attribute_value",
]
