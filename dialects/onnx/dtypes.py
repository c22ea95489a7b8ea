"""One table of element types: ONNX data type, MLIR type, ONNX type-string name.

The importer, the verifiers and (later) the exporters all translate between
these spellings; keeping them in one table means they cannot drift apart.
"""

from __future__ import annotations

from xdsl.dialects.builtin import (
    BFloat16Type,
    ComplexType,
    Float4E2M1FNType,
    Float6E2M3FNType,
    Float6E3M2FNType,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    Float8E8M0FNUType,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    NoneType,
    Signedness,
    TensorType,
    UnrankedTensorType,
)
from xdsl.ir import Attribute

from .types import MapType, OptType, SeqType, StringType, UnknownType

_U = Signedness.UNSIGNED

# (ONNX TensorProto.DataType value, ONNX type-string name, MLIR element type)
ELEMENT_TYPES: tuple[tuple[int, str, Attribute], ...] = (
    (1, "float", Float32Type()),
    (2, "uint8", IntegerType(8, _U)),
    (3, "int8", IntegerType(8)),
    (4, "uint16", IntegerType(16, _U)),
    (5, "int16", IntegerType(16)),
    (6, "int32", IntegerType(32)),
    (7, "int64", IntegerType(64)),
    (8, "string", StringType()),
    (9, "bool", IntegerType(1)),
    (10, "float16", Float16Type()),
    (11, "double", Float64Type()),
    (12, "uint32", IntegerType(32, _U)),
    (13, "uint64", IntegerType(64, _U)),
    (14, "complex64", ComplexType(Float32Type())),
    (15, "complex128", ComplexType(Float64Type())),
    (16, "bfloat16", BFloat16Type()),
    (17, "float8e4m3fn", Float8E4M3FNType()),
    (18, "float8e4m3fnuz", Float8E4M3FNUZType()),
    (19, "float8e5m2", Float8E5M2Type()),
    (20, "float8e5m2fnuz", Float8E5M2FNUZType()),
    (21, "uint4", IntegerType(4, _U)),
    (22, "int4", IntegerType(4)),
    (23, "float4e2m1", Float4E2M1FNType()),
    (24, "float8e8m0", Float8E8M0FNUType()),
    (25, "uint2", IntegerType(2, _U)),
    (26, "int2", IntegerType(2)),
    (27, "float6e2m3", Float6E2M3FNType()),
    (28, "float6e3m2", Float6E3M2FNType()),
)

NARROW_FLOAT_TYPES: tuple[type[Attribute], ...] = (
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2Type,
    Float8E5M2FNUZType,
    Float8E8M0FNUType,
    Float6E2M3FNType,
    Float6E3M2FNType,
    Float4E2M1FNType,
)
"""The floats narrower than 16 bits (ml_dtypes' small floats, one byte per element)."""

MLIR_FROM_ONNX: dict[int, Attribute] = {code: t for code, _, t in ELEMENT_TYPES}
ONNX_FROM_MLIR: dict[Attribute, int] = {t: code for code, _, t in ELEMENT_TYPES}
NAME_FROM_MLIR: dict[Attribute, str] = {t: name for _, name, t in ELEMENT_TYPES}


def type_string(type: Attribute) -> str | None:
    """The ONNX type string of an MLIR type (`tensor(float)`, `seq(tensor(int64))`).

    Returns None for types that have no ONNX spelling (e.g. `none` or
    `!onnx.unknown`), which verifiers then accept without checking.
    """
    if isinstance(type, TensorType | UnrankedTensorType):
        name = NAME_FROM_MLIR.get(type.element_type)
        return None if name is None else f"tensor({name})"
    if isinstance(type, SeqType):
        inner = type_string(type.element_type)
        return None if inner is None else f"seq({inner})"
    if isinstance(type, OptType):
        inner = type_string(type.element_type)
        return None if inner is None else f"optional({inner})"
    if isinstance(type, MapType):
        key = NAME_FROM_MLIR.get(type.key_type)
        value = NAME_FROM_MLIR.get(type.value_type) or type_string(type.value_type)
        return None if key is None or value is None else f"map({key}, {value})"
    return None


def is_checkable(type: Attribute) -> bool:
    """Whether a verifier can say anything about values of this type."""
    return not isinstance(type, NoneType | UnknownType) and type_string(type) is not None
