"""Reading an ONNX model from disk, safely, and getting it ready to import.

Everything that can go wrong with a user's file is caught here and turned into
a `RungError` that names the file and says what to do: a missing or corrupt
file, a syntax error in textual ONNX, an invalid graph, or external data that
points outside the model's folder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import onnx
import onnx.checker
import onnx.inliner
import onnx.parser
import onnx.shape_inference
from google.protobuf.message import DecodeError
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
        message = str(err).strip().splitlines()
        detail = message[-1] if message else "syntax error"
        raise RungError(f"'{source}': cannot parse textual ONNX: {detail}") from None


def external_data_path(tensor: TensorProto, base_dir: Path | None, source: str) -> tuple[
    Path, int, int | None
]:
    """Where a tensor's external data lives: (file, offset, length).

    The file must stay inside the model's folder: absolute paths, `..` and
    symbolic links that lead elsewhere are refused, so that a model cannot make
    rung read arbitrary files.
    """
    info = {e.key: e.value for e in tensor.external_data}
    location = info.get("location")
    if not location:
        raise RungError(
            f"'{source}': tensor '{tensor.name}' has external data without a location"
        )
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
    """Run ONNX's structural checker, reporting its first complaint in one line."""
    try:
        onnx.checker.check_model(model)
    except (onnx.checker.ValidationError, ValueError) as err:
        raise RungError(f"'{source}' is not a valid ONNX model: {_first_line(err)}") from None


def inline_functions(model: ModelProto) -> ModelProto:
    """Inline model-local functions, so their bodies import as ordinary ops."""
    if not model.functions:
        return model
    return onnx.inliner.inline_local_functions(model)


def infer_shapes(model: ModelProto, source: str) -> ModelProto:
    """ONNX shape inference with data propagation; inconsistencies are errors."""
    try:
        return onnx.shape_inference.infer_shapes(
            model, check_type=True, strict_mode=True, data_prop=True
        )
    except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError) as err:
        raise RungError(f"'{source}': inconsistent graph: {_first_line(err)}") from None
    except ValueError as err:
        # The in-memory variant refuses models over 2 GB; infer on the weightless
        # graph instead, which is what shape inference needs anyway.
        raise RungError(f"'{source}': shape inference failed: {_first_line(err)}") from None


def _first_line(err: Exception) -> str:
    text = str(err).strip()
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("==>"):
            return line
    return text or type(err).__name__
