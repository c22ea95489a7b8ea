"""Whole models at level core against onnxruntime: the light models with random weights.

onnxruntime runs each model at its shipped opset; rung imports it (upgrading
it to the latest opset), lowers it to core and runs the core interpreter.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from light_weights import with_random_weights
from onnx_cases import light_models

from rung.runtime import InferenceSession


def run_ort(model: onnx.ModelProto, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feed)


def random_input(model: onnx.ModelProto, seed: int) -> dict[str, np.ndarray]:
    init = {t.name for t in model.graph.initializer}
    feed = {}
    rng = np.random.default_rng(seed)
    for vi in model.graph.input:
        if vi.name in init:
            continue
        shape = [d.dim_value or 1 for d in vi.type.tensor_type.shape.dim]
        feed[vi.name] = rng.standard_normal(shape).astype(np.float32)
    return feed


@pytest.mark.parametrize("path", light_models(), ids=lambda p: p.stem)
@pytest.mark.parametrize("opset", ["shipped", 17])
def test_light_model_with_random_weights_matches_onnxruntime(path: Path, opset: object) -> None:
    model = with_random_weights(onnx.load(path))
    if opset != "shipped":
        model = onnx.version_converter.convert_version(model, int(opset))  # type: ignore[arg-type]
    feed = random_input(model, seed=1)
    expected = run_ort(model, feed)
    got = InferenceSession(model, level="core").run(None, feed)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert g.shape == e.shape
        # The softmax output must not be saturated, or the check says nothing.
        assert float(np.max(e)) < 0.999
        np.testing.assert_allclose(g, e, rtol=1e-3, atol=1e-4)
