"""Types and shapes as lowerings read them: static dims, `-1` for `?`, and run-time dims.

Handlers decide most things from static shapes. A shape here is a tuple of
ints with -1 for a dynamic (`?`) dim. Where a dim is known only at run time
and must be carried into a new shape, it is a `DimOf`: dim `axis` of an SSA
value, which the builder reads with `core.shape_of` when it builds the shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerAttr, IntegerType, TensorType
from xdsl.ir import Attribute, SSAValue

from rung.dialects import core
from rung.dialects.dtypes import i32, i64

from .errors import LoweringError


def shape_of_type(t: Attribute) -> tuple[int, ...] | None:
    """The static shape of a ranked tensor type, -1 for `?` dims; None if unranked."""
    if isinstance(t, TensorType):
        return tuple(-1 if d == DYNAMIC_INDEX else d for d in t.get_shape())
    return None


def tensor(element: Attribute, shape: Sequence[int]) -> TensorType:
    """A ranked tensor type; -1 in `shape` is a `?` dim."""
    return core.ranked_tensor(element, [DYNAMIC_INDEX if d < 0 else d for d in shape])


def is_static(t: Attribute) -> bool:
    """A ranked tensor type without `?` dims."""
    shape = shape_of_type(t)
    return shape is not None and all(d >= 0 for d in shape)


def ranked_shape(v: SSAValue | Attribute) -> tuple[int, ...]:
    """The shape of a value or type (-1 for `?`); unranked ones are a LoweringError."""
    t = v.type if isinstance(v, SSAValue) else v
    shape = shape_of_type(t)
    if shape is None:
        raise LoweringError("needs a ranked tensor")
    return shape


def element_of(t: Attribute) -> Attribute:
    """The element type of a tensor type; anything else is a LoweringError."""
    element = getattr(t, "element_type", None)
    if element is None:
        raise LoweringError(f"expected a tensor, got {t}")
    return element


def normalize_axis(axis: int, rank: int) -> int:
    """A possibly negative axis as a non-negative one, checked against the rank."""
    if not -rank <= axis < max(rank, 1):
        raise LoweringError(f"axis {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def int_attr(value: int) -> IntegerAttr:
    """An i64 integer property value (axes, flags)."""
    return IntegerAttr(value, i64)


def acc_type(element: Attribute) -> Attribute:
    """Where products are summed: i32 for integers narrower than 32 bits, else the element type."""
    if isinstance(element, IntegerType) and element.width.data < 32:
        return i32
    return element


@dataclass(frozen=True, eq=False)
class DimOf:
    """Dim `axis` of `value`: a size the builder reads at run time when it is dynamic.

    This is how a dynamic dim (a batch) is carried into a new shape:
    `b.reshape_to(x, [DimOf(y, 0), 16])` reshapes `x` to `[y.shape[0], 16]`.
    """

    value: SSAValue
    axis: int

    @property
    def static(self) -> int:
        """The size when the value's type knows it, else -1."""
        return ranked_shape(self.value)[self.axis]


Size = int | DimOf
"""One dim of a shape being built: a number, or a dim of a value."""


def static_size(size: Size) -> int:
    """A Size as a static number (-1 where only the run time knows it)."""
    return size.static if isinstance(size, DimOf) else size


__all__ = [
    "DimOf",
    "Size",
    "acc_type",
    "element_of",
    "int_attr",
    "is_static",
    "normalize_axis",
    "ranked_shape",
    "shape_of_type",
    "static_size",
    "tensor",
]
