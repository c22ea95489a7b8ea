"""Mutations of fuzz inputs, each drawn from Hypothesis strategies.

Four families, one per kind of input:
  bytes   bit flips, byte sets, truncation, insertion and deletion, varints,
          splicing two seeds: the protobuf parser and whatever survives it
  model   structure-aware edits of a ModelProto: element types, dims,
          attribute values and types, node inputs and outputs, op types,
          opsets, external data (`../`, absolute paths, NUL bytes), tensor
          data, invalid UTF-8 in names and strings
  mlir    text edits of MLIR: tokens, numbers, types, SSA names, lines
  feeds   edits of the arrays fed to `InferenceSession.run`: dtype, rank,
          shape, values (out-of-range indices, NaN, inf, huge), empty arrays,
          memory layout (Fortran, strided, negative strides, unaligned,
          byte-swapped, read-only), missing, extra and non-array inputs

Every function takes Hypothesis's `data` object and returns the mutated
input with a list of one-line descriptions, which go into reproducers.
Feed edits are plain dicts (`apply_feed_ops` replays them), so a reproducer
stores the seed arrays and the edits, and replay rebuilds the exact layout.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from hypothesis import strategies as st
from onnx import AttributeProto, GraphProto, ModelProto, NodeProto, TensorProto

INTS = [0, 1, -1, 2, 3, 7, 8, 16, 127, 128, -128, 255, 256, 2**15 - 1, 2**16, 2**31 - 1]
INTS += [2**31, -(2**31), 2**32, 2**53, 2**62, 2**63 - 1, -(2**63), 10**9, -(10**9)]
FLOATS = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1e-45, 3.4e38, -3.4e38, 1e300, 1.0, -1.0]
ELEM_TYPES = list(range(1, 45)) + [0, -1, 2**31 - 1, -(2**31)]
"""Hypothesis favours the first items of a list a little: the ordinary ones come first."""

DictOp = dict[str, Any]


def _pick(data: st.DataObject, items: Sequence[Any]) -> Any:
    return data.draw(st.sampled_from(list(items)))


def _index(data: st.DataObject, n: int) -> int:
    return data.draw(st.integers(0, n - 1))


def _chance(data: st.DataObject, p: float) -> bool:
    """True with probability about `p` (Hypothesis's integers lean to their bounds)."""
    return data.draw(st.randoms(use_true_random=False)).random() < p


def _count(data: st.DataObject, most: int) -> int:
    """How many edits: mostly one, since each more makes a clean refusal likelier."""
    return data.draw(st.sampled_from([n for n in (1, 1, 1, 2, 2, 3, 4) if n <= most]))


# ---- bytes --------------------------------------------------------------------------

_VARINTS = [b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", b"\x80\x80\x80\x80\x10", b"\x00", b"\xff"]


def mutate_bytes(
    data: st.DataObject, blob: bytes, other: Callable[[], bytes]
) -> tuple[bytes, list[str]]:
    """A few byte-level edits of `blob`; `other` draws a second seed for splicing."""
    out = bytearray(blob)
    notes: list[str] = []
    for _ in range(_count(data, 4)):
        kind = _pick(
            data, ["flip", "set", "truncate", "insert", "delete", "dup", "varint", "splice"]
        )
        n = len(out)
        if n == 0:
            out += data.draw(st.binary(min_size=1, max_size=16))
            notes.append("bytes: filled an empty input")
            continue
        at = _index(data, n)
        if kind == "flip":
            bit = data.draw(st.integers(0, 7))
            out[at] ^= 1 << bit
            notes.append(f"bytes: flip bit {bit} at {at}")
        elif kind == "set":
            value = _pick(data, [0x00, 0xFF, 0x7F, 0x80, 0x01, 0x0A, 0x12, 0x1A, 0x22])
            out[at] = value
            notes.append(f"bytes: set {at} to 0x{value:02x}")
        elif kind == "truncate":
            del out[at:]
            notes.append(f"bytes: truncate to {at}")
        elif kind == "insert":
            chunk = data.draw(st.binary(min_size=1, max_size=16))
            out[at:at] = chunk
            notes.append(f"bytes: insert {chunk!r} at {at}")
        elif kind == "delete":
            size = data.draw(st.integers(1, 32))
            del out[at : at + size]
            notes.append(f"bytes: delete {size} at {at}")
        elif kind == "dup":
            size = data.draw(st.integers(1, 64))
            out[at:at] = out[at : at + size]
            notes.append(f"bytes: duplicate {size} at {at}")
        elif kind == "varint":
            chunk = _pick(data, _VARINTS)
            out[at : at + len(chunk)] = chunk
            notes.append(f"bytes: varint {chunk!r} at {at}")
        else:
            second = other()
            cut = _index(data, len(second)) if second else 0
            out = out[:at] + second[cut:]
            notes.append(f"bytes: splice at {at} with another seed from {cut}")
    return bytes(out), notes


# ---- models -------------------------------------------------------------------------

UTF8_MARK = "\x1bFZUTF8\x1b"
"""An ASCII stand-in of 8 bytes that `finish_model` swaps for invalid UTF-8 of the same length.

The protobuf API refuses invalid UTF-8 in string fields, but the parser of a
real file must cope with it; swapping bytes of equal length keeps every
length prefix of the serialized message valid.
"""
UTF8_BAD = b"\xc3\x28\xa0\xa1\xe2\x28\xa1\xff"

EXTERNAL_LOCATIONS = [
    "weights.bin",
    "../weights.bin",
    "../../../../../../../../etc/hostname",
    "/etc/hostname",
    "/dev/zero",
    "/nonexistent/w.bin",
    "weights.bin\x00.txt",
    "\x00",
    "",
    ".",
    "sub/../../weights.bin",
    "missing.bin",
    UTF8_MARK,
]
EXTERNAL_NUMBERS = ["0", "1", "4", "-1", "1024", "1025", "999999999999", "abc", "", "0x10", "1e3"]
OP_TYPES = ["Abs", "Add", "Identity", "Loop", "If", "Scan", "Reshape", "Gather", "Slice"]
OP_TYPES += ["Conv", "Einsum", "RNN", "Cast", "Constant", "NotAnOp", "", "Split", "Resize"]
DOMAINS = ["", "ai.onnx", "ai.onnx.ml", "com.microsoft", "ai.onnx.preview.training", "bogus"]
ATTR_NAMES = ["axis", "axes", "perm", "to", "value", "mode", "equation", "kernel_shape", "pads"]
ATTR_NAMES += ["strides", "dilations", "group", "keepdims", "direction", "hidden_size", "alpha"]
ATTR_NAMES += ["batch_dims", "then_branch", "body", "value_float", "value_ints", "layout"]
STRINGS = [b"", b"\xff\xfe", b"\x00", b"a\x00b", b"ab,cd->x", b"...,..->", b"\xc3(", b"x" * 4096]
OPSETS = [0, 1, 5, 6, 7, 9, 10, 11, 12, 13, 17, 18, 21, 22, 23, 24, 25, 99, 2**31, 2**63 - 1, -1]


def graphs_of(model: ModelProto) -> list[GraphProto]:
    """The main graph and every subgraph in attributes, depth first."""
    found: list[GraphProto] = []

    def walk(graph: GraphProto) -> None:
        found.append(graph)
        for node in graph.node:
            for attr in node.attribute:
                if attr.HasField("g"):
                    walk(attr.g)
                for sub in attr.graphs:
                    walk(sub)

    walk(model.graph)
    return found


def _nodes(model: ModelProto) -> list[NodeProto]:
    nodes = [n for g in graphs_of(model) for n in g.node]
    return nodes + [n for f in model.functions for n in f.node]


def _value_names(model: ModelProto) -> list[str]:
    names: set[str] = set()
    for g in graphs_of(model):
        names.update(v.name for v in [*g.input, *g.output, *g.value_info])
        names.update(i.name for i in g.initializer)
        for n in g.node:
            names.update(n.input)
            names.update(n.output)
    return sorted(names)


def _type_protos(model: ModelProto) -> list[onnx.TypeProto]:
    found: list[onnx.TypeProto] = []

    def visit(t: onnx.TypeProto) -> None:
        found.append(t)
        which = t.WhichOneof("value")
        if which == "sequence_type":
            visit(t.sequence_type.elem_type)
        elif which == "optional_type":
            visit(t.optional_type.elem_type)
        elif which == "map_type":
            visit(t.map_type.value_type)

    for g in graphs_of(model):
        for v in [*g.input, *g.output, *g.value_info]:
            visit(v.type)
    return found


def _tensors(model: ModelProto) -> list[TensorProto]:
    out = [t for g in graphs_of(model) for t in g.initializer]
    for node in _nodes(model):
        out += [a.t for a in node.attribute if a.HasField("t")]
    return out


def _edit_elem_type(data: st.DataObject, model: ModelProto) -> str | None:
    value = _pick(data, ELEM_TYPES)
    sites: list[tuple[str, Any]] = []
    for t in _type_protos(model):
        if t.HasField("tensor_type"):
            sites.append(("value type", t.tensor_type))
    for tensor in _tensors(model):
        sites.append((f"tensor '{tensor.name}'", tensor))
    for node in _nodes(model):
        for attr in node.attribute:
            if attr.name == "to" and attr.type == AttributeProto.INT:
                sites.append((f"{node.op_type}.to", attr))
    if not sites:
        return None
    what, target = sites[_index(data, len(sites))]
    field = "i" if isinstance(target, AttributeProto) else "elem_type"
    field = "data_type" if isinstance(target, TensorProto) else field
    setattr(target, field, value)
    return f"model: element type of {what} set to {value}"


def _edit_dims(data: st.DataObject, model: ModelProto) -> str | None:
    shapes = [t.tensor_type for t in _type_protos(model) if t.HasField("tensor_type")]
    tensors = _tensors(model)
    if tensors and (not shapes or data.draw(st.booleans())):
        tensor = tensors[_index(data, len(tensors))]
        dims = list(tensor.dims)
        kind = _pick(data, ["set", "add", "remove"])
        if kind == "set" and dims:
            dims[_index(data, len(dims))] = _pick(data, INTS)
        elif kind == "add":
            dims.insert(_index(data, len(dims) + 1), _pick(data, [0, 1, 2, 3, 2**20]))
        elif dims:
            dims.pop(_index(data, len(dims)))
        try:
            tensor.dims[:] = dims
        except ValueError:
            return None
        return f"model: dims of tensor '{tensor.name}' set to {dims}"
    if not shapes:
        return None
    tensor_type = shapes[_index(data, len(shapes))]
    shape = tensor_type.shape
    kind = _pick(data, ["value", "param", "clear", "add", "remove"])
    if kind == "clear":
        tensor_type.ClearField("shape")
        return "model: a value's shape cleared"
    if kind == "add" or not shape.dim:
        shape.dim.add().dim_value = _pick(data, [0, 1, 2, 5])
        return "model: a dim added to a value's shape"
    dim = shape.dim[_index(data, len(shape.dim))]
    if kind == "remove":
        shape.dim.remove(dim)
        return "model: a dim removed from a value's shape"
    if kind == "param":
        dim.dim_param = _pick(data, ["", "N", "batch", "?", "-1", UTF8_MARK])
        return f"model: a dim made symbolic {dim.dim_param!r}"
    dim.dim_value = _pick(data, INTS)
    return f"model: a dim set to {dim.dim_value}"


def _draw_attr_value(data: st.DataObject, attr: AttributeProto) -> str:
    kind = attr.type
    if kind == AttributeProto.INT:
        attr.i = _pick(data, INTS)
        return f"= {attr.i}"
    if kind == AttributeProto.FLOAT:
        attr.f = _pick(data, FLOATS)
        return f"= {attr.f}"
    if kind == AttributeProto.STRING:
        attr.s = _pick(data, [*STRINGS, attr.s + b"\xff", attr.s[::-1], attr.s[:-1]])
        return f"= {attr.s[:40]!r}"
    if kind == AttributeProto.INTS:
        values = list(attr.ints)
        op = _pick(data, ["set", "append", "drop", "clear"])
        if op == "set" and values:
            values[_index(data, len(values))] = _pick(data, INTS)
        elif op == "append" or not values:
            values.append(_pick(data, INTS))
        elif op == "drop":
            values.pop()
        else:
            values = []
        attr.ints[:] = values
        return f"= {values}"
    if kind == AttributeProto.FLOATS:
        attr.floats.append(_pick(data, FLOATS))
        return "= floats with one more"
    if kind == AttributeProto.TENSOR:
        attr.t.dims.append(_pick(data, [0, 2, 3]))
        return "tensor with one more dim"
    if kind == AttributeProto.GRAPH and attr.g.node:
        attr.g.node.pop(_index(data, len(attr.g.node)))
        return "subgraph with one node fewer"
    if kind == AttributeProto.STRINGS:
        attr.strings.append(_pick(data, STRINGS))
        return "strings with one more"
    attr.type = AttributeProto.INT
    attr.i = _pick(data, INTS)
    return f"made INT {attr.i}"


def _edit_attribute(data: st.DataObject, model: ModelProto) -> str | None:
    nodes = _nodes(model)
    if not nodes:
        return None
    node = nodes[_index(data, len(nodes))]
    kind = _pick(data, ["value", "value", "type", "add", "remove", "rename", "duplicate"])
    if kind == "add" or not node.attribute:
        attr = node.attribute.add()
        attr.name = _pick(data, ATTR_NAMES)
        attr.type = _pick(data, [1, 2, 3, 4, 5, 6, 7, 8])
        return f"model: {node.op_type} gets attribute {attr.name} {_draw_attr_value(data, attr)}"
    attr = node.attribute[_index(data, len(node.attribute))]
    if kind == "value":
        return f"model: {node.op_type}.{attr.name} {_draw_attr_value(data, attr)}"
    if kind == "type":
        new = _pick(data, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14])
        old = attr.type
        try:
            attr.type = new
        except ValueError:
            return None
        return f"model: {node.op_type}.{attr.name} type {old} -> {new}, value kept"
    if kind == "remove":
        node.attribute.remove(attr)
        return f"model: {node.op_type}.{attr.name} removed"
    if kind == "rename":
        attr.name = _pick(data, [*ATTR_NAMES, "", UTF8_MARK])
        return f"model: {node.op_type} attribute renamed {attr.name!r}"
    node.attribute.add().CopyFrom(attr)
    return f"model: {node.op_type}.{attr.name} given twice"


def _edit_node_io(data: st.DataObject, model: ModelProto) -> str | None:
    nodes = _nodes(model)
    if not nodes:
        return None
    node = nodes[_index(data, len(nodes))]
    names = [*_value_names(model), "", "missing_value", UTF8_MARK, *node.output]
    name = _pick(data, names)
    kind = _pick(data, ["input", "input", "add_input", "drop_input", "output", "add_output"])
    if kind == "input" and node.input:
        at = _index(data, len(node.input))
        node.input[at] = name
        return f"model: {node.op_type} input {at} -> {name!r}"
    if kind == "drop_input" and node.input:
        node.input.pop()
        return f"model: {node.op_type} loses its last input"
    if kind == "output" and node.output:
        at = _index(data, len(node.output))
        node.output[at] = name
        return f"model: {node.op_type} output {at} -> {name!r}"
    if kind == "add_output":
        node.output.append(name)
        return f"model: {node.op_type} gets output {name!r}"
    node.input.append(name)
    return f"model: {node.op_type} gets input {name!r}"


def _edit_op(data: st.DataObject, model: ModelProto) -> str | None:
    nodes = _nodes(model)
    if not nodes:
        return None
    node = nodes[_index(data, len(nodes))]
    if data.draw(st.booleans()):
        old, node.op_type = node.op_type, _pick(data, [*OP_TYPES, *(n.op_type for n in nodes)])
        return f"model: op {old} -> {node.op_type!r}"
    node.domain = _pick(data, DOMAINS)
    return f"model: {node.op_type} domain -> {node.domain!r}"


def _edit_opset(data: st.DataObject, model: ModelProto) -> str | None:
    kind = _pick(data, ["version", "version", "clear", "duplicate", "domain", "ir"])
    if kind == "ir":
        model.ir_version = _pick(data, [0, 1, 2, 3, 4, 7, 8, 10, 11, 99, -1, 2**62])
        return f"model: ir_version {model.ir_version}"
    if kind == "clear":
        del model.opset_import[:]
        return "model: no opset_import"
    if not model.opset_import:
        model.opset_import.add().version = 13
    entry = model.opset_import[_index(data, len(model.opset_import))]
    if kind == "duplicate":
        extra = model.opset_import.add()
        extra.CopyFrom(entry)
        extra.version = _pick(data, OPSETS)
        return f"model: domain {entry.domain!r} imported twice"
    if kind == "domain":
        entry.domain = _pick(data, DOMAINS)
        return f"model: opset domain -> {entry.domain!r}"
    entry.version = _pick(data, OPSETS)
    return f"model: opset {entry.domain!r} version {entry.version}"


def _edit_external(data: st.DataObject, model: ModelProto) -> str | None:
    tensors = [t for g in graphs_of(model) for t in g.initializer]
    if not tensors or _chance(data, 0.25):
        tensor = model.graph.initializer.add()
        tensor.name = _pick(data, [*(i.name for i in model.graph.input), "extra_weight"])
        tensor.data_type = TensorProto.FLOAT
        tensor.dims[:] = _pick(data, [[4], [2, 3], [], [0], [256]])
    else:
        tensor = tensors[_index(data, len(tensors))]
    for name in ("raw_data", "float_data", "int32_data", "int64_data", "double_data"):
        tensor.ClearField(name)
    tensor.data_location = TensorProto.EXTERNAL
    del tensor.external_data[:]
    location = _pick(data, EXTERNAL_LOCATIONS)
    entries = {"location": location}
    for key in ("offset", "length"):
        if data.draw(st.booleans()):
            entries[key] = _pick(data, EXTERNAL_NUMBERS)
    if _chance(data, 0.15):
        entries.pop("location")
    if _chance(data, 0.15):
        entries[_pick(data, ["checksum", "basepath", "", "location"])] = "x"
    for key, value in entries.items():
        item = tensor.external_data.add()
        item.key, item.value = key, value
    if _chance(data, 0.15):
        tensor.data_location = _pick(data, [0, 1])
        tensor.raw_data = b"\x00" * 4
    return f"model: tensor '{tensor.name}' external data {entries!r}"


def _edit_tensor_data(data: st.DataObject, model: ModelProto) -> str | None:
    tensors = _tensors(model)
    if not tensors:
        return None
    tensor = tensors[_index(data, len(tensors))]
    kind = _pick(data, ["truncate", "extend", "typed", "strings", "segment", "clear"])
    if kind == "truncate" and tensor.raw_data:
        tensor.raw_data = tensor.raw_data[: _index(data, len(tensor.raw_data))]
    elif kind == "extend":
        tensor.raw_data = tensor.raw_data + b"\x01\x02\x03"
    elif kind == "typed":
        tensor.ClearField("raw_data")
        tensor.int64_data[:] = [_pick(data, INTS) for _ in range(_count(data, 5))]
    elif kind == "strings":
        tensor.string_data[:] = [_pick(data, STRINGS)]
    elif kind == "segment":
        tensor.segment.begin, tensor.segment.end = _pick(data, [(0, 1), (5, 2), (-1, 2**40)])
    else:
        for name in ("raw_data", "float_data", "int32_data", "int64_data", "string_data"):
            tensor.ClearField(name)
    return f"model: data of tensor '{tensor.name}' {kind}"


def _edit_graph(data: st.DataObject, model: ModelProto) -> str | None:
    graphs = graphs_of(model)
    graph = graphs[_index(data, len(graphs))]
    kind = _pick(data, ["drop_node", "dup_node", "swap", "drop_input", "drop_output", "add_output"])
    kind = data.draw(st.sampled_from([kind, "drop_init", "dup_init", "input_untyped", "utf8_name"]))
    seq: Any = {
        "drop_node": graph.node,
        "dup_node": graph.node,
        "swap": graph.node,
        "drop_input": graph.input,
        "drop_output": graph.output,
        "drop_init": graph.initializer,
        "dup_init": graph.initializer,
    }.get(kind)
    if seq is not None and not len(seq):
        return None
    if kind in ("drop_node", "drop_input", "drop_output", "drop_init"):
        seq.pop(_index(data, len(seq)))
    elif kind in ("dup_node", "dup_init"):
        seq.add().CopyFrom(seq[_index(data, len(seq))])
    elif kind == "swap":
        i, j = _index(data, len(seq)), _index(data, len(seq))
        a, b = NodeProto(), NodeProto()
        a.CopyFrom(seq[i])
        b.CopyFrom(seq[j])
        seq[i].CopyFrom(b)
        seq[j].CopyFrom(a)
    elif kind == "add_output":
        graph.output.add().name = _pick(data, [*_value_names(model), "missing_value", ""])
    elif kind == "input_untyped":
        graph.input.add().name = _pick(data, [*_value_names(model), "new_input"])
    else:
        names = _value_names(model)
        if not names:
            return None
        old = _pick(data, names)
        _rename(model, old, UTF8_MARK)
        return f"model: value {old!r} renamed to invalid UTF-8"
    return f"model: graph {graph.name!r} {kind}"


def _rename(model: ModelProto, old: str, new: str) -> None:
    for g in graphs_of(model):
        for v in [*g.input, *g.output, *g.value_info, *g.initializer]:
            if v.name == old:
                v.name = new
        for n in g.node:
            n.input[:] = [new if x == old else x for x in n.input]
            n.output[:] = [new if x == old else x for x in n.output]


MODEL_EDITS: dict[str, Callable[[st.DataObject, ModelProto], str | None]] = {
    "elem_type": _edit_elem_type,
    "dims": _edit_dims,
    "attribute": _edit_attribute,
    "node_io": _edit_node_io,
    "op": _edit_op,
    "opset": _edit_opset,
    "external": _edit_external,
    "tensor_data": _edit_tensor_data,
    "graph": _edit_graph,
}


def mutate_model(data: st.DataObject, model: ModelProto) -> list[str]:
    """A few structure-aware edits of `model`, in place."""
    notes: list[str] = []
    for _ in range(_count(data, 3)):
        edit = _pick(data, list(MODEL_EDITS))
        try:
            note = MODEL_EDITS[edit](data, model)
        except (ValueError, TypeError, IndexError) as err:  # the protobuf API refused the value
            note = f"model: {edit} edit refused by protobuf ({type(err).__name__})"
        if note:
            notes.append(note)
    return notes


def finish_model(model: ModelProto) -> bytes:
    """Serialize, turning each UTF-8 stand-in into invalid UTF-8 of the same length."""
    return model.SerializeToString().replace(UTF8_MARK.encode(), UTF8_BAD)


# ---- MLIR text ----------------------------------------------------------------------

MLIR_TOKENS = ["%0", "%arg0", "%undefined", "}", "{", "(", ")", "<", ">", ":", ",", "x", "?x"]
MLIR_TOKENS += ["tensor<", "memref<", "tensor<*xf32>", "tensor<?x?xf32>", "dense<", "dense<>"]
MLIR_TOKENS += ["dense_resource<blob>", '"0x', '"0x0400000', "{-#", "#-}", "dialect_resources"]
MLIR_TOKENS += ["-1", "0", "9223372036854775807", "-9223372036854775808", "18446744073709551616"]
MLIR_TOKENS += ["1e309", "nan", "0x7FC00000", "f16", "bf16", "f8E4M3FN", "i0", "i4", "ui8", "si64"]
MLIR_TOKENS += ["index", "complex<f32>", "!onnx.seq<", "onnx.", "core.", "kernel.", "func.func"]
MLIR_TOKENS += ["func.return", "loc(", "#loc", "^bb0:", '"', "\\", "\x00", "\ufffd", "array<i64: "]
MLIR_TOKENS += ["affine_map<", "@", "->", "=", "attributes {", "unit", "0x", "//", "/*", "\n"]
_NUMBER = re.compile(r"(?<![%\w])-?\d+(?:\.\d+(?:e[+-]?\d+)?)?")
_TYPE = re.compile(r"\b(?:f16|bf16|f32|f64|i1|i8|i16|i32|i64|ui8|index)\b")
_TYPES = ["f16", "bf16", "f32", "f64", "i1", "i8", "i16", "i32", "i64", "ui8", "index", "i0", "f80"]
_SSA = re.compile(r"%[\w.$-]+")
_OP = re.compile(r"\b(?:onnx|core|kernel|arith|func)\.[A-Za-z_]+\b")


def _replace_match(data: st.DataObject, text: str, pattern: re.Pattern[str], new: str) -> str:
    found = list(pattern.finditer(text))
    if not found:
        return text
    m = found[_index(data, len(found))]
    return text[: m.start()] + new + text[m.end() :]


def mutate_mlir(
    data: st.DataObject, text: str, other: Callable[[], str]
) -> tuple[bytes, list[str]]:
    """A few edits of MLIR text; the result is bytes (it may hold invalid UTF-8)."""
    notes: list[str] = []
    tail = b""
    for _ in range(_count(data, 3)):
        kind = _pick(
            data,
            [
                "token",
                "delete",
                "number",
                "type",
                "ssa",
                "op",
                "line",
                "splice",
                "truncate",
                "utf8",
            ],
        )
        n = max(len(text), 1)
        at = _index(data, n)
        if kind == "token":
            token = _pick(data, MLIR_TOKENS)
            text = text[:at] + token + text[at:]
            notes.append(f"mlir: insert {token!r} at {at}")
        elif kind == "delete":
            size = data.draw(st.integers(1, 24))
            text = text[:at] + text[at + size :]
            notes.append(f"mlir: delete {size} at {at}")
        elif kind == "number":
            value = str(_pick(data, [*INTS, "1.5", "nan", "inf", "-0.0", "1e400"]))
            text = _replace_match(data, text, _NUMBER, value)
            notes.append(f"mlir: a number -> {value}")
        elif kind == "type":
            value = _pick(data, _TYPES)
            text = _replace_match(data, text, _TYPE, value)
            notes.append(f"mlir: a type -> {value}")
        elif kind == "ssa":
            names = sorted(set(_SSA.findall(text))) or ["%0"]
            value = _pick(data, [*names, "%nope", "%0#5"])
            text = _replace_match(data, text, _SSA, value)
            notes.append(f"mlir: an SSA name -> {value}")
        elif kind == "op":
            ops = sorted(set(_OP.findall(text))) or ["core.constant"]
            value = _pick(data, [*ops, "core.nope", "kernel.loop", "onnx.If"])
            text = _replace_match(data, text, _OP, value)
            notes.append(f"mlir: an op -> {value}")
        elif kind == "line":
            lines = text.splitlines(keepends=True) or [""]
            i, j = _index(data, len(lines)), _index(data, len(lines))
            how = _pick(data, ["drop", "dup", "swap"])
            if how == "drop":
                lines.pop(i)
            elif how == "dup":
                lines.insert(j, lines[i])
            else:
                lines[i], lines[j] = lines[j], lines[i]
            text = "".join(lines)
            notes.append(f"mlir: line {how} {i} {j}")
        elif kind == "splice":
            second = other()
            cut = _index(data, max(len(second), 1))
            text = text[:at] + second[cut:]
            notes.append(f"mlir: splice at {at} with another seed from {cut}")
        elif kind == "truncate":
            text = text[:at]
            notes.append(f"mlir: truncate to {at}")
        else:
            tail = _pick(data, [b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x00"])
            notes.append(f"mlir: invalid UTF-8 {tail!r} at {at}")
            encoded = text.encode("utf-8", errors="surrogatepass")
            return encoded[:at] + tail + encoded[at:], notes
    return text.encode("utf-8", errors="surrogatepass"), notes


# ---- feeds --------------------------------------------------------------------------

FEED_DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8"]
FEED_DTYPES += ["uint16", "uint32", "uint64", "bool", "complex64", "<U3", "object", ">f4", ">i8"]
FEED_VALUES = ["nan", "inf", "-inf", "1e38", "-1e38", "1e300", "max", "min", "-1", "0", "dim"]
FEED_VALUES += ["2**31", "2**63-1", "-2**63", "-dim-1", "big"]
FEED_LAYOUTS = ["fortran", "strided", "reversed", "unaligned", "byteswap", "readonly", "scalar0d"]
FEED_GROUPS = {
    "content": ["values", "layout"],
    "shape": ["shape", "empty", "rank"],
    "interface": ["dtype", "drop", "extra", "kind", "container"],
}
"""Edits by what they keep: content edits keep dtype and shape, so they reach the model's
code; shape edits pass the input checks of models with symbolic dims only."""
FEED_KINDS = ["none", "list", "int", "float", "str", "bytes", "dict", "tuple", "0d", "nested"]


def mutate_feeds(data: st.DataObject, feeds: Mapping[str, np.ndarray]) -> list[DictOp]:
    """A few edits of the feeds, as replayable dicts (see `apply_feed_ops`)."""
    names = list(feeds)
    ops: list[DictOp] = []
    for _ in range(_count(data, 3)):
        group = _pick(data, ["content", "content", "shape", "interface"])
        kind = _pick(data, FEED_GROUPS[group])
        name = _pick(data, names)
        seed = data.draw(st.integers(0, 2**16))
        op: DictOp = {"op": kind, "name": name, "seed": seed}
        if kind == "dtype":
            op["dtype"] = _pick(data, FEED_DTYPES)
        elif kind == "rank":
            op["delta"] = _pick(data, [-3, -2, -1, 1, 2])
        elif kind == "shape":
            rank = feeds[name].ndim if _chance(data, 0.7) else data.draw(st.integers(0, 5))
            op["dims"] = [data.draw(st.integers(0, 9)) for _ in range(rank)]
        elif kind == "values":
            op["value"] = _pick(data, FEED_VALUES)
            op["where"] = _pick(data, ["one", "all", "half"])
        elif kind == "empty":
            op["axis"] = data.draw(st.integers(0, 4))
        elif kind == "layout":
            op["layout"] = _pick(data, FEED_LAYOUTS)
        elif kind == "extra":
            op["name"] = _pick(data, ["extra", "", UTF8_MARK, "x" * 300, name + "_"])
        elif kind == "kind":
            op["kind"] = _pick(data, FEED_KINDS)
        elif kind == "container":
            op["kind"] = _pick(data, ["list", "tuple", "none", "int_keys", "ndarray"])
        ops.append(op)
    return ops


def _numeric(value: str, array: np.ndarray) -> Any:
    dim = array.shape[0] if array.ndim else 1
    table: dict[str, Any] = {
        "nan": math.nan,
        "inf": math.inf,
        "-inf": -math.inf,
        "1e38": 1e38,
        "-1e38": -1e38,
        "1e300": 1e300,
        "-1": -1,
        "0": 0,
        "dim": dim,
        "-dim-1": -dim - 1,
        "2**31": 2**31,
        "2**63-1": 2**63 - 1,
        "-2**63": -(2**63),
        "big": 10**6,
    }
    if value in ("max", "min"):
        if array.dtype.kind == "b":
            return value == "max"
        info = np.finfo(array.dtype) if array.dtype.kind in "fc" else np.iinfo(array.dtype)
        return info.max if value == "max" else info.min
    return table[value]


def _set_values(array: np.ndarray, op: DictOp) -> np.ndarray:
    if array.dtype.kind not in "biuf" or array.size == 0:
        return array
    out = array.copy()
    value = _numeric(op["value"], array)
    if out.dtype.kind in "iub":
        if isinstance(value, float) and not math.isfinite(value):
            return out
        info = np.iinfo(out.dtype) if out.dtype.kind != "b" else None
        value = int(value)
        if info is not None:
            value = min(max(value, int(info.min)), int(info.max))
    rng = np.random.default_rng(op["seed"])
    flat = out.reshape(-1)
    if op["where"] == "all":
        flat[:] = value
    elif op["where"] == "half":
        flat[rng.random(flat.size) < 0.5] = value
    else:
        flat[rng.integers(flat.size)] = value
    return out


def _random_like(dtype: np.dtype, dims: Sequence[int], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype.kind == "b":
        return rng.random(dims) < 0.5
    if dtype.kind in "iu":
        return rng.integers(-3 if dtype.kind == "i" else 0, 6, size=dims).astype(dtype)
    return rng.standard_normal(dims).astype(dtype)


def _change_rank(array: np.ndarray, delta: int) -> np.ndarray:
    if delta > 0:
        return array.reshape(array.shape + (1,) * delta)
    keep = max(array.ndim + delta, 0)
    if keep == 0:
        return array.reshape(-1)[:1].reshape(()) if array.size else np.zeros((), array.dtype)
    rest = int(np.prod(array.shape[keep - 1 :]))
    return array.reshape(array.shape[: keep - 1] + (rest,))


def _layout(array: np.ndarray, layout: str) -> np.ndarray:
    if layout == "fortran":
        return np.asfortranarray(array)
    if layout == "strided":
        wide = np.repeat(array[..., None], 2, axis=-1) if array.ndim else array
        return wide[..., 0] if array.ndim else array
    if layout == "reversed":
        return np.flip(np.flip(array).copy()) if array.ndim else array
    if layout == "unaligned":
        raw = np.zeros(array.nbytes + 1, np.uint8)[1:]
        out = raw.view(array.dtype).reshape(array.shape) if array.nbytes else array.copy()
        out[...] = array
        return out
    if layout == "byteswap":
        return array.astype(array.dtype.newbyteorder())
    if layout == "readonly":
        out = array.copy()
        out.setflags(write=False)
        return out
    return array.reshape(-1)[0] if array.size else array


def _other_kind(array: np.ndarray, kind: str) -> object:
    table: dict[str, Callable[[], object]] = {
        "none": lambda: None,
        "list": array.tolist,
        "int": lambda: 3,
        "float": lambda: 2.5,
        "str": lambda: "text",
        "bytes": lambda: b"\x00\x01",
        "dict": lambda: {"x": array},
        "tuple": lambda: tuple(array.reshape(-1).tolist()),
        "0d": lambda: np.array(array.reshape(-1)[0] if array.size else 0),
        "nested": lambda: [array, array],
    }
    return table[kind]()


def apply_feed_ops(base: Mapping[str, np.ndarray], ops: Sequence[DictOp]) -> object:
    """The feeds after `ops`: a dict, usually, unless a `container` op made it something else."""
    feeds: dict[str, Any] = {k: np.array(v) for k, v in base.items()}
    container: str | None = None
    for op in ops:
        kind, name = op["op"], op["name"]
        current = feeds.get(name)
        array = current if isinstance(current, np.ndarray) else None
        if kind == "drop":
            feeds.pop(name, None)
        elif kind == "extra":
            feeds[name] = _random_like(np.dtype("float32"), [2, 3], op["seed"])
        elif kind == "container":
            container = op["kind"]
        elif array is None:
            continue
        elif kind == "dtype":
            try:
                feeds[name] = array.astype(op["dtype"])
            except (ValueError, TypeError, OverflowError):
                continue
        elif kind == "rank":
            feeds[name] = _change_rank(array, op["delta"])
        elif kind == "shape":
            feeds[name] = _random_like(array.dtype, op["dims"], op["seed"])
        elif kind == "values":
            feeds[name] = _set_values(array, op)
        elif kind == "empty":
            axis = min(op["axis"], array.ndim - 1)
            feeds[name] = np.take(array, [], axis=axis) if array.ndim else np.empty((0,))
        elif kind == "layout":
            feeds[name] = _layout(array, op["layout"])
        elif kind == "kind":
            feeds[name] = _other_kind(array, op["kind"])
    if container == "list":
        return list(feeds.values())
    if container == "tuple":
        return tuple(feeds.items())
    if container == "none":
        return None
    if container == "int_keys":
        return {i: v for i, v in enumerate(feeds.values())}
    if container == "ndarray":
        return next(iter(feeds.values()), np.zeros(1))
    return {k.replace(UTF8_MARK, "\udcff"): v for k, v in feeds.items()}
