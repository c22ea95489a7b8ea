"""The fuzz harness (test/fuzz): it tells each outcome apart, and the CI mode finds nothing.

The harness tests use deliberately failing targets (a segfault, an abort, a
hang, a raw ValueError) so that a harness that stopped catching any of them
fails here. The short campaign is the CI mode of `python test/fuzz/run.py`:
fixed seed and counts, about two minutes; any traceback, signal or hang fails
the test, listing the findings with their reproducers.
"""

from __future__ import annotations

import mmap
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from rung.errors import RungError

TEST_DIR = Path(__file__).resolve().parent.parent
REPO = TEST_DIR.parent
sys.path.insert(0, str(TEST_DIR))

from fuzz import campaign, mutate, sandbox  # noqa: E402
from fuzz.sandbox import CliResult, Limits  # noqa: E402

FAST = Limits(timeout=2.0)


def _segfault() -> None:
    os.kill(os.getpid(), signal.SIGSEGV)


def _abort() -> None:
    os.abort()


def _hang() -> None:
    while True:
        time.sleep(0.05)


def _raw_value_error() -> None:
    raise ValueError("not a RungError")


def test_segfault_is_a_signal() -> None:
    outcome = sandbox.run_one(_segfault, FAST)
    assert outcome.kind == sandbox.SIGNAL
    assert outcome.exc_type == "SIGSEGV"
    assert "_segfault" in outcome.site


def test_abort_is_a_signal() -> None:
    outcome = sandbox.run_one(_abort, FAST)
    assert (outcome.kind, outcome.exc_type) == (sandbox.SIGNAL, "SIGABRT")


def _allocate_then_abort() -> None:
    block = bytearray(64 << 20)
    block[-1] = 1
    os.abort()


def test_the_memory_limit_counts_from_what_the_parent_holds() -> None:
    """A test process that has loaded torch and compiled models may hold more address space
    than a child's limit; the child may still allocate up to the limit (the abort is the
    target's own end)."""
    held = mmap.mmap(
        -1,
        5 << 30,
        flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS,
        prot=0,  # PROT_NONE: address space only, no memory
    )
    try:
        outcome = sandbox.run_one(_allocate_then_abort, FAST)
    finally:
        held.close()
    assert (outcome.kind, outcome.exc_type) == (sandbox.SIGNAL, "SIGABRT")


def test_hang_is_killed_and_reported() -> None:
    started = time.monotonic()
    outcome = sandbox.run_one(_hang, Limits(timeout=1.0))
    assert outcome.kind == sandbox.HANG
    assert "_hang" in outcome.site  # from the stack dumped at the deadline
    assert time.monotonic() - started < 10


def test_raw_exception_is_a_traceback() -> None:
    outcome = sandbox.run_one(_raw_value_error, FAST)
    assert outcome.kind == sandbox.TRACEBACK
    assert outcome.exc_type == "ValueError"
    assert "test_fuzz.py" in outcome.site and "_raw_value_error" in outcome.site
    assert "not a RungError" in outcome.detail


def test_rung_error_and_results_are_ok() -> None:
    def clean() -> None:
        raise RungError("bad input")

    assert sandbox.run_one(clean, FAST).kind == sandbox.OK
    assert sandbox.run_one(lambda: [1, 2], FAST).kind == sandbox.OK


@pytest.mark.parametrize(
    ("printed", "code", "kind"),
    [
        ("", 0, sandbox.OK),
        ("rung: error: the model is corrupt\n", 1, sandbox.OK),
        ("", 1, sandbox.TRACEBACK),  # exit 1 without an error line
        ("usage: ...\n", 2, sandbox.TRACEBACK),
        ('Traceback (most recent call last):\n  File "x.py", line 1, in f\nKeyError: 3\n', 1, "tb"),
        ("opt: error: internal error: KeyError: 3 (this is a bug in rung; ...)\n", 1, "tb"),
    ],
)
def test_cli_outcomes(printed: str, code: int, kind: str) -> None:
    def cli() -> CliResult:
        sys.stderr.write(printed)
        return CliResult(code)

    outcome = sandbox.run_one(cli, FAST)
    assert outcome.kind == (sandbox.TRACEBACK if kind == "tb" else kind), outcome
    if kind == "tb":
        assert outcome.exc_type == "KeyError"


def test_jobs_run_in_parallel_and_keep_order_of_indices() -> None:
    targets = [_raw_value_error, _segfault, lambda: None, _abort]
    found = dict(sandbox.run_all(iter(targets), FAST, jobs=2))
    kinds = [found[i].kind for i in range(4)]
    assert kinds == [sandbox.TRACEBACK, sandbox.SIGNAL, sandbox.OK, sandbox.SIGNAL]


# ---- mutations, reproducers and replay ------------------------------------------------


def _tiny_model(name: str, op: str) -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    graph = helper.make_graph([helper.make_node(op, ["x"], ["y"])], name, [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.fixture
def corpus(tmp_path: Path) -> object:
    from fuzz.seeds import Corpus

    found = Corpus(tmp_path / "seeds", onnx=["abs", "relu"], mlir=[("abs", "onnx")])
    for sub in ("onnx", "mlir", "feeds"):
        (found.folder / sub).mkdir(parents=True)
    for name, op in (("abs", "Abs"), ("relu", "Relu")):
        onnx.save(_tiny_model(name, op), str(found.onnx_path(name)))
    text = (
        "func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n  func.return %x : tensor<2xf32>\n}\n"
    )
    (found.folder / "mlir" / "abs.onnx.mlir").write_text(text)
    return found


def test_the_same_seed_draws_the_same_cases(corpus: object) -> None:
    def draw(seed: int, entry: str) -> list[object]:
        drawer = campaign.Drawer(corpus, 0)  # type: ignore[arg-type]
        make = getattr(drawer, f"make_{entry}")
        return [(c.seed, c.files, c.flags) for c in campaign.draw_batch(make, 0, 25, seed)]

    for entry in ("import", "opt", "compile"):
        first = draw(7, entry)
        assert len(first) == 25
        assert draw(7, entry) == first
        assert draw(8, entry) != first


def test_feed_edits_replay_exactly() -> None:
    base = {"x": np.arange(12, dtype=np.float32).reshape(3, 4), "i": np.array([0, 2], np.int64)}
    ops = [
        {"op": "layout", "name": "x", "seed": 1, "layout": "unaligned"},
        {"op": "values", "name": "i", "seed": 2, "value": "2**63-1", "where": "one"},
        {"op": "layout", "name": "i", "seed": 3, "layout": "byteswap"},
    ]
    feeds = mutate.apply_feed_ops(base, ops)
    assert isinstance(feeds, dict)
    assert not feeds["x"].flags.aligned
    np.testing.assert_array_equal(feeds["x"], base["x"])
    assert (feeds["i"] == 2**63 - 1).sum() == 1
    assert not feeds["i"].dtype.isnative
    again = mutate.apply_feed_ops(base, ops)
    assert again["i"].tobytes() == feeds["i"].tobytes()  # type: ignore[index]
    assert mutate.apply_feed_ops(base, [{"op": "container", "name": "x", "kind": "none"}]) is None


def test_invalid_utf8_stand_in_keeps_the_protobuf_valid() -> None:
    model = _tiny_model("g", "Abs")
    mutate._rename(model, "x", mutate.UTF8_MARK)
    blob = mutate.finish_model(model)
    assert mutate.UTF8_BAD in blob
    with pytest.raises(Exception):  # noqa: B017, PT011 - protobuf's own decode error
        onnx.ModelProto.FromString(blob).graph.input[0].name.encode()


def test_non_ok_outcomes_become_reproducers_that_replay(tmp_path: Path) -> None:
    model = _tiny_model("g", "Abs").SerializeToString()
    case = campaign.Case("import", 3, "abs", ["none"], {"input.onnx": model}, "input.onnx")
    outcome = sandbox.Outcome(sandbox.TRACEBACK, "ValueError: x", "ValueError", "a.py:1 in f")
    findings = campaign.Findings(tmp_path, keep=1)
    work = tmp_path / "work"
    campaign.write_case(case, work)
    findings.record(case, outcome, work, {})
    findings.record(case, sandbox.Outcome(sandbox.OK, "exit 0"), work, {})
    assert findings.counts["import"] == {"traceback": 1, "ok": 1}
    (group,) = findings.groups.values()
    folder = Path(group.reproducers[0][1])
    assert (folder / "input.onnx").read_bytes() == model
    assert "--replay" in (folder / "case.json").read_text()

    from fuzz import replay

    assert replay.replay(folder).kind == sandbox.OK  # the valid model imports cleanly
    result = subprocess.run(
        [sys.executable, str(TEST_DIR / "fuzz" / "run.py"), "--replay", str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "outcome: ok" in result.stdout


def test_delta_debugging_keeps_what_the_failure_needs() -> None:
    from fuzz.replay import _ddmin

    units = [bytes([i]) for i in range(64)]
    needed = {b"\x05", b"\x2a"}
    kept = _ddmin(units, lambda parts: needed <= set(parts), time.monotonic() + 30)
    assert set(kept) == needed


# ---- the CI campaign ----------------------------------------------------------------


def test_short_campaign_finds_no_crash(tmp_path: Path) -> None:
    out = tmp_path / "fuzz"
    result = subprocess.run(
        [sys.executable, str(TEST_DIR / "fuzz" / "run.py"), "--short", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=REPO,
    )
    summary = out / "summary.md"
    report = summary.read_text() if summary.is_file() else result.stdout + result.stderr
    assert result.returncode == 0, f"the fuzzer found failures:\n{report}"
