"""The ONNX importer: reads `.onnx` / `.onnxtxt` models and builds onnx-dialect IR.

`export` is the same translation run backwards (onnx-dialect IR to ONNX
protos), and `reinfer` uses both directions to ask ONNX's shape inference
about a single op again.
"""

from .importer import import_model

__all__ = ["import_model"]
