"""Reading an ONNX model from disk, safely, and getting it ready to import.

Everything that can go wrong with a user's file is caught here and turned into
a `RungError` that names the file and says what to do: a missing or corrupt
file, a syntax error in textual ONNX, an invalid graph, or external data that
points outside the model's folder.
"""

from __future__ import annotations

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

from rung.errors import RungError

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
        raise RungError(f"'{source}' is empty; expected a serialized ONNX ModelProto")
    model = ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError):
        raise RungError(
            f"'{source}' is not a valid ONNX model: the protobuf is corrupt or truncated"
        ) from None
    if not model.HasField("graph"):
        raise RungError(
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
        raise RungError(
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
        raise RungError(f"'{source}': tensor '{tensor.name}' has external data without a location")
    if base_dir is None:
        raise RungError(
            f"tensor '{tensor.name}' has external data ('{location}'), but the model was "
            "given in memory; load it from its file so the data can be found"
        )
    candidate = Path(location)
    root = base_dir.resolve()
    target = (root / candidate).resolve()
    if candidate.is_absolute() or not target.is_relative_to(root):
        raise RungError(
            f"'{source}': tensor '{tensor.name}' refers to external data '{location}', "
            "which is outside the model's folder; refusing to read it"
        )
    if not target.is_file():
        raise RungError(
            f"'{source}': external data file '{location}' of tensor '{tensor.name}' "
            "does not exist next to the model"
        )
    try:
        offset = int(info.get("offset", "0"))
        length = int(info["length"]) if "length" in info else None
    except ValueError:
        raise RungError(
            f"'{source}': tensor '{tensor.name}' has a malformed external data offset or length"
        ) from None
    return target, offset, length


def read_external_data(tensor: TensorProto, base_dir: Path | None, source: str) -> bytes:
    """The raw bytes of a tensor stored outside the model file."""
    target, offset, length = external_data_path(tensor, base_dir, source)
    size = target.stat().st_size
    end = size if length is None else offset + length
    if offset < 0 or end > size:
        raise RungError(
            f"'{source}': external data of tensor '{tensor.name}' lies beyond the end of "
            f"'{target.name}' (file is {size} bytes, data ends at {end})"
        )
    with open(target, "rb") as f:
        f.seek(offset)
        return f.read(end - offset)


def check(model: ModelProto, source: str) -> None:
    """Run ONNX's structural checker, reporting its first complaint in one line.

    The checker resolves external data against the current directory, not the
    model's folder, so tensors stored outside the file are checked by
    `external_data_path` instead and hidden from it here.
    """
    try:
        onnx.checker.check_model(_without_external_initializers(model))
    except (onnx.checker.ValidationError, ValueError) as err:
        raise RungError(f"'{source}' is not a valid ONNX model: {_first_line(err)}") from None


# Protobuf cannot serialize a message over 2 GB, and ONNX's checker and shape
# inference serialize the model they are given.
_PROTOBUF_LIMIT = 2**31 - 2**24


def _without_external_initializers(model: ModelProto) -> ModelProto:
    """The model as the checker should see it: external initializers hidden.

    A model too large to serialize loses all its initializer data instead;
    neither the checker nor shape inference needs more than their types.
    """
    graph = model.graph
    huge = model.ByteSize() > _PROTOBUF_LIMIT
    moved = [t for t in graph.initializer if huge or t.data_location == TensorProto.EXTERNAL]
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
    return onnx.inliner.inline_local_functions(model)


def infer_shapes(model: ModelProto, source: str) -> ModelProto:
    """ONNX shape inference with data propagation; inconsistencies are errors.

    The model's external data is not loaded at this point, so even a model
    whose weights exceed protobuf's 2 GB limit is small here.
    """
    try:
        return _infer(model)
    except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError) as err:
        first_error = err
    # ONNX infers function-bodied ops (e.g. MeanVarianceNormalization) by
    # expanding their bodies, and some bodies break when an attribute they
    # reference is left at its default. Spelling the defaults out is
    # semantically neutral, so try that before calling the graph inconsistent.
    explicit = _with_function_defaults(model)
    if explicit is not None:
        try:
            return _infer(explicit)
        except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError):
            pass
    raise RungError(f"'{source}': inconsistent graph: {_first_line(first_error)}") from None


def _infer(model: ModelProto) -> ModelProto:
    light = _without_external_initializers(model)
    inferred = onnx.shape_inference.infer_shapes(
        light, check_type=True, strict_mode=True, data_prop=True
    )
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
