"""`rung.runtime.SessionOptions` and onnxruntime's session arguments, against onnxruntime.

An onnxruntime script must run on rung by changing its import only; thread counts
must reach the compiled code on every run (sessions share loaded libraries);
optimization levels must change the passes yet not the results.
"""

from __future__ import annotations

import ctypes
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import rung.runtime as rt
from rung.dialects import parse_module
from rung.errors import RungError
from rung.runtime import native

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "tiny_cnn.onnx"
SCRIPT = ROOT / "examples" / "ort_script.py"
RNG = np.random.default_rng(5)
LEVELS = list(rt.GraphOptimizationLevel)


@pytest.fixture(scope="module", autouse=True)
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> object:
    """One library cache for the module: sessions of equal C share a library, as in use."""
    mp = pytest.MonkeyPatch()
    mp.setenv("RUNG_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    yield
    mp.undo()


def mlp_model() -> onnx.ModelProto:
    """A batch of rows through MatMul, Add, Relu, MatMul, Softmax: fusible, parallel."""
    w1 = RNG.standard_normal((64, 128)).astype(np.float32) / 8
    b1 = RNG.standard_normal(128).astype(np.float32)
    w2 = RNG.standard_normal((128, 10)).astype(np.float32) / 11
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w1"], ["h"]),
            helper.make_node("Add", ["h", "b1"], ["a"]),
            helper.make_node("Relu", ["a"], ["r"]),
            helper.make_node("MatMul", ["r", "w2"], ["l"]),
            helper.make_node("Softmax", ["l"], ["y"], axis=-1),
        ],
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 10])],
        [numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (b1, "b1"), (w2, "w2"))],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    model.producer_name = "rung-tests"
    helper.set_model_props(model, {"purpose": "session options"})
    return model


def options(**settings: object) -> rt.SessionOptions:
    so = rt.SessionOptions()
    for name, value in settings.items():
        setattr(so, name, value)
    return so


# ---- the done-when script --------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["onnxruntime", "rung.runtime"])
def test_the_onnxruntime_script_runs_unchanged_but_for_its_import(
    backend: str, tmp_path: Path
) -> None:
    text = SCRIPT.read_text()
    assert text.count("import onnxruntime as ort\n") == 1
    script = tmp_path / "script.py"
    script.write_text(text.replace("import onnxruntime as ort\n", f"import {backend} as ort\n"))
    proc = subprocess.run(
        [sys.executable, str(script), str(EXAMPLE), "4"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    for threads in (1, 2):
        assert re.search(
            rf"^intra_op_num_threads={threads}: median [0-9.]+ ms \(batch 4\)$",
            proc.stdout,
            re.MULTILINE,
        ), proc.stdout


def test_the_onnxruntime_script_runs_as_it_is_under_the_launcher(tmp_path: Path) -> None:
    """`python -m rung.runtime.as_onnxruntime` runs the script without any edit, on rung:
    its sessions compile libraries into rung's cache."""
    cache = tmp_path / "cache"
    proc = subprocess.run(
        [sys.executable, "-m", "rung.runtime.as_onnxruntime", str(SCRIPT), str(EXAMPLE), "4"],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "RUNG_CACHE_DIR": str(cache)},
    )
    assert proc.returncode == 0, proc.stderr
    assert len(re.findall(r"^intra_op_num_threads=[12]: median", proc.stdout, re.M)) == 2
    assert list(cache.rglob("*.so")), "the script's sessions did not compile with rung"


def test_the_launcher_refuses_a_missing_script(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "rung.runtime.as_onnxruntime", str(tmp_path / "nope.py")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1 and "no such script" in proc.stderr


# ---- threads -----------------------------------------------------------------------------------


def omp_max_threads() -> int:
    """libgomp's thread count for this thread: what the next parallel region would use."""
    lib = ctypes.CDLL("libgomp.so.1")
    lib.omp_get_max_threads.restype = ctypes.c_int
    return int(lib.omp_get_max_threads())


def test_each_run_uses_its_own_sessions_thread_count() -> None:
    model = mlp_model()
    one = rt.InferenceSession(model, options(intra_op_num_threads=1))
    two = rt.InferenceSession(model, options(intra_op_num_threads=2))
    default = rt.InferenceSession(model)
    if not _uses_openmp(one):
        pytest.skip("the C compiler builds without OpenMP")
    # The same C: one library, loaded once, shared by the sessions.
    assert one._native.folder == two._native.folder == default._native.folder
    x = RNG.standard_normal((32, 64)).astype(np.float32)
    want = onnxruntime.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    for session, threads in [(one, 1), (two, 2), (one, 1), (default, native.default_threads())]:
        (got,) = session.run(None, {"x": x})
        assert omp_max_threads() == threads
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert one.threads == 1 and default.threads == 0
    assert one.get_session_options().intra_op_num_threads == 1


def _uses_openmp(session: rt.InferenceSession) -> bool:
    """Whether the session's library has parallel loops, built with -fopenmp."""
    assert session._native is not None
    sources = [p.read_text() for p in session._native.folder.glob("*.c")]
    return any("#pragma omp parallel" in s and " -fopenmp " in s for s in sources)


def test_threads_need_compiled_code() -> None:
    with pytest.raises(RungError, match="intra_op_num_threads=2: level 'core'"):
        rt.InferenceSession(mlp_model(), options(intra_op_num_threads=2), level="core")


def test_rung_compile_threads_become_the_librarys_default(tmp_path: Path) -> None:
    from rung.tools.cli import main

    path = tmp_path / "mlp.onnx"
    onnx.save(mlp_model(), path)
    assert main(["compile", str(path), "-o", str(tmp_path / "out"), "--threads", "3"]) == 0
    lib = tmp_path / "out" / "libmlp.so"
    if "-fopenmp" not in (tmp_path / "out" / "mlp.c").read_text().splitlines()[2]:
        pytest.skip("the C compiler builds without OpenMP")
    probe = (
        "import ctypes, sys; ctypes.CDLL(sys.argv[1]); g = ctypes.CDLL('libgomp.so.1'); "
        "print(g.omp_get_max_threads())"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe, str(lib)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "3"
    assert "rung compile --threads 3" in (tmp_path / "out" / "mlp.h").read_text()


# ---- optimization levels -----------------------------------------------------------------------


@pytest.mark.parametrize("level", LEVELS, ids=lambda lv: lv.name)
def test_every_optimization_level_matches_onnxruntime(level: rt.GraphOptimizationLevel) -> None:
    model = mlp_model()
    x = RNG.standard_normal((5, 64)).astype(np.float32)
    ort_options = onnxruntime.SessionOptions()
    ort_options.graph_optimization_level = getattr(onnxruntime.GraphOptimizationLevel, level.name)
    want = onnxruntime.InferenceSession(model.SerializeToString(), ort_options).run(None, {"x": x})
    got = rt.InferenceSession(model, options(graph_optimization_level=level)).run(None, {"x": x})
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)


def kernel_ops(session: rt.InferenceSession) -> list[str]:
    return [op.name for op in session.module.walk()]


def test_optimization_levels_change_the_passes() -> None:
    model = mlp_model()
    ops = {
        level: kernel_ops(rt.InferenceSession(model, options(graph_optimization_level=level)))
        for level in LEVELS
    }
    none, basic = ops[rt.GraphOptimizationLevel.ORT_DISABLE_ALL], ops[LEVELS[1]]
    extended, everything = ops[LEVELS[2]], ops[rt.GraphOptimizationLevel.ORT_ENABLE_ALL]
    # Fusion merges the loop nests of Add, Relu and Softmax's parts: fewer ops.
    assert len(extended) < len(basic)
    assert none != everything and basic != everything
    assert len(everything) < len(none)
    # The default is the default pipeline, as rung runs it without options.
    assert everything == kernel_ops(rt.InferenceSession(model))


def test_onnxruntime_enums_and_numbers_are_accepted() -> None:
    so = rt.SessionOptions()
    so.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
    assert so.graph_optimization_level is rt.GraphOptimizationLevel.ORT_ENABLE_BASIC
    so.graph_optimization_level = 0
    assert so.graph_optimization_level is rt.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    with pytest.raises(RungError, match="graph_optimization_level must be one of"):
        so.graph_optimization_level = 7


def test_onnxruntimes_own_options_object_is_taken_over(tmp_path: Path) -> None:
    """Code that builds `onnxruntime.SessionOptions` and hands it to rung's session gets
    the same settings, and what rung cannot honour is still refused."""
    theirs = onnxruntime.SessionOptions()
    theirs.intra_op_num_threads = 2
    theirs.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    theirs.optimized_model_filepath = str(tmp_path / "lowered.mlir")
    sess = rt.InferenceSession(mlp_model().SerializeToString(), theirs)
    ours = sess.get_session_options()
    assert isinstance(ours, rt.SessionOptions) and ours.intra_op_num_threads == 2
    assert ours.graph_optimization_level is rt.GraphOptimizationLevel.ORT_DISABLE_ALL
    assert sess.threads == 2 and (tmp_path / "lowered.mlir").read_text().startswith("builtin")
    theirs.execution_mode = onnxruntime.ExecutionMode.ORT_PARALLEL
    with pytest.raises(RungError, match="ORT_PARALLEL"):
        rt.InferenceSession(mlp_model().SerializeToString(), theirs)


# ---- the other options -------------------------------------------------------------------------


def test_optimized_model_is_written_as_mlir_and_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "lowered.mlir"
    out.write_text("old")
    session = rt.InferenceSession(mlp_model(), options(optimized_model_filepath=str(out)))
    text = out.read_text()
    assert "kernel." in text and not re.search(r"onnx\.[A-Z]", text)  # kernel ops, no onnx ops
    parse_module(text)  # reads back, weights included
    assert [p.name for p in tmp_path.iterdir()] == ["lowered.mlir"]  # no temporary file left
    assert session.get_session_options().optimized_model_filepath == str(out)


def test_optimized_model_in_a_missing_folder(tmp_path: Path) -> None:
    so = options(optimized_model_filepath=str(tmp_path / "no" / "m.mlir"))
    with pytest.raises(RungError, match="does not exist"):
        rt.InferenceSession(mlp_model(), so)


def test_log_severity_sets_rungs_logger(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("rung")
    saved = logger.level
    try:
        with caplog.at_level(logging.DEBUG, logger="rung"):
            rt.InferenceSession(mlp_model(), options(log_severity_level=0))
            assert logger.level == logging.DEBUG
            assert any("lowered the model to level kernel" in r.message for r in caplog.records)
        rt.InferenceSession(mlp_model(), options(log_severity_level=3))
        assert logger.level == logging.ERROR
    finally:
        logger.setLevel(saved)
        for handler in list(logger.handlers):
            logger.removeHandler(handler)


def test_providers() -> None:
    model = mlp_model()
    session = rt.InferenceSession(model, providers=["CPUExecutionProvider"])
    assert session.get_providers() == ["CPUExecutionProvider"]
    assert rt.get_available_providers() == ["CPUExecutionProvider"]
    rt.InferenceSession(model, providers=[("CPUExecutionProvider", {})])
    with pytest.raises(RungError, match="unsupported execution provider 'CUDAExecutionProvider'"):
        rt.InferenceSession(model, providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    with pytest.raises(RungError, match="no provider options"):
        rt.InferenceSession(model, providers=[("CPUExecutionProvider", {"arena": "1"})])


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("execution_mode", rt.ExecutionMode.ORT_PARALLEL, "only ORT_SEQUENTIAL"),
        ("inter_op_num_threads", 4, "one after another"),
        ("enable_profiling", True, "no per-node profiler"),
        ("enable_mem_pattern", False, "one reused arena"),
        ("enable_cpu_mem_arena", False, "one reused arena"),
        ("intra_op_num_threads", -1, "integer >= 0"),
        ("intra_op_num_threads", 1.5, "integer >= 0"),
        ("log_severity_level", 9, "one of -1, 0"),
    ],
)
def test_what_rung_cannot_honour_is_refused(name: str, value: object, message: str) -> None:
    with pytest.raises(RungError, match=message):
        setattr(rt.SessionOptions(), name, value)


def test_harmless_settings_are_stored_and_typos_are_errors() -> None:
    so = rt.SessionOptions()
    so.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    so.inter_op_num_threads = 1
    so.enable_mem_pattern = True
    so.use_deterministic_compute = True
    so.logid = "bench"
    so.add_session_config_entry("session.load_model_format", "ONNX")
    assert so.get_session_config_entry("session.load_model_format") == "ONNX"
    assert so.logid == "bench" and so.use_deterministic_compute
    with pytest.raises(AttributeError):
        so.intra_op_num_thread = 2  # type: ignore[attr-defined]
    with pytest.raises(RungError, match="sess_options must be"):
        rt.InferenceSession(mlp_model(), "core")  # type: ignore[arg-type]


def test_model_bytes_and_metadata() -> None:
    model = mlp_model()
    data = model.SerializeToString()
    ours = rt.InferenceSession(data).get_modelmeta()
    theirs = onnxruntime.InferenceSession(data).get_modelmeta()
    assert ours.producer_name == theirs.producer_name == "rung-tests"
    assert ours.custom_metadata_map == theirs.custom_metadata_map == {"purpose": "session options"}
    assert ours.graph_name == theirs.graph_name == "mlp"
