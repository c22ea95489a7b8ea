"""Pow by a constant 1 to 4 compiles to products (GPT-2's GELU cubes its input), by
0.25, 0.5, 0.75 or 1.5 to square roots (LRN's 0.75): the results match onnxruntime,
special values included, and the generated C calls no pow.
"""

from __future__ import annotations

import math

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from rung.lowering.kernel_to_c import generate_c
from rung.runtime import InferenceSession
from rung.runtime.levels import lower
from rung.runtime.session import load_module


def _pow_model(exponent: float) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Pow", ["x", "e"], ["y"])],
        "pow",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 16])],
        [numpy_helper.from_array(np.array(exponent, np.float32), "e")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _gelu_tanh() -> onnx.ModelProto:
    """GELU as GPT-2's exporters write it: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    c = {
        "three": 3.0,
        "k": 0.044715,
        "s": float(np.sqrt(2 / np.pi)),
        "one": 1.0,
        "half": 0.5,
    }
    inits = [numpy_helper.from_array(np.array(v, np.float32), k) for k, v in c.items()]
    nodes = [
        helper.make_node("Pow", ["x", "three"], ["x3"]),
        helper.make_node("Mul", ["x3", "k"], ["kx3"]),
        helper.make_node("Add", ["x", "kx3"], ["inner"]),
        helper.make_node("Mul", ["inner", "s"], ["scaled"]),
        helper.make_node("Tanh", ["scaled"], ["t"]),
        helper.make_node("Add", ["t", "one"], ["t1"]),
        helper.make_node("Mul", ["x", "half"], ["hx"]),
        helper.make_node("Mul", ["hx", "t1"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "gelu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 64])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _inputs(shape: tuple[int, ...]) -> np.ndarray:
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32) * 4
    special = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e20, -1e20, 1e-30]
    x.flat[: len(special)] = special
    return x


@pytest.mark.parametrize("exponent", [1.0, 2.0, 3.0, 4.0, 2.5, 0.25, 0.5, 0.75, 1.5])
def test_pow_matches_onnxruntime(exponent: float) -> None:
    model = _pow_model(exponent)
    x = _inputs((4, 16))
    x[1] = np.abs(x[1])  # a row of positive bases: the roots are defined there
    (got,) = InferenceSession(model).run(None, {"x": x})
    ref = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = ref.run(None, {"x": x})
    np.testing.assert_allclose(got, want, rtol=3e-7, atol=0, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))
    assert np.array_equal(np.isnan(got), np.isnan(want))


def _c_pow(x: float, y: float) -> float:
    """C's pow (numpy's power takes sqrt's values at 0.5)."""
    try:
        return math.pow(x, y)
    except ValueError:  # a negative base
        return math.nan


def test_roots_keep_pow_special_values() -> None:
    """pow(-0, 0.5) = +0 where sqrt(-0) = -0; pow(-inf, 0.5) = +inf where sqrt gives NaN."""
    x = np.array([-0.0, -np.inf, np.inf, -1.0, 0.0, np.nan, 4.0, 16.0], np.float32)
    for exponent in (0.25, 0.5, 0.75, 1.5):
        model = _pow_model(exponent)
        (got,) = InferenceSession(model).run(None, {"x": np.resize(x, (4, 16))})
        want = np.array([_c_pow(float(v), exponent) for v in x], np.float32)
        np.testing.assert_array_equal(got[0, :8], want)
        number = ~np.isnan(want)  # a NaN's sign means nothing
        assert np.array_equal(np.signbit(got[0, :8])[number], np.signbit(want)[number])


def test_lrn_matches_onnxruntime() -> None:
    """LRN (beta 0.75, GoogLeNet's) divides by a 0.75 power, now of square roots."""
    graph = helper.make_graph(
        [helper.make_node("LRN", ["x"], ["y"], size=5, alpha=1e-4, beta=0.75, bias=1.0)],
        "lrn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 9, 9])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 9, 9])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    x = np.random.default_rng(7).standard_normal((1, 16, 9, 9)).astype(np.float32) * 30
    (got,) = InferenceSession(model).run(None, {"x": x})
    ref = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = ref.run(None, {"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    module = load_module(model)
    lower(module, "kernel")
    assert "powf(" not in generate_c(module, "model").source


@pytest.mark.parametrize(
    ("exponent", "calls_pow"), [(3.0, False), (2.0, False), (0.75, False), (2.5, True)]
)
def test_small_constant_powers_call_no_pow(exponent: float, calls_pow: bool) -> None:
    module = load_module(_pow_model(exponent))
    lower(module, "kernel")
    source = generate_c(module, "model").source
    assert ("powf(" in source) == calls_pow, source


def test_gelu_tanh_matches_onnxruntime() -> None:
    model = _gelu_tanh()
    x = _inputs((8, 64))
    (got,) = InferenceSession(model).run(None, {"x": x})
    ref = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = ref.run(None, {"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, equal_nan=True)
