"""Running one zoo model from the parent process: export (cached) and check, each in a subprocess.

A subprocess per job keeps the zoo going through anything one model does: an
exporter that crashes or hangs, compiled code that segfaults, a compile that
runs past its time limit. The C libraries rung builds go to a fresh
`RUNG_CACHE_DIR` per check, so the compile time is a real compile every run.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import check
from .cache import error_path, export_path, versions_folder
from .spec import ModelSpec

ZOO_DIR = Path(__file__).resolve().parent
EXPORT_TIMEOUT_S = 900.0

REQUIREMENTS: dict[str, tuple[str, ...]] = {
    "torchvision": ("torch", "torchvision"),
    "timm": ("torch", "torchvision", "timm"),
    "transformers": ("torch", "transformers"),
    "scikit-learn": ("sklearn", "skl2onnx"),
}
EXPORTER_REQUIREMENTS: dict[str, tuple[str, ...]] = {"dynamo": ("onnxscript",)}


@dataclass
class Result:
    """One model's line in the zoo's table."""

    name: str
    source: str
    exporter: str
    status: str
    nodes: int | None = None
    dynamic: list[str] = field(default_factory=list)
    compile_s: float | None = None
    error: str = ""
    note: str = ""

    @property
    def model(self) -> str:
        return self.name.rsplit("/", 1)[0]

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Result:
        return cls(**data)  # type: ignore[arg-type]


def missing_requirements(spec: ModelSpec) -> list[str]:
    """The Python packages the spec's export needs that are not installed."""
    needed = REQUIREMENTS.get(spec.source, ()) + EXPORTER_REQUIREMENTS.get(spec.exporter, ())
    return [name for name in needed if importlib.util.find_spec(name) is None]


def _worker(args: list[str], timeout: float, env: dict[str, str] | None = None) -> str | None:
    """Run `python bench/zoo --worker ...`; the failure's description, or None."""
    cmd = [sys.executable, str(ZOO_DIR), "--worker", *args]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return f"timed out after {timeout:.0f} s"
    if proc.returncode == 0:
        return None
    tail = [line for line in proc.stderr.splitlines() if line.strip()][-1:] or [""]
    return check.scrub(f"the process died (exit code {proc.returncode}) {tail[0].strip()}").strip()


def ensure_export(spec: ModelSpec, folder: Path) -> tuple[Path | None, str]:
    """The cached export of the model, made now if needed; or None and the export's error."""
    path, error_file = export_path(spec, folder), error_path(spec, folder)
    if not path.exists() and not error_file.exists():
        died = _worker(["export", spec.name, str(folder)], EXPORT_TIMEOUT_S)
        if died and not error_file.exists() and not path.exists():
            error_file.write_text(f"the exporter {died}\n")
    if path.exists():
        return path, ""
    return None, error_file.read_text().splitlines()[0]


def run_model(spec: ModelSpec, root: Path, fresh_c_cache: bool = True) -> Result:
    """Export (or find cached) and check one model; never raises for the model's failures."""
    result = Result(spec.name, spec.source, spec.exporter, "", dynamic=spec.dynamic_axes)
    result.note = spec.note
    path, error = ensure_export(spec, versions_folder(root))
    if path is None:
        result.status, result.error = check.EXPORT_FAILS, error
        return result
    with tempfile.TemporaryDirectory(prefix="rung-zoo-") as tmp:
        record_file = Path(tmp) / "result.json"
        env = dict(os.environ)
        if fresh_c_cache:
            env["RUNG_CACHE_DIR"] = str(Path(tmp) / "c-cache")
        start = time.perf_counter()
        died = _worker(["check", spec.name, str(path), str(record_file)], spec.timeout, env)
        elapsed = time.perf_counter() - start
        record = json.loads(record_file.read_text()) if record_file.exists() else {}
    result.nodes = record.get("nodes")
    result.compile_s = record.get("compile_s")
    if record.get("stage") == "done":
        result.status, result.error = record["status"], record.get("error", "")
        return result
    stage = record.get("stage", "start")
    if died and died.startswith("timed out"):
        result.status = check.TIMEOUT
    elif stage == "onnxruntime":
        result.status = check.ORT_FAILS
    else:
        result.status = check.CRASH
    result.error = f"during {stage}: {died}"
    if stage == "compile" and result.compile_s is None:
        result.compile_s = elapsed
    return result
