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
    UnrankedTensorType,
)
from xdsl.ir import Attribute

from rung.dialects import core, kernel, kernel_values
from rung.dialects.onnx.dtypes import NARROW_FLOAT_TYPES
from rung.dialects.onnx.types import MapType, SeqType, StringType
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
    if is_float(t) or isinstance(t, IndexType | StringType):
        return
    if isinstance(t, IntegerType) and t.width.data in INTEGER_WIDTHS:
        return
    raise KernelLoweringError(f"element type {t} is not supported at the kernel level")


def memref_of(t: Attribute) -> MemRefType:
    """The buffer type holding a tensor type."""
    if not isinstance(t, TensorType):
        raise KernelLoweringError(f"the kernel level holds only ranked tensors, not {t}")
    check_element(t.element_type)
    return kernel.memref_type(t.element_type, t.get_shape())


def kernel_type_of(t: Attribute) -> Attribute:
    """The kernel type holding a core value: a buffer, a `!kernel.list` or a `!kernel.optional`.

    A list keeps only its elements' element type: each element carries its
    own shape at run time.
    """
    if isinstance(t, SeqType) and isinstance(t.element_type, MapType):  # core.zip_map's
        return kernel_values.ListType(t.element_type)
    if isinstance(t, core.ListType):
        inner = t.element_type
        assert isinstance(inner, TensorType | UnrankedTensorType)
        check_element(inner.element_type)
        return kernel_values.ListType(inner.element_type)
    if isinstance(t, core.OptionalType):
        inner = t.element_type
        if isinstance(inner, UnrankedTensorType):
            raise KernelLoweringError(
                f"an optional of an unranked tensor ({t}) has no kernel representation"
            )
        return kernel_values.OptionalType(kernel_type_of(inner))  # type: ignore[arg-type]
    return memref_of(t)


__all__ = [
    "FLOATS",
    "INTEGER_WIDTHS",
    "KernelLoweringError",
    "check_element",
    "is_float",
    "is_unsigned",
    "kernel_type_of",
    "memref_of",
]
