"""BitCast at core and kernel level against numpy's `view`: the bits, not the values.

A value conversion would pass for small integers stored in floats and fail
for the numbers here: NaN payloads, -0.0, infinities, subnormals and bit
patterns whose integer reading is negative.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import helper

from rung.runtime import InferenceSession

LEVELS = ["core", "kernel"]

PAIRS = [
    (np.float32, np.int32),
    (np.int32, np.float32),
    (np.float32, np.uint32),
    (np.uint32, np.float32),
    (np.float64, np.int64),
    (np.int64, np.float64),
    (np.float16, np.int16),
    (np.uint16, np.float16),
    (ml_dtypes.bfloat16, np.int16),
    (np.int16, ml_dtypes.bfloat16),
    (np.int8, np.uint8),
    (np.bool_, np.uint8),
    (np.uint8, np.bool_),
]


def _model(src: type, dst: type, dims: list[object]) -> onnx.ModelProto:
    to = helper.np_dtype_to_tensor_dtype(np.dtype(dst))
    graph = helper.make_graph(
        [helper.make_node("BitCast", ["x"], ["y"], to=to)],
        "g",
        [helper.make_tensor_value_info("x", helper.np_dtype_to_tensor_dtype(np.dtype(src)), dims)],
        [helper.make_tensor_value_info("y", to, dims)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 26)])


def _values(dtype: type, rng: np.random.Generator) -> np.ndarray:
    """Bit patterns that tell a reinterpretation from a conversion."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return np.array([[True, False, True], [True, False, True]])
    if dt.kind == "f" or dt == ml_dtypes.bfloat16:
        tiny = ml_dtypes.finfo(dt).smallest_subnormal
        values = np.array([np.nan, -0.0, np.inf, -np.inf, -2.25, tiny], dtype=dt)
    else:
        raw = rng.integers(0, 256, size=6 * dt.itemsize, dtype=np.uint8)
        values = raw.view(dt)
    return values.reshape(2, 3)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(("src", "dst"), PAIRS, ids=lambda t: np.dtype(t).name)
def test_bitcast_keeps_the_bits(level: str, src: type, dst: type) -> None:
    session = InferenceSession(_model(src, dst, [2, 3]), level=level)
    x = _values(src, np.random.default_rng(7))
    (got,) = session.run(None, {"x": x})
    want = x.view(np.uint8).astype(bool) if np.dtype(dst) == np.bool_ else x.view(dst)
    assert got.dtype == np.dtype(dst) and got.shape == (2, 3)
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("level", LEVELS)
def test_bitcast_of_integers_and_a_dynamic_dim(level: str) -> None:
    """Every bit pattern of an int32, read as float32 (NaN payloads and all) and back."""
    graph = helper.make_graph(
        [
            helper.make_node("BitCast", ["x"], ["f"], to=onnx.TensorProto.FLOAT),
            helper.make_node("BitCast", ["f"], ["y"], to=onnx.TensorProto.INT32),
        ],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.INT32, ["n"])],
        [
            helper.make_tensor_value_info("f", onnx.TensorProto.FLOAT, ["n"]),
            helper.make_tensor_value_info("y", onnx.TensorProto.INT32, ["n"]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 26)])
    session = InferenceSession(model, level=level)
    rng = np.random.default_rng(3)
    x = rng.integers(-(2**31), 2**31, size=1000, dtype=np.int64).astype(np.int32)
    x[:4] = [0x7FC00001, -0x00400001, 0x00000001, -(2**31)]  # NaN payloads, subnormal, -0.0
    f, y = session.run(None, {"x": x})
    np.testing.assert_array_equal(f.view(np.int32), x)
    np.testing.assert_array_equal(y, x)
