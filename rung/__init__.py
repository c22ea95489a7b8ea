"""rung: carries deep-learning models down a ladder of MLIR dialects, one rung at a time.

The subpackages live in the repository's top-level folders and are mapped
into this namespace: `rung.dialects`, `rung.importers`, `rung.lowering`,
`rung.runtime` and `rung.tools`.
"""

__version__ = "0.1.0"
