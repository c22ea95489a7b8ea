"""A first look at a ModelProto, before anything else reads it.

Protobuf decodes a corrupt model into messages that later code cannot use:
text fields that are not UTF-8 come back as `bytes`, element types name no
type, an Einsum equation sends ONNX's shape inference into an endless loop.
`validate_model` walks every message once, reads the fields that carry text,
element types, equations and the amount of tensor data (not the data itself),
and reports the first problem, naming where it is: "node 3's name is not
valid UTF-8".
"""

from __future__ import annotations

import re
from typing import NoReturn

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from onnx import ModelProto, NodeProto, TensorProto, TypeProto

from rung.errors import InvalidModelError

_DATA_TYPES = frozenset(TensorProto.DataType.values())

_TEXT_BYTES = {
    ("onnx.AttributeProto", "s"),
    ("onnx.AttributeProto", "strings"),
    ("onnx.TensorProto", "string_data"),
}
"""`bytes` fields that ONNX defines as UTF-8 text."""

_LABELS = {
    ("onnx.ModelProto", "graph"): "",
    ("onnx.ModelProto", "functions"): "function {i}",
    ("onnx.ModelProto", "opset_import"): "opset import {i}",
    ("onnx.ModelProto", "metadata_props"): "metadata entry {i}",
    ("onnx.ModelProto", "training_info"): "training info {i}",
    ("onnx.GraphProto", "node"): "node {i}",
    ("onnx.GraphProto", "input"): "graph input {i}",
    ("onnx.GraphProto", "output"): "graph output {i}",
    ("onnx.GraphProto", "initializer"): "initializer {i}",
    ("onnx.GraphProto", "sparse_initializer"): "sparse initializer {i}",
    ("onnx.GraphProto", "value_info"): "value_info {i}",
    ("onnx.GraphProto", "metadata_props"): "metadata entry {i}",
    ("onnx.GraphProto", "quantization_annotation"): "quantization annotation {i}",
    ("onnx.GraphProto", "name"): "name",
    ("onnx.NodeProto", "input"): "input {i}",
    ("onnx.NodeProto", "output"): "output {i}",
    ("onnx.NodeProto", "op_type"): "op type",
    ("onnx.FunctionProto", "node"): "node {i}",
    ("onnx.FunctionProto", "input"): "input {i}",
    ("onnx.FunctionProto", "output"): "output {i}",
    ("onnx.FunctionProto", "attribute"): "attribute name {i}",
    ("onnx.FunctionProto", "value_info"): "value_info {i}",
    ("onnx.AttributeProto", "strings"): "string {i}",
    ("onnx.AttributeProto", "tensors"): "tensor {i}",
    ("onnx.AttributeProto", "graphs"): "graph {i}",
    ("onnx.AttributeProto", "t"): "tensor",
    ("onnx.AttributeProto", "g"): "",
    ("onnx.AttributeProto", "s"): "",
    ("onnx.TensorProto", "string_data"): "string {i}",
    ("onnx.TensorProto", "external_data"): "external data entry {i}",
    ("onnx.TensorShapeProto", "dim"): "dim {i}",
    ("onnx.SparseTensorProto", "values"): "values tensor",
    ("onnx.SparseTensorProto", "indices"): "indices tensor",
    ("onnx.TensorShapeProto.Dimension", "dim_param"): "name",
}
"""How a field reads in a message: `{i}` is the index in a repeated field."""

_NAMED = {"node", "input", "output", "initializer", "value_info", "functions"}
"""Repeated fields whose elements are described with their name, when it is valid."""

_TRANSPARENT = {
    ("onnx.ValueInfoProto", "type"),
    ("onnx.TypeProto", "tensor_type"),
    ("onnx.TypeProto", "sparse_tensor_type"),
    ("onnx.TypeProto", "sequence_type"),
    ("onnx.TypeProto", "map_type"),
    ("onnx.TypeProto", "optional_type"),
    ("onnx.TypeProto.Tensor", "shape"),
    ("onnx.TypeProto.SparseTensor", "shape"),
    ("onnx.TypeProto.Sequence", "elem_type"),
    ("onnx.TypeProto.Optional", "elem_type"),
    ("onnx.TypeProto.Map", "value_type"),
}
"""Wrapper messages that add nothing to a place's description."""

_DTYPE_ATTRIBUTES = {
    "Bernoulli": ("dtype",),
    "BitCast": ("to",),
    "BlackmanWindow": ("output_datatype",),
    "Cast": ("to",),
    "DequantizeLinear": ("output_dtype",),
    "EyeLike": ("dtype",),
    "GroupNormalization": ("stash_type",),
    "HammingWindow": ("output_datatype",),
    "HannWindow": ("output_datatype",),
    "LayerNormalization": ("stash_type",),
    "MelWeightMatrix": ("output_datatype",),
    "Multinomial": ("dtype",),
    "QuantizeLinear": ("output_dtype",),
    "RMSNormalization": ("stash_type",),
    "RandomNormal": ("dtype",),
    "RandomNormalLike": ("dtype",),
    "RandomUniform": ("dtype",),
    "RandomUniformLike": ("dtype",),
    "Range": ("stash_type",),
    "SequenceEmpty": ("dtype",),
}
"""INT attributes of standard ops that hold an element type (TensorProto.DataType)."""

_REQUIRED_DTYPE = {("Cast", "to"), ("BitCast", "to")}
"""Element-type attributes for which 0 (UNDEFINED) does not mean "the default"."""

_ITEMSIZE = {
    TensorProto.FLOAT: 4,
    TensorProto.UINT8: 1,
    TensorProto.INT8: 1,
    TensorProto.UINT16: 2,
    TensorProto.INT16: 2,
    TensorProto.INT32: 4,
    TensorProto.INT64: 8,
    TensorProto.BOOL: 1,
    TensorProto.FLOAT16: 2,
    TensorProto.DOUBLE: 8,
    TensorProto.UINT32: 4,
    TensorProto.UINT64: 8,
    TensorProto.COMPLEX64: 8,
    TensorProto.COMPLEX128: 16,
    TensorProto.BFLOAT16: 2,
}
"""Bytes per element in `raw_data`, for the types whose elements are whole bytes."""

_TYPED_FIELD = {
    TensorProto.FLOAT: ("float_data", 1),
    TensorProto.COMPLEX64: ("float_data", 2),
    TensorProto.DOUBLE: ("double_data", 1),
    TensorProto.COMPLEX128: ("double_data", 2),
    TensorProto.INT64: ("int64_data", 1),
    TensorProto.UINT32: ("uint64_data", 1),
    TensorProto.UINT64: ("uint64_data", 1),
    TensorProto.INT32: ("int32_data", 1),
    TensorProto.INT16: ("int32_data", 1),
    TensorProto.INT8: ("int32_data", 1),
    TensorProto.UINT16: ("int32_data", 1),
    TensorProto.UINT8: ("int32_data", 1),
    TensorProto.BOOL: ("int32_data", 1),
    TensorProto.FLOAT16: ("int32_data", 1),
    TensorProto.BFLOAT16: ("int32_data", 1),
    TensorProto.STRING: ("string_data", 1),
}
"""Where a tensor without raw data keeps its values, and how many per element."""

_STANDARD_DOMAINS = ("", "ai.onnx")

_EINSUM_TERM = re.compile(r"[A-Za-z]*(?:\.\.\.)?[A-Za-z]*")


def einsum_syntax_error(equation: str) -> str | None:
    """Why `equation` is not an Einsum equation ONNX defines, or None if it is one.

    The syntax is `term,term,...` optionally followed by `->term`, each term
    letters of a-z and A-Z with at most one `...`; spaces may appear anywhere.
    (Only the syntax: whether terms fit their operands needs their ranks.)
    """
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    if "->" in out:
        return "it has more than one '->'"
    terms = lhs.split(",") + ([out] if arrow else [])
    for term in terms:
        if not _EINSUM_TERM.fullmatch(term):
            bad = next(
                (c for c in term.replace("...", "") if not c.isascii() or not c.isalpha()), ""
            )
            if bad:
                return f"{bad!r} is not a letter (terms are letters a-z, A-Z and one '...')"
            return f"term '{term}' has more than one '...' or a broken one"
    if arrow and len(set(out.replace("...", ""))) != len(out.replace("...", "")):
        return f"output term '{out}' repeats a letter"
    return None


class _Walk:
    """One validation pass over a model; `fail` raises with the model's name."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, message: str) -> NoReturn:
        raise InvalidModelError(f"'{self.source}' is not a valid ONNX model: {message}")

    def message(self, msg: Message, where: str) -> None:
        """Check `msg` (described by `where`) and everything in it."""
        desc = msg.DESCRIPTOR
        kind = desc.full_name
        for field in _fields_of(desc):
            repeated = _is_repeated(field)
            if field.type == FieldDescriptor.TYPE_MESSAGE:
                children = getattr(msg, field.name) if repeated else []
                if not repeated and msg.HasField(field.name):
                    children = [getattr(msg, field.name)]
                for i, child in enumerate(children):
                    index = i if repeated else None
                    self.message(child, self.child_place(kind, field.name, where, index, child))
                continue
            values = getattr(msg, field.name)
            for i, value in enumerate(values if repeated else [values]):
                if isinstance(value, bytes) and not _is_utf8(value):
                    label = _label(kind, field.name, i if repeated else None)
                    self.fail(f"{_inside(kind, where, label, own=True)} is not valid UTF-8")
        self.contents(msg, where)

    def child_place(self, kind: str, field: str, where: str, i: int | None, child: Message) -> str:
        if (kind, field) in _TRANSPARENT:
            return where
        label = _label(kind, field, i)
        name = getattr(child, "name", "") if field in _NAMED or field == "attribute" else ""
        if kind == "onnx.NodeProto" and field == "attribute":
            label = f"attribute '{name}'" if isinstance(name, str) and name else f"attribute {i}"
        elif field in _NAMED and isinstance(name, str) and name:
            label = f"{label} ('{_shorten(name)}')"
        place = _inside(kind, where, label, own=False)
        if child.DESCRIPTOR.full_name == "onnx.GraphProto" and place:
            return f"{place}: "  # the subgraph's contents are described after this prefix
        return place

    def contents(self, msg: Message, where: str) -> None:
        """The checks on values rather than text: element types, equations, opsets."""
        kind = msg.DESCRIPTOR.full_name
        if isinstance(msg, TensorProto):
            if msg.data_type not in _DATA_TYPES or msg.data_type == TensorProto.UNDEFINED:
                self.fail(f"{_inside(kind, where, 'data type')} {_dtype_text(msg.data_type)}")
            for entry in msg.external_data:
                if entry.key == "location" and "\0" in entry.value:
                    place = _inside(kind, where, "external data location")
                    self.fail(f"{place} {entry.value!r} holds a NUL byte; no file is named so")
            self.data_size(msg, where)
        elif isinstance(msg, TypeProto.Tensor | TypeProto.SparseTensor):
            if msg.elem_type not in _DATA_TYPES:
                self.fail(f"{_inside(kind, where, 'element type')} {_dtype_text(msg.elem_type)}")
        elif isinstance(msg, TypeProto.Map):
            if msg.key_type not in _DATA_TYPES or msg.key_type == TensorProto.UNDEFINED:
                self.fail(f"{_inside(kind, where, 'key type')} {_dtype_text(msg.key_type)}")
        elif isinstance(msg, NodeProto):
            self.node(msg, where)
        elif isinstance(msg, ModelProto):
            self.opsets(msg)

    def data_size(self, tensor: TensorProto, where: str) -> None:
        """As much data as the dims say: bytes of `raw_data`, or values of the typed field."""
        if tensor.data_location == TensorProto.EXTERNAL or min(tensor.dims, default=0) < 0:
            return
        count = 1
        for d in tensor.dims:
            count *= d
        kind = TensorProto.DataType.Name(tensor.data_type)
        if tensor.HasField("raw_data"):
            itemsize = _ITEMSIZE.get(tensor.data_type)
            size = len(tensor.raw_data)
            if itemsize is not None and size != count * itemsize:
                self.fail(
                    f"{where}'s raw data is {size} bytes, but {count} elements of {kind} "
                    f"(dims {list(tensor.dims)}) take {count * itemsize}"
                )
            return
        field, per_element = _TYPED_FIELD.get(tensor.data_type, ("", 0))
        if field and len(getattr(tensor, field)) != count * per_element:
            self.fail(
                f"{where} holds {len(getattr(tensor, field))} values in {field}, but "
                f"{count} elements of {kind} (dims {list(tensor.dims)}) take "
                f"{count * per_element}"
            )

    def node(self, node: NodeProto, where: str) -> None:
        if node.domain not in _STANDARD_DOMAINS:
            return
        op_type = node.op_type
        for attr in node.attribute:
            if attr.ref_attr_name:  # a function body's reference to its caller's attribute
                continue
            place = f"{where} ({op_type})'s attribute '{attr.name}'"
            if attr.name in _DTYPE_ATTRIBUTES.get(op_type, ()) and attr.type == attr.INT:
                code = attr.i
                undefined = (
                    code == TensorProto.UNDEFINED and (op_type, attr.name) in _REQUIRED_DTYPE
                )
                if code not in _DATA_TYPES or undefined:
                    self.fail(f"{place} {_dtype_text(code)}")
            if op_type == "Einsum" and attr.name == "equation" and attr.type == attr.STRING:
                equation = attr.s.decode("utf-8")
                problem = einsum_syntax_error(equation)
                if problem is not None:
                    self.fail(f"{place}, '{_shorten(equation)}', is malformed: {problem}")

    def opsets(self, model: ModelProto) -> None:
        """Each domain imported once: two versions of one domain leave the opset ambiguous."""
        seen: dict[str, int] = {}
        for entry in model.opset_import:
            domain = entry.domain or "ai.onnx"
            if domain in seen and seen[domain] != entry.version:
                self.fail(
                    f"the opset of domain '{domain}' is imported twice, as versions "
                    f"{seen[domain]} and {entry.version}"
                )
            seen[domain] = entry.version


def validate_model(model: ModelProto, source: str) -> None:
    """Refuse a model whose text is not UTF-8, whose element types or Einsum
    equations are malformed, or whose opset imports contradict each other."""
    _Walk(source).message(model, "")


_FIELDS: dict[str, list[FieldDescriptor]] = {}


def _fields_of(desc: Descriptor) -> list[FieldDescriptor]:
    """The fields worth reading: messages, text, and `bytes` fields ONNX defines as text."""
    found = _FIELDS.get(desc.full_name)
    if found is None:
        found = [
            f
            for f in desc.fields
            if f.type in (FieldDescriptor.TYPE_MESSAGE, FieldDescriptor.TYPE_STRING)
            or (desc.full_name, f.name) in _TEXT_BYTES
        ]
        _FIELDS[desc.full_name] = found
    return found


def _is_repeated(field: FieldDescriptor) -> bool:
    """Whether `field` is a list (protobuf 5.28 renamed how descriptors say so)."""
    if hasattr(field, "is_repeated"):
        return bool(field.is_repeated)
    return field.label == FieldDescriptor.LABEL_REPEATED  # pragma: no cover - older protobuf


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _label(kind: str, field: str, i: int | None) -> str:
    template = _LABELS.get((kind, field))
    if template is None:
        template = field.replace("_", " ") + (" {i}" if i is not None else "")
    return template.format(i=i)


def _inside(kind: str, where: str, label: str, own: bool = True) -> str:
    """How to name `label` of the message of type `kind` described by `where`.

    The model's own fields are "the model's ..."; a graph's contents follow its
    prefix (empty for the main graph) and its own fields are "the graph's ...";
    an attribute's contents follow "attribute 'x': "; anything else owns its
    fields: "node 3's name".
    """
    if kind == "onnx.ModelProto":
        return f"the model's {label}" if own else label
    if kind == "onnx.GraphProto":
        return f"{where}the graph's {label}" if own else f"{where}{label}"
    if kind == "onnx.AttributeProto":
        return f"{where}: {label}" if label else where
    return f"{where}'s {label}"


def _dtype_text(code: int) -> str:
    if code == TensorProto.UNDEFINED:
        return "is UNDEFINED (0); it must name an element type"
    return f"is {code}, which is no ONNX element type"


def _shorten(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


__all__ = ["einsum_syntax_error", "validate_model"]
