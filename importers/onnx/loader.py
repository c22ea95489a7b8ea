"""Reading an ONNX model from disk, safely, and getting it ready to import.

Everything that can go wrong with a user's file is caught here and turned into
a `RungError` that names the file and says what to do: a missing or corrupt
file, a syntax error in textual ONNX, an invalid graph, or external data that
points outside the model's folder. A malformed model is an `InvalidModelError`;
`validate.validate_model` looks at the proto before any of this reads it.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

import onnx
import onnx.checker
import onnx.defs
import onnx.inliner
import onnx.parser
import onnx.shape_inference
from google.protobuf.message import DecodeError, Message
from onnx import ModelProto, TensorProto

from rung.errors import InvalidModelError, RungError

TEXT_SUFFIXES = (".onnxtxt", ".onnxtext")


@dataclass
class LoadedModel:
    """A model with the folder its external data is resolved against."""

    model: ModelProto
    source: str
    base_dir: Path | None


def load(path: str | os.PathLike[str]) -> LoadedModel:
    """Read a binary `.onnx` or textual `.onnxtxt` model, without its external data.

    External data is not read here: it is read tensor by tensor when the
    importer needs it, after each location has been checked.
    """
    p = Path(path)
    if not p.exists():
        raise RungError(f"no such file: '{p}'")
    if p.is_dir():
        raise RungError(f"'{p}' is a directory, not an ONNX model")
    if p.suffix in TEXT_SUFFIXES:
        text = _read_text(p)
        model = parse_text(text, str(p))
    else:
        data = _read_bytes(p)
        model = parse_binary(data, str(p))
    return LoadedModel(model, str(p), p.resolve().parent)


def _read_bytes(p: Path) -> bytes:
    try:
        return p.read_bytes()
    except OSError as err:
        raise RungError(f"cannot read '{p}': {err.strerror}") from None


def _read_text(p: Path) -> str:
    try:
        return p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise RungError(f"'{p}' is not UTF-8 text; textual ONNX models must be UTF-8") from None
    except OSError as err:
        raise RungError(f"cannot read '{p}': {err.strerror}") from None


def parse_binary(data: bytes, source: str) -> ModelProto:
    """Decode a serialized ModelProto, refusing data that is not one."""
    if not data:
        raise InvalidModelError(f"'{source}' is empty; expected a serialized ONNX ModelProto")
    model = ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError):
        raise InvalidModelError(
            f"'{source}' is not a valid ONNX model: the protobuf is corrupt or truncated"
        ) from None
    if not model.HasField("graph"):
        raise InvalidModelError(
            f"'{source}' is not a valid ONNX model: it has no graph (corrupt, truncated, "
            "or not an ONNX file)"
        )
    return model


def parse_text(text: str, source: str) -> ModelProto:
    """Parse ONNX's textual syntax (`onnx.parser`)."""
    try:
        return onnx.parser.parse_model(text)
    except onnx.parser.ParseError as err:
        raw = err.args[0] if err.args else ""
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
        where = re.search(r"line: (\d+) column: (\d+)", text)
        position = f":{where.group(1)}:{where.group(2)}" if where else ""
        detail = lines[-1] if lines else "syntax error"
        context = next((ln for ln in lines if ln.startswith("Error context:")), "")
        near = context[len("Error context:") :].strip()
        suffix = f" (near '{near}')" if near else ""
        raise InvalidModelError(
            f"{source}{position}: cannot parse textual ONNX: {detail}{suffix}"
        ) from None


def external_data_path(
    tensor: TensorProto, base_dir: Path | None, source: str
) -> tuple[Path, int, int | None]:
    """Where a tensor's external data lives: (file, offset, length).

    The file must stay inside the model's folder: absolute paths, `..` and
    symbolic links that lead elsewhere are refused, so that a model cannot make
    rung read arbitrary files.
    """
    info = {e.key: e.value for e in tensor.external_data}
    location = info.get("location")
    if not location:
        raise InvalidModelError(
            f"'{source}': tensor '{tensor.name}' has external data without a location"
        )
    if base_dir is None:
        raise RungError(
            f"tensor '{tensor.name}' has external data ('{location}'), but the model was "
            "given in memory; load it from its file so the data can be found"
        )
    if "\0" in location:
        raise InvalidModelError(
            f"'{source}': tensor '{tensor.name}' has an external data location with a NUL "
            f"byte ({location!r}); no file is named so"
        )
    candidate = Path(location)
    root = base_dir.resolve()
    try:
        target = (root / candidate).resolve()
        outside = candidate.is_absolute() or not target.is_relative_to(root)
        exists = not outside and target.is_file()
    except OSError as err:  # a name too long, a loop of links...
        raise InvalidModelError(
            f"'{source}': tensor '{tensor.name}' has an unusable external data location "
            f"'{_shorten(location)}': {err.strerror}"
        ) from None
    if outside:
        raise InvalidModelError(
            f"'{source}': tensor '{tensor.name}' refers to external data '{location}', "
            "which is outside the model's folder; refusing to read it"
        )
    if not exists:
        raise InvalidModelError(
            f"'{source}': external data file '{_shorten(location)}' of tensor "
            f"'{tensor.name}' does not exist next to the model"
        )
    try:
        offset = int(info.get("offset", "0"))
        length = int(info["length"]) if "length" in info else None
    except ValueError:
        raise InvalidModelError(
            f"'{source}': tensor '{tensor.name}' has a malformed external data offset or length"
        ) from None
    if offset < 0 or (length is not None and length < 0):
        raise InvalidModelError(
            f"'{source}': tensor '{tensor.name}' has a negative external data offset or length"
        )
    return target, offset, length


def _shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def read_external_data(tensor: TensorProto, base_dir: Path | None, source: str) -> bytes:
    """The raw bytes of a tensor stored outside the model file."""
    target, offset, length = external_data_path(tensor, base_dir, source)
    try:
        size = target.stat().st_size
        end = size if length is None else offset + length
        if end > size:
            raise InvalidModelError(
                f"'{source}': external data of tensor '{tensor.name}' lies beyond the end of "
                f"'{target.name}' (file is {size} bytes, data ends at {end})"
            )
        with open(target, "rb") as f:
            f.seek(offset)
            return f.read(end - offset)
    except OSError as err:
        raise RungError(
            f"'{source}': cannot read external data file '{target.name}': {err.strerror}"
        ) from None


def check(model: ModelProto, source: str) -> None:
    """Run ONNX's structural checker, reporting its first complaint in one line.

    The checker resolves external data against the current directory, not the
    model's folder, so tensors stored outside the file are checked by
    `external_data_path` instead and hidden from it here.
    """
    try:
        onnx.checker.check_model(_without_external_initializers(model))
    except (onnx.checker.ValidationError, ValueError) as err:
        raise InvalidModelError(
            f"'{source}' is not a valid ONNX model: {_first_line(err)}"
        ) from None


_KEEP_ELEMENTS = 1024
"""Initializers up to this many elements keep their data for the checker and shape
inference (shape tensors, axes, pads: data propagation reads them); larger ones are
weights, which both only need the types of."""


def _without_external_initializers(model: ModelProto) -> ModelProto:
    """The model as the checker and shape inference should see it: weights hidden.

    Both serialize the model they are given: a transformer's 300 MB of weights cost
    seconds to copy for nothing, and a model over protobuf's 2 GB limit could not be
    checked at all. External initializers are hidden too (the checker would resolve
    them against the current directory).
    """
    graph = model.graph
    moved = [
        t
        for t in graph.initializer
        if t.data_location == TensorProto.EXTERNAL or math.prod(t.dims) > _KEEP_ELEMENTS
    ]
    if not moved:
        return model
    names = {t.name for t in moved}
    copy = ModelProto()
    _copy_fields(copy, model, skip="graph")
    _copy_fields(copy.graph, graph, skip="initializer")
    copy.graph.initializer.extend(t for t in graph.initializer if t.name not in names)
    declared = {vi.name for vi in copy.graph.input}
    for tensor in moved:
        if tensor.name not in declared:
            copy.graph.input.append(
                onnx.helper.make_tensor_value_info(tensor.name, tensor.data_type, tensor.dims)
            )
    return copy


def _copy_fields(dst: Message, src: Message, skip: str) -> None:
    """Copy every set field of proto `src` into `dst` except `skip` (which may be huge)."""
    for field, value in src.ListFields():
        if field.name == skip:
            continue
        target = getattr(dst, field.name)
        if isinstance(value, Message):
            target.CopyFrom(value)
        elif isinstance(value, str | bytes | int | float | bool):
            setattr(dst, field.name, value)
        else:
            target.extend(value)


def validate_external_data(model: ModelProto, base_dir: Path | None, source: str) -> None:
    """Check every external-data location of the main graph before anything reads it."""
    for tensor in model.graph.initializer:
        if tensor.data_location == TensorProto.EXTERNAL:
            external_data_path(tensor, base_dir, source)


def inline_functions(model: ModelProto) -> ModelProto:
    """Inline model-local functions, so their bodies import as ordinary ops."""
    if not model.functions:
        return model
    try:
        return onnx.inliner.inline_local_functions(model)
    # onnx's C++ inliner reports malformed calls by assertions, recursion by a ValidationError
    except (RuntimeError, onnx.checker.ValidationError, ValueError) as err:
        raise InvalidModelError(
            f"cannot inline the model's local functions: {_first_line(err)}"
        ) from None


_INFERENCE_ERRORS = (onnx.shape_inference.InferenceError, onnx.checker.ValidationError, ValueError)
"""How ONNX's shape inference refuses a graph (ValueError: an attribute naming no type)."""


def infer_shapes(model: ModelProto, source: str) -> ModelProto:
    """ONNX shape inference with data propagation; inconsistencies are errors.

    The model's external data is not loaded at this point, so even a model
    whose weights exceed protobuf's 2 GB limit is small here.
    """
    try:
        return _infer(model)
    except _INFERENCE_ERRORS as err:
        first_error = err
    # ONNX infers function-bodied ops (e.g. MeanVarianceNormalization) by
    # expanding their bodies, and some bodies break when an attribute they
    # reference is left at its default. Spelling the defaults out is
    # semantically neutral, so try that before calling the graph inconsistent.
    explicit = _with_function_defaults(model)
    if explicit is not None:
        try:
            return _infer(explicit)
        except _INFERENCE_ERRORS:
            pass
    lenient = _infer_past_unknown_dims(model, first_error)
    if lenient is not None:
        return lenient
    raise InvalidModelError(f"'{source}': inconsistent graph: {_first_line(first_error)}") from None


def _infer(model: ModelProto, strict: bool = True) -> ModelProto:
    light = _without_external_initializers(model)
    seeded = _with_outer_constants(light)
    if seeded is not None:
        try:
            inferred = _run_inference(seeded, strict)
        except _INFERENCE_ERRORS:
            pass  # what the seeds reveal is judged as before: without them
        else:
            result = ModelProto()
            result.CopyFrom(model)
            _carry_back(inferred.graph, result.graph)
            return result
    inferred = _run_inference(light, strict)
    if light is model:
        return inferred
    # Inference ran on a copy without the weights: carry its findings back.
    result = ModelProto()
    result.CopyFrom(model)
    del result.graph.value_info[:]
    result.graph.value_info.extend(inferred.graph.value_info)
    del result.graph.output[:]
    result.graph.output.extend(inferred.graph.output)
    return result


def _run_inference(model: ModelProto, strict: bool) -> ModelProto:
    return onnx.shape_inference.infer_shapes(
        model, check_type=True, strict_mode=strict, data_prop=True
    )


_SEED_LIMIT = 1024
"""Outer constants of up to this many elements are copied into the subgraphs reading them."""


def _with_outer_constants(model: ModelProto) -> ModelProto | None:
    """A copy whose subgraphs start with the outer constants they read; None if none do.

    ONNX's inference of a subgraph (a Loop or Scan body) sees the types of
    outer-scope values but not their contents, so a body that unsqueezes or
    reshapes by an outer constant gets results of unknown rank, and so do the
    op's outputs. Seeded with copies of those constants, the body is inferred
    as the main graph would be. The copies break SSA form: only inference
    sees them (`_carry_back` takes its findings home).
    """
    graph = model.graph
    own = {n.output[0]: n for n in graph.node if _is_small_constant(n)}
    for t in graph.initializer:
        if t.data_location != TensorProto.EXTERNAL and _elements(t) <= _SEED_LIMIT:
            own[t.name] = onnx.helper.make_node("Constant", [], [t.name], value=t)
    if not _seed_subgraphs(graph, own, apply=False):
        return None  # the usual case: the model is not copied
    copy = ModelProto()
    copy.CopyFrom(model)
    _seed_subgraphs(copy.graph, own, apply=True)
    return copy


def _seed_subgraphs(
    graph: onnx.GraphProto, visible: dict[str, onnx.NodeProto], apply: bool
) -> bool:
    """Prepend to each subgraph of `graph`'s nodes the `visible` constants it reads
    (only say whether any does, unless `apply`)."""
    changed = False
    for node in graph.node:
        for attr in node.attribute:
            for sub in _subgraphs(attr):
                defined = _defined_names(sub)
                reads = sorted(n for n in _read_names(sub) if n in visible and n not in defined)
                if reads and not apply:
                    return True
                for i, name in enumerate(reads):
                    sub.node.insert(i, visible[name])
                inner = {k: v for k, v in visible.items() if k not in defined}
                inner.update({n.output[0]: n for n in sub.node if _is_small_constant(n)})
                changed = _seed_subgraphs(sub, inner, apply) or changed or bool(reads)
    return changed


def _carry_back(inferred: onnx.GraphProto, target: onnx.GraphProto) -> None:
    """Copy the value types inferred for `inferred` (seeded or not) into `target`.

    A seeded subgraph has its seeds in front, so its own nodes are the last
    ones; the seeds' names belong to the enclosing graph and are not copied.
    """
    seeded = len(inferred.node) - len(target.node)
    seeds = {out for n in inferred.node[:seeded] for out in n.output}
    del target.value_info[:]
    target.value_info.extend(vi for vi in inferred.value_info if vi.name not in seeds)
    del target.output[:]
    target.output.extend(inferred.output)
    for done, node in zip(inferred.node[seeded:], target.node, strict=True):
        for done_attr, attr in zip(done.attribute, node.attribute, strict=True):
            for done_sub, sub in zip(_subgraphs(done_attr), _subgraphs(attr), strict=True):
                _carry_back(done_sub, sub)


def _subgraphs(attr: onnx.AttributeProto) -> list[onnx.GraphProto]:
    if attr.type == onnx.AttributeProto.GRAPH:
        return [attr.g]
    if attr.type == onnx.AttributeProto.GRAPHS:
        return list(attr.graphs)
    return []


def _read_names(graph: onnx.GraphProto) -> set[str]:
    """Every value name read by `graph`'s nodes, those of its subgraphs included."""
    names: set[str] = set()
    for node in graph.node:
        names.update(n for n in node.input if n)
        for attr in node.attribute:
            for sub in _subgraphs(attr):
                names |= _read_names(sub)
    return names


def _defined_names(graph: onnx.GraphProto) -> set[str]:
    names = {vi.name for vi in graph.input} | {t.name for t in graph.initializer}
    return names | {out for n in graph.node for out in n.output}


def _is_small_constant(node: onnx.NodeProto) -> bool:
    if node.op_type != "Constant" or node.domain not in ("", "ai.onnx") or len(node.output) != 1:
        return False
    for attr in node.attribute:
        if attr.name == "value" and attr.t.data_location == TensorProto.EXTERNAL:
            return False
        if attr.name == "value" and _elements(attr.t) > _SEED_LIMIT:
            return False
        if attr.name in ("sparse_value", "value_strings", "value_string"):
            return False
    return True


def _elements(t: TensorProto) -> int:
    n = 1
    for d in t.dims:
        n *= d
    return n


_FAILED_NODE = re.compile(r"\(op_type:([^,)]+)(?:, node name: ([^)]*))?\): ([^\n]*)")
"""One node's complaint in ONNX's strict inference error: op type, node name, message."""


def _infer_past_unknown_dims(model: ModelProto, err: Exception) -> ModelProto | None:
    """Non-strict inference, when every node that failed strict inference has an input
    of unknown shape; None when any failure is a real inconsistency.

    ONNX's inference of some ops errs on what it does not know: Resize reads an
    unknown length of `sizes` as 0, and then calls the model inconsistent,
    though every run gives `sizes` its length. Such a node's outputs keep
    whatever non-strict inference (or the model's declarations) say, possibly
    unknown dims; the lowering computes the real shapes. A complaint about
    types, or one about a node whose input shapes are all known, is an
    inconsistency of the graph.
    """
    if not isinstance(err, onnx.shape_inference.InferenceError):
        return None
    failures = _FAILED_NODE.findall(str(err))
    if not failures or any("type" in message.lower() for _, _, message in failures):
        return None
    try:
        inferred = _infer(model, strict=False)
    except _INFERENCE_ERRORS:
        return None
    known = _static_shapes(inferred)
    for op_type, name, _ in failures:
        nodes = [
            n for n in inferred.graph.node if n.op_type == op_type and (not name or n.name == name)
        ]
        if not nodes or not all(any(i and i not in known for i in n.input) for n in nodes):
            return None
    return inferred


def _static_shapes(model: ModelProto) -> set[str]:
    """Names of the main graph's values whose shapes are fully known."""
    names = {t.name for t in model.graph.initializer}
    graph = model.graph
    for vi in (*graph.input, *graph.value_info, *graph.output):
        t = vi.type
        if t.HasField("tensor_type") and t.tensor_type.HasField("shape"):
            if all(d.HasField("dim_value") for d in t.tensor_type.shape.dim):
                names.add(vi.name)
    return names


def _with_function_defaults(model: ModelProto) -> ModelProto | None:
    """A copy with omitted attribute defaults of function-bodied ops written out.

    Returns None when there is nothing to write out.
    """
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    if opset is None:
        return None
    copy = ModelProto()
    copy.CopyFrom(model)
    changed = False
    for node in copy.graph.node:
        if node.domain not in ("", "ai.onnx"):
            continue
        try:
            schema = onnx.defs.get_schema(node.op_type, opset)
        except onnx.defs.SchemaError:
            continue
        if not schema.has_function:
            continue
        present = {a.name for a in node.attribute}
        for name, attr in schema.attributes.items():
            default = attr.default_value
            if name not in present and default is not None and default.name:
                attr_copy = node.attribute.add()
                attr_copy.CopyFrom(default)
                attr_copy.name = name
                changed = True
    return copy if changed else None


def _first_line(err: Exception) -> str:
    """ONNX's multi-line checker and inference messages, as one line."""
    text = str(err).strip()
    parts = [
        line.strip()
        for line in text.splitlines()
        if line.strip() and not line.strip().startswith("==>")
    ]
    return " ".join(parts) or type(err).__name__
