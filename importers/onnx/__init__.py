"""The ONNX importer: reads `.onnx` / `.onnxtxt` models and builds onnx-dialect IR."""

from .importer import import_model

__all__ = ["import_model"]
