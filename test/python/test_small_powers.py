"""Pow by a constant 1 to 4 compiles to products (GPT-2's GELU cubes its input): the
results match onnxruntime, special values included, and the generated C calls no pow.
"""

from __future__ import annotations

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


@pytest.mark.parametrize("exponent", [1.0, 2.0, 3.0, 4.0, 2.5])
def test_pow_matches_onnxruntime(exponent: float) -> None:
    model = _pow_model(exponent)
    x = _inputs((4, 16))
    (got,) = InferenceSession(model).run(None, {"x": x})
    ref = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = ref.run(None, {"x": x})
    np.testing.assert_allclose(got, want, rtol=3e-7, atol=0, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize(("exponent", "calls_pow"), [(3.0, False), (2.0, False), (2.5, True)])
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
