"""What every command owes its user: no silent overwrite of `-o`, targets that work,
described passes, and a display of progress on a terminal only.
"""

from __future__ import annotations

import importlib.util
import io
import os
import pty
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "tiny_cnn.onnx"
MLIR = """func.func @twice(%a: i32) -> i32 {
  %b = arith.addi %a, %a : i32
  %c = arith.addi %a, %a : i32
  func.return %b : i32
}
"""


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)


def small_model(path: Path) -> Path:
    w = np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Relu", ["m"], ["y"])],
        "small",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        [numpy_helper.from_array(w, "w")],
    )
    onnx.save(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10), path
    )
    return path


def command(tool: str, *args: object) -> list[str]:
    module = "rung.tools.opt" if tool == "opt" else "rung.tools.cli"
    return [sys.executable, "-m", module, *(str(a) for a in args)]


def run(tool: str, *args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command(tool, *args), capture_output=True, text=True, timeout=600)


def run_in_terminal(tool: str, *args: object) -> tuple[int, str, str]:
    """Run with stderr on a pseudo-terminal: (exit code, stdout, what the terminal showed)."""
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "120", "TERM": "xterm"}
    proc = subprocess.Popen(
        command(tool, *args),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=slave,
        env=env,
    )
    os.close(slave)
    shown = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # the other end closed
            break
        if not data:
            break
        shown.append(data)
    assert proc.stdout is not None
    out = proc.stdout.read().decode()
    code = proc.wait(timeout=600)
    os.close(master)
    return code, out, b"".join(shown).decode(errors="replace")


# ---- -o never overwrites without --force ---------------------------------------------------------


def refused(result: subprocess.CompletedProcess[str], path: str) -> None:
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert path in lines[0] and "--force" in lines[0], lines[0]
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("tool", "args", "target"),
    [
        ("rung", ["import", "{model}", "-o", "out.mlir"], "out.mlir"),
        ("rung", ["run", "{model}", "--random-inputs", "-o", "out.npz"], "out.npz"),
        ("rung", ["run", "{model}", "--random-inputs", "--output-dir", "d"], "d/y.npy"),
        ("rung", ["compile", "{model}", "-o", "c"], "c/small.c"),
        ("opt", ["{mlir}", "-p", "cse", "-o", "out.mlir"], "out.mlir"),
        ("rung", ["conformance", "--filter", "^test_relu$", "--output", "board.md"], "board.md"),
        ("rung", ["conformance", "--filter", "^test_relu$", "--output", "b.md"], "b.json"),
    ],
)
def test_an_existing_output_is_refused_without_force(
    tool: str, args: list[str], target: str, tmp_path: Path
) -> None:
    model = small_model(tmp_path / "small.onnx")
    (tmp_path / "in.mlir").write_text(MLIR)
    (tmp_path / target).parent.mkdir(exist_ok=True)
    (tmp_path / target).write_text("precious")
    argv = [a.format(model=model, mlir="in.mlir") for a in args]
    result = run(tool, *argv)
    refused(result, target.removeprefix("c/"))  # compile names the file in its folder
    assert (tmp_path / target).read_text() == "precious"


@pytest.mark.parametrize(
    ("tool", "args", "target"),
    [
        ("rung", ["import", "{model}", "-o", "out.mlir"], "out.mlir"),
        ("rung", ["run", "{model}", "--random-inputs", "-o", "out.npz"], "out.npz"),
        ("opt", ["{mlir}", "-p", "cse", "-o", "out.mlir"], "out.mlir"),
    ],
)
def test_force_overwrites(tool: str, args: list[str], target: str, tmp_path: Path) -> None:
    model = small_model(tmp_path / "small.onnx")
    (tmp_path / "in.mlir").write_text(MLIR)
    (tmp_path / target).write_text("old")
    result = run(tool, *[a.format(model=model, mlir="in.mlir") for a in args], "--force")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / target).read_bytes() != b"old"


# ---- opt's targets -------------------------------------------------------------------------------


def test_help_offers_only_working_targets() -> None:
    result = run("opt", "--help")
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    assert "mlir,riscv-asm,x86-asm,arm-asm,llvm,c" in text
    assert "wat" not in text and "wgsl" not in text


@pytest.mark.parametrize("target", ["wat", "wgsl", "mps"])
def test_unfinished_targets_are_refused(target: str, tmp_path: Path) -> None:
    (tmp_path / "in.mlir").write_text(MLIR)
    result = run("opt", "in.mlir", "-t", target)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith(f"opt: error: argument -t/--target: invalid choice: '{target}'")


@pytest.mark.skipif(
    importlib.util.find_spec("llvmlite") is not None, reason="llvmlite is installed"
)
def test_llvm_without_llvmlite_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "in.mlir").write_text(MLIR)
    result = run("opt", "in.mlir", "-t", "llvm")
    assert result.returncode == 1
    assert result.stderr == (
        "opt: error: target 'llvm' needs the optional package llvmlite: pip install llvmlite\n"
    )


# ---- pass descriptions ---------------------------------------------------------------------------


def test_every_pass_has_a_description() -> None:
    from rung.lowering.pipelines import default_registry

    rows = list(default_registry().describe())
    passes = [(name, text) for kind, name, text in rows if kind == "pass"]
    assert len(passes) > 100
    for name, text in passes:
        description = text.rsplit(" (", 1)[0].strip()
        assert description and description != "(no description)", name
    result = run("opt", "--list-passes")
    assert result.returncode == 0 and "(no description)" not in result.stdout
    assert "kernel-fuse-elementwise" in result.stdout


# ---- progress ------------------------------------------------------------------------------------


def test_compile_shows_its_stages_on_a_terminal(tmp_path: Path) -> None:
    model = small_model(tmp_path / "small.onnx")
    code, out, shown = run_in_terminal("rung", "compile", model, "-o", "c", "--print-timings")
    assert code == 0, shown
    for stage in ("import", "lower-to-core", "lower-to-kernel", "C generation", "C compile"):
        assert stage in shown
    assert "1/1" in shown  # the translation units compiled
    assert "\x1b[" in shown  # drawn for a terminal
    assert "wrote" in out and "C compile" in out  # stdout as ever, timings included


def test_run_shows_its_stages_on_a_terminal(tmp_path: Path) -> None:
    model = small_model(tmp_path / "small.onnx")
    code, out, shown = run_in_terminal("rung", "run", model, "--random-inputs")
    assert code == 0, shown
    for stage in ("import", "lower-to-core", "lower-to-kernel", "C compile", "run"):
        assert stage in shown
    assert out.startswith("y: tensor(float) shape (2, 4)")


def test_view_and_export_show_their_stages_on_a_terminal(tmp_path: Path) -> None:
    model = small_model(tmp_path / "small.onnx")
    code, _, shown = run_in_terminal(
        "rung", "view", model, "--level", "kernel", "-o", tmp_path / "v.html"
    )
    assert code == 0, shown
    for stage in ("import", "lower-to-core", "lower-to-kernel", "write page"):
        assert stage in shown
    code, _, shown = run_in_terminal("rung", "export", model, "-o", tmp_path / "e.onnx")
    assert code == 0, shown
    for stage in ("import", "lower-to-core", "export"):
        assert stage in shown


def test_opt_shows_its_passes_on_a_terminal(tmp_path: Path) -> None:
    model = small_model(tmp_path / "small.onnx")
    code, out, shown = run_in_terminal("opt", model, "-p", "lower-to-kernel")
    assert code == 0, shown
    assert "passes" in shown and "read" in shown
    assert "kernel." in out


def chain_model(relus: int) -> onnx.ModelProto:
    """MatMul then `relus` Relus: a model whose op counts at each level are known."""
    w = np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["r0"])]
    nodes += [helper.make_node("Relu", [f"r{i}"], [f"r{i + 1}"]) for i in range(relus)]
    graph = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info(f"r{relus}", TensorProto.FLOAT, [2, 4])],
        [numpy_helper.from_array(w, "w")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


def test_lowering_progress_counts_the_ops_converted() -> None:
    """Each lowering stage's bar counts ops once its op-by-op conversion starts: the ONNX
    nodes (plus the weight's constant) for core, the top-level core ops for kernel."""
    from rung.importers.onnx import import_model
    from rung.runtime.levels import lower_reporting

    seen: list[tuple[str, int, int | None]] = []
    module = import_model(chain_model(300))
    onnx_ops = sum(op.name.startswith("onnx.") for op in module.walk())
    lower_reporting(module, "kernel", progress=lambda *report: seen.append(report))
    core = [(done, total) for stage, done, total in seen if stage == "lower-to-core"]
    kernel = [(done, total) for stage, done, total in seen if stage == "lower-to-kernel"]
    assert (onnx_ops, onnx_ops) in core and onnx_ops > 300
    assert any(0 < done < total == onnx_ops for done, total in core)  # counted as it went
    assert len(core) <= 110  # at most about a hundred reports, however large the model
    ops_totals = {total for _, total in kernel if total and total > 300}
    assert len(ops_totals) == 1  # one count of core ops, reported from 0 to all
    (ops,) = ops_totals
    assert (0, ops) in kernel and (ops, ops) in kernel
    # Once ops are counted, the stage's pass count (a small total) no longer shows.
    first = kernel.index((0, ops))
    assert all(total == ops for _, total in kernel[first:])


def test_a_pipe_shows_no_progress(tmp_path: Path) -> None:
    model = small_model(tmp_path / "small.onnx")
    for tool, args in [
        ("rung", ["compile", model, "-o", "c"]),
        ("rung", ["run", model, "--random-inputs", "--threads", "2", "--print-timings"]),
        ("opt", [model, "-p", "lower-to-kernel"]),
        ("rung", ["view", model, "--level", "kernel", "-o", tmp_path / "v.html"]),
        ("rung", ["export", model, "-o", tmp_path / "e.onnx"]),
    ]:
        result = run(tool, *args)
        assert result.returncode == 0, result.stderr
        assert result.stderr == ""


def test_run_timings_name_the_thread_count(tmp_path: Path) -> None:
    model = small_model(tmp_path / "small.onnx")
    for threads in (1, 2):
        result = run(
            "rung", "run", model, "--random-inputs", "--threads", threads, "--print-timings"
        )
        assert result.returncode == 0, result.stderr
        label = "run (1 thread)" if threads == 1 else "run (2 threads)"
        assert label in result.stdout
        assert "lower-to-kernel" in result.stdout and "total" in result.stdout


def test_progress_display_draws_each_stage() -> None:
    from rich.console import Console

    from rung.tools.common import progress_display

    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=100)
    with progress_display(console) as show:
        assert show is not None
        show("lower-to-core", 0, 3)
        show("lower-to-core", 3, 3)
        show("C compile", 0, 1)
    text = buffer.getvalue()
    assert "lower-to-core" in text and "3/3" in text and "C compile" in text


def test_progress_display_is_off_without_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    from rung.tools.common import progress_display

    with progress_display() as show:
        assert show is None
    assert capsys.readouterr().err == ""
