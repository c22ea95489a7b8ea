"""Element types, spelled once for every level: names, numpy dtypes, saturation bounds.

Importers, lowerings, the interpreters and code generation all translate
between MLIR element types and numpy dtypes. They share this module, which
sits beside the dialects so that every level can import it without
reaching up the ladder. The translation goes through ONNX's own table
(`rung.dialects.onnx.dtypes`), the one list of element types rung knows.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
)
from xdsl.ir import Attribute

from rung.errors import RungError

from .onnx.dtypes import MLIR_FROM_ONNX, ONNX_FROM_MLIR

i1 = IntegerType(1)
i8 = IntegerType(8)
i16 = IntegerType(16)
i32 = IntegerType(32)
i64 = IntegerType(64)
u8 = IntegerType(8, Signedness.UNSIGNED)
u16 = IntegerType(16, Signedness.UNSIGNED)
u32 = IntegerType(32, Signedness.UNSIGNED)
u64 = IntegerType(64, Signedness.UNSIGNED)
f16 = Float16Type()
bf16 = BFloat16Type()
f32 = Float32Type()
f64 = Float64Type()


def numpy_dtype(element: Attribute) -> np.dtype:
    """The numpy dtype of an MLIR element type (ml_dtypes' for the narrow floats)."""
    from onnx import helper

    code = ONNX_FROM_MLIR.get(element)
    if code is None:
        raise RungError(f"no numpy type for element type {element}")
    return np.dtype(helper.tensor_dtype_to_np_dtype(code))


def element_type(dtype: np.dtype | type) -> Attribute:
    """The MLIR element type of a numpy dtype: `element_type(np.float32)` is `f32`."""
    from onnx import helper

    return MLIR_FROM_ONNX[helper.np_dtype_to_tensor_dtype(np.dtype(dtype))]


def saturation_bound(dtype: np.dtype) -> float | None:
    """The largest finite value of an 8/6/4-bit float dtype (what a saturating cast clamps
    to), else None."""
    if not dtype.name.startswith(("float8_", "float6_", "float4_")):  # not float64
        return None
    import ml_dtypes

    return float(ml_dtypes.finfo(dtype).max)


__all__ = [
    "bf16",
    "element_type",
    "f16",
    "f32",
    "f64",
    "i1",
    "i8",
    "i16",
    "i32",
    "i64",
    "numpy_dtype",
    "saturation_bound",
    "u8",
    "u16",
    "u32",
    "u64",
]
