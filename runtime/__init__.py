"""Running rung's IR: reference interpreters, the C compiler driver and InferenceSession.

The names onnxruntime scripts use (`InferenceSession`, `SessionOptions`,
`GraphOptimizationLevel`, `ExecutionMode`, `get_available_providers`, `get_device`)
are here too, so that `import rung.runtime as ort` runs such a script on rung.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rung import __version__

if TYPE_CHECKING:
    from .session import (
        ExecutionMode,
        GraphOptimizationLevel,
        InferenceSession,
        ModelMetadata,
        NodeArg,
        SessionOptions,
    )

__all__ = [
    "__version__",
    "ExecutionMode",
    "GraphOptimizationLevel",
    "InferenceSession",
    "ModelMetadata",
    "NodeArg",
    "SessionOptions",
    "get_available_providers",
    "get_device",
]

_SESSION_NAMES = frozenset(
    {
        "ExecutionMode",
        "GraphOptimizationLevel",
        "InferenceSession",
        "ModelMetadata",
        "NodeArg",
        "SessionOptions",
    }
)


def get_available_providers() -> list[str]:
    """The execution providers rung offers, as onnxruntime lists its own."""
    return ["CPUExecutionProvider"]


def get_device() -> str:
    """Where rung runs models: onnxruntime's name for it."""
    return "CPU"


def __getattr__(name: str) -> object:
    # Imported on first use, so that `rung.runtime.levels` (and `rung --help`) stay light.
    if name in _SESSION_NAMES:
        from . import session

        return getattr(session, name)
    raise AttributeError(f"module 'rung.runtime' has no attribute {name!r}")
