"""Gathers and scatters along dynamic dims: negative indices wrap by the run-time size.

Exporters index a hidden state along its dynamic sequence axis (BERT's pooler
takes `hidden[:, 0]`, GPT-2's head `hidden[:, -1]`) and gather from shapes;
these were refused ("Gather along a dynamic dim").
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from rung.runtime import InferenceSession


def _model() -> onnx.ModelProto:
    f, i = TensorProto.FLOAT, TensorProto.INT64
    nodes = [
        helper.make_node("Gather", ["x", "first"], ["first_token"], axis=1),
        helper.make_node("Gather", ["x", "last"], ["last_token"], axis=1),
        helper.make_node("Gather", ["x", "picks"], ["picked"], axis=1),
        helper.make_node("GatherElements", ["x", "elements"], ["elements_out"], axis=1),
        helper.make_node("GatherND", ["x", "tuples"], ["nd"], batch_dims=0),
        helper.make_node("ScatterElements", ["x", "elements", "updates"], ["scattered"], axis=1),
    ]
    inits = [
        numpy_helper.from_array(np.array(0, np.int64), "first"),
        numpy_helper.from_array(np.array(-1, np.int64), "last"),
    ]
    graph = helper.make_graph(
        nodes,
        "dynamic_gather",
        [
            helper.make_tensor_value_info("x", f, ["batch", "seq", 4]),
            helper.make_tensor_value_info("picks", i, ["k"]),
            helper.make_tensor_value_info("elements", i, ["batch", 1, 4]),
            helper.make_tensor_value_info("tuples", i, ["t", 2]),
            helper.make_tensor_value_info("updates", f, ["batch", 1, 4]),
        ],
        [
            helper.make_tensor_value_info("first_token", f, ["batch", 4]),
            helper.make_tensor_value_info("last_token", f, ["batch", 4]),
            helper.make_tensor_value_info("picked", f, ["batch", "k", 4]),
            helper.make_tensor_value_info("elements_out", f, ["batch", 1, 4]),
            helper.make_tensor_value_info("nd", f, ["t", 4]),
            helper.make_tensor_value_info("scattered", f, ["batch", "seq", 4]),
        ],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("level", ["core", "kernel"])
def test_dynamic_axis_gathers_match_onnxruntime(level: str) -> None:
    model = _model()
    session = InferenceSession(model, level=level)
    reference = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(11)
    for batch, seq in [(2, 5), (1, 9), (3, 1)]:
        feed = {
            "x": rng.standard_normal((batch, seq, 4)).astype(np.float32),
            "picks": rng.integers(-seq, seq, 3).astype(np.int64),
            "elements": rng.integers(-seq, seq, (batch, 1, 4)).astype(np.int64),
            "tuples": np.stack(
                [rng.integers(-batch, batch, 5), rng.integers(-seq, seq, 5)], axis=1
            ).astype(np.int64),
            "updates": rng.standard_normal((batch, 1, 4)).astype(np.float32),
        }
        got = session.run(None, feed)
        want = reference.run(None, feed)
        for g, w in zip(got, want, strict=True):
            assert g.shape == w.shape
            np.testing.assert_array_equal(g, w)


def _top_k(axis_dims: list[object]) -> onnx.ModelProto:
    f, i = TensorProto.FLOAT, TensorProto.INT64
    graph = helper.make_graph(
        [helper.make_node("TopK", ["x", "k"], ["values", "indices"], axis=1)],
        "top_k",
        [helper.make_tensor_value_info("x", f, axis_dims)],
        [
            helper.make_tensor_value_info("values", f, [axis_dims[0], 3]),
            helper.make_tensor_value_info("indices", i, [axis_dims[0], 3]),
        ],
        [numpy_helper.from_array(np.array([3], np.int64), "k")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("level", ["core", "kernel"])
def test_top_k_with_a_dynamic_batch(level: str) -> None:
    """Regression: TopK was refused for any dynamic dim ("needs a static input shape")."""
    model = _top_k(["batch", 6])
    session = InferenceSession(model, level=level)
    reference = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(5)
    for batch in (1, 4):
        feed = {"x": rng.standard_normal((batch, 6)).astype(np.float32)}
        for g, w in zip(session.run(None, feed), reference.run(None, feed), strict=True):
            np.testing.assert_array_equal(g, w)


def _feature_extractor() -> onnx.ModelProto:
    f, i = TensorProto.FLOAT, TensorProto.INT64
    graph = helper.make_graph(
        [helper.make_node("ArrayFeatureExtractor", ["x", "picks"], ["y"], domain="ai.onnx.ml")],
        "feature_extractor",
        [
            helper.make_tensor_value_info("x", f, ["batch", "features"]),
            helper.make_tensor_value_info("picks", i, ["k"]),
        ],
        [helper.make_tensor_value_info("y", f, ["batch", "k"])],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)]
    return helper.make_model(graph, opset_imports=opsets)


@pytest.mark.parametrize("level", ["core", "kernel"])
def test_array_feature_extractor_with_dynamic_features_and_indices(level: str) -> None:
    """Regression: refused ("needs a static number of indices"), and negative indices
    did not wrap when the number of features was dynamic."""
    model = _feature_extractor()
    session = InferenceSession(model, level=level)
    rng = np.random.default_rng(9)
    for batch, features, picks in [(2, 5, [0, -1, 3]), (3, 8, [-8, 7]), (1, 4, [2])]:
        x = rng.standard_normal((batch, features)).astype(np.float32)
        feed = {"x": x, "picks": np.array(picks, np.int64)}
        (got,) = session.run(None, feed)
        np.testing.assert_array_equal(got, x[:, picks])
