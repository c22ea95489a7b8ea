"""rung on the model zoo (bench/zoo): real exports, compiled at level kernel, against onnxruntime.

By default a fast subset runs (scikit-learn models and a few torchvision and
transformers models that export and compile in seconds); `RUNG_ZOO=full`
runs every model. Exports are cached between runs (`$RUNG_ZOO_CACHE`, default
`~/.cache/rung/zoo`). A model that fails today is a strict xfail with its
reason, and must fail in the same way (`raises=`): a fix shows up as an
unexpected pass, and the entry in `KNOWN_FAILURES` must go. A model whose
export needs a library that is not installed is skipped.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from zoo import all_models  # noqa: E402
from zoo.cache import default_root, export_path, versions_folder  # noqa: E402
from zoo.check import compare  # noqa: E402
from zoo.known_failures import KNOWN_FAILURES  # noqa: E402
from zoo.runner import missing_requirements, run_model  # noqa: E402
from zoo.spec import ModelSpec  # noqa: E402

FULL = os.environ.get("RUNG_ZOO") == "full"


class ZooFailure(AssertionError):
    """A model that did not pass; the subclass names how it failed."""


class CompileFailure(ZooFailure):
    pass


class RunFailure(ZooFailure):
    pass


class Mismatch(ZooFailure):
    pass


class Crash(ZooFailure):
    pass


class ReferenceFailure(ZooFailure):
    """onnxruntime cannot run the export (not rung's failure, but no check either)."""


class ExportFailure(ZooFailure):
    """The exporter cannot export the model (not rung's failure, but no check either)."""


FAILURES: dict[str, type[ZooFailure]] = {
    "compile-error": CompileFailure,
    "run-error": RunFailure,
    "mismatch": Mismatch,
    "crash": Crash,
    "timeout": Crash,
    "ort-fails": ReferenceFailure,
    "export-fails": ExportFailure,
}


def _param(spec: ModelSpec) -> object:
    known = KNOWN_FAILURES.get(spec.name)
    if known is None:
        return pytest.param(spec, id=spec.name)
    status, reason = known
    mark = pytest.mark.xfail(strict=True, raises=FAILURES[status], reason=f"{status}: {reason}")
    return pytest.param(spec, id=spec.name, marks=mark)


MODELS = [_param(spec) for spec in all_models() if FULL or spec.fast]


def test_known_failures_name_zoo_models() -> None:
    names = {spec.name for spec in all_models()}
    assert sorted(set(KNOWN_FAILURES) - names) == []
    assert {status for status, _ in KNOWN_FAILURES.values()} <= set(FAILURES)


def test_default_subset_covers_each_kind_of_model() -> None:
    """CI's run must reach scikit-learn, a torchvision CNN and a transformer."""
    fast = [spec for spec in all_models() if spec.fast]
    assert {"scikit-learn", "torchvision", "transformers"} <= {spec.source for spec in fast}


def test_compare_scales_the_float_tolerance_by_the_output() -> None:
    ref = np.array([1000.0, 0.0], dtype=np.float32)
    assert compare(ref, ref + np.float32(0.05)) is None  # atol 1e-4 × 1000
    assert "values differ" in compare(ref, ref + np.float32([0.0, 0.2]))
    assert "shape" in compare(ref, ref[:1])


def test_compare_wants_labels_strings_and_maps_equal() -> None:
    assert "values differ" in compare(np.array([1, 2]), np.array([1, 3]))
    assert "dtype" in compare(np.array([1, 2]), np.array([1, 2], dtype=np.int32))
    assert compare(np.array(["cat", "dog"], dtype=object), np.array(["cat", "dog"])) is None
    assert "strings differ" in compare(np.array(["cat"]), np.array(["dog"]))
    zipmap = [{0: np.float32(0.25), 1: np.float32(0.75)}]
    assert compare(zipmap, [{0: 0.25, 1: 0.75}]) is None
    assert "keys" in compare(zipmap, [{0: 0.25}])


@pytest.mark.parametrize("spec", MODELS)
def test_zoo_model(spec: ModelSpec) -> None:
    root = default_root()
    if not export_path(spec, versions_folder(root)).exists():
        missing = missing_requirements(spec)
        if missing:
            pytest.skip(f"exporting {spec.name} needs {', '.join(missing)} (pip install rung[zoo])")
    result = run_model(spec, root)
    if result.status != "pass":
        raise FAILURES[result.status](f"{result.status}: {result.error}")
