"""Nests that share their work among OpenMP threads give onnxruntime's results on 1, 2 and 3
threads: a max pool reducing each output point's window, its channels shared among the
threads, and the conv of a 3-channel image by shifted rows, whose output rows the runtime
shares out itself."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from rung.lowering.kernel_to_c import generate_c
from rung.runtime import InferenceSession, SessionOptions
from rung.runtime.levels import lower
from rung.runtime.session import load_module


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNG_CACHE_DIR", str(tmp_path / "cache"))


def conv_pool_model() -> onnx.ModelProto:
    """Conv 3 -> 32 channels (by shifted rows), ReLU, max pool 2x2 stride 2."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((32, 3, 3, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(32).astype(np.float32), "b")
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2]),
    ]
    graph = helper.make_graph(
        nodes,
        "conv_pool",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 96, 96])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32, 48, 48])],
        initializer=[w, b],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_the_pool_runs_on_threads_and_the_conv_is_the_runtime_s() -> None:
    """The runtime's conv by shifted rows shares its output rows among the threads itself
    (rung_gemm.h), with the bias and ReLU as its epilogue."""
    module = lower(load_module(conv_pool_model()), "kernel")
    source = generate_c(module, "model").source
    assert source.count("rung_conv_shift_packed_float(") == 1, source
    assert "RUNG_EP_MAX" in source, source
    # The pool: its channels (32) outermost and shared, then its output points (48 x 48),
    # each reducing its window (2 x 2), which gcc is asked to unroll.
    lines = source.splitlines()
    pool = [
        i
        for i, line in enumerate(lines[:-5])
        if "#pragma omp parallel for" in line
        and "< 32;" in lines[i + 1]
        and "< 48;" in lines[i + 2]
        and "< 48;" in lines[i + 3]
        and "#pragma GCC unroll" in lines[i + 5]
        and "< 2;" in lines[i + 6]
    ]
    assert len(pool) == 1, source


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_results_match_onnxruntime_on_any_thread_count(threads: int) -> None:
    model = conv_pool_model()
    x = np.random.default_rng(1).standard_normal((1, 3, 96, 96)).astype(np.float32)
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = want.run(None, {"x": x})[0]
    options = SessionOptions()
    options.intra_op_num_threads = threads
    got = InferenceSession(model, sess_options=options).run(None, {"x": x})[0]
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
