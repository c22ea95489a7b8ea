"""kernel-fuse-epilogue on real graphs: the activation after a depthwise conv, a pool or a
global pool runs inside that nest, and the results still match onnxruntime.

Each graph is compiled at level kernel; the test checks that the intermediate buffer is
gone (the consumer nest was fused) and compares the outputs with onnxruntime's.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from rung.runtime import InferenceSession
from rung.runtime.levels import lower
from rung.runtime.session import load_module


def _model(nodes: list[onnx.NodeProto], x: list[int], y: list[int], inits: list) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "epilogue",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _w(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


CASES = {
    # depthwise 3x3 + bias, then SiLU (Sigmoid * x) and a residual add of the input
    "depthwise_silu_residual": _model(
        [
            helper.make_node("Conv", ["x", "w", "b"], ["c"], group=8, pads=[1, 1, 1, 1]),
            helper.make_node("Sigmoid", ["c"], ["s"]),
            helper.make_node("Mul", ["c", "s"], ["m"]),
            helper.make_node("Add", ["m", "x"], ["y"]),
        ],
        [2, 8, 9, 9],
        [2, 8, 9, 9],
        [numpy_helper.from_array(_w(8, 1, 3, 3), "w"), numpy_helper.from_array(_w(8), "b")],
    ),
    # the same with one spatial dim: the conv is a nest of loops, which takes the epilogue
    "depthwise1d_silu_residual": _model(
        [
            helper.make_node("Conv", ["x", "w", "b"], ["c"], group=8, pads=[1, 1]),
            helper.make_node("Sigmoid", ["c"], ["s"]),
            helper.make_node("Mul", ["c", "s"], ["m"]),
            helper.make_node("Add", ["m", "x"], ["y"]),
        ],
        [2, 8, 9],
        [2, 8, 9],
        [numpy_helper.from_array(_w(8, 1, 3), "w"), numpy_helper.from_array(_w(8), "b")],
    ),
    # max pool, then clip (ReLU6)
    "max_pool_clip": _model(
        [
            helper.make_node("MaxPool", ["x"], ["p"], kernel_shape=[3, 3], strides=[2, 2]),
            helper.make_node("Clip", ["p", "lo", "hi"], ["y"]),
        ],
        [1, 3, 11, 11],
        [1, 3, 5, 5],
        [
            numpy_helper.from_array(np.array(0.0, np.float32), "lo"),
            numpy_helper.from_array(np.array(0.5, np.float32), "hi"),
        ],
    ),
}


def _kernel_ir(model: onnx.ModelProto) -> str:
    module = load_module(model)
    lower(module, "kernel")
    return str(module)


@pytest.mark.parametrize("name", sorted(CASES))
def test_epilogue_matches_onnxruntime(name: str) -> None:
    model = CASES[name]
    x = _w(*[d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim], seed=7)
    (got,) = InferenceSession(model, level="kernel").run(None, {"x": x})
    ref = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = ref.run(None, {"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_depthwise_2d_activation_is_one_nest_after_the_call() -> None:
    """A 2-D depthwise conv is a call of the runtime's; the bias, SiLU and the residual add
    after it are fused into one nest, which writes the output once."""
    text = _kernel_ir(CASES["depthwise_silu_residual"])
    body = text[text.index("func.func") :]
    assert body.count("kernel.call @depthwise_float(") == 1, text
    after = body[body.index("kernel.call @depthwise_float(") :]
    assert "math.exp" in after and after.count("kernel.store") == 1, text


def test_depthwise_activation_is_fused_into_the_conv() -> None:
    """With loops (one spatial dim), one nest computes the window sum, the bias, SiLU and
    the residual add: the only top-level stores left are the padded copy's and the output's."""
    text = _kernel_ir(CASES["depthwise1d_silu_residual"])
    body = text[text.index("func.func") :]
    windows = [line for line in body.splitlines() if "[reduction] iter_args" in line]
    assert len(windows) == 1, text
    after = body[body.index(windows[0]) :]
    assert "math.exp" in after and "kernel.store" in after, text
    # No nest after the conv's reads a buffer of the conv's result: the output is written once.
    assert after.count("kernel.store") == 1, text
