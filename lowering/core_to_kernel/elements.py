"""Element types at the kernel level: which ones C can hold, and how each behaves.

The builder (allocations, constants) and the scalar semantics (signed or
unsigned ops, float or integer ops) both ask these questions; they live
here, below both, so that neither has to import the other.
"""

from __future__ import annotations

from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    Signedness,
    TensorType,
)
from xdsl.ir import Attribute

from rung.dialects.onnx.dtypes import NARROW_FLOAT_TYPES
from rung.errors import RungError

FLOATS = (Float16Type, BFloat16Type, Float32Type, Float64Type, *NARROW_FLOAT_TYPES)
"""Float element types; those narrower than 32 bits compute as f32 in C and round back."""
INTEGER_WIDTHS = (1, 2, 4, 8, 16, 32, 64)


class KernelLoweringError(RungError):
    """A core op (or an element type) the kernel level does not handle."""


def is_float(t: Attribute) -> bool:
    return isinstance(t, FLOATS)


def is_unsigned(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and (
        t.signedness.data == Signedness.UNSIGNED or t.width.data == 1
    )


def check_element(t: Attribute) -> None:
    """Refuse element types C code generation has no representation for, clearly."""
    if is_float(t) or isinstance(t, IndexType):
        return
    if isinstance(t, IntegerType) and t.width.data in INTEGER_WIDTHS:
        return
    raise KernelLoweringError(f"element type {t} is not supported at the kernel level")


def memref_of(t: Attribute) -> MemRefType:
    """The buffer type holding a tensor type."""
    if not isinstance(t, TensorType):
        raise KernelLoweringError(f"the kernel level holds only ranked tensors, not {t}")
    check_element(t.element_type)
    return MemRefType(t.element_type, t.get_shape())


__all__ = [
    "FLOATS",
    "INTEGER_WIDTHS",
    "KernelLoweringError",
    "check_element",
    "is_float",
    "is_unsigned",
    "memref_of",
]
