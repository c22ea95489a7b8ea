"""Operands broadcast to a dynamic result take the run-time shape of the full operand.

Regression: Compare, Where's condition, Clip's bounds, PRelu's slope and Pow's
operands were broadcast one at a time, to their own shape padded with ones
([1, 3]) rather than to the result's ([N, 3]); compiled, Where returned a
[1, 3] result for an [N, 3] input.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from rung.runtime import InferenceSession


def _model() -> onnx.ModelProto:
    f, b = TensorProto.FLOAT, TensorProto.BOOL
    nodes = [
        helper.make_node("Less", ["x", "v"], ["less"]),
        helper.make_node("Where", ["m", "x", "y"], ["where"]),
        helper.make_node("Clip", ["x", "lo", "hi"], ["clip"]),
        helper.make_node("PRelu", ["x", "v"], ["prelu"]),
        helper.make_node("Pow", ["p", "x"], ["pow"]),
    ]
    graph = helper.make_graph(
        nodes,
        "dynamic_broadcast",
        [
            helper.make_tensor_value_info("x", f, ["n", 3]),
            helper.make_tensor_value_info("v", f, [3]),
            helper.make_tensor_value_info("m", b, [3]),
            helper.make_tensor_value_info("y", f, ["n", 3]),
            helper.make_tensor_value_info("lo", f, []),
            helper.make_tensor_value_info("hi", f, []),
            helper.make_tensor_value_info("p", f, [3]),
        ],
        [
            helper.make_tensor_value_info("less", b, ["n", 3]),
            helper.make_tensor_value_info("where", f, ["n", 3]),
            helper.make_tensor_value_info("clip", f, ["n", 3]),
            helper.make_tensor_value_info("prelu", f, ["n", 3]),
            helper.make_tensor_value_info("pow", f, ["n", 3]),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("level", ["core", "kernel"])
def test_dynamic_broadcasts_follow_the_full_operand(level: str) -> None:
    model = _model()
    session = InferenceSession(model, level=level)
    reference = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(7)
    for n in (4, 1, 5):
        feed = {
            "x": rng.standard_normal((n, 3)).astype(np.float32),
            "v": rng.standard_normal(3).astype(np.float32),
            "m": np.array([True, False, True]),
            "y": rng.standard_normal((n, 3)).astype(np.float32),
            "lo": np.array(-0.5, np.float32),
            "hi": np.array(0.5, np.float32),
            "p": np.array([1.5, 2.0, 0.5], np.float32),
        }
        got = session.run(None, feed)
        want = reference.run(None, feed)
        for g, w in zip(got, want, strict=True):
            assert g.shape == w.shape == (n, 3)
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def _vague_add() -> onnx.ModelProto:
    """Both operands typed ?x?x?x?, as exporters type attention scores and masks."""
    f = TensorProto.FLOAT
    graph = helper.make_graph(
        [helper.make_node("Add", ["scores", "mask"], ["y"])],
        "vague_add",
        [
            helper.make_tensor_value_info("scores", f, ["a", "b", "c", "d"]),
            helper.make_tensor_value_info("mask", f, ["e", "f", "g", "h"]),
        ],
        [helper.make_tensor_value_info("y", f, ["i", "j", "k", "l"])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("level", ["core", "kernel"])
def test_operands_with_only_dynamic_dims_broadcast_at_run_time(level: str) -> None:
    """Regression: `?` dims were taken as equal; the kernel read past the mask's buffer."""
    model = _vague_add()
    session = InferenceSession(model, level=level)
    rng = np.random.default_rng(3)
    for scores_shape, mask_shape in [((1, 2, 7, 7), (1, 1, 7, 7)), ((2, 3, 5, 5), (2, 1, 1, 5))]:
        scores = rng.standard_normal(scores_shape).astype(np.float32)
        mask = rng.standard_normal(mask_shape).astype(np.float32)
        (got,) = session.run(None, {"scores": scores, "mask": mask})
        np.testing.assert_allclose(got, scores + mask, rtol=1e-6)


@pytest.mark.parametrize("level", ["core", "kernel"])
@pytest.mark.parametrize("op", ["Add", "MatMul"])
def test_run_time_sizes_that_cannot_broadcast_fail_the_run(level: str, op: str) -> None:
    """Two `?` dims of 3 and 4 break numpy's rule: the run must fail naming the node,
    not read past the smaller operand and return garbage."""
    from rung.errors import RungError

    a_shape, b_shape = (["n", 2, 2], ["m", 2, 2])
    graph = helper.make_graph(
        [helper.make_node(op, ["a", "b"], ["y"], name="the_node")],
        "g",
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, a_shape),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, b_shape),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["r", 2, 2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    session = InferenceSession(model, level=level)
    a = np.ones((3, 2, 2), np.float32)
    ok = session.run(None, {"a": a, "b": np.ones((1, 2, 2), np.float32)})[0]
    assert ok.shape == (3, 2, 2)
    with pytest.raises(RungError, match="the_node.*cannot be broadcast"):
        session.run(None, {"a": a, "b": np.ones((4, 2, 2), np.float32)})
