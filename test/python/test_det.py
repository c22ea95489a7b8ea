"""Det at core and kernel level against numpy (LAPACK) and onnxruntime.

The lowering unrolls Gaussian elimination with partial pivoting; the
matrices here need row swaps (a zero leading entry), are singular, or are
batched over run-time dims.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from rung.runtime import InferenceSession

LEVELS = ["core", "kernel"]


def _model(
    dims: list[object], out: list[object], element: int = TensorProto.FLOAT
) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Det", ["x"], ["y"], name="det")],
        "g",
        [helper.make_tensor_value_info("x", element, dims)],
        [helper.make_tensor_value_info("y", element, out)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def _matrices(rng: np.random.Generator, batch: tuple[int, ...], m: int) -> np.ndarray:
    x = rng.standard_normal((*batch, m, m))
    flat = x.reshape(-1, m, m)
    flat[0, 0, 0] = 0.0  # the first pivot must come from another row
    if len(flat) > 1:
        flat[1, -1] = flat[1, 0] * 2.0  # singular: two proportional rows
    if len(flat) > 2:
        flat[2] = np.triu(flat[2])  # no swap at all
    return x


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(
    ("dims", "out", "batch"),
    [
        ([1, 1], [], ()),
        ([3, 3], [], ()),
        ([4, 5, 5], [4], (4,)),
        ([2, 3, 4, 4], [2, 3], (2, 3)),
        (["n", 3, 3], ["n"], (5,)),
        (["a", "b", 6, 6], ["a", "b"], (2, 3)),
    ],
)
def test_det_matches_numpy(
    level: str, dims: list[object], out: list[object], batch: tuple[int, ...]
) -> None:
    m = int(dims[-1])  # type: ignore[call-overload]
    model = _model(dims, out)
    session = InferenceSession(model, level=level)
    rng = np.random.default_rng(m)
    x = _matrices(rng, batch, m).astype(np.float32)
    (got,) = session.run(None, {"x": x})
    want = np.linalg.det(x.astype(np.float64))
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    reference = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(got, reference.run(None, {"x": x})[0], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("level", LEVELS)
def test_det_of_zero_columns_and_f64(level: str) -> None:
    """A zero column gives 0, not NaN; f64 keeps its precision."""
    session = InferenceSession(_model([3, 4, 4], [3], TensorProto.DOUBLE), level=level)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 4, 4))
    x[0, :, 2] = 0.0
    x[1] = 0.0
    (got,) = session.run(None, {"x": x})
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got[:2], [0.0, 0.0])
    np.testing.assert_allclose(got, np.linalg.det(x), rtol=1e-12, atol=1e-12)
