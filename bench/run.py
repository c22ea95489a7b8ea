"""Benchmark rung against onnxruntime and OpenVINO: latency, compile time, memory.

    python bench/run.py                          # every model, 1 and 2 threads
    python bench/run.py --models 'mlp|resnet'    # models whose name matches (re.search)
    python bench/run.py --group light,small      # only these groups (light, small, modern)
    python bench/run.py --quick --models mlp     # a fast smoke run
    python bench/run.py --repeat 50 --threads 1,2,4 --budget 60

Options: `--repeat N` timed runs per runtime (capped for very large models),
`--budget S` seconds of timed runs per model and thread count (whichever ends
first; at least 3 runs), `--threads` the thread counts to measure, `--output`
the Markdown report (default bench/RESULTS.md; `results.json` is written next
to it), `--seed` of the random weights and inputs, `--timeout` per model.

The models come in three groups: "light", the nine light ONNX models of the
onnx wheel with seeded random weights; "small", an MLP, a small CNN and a
transformer block built in bench/models.py; "modern", ten real architectures
exported from torchvision and transformers (bench/modern.py; they need the
`zoo` extra, and are listed as failed at build without it). Each model runs
in its own subprocess, so a crash or an out-of-memory kill in one is reported
and the run goes on, and the memory of a large model (VGG-19 carries over
500 MB of weights) is freed before the next. In that process the model is
compiled stage by stage with a fresh compiler cache (import, lower-to-core,
lower-to-kernel, C generation, C compile, each timed), checked once against
onnxruntime on the same seeded inputs (rtol 1e-3, atol 1e-4); the same ONNX
bytes are compiled by OpenVINO (when it is installed: the `bench` extra) and
checked alike. Then all three are timed: they take turns in short blocks of
back-to-back runs (the order reversing every round), after warm-up runs, so
that drift of a noisy machine hits all alike. Between blocks the process idles
briefly and each block starts with untimed runs: the runtimes keep idle
worker threads spinning for a while after a parallel run, and a spinning
thread of one runtime would otherwise take a core from another's timed run.
The report gives the median and the interquartile range of the per-run
latency. A model that fails at any stage is listed with the stage and the
first line of its error (an OpenVINO failure only empties its columns);
geometric means are taken per group over the models that ran and matched,
with their count.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import math
import os
import platform
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timezone
from functools import partial
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))

import modern  # noqa: E402
from models import GROUPS, ModelSpec, all_models, select  # noqa: E402
from zoo.check import scrub  # noqa: E402

if TYPE_CHECKING:
    import onnx
    import onnxruntime
    import openvino
    from xdsl.dialects.builtin import ModuleOp

    from rung.runtime.native import NativeModel

STAGES = ("import", "lower-to-core", "lower-to-kernel", "C generation", "C compile")
RTOL, ATOL = 1e-3, 1e-4
MIN_RUNS = 3
BLOCK = 5
"""Timed runs of one runtime back to back, before the next runtime's turn."""
PAUSE_S = 0.2
"""Idle time before each block: lets the other runtimes' spinning worker threads go to
sleep, so that they do not steal a core from the runs being timed."""
REWARM_S = 0.05
"""Untimed runs at the start of each block, for at least this long (at least one run): after
an idle pause the first runs are slow (caches, clock, sleeping threads), and for a model of a
tenth of a millisecond one run does not bring it back."""
RUNTIMES = {"rung": "rung", "ort": "ORT", "ov": "OV"}
"""The runtimes timed, by their key in the records, and their short names in the report."""
OV_MISSING = "openvino is not installed (pip install -e .[bench])"

Record = dict[str, Any]


# ---- small helpers ------------------------------------------------------------------------------


def bench_models() -> list[ModelSpec]:
    """Every benchmark model, in the report's order: light, small, then modern."""
    return all_models() + modern.specs()


def first_line(err: BaseException | str) -> str:
    """The first non-empty line of an error, which is what the tables show (no machine paths)."""
    text = scrub_paths(str(err)).strip()
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    name = type(err).__name__ if isinstance(err, BaseException) else ""
    return f"{name}: {line}" if name and line else (line or name or "unknown error")


def scrub_paths(text: str) -> str:
    """The text without this machine's paths: the repo's, the libraries', temporary and home."""
    text = re.sub(re.escape(tempfile.gettempdir()) + r"/\S*", "<tmp>", scrub(text))
    return text.replace(str(Path.home()), "~")


def peak_rss_bytes() -> int:
    """This process's peak resident memory so far (ru_maxrss: KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


def write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file and a rename, so no half-written file is ever left behind."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def stats_ms(samples: Sequence[float]) -> dict[str, float]:
    """Median and quartiles in milliseconds (robust on a noisy machine, unlike the mean)."""
    ms = np.asarray(samples, dtype=np.float64) * 1e3
    q1, median, q3 = np.percentile(ms, [25, 50, 75])
    return {"median": float(median), "q1": float(q1), "q3": float(q3), "n": len(ms)}


def geomean(values: Sequence[float]) -> float | None:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


# ---- the worker: one model, in its own process -------------------------------------------------


class Worker:
    """Compiles, checks and times one model, saving its record after every step.

    The record is rewritten as each step starts and ends, so if the process
    dies (a crash in the compiled code, an out-of-memory kill) the driver still
    knows how far it got.
    """

    def __init__(self, spec: ModelSpec, args: argparse.Namespace) -> None:
        self.spec = spec
        self.args = args
        self.path = Path(args.result)
        self.record: Record = {
            "name": spec.name,
            "group": spec.group,
            "status": "running",
            "stage": "build",
            "compile_s": {},
            "memory": None,
            "rss_bytes": {},
            "openvino": None,
            "timings": {},
        }

    def save(self) -> None:
        write_atomic(self.path, json.dumps(self.record))

    @contextlib.contextmanager
    def stage(self, name: str) -> Iterator[None]:
        self.record["stage"] = name
        self.save()
        yield

    def log(self, message: str) -> None:
        print(f"  [{self.spec.name}] {message}", flush=True)

    def run(self) -> None:
        try:
            self._run()
            self.record["stage"] = "done"
        except Exception as err:  # every failure becomes a row of the report
            self.record["status"] = "failed"
            self.record["error"] = first_line(err)
            self.record["error_detail"] = "".join(traceback.format_exception(err))[-4000:]
            self.log(f"FAILED at {self.record['stage']}: {self.record['error']}")
        self.save()

    def _run(self) -> None:
        args, spec = self.args, self.spec
        with self.stage("build"):
            model = spec.build(args.seed)
            feed = spec.inputs(model, args.seed + 1)
        native = self._compile(model)
        self.record["rss_bytes"]["after compile"] = peak_rss_bytes()
        with self.stage("onnxruntime"):
            model_bytes = model.SerializeToString()
            del model
            gc.collect()
            threads = args.threads
            session = ort_session(model_bytes, threads[0])
            expected = session.run(None, feed)
            ort_names = [o.name for o in session.get_outputs()]
        with self.stage("run"):
            rung_feed = ordered_inputs(native, feed)
            got = native.run(rung_feed, threads=threads[0])
        with self.stage("check"):
            check = compare(got, expected, [a.name for a in native.outputs], ort_names)
            self.record["check"] = check
            self.record["status"] = "ok" if check["ok"] else "mismatch"
            verdict = "ok" if check["ok"] else f"MISMATCH ({check['reason']})"
            self.log(
                f"check against onnxruntime: {verdict}, max abs err {check['max_abs_err']:.2e}"
            )
        del got
        ov = self._openvino(model_bytes, feed, expected, ort_names)
        del expected
        repeat = min(args.repeat, spec.max_repeat or args.repeat)
        for n in threads:
            with self.stage(f"timing, {n} thread{'s' * (n > 1)}"):
                if session is None:
                    session = ort_session(model_bytes, n)
                if ov is None and self.record["openvino"]["status"] in ("ok", "mismatch"):
                    ov = self._openvino_again(model_bytes, n)
                runs = {
                    # The count goes with every run: NativeModel.run sets it before each.
                    "rung": partial(native.run, rung_feed, threads=n),
                    "ort": partial(session.run, None, feed),
                }
                if ov is not None:
                    runs["ov"] = partial(ov.infer, feed)
                samples = time_in_blocks(
                    runs, repeat=repeat, warmup=args.warmup, budget_s=args.budget
                )
                self._record_timing(n, {k: stats_ms(v) for k, v in samples.items()})
                session = ov = None
                gc.collect()
        self.record["rss_bytes"]["after timing"] = peak_rss_bytes()

    def _record_timing(self, n: int, ms: dict[str, dict[str, float]]) -> None:
        """One thread count's medians and ratios: rung/ORT, and rung/OV when OpenVINO ran."""
        rung = ms["rung"]
        timing: Record = {f"{k}_ms": v for k, v in ms.items()}
        timing["ratio"] = rung["median"] / ms["ort"]["median"]
        timing["ratio_ov"] = rung["median"] / ms["ov"]["median"] if "ov" in ms else None
        self.record["timings"][str(n)] = timing
        ov = f", OpenVINO {ms['ov']['median']:.3f} ms" if "ov" in ms else ""
        self.log(
            f"{n} thread(s): rung {rung['median']:.3f} ms, onnxruntime "
            f"{ms['ort']['median']:.3f} ms{ov}, rung/ORT {timing['ratio']:.2f}"
            + (f", rung/OV {timing['ratio_ov']:.2f}" if "ov" in ms else "")
            + f" ({rung['n']} runs)"
        )

    def _openvino(
        self,
        model_bytes: bytes,
        feed: dict[str, np.ndarray],
        expected: Sequence[np.ndarray],
        ort_names: Sequence[str],
    ) -> openvino.InferRequest | None:
        """OpenVINO compiled on the first thread count and checked against onnxruntime; None
        (and the reason in the record) when it is not installed or fails on the model."""
        info: Record = {"status": "running", "stage": "import"}
        self.record["openvino"] = info
        with self.stage("openvino"):
            try:
                import openvino  # noqa: F401
            except ImportError as err:
                reason = OV_MISSING if err.name == "openvino" else first_line(err)
                info.update(status="unavailable", error=reason)
                self.log(f"OpenVINO: {reason}")
                return None
            try:
                info["stage"] = "compile"
                start = time.perf_counter()
                request = self._openvino_at(model_bytes, self.args.threads[0])
                info["compile_s"] = time.perf_counter() - start
                info["stage"] = "run"
                got = openvino_outputs(request.infer(feed), ort_names)
            except Exception as err:  # OpenVINO's failure is its own, not rung's
                info.update(status="failed", error=first_line(err))
                self.log(f"OpenVINO FAILED at {info['stage']}: {info['error']}")
                return None
        check = compare(got, expected, ort_names, ort_names)
        info.update(status="ok" if check["ok"] else "mismatch", stage="done", check=check)
        verdict = "ok" if check["ok"] else f"MISMATCH ({check['reason']})"
        self.log(
            f"OpenVINO compiled in {info['compile_s']:.2f} s; check against onnxruntime: "
            f"{verdict}, max abs err {check['max_abs_err']:.2e}"
        )
        return request

    def _openvino_at(self, model_bytes: bytes, threads: int) -> openvino.InferRequest:
        """An infer request of OpenVINO compiled for `threads` (fixed at compile time); its
        effective settings go to the record."""
        import openvino as ov

        core = ov.Core()
        compiled = core.compile_model(core.read_model(model_bytes), "CPU", ov_config(threads))
        settings = self.record["openvino"].setdefault("properties", {})
        settings[str(threads)] = {k: str(compiled.get_property(k)) for k in OV_REPORTED}
        return compiled.create_infer_request()

    def _openvino_again(self, model_bytes: bytes, threads: int) -> openvino.InferRequest | None:
        """OpenVINO compiled for another thread count; None (noted) if that fails."""
        try:
            return self._openvino_at(model_bytes, threads)
        except Exception as err:  # only OpenVINO's columns at this thread count go empty
            self.record["openvino"].setdefault("errors", {})[str(threads)] = first_line(err)
            self.log(f"OpenVINO FAILED at {threads} thread(s): {first_line(err)}")
            return None

    def _compile(self, model: onnx.ModelProto) -> NativeModel:
        """Each stage of `rung compile`, timed apart; the memory plan is read on the way."""
        from rung.lowering.kernel_to_c import generate_c
        from rung.runtime.levels import lower
        from rung.runtime.native import NativeModel, cached_build, runtime_object
        from rung.runtime.session import load_module

        times: dict[str, float] = self.record["compile_s"]

        @contextlib.contextmanager
        def timed(stage: str) -> Iterator[None]:
            with self.stage(stage):
                start = time.perf_counter()
                yield
                times[stage] = time.perf_counter() - start
                self.save()

        with timed("import"):
            module = load_module(model)
        with self.stage("lower-to-kernel"):
            lower(module, "kernel", timings=times)  # times lower-to-core and lower-to-kernel
            self.save()
        self.record["memory"] = memory_plan(module)
        with timed("C generation"):
            program = generate_c(module, self.args.prefix)
        del module
        gc.collect()
        # Built once per machine, compiler and flags, then cached: timed apart, not a stage.
        with self.stage("runtime object"):
            start = time.perf_counter()
            runtime_object(program.uses_openmp)
            self.record["runtime_object_s"] = time.perf_counter() - start
        with timed("C compile"):
            folder = cached_build(program)
        self.record["openmp"] = bool(program.uses_openmp)
        self.record["weights_bytes"] = len(program.weights)
        self.log("compiled in " + ", ".join(f"{k} {v:.2f} s" for k, v in times.items()))
        with self.stage("load"):
            return NativeModel(folder, program)


def memory_plan(module: ModuleOp) -> dict[str, int] | None:
    """arena/peak/total bytes recorded by the memory plan on the entry function, if any."""
    from xdsl.dialects.builtin import IntegerAttr
    from xdsl.dialects.func import FuncOp

    funcs = [op for op in module.body.block.ops if isinstance(op, FuncOp)]
    if not funcs:
        return None
    found = {}
    for key in ("arena_bytes", "peak_bytes", "total_bytes"):
        attr = funcs[0].attributes.get(f"kernel.{key}")
        if isinstance(attr, IntegerAttr):
            found[key] = int(attr.value.data)
    return found or None


OV_REPORTED = (
    "INFERENCE_NUM_THREADS",
    "NUM_STREAMS",
    "INFERENCE_PRECISION_HINT",
    "ENABLE_CPU_PINNING",
)
"""OpenVINO's effective settings, kept in the record: they are what its numbers depend on."""


def ov_config(threads: int) -> dict[str, object]:
    """OpenVINO CPU on `threads` threads, one stream, tuned for latency, computing in f32.

    f32 is OpenVINO's default only on CPUs without bf16 support; forcing it keeps
    the comparison with rung and onnxruntime (both f32) fair everywhere.
    """
    return {
        "INFERENCE_NUM_THREADS": threads,
        "NUM_STREAMS": 1,
        "PERFORMANCE_HINT": "LATENCY",
        "INFERENCE_PRECISION_HINT": "f32",
    }


def openvino_outputs(result: Any, names: Sequence[str]) -> list[np.ndarray]:
    """OpenVINO's outputs in onnxruntime's order: by tensor name, else by position."""
    by_name: dict[str, np.ndarray] = {}
    for port, value in result.items():
        for name in port.get_names():
            by_name[name] = value
    if all(n in by_name for n in names):
        return [by_name[n] for n in names]
    return list(result.to_tuple())


def ort_session(model_bytes: bytes, threads: int) -> onnxruntime.InferenceSession:
    """onnxruntime on `threads` intra-op threads, one inter-op thread, sequential execution."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(model_bytes, options, providers=["CPUExecutionProvider"])


def ordered_inputs(native: NativeModel, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The feed in the compiled entry's argument order (by name; by position if names differ)."""
    names = [a.name for a in native.inputs]
    if set(names) == set(feed):
        return [feed[n] for n in names]
    return list(feed.values())


def compare(
    got: Sequence[np.ndarray],
    expected: Sequence[np.ndarray],
    got_names: Sequence[str],
    expected_names: Sequence[str],
) -> Record:
    """Whether rung's outputs match onnxruntime's within RTOL/ATOL, and the largest error."""
    if set(got_names) == set(expected_names) and len(got_names) == len(got):
        by_name = dict(zip(got_names, got, strict=True))
        got = [by_name[n] for n in expected_names]
    result: Record = {
        "ok": True,
        "reason": "",
        "max_abs_err": 0.0,
        "max_scaled_err": 0.0,  # max abs error / max |expected|: comparable across models
        "max_tol_used": 0.0,  # max abs error / (atol + rtol |expected|): above 1 fails
    }
    if len(got) != len(expected):
        return {**result, "ok": False, "reason": f"{len(got)} outputs, expected {len(expected)}"}
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        g, e = np.asarray(g, dtype=np.float64), np.asarray(e, dtype=np.float64)
        if g.shape != e.shape:
            return {
                **result,
                "ok": False,
                "reason": f"output {i} shape {g.shape}, expected {e.shape}",
            }
        if g.size == 0:
            continue
        err = np.abs(g - e)
        err = np.where(np.isnan(g) & np.isnan(e), 0.0, err)
        err = np.where(np.isnan(err), np.inf, err)
        result["max_abs_err"] = max(result["max_abs_err"], float(err.max()))
        scale = float(np.abs(e).max()) or 1.0
        result["max_scaled_err"] = max(result["max_scaled_err"], float(err.max()) / scale)
        used = float((err / (ATOL + RTOL * np.abs(e))).max())
        result["max_tol_used"] = max(result["max_tol_used"], used)
        if used > 1.0 and result["ok"]:
            result.update(ok=False, reason=f"output {i} off by up to {float(err.max()):.3g}")
    return result


def time_in_blocks(
    runs: dict[str, Callable[[], object]],
    repeat: int,
    warmup: int,
    budget_s: float,
    block: int = BLOCK,
    pause_s: float = PAUSE_S,
    rewarm_s: float = REWARM_S,
) -> dict[str, list[float]]:
    """Per-run seconds of each callable (two runtimes, three, any number): blocks of `block`
    runs in turn, the order reversing each round (a b c, c b a, a b c, ...), so no runtime
    is always first or always after the same one; each block follows a pause and untimed
    runs (REWARM_S).

    Stops after `repeat` runs each, or after `budget_s` seconds once MIN_RUNS runs each are
    done.
    """
    for _ in range(warmup):
        for fn in runs.values():
            fn()
    samples: dict[str, list[float]] = {name: [] for name in runs}
    names = list(runs)
    start = time.perf_counter()
    rounds = 0
    while True:
        for name in names if rounds % 2 == 0 else reversed(names):
            time.sleep(pause_s)
            warm_until = time.perf_counter() + rewarm_s
            runs[name]()  # wakes this runtime's threads after the pause
            while time.perf_counter() < warm_until:
                runs[name]()
            for _ in range(min(block, repeat - len(samples[name]))):
                t0 = time.perf_counter()
                runs[name]()
                samples[name].append(time.perf_counter() - t0)
        rounds += 1
        done = min(len(v) for v in samples.values())
        if done >= max(repeat, 1):
            break
        if done >= MIN_RUNS and time.perf_counter() - start > budget_s:
            break
    return samples


def worker_main(args: argparse.Namespace) -> int:
    specs = [s for s in bench_models() if s.name == args.worker]
    if not specs:
        print(f"unknown model '{args.worker}'", file=sys.stderr)
        return 2
    args.prefix = "bench_" + re.sub(r"\W", "_", args.worker)
    Worker(specs[0], args).run()
    return 0


# ---- the driver ---------------------------------------------------------------------------------


def run_isolated(spec: ModelSpec, args: argparse.Namespace) -> Record:
    """Run one model's worker in a subprocess with a fresh compiler cache; its record."""
    with tempfile.TemporaryDirectory(prefix="rung-bench-") as tmp:
        result = Path(tmp) / "result.json"
        stderr = Path(tmp) / "stderr.txt"
        options = {
            "--worker": spec.name,
            "--result": str(result),
            "--repeat": str(args.repeat),
            "--warmup": str(args.warmup),
            "--budget": str(args.budget),
            "--threads": ",".join(map(str, args.threads)),
            "--seed": str(args.seed),
        }
        cmd = [sys.executable, str(Path(__file__).resolve())]
        cmd += [word for pair in options.items() for word in pair]
        env = {**os.environ, "RUNG_CACHE_DIR": str(Path(tmp) / "cache")}
        start = time.perf_counter()
        with stderr.open("w") as err_file:
            proc = subprocess.Popen(cmd, stderr=err_file, env=env, start_new_session=True)
            code: int | None = None
            try:
                code = proc.wait(timeout=args.timeout)
            except subprocess.TimeoutExpired:
                pass
            finally:  # on a timeout or Ctrl-C: the worker and its compiler, in their own group
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
        record: Record = {"name": spec.name, "group": spec.group, "stage": "start", "timings": {}}
        with contextlib.suppress(OSError, ValueError):
            record = json.loads(result.read_text())
        record["wall_s"] = time.perf_counter() - start
        if code != 0 or record.get("stage") != "done":
            if code is None:
                why = f"timed out after {args.timeout:.0f} s"
            elif code < 0:
                name = signal.Signals(-code).name
                why = f"worker killed by {name}" + (
                    " (out of memory?)" if name == "SIGKILL" else ""
                )
            else:
                why = f"worker exited with code {code}"
            tail = [ln for ln in stderr.read_text(errors="replace").splitlines() if ln.strip()]
            if record.get("status") != "failed":
                record["status"] = "failed"
                record["error"] = scrub_paths(why + (f": {tail[-1].strip()}" if tail else ""))
                record["error_detail"] = "\n".join(tail[-40:])
                print(f"  [{spec.name}] FAILED at {record.get('stage')}: {record['error']}")
        return record


def load_average() -> float | None:
    """The 1-minute load average: on a shared machine, how much the numbers can be trusted."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def environment() -> Record:
    """What the numbers depend on: date, CPU, versions, compiler (no machine paths)."""
    from rung.runtime.native import OPT_FLAGS, compiler

    def version(package: str) -> str:
        try:
            return metadata.version(package)
        except metadata.PackageNotFoundError:
            return "n/a"

    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    try:
        cc = compiler()
        first = subprocess.run([*cc, "--version"], capture_output=True, text=True, timeout=30)
        cc_version = (first.stdout.strip().splitlines() or ["unknown"])[0]
        cc_name = os.path.basename(cc[0])
    except Exception as err:  # the workers will report the missing compiler per model
        cc_name, cc_version = "n/a", first_line(err)
    git = "n/a"
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            [
                "git",
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                ".",
                ":!bench/RESULTS.md",
                ":!bench/results.json",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
        ).stdout.strip()
        git = head + (" with uncommitted changes" if dirty else "") if head else "n/a"
    omp = {k: v for k, v in os.environ.items() if k.startswith(("OMP_", "GOMP_"))}
    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "load_start": load_average(),
        "openmp_env": omp,
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "rung": version("rung"),
        "rung_git": git,
        "onnx": version("onnx"),
        "onnxruntime": version("onnxruntime"),
        "openvino": version("openvino"),
        "torch": version("torch"),
        "torchvision": version("torchvision"),
        "transformers": version("transformers"),
        "numpy": version("numpy"),
        "xdsl": version("xdsl"),
        "compiler": cc_name,
        "compiler_version": cc_version,
        "compiler_flags": " ".join(OPT_FLAGS),
    }


def group_means(
    records: Sequence[Record], ratios: dict[str, float]
) -> dict[str, dict[str, float | int | None]]:
    """The geometric mean of `ratios` per group and over all, with how many models it covers
    of how many the group has."""
    means = {}
    for group in (*GROUPS, "all"):
        members = [r["name"] for r in records if group in ("all", r.get("group"))]
        values = [ratios[name] for name in members if name in ratios]
        means[group] = {"geomean": geomean(values), "count": len(values), "total": len(members)}
    return means


def worst(ratios: dict[str, float]) -> Record | None:
    name = max(ratios, key=lambda k: ratios[k]) if ratios else None
    return {"name": name, "ratio": ratios[name]} if name else None


def summarize(records: Sequence[Record], threads: Sequence[int]) -> Record:
    """Per thread count: geometric means of rung/ORT and rung/OV per group and over all, and
    the worst model of each. Models that failed or mismatched are left out (and, for rung/OV,
    those OpenVINO did not run or mismatched)."""
    summary: Record = {}
    for n in threads:
        ran = [r for r in records if r.get("status") == "ok" and str(n) in r["timings"]]
        ort = {r["name"]: r["timings"][str(n)]["ratio"] for r in ran}
        ov = {
            r["name"]: r["timings"][str(n)]["ratio_ov"]
            for r in ran
            if r["timings"][str(n)].get("ratio_ov") is not None
            and (r.get("openvino") or {}).get("status") == "ok"
        }
        summary[str(n)] = {
            "rung/ORT": group_means(records, ort),
            "rung/OV": group_means(records, ov),
            "worst": worst(ort),
            "worst_ov": worst(ov),
        }
    return summary


def cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def status_note(r: Record) -> str:
    if r.get("status") == "failed":
        return f"**FAILED** at {r.get('stage')}"
    if r.get("status") == "mismatch":
        return f"**MISMATCH** ({r['check']['reason']}); not in the means"
    return ""


def ov_note(r: Record, n: int | None = None) -> str:
    """Why OpenVINO's columns are empty or left out of the means (empty when they are fine)."""
    ov = r.get("openvino") or {}
    if ov.get("status") == "failed":
        return f"OpenVINO failed at {ov.get('stage')}"
    if ov.get("status") == "mismatch":
        return f"OpenVINO MISMATCH ({ov['check']['reason']}); not in the rung/OV means"
    if n is not None and str(n) in ov.get("errors", {}):
        return f"OpenVINO failed at {n} thread(s)"
    return ""


def fmt(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def mib(value: float | None) -> str:
    return "–" if value is None else f"{value / 2.0**20:.1f}"


def latency_cells(t: Record, key: str) -> list[str]:
    """A runtime's median and IQR cells, or dashes when it was not timed."""
    ms = t.get(f"{key}_ms")
    if ms is None:
        return ["–", "–"]
    return [f"{ms['median']:.3f}", f"{ms['q3'] - ms['q1']:.3f}"]


def geomean_cell(m: Record) -> str:
    """A geometric mean and how many models it covers; a dash for a group not in the run."""
    if not m["total"]:
        return "–"
    mean = "n/a" if m["geomean"] is None else f"**{m['geomean']:.2f}**"
    return f"{mean} ({m['count']} of {m['total']})"


def render_latency(records: Sequence[Record], n: int, s: Record) -> list[str]:
    """One thread count's table, its geometric means per group and its worst models."""
    heads = [f"{name} {what}" for name in RUNTIMES.values() for what in ("ms", "IQR ms")]
    lines = [
        "",
        f"## Latency, {n} thread{'s' * (n > 1)}",
        "",
        "| model | group | " + " | ".join(heads) + " | rung/ORT | rung/OV | runs | note |",
        "|---|---|" + "---:|" * (len(heads) + 3) + "---|",
    ]
    for r in records:
        t = r["timings"].get(str(n))
        if t is None:
            dashes = " | ".join(["–"] * (len(heads) + 3))
            note = "; ".join(x for x in (status_note(r), ov_note(r)) if x)
            lines.append(f"| {r['name']} | {r.get('group')} | {dashes} | {cell(note)} |")
            continue
        cols = [c for key in RUNTIMES for c in latency_cells(t, key)]
        ratio_ov = fmt(t.get("ratio_ov")) if t.get("ratio_ov") is not None else "–"
        note = "; ".join(x for x in (status_note(r), ov_note(r, n)) if x)
        lines.append(
            f"| {r['name']} | {r.get('group')} | {' | '.join(cols)} | {t['ratio']:.2f} | "
            f"{ratio_ov} | {t['rung_ms']['n']} | {cell(note)} |"
        )
    lines += [
        "",
        "| geometric mean | " + " | ".join((*GROUPS, "all")) + " |",
        "|---|" + "---:|" * (len(GROUPS) + 1),
    ]
    for ratio in ("rung/ORT", "rung/OV"):
        means = s[ratio]
        cols = [geomean_cell(m) for m in means.values()]
        lines.append(f"| {ratio} | " + " | ".join(cols) + " |")
    lines.append("")
    for ratio, key in (("rung/ORT", "worst"), ("rung/OV", "worst_ov")):
        w = s[key]
        lines.append(
            f"- Worst {ratio}: {w['name']} ({w['ratio']:.2f})" if w else f"- Worst {ratio}: n/a"
        )
    return lines


def render_status(records: Sequence[Record]) -> list[str]:
    lines = [
        "",
        "## Status",
        "",
        "| model | status | max abs error | max error / max \\|ORT\\| | OpenVINO | "
        "OV max abs error | error (first line) |",
        "|---|---|---:|---:|---|---:|---|",
    ]
    for r in records:
        check = r.get("check")
        err = f"{check['max_abs_err']:.2e}" if check else "n/a"
        scaled = f"{check['max_scaled_err']:.2e}" if check and "max_scaled_err" in check else "n/a"
        status = r.get("status", "failed")
        status = status if status == "ok" else f"**{status.upper()}**"
        reason = r.get("error") or (check or {}).get("reason") or ""
        where = f"at {r.get('stage')}: " if r.get("status") == "failed" else ""
        ov = r.get("openvino") or {}
        ov_status = {"ok": "ok", "unavailable": "–", None: "–", "running": "–"}.get(
            ov.get("status"), f"**{str(ov.get('status')).upper()}**"
        )
        ov_check = ov.get("check")
        ov_err = f"{ov_check['max_abs_err']:.2e}" if ov_check else "n/a"
        errors = [where + reason] if reason else []
        if ov.get("status") == "failed":
            errors.append(f"OpenVINO at {ov.get('stage')}: {ov.get('error')}")
        elif ov.get("status") == "mismatch":
            errors.append(f"OpenVINO: {ov_check['reason']}")
        errors += [f"OpenVINO at {n} thread(s): {e}" for n, e in ov.get("errors", {}).items()]
        lines.append(
            f"| {r['name']} | {status} | {err} | {scaled} | {ov_status} | {ov_err} | "
            f"{cell('; '.join(errors))} |"
        )
    return lines


def render_compile(records: Sequence[Record]) -> list[str]:
    lines = [
        "",
        "## Compile time (seconds, fresh compiler cache)",
        "",
        "OpenVINO: `read_model` and `compile_model` of the same ONNX bytes, at the first thread "
        "count. Runtime object: rung's prebuilt microkernels (GEMM and its epilogues, im2col, "
        "convolutions by "
        "blocks of rows, depthwise convolutions), compiled once per "
        "machine, compiler and flags and then cached; its one-time build, in each model's fresh "
        "cache, is shown apart and is not in the total.",
        "",
        "| model | "
        + " | ".join(STAGES)
        + " | total | OpenVINO | runtime object (once) | weights MiB | OpenMP | note |",
        "|---|" + "---:|" * (len(STAGES) + 4) + "---|---|",
    ]
    for r in records:
        times = r.get("compile_s", {})
        cols = [f"{times[s]:.2f}" if s in times else "–" for s in STAGES]
        total = f"{sum(times.values()):.2f}" if len(times) == len(STAGES) else "–"
        ov_s = (r.get("openvino") or {}).get("compile_s")
        openmp = {True: "yes", False: "no"}.get(r.get("openmp"), "–")  # type: ignore[arg-type]
        note = status_note(r) if r.get("status") == "failed" else ""
        once = r.get("runtime_object_s")
        lines.append(
            f"| {r['name']} | {' | '.join(cols)} | {total} | {fmt(ov_s) if ov_s else '–'} | "
            f"{f'{once:.2f}' if isinstance(once, float) else '–'} | "
            f"{mib(r.get('weights_bytes'))} | {openmp} | {cell(note)} |"
        )
    return lines


def render_memory(records: Sequence[Record]) -> list[str]:
    lines = [
        "",
        "## Memory (MiB)",
        "",
        "Arena: the scratch memory a run of rung's code uses; peak: the most bytes live at once "
        "(a lower bound for the arena); total: all planned buffers without reuse (rung's memory "
        "plan). Peak RSS: the worker process's peak resident memory (`ru_maxrss`) after rung's "
        "compile (the ONNX model, the compiler's IR, the loaded library and its weights) and "
        "after timing (onnxruntime's and OpenVINO's sessions too).",
        "",
        "| model | arena | peak | total | peak RSS after compile | peak RSS after timing | note |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in records:
        plan = r.get("memory") or {}
        cols = [
            fmt(plan[k] / 2.0**20) if k in plan else "n/a"
            for k in ("arena_bytes", "peak_bytes", "total_bytes")
        ]
        rss = r.get("rss_bytes") or {}
        cols += [mib(rss.get("after compile")), mib(rss.get("after timing"))]
        note = status_note(r) if r.get("status") == "failed" and not plan else ""
        lines.append(f"| {r['name']} | {' | '.join(cols)} | {cell(note)} |")
    return lines


def render(
    records: Sequence[Record], env: Record, args: argparse.Namespace, summary: Record
) -> str:
    """The Markdown report."""
    specs = select(args.models, bench_models(), args.group)
    caps = [
        f"{s.name}: at most {s.max_repeat}"
        for s in specs
        if s.max_repeat and s.max_repeat < args.repeat
    ]
    capped = f" ({', '.join(caps)})" if caps else ""
    ok = sum(r.get("status") == "ok" for r in records)
    bad = {s: [r["name"] for r in records if r.get("status") == s] for s in ("mismatch", "failed")}
    ov_states = [(r.get("openvino") or {}).get("status") for r in records]
    if env["openvino"] == "n/a" or "unavailable" in ov_states:
        ov_line = f"- OpenVINO: the OpenVINO columns show – because {OV_MISSING}."
    else:
        ov_line = f"- OpenVINO {env['openvino']}: CPU device"
    exporters = ""
    if any(r.get("group") == "modern" for r in records):
        exporters = (
            f"- Modern models exported with torch {env['torch']}, torchvision "
            f"{env['torchvision']}, transformers {env['transformers']}"
        )
    lines = [
        "<!-- Generated by bench/run.py; do not edit. Regenerate: python bench/run.py -->",
        "",
        "# rung vs onnxruntime and OpenVINO",
        "",
        f"Generated by `python bench/run.py{options_text(args)}` on {env['date']}.",
        "",
        f"- CPU: {env['cpu']} ({env['cpus']} logical CPUs)",
        f"- rung {env['rung']} (git {env['rung_git']}), onnx {env['onnx']}, onnxruntime "
        f"{env['onnxruntime']}, numpy {env['numpy']}, xDSL {env['xdsl']}, Python {env['python']}",
        ov_line,
        *([exporters] if exporters else []),
        f"- C compiler: {env['compiler']}: {env['compiler_version']}; flags "
        f"`{env['compiler_flags']}` (+ `-fopenmp` where the model uses OpenMP)",
        f"- Load average (1 min): {fmt(env.get('load_start'))} at the start, "
        f"{fmt(env.get('load_end'))} at the end; OpenMP environment: "
        + (" ".join(f"`{k}={v}`" for k, v in env.get("openmp_env", {}).items()) or "default"),
        "",
        "Seeded random weights and inputs, the same for every runtime. Latency is per run, "
        "through each runtime's Python API; rung, onnxruntime (ORT) and OpenVINO (OV) take "
        f"turns in blocks of up to {BLOCK} back-to-back runs, the order reversing every round "
        f"(each block after a {PAUSE_S:g} s pause and {REWARM_S:g} s of untimed runs, at least "
        f"one), after {args.warmup} warm-up run(s), up to {args.repeat} runs or "
        f"{args.budget:g} s per model and thread count{capped}. onnxruntime: CPU provider, "
        "default graph optimizations, `intra_op_num_threads` = threads, "
        "`inter_op_num_threads` = 1, sequential execution; OpenVINO: CPU device, "
        "`INFERENCE_NUM_THREADS` = threads, `NUM_STREAMS` = 1, `PERFORMANCE_HINT` = LATENCY, "
        "`INFERENCE_PRECISION_HINT` = f32, one infer request; rung: "
        "`<prefix>_set_num_threads(threads)`. rung's and OpenVINO's outputs are checked "
        f"against onnxruntime once (rtol {RTOL:g}, atol {ATOL:g}). Ratios = rung median / "
        "the other's median (below 1: rung is faster). Groups: light (the onnx wheel's light "
        "models), small (mlp, cnn, transformer), modern (torchvision and transformers models).",
        "",
        f"{len(records)} model{'s' * (len(records) != 1)}: {ok} ok, {len(bad['mismatch'])} mismatched"
        + (f" ({', '.join(bad['mismatch'])})" if bad["mismatch"] else "")
        + f", {len(bad['failed'])} failed"
        + (f" ({', '.join(bad['failed'])})" if bad["failed"] else "")
        + ".",
    ]
    for n in args.threads:
        lines += render_latency(records, n, summary[str(n)])
    lines += render_status(records)
    lines += render_compile(records)
    lines += render_memory(records)
    return "\n".join(lines) + "\n"


def options_text(args: argparse.Namespace) -> str:
    """The options of this run that change its numbers (not the output path)."""
    parts = []
    if args.quick:
        parts.append("--quick")
    if args.models:
        parts.append(f"--models '{args.models}'")
    if tuple(args.group) != GROUPS:
        parts.append(f"--group {','.join(args.group)}")
    if not args.quick:
        parts.append(f"--repeat {args.repeat}")
    parts.append(f"--threads {','.join(map(str, args.threads))}")
    return "".join(f" {p}" for p in parts)


def driver_main(args: argparse.Namespace) -> int:
    everything = bench_models()
    specs = select(args.models, everything, args.group)
    if not specs:
        names = ", ".join(f"{s.name} ({s.group})" for s in everything)
        print(
            f"no model of {','.join(args.group)} matches '{args.models}'; the models are: {names}",
            file=sys.stderr,
        )
        return 2
    env = environment()
    print(f"benchmarking {len(specs)} model(s) on {env['cpu']}, threads {args.threads}")
    records = []
    for spec in specs:
        print(f"{spec.name} ...", flush=True)
        records.append(run_isolated(spec, args))
    env["load_end"] = load_average()
    summary = summarize(records, args.threads)
    output = Path(args.output)
    json_path = output.with_name("results.json")
    report = {
        "environment": env,
        "settings": {
            "quick": args.quick,
            "models": args.models,
            "groups": args.group,
            "repeat": args.repeat,
            "warmup": args.warmup,
            "budget_s": args.budget,
            "threads": args.threads,
            "seed": args.seed,
            "rtol": RTOL,
            "atol": ATOL,
        },
        "summary": summary,
        "models": records,
    }
    write_atomic(json_path, json.dumps(report, indent=1) + "\n")
    write_atomic(output, render(records, env, args, summary))
    for n in args.threads:
        for ratio in ("rung/ORT", "rung/OV"):
            means = summary[str(n)][ratio]
            print(
                f"{n} thread(s): geomean {ratio} "
                + ", ".join(
                    f"{group} {fmt(m['geomean'])} ({m['count']}/{m['total']})"
                    for group, m in means.items()
                    if m["total"]
                )
            )
    print(f"wrote {output} and {json_path.name}")
    return 0


def thread_list(text: str) -> list[int]:
    try:
        threads = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected thread counts such as 1,2, got '{text}'"
        ) from None
    if not threads or min(threads) < 1:
        raise argparse.ArgumentTypeError(f"thread counts must be positive, got '{text}'")
    return threads


def group_list(text: str) -> list[str]:
    groups = [g.strip() for g in text.split(",") if g.strip()]
    unknown = [g for g in groups if g not in GROUPS]
    if not groups or unknown:
        raise argparse.ArgumentTypeError(f"expected groups among {','.join(GROUPS)}, got '{text}'")
    return groups


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--models", help="regular expression of the model names to run")
    parser.add_argument(
        "--group",
        type=group_list,
        default=list(GROUPS),
        help=f"the groups of models to run (default {','.join(GROUPS)})",
    )
    parser.add_argument("--repeat", type=int, help="timed runs per runtime (default 20)")
    parser.add_argument("--warmup", type=int, help="warm-up runs per runtime (default 2)")
    parser.add_argument(
        "--budget", type=float, help="seconds of timed runs per model and thread count (default 30)"
    )
    parser.add_argument("--threads", type=thread_list, default=[1, 2], help="default 1,2")
    parser.add_argument(
        "--output",
        default=str(BENCH_DIR / "RESULTS.md"),
        help="the Markdown report; results.json goes next to it",
    )
    parser.add_argument("--quick", action="store_true", help="a smoke run: 3 runs, short budget")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--timeout",
        type=float,
        default=2400.0,
        help="seconds per model, its first export included (default 2400)",
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    quick = args.quick
    for name, normal, fast in (("repeat", 20, 3), ("warmup", 2, 1), ("budget", 30.0, 5.0)):
        if getattr(args, name) is None:
            setattr(args, name, fast if quick else normal)
    if args.repeat < 1 or args.warmup < 0 or args.budget < 0:
        parser.error("--repeat must be at least 1, --warmup and --budget not negative")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    return worker_main(args) if args.worker else driver_main(args)


if __name__ == "__main__":
    sys.exit(main())
