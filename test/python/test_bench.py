"""The benchmark suite runs end to end: `bench/run.py --quick --models mlp` writes its tables.

The benchmark is run rarely and by hand, so this smoke test is what notices
when a change to rung (or to the script) breaks it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

RUN = Path(__file__).resolve().parents[2] / "bench" / "run.py"
NUMBER = r"\d+\.\d+"
CELL = r"(?:\d+\.\d+|–)"


def import_run() -> ModuleType:
    """bench/run.py as a module (it puts the bench folder on the path for its own imports)."""
    sys.path.insert(0, str(RUN.parent))
    try:
        import run
    finally:
        sys.path.remove(str(RUN.parent))
    return run


def run_quick_mlp(output: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(RUN), "--quick", "--models", "mlp", "--output", str(output)],
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def mlp_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, dict]:
    """One quick run of the mlp, shared by the tests that read its report."""
    folder = tmp_path_factory.mktemp("bench")
    output = folder / "RESULTS.md"
    proc = run_quick_mlp(output)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return folder, output.read_text(), json.loads((folder / "results.json").read_text())


def test_quick_benchmark_of_the_mlp_writes_a_table_with_a_ratio(mlp_report) -> None:
    folder, text, report = mlp_report
    assert "| model | group | rung ms |" in text
    # model, group, rung ms, IQR, ORT ms, IQR, OV ms, IQR (or dashes), rung/ORT, rung/OV, runs:
    # numbers where they must be, and no failure note.
    rows = re.findall(
        rf"^\| mlp \| small \| ({NUMBER}) \| {NUMBER} \| ({NUMBER}) \| {NUMBER} \| "
        rf"{CELL} \| {CELL} \| ({NUMBER}) \| {CELL} \| \d+ \|  \|$",
        text,
        re.MULTILINE,
    )
    assert len(rows) == 2, text  # one per thread count (1 and 2)
    for rung_ms, ort_ms, ratio in rows:
        assert float(rung_ms) > 0 and float(ort_ms) > 0 and float(ratio) > 0
    # The geometric means per group: the mlp is the only model, of the small group.
    means = re.findall(
        r"^\| rung/ORT \| – \| \*\*(\d+\.\d+)\*\* \(1 of 1\) \| – \| "
        r"\*\*(\d+\.\d+)\*\* \(1 of 1\) \|$",
        text,
        re.MULTILINE,
    )
    assert len(means) == 2 and all(small == every for small, every in means), text
    assert "| geometric mean | light | small | modern | all |" in text
    assert str(folder) not in text  # no machine paths in the report

    (mlp,) = report["models"]
    assert mlp["status"] == "ok", mlp
    assert mlp["group"] == "small"
    assert set(mlp["compile_s"]) == {
        "import",
        "lower-to-core",
        "lower-to-kernel",
        "C generation",
        "C compile",
    }
    assert mlp["check"]["ok"] and mlp["check"]["max_abs_err"] < 1e-3
    # The runtime object is built in the worker's fresh cache, timed apart from the stages.
    assert mlp["runtime_object_s"] > 0
    row = re.search(r"^\| mlp \| (.*) \|$", text.split("## Compile time")[1], re.M)
    assert row and float(row.group(1).split(" | ")[7]) == round(mlp["runtime_object_s"], 2)
    rss = mlp["rss_bytes"]
    assert 0 < rss["after compile"] <= rss["after timing"]
    assert mlp["memory"]["arena_bytes"] > 0
    assert set(report["summary"]["1"]["rung/ORT"]) == {"light", "small", "modern", "all"}


def test_quick_benchmark_of_the_mlp_times_openvino(mlp_report) -> None:
    pytest.importorskip("openvino")
    _, text, report = mlp_report
    rows = re.findall(
        rf"^\| mlp \| small \| {NUMBER} \| {NUMBER} \| {NUMBER} \| {NUMBER} \| ({NUMBER}) \| "
        rf"{NUMBER} \| {NUMBER} \| ({NUMBER}) \| \d+ \|  \|$",
        text,
        re.MULTILINE,
    )
    assert len(rows) == 2, text
    assert all(float(ov_ms) > 0 and float(ratio) > 0 for ov_ms, ratio in rows)
    assert re.search(r"^\| rung/OV \| – \| \*\*\d+\.\d+\*\* \(1 of 1\) \|", text, re.M), text
    (mlp,) = report["models"]
    ov = mlp["openvino"]
    assert ov["status"] == "ok", ov
    assert ov["check"]["ok"] and ov["compile_s"] > 0
    assert ov["properties"]["1"]["INFERENCE_NUM_THREADS"] == "1"
    assert report["summary"]["2"]["rung/OV"]["all"]["count"] == 1
    compile_row = re.search(r"^\| mlp \| (.*) \|$", text.split("## Compile time")[1], re.M)
    assert compile_row and compile_row.group(1).split(" | ")[6] != "–", text


def test_rung_is_timed_at_each_thread_count(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Every timed rung run asks for the thread count of its column. `NativeModel.run` sets
    the OpenMP count before each run (its default when given none), so a count set once on
    the library beforehand would be overridden, and "1 thread" would time every core."""
    from rung.runtime.native import NativeModel

    bench = import_run()
    asked: list[int] = []
    real_run = NativeModel.run

    def run(self: NativeModel, inputs: object, threads: int = 0) -> list[object]:
        asked.append(threads)
        return real_run(self, inputs, threads=threads)

    def once_each(runs: dict, **_: object) -> dict[str, list[float]]:
        return {name: [(fn(), 0.001)[1]] for name, fn in runs.items()}

    def no_openvino(self: object, *_: object) -> None:
        # OpenVINO's threads, started in this process, break the fuzz tests' later forks.
        self.record["openvino"] = {"status": "unavailable", "error": "not timed here"}  # type: ignore[attr-defined]

    monkeypatch.setattr(NativeModel, "run", run)
    monkeypatch.setattr(bench, "time_in_blocks", once_each)
    monkeypatch.setattr(bench.Worker, "_openvino", no_openvino)
    args = bench.parse_args(["--quick", "--threads", "1,2", "--models", "mlp"])
    args.result, args.prefix = str(tmp_path / "mlp.json"), "model"
    (spec,) = bench.select("^mlp$", bench.bench_models(), ["small"])
    worker = bench.Worker(spec, args)
    worker.run()
    assert worker.record["status"] == "ok", worker.record.get("error_detail")
    assert asked == [1, 1, 2], asked  # the check, then one timed run per thread count


def test_runtimes_are_timed_in_alternating_blocks() -> None:
    """Each runtime runs in blocks of back-to-back runs, the first run of each block untimed,
    who goes first alternating, until both have `repeat` samples."""
    bench = import_run()
    calls: list[str] = []
    runs = {"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}
    samples = bench.time_in_blocks(
        runs, repeat=7, warmup=1, budget_s=60, block=3, pause_s=0, rewarm_s=0
    )
    assert [len(v) for v in samples.values()] == [7, 7]
    # warm-up ab; then blocks of 1 untimed + 3 timed: a b | b a | a b (the last ones short)
    expected = ["a", "b"] + ["a"] * 4 + ["b"] * 4 + ["b"] * 4 + ["a"] * 4 + ["a"] * 2 + ["b"] * 2
    assert calls == expected


def test_three_runtimes_take_turns_in_blocks_the_order_reversing_each_round() -> None:
    """With rung, onnxruntime and OpenVINO: a b c, then c b a, then a b c, each block one
    untimed run then `block` timed ones, until every runtime has `repeat` samples."""
    bench = import_run()
    calls: list[str] = []
    runs = {name: (lambda name=name: calls.append(name)) for name in ("a", "b", "c")}
    samples = bench.time_in_blocks(
        runs, repeat=5, warmup=2, budget_s=60, block=2, pause_s=0, rewarm_s=0
    )
    assert [len(v) for v in samples.values()] == [5, 5, 5]
    blocks = [[name] * 3 for name in "abc" + "cba"] + [[name] * 2 for name in "abc"]
    assert calls == ["a", "b", "c"] * 2 + [call for block in blocks for call in block]


def test_the_modern_specs_list_ten_models_without_importing_torch() -> None:
    """The model list (and `--group`) needs neither torch nor transformers: only building a
    model does. Run in a fresh interpreter, where nothing else has imported torch."""
    script = f"""
import json, sys
sys.path.insert(0, {str(RUN.parent)!r})
import modern, run
specs = modern.specs()
picked = [s.name for s in run.select(None, run.bench_models(), ["modern"])]
print(json.dumps({{
    "specs": [[s.name, s.group] for s in specs],
    "picked": picked,
    "torch": "torch" in sys.modules or "transformers" in sys.modules,
}}))
"""
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    names = [name for name, _ in found["specs"]]
    assert names == [
        "efficientnet_b0",
        "mobilenet_v3_large",
        "regnet_y_400mf",
        "convnext_tiny",
        "vit_b_16",
        "swin_t",
        "deeplabv3_mobilenet_v3_large",
        "bert_base",
        "gpt2",
        "distilbert",
    ]
    assert {group for _, group in found["specs"]} == {"modern"}
    assert found["picked"] == names
    assert not found["torch"]


def test_every_bench_model_has_a_group() -> None:
    bench = import_run()
    groups = {s.name: s.group for s in bench.bench_models()}
    assert {name for name, g in groups.items() if g == "small"} == {"mlp", "cnn", "transformer"}
    assert sum(g == "light" for g in groups.values()) == 9
    assert sum(g == "modern" for g in groups.values()) == 10
    assert all(s.light == (s.group == "light") for s in bench.bench_models())


def test_a_modern_model_without_the_zoo_extra_fails_at_build_with_a_hint(monkeypatch) -> None:
    """Without torch or transformers a modern model cannot be exported: its build raises an
    error naming the extra to install (the report's row), not an ImportError traceback."""
    bench = import_run()
    monkeypatch.setattr(bench.modern, "missing_libraries", lambda model: ["torch"])
    (bert,) = [s for s in bench.bench_models() if s.name == "bert_base"]
    with pytest.raises(bench.modern.MissingExtra) as failure:
        bert.build(0)
    assert bench.first_line(failure.value) == (
        "MissingExtra: needs the zoo extra: pip install -e .[zoo] (missing torch)"
    )
