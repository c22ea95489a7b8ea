"""rung: carries deep-learning models down a ladder of MLIR dialects, one rung at a time.

The subpackages live in the repository's top-level folders and are mapped
into this namespace: `rung.dialects`, `rung.importers`, `rung.lowering`,
`rung.runtime` and `rung.tools`. `rung.compare(model, ...)` checks a model's
levels against a reference (see `rung.runtime.compare`); it is imported on
first use, so that `import rung` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rung.runtime.compare import compare

__version__ = "0.1.0"

__all__ = ["__version__", "compare"]


def __getattr__(name: str) -> object:
    if name == "compare":
        from rung.runtime.compare import compare

        return compare
    raise AttributeError(f"module 'rung' has no attribute {name!r}")
