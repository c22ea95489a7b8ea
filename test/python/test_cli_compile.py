"""`rung compile`: the files it writes, that they rebuild without rung, and its errors.

Most tests call the command in-process (`main([...])`); one runs the real
executable to check the exit code and that no traceback escapes.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from rung.runtime import native
from rung.runtime.native import STAGES, NativeModel, compile_model
from rung.tools.cli import main

F = TensorProto.FLOAT
RNG = np.random.default_rng(11)
HEADERS = [
    "rung_gemm.h",
    "rung_math.h",
    "rung_nms.h",
    "rung_runtime.h",
    "rung_seq.h",
    "rung_sort.h",
    "rung_tensor.h",
]


def affine_model(w: np.ndarray) -> onnx.ModelProto:
    """y = relu(x * w + 1), `w` an initializer (large ones go to the .weights file)."""
    shape = list(w.shape)
    graph = helper.make_graph(
        [
            helper.make_node("Mul", ["x", "w"], ["m"]),
            helper.make_node("Add", ["m", "one"], ["a"]),
            helper.make_node("Relu", ["a"], ["y"]),
        ],
        "affine",
        [helper.make_tensor_value_info("x", F, shape)],
        [helper.make_tensor_value_info("y", F, shape)],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.float32(1.0), "one")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


SMALL_W = RNG.standard_normal((2, 3)).astype(np.float32)
LARGE_W = RNG.standard_normal((16, 128)).astype(np.float32)  # 8 KiB: beyond the inline limit


def expected(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return np.maximum(x * w + np.float32(1), 0)


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CC", raising=False)


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    path = tmp_path / "affine.onnx"
    onnx.save(affine_model(SMALL_W), path)
    return path


def rung(*args: object) -> int:
    return main([str(a) for a in args])


def leftovers(folder: Path) -> list[str]:
    """Temporary folders a compile left next to its output."""
    return [p.name for p in folder.iterdir() if p.name.startswith(".")]


# ---- what it writes --------------------------------------------------------------------------


def test_compile_writes_sources_and_library(
    model_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert rung("compile", model_file, "-o", out) == 0
    line = capsys.readouterr().out
    assert line.count("\n") == 1, line
    assert line.startswith(f"wrote {len(HEADERS) + 3} files to {out}: affine.c, affine.h, ")
    assert re.search(r"\(arena \d+ bytes, weights 0 bytes\)$", line.strip())
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["affine.c", "affine.h", "libaffine.so", *HEADERS]
    )
    assert leftovers(tmp_path) == []
    result = compile_model(model_file, tmp_path / "again")
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    got = NativeModel(out, result.program).run([x])[0]  # type: ignore[arg-type]
    np.testing.assert_allclose(got, expected(x, SMALL_W), rtol=1e-5, atol=1e-6)


def build_command(c_file: Path) -> list[str]:
    """The build command the generated file's header comment gives."""
    match = re.search(r"^ \* Build:\s+(.*)$", c_file.read_text(), re.M)
    assert match, "the .c file names no build command"
    return shlex.split(match.group(1))


@pytest.mark.parametrize("weights", [SMALL_W, LARGE_W], ids=["inline", "side-file"])
def test_plain_cc_rebuilds_the_library(tmp_path: Path, weights: np.ndarray) -> None:
    """Anyone can rebuild the library from the written files with the command in the .c."""
    model = tmp_path / "net.onnx"
    onnx.save(affine_model(weights), model)
    out = tmp_path / "out"
    result = compile_model(model, out, emit_only=True)
    assert not (out / "libnet.so").exists()
    assert (out / "net.weights").exists() == (weights is LARGE_W)
    cmd = build_command(out / "net.c")
    assert cmd[0] == "cc" and "net.c" in cmd and "libnet.so" in cmd
    proc = subprocess.run(cmd, cwd=out, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    x = RNG.standard_normal(weights.shape).astype(np.float32)
    got = NativeModel(out, result.program).run([x])[0]  # type: ignore[arg-type]
    np.testing.assert_allclose(got, expected(x, weights), rtol=1e-5, atol=1e-6)


def test_large_weights_are_a_side_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "big.onnx"
    onnx.save(affine_model(LARGE_W), model)
    out = tmp_path / "out"
    assert rung("compile", model, "-o", out) == 0
    line = capsys.readouterr().out
    size = (out / "big.weights").stat().st_size
    assert size >= LARGE_W.nbytes and f"weights {size} bytes" in line
    assert "big.weights" in line


def test_library_result_and_timings(
    model_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(native, "_RUNTIME_BUILT", {})  # as in a new process: nothing to copy
    result = compile_model(model_file, tmp_path / "out", prefix="net")
    # The first compile with a cache builds the runtime object, a stage of its own.
    assert list(result.timings) == [*STAGES[:-1], native.RUNTIME_STAGE, STAGES[-1]]
    again = compile_model(model_file, tmp_path / "again", prefix="net")
    assert list(again.timings) == list(STAGES)
    assert all(t >= 0 for t in result.timings.values())
    assert result.library == tmp_path / "out" / "libnet.so" and result.library.exists()
    assert result.harness is None and result.weights_bytes == 0
    assert [p.name for p in result.files] == ["net.c", "net.h", *HEADERS, "libnet.so"]
    emit = compile_model(model_file, tmp_path / "emit", emit_only=True)
    assert "C compile" not in emit.timings and emit.library is None


def test_print_timings(
    model_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    compile_model(model_file, tmp_path / "first")  # the runtime object is in the cache now
    capsys.readouterr()
    assert rung("compile", model_file, "-o", tmp_path / "out", "--print-timings") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"wrote {len(HEADERS) + 3} files")
    for stage, line in zip([*STAGES, "total"], lines[1:], strict=True):
        assert re.fullmatch(rf"  {stage} +\d+\.\d{{3}} s", line), line


def test_emit_only(model_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert rung("compile", model_file, "-o", out, "--emit-only") == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(["affine.c", "affine.h", *HEADERS])
    assert f"wrote {len(HEADERS) + 2} files" in capsys.readouterr().out


def test_prefix(model_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert rung("compile", model_file, "-o", out, "--prefix", "my_net") == 0
    assert (out / "libmy_net.so").exists() and (out / "my_net.h").exists()
    assert "int my_net_run(" in (out / "my_net.h").read_text()


@pytest.mark.parametrize("prefix", ["gemm", "runtime", "seq", "sort", "nms", "tensor"])
def test_prefix_named_like_a_runtime_header(model_file: Path, tmp_path: Path, prefix: str) -> None:
    """A model's header guard must not shadow the runtime header of the same name."""
    out = tmp_path / "out"
    assert rung("compile", model_file, "-o", out, "--prefix", prefix) == 0
    assert (out / f"lib{prefix}.so").exists()


@pytest.mark.parametrize(
    ("file_name", "prefix"),
    [
        ("my-net.v2.onnx", "my_net_v2"),
        ("3d.onnx", "m_3d"),
        ("model.onnxtxt", "model"),
        ("rung_sort.onnx", "m_rung_sort"),
    ],
)
def test_default_prefix_is_a_c_identifier(file_name: str, prefix: str) -> None:
    assert native.default_prefix(file_name) == prefix


@pytest.mark.parametrize("level", ["onnxtxt", "onnx-mlir", "core-mlir", "kernel-mlir"])
def test_models_at_every_level(level: str, model_file: Path, tmp_path: Path) -> None:
    """`.onnxtxt`, and `.mlir` of the onnx, core or kernel dialect, compile alike."""
    from rung.dialects import print_module
    from rung.importers.onnx import import_model
    from rung.runtime.levels import lower

    if level == "onnxtxt":
        path = tmp_path / "net.onnxtxt"
        path.write_text(onnx.printer.to_text(affine_model(SMALL_W)))
    else:
        module = import_model(model_file)
        if level != "onnx-mlir":
            module = lower(module, "core" if level == "core-mlir" else "kernel")
        path = tmp_path / "net.mlir"
        path.write_text(print_module(module))
    result = compile_model(path, tmp_path / "out")
    assert result.prefix == "net"
    if level in ("core-mlir", "kernel-mlir"):
        assert result.timings["lower-to-core"] == 0.0
    if level == "kernel-mlir":
        assert result.timings["lower-to-kernel"] == 0.0
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    got = NativeModel(result.outdir, result.program).run([x])[0]  # type: ignore[arg-type]
    np.testing.assert_allclose(got, expected(x, SMALL_W), rtol=1e-5, atol=1e-6)


def test_debug_build_has_a_sanitized_harness(model_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = compile_model(model_file, out, debug=True)
    assert result.harness == out / "affine_harness"
    assert (out / "rung_harness.c").exists()
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    (tmp_path / "x.bin").write_bytes(x.tobytes())
    (tmp_path / "res").mkdir()
    proc = subprocess.run(
        [
            str(result.harness),
            "-n",
            "2",
            "-o",
            str(tmp_path / "res"),
            f"1:2x3:{tmp_path / 'x.bin'}",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, **native.SANITIZER_ENV},
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "res" / "manifest.txt").read_text() == "0 1 2 2 3 output_0.bin\n"
    got = np.frombuffer((tmp_path / "res" / "output_0.bin").read_bytes(), np.float32)
    np.testing.assert_allclose(got.reshape(2, 3), expected(x, SMALL_W), rtol=1e-5, atol=1e-6)
    nm = subprocess.run(["nm", str(out / "libaffine.so")], capture_output=True, text=True)
    assert nm.returncode != 0 or "__asan" in nm.stdout


# ---- existing files --------------------------------------------------------------------------


def test_existing_files_are_not_overwritten(
    model_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "affine.c").write_text("my own file\n")
    (out / "notes.txt").write_text("unrelated\n")
    assert rung("compile", model_file, "-o", out) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"rung: error: '{out}' already holds affine.c; use --force")
    assert (out / "affine.c").read_text() == "my own file\n"
    assert sorted(p.name for p in out.iterdir()) == ["affine.c", "notes.txt"]
    assert leftovers(tmp_path) == []

    assert rung("compile", model_file, "-o", out, "--force") == 0
    assert "my own file" not in (out / "affine.c").read_text()
    assert (out / "notes.txt").read_text() == "unrelated\n"


def test_force_removes_stale_files_of_the_prefix(tmp_path: Path) -> None:
    big = tmp_path / "net.onnx"
    onnx.save(affine_model(LARGE_W), big)
    out = tmp_path / "out"
    compile_model(big, out)
    assert (out / "net.weights").exists()
    onnx.save(affine_model(SMALL_W), big)
    compile_model(big, out, force=True, emit_only=True)
    assert not (out / "net.weights").exists() and not (out / "libnet.so").exists()


# ---- errors ----------------------------------------------------------------------------------


def check_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: object) -> str:
    out = tmp_path / "out"
    assert rung("compile", *args, "-o", out) == 1
    err = capsys.readouterr().err
    assert err.startswith("rung: error: ") and "Traceback" not in err
    assert not out.exists(), "a failed compile created its output folder"
    assert leftovers(tmp_path) == []
    return err


def test_corrupt_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07garbage that is not a model")
    assert "bad.onnx" in check_error(tmp_path, capsys, bad)


def test_missing_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "nope.onnx" in check_error(tmp_path, capsys, tmp_path / "nope.onnx")


def test_op_without_a_kernel_lowering(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    graph = helper.make_graph(
        [helper.make_node("Frob", ["x"], ["y"], domain="com.example")],
        "g",
        [helper.make_tensor_value_info("x", F, [2])],
        [helper.make_tensor_value_info("y", F, [2])],
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.example", 1)],
        ir_version=10,
    )
    path = tmp_path / "custom.onnx"
    onnx.save(model, path)
    err = check_error(tmp_path, capsys, path)
    assert "Frob" in err and "custom.onnx" in err


def test_missing_compiler(
    model_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CC", "/nonexistent/cc")
    err = check_error(tmp_path, capsys, model_file)
    assert "no C compiler: '/nonexistent/cc' was not found" in err


def test_failing_compiler(
    model_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CC", "false")
    err = check_error(tmp_path, capsys, model_file)
    # The runtime object is built first (once per machine and compiler).
    assert "the C compiler" in err and "failed (exit code 1) on rung_runtime.c" in err


@pytest.mark.parametrize("prefix", ["1net", "my-net", "né", "", "rung_sort", "RUNG_x"])
def test_invalid_prefix(
    model_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], prefix: str
) -> None:
    err = check_error(tmp_path, capsys, model_file, "--prefix", prefix)
    assert f"invalid prefix '{prefix}'" in err


def test_output_is_a_file(
    model_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "file"
    target.write_text("x")
    assert rung("compile", model_file, "-o", target) == 1
    assert "exists and is not a folder" in capsys.readouterr().err
    assert rung("compile", model_file, "-o", tmp_path / "no" / "such" / "dir") == 1
    assert "does not exist" in capsys.readouterr().err


def test_the_real_command(model_file: Path, tmp_path: Path) -> None:
    rung_bin = Path(sys.executable).with_name("rung")
    ok = subprocess.run(
        [str(rung_bin), "compile", str(model_file), "-o", str(tmp_path / "out")],
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith(f"wrote {len(HEADERS) + 3} files")
    bad = subprocess.run(
        [str(rung_bin), "compile", str(model_file), "-o", str(tmp_path / "out")],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert bad.stderr.startswith("rung: error: ")


# ---- staging folders -------------------------------------------------------------------------


def staging_folders(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if native.STAGING_TAG in p.name]


def start_hanging_compile(model: Path, out: Path, tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    """`rung compile` in a process of its own, stopped in the C compiler (a script that
    never compiles), so that it is killed while its staging folder exists."""
    marker = tmp_path / "cc-started"
    cc = tmp_path / "hanging-cc"
    cc.write_text(f"#!/bin/sh\ntouch '{marker}'\nexec sleep 120\n")
    cc.chmod(0o755)
    env = {**os.environ, "CC": str(cc), "RUNG_CACHE_DIR": str(tmp_path / "cache")}
    rung_bin = Path(sys.executable).with_name("rung")
    proc = subprocess.Popen(
        [str(rung_bin), "compile", str(model), "-o", str(out)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while not marker.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            pytest.fail(f"the compile did not reach the C compiler: {proc.stderr.read()}")  # type: ignore[union-attr]
        time.sleep(0.05)
    return proc, marker


def test_a_killed_compile_leaves_a_folder_the_next_run_removes(
    model_file: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    proc, _ = start_hanging_compile(model_file, work / "out", tmp_path)
    assert len(staging_folders(work)) == 1
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    [stale] = staging_folders(work)
    assert stale.startswith(".out.")
    # Look-alikes that are not a stale staging folder of ours all stay.
    live = f".out.{native.STAGING_TAG}-{native._host_tag()}-{os.getpid()}-abcdefgh"
    keep = [".out.keep", live, stale + "x", stale.replace(native.STAGING_TAG, "rung-stage")]
    for name in keep:
        (work / name).mkdir()
    (work / stale.replace(".out.", ".file.", 1)).write_text("a file, not a folder")
    assert rung("compile", model_file, "-o", work / "out") == 0
    assert stale not in leftovers(work)
    assert set(keep) <= set(leftovers(work))
    assert (work / "out" / "libaffine.so").exists()


@pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGTERM, -signal.SIGTERM), (signal.SIGINT, 130)]
)
def test_sigterm_and_ctrl_c_remove_the_staging_folder(
    model_file: Path, tmp_path: Path, signum: int, code: int
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    proc, _ = start_hanging_compile(model_file, work / "out", tmp_path)
    assert len(staging_folders(work)) == 1
    try:
        proc.send_signal(signum)
        proc.wait(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # the compiler script, if still there
    assert proc.returncode == code, proc.stderr.read()  # type: ignore[union-attr]
    assert leftovers(work) == []
    assert not (work / "out").exists()


@pytest.mark.parametrize("error", [RuntimeError("the build broke"), KeyboardInterrupt()])
def test_an_exception_during_compile_leaves_nothing(
    model_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: BaseException
) -> None:
    def broken_build(*args: object, **kwargs: object) -> Path:
        raise error

    monkeypatch.setattr(native, "build_library", broken_build)
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(type(error)):
        compile_model(model_file, work / "out")
    assert leftovers(work) == [] and not (work / "out").exists()
    (work / "out").mkdir()  # an existing output folder: staged beside it, left as it was
    with pytest.raises(type(error)):
        compile_model(model_file, work / "out")
    assert leftovers(work) == [] and list((work / "out").iterdir()) == []
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
