"""Reading a model into a module: ONNX protos and files, torch.export programs, MLIR text.

Kept apart from the session so that the compiler driver (`native`) and the
session, which calls it, can both read models without importing each other.
"""

from __future__ import annotations

import os
from pathlib import Path

from onnx import ModelProto
from xdsl.dialects.builtin import ModuleOp

from rung.errors import RungError


def is_exported_program(model: object) -> bool:
    """Whether `model` is a `torch.export.ExportedProgram` (without importing torch)."""
    return type(model).__name__ == "ExportedProgram" and hasattr(model, "graph_signature")


def load_module(model: ModelProto | str | os.PathLike[str] | ModuleOp | object) -> ModuleOp:
    """The model as a module: ONNX and torch.export programs (`.pt2`) are imported,
    `.mlir` parsed; a ModuleOp is used as is."""
    if isinstance(model, ModuleOp):
        return model
    if isinstance(model, ModelProto):
        from rung.importers.onnx import import_model

        return import_model(model)
    if isinstance(model, bytes | bytearray | memoryview):
        from rung.importers.onnx import import_model
        from rung.importers.onnx.loader import parse_binary

        return import_model(parse_binary(bytes(model), "<bytes>"))
    if is_exported_program(model):
        from rung.importers.torch import import_program

        return import_program(model)
    if not isinstance(model, str | os.PathLike):
        raise RungError(
            "expected a ModelProto, a torch.export.ExportedProgram, a ModuleOp or a path "
            f"to a model, got {type(model).__name__}"
        )
    path = Path(model)
    if path.suffix == ".pt2":
        from rung.importers.torch import import_program

        return import_program(path)
    if path.suffix == ".mlir":
        from xdsl.utils.exceptions import ParseError, VerifyException

        from rung.dialects import parse_error_text, parse_module

        if not path.is_file():
            raise RungError(f"no such file: '{path}'")
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise RungError(f"cannot read '{path}': {err}") from None
        try:
            return parse_module(text, str(path))
        except ParseError as err:
            raise RungError(parse_error_text(err)) from None
        except VerifyException as err:
            raise RungError(f"'{path}': {str(err).strip()}") from None
    from rung.importers.onnx import import_model

    return import_model(path)
