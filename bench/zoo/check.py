"""The two jobs that run in a model's own subprocess: exporting it, and checking rung on it.

`export_model` builds the model and writes its ONNX file (or a `.error` file
with the exporter's message). `check_model` runs the export in onnxruntime
(the reference) and in one `rung.runtime.InferenceSession` at level kernel,
at each of the spec's sizes, and compares: floats within rtol 1e-3 and atol
1e-4 × the output's scale (its largest magnitude in the reference, at least
1), everything else (integers, booleans, strings, labels) exactly. The check
writes its progress to a JSON file as it goes, so that when the process dies
(a crash in compiled code, a timeout) the parent still knows how far it got.
"""

from __future__ import annotations

import json
import os
import re
import time
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .spec import ModelSpec

RTOL = 1e-3
ATOL = 1e-4

PASS = "pass"
EXPORT_FAILS = "export-fails"
ORT_FAILS = "ort-fails"
COMPILE_ERROR = "compile-error"
RUN_ERROR = "run-error"
MISMATCH = "mismatch"
CRASH = "crash"
TIMEOUT = "timeout"
STATUSES = (PASS, MISMATCH, COMPILE_ERROR, RUN_ERROR, CRASH, TIMEOUT, ORT_FAILS, EXPORT_FAILS)
"""Every status, in the order the report lists them."""


ANSI = re.compile(r"\x1b\[[0-9;]*m")
LIBRARY_PATH = re.compile(r"/\S*/(site|dist)-packages/")
REPO = str(Path(__file__).resolve().parents[2]) + "/"


def scrub(text: str) -> str:
    """The text without colour codes or this machine's paths (of the repo and of libraries)."""
    return LIBRARY_PATH.sub("", ANSI.sub("", text)).replace(REPO, "")


def first_line(error: BaseException | str) -> str:
    """The first non-empty line of an error, prefixed by its type for exceptions."""
    text = scrub(str(error)).strip()
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if isinstance(error, BaseException):
        line = f"{type(error).__name__}: {line}" if line else type(error).__name__
    return line[:600]


def root_cause(error: BaseException) -> BaseException:
    """The innermost cause: torch.onnx wraps the real error in a generic "step 1/3" one."""
    while error.__cause__ is not None:
        error = error.__cause__
    return error


# ---- export --------------------------------------------------------------------------------------


def export_model(spec: ModelSpec, path: Path, error_file: Path) -> None:
    """Build and export the model to `path`; on failure write the error to `error_file`."""
    import onnx

    tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp.onnx")
    try:
        model = spec.build()
        if isinstance(model, onnx.ModelProto):
            onnx.save(model, str(tmp))
        else:
            from .torch_export import export

            export(spec, model, tmp)  # type: ignore[arg-type]
        onnx.checker.check_model(str(tmp))
    except Exception as err:  # noqa: BLE001 - any exporter failure is a result to record
        error_file.write_text(first_line(root_cause(err)) + "\n\n" + traceback.format_exc())
        tmp.unlink(missing_ok=True)
        return
    tmp.replace(path)


# ---- comparison ----------------------------------------------------------------------------------


def compare(reference: object, actual: object, where: str = "") -> str | None:
    """Why `actual` differs from `reference` (None when they agree), recursing into
    sequences and maps (ZipMap outputs)."""
    if isinstance(reference, Mapping):
        if not isinstance(actual, Mapping):
            return f"{where}: expected a map, got {type(actual).__name__}"
        if sorted(map(str, reference)) != sorted(map(str, actual)):
            return f"{where}: keys {sorted(reference)} != {sorted(actual)}"
        by_str = {str(k): v for k, v in actual.items()}
        for key, value in reference.items():
            why = compare(value, by_str[str(key)], f"{where}[{key!r}]")
            if why:
                return why
        return None
    if isinstance(reference, list):
        if not isinstance(actual, list | tuple) or len(actual) != len(reference):
            got = len(actual) if isinstance(actual, list | tuple) else type(actual).__name__
            return f"{where}: expected a sequence of {len(reference)}, got {got}"
        for i, (r, a) in enumerate(zip(reference, actual, strict=True)):
            why = compare(r, a, f"{where}[{i}]")
            if why:
                return why
        return None
    ref = np.asarray(reference)
    got = np.asarray(actual)
    if ref.shape != got.shape:
        return f"{where}: shape {got.shape}, expected {ref.shape}"
    if ref.dtype.kind in "fc":
        return _compare_floats(ref, got, where)
    if ref.dtype.kind in "OUS" or got.dtype.kind in "OUS":
        if ref.astype(str).tolist() != got.astype(str).tolist():
            return (
                f"{where}: strings differ ({_first_difference(ref.astype(str), got.astype(str))})"
            )
        return None
    if ref.dtype != got.dtype:
        return f"{where}: dtype {got.dtype}, expected {ref.dtype}"
    if not np.array_equal(ref, got):
        return f"{where}: values differ ({_first_difference(ref, got)})"
    return None


def _compare_floats(ref: np.ndarray, got: np.ndarray, where: str) -> str | None:
    if got.dtype.kind not in "fc":
        return f"{where}: dtype {got.dtype}, expected {ref.dtype}"
    finite = np.isfinite(ref)
    scale = max(1.0, float(np.abs(ref[finite]).max())) if finite.any() else 1.0
    atol = ATOL * scale
    close = np.isclose(got, ref, rtol=RTOL, atol=atol, equal_nan=True)
    if close.all():
        return None
    diff = np.abs(got.astype(np.float64) - ref.astype(np.float64))
    diff[close] = 0
    worst = np.unravel_index(int(np.nanargmax(np.where(np.isnan(diff), np.inf, diff))), ref.shape)
    return (
        f"{where}: {int((~close).sum())}/{ref.size} values differ, max abs error "
        f"{float(np.nanmax(diff)):.3g} at {tuple(int(i) for i in worst)} "
        f"(got {got[worst]!r}, expected {ref[worst]!r}; atol {atol:.3g})"
    )


def _first_difference(ref: np.ndarray, got: np.ndarray) -> str:
    ne = np.argwhere(ref != got)
    if ne.size == 0:
        return "same values"
    at = tuple(int(i) for i in ne[0])
    return f"{int(len(ne))}/{ref.size} differ, first at {at}: got {got[at]!r}, expected {ref[at]!r}"


# ---- the check -----------------------------------------------------------------------------------


class Progress:
    """The check's record, rewritten to `file` at each step (see the module doc)."""

    def __init__(self, file: Path, **fields: Any) -> None:
        self.file = file
        self.record: dict[str, Any] = dict(fields)

    def update(self, **fields: Any) -> None:
        if "error" in fields and "path" in self.record:
            path = self.record["path"]
            error = fields["error"].replace(path, "model.onnx")
            fields["error"] = error.replace(Path(path).name, "model.onnx")
        self.record.update(fields)
        tmp = self.file.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.record, default=str))
        tmp.replace(self.file)


def node_count(path: Path) -> int:
    import onnx

    return len(onnx.load(str(path), load_external_data=False).graph.node)


def check_model(spec: ModelSpec, path: Path, result_file: Path) -> None:
    """Run the export in onnxruntime and in rung at every size; record the outcome.

    Errors name the model file as `model.onnx`: where the cache lies is no part of them.
    """
    progress = Progress(result_file, stage="load", path=str(path))
    progress.update(nodes=node_count(path))
    feeds = [spec.feeds(sizes) for sizes in spec.sizes]
    progress.update(stage="onnxruntime")
    try:
        references = _reference(path, feeds)
    except Exception as err:  # noqa: BLE001 - the reference failing is a result
        progress.update(stage="done", status=ORT_FAILS, error=first_line(err))
        return
    progress.update(stage="compile")
    from rung.runtime import InferenceSession

    start = time.perf_counter()
    try:
        session = InferenceSession(str(path), level="kernel")
    except Exception as err:  # noqa: BLE001
        elapsed = time.perf_counter() - start
        progress.update(
            stage="done", status=COMPILE_ERROR, error=first_line(err), compile_s=elapsed
        )
        return
    for i, (feed, reference) in enumerate(zip(feeds, references, strict=True)):
        stage = "compile" if i == 0 else f"run {i + 1}"
        progress.update(stage=stage)
        try:
            # The first run generates and compiles the C: it is part of the compile time.
            actual = session.run(None, feed)
        except Exception as err:  # noqa: BLE001
            status = RUN_ERROR if i > 0 or _is_run_failure(err) else COMPILE_ERROR
            if status == COMPILE_ERROR:
                progress.update(compile_s=time.perf_counter() - start)
            progress.update(stage="done", status=status, error=first_line(err))
            return
        if i == 0:
            progress.update(compile_s=time.perf_counter() - start)
        why = _compare_outputs(reference, actual, _names(path))
        if why:
            sizes = ", ".join(f"{k}={v}" for k, v in spec.sizes[i].items()) or "static shape"
            progress.update(stage="done", status=MISMATCH, error=f"{sizes}: {why}")
            return
    progress.update(stage="done", status=PASS, error="")


def _names(path: Path) -> list[str]:
    import onnx

    return [o.name for o in onnx.load(str(path), load_external_data=False).graph.output]


def _reference(path: Path, feeds: Sequence[Mapping[str, np.ndarray]]) -> list[list[object]]:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return [session.run(None, dict(feed)) for feed in feeds]


def _is_run_failure(err: BaseException) -> bool:
    """Whether an error of the first run came from running compiled code, not from building it."""
    return "the compiled model failed" in str(err)


def _compare_outputs(
    references: Sequence[object], actual: Sequence[object], names: Sequence[str]
) -> str | None:
    if len(actual) != len(references):
        return f"{len(actual)} outputs, expected {len(references)}"
    for name, ref, got in zip(names, references, actual, strict=True):
        why = compare(ref, got, f"output '{name}'")
        if why:
            return why
    return None
