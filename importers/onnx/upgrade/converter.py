"""The round trip through `onnx.version_converter`, for what it upgrades correctly.

Nodes the converter cannot or would wrongly upgrade are parked in a private
domain (`PENDING`), which it leaves alone; the driver's rules take them
afterwards. Large initializers stay out of the trip, and what the converter
drops (local functions, graph metadata) is put back.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from google.protobuf.message import Message
from onnx import GraphProto, ModelProto, NodeProto, TensorProto, helper

from .history import DEFAULT, DEFAULT_SPELLINGS, schema_histories
from .protos import subgraphs
from .registry import CONVERTER_WRONG

# Nodes our rules must upgrade are parked in these domains while the converter
# runs: it leaves foreign domains alone. One per spelling, to restore it exactly.
PENDING = {"": "rung.upgrade.pending", "ai.onnx": "rung.upgrade.pending.ai.onnx"}
UNPENDING = {v: k for k, v in PENDING.items()}


# Initializers larger than this are kept out of the converter round trip (it
# serializes the whole model twice); shape inference only needs their type.
_CONVERTER_MAX_INITIALIZER_ELEMENTS = 1024


def _node_needs_rules(node: NodeProto, start: int | None, target: int) -> bool:
    """True if the converter cannot (or would wrongly) upgrade `node` from `start`."""
    if start is None:
        return True  # experimental: no schema for the converter to look up
    hist = schema_histories()[DEFAULT][node.op_type]
    version: int | None = start
    while version is not None:
        if version == hist.removed:
            return True
        wrong = CONVERTER_WRONG.get((node.op_type, version))
        if wrong is not None and wrong(node):
            return True
        version = hist.after(version, target)
    return False


def _park_for_rules(graph: GraphProto, source: int, target: int) -> None:
    """Move nodes the converter must not touch into a private domain (it skips them)."""
    histories = schema_histories()[DEFAULT]
    for node in graph.node:
        if node.domain not in DEFAULT_SPELLINGS:
            continue
        hist = histories.get(node.op_type)
        start = hist.at(source) if hist is not None else None
        if _node_needs_rules(node, start, target) or hist is None:
            node.domain = PENDING[node.domain]
            continue  # the converter does not enter foreign nodes' subgraphs either
        for sub in subgraphs(node):
            _park_for_rules(sub, source, target)


def _copy_fields(dst: Any, src: Any, skip: tuple[str, ...]) -> None:
    """Copy the set fields of proto `src` into `dst`, except those named in `skip`."""
    for desc, value in src.ListFields():
        if desc.name in skip:
            continue
        if isinstance(value, Message):
            getattr(dst, desc.name).CopyFrom(value)
        elif hasattr(value, "extend"):  # repeated field
            getattr(dst, desc.name).extend(value)
        else:
            setattr(dst, desc.name, value)


def _skeleton(model: ModelProto) -> tuple[ModelProto, set[str]]:
    """A copy for the converter with large initializers swapped for typed graph inputs.

    The converter serializes the model into C++ and back; weights only cost
    time there, and shape inference needs just their types. Returns the copy
    and the names of the swapped initializers.
    """
    work = ModelProto()
    _copy_fields(work, model, skip=("graph", "functions"))
    # Before IR 4 the converter ignores initializers that are not also inputs,
    # which many old exporters omit; the result gets a newer IR version anyway.
    work.ir_version = max(work.ir_version, 4)
    g, src = work.graph, model.graph
    _copy_fields(g, src, skip=("initializer",))
    input_names = {v.name for v in src.input}
    swapped: set[str] = set()
    for t in src.initializer:
        n_elements = int(np.prod(t.dims)) if t.dims else 1
        if (
            n_elements <= _CONVERTER_MAX_INITIALIZER_ELEMENTS
            and t.data_location != TensorProto.EXTERNAL
        ):
            g.initializer.append(t)
            continue
        swapped.add(t.name)
        if t.name not in input_names:
            g.input.append(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
    return work, swapped


def _valid_ssa(graph: GraphProto) -> bool:
    """Every value defined once (the converter names new values `_v_N` without checking)."""
    defined: set[str] = set()
    for name in (*(v.name for v in graph.input), *(t.name for t in graph.initializer)):
        defined.add(name)
    for node in graph.node:
        for out in node.output:
            if out and out in defined:
                return False
            defined.add(out)
        for sub in subgraphs(node):
            if not _valid_ssa(sub):
                return False
    return True


# GraphProto fields describing the graph rather than its computation; the
# converter's output keeps the computation, these come from the input.
_GRAPH_ANNOTATIONS = (
    "name",
    "doc_string",
    "metadata_props",
    "quantization_annotation",
    "sparse_initializer",
)


_GRAPH_STRUCTURE = tuple(
    f.name for f in GraphProto.DESCRIPTOR.fields if f.name not in _GRAPH_ANNOTATIONS
)


def try_converter(model: ModelProto, source: int, target: int) -> ModelProto | None:
    """Run onnx's converter on everything it handles correctly; None if it fails."""
    work, swapped = _skeleton(model)
    _park_for_rules(work.graph, source, target)
    work.opset_import.extend(helper.make_opsetid(d, 1) for d in PENDING.values())
    try:
        converted = onnx.version_converter.convert_version(work, target)
    except Exception:  # noqa: BLE001 - any converter failure means: our rules do it all
        return None
    if not _valid_ssa(converted.graph):
        return None
    # Rebuild the model around the converted graph: the converter drops local
    # functions and graph metadata, and never saw the large initializers.
    result = ModelProto()
    _copy_fields(result, model, skip=("graph",))
    g, src = result.graph, model.graph
    g.CopyFrom(converted.graph)
    for name in _GRAPH_ANNOTATIONS:  # the converter drops some of these
        g.ClearField(name)
    _copy_fields(g, src, skip=_GRAPH_STRUCTURE)
    if swapped:
        original_inputs = {v.name for v in src.input}
        kept = [v for v in g.input if v.name not in swapped or v.name in original_inputs]
        del g.input[:]
        g.input.extend(kept)
        g.initializer.extend(t for t in src.initializer if t.name in swapped)
    for imp in result.opset_import:
        if imp.domain in DEFAULT_SPELLINGS:
            imp.version = target
    return result
