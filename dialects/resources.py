"""Blobs behind `dense_resource<...>` attributes, owned by the module that uses them.

xDSL keeps resource blobs in one store per dialect object, global to the
process: parsing two files that use the same handle renames the second and
loses its data, and nothing is ever freed. rung instead gives each module its
own `BlobStore` (held weakly, so it goes away with the module). Printing reads
blobs from there and parsing fills it, so a module's weights travel with it.

Blobs are raw little-endian element data, one element per byte or more (sub-byte
types such as i4 are stored one element per byte).
"""

from __future__ import annotations

import re
import weakref

import numpy as np
from xdsl.dialects.builtin import DenseResourceAttr, ModuleOp
from xdsl.ir import Operation

from rung.errors import RungError

_HANDLE = re.compile(r"[^A-Za-z0-9_.]")


class BlobStore:
    """Named byte blobs of one module, with handles unique within it."""

    def __init__(self) -> None:
        self.blobs: dict[str, bytes] = {}
        self.alignment: dict[str, int] = {}

    def add(self, hint: str, data: bytes, alignment: int = 8) -> str:
        """Store `data` under a fresh handle derived from `hint`; return the handle."""
        base = _HANDLE.sub("_", hint) or "blob"
        if not (base[0].isalpha() or base[0] == "_"):
            base = "r" + base
        handle = base
        counter = 0
        while handle in self.blobs:
            counter += 1
            handle = f"{base}_{counter}"
        self.blobs[handle] = data
        self.alignment[handle] = alignment
        return handle

    def get(self, handle: str) -> bytes:
        try:
            return self.blobs[handle]
        except KeyError:
            raise KeyError(f"no data for resource '{handle}'") from None

    def hex(self, handle: str) -> str:
        """MLIR's blob spelling: 0x, the alignment as a little-endian u32, the bytes."""
        align = self.alignment.get(handle, 8).to_bytes(4, "little")
        return "0x" + align.hex().upper() + self.blobs[handle].hex().upper()

    def set_hex(self, handle: str, text: str) -> None:
        try:
            raw = bytes.fromhex(text[2:]) if text.startswith("0x") else b""
        except ValueError as err:
            raise RungError(f"resource '{handle}' is not a hex blob: {err}") from None
        if len(raw) < 4:
            raise RungError(
                f"resource '{handle}' is too short: a blob starts with 0x and its alignment "
                "as 4 bytes"
            )
        self.alignment[handle] = int.from_bytes(raw[:4], "little")
        self.blobs[handle] = raw[4:]


_STORES: weakref.WeakKeyDictionary[ModuleOp, BlobStore] = weakref.WeakKeyDictionary()


def store_of(module: ModuleOp) -> BlobStore:
    """The blob store of `module`, created on first use."""
    store = _STORES.get(module)
    if store is None:
        store = BlobStore()
        _STORES[module] = store
    return store


def owning_module(op: Operation) -> ModuleOp:
    """The outermost module around `op`, which owns the blobs `op` refers to."""
    top: Operation = op
    while top.parent_op() is not None:
        top = top.parent_op()  # type: ignore[assignment]
    if not isinstance(top, ModuleOp):
        raise ValueError(f"{op.name} is not inside a module, so its resources have no owner")
    return top


def resource_bytes(attr: DenseResourceAttr, module: ModuleOp) -> bytes:
    """The raw bytes of a dense resource attribute of `module`, checked against its type
    (hand-written or truncated MLIR may lack the blob or hold one of another size)."""
    from .dtypes import numpy_dtype

    handle = attr.resource_handle.data
    data = store_of(module).blobs.get(handle)
    if data is None:
        raise RungError(
            f"dense_resource<{handle}> has no data: the module's dialect_resources "
            "section does not hold it"
        )
    try:
        itemsize = numpy_dtype(attr.type.element_type).itemsize  # type: ignore[attr-defined]
    except RungError:
        return data  # an element type without a fixed size: nothing to check
    shape = attr.type.get_shape()  # type: ignore[attr-defined]
    need = int(np.prod(shape, dtype=np.int64)) * itemsize
    if len(data) != need:
        raise RungError(
            f"dense_resource<{handle}> holds {len(data)} bytes, but its type {attr.type} "
            f"needs {need}"
        )
    return data


def resource_array(attr: DenseResourceAttr, module: ModuleOp, dtype: np.dtype) -> np.ndarray:
    """A dense resource attribute as a numpy array of `dtype` and the attribute's shape."""
    shape = tuple(attr.type.get_shape())  # type: ignore[attr-defined]
    return np.frombuffer(resource_bytes(attr, module), dtype=dtype).reshape(shape)
