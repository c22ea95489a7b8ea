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

RUN = Path(__file__).resolve().parents[2] / "bench" / "run.py"
NUMBER = r"\d+\.\d+"


def test_quick_benchmark_of_the_mlp_writes_a_table_with_a_ratio(tmp_path: Path) -> None:
    output = tmp_path / "RESULTS.md"
    proc = subprocess.run(
        [sys.executable, str(RUN), "--quick", "--models", "mlp", "--output", str(output)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = output.read_text()
    assert "| model | rung ms |" in text
    # model, rung ms, rung IQR, ORT ms, ORT IQR, ratio: all numbers, and no failure note.
    rows = re.findall(
        rf"^\| mlp \| ({NUMBER}) \| {NUMBER} \| ({NUMBER}) \| {NUMBER} \| ({NUMBER}) \| \d+ \|  \|$",
        text,
        re.MULTILINE,
    )
    assert len(rows) == 2, text  # one per thread count (1 and 2)
    for rung_ms, ort_ms, ratio in rows:
        assert float(rung_ms) > 0 and float(ort_ms) > 0 and float(ratio) > 0
    assert "Geometric mean rung/ORT, all models: **" in text
    assert str(tmp_path) not in text  # no machine paths in the report

    report = json.loads((tmp_path / "results.json").read_text())
    (mlp,) = report["models"]
    assert mlp["status"] == "ok", mlp
    assert set(mlp["compile_s"]) == {
        "import",
        "lower-to-core",
        "lower-to-kernel",
        "C generation",
        "C compile",
    }
    assert mlp["check"]["ok"] and mlp["check"]["max_abs_err"] < 1e-3


def test_runtimes_are_timed_in_alternating_blocks() -> None:
    """Each runtime runs in blocks of back-to-back runs, the first run of each block untimed,
    who goes first alternating, until both have `repeat` samples."""
    sys.path.insert(0, str(RUN.parent))
    try:
        import run as bench
    finally:
        sys.path.remove(str(RUN.parent))
    calls: list[str] = []
    runs = {"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}
    samples = bench.time_in_blocks(
        runs, repeat=7, warmup=1, budget_s=60, block=3, pause_s=0, rewarm_s=0
    )
    assert [len(v) for v in samples.values()] == [7, 7]
    # warm-up ab; then blocks of 1 untimed + 3 timed: a b | b a | a b (the last ones short)
    expected = ["a", "b"] + ["a"] * 4 + ["b"] * 4 + ["b"] * 4 + ["a"] * 4 + ["a"] * 2 + ["b"] * 2
    assert calls == expected
