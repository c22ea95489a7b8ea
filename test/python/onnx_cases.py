"""The ONNX node test cases and the light models, found at test time.

The node cases are generated from the installed `onnx` package rather than
copied into the repository, so the suite follows whatever onnx version is
installed.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import warnings
from pathlib import Path
from types import ModuleType

import onnx


@functools.cache
def node_cases() -> dict[str, object]:
    """All ONNX backend node test cases by name (about 1,900), generated once."""
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {case.name: case for case in collect_testcases()}


LIGHT_DIR = Path(os.path.dirname(onnx.__file__)) / "backend" / "test" / "data" / "light"


def light_models() -> list[Path]:
    """The nine `light_*.onnx` architectures shipped in the onnx wheel."""
    return sorted(LIGHT_DIR.glob("light_*.onnx"))


@functools.cache
def graph_size_bench() -> ModuleType:
    """`bench/graph_size.py`, whose `build_model(nodes)` makes the generated chain models
    (the bench folder is not a package)."""
    path = Path(__file__).resolve().parents[2] / "bench" / "graph_size.py"
    spec = importlib.util.spec_from_file_location("graph_size", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
