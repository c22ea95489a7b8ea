"""Constant data as numpy arrays, and numpy arrays as constant attributes.

Folding, the interpreters, kernel lowering and C generation all read the
data of constant attributes (inline `dense`, `dense_resource` blobs, string
tensors), and lowerings make new ones. Both directions live here, beside
the dialects, and `core.ConstantOp` offers them as methods.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute

from rung.errors import RungError

from .dtypes import element_type, numpy_dtype
from .onnx.types import StringTensorAttr
from .resources import resource_bytes, store_of

INLINE_LIMIT = 16
"""Constants of at most this many numbers print inline; larger ones become resource blobs."""


def constant_value(attr: Attribute, module: ModuleOp, *, copy: bool = True) -> np.ndarray:
    """The data of a constant attribute as a fresh numpy array; with `copy=False`, a
    read-only view of the stored bytes where there are some (code generation only reads
    BERT's 400 MB of weights, and copying them took a fifth of a second)."""
    if isinstance(attr, StringTensorAttr):
        shape = tuple(attr.type.get_shape())  # type: ignore[union-attr]
        return np.array([s.data for s in attr.values.data], dtype=object).reshape(shape)
    if isinstance(attr, DenseResourceAttr):
        dtype = numpy_dtype(attr.type.element_type)  # type: ignore[attr-defined]
        shape = tuple(attr.type.get_shape())  # type: ignore[attr-defined]
        stored = np.frombuffer(resource_bytes(attr, module), dtype=dtype).reshape(shape)
        return stored.copy() if copy else stored
    if isinstance(attr, DenseIntOrFPElementsAttr):
        dtype = numpy_dtype(attr.type.element_type)
        shape = tuple(attr.type.get_shape())
        raw = attr.data.data
        count = int(np.prod(shape)) if shape else 1
        flat = np.frombuffer(raw, dtype=dtype)
        if flat.size == 1 and count != 1:
            flat = np.repeat(flat, count)
        flat = flat.reshape(shape)
        return flat.copy() if copy else flat
    raise RungError(f"unsupported constant {attr}")


def constant_attr(
    array: np.ndarray, module: ModuleOp, hint: str = "cst"
) -> DenseIntOrFPElementsAttr | DenseResourceAttr | StringTensorAttr:
    """The value of a constant holding `array`: inline when small and printable, else a
    resource blob of `module` (so that printed IR stays readable and large data is
    written once); strings (an object or str array) are a string-tensor attribute."""
    if array.dtype.kind in "OUS":
        return string_attr(array)
    ttype = TensorType(
        element_type(array.dtype), [DYNAMIC_INDEX if d < 0 else d for d in array.shape]
    )
    data = np.ascontiguousarray(array).tobytes()
    inline = array.size <= INLINE_LIMIT and array.dtype.kind in "biuf"
    if inline and (array.dtype.kind != "f" or np.isfinite(array).all()):
        return DenseIntOrFPElementsAttr(ttype, BytesAttr(data))
    handle = store_of(module).add(hint, data)
    return DenseResourceAttr.from_params(handle, ttype)


def string_attr(array: np.ndarray) -> StringTensorAttr:
    """A string-tensor attribute holding `array`'s strings (`bytes` are UTF-8)."""
    from xdsl.dialects.builtin import ArrayAttr, StringAttr

    from .onnx.types import StringType

    texts = [v.decode() if isinstance(v, bytes) else str(v) for v in array.reshape(-1)]
    return StringTensorAttr(
        ArrayAttr([StringAttr(t) for t in texts]), TensorType(StringType(), array.shape)
    )


__all__ = ["INLINE_LIMIT", "constant_attr", "constant_value", "string_attr"]
