"""Whole models compiled to native code against onnxruntime: the nine light models.

Each light model gets seeded random weights in place of its ConstantOfShape
fills (VGG-19 then carries over 500 MB of weights, which go to the side file
the library maps), is compiled at level kernel and run on random inputs; its
outputs must match onnxruntime's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from light_weights import with_random_weights
from onnx_cases import light_models
from test_core_models import random_input, run_ort

from rung.runtime import InferenceSession


@pytest.mark.parametrize("path", light_models(), ids=lambda p: p.stem)
def test_light_model_compiled_matches_onnxruntime(path: Path) -> None:
    model = with_random_weights(onnx.load(path))
    feed = random_input(model, seed=2)
    expected = run_ort(model, feed)
    got = InferenceSession(model, level="kernel").run(None, feed)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert g.shape == e.shape
        assert float(np.max(e)) < 0.999  # an unsaturated softmax, or the check says nothing
        np.testing.assert_allclose(g, e, rtol=1e-3, atol=1e-4)


def test_vgg19_weights_go_to_the_side_file() -> None:
    """Over 500 MB of weights must not pass through the C compiler as text."""
    from rung.lowering.kernel_to_c import generate_c
    from rung.runtime.levels import get_level
    from rung.runtime.session import load_module

    path = next(p for p in light_models() if "vgg19" in p.stem)
    module = load_module(with_random_weights(onnx.load(path)))
    kernel = get_level("kernel").lowering(module)  # type: ignore[misc]
    program = generate_c(kernel)
    assert len(program.weights) > 500 * 2**20
    assert len(program.source) < 2 * 2**20
