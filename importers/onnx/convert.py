"""Translating ONNX protos (types, tensors, attributes) into xDSL types and attributes."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
from onnx import AttributeProto, TensorProto, TypeProto, numpy_helper
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    UnrankedTensorType,
    f32,
    i64,
)
from xdsl.ir import Attribute

from rung.dialects import core
from rung.dialects.onnx import (
    MapType,
    OptType,
    SeqType,
    SparseTensorAttr,
    StringTensorAttr,
    StringType,
    UnknownType,
)
from rung.dialects.onnx.dtypes import MLIR_FROM_ONNX
from rung.errors import RungError

DYNAMIC = DYNAMIC_INDEX
"""How xDSL spells an unknown dimension (`?`)."""

# Constants at most this large print inline as `dense<...>`; larger ones go to
# resources, which keeps the text readable and printing fast.
INLINE_LIMIT = 16

_INLINE_TYPES = (IntegerType, Float16Type, Float32Type, Float64Type)


def element_type(code: int, where: str) -> Attribute:
    try:
        return MLIR_FROM_ONNX[code]
    except KeyError:
        name = TensorProto.DataType.Name(code) if code in TensorProto.DataType.values() else code
        raise RungError(f"{where}: unsupported element type {name}") from None


def tensor_type(elem: Attribute, dims: list[int | None] | None) -> Attribute:
    if dims is None:
        return UnrankedTensorType(elem)
    return core.ranked_tensor(elem, [DYNAMIC if d is None else d for d in dims])


def shape_of(tp: TypeProto.Tensor) -> tuple[list[int | None] | None, list[str]]:
    """Dims of a tensor type (None where unknown) and their symbolic names."""
    if not tp.HasField("shape"):
        return None, []
    dims: list[int | None] = []
    params: list[str] = []
    for d in tp.shape.dim:
        which = d.WhichOneof("value")
        if which == "dim_value" and d.dim_value >= 0:
            dims.append(d.dim_value)
            params.append("")
        else:
            dims.append(None)
            params.append(d.dim_param if which == "dim_param" else "")
    return dims, params


def mlir_type(tp: TypeProto | None, where: str) -> Attribute:
    """The MLIR type of an ONNX value type; `!onnx.unknown` when nothing is known."""
    if tp is None:
        return UnknownType()
    which = tp.WhichOneof("value")
    if which == "tensor_type":
        if tp.tensor_type.elem_type == TensorProto.UNDEFINED:
            return UnknownType()
        dims, _ = shape_of(tp.tensor_type)
        return tensor_type(element_type(tp.tensor_type.elem_type, where), dims)
    if which == "sequence_type":
        if not tp.sequence_type.HasField("elem_type"):
            return UnknownType()
        return SeqType(mlir_type(tp.sequence_type.elem_type, where))
    if which == "optional_type":
        if not tp.optional_type.HasField("elem_type"):
            return UnknownType()
        return OptType(mlir_type(tp.optional_type.elem_type, where))
    if which == "map_type":
        key = element_type(tp.map_type.key_type, where)
        value_tp = tp.map_type.value_type
        value: Attribute
        # ONNX spells a map's scalar values as tensors without a shape or of rank 0.
        if value_tp.WhichOneof("value") == "tensor_type" and (
            not value_tp.tensor_type.HasField("shape") or not value_tp.tensor_type.shape.dim
        ):
            value = element_type(value_tp.tensor_type.elem_type, where)
        else:
            value = mlir_type(value_tp, where)
        return MapType(key, value)
    if which == "sparse_tensor_type":
        raise RungError(f"{where}: sparse tensor values are not supported")
    return UnknownType()


_INVENTED_DIM = re.compile(r"unk__\d+")


def dim_params(tp: TypeProto | None) -> list[str]:
    """Symbolic dim names of a tensor-typed value, '' where a dim has none.

    Names that ONNX shape inference invents for unknown dims (`unk__0`) are
    not the model's, so they are left out.
    """
    if tp is None or tp.WhichOneof("value") != "tensor_type":
        return []
    return ["" if _INVENTED_DIM.fullmatch(p) else p for p in shape_of(tp.tensor_type)[1]]


BlobSink = Callable[[str, bytes], str]
"""Stores a blob under a name hint and returns its resource handle."""

ExternalReader = Callable[[TensorProto], bytes]
"""Reads the raw bytes of a tensor whose data lives in an external file."""


def tensor_array(tensor: TensorProto, read_external: ExternalReader) -> np.ndarray:
    """A tensor's data as numpy, external data included (after its path was checked)."""
    if tensor.data_location == TensorProto.EXTERNAL:
        raw = read_external(tensor)
        inline = TensorProto()
        inline.CopyFrom(tensor)
        del inline.external_data[:]
        inline.data_location = TensorProto.DEFAULT
        inline.raw_data = raw
        tensor = inline
    try:
        return numpy_helper.to_array(tensor)
    except (ValueError, TypeError) as err:
        raise RungError(f"tensor '{tensor.name}': cannot read its data: {err}") from None


def tensor_attr(
    tensor: TensorProto, where: str, blobs: BlobSink, read_external: ExternalReader
) -> Attribute:
    """A TENSOR attribute or initializer as a dense, resource or string attribute."""
    elem = element_type(tensor.data_type, where)
    dims = list(tensor.dims)
    ttype = TensorType(elem, dims)
    count = int(np.prod(dims)) if dims else 1
    array = tensor_array(tensor, read_external)
    if array.size != count:
        raise RungError(
            f"{where}: tensor '{tensor.name}' declares shape {dims} ({count} elements) "
            f"but holds {array.size}"
        )
    if isinstance(elem, StringType):
        values = [
            StringAttr(v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v))
            for v in array.reshape(-1)
        ]
        return StringTensorAttr(ArrayAttr(values), ttype)
    data = np.ascontiguousarray(array).tobytes()
    if count <= INLINE_LIMIT and _inlinable(elem, array):
        return DenseIntOrFPElementsAttr(ttype, BytesAttr(data))
    handle = blobs(tensor.name or "cst", data)
    return DenseResourceAttr.from_params(handle, ttype)


def _inlinable(elem: Attribute, array: np.ndarray) -> bool:
    """Whether `dense<...>` text round-trips this data exactly.

    xDSL prints non-finite floats inside `dense<...>` as hex but reads the hex
    back as a number, so such tensors go to resources, as do element types
    its dense attribute cannot hold.
    """
    if isinstance(elem, IntegerType):
        return elem.width.data in (1, 8, 16, 32, 64)
    if isinstance(elem, _INLINE_TYPES):
        return bool(np.isfinite(array).all())
    return False


def attribute(
    attr: AttributeProto, where: str, blobs: BlobSink, read_external: ExternalReader
) -> Attribute:
    """An ONNX attribute (anything but a graph) as the dialect stores it."""
    kind = attr.type
    A = AttributeProto
    if kind == A.INT:
        return IntegerAttr(attr.i, i64)
    if kind == A.FLOAT:
        return FloatAttr(float(np.float32(attr.f)), f32)
    if kind == A.STRING:
        return StringAttr(attr.s.decode("utf-8", "replace"))
    if kind == A.INTS:
        return DenseArrayBase.from_list(i64, list(attr.ints))
    if kind == A.FLOATS:
        return DenseArrayBase.from_list(f32, [float(np.float32(v)) for v in attr.floats])
    if kind == A.STRINGS:
        return ArrayAttr([StringAttr(s.decode("utf-8", "replace")) for s in attr.strings])
    if kind == A.TENSOR:
        return tensor_attr(attr.t, where, blobs, read_external)
    if kind == A.TENSORS:
        return ArrayAttr([tensor_attr(t, where, blobs, read_external) for t in attr.tensors])
    if kind == A.SPARSE_TENSOR:
        sp = attr.sparse_tensor
        return SparseTensorAttr(
            tensor_attr(sp.values, where, blobs, read_external),
            tensor_attr(sp.indices, where, blobs, read_external),
            ArrayAttr([IntAttr(d) for d in sp.dims]),
        )
    if kind == A.TYPE_PROTO:
        return mlir_type(attr.tp, where)
    if kind == A.TYPE_PROTOS:
        return ArrayAttr([mlir_type(t, where) for t in attr.type_protos])
    raise RungError(
        f"{where}: attribute '{attr.name}' has unsupported kind {A.AttributeType.Name(kind)}"
    )
