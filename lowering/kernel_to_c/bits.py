"""Reading a scalar's bits as another type of the same width (`arith.bitcast` between a
float and an integer type).

A C cast converts the value; the bits are read through a union instead, which
C99 defines and compilers turn into a register move:

    int32_t v3 = ((union { float from; int32_t to; }){ .from = v2 }).to;

Half floats compute as `float` (see `c_types`), so their bits are those of
their storage type: `_Float16` for f16, the upper 16 bits for bf16.
"""

from __future__ import annotations

from xdsl.dialects.builtin import BFloat16Type, Float16Type
from xdsl.ir import Attribute

from .c_types import CodegenError, narrow_float, storage_type


def reinterpret(src: Attribute, dst: Attribute, value: str) -> str:
    """The C expression of the scalar `value` (of type `src`) read as `dst`."""
    if narrow_float(src) is not None or narrow_float(dst) is not None:
        raise CodegenError(f"no bit reinterpretation of {src} as {dst}")
    if isinstance(src, BFloat16Type):
        value = f"rung_f32_to_bf16({value})"
    elif isinstance(src, Float16Type):
        value = f"(_Float16)({value})"
    bits = (
        f"((union {{ {storage_type(src)} from; {storage_type(dst)} to; }}){{ .from = {value} }}).to"
    )
    if isinstance(dst, BFloat16Type):
        return f"rung_bf16_to_f32({bits})"
    if isinstance(dst, Float16Type):
        return f"(float)({bits})"
    return bits
