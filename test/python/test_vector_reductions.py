"""Float sums, maxima and minima along an innermost loop carry `#pragma omp simd
reduction(...)`: gcc vectorizes them (it folds one element after another without it),
and the results of global pools, reductions, Softmax and LayerNorm, at sizes that leave
vector tails, still match onnxruntime; a max or min still keeps a NaN.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from gcc_vectorizer import vectorizer_report
from onnx import TensorProto, helper, numpy_helper

from rung.runtime import InferenceSession


def _model(
    node: onnx.NodeProto, x: list[int], y: list[int], inits: list | None = None
) -> onnx.ModelProto:
    graph = helper.make_graph(
        [node],
        "reduce",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y)],
        inits or [],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    return model


def _cases() -> dict[str, onnx.ModelProto]:
    cases = {}
    for n in (1, 7, 8, 9, 37):
        cases[f"global_average_pool_{n}x{n}"] = _model(
            helper.make_node("GlobalAveragePool", ["x"], ["y"]), [2, 5, n, n], [2, 5, 1, 1]
        )
    cases["reduce_sum_last"] = _model(
        helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0),
        [3, 4, 101],
        [3, 4],
        [numpy_helper.from_array(np.array([2], np.int64), "axes")],
    )
    cases["layer_norm_768"] = _model(
        helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1),
        [6, 768],
        [6, 768],
        [
            numpy_helper.from_array(np.linspace(0.5, 1.5, 768, dtype=np.float32), "g"),
            numpy_helper.from_array(np.linspace(-0.1, 0.1, 768, dtype=np.float32), "b"),
        ],
    )
    cases["softmax_130"] = _model(
        helper.make_node("Softmax", ["x"], ["y"], axis=-1), [4, 130], [4, 130]
    )
    cases["softmax_197"] = _model(
        helper.make_node("Softmax", ["x"], ["y"], axis=-1), [2, 3, 197], [2, 3, 197]
    )
    for op in ("ReduceMax", "ReduceMin"):
        cases[f"{op.lower()}_last"] = _model(
            helper.make_node(op, ["x", "axes"], ["y"], keepdims=0),
            [3, 4, 101],
            [3, 4],
            [numpy_helper.from_array(np.array([2], np.int64), "axes")],
        )
    for n in (3, 37):
        cases[f"global_max_pool_{n}x{n}"] = _model(
            helper.make_node("GlobalMaxPool", ["x"], ["y"]), [2, 5, n, n], [2, 5, 1, 1]
        )
    return cases


CASES = _cases()


@pytest.mark.parametrize("name", sorted(CASES))
def test_reductions_match_onnxruntime(name: str) -> None:
    model = CASES[name]
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    x = (np.random.default_rng(5).standard_normal(shape) * 3 + 1).astype(np.float32)
    (got,) = InferenceSession(model).run(None, {"x": x})
    ref = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = ref.run(None, {"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin"])
def test_max_and_min_reductions_keep_nans(op: str) -> None:
    """Folded in any order by the vectorized loop, a max or min is still NaN where its row
    holds a NaN (at the start, in the middle, in the vector tail) and exact elsewhere."""
    model = CASES[f"{op.lower()}_last"]
    x = (np.random.default_rng(9).standard_normal((3, 4, 101)) * 3).astype(np.float32)
    x[0, 0, 0] = x[1, 2, 50] = x[2, 3, 100] = np.nan
    x[0, 1, :] = np.inf if op == "ReduceMin" else -np.inf  # a row of the identity
    (got,) = InferenceSession(model).run(None, {"x": x})
    want = (np.max if op == "ReduceMax" else np.min)(x, axis=2)
    np.testing.assert_array_equal(got, want)
    assert np.isnan(got[0, 0]) and np.isnan(got[1, 2]) and np.isnan(got[2, 3])


def _vectorized_loops(tmp_path: Path, model: onnx.ModelProto, pragma: str) -> None:
    """Every loop under a pragma containing `pragma` must be vectorized."""
    lines, vectorized = vectorizer_report(tmp_path, model)
    pragmas = [i for i, line in enumerate(lines) if pragma in line]
    assert pragmas, "\n".join(lines)
    # gcc reports the loop at the pragma's line or at its `for` (1-based line numbers)
    for i in pragmas:
        assert {i + 1, i + 2} & vectorized.keys(), (sorted(vectorized), i + 1)


def test_gcc_vectorizes_the_max_of_a_softmax(tmp_path: Path) -> None:
    _vectorized_loops(tmp_path, CASES["softmax_197"], "reduction(rung_max:")


def test_gcc_vectorizes_the_sum_of_a_global_average_pool(tmp_path: Path) -> None:
    _vectorized_loops(tmp_path, CASES["global_average_pool_37x37"], "#pragma omp simd reduction(+:")
