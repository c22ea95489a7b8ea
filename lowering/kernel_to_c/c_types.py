"""How kernel element types and scalar constants are spelled in C.

Buffers hold each element type in its storage type (`_Float16`, `uint16_t`
bits for bf16, one byte for 8/6/4-bit floats and 2/4-bit integers); scalars
compute in `scalar_type`, which is `float` for every half or narrower float,
and `rounded` brings a result back to the precision (or width) of its type.
"""

from __future__ import annotations

import math
import re

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    Signedness,
)
from xdsl.ir import Attribute

from rung.dialects.kernel_values import ListType, OptionalType
from rung.dialects.onnx.dtypes import NARROW_FLOAT_TYPES
from rung.dialects.onnx.types import StringType
from rung.errors import RungError


class CodegenError(RungError):
    """The kernel IR has something C code generation does not handle."""


def narrow_float(t: Attribute) -> str | None:
    """The codec name of an 8/6/4-bit float type in the runtime header (its MLIR spelling,
    lower case: `f8e4m3fn`), or None for any other type."""
    return str(t).lower() if isinstance(t, NARROW_FLOAT_TYPES) else None


def sub_byte(t: Attribute) -> int | None:
    """The width of a 2- or 4-bit integer type (held one per byte), else None."""
    if isinstance(t, IntegerType) and 1 < t.width.data < 8:
        return t.width.data
    return None


def storage_type(t: Attribute) -> str:
    """The C type of a buffer element."""
    if isinstance(t, Float32Type):
        return "float"
    if isinstance(t, Float64Type):
        return "double"
    if isinstance(t, Float16Type):
        return "_Float16"
    if isinstance(t, BFloat16Type):
        return "uint16_t"
    if narrow_float(t) is not None:
        return "uint8_t"
    if isinstance(t, IndexType):
        return "int64_t"
    if isinstance(t, StringType):
        return "const char *"  # UTF-8, NUL-terminated (see rung_seq.h)
    if isinstance(t, IntegerType):
        w = t.width.data
        if w == 1:
            return "bool"
        if w < 8:
            w = 8
        if w in (8, 16, 32, 64):
            unsigned = t.signedness.data == Signedness.UNSIGNED
            return f"{'u' if unsigned else ''}int{w}_t"
    raise CodegenError(f"no C type for element type {t}")


def scalar_type(t: Attribute) -> str:
    """The C type of a scalar value (half and narrower floats compute as float); a list or
    an optional is a pointer to its (never written) value, NULL for an empty optional."""
    if is_half(t):
        return "float"
    if isinstance(t, ListType):
        return "const rung_sequence *"
    if isinstance(t, OptionalType):
        return "const rung_tensor *"
    return storage_type(t)


def is_unsigned(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.signedness.data == Signedness.UNSIGNED


def is_half(t: Attribute) -> bool:
    """Whether scalars of `t` compute as float and round back (f16, bf16 and narrower)."""
    return isinstance(t, Float16Type | BFloat16Type) or narrow_float(t) is not None


def is_float(t: Attribute) -> bool:
    return isinstance(t, Float32Type | Float64Type) or is_half(t)


def unsigned_of(t: Attribute) -> str:
    """The unsigned C type of the same width (for wrapping integer arithmetic)."""
    if isinstance(t, IndexType):
        return "uint64_t"
    assert isinstance(t, IntegerType)
    w = t.width.data
    return "bool" if w == 1 else f"uint{max(w, 8)}_t"


def rounded(t: Attribute, expr: str) -> str:
    """Round a float expression to the precision of a half or narrower type; wrap a 2/4-bit
    integer to its width."""
    if isinstance(t, Float16Type):
        return f"rung_round_f16({expr})"
    if isinstance(t, BFloat16Type):
        return f"rung_round_bf16({expr})"
    if (codec := narrow_float(t)) is not None:
        return f"rung_round_{codec}({expr})"
    if (width := sub_byte(t)) is not None:
        assert isinstance(t, IntegerType)
        if t.signedness.data == Signedness.UNSIGNED:
            return f"rung_wrap_unsigned((uint64_t)({expr}), {width})"
        return f"rung_wrap_signed((int64_t)({expr}), {width})"
    return expr


def libm(name: str, t: Attribute) -> str:
    """The libm function for a scalar type: `expf` for float, `exp` for double."""
    return name if isinstance(t, Float64Type) else name + "f"


def float_literal(value: float, t: Attribute) -> str:
    if math.isnan(value):
        return "NAN"
    if math.isinf(value):
        return "INFINITY" if value > 0 else "(-INFINITY)"
    if isinstance(t, Float64Type):
        return repr(float(value))
    text = f"{float(np.float32(value)):.9g}"
    if not re.search(r"[.eE]", text):
        text += ".0"
    return text + "f"


def float_literals(values: np.ndarray, t: Attribute) -> list[str]:
    """`float_literal` of each element of a float array (of `t`'s storage, f32 or f64),
    without its per-element checks: a CNN's inline constants are 100,000s of them."""
    double = isinstance(t, Float64Type)
    out = []
    for v in values.astype(np.float64 if double else np.float32).tolist():
        if not math.isfinite(v):
            out.append(float_literal(v, t))
            continue
        text = repr(v) if double else f"{v:.9g}"
        if "." not in text and "e" not in text:
            text += ".0"
        out.append(text if double else text + "f")
    return out


def int_literal(value: int, t: Attribute) -> str:
    if isinstance(t, IntegerType) and t.width.data == 1:
        return "true" if value else "false"
    if isinstance(t, IntegerType) and t.signedness.data == Signedness.UNSIGNED:
        return f"{value}u" if t.width.data < 64 else f"UINT64_C({value})"
    if isinstance(t, IntegerType) and t.width.data == 64 or isinstance(t, IndexType):
        if value == -(1 << 63):
            return "INT64_MIN"
        return f"INT64_C({value})" if abs(value) >= 1 << 31 else str(value)
    if value == -(1 << 31):
        return "INT32_MIN"
    return str(value)


def c_string_literal(text: str) -> str:
    """`text` as a C string literal of its UTF-8 bytes: printable ASCII as it is, every
    other byte as a three-digit octal escape (which, unlike `\\x`, ends by itself)."""
    out = []
    for byte in text.encode("utf-8"):
        ch = chr(byte)
        if ch in '"\\' or ch == "?":  # `?`: no trigraphs
            out.append("\\" + ch)
        elif 32 <= byte < 127:
            out.append(ch)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def paren(expr: str) -> str:
    """`expr` parenthesized unless it is a single name or number."""
    return expr if re.fullmatch(r"[\w.]+", expr) else f"({expr})"
