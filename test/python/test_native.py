"""The native runtime: the C compiler driver, its cache, loading, and input checking.

Each test gets its own empty cache folder (RUNG_CACHE_DIR), so "built" and
"found in the cache" are observable: through `native.STATS`, the library's
modification time, and a wrapper compiler that logs its calls.
"""

from __future__ import annotations

import ctypes
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from rung.errors import RungError
from rung.lowering.kernel_to_c import CProgram, generate_c
from rung.runtime import InferenceSession, native
from rung.runtime.levels import EvaluationError
from rung.runtime.native import CompileError, RungTensor

F = TensorProto.FLOAT


def add_relu_model(weight: np.ndarray | None = None) -> onnx.ModelProto:
    """y = relu(x + w): `w` an initializer, or a second input when None (then 2x3)."""
    shape = [2, 3] if weight is None else list(weight.shape)
    inputs = [helper.make_tensor_value_info("x", F, shape)]
    inits = []
    if weight is None:
        inputs.append(helper.make_tensor_value_info("w", F, shape))
    else:
        inits.append(numpy_helper.from_array(weight, "w"))
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["s"]), helper.make_node("Relu", ["s"], ["y"])],
        "add_relu",
        inputs,
        [helper.make_tensor_value_info("y", F, shape)],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


def program_of(model: onnx.ModelProto, prefix: str = "model") -> CProgram:
    session = InferenceSession(model, level="kernel")
    return generate_c(session.module, prefix)


@pytest.fixture(scope="module")
def program() -> object:
    return program_of(add_relu_model())


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("RUNG_CACHE_DIR", str(cache))
    monkeypatch.delenv("CC", raising=False)
    return cache


def wrapper_cc(folder: Path, body: str) -> Path:
    """A shell script standing in for the C compiler (it ends by running the real one)."""
    script = folder / "wrapper-cc"
    script.write_text("#!/bin/sh\n" + textwrap.dedent(body))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def model_entries(cache: Path) -> list[str]:
    """The cache's entries other than the runtime object's (`native.runtime_object`)."""
    return sorted(p.name for p in cache.iterdir() if not p.name.startswith("runtime-"))


def real_cc() -> str:
    for name in ("gcc", "cc", "clang"):
        for folder in os.environ.get("PATH", "").split(os.pathsep):
            if os.access(os.path.join(folder, name), os.X_OK):
                return os.path.join(folder, name)
    pytest.fail("no C compiler on PATH")


RNG = np.random.default_rng(7)


def inputs() -> list[np.ndarray]:
    return [RNG.standard_normal((2, 3)).astype(np.float32) for _ in range(2)]


# ---- the cache -------------------------------------------------------------------------------


def test_second_compile_is_a_cache_hit(program: object, fresh_cache: Path) -> None:
    before = native.STATS.builds
    first = native.compile_program(program)  # type: ignore[arg-type]
    assert native.STATS.builds == before + 1
    lib = first.folder / "libmodel.so"
    mtime = lib.stat().st_mtime_ns
    hits = native.STATS.hits
    second = native.compile_program(program)  # type: ignore[arg-type]
    assert native.STATS.builds == before + 1, "the second compile ran the compiler again"
    assert native.STATS.hits == hits + 1
    assert second.folder == first.folder and lib.stat().st_mtime_ns == mtime
    assert model_entries(fresh_cache) == [first.folder.name]  # no temp folders
    x, w = inputs()
    np.testing.assert_array_equal(second.run([x, w])[0], np.maximum(x + w, 0))


def test_a_changed_program_is_rebuilt(program: object) -> None:
    first = native.cached_build(program)  # type: ignore[arg-type]
    other = program_of(add_relu_model(), prefix="other")
    assert native.cached_build(other) != first


def dead_pid() -> int:
    """The pid of a process that has ended (and was reaped)."""
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_stale_build_folders_are_removed_by_the_next_build(
    program: object, fresh_cache: Path
) -> None:
    """A build killed by SIGKILL leaves its staging folder; the next build that misses the
    cache removes it, and only folders of exactly our pattern whose process is gone."""
    fresh_cache.mkdir()
    here, elsewhere = native._host_tag(), "0badc0de"
    tag = native.STAGING_TAG
    stale = [
        f".build.{tag}-{here}-{dead_pid()}-abcd_123",  # its process has ended
        f".build.{tag}-{elsewhere}-{os.getpid()}-abcdefgh",  # another machine's, but old
    ]
    kept = [
        f".build.{tag}-{here}-{os.getpid()}-abcdefgh",  # a live process: this one
        f".build.{tag}-{elsewhere}-{dead_pid()}-abcdefgh",  # another machine's, recent
        f".build.{tag}-{here}-{dead_pid()}-abcdefgh.x",  # not our exact pattern
        f".build-{dead_pid()}",
        ".build-abcdefgh",
    ]
    for name in stale + kept:
        (fresh_cache / name).mkdir()
    (fresh_cache / stale[0] / "model.c").write_text("half a build")
    old = os.stat(fresh_cache).st_mtime - native.STALE_AFTER - 60
    os.utime(fresh_cache / stale[1], (old, old))
    folder = native.cached_build(program)  # type: ignore[arg-type]
    assert model_entries(fresh_cache) == sorted([*kept, folder.name])


# ---- the compiler ----------------------------------------------------------------------------


def test_cc_is_honored(program: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "cc.log"
    cc = wrapper_cc(tmp_path, f'echo "$@" >> "{log}"\nexec "{real_cc()}" "$@"\n')
    monkeypatch.setenv("CC", str(cc))
    model = native.compile_program(program)  # type: ignore[arg-type]
    assert "model.c" in log.read_text()
    x, w = inputs()
    np.testing.assert_array_equal(model.run([x, w])[0], np.maximum(x + w, 0))


def test_cc_with_arguments(program: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC", f"{real_cc()} -DRUNG_TEST_FLAG=1")
    assert native.compiler()[1:] == ["-DRUNG_TEST_FLAG=1"]
    native.compile_program(program)  # type: ignore[arg-type]


def test_missing_cc_is_a_clear_error(program: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC", "/nonexistent/cc")
    with pytest.raises(CompileError, match=r"no C compiler: '/nonexistent/cc' was not found"):
        native.compile_program(program)  # type: ignore[arg-type]


def test_failing_cc_is_a_clear_error(
    program: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_cache: Path
) -> None:
    cc = wrapper_cc(
        tmp_path,
        f"""
        case "$*" in *model.c*) echo "model.c:1:1: error: something is wrong" >&2; exit 3;; esac
        exec {real_cc()} "$@"
        """,
    )
    monkeypatch.setenv("CC", str(cc))
    with pytest.raises(CompileError) as info:
        native.compile_program(program)  # type: ignore[arg-type]
    message = str(info.value)
    assert "failed (exit code 3) on model.c" in message
    assert "error: something is wrong" in message
    assert model_entries(fresh_cache) == [], "a failed build left files in the cache"


def test_failing_runtime_object_is_a_clear_error(
    program: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_cache: Path
) -> None:
    cc = wrapper_cc(tmp_path, 'echo "rung_runtime.c:1:1: error: no" >&2\nexit 4\n')
    monkeypatch.setenv("CC", str(cc))
    with pytest.raises(CompileError, match=r"failed \(exit code 4\) on rung_runtime.c"):
        native.compile_program(program)  # type: ignore[arg-type]
    assert not any(fresh_cache.iterdir()), "a failed build left files in the cache"


def test_the_runtime_object_is_built_once_and_linked(
    program: CProgram, fresh_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Optimized builds declare the runtime's entry points and link the cached object;
    another cache folder in the same process gets a copy, not a second build."""
    before = native.STATS.runtime_builds
    model = native.compile_program(program)
    objects = list(fresh_cache.glob("runtime-*/rung_runtime.o"))
    assert len(objects) == 1
    assert native.STATS.runtime_builds <= before + 1
    x, w = inputs()
    np.testing.assert_array_equal(model.run([x, w])[0], np.maximum(x + w, 0))
    other = fresh_cache.parent / "other-cache"
    monkeypatch.setenv("RUNG_CACHE_DIR", str(other))
    built = native.STATS.runtime_builds
    native.runtime_object(program.uses_openmp)
    assert native.STATS.runtime_builds == built
    assert (other / objects[0].parent.name / "rung_runtime.o").read_bytes() == (
        objects[0].read_bytes()
    )


def test_openmp_is_dropped_when_the_compiler_lacks_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cc = wrapper_cc(
        tmp_path,
        f"""\
        for arg in "$@"; do
          if [ "$arg" = -fopenmp ]; then echo "unsupported option -fopenmp" >&2; exit 1; fi
        done
        exec "{real_cc()}" "$@"
        """,
    )
    monkeypatch.setenv("CC", str(cc))
    assert "-fopenmp" not in native.build_flags(openmp=True)
    monkeypatch.setenv("CC", real_cc())
    assert "-fopenmp" in native.build_flags(openmp=True)
    assert "-fopenmp" not in native.build_flags(openmp=False)


def test_sanitizer_builds_are_not_loaded_into_python(program: object) -> None:
    with pytest.raises(CompileError, match="run_in_harness"):
        native.compile_program(program, debug=True)  # type: ignore[arg-type]


# ---- inputs ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (np.zeros((2, 3), np.float64), r"input 0 \('x'\) must be of float32, got float64"),
        (np.zeros((6,), np.float32), r"input 0 \('x'\) must have shape 2x3, got \[6\]"),
        (np.zeros((2, 4), np.float32), r"input 0 \('x'\) must have shape 2x3, got \[2, 4\]"),
    ],
    ids=["dtype", "rank", "static-dim"],
)
def test_bad_inputs_name_the_input(program: object, value: np.ndarray, message: str) -> None:
    model = native.compile_program(program)  # type: ignore[arg-type]
    with pytest.raises(EvaluationError, match=message):
        model.run([value, np.zeros((2, 3), np.float32)])


def test_wrong_number_of_inputs(program: object) -> None:
    model = native.compile_program(program)  # type: ignore[arg-type]
    with pytest.raises(EvaluationError, match=r"expected 2 inputs \('x', 'w'\), got 1"):
        model.run([np.zeros((2, 3), np.float32)])


def test_the_session_checks_inputs_by_name() -> None:
    session = InferenceSession(add_relu_model(), level="kernel")
    bad = {"x": np.zeros((2, 3), np.int32), "w": np.zeros((2, 3), np.float32)}
    with pytest.raises(RungError, match=r"input 'x': expected dtype float32"):
        session.run(None, bad)
    bad = {"x": np.zeros((2, 3), np.float32), "w": np.zeros((3, 3), np.float32)}
    with pytest.raises(RungError, match=r"input 'w': dimension 0 must be 2"):
        session.run(None, bad)


def test_the_library_itself_rejects_bad_inputs(program: object) -> None:
    """Called through its C ABI (as a C user would), the library checks inputs too."""
    model = native.compile_program(program)  # type: ignore[arg-type]
    x = np.zeros((2, 3), np.float32)
    ins = (RungTensor * 2)()
    for t in ins:
        t.data, t.dtype, t.rank = x.ctypes.data, 1, 2
        t.shape[0], t.shape[1] = 2, 3
    ins[1].dtype = 11  # double
    outs = (RungTensor * 1)()
    arena = np.empty(model.arena_bytes + 64, np.uint8)
    aligned = (arena.ctypes.data + 63) // 64 * 64
    assert model._run(ins, outs, aligned) != 0
    assert b"input 1 ('w')" in model._error()
    ins[1].dtype, ins[1].shape[1] = 1, 4
    assert model._run(ins, outs, aligned) != 0
    assert b"input 1 ('w'): dim 1 must be 3" in model._error()
    ins[1].shape[1] = 3
    assert model._run(ins, outs, aligned) == 0
    assert outs[0].rank == 2 and tuple(outs[0].shape[:2]) == (2, 3)
    model._free(outs[0].data)


def test_scalar_inputs_stay_scalars() -> None:
    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "k"], ["y"])],
        "scale",
        [helper.make_tensor_value_info("x", F, [3]), helper.make_tensor_value_info("k", F, [])],
        [helper.make_tensor_value_info("y", F, [3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    compiled = native.compile_program(program_of(model))
    x = np.array([1, 2, 3], np.float32)
    np.testing.assert_array_equal(compiled.run([x, np.float32(2)])[0], 2 * x)
    with pytest.raises(EvaluationError, match=r"input 1 \('k'\) must have shape a scalar"):
        compiled.run([x, np.array([2], np.float32)])


def test_runs_reuse_no_output_and_recover_from_a_failed_run(program: object) -> None:
    """A library reuses its input and output descriptors from run to run: each run's
    outputs are still arrays of their own, and a run that failed leaves nothing behind."""
    model = native.compile_program(program)  # type: ignore[arg-type]
    first_in, second_in = inputs(), inputs()
    first = model.run(first_in)[0]
    with pytest.raises(EvaluationError):
        model.run([first_in[0], np.zeros((2, 4), np.float32)])
    second = model.run(second_in)[0]
    for out, (x, w) in ((first, first_in), (second, second_in)):
        np.testing.assert_array_equal(out, np.maximum(x + w, 0))
        assert out.flags.owndata and out.flags.writeable
    first[...] = -1
    assert (second >= 0).all()
    # A non-contiguous input goes through the full check and a copy.
    x, w = inputs()
    strided = np.asfortranarray(x)
    np.testing.assert_array_equal(model.run([strided, w])[0], np.maximum(x + w, 0))


# ---- weights ---------------------------------------------------------------------------------


def test_large_weights_go_to_the_side_file(fresh_cache: Path) -> None:
    w = RNG.standard_normal((32, 64)).astype(np.float32)  # 8 KiB > the 4 KiB inline limit
    program = program_of(add_relu_model(w))
    assert len(program.weights) >= w.nbytes
    assert "weights file @" in program.source
    model = native.compile_program(program)
    assert (model.folder / "model.weights").stat().st_size == len(program.weights)
    x = RNG.standard_normal((32, 64)).astype(np.float32)
    np.testing.assert_array_equal(model.run([x])[0], np.maximum(x + w, 0))

    small = program_of(add_relu_model(w[:4, :8]))  # 128 bytes: inline
    assert small.weights == b"" and "weights file @" not in small.source


def test_missing_weights_file_is_a_clear_error(tmp_path: Path) -> None:
    w = RNG.standard_normal((32, 64)).astype(np.float32)
    program = program_of(add_relu_model(w), prefix="heavy")
    folder = native.cached_build(program)
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "libheavy.so").write_bytes((folder / "libheavy.so").read_bytes())
    with pytest.raises(EvaluationError, match="needs the path of its weights file"):
        native.NativeModel(copy, program)


# ---- concurrent builds -----------------------------------------------------------------------

CONCURRENT_BUILD = """
import os, sys, time
from pathlib import Path
import onnx
from rung.lowering.kernel_to_c import CProgram, generate_c
from rung.runtime import InferenceSession, native

barrier, index, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
program = generate_c(InferenceSession(onnx.load(sys.argv[4]), level="kernel").module)
(barrier / index).touch()
while len(list(barrier.iterdir())) < count:  # start compiling together
    time.sleep(0.01)
folder = native.cached_build(program)
print(folder)
"""


def test_concurrent_builds_of_one_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Processes racing to build the same cache entry all succeed, and leave one whole entry."""
    log = tmp_path / "cc.log"
    # A slow compiler, so that every process is still building when the others start.
    cc = wrapper_cc(tmp_path, f'echo run >> "{log}"\nsleep 1\nexec "{real_cc()}" "$@"\n')
    monkeypatch.setenv("CC", str(cc))
    model_path = tmp_path / "model.onnx"
    onnx.save(add_relu_model(), model_path)
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    count = 3
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                CONCURRENT_BUILD,
                str(barrier),
                str(i),
                str(count),
                str(model_path),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(count)
    ]
    results = [p.communicate(timeout=300) for p in procs]
    for proc, (_out, err) in zip(procs, results, strict=True):
        assert proc.returncode == 0, err
    folders = {out.strip() for out, _ in results}
    assert len(folders) == 1
    assert len(log.read_text().split()) >= 2, "the builds did not overlap"
    cache = Path(os.environ["RUNG_CACHE_DIR"])
    entries = sorted(p.name for p in cache.iterdir())
    runtime = [name for name in entries if name.startswith("runtime-")]
    assert len(runtime) == 1, entries  # the runtime object too was built once, whole
    assert (cache / runtime[0] / "rung_runtime.o").is_file()
    assert [name for name in entries if name not in runtime] == [Path(folders.pop()).name]
    model = native.compile_program(program_of(add_relu_model()))
    x, w = inputs()
    np.testing.assert_array_equal(model.run([x, w])[0], np.maximum(x + w, 0))


def test_ctypes_layout_matches_the_header() -> None:
    assert ctypes.sizeof(RungTensor) == 8 + 4 + 4 + 8 * native.MAX_RANK


def _relu_model(rows: int, cols: int) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, cols])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, cols])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def test_large_outputs_are_adopted_not_copied_and_outlive_their_views() -> None:
    """An output of ADOPT_BYTES or more is numpy's view of the buffer the model allocated;
    a slice keeps it alive after the array itself is gone, and it stays writable."""
    import gc

    rows = native.ADOPT_BYTES // (4 * 256)
    session = InferenceSession(_relu_model(rows, 256))
    x = np.random.default_rng(0).standard_normal((rows, 256)).astype(np.float32)
    (y,) = session.run(None, {"x": x})
    assert not y.flags.owndata and y.flags.writeable
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    part = y[3:5]
    del y
    gc.collect()
    (other,) = session.run(None, {"x": -x})  # a new buffer, not the one `part` views
    np.testing.assert_array_equal(part, np.maximum(x[3:5], 0))
    np.testing.assert_array_equal(other, np.maximum(-x, 0))
    part[:] = 7.0
    assert float(part.sum()) == 7.0 * part.size


def test_small_outputs_are_copied_into_arrays_numpy_owns() -> None:
    session = InferenceSession(_relu_model(4, 8))
    x = np.arange(32, dtype=np.float32).reshape(4, 8) - 16
    (y,) = session.run(None, {"x": x})
    assert y.flags.owndata
    np.testing.assert_array_equal(y, np.maximum(x, 0))


def test_half_types_never_use_half_precision_instructions() -> None:
    """Half types compute as float, rounded after each op, on every CPU: a build for a CPU
    with AVX512-FP16 turns its half-precision instructions off (they changed ONNX's fp16
    Attention results by an ulp); a compiler or CPU without the option builds as before."""
    flags = native.build_flags(False)
    if native._flag_supported(native.compiler(), native.NO_HALF_ARITHMETIC, quiet=True):
        assert native.NO_HALF_ARITHMETIC in flags
    else:
        assert native.NO_HALF_ARITHMETIC not in flags
    assert native.NO_HALF_ARITHMETIC not in native.build_flags(False, debug=True)
