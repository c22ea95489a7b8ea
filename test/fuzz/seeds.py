"""The seed corpus: valid inputs that the fuzzer mutates, generated (never checked in).

Seeds come from the ONNX node test cases of the installed onnx package and
the models in `examples/`: each model as `.onnx`; a subset as MLIR text of the
onnx, core and kernel dialects (what `opt` reads); and, for `run`, one case
per op with its input arrays. The corpus is written once into a cache folder
named by the onnx version, the examples and `FORMAT`, so a new onnx, a new
example or a new format regenerates it.

    python test/fuzz/seeds.py            # generate (if needed) and print where
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx

from rung.runtime.conformance import with_symbolic_dims

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from fuzz import sandbox, targets
else:
    from . import sandbox, targets

EXAMPLES = sandbox.REPO / "examples"
MLIR_STRIDE = {"onnx": 5, "core": 12, "kernel": 25}
"""Every n-th model (in name order) also gets a seed in that dialect: lowering all is slow."""
MAX_SEED_BYTES = 256 * 1024
FORMAT = 2
"""Raise it when the corpus changes (what is generated or how): the cache key includes it."""
DYNAMIC = "__dynamic"
"""Suffix of a `run` seed whose declared dims are all symbolic, so that feeds of other
shapes pass the input checks and reach the model's run-time checks."""


def cache_root() -> Path:
    """Where generated seeds live: `$RUNG_FUZZ_CACHE`, else `~/.cache/rung/fuzz`."""
    root = os.environ.get("RUNG_FUZZ_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "rung" / "fuzz"


def _key() -> str:
    digest = hashlib.sha256(f"{FORMAT}/{onnx.__version__}".encode())
    for path in sorted(EXAMPLES.glob("*.onnx")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


@dataclass
class Corpus:
    """The seeds on disk, by kind; names are file stems."""

    folder: Path
    onnx: list[str] = field(default_factory=list)
    mlir: list[tuple[str, str]] = field(default_factory=list)
    """(model name, dialect): the file is mlir/<name>.<dialect>.mlir."""
    run: list[str] = field(default_factory=list)

    def onnx_path(self, name: str) -> Path:
        return self.folder / "onnx" / f"{name}.onnx"

    def onnx_bytes(self, name: str) -> bytes:
        return self.onnx_path(name).read_bytes()

    def mlir_text(self, name: str, dialect: str) -> str:
        return (self.folder / "mlir" / f"{name}.{dialect}.mlir").read_text()

    def feeds_path(self, name: str) -> Path:
        return self.folder / "feeds" / f"{name}.npz"

    def feeds(self, name: str) -> dict[str, np.ndarray]:
        with np.load(self.feeds_path(name), allow_pickle=False) as data:
            return {k: data[k] for k in data.files}


def _node_cases() -> Iterator[tuple[str, onnx.ModelProto, list[object] | None]]:
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = collect_testcases()
    for case in sorted(cases, key=lambda c: c.name):
        if case.model is None:
            continue
        inputs = list(case.data_sets[0][0]) if case.data_sets else None
        yield case.name, case.model, inputs


def _example_feeds(model: onnx.ModelProto) -> list[object] | None:
    """Seeded random inputs from an example's declared static shapes."""
    from onnx import helper

    rng = np.random.default_rng(0)
    feeds: list[object] = []
    init = {i.name for i in model.graph.initializer}
    for value in model.graph.input:
        if value.name in init:
            continue
        tensor = value.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else 1 for d in tensor.shape.dim]
        dtype = helper.tensor_dtype_to_np_dtype(tensor.elem_type)
        feeds.append(rng.standard_normal(dims).astype(dtype))
    return feeds


def _models() -> Iterator[tuple[str, onnx.ModelProto, list[object] | None]]:
    for path in sorted(EXAMPLES.glob("*.onnx")):
        model = onnx.load(str(path))
        yield f"example_{path.stem}", model, _example_feeds(model)
    yield from _node_cases()


def _run_feeds(model: onnx.ModelProto, inputs: list[object] | None) -> dict[str, np.ndarray] | None:
    """The case's inputs by name, if they are all numeric arrays (what `run` mutates)."""
    if inputs is None:
        return None
    init = {i.name for i in model.graph.initializer}
    names = [v.name for v in model.graph.input if v.name not in init]
    if len(names) != len(inputs) or not names:
        return None
    if not all(isinstance(a, np.ndarray) and a.dtype.kind in "biuf" for a in inputs):
        return None
    return dict(zip(names, inputs, strict=True))  # type: ignore[arg-type]


def _op_of(model: onnx.ModelProto) -> str:
    return model.graph.node[0].op_type if model.graph.node else ""


def _lower_target(source: Path, dialect: str, out: Path) -> Callable[[], object]:
    def target() -> object:
        from rung.tools import opt

        flags = {"onnx": [], "core": ["--lower-to-core"], "kernel": ["--lower-to-kernel"]}
        return sandbox.CliResult(opt.main([str(source), *flags[dialect], "-o", str(out)]))

    return target


def _write_mlir(folder: Path, names: list[str], jobs: int, log: Callable[[str], None]) -> list:
    """MLIR text of a subset of the models, each made by `opt` in a forked child."""
    wanted: list[tuple[str, str]] = []
    for dialect, stride in MLIR_STRIDE.items():
        wanted += [(n, dialect) for i, n in enumerate(names) if i % stride == 0]
    (folder / "mlir").mkdir()
    jobs_to_run = (
        _lower_target(folder / "onnx" / f"{n}.onnx", d, folder / "mlir" / f"{n}.{d}.mlir")
        for n, d in wanted
    )
    targets.warm_up()
    cc = Path(tempfile.mkdtemp(prefix="rung-fuzz-cc-"))
    limits = sandbox.Limits(timeout=60.0, environ={"RUNG_CACHE_DIR": str(cc)})
    made: list[tuple[str, str]] = []
    try:
        for index, outcome in sandbox.run_all(jobs_to_run, limits, jobs=jobs):
            name, dialect = wanted[index]
            path = folder / "mlir" / f"{name}.{dialect}.mlir"
            if outcome.ok and path.is_file() and path.stat().st_size <= MAX_SEED_BYTES:
                made.append((name, dialect))
            else:
                path.unlink(missing_ok=True)
    finally:
        shutil.rmtree(cc, ignore_errors=True)
    log(f"seeds: {len(made)} MLIR texts of {len(wanted)} tried")
    return sorted(made)


def generate(folder: Path, jobs: int = 1, log: Callable[[str], None] = print) -> Corpus:
    """Write the corpus into `folder` (which must not exist yet)."""
    corpus = Corpus(folder)
    for sub in ("onnx", "feeds"):
        (folder / sub).mkdir(parents=True)
    seen_ops: set[str] = set()
    for name, model, inputs in _models():
        data = model.SerializeToString()
        if len(data) > MAX_SEED_BYTES:
            continue
        corpus.onnx_path(name).write_bytes(data)
        corpus.onnx.append(name)
        feeds = _run_feeds(model, inputs)
        op = _op_of(model)
        if feeds is not None and (name.startswith("example_") or op not in seen_ops):
            seen_ops.add(op)
            np.savez(corpus.feeds_path(name), **feeds)
            corpus.run.append(name)
            dynamic = f"{name}{DYNAMIC}"
            corpus.onnx_path(dynamic).write_bytes(with_symbolic_dims(model).SerializeToString())
            shutil.copyfile(corpus.feeds_path(name), corpus.feeds_path(dynamic))
            corpus.run.append(dynamic)
    log(f"seeds: {len(corpus.onnx)} models, {len(corpus.run)} with feeds for run")
    corpus.mlir = _write_mlir(folder, corpus.onnx, jobs, log)
    manifest = {"onnx": corpus.onnx, "mlir": corpus.mlir, "run": corpus.run}
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return corpus


def load(folder: Path) -> Corpus:
    manifest = json.loads((folder / "manifest.json").read_text())
    return Corpus(
        folder,
        onnx=manifest["onnx"],
        mlir=[(n, d) for n, d in manifest["mlir"]],
        run=manifest["run"],
    )


def ensure(jobs: int = 1, log: Callable[[str], None] = print) -> Corpus:
    """The corpus for this onnx version, generated into the cache on first use."""
    folder = cache_root() / f"seeds-{_key()}"
    if (folder / "manifest.json").is_file():
        return load(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    log(f"seeds: generating {folder} (once per onnx version)")
    tmp = Path(tempfile.mkdtemp(prefix=".seeds-", dir=folder.parent))
    try:
        corpus = generate(tmp / "c", jobs=jobs, log=log)
        try:
            os.rename(tmp / "c", folder)
        except OSError:
            if not (folder / "manifest.json").is_file():  # not a concurrent generator's win
                raise
        del corpus
        return load(folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    found = ensure(jobs=int(os.environ.get("JOBS", "1")))
    print(f"{found.folder}: {len(found.onnx)} models, {len(found.mlir)} MLIR, {len(found.run)} run")
