"""Running rung's IR: reference interpreters, the C compiler driver and InferenceSession."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .session import InferenceSession, NodeArg

__all__ = ["InferenceSession", "NodeArg"]


def __getattr__(name: str) -> object:
    # Imported on first use, so that `rung.runtime.levels` (and `rung --help`) stay light.
    if name in ("InferenceSession", "NodeArg"):
        from . import session

        return getattr(session, name)
    raise AttributeError(f"module 'rung.runtime' has no attribute {name!r}")
