"""Softmax flushes its subnormal terms to 0, and a float select in a loop that calls a
rung_math.h function is a mask blend that gcc vectorizes.

Swin's shifted windows add -100 to the scores of the pairs a window must not mix.
Their exponentials are subnormals, and every product with a subnormal takes the CPU's
slow path: attn @ V ran 12 times slower in those blocks. Softmax now gives such a term
0 without computing its exponential. The select that does this, and ELU's, stayed
scalar as a `?:` (gcc moved the exponential into a branch); as a blend it vectorizes.
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

TINY = np.finfo(np.float32).tiny


def _model(
    nodes: list[onnx.NodeProto], shape: list[int], inits: list | None = None
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "selects",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
        inits or [],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    return model


def _masked_softmax() -> onnx.ModelProto:
    """Scores plus a Swin-style mask of 0 and -100, then Softmax over the last axis (49)."""
    mask = np.zeros((4, 49, 49), np.float32)
    mask[:, :, 30:] = -100.0
    mask[1, 10:, :20] = -100.0
    return _model(
        [
            helper.make_node("Add", ["x", "mask"], ["s"]),
            helper.make_node("Softmax", ["s"], ["y"], axis=-1),
        ],
        [4, 49, 49],
        [numpy_helper.from_array(mask, "mask")],
    )


def _onnxruntime(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    ref = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return ref.run(None, {"x": x})[0]


def test_masked_softmax_flushes_subnormal_terms_to_zero() -> None:
    model = _masked_softmax()
    x = np.random.default_rng(3).standard_normal((4, 49, 49)).astype(np.float32)
    x[2, 5, :] = np.float32(-np.inf)  # a row of -inf: NaN, as onnxruntime gives
    x[2, 5, 7] = 0.0  # ... unless one entry is finite
    x[3, 0, 0] = np.nan  # a NaN spreads over its row
    (got,) = InferenceSession(model).run(None, {"x": x})
    want = _onnxruntime(model, x)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=TINY)
    masked = np.broadcast_to(np.arange(49) >= 30, got.shape)
    finite_rows = ~np.isnan(got).any(axis=-1, keepdims=True)
    assert (want[masked & finite_rows] < TINY).all()  # subnormal or 0 in onnxruntime...
    assert (got[masked & finite_rows] == 0).all()  # ... exactly 0 here
    assert not ((got > 0) & (got < TINY)).any()
    assert np.isnan(got[3, 0]).all() and not np.isnan(got[3, 1]).any()
    assert got[2, 5, 7] == 1.0 and (np.delete(got[2, 5], 7) == 0).all()


def test_softmax_keeps_terms_above_the_smallest_normal() -> None:
    """A difference of -87 from the row max is still a normal float, and stays."""
    model = _model([helper.make_node("Softmax", ["x"], ["y"], axis=-1)], [1, 4])
    x = np.array([[0.0, -80.0, -87.0, -87.5]], np.float32)
    (got,) = InferenceSession(model).run(None, {"x": x})
    e = np.exp(x.astype(np.float64))
    want = e / e.sum()
    np.testing.assert_allclose(got[0, :3], want[0, :3], rtol=1e-6)
    assert got[0, 2] >= TINY and got[0, 3] == 0


@pytest.mark.parametrize(
    "op, attrs", [("Elu", {"alpha": 0.7}), ("Selu", {}), ("Celu", {"alpha": 1.3})]
)
def test_exponential_selects_match_onnxruntime(op: str, attrs: dict[str, float]) -> None:
    model = _model([helper.make_node(op, ["x"], ["y"], **attrs)], [3, 7, 37])
    x = (np.random.default_rng(4).standard_normal((3, 7, 37)) * 4).astype(np.float32)
    x[0, 0, :4] = [np.nan, np.inf, -np.inf, -200.0]
    (got,) = InferenceSession(model).run(None, {"x": x})
    np.testing.assert_allclose(got, _onnxruntime(model, x), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("case", ["softmax", "elu"])
def test_gcc_vectorizes_a_select_around_an_exponential(tmp_path: Path, case: str) -> None:
    model = (
        _masked_softmax()
        if case == "softmax"
        else _model([helper.make_node("Elu", ["x"], ["y"])], [3, 7, 37])
    )
    lines, vectorized = vectorizer_report(tmp_path, model)
    blends = [i for i, line in enumerate(lines) if "rung_math_select(" in line]
    assert blends, "\n".join(lines)
    for i in blends:
        loop = max(j for j in range(i) if lines[j].lstrip().startswith("for ("))
        assert loop + 1 in vectorized, (sorted(vectorized), loop + 1)


def _gelu(width: int) -> onnx.ModelProto:
    """GELU as torch exports it: x * 0.5 * (1 + erf(x / sqrt(2)))."""
    consts = {"r2": np.sqrt(2.0), "one": 1.0, "half": 0.5}
    nodes = [
        helper.make_node("Div", ["x", "r2"], ["s"]),
        helper.make_node("Erf", ["s"], ["e"]),
        helper.make_node("Add", ["e", "one"], ["e1"]),
        helper.make_node("Mul", ["x", "e1"], ["p"]),
        helper.make_node("Mul", ["p", "half"], ["y"]),
    ]
    inits = [numpy_helper.from_array(np.array(v, np.float32), k) for k, v in consts.items()]
    return _model(nodes, [8, width], inits)


def _avx512() -> bool:
    try:
        return " avx512f" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


@pytest.mark.parametrize("width", [1024, 197])
def test_gelu_rows_match_onnxruntime(width: int) -> None:
    model = _gelu(width)
    x = (np.random.default_rng(6).standard_normal((8, width)) * 3).astype(np.float32)
    (got,) = InferenceSession(model).run(None, {"x": x})
    np.testing.assert_allclose(got, _onnxruntime(model, x), rtol=2e-6, atol=1e-6)


def test_gelu_rows_use_the_widest_vectors(tmp_path: Path) -> None:
    """A 1024-wide GELU row is `omp simd simdlen(16)`: 64-byte vectors on AVX-512."""
    lines, vectorized = vectorizer_report(tmp_path, _gelu(1024))
    wide = [i for i, line in enumerate(lines) if "simdlen(16)" in line]
    assert len(wide) == 1, "\n".join(lines)
    # gcc names the pragma, the `for`, or (a combined `parallel for simd`) the first statement
    loops = {wide[0] + 1, wide[0] + 2, wide[0] + 3} & vectorized.keys()
    assert loops, sorted(vectorized)
    sizes = set().union(*(vectorized[line] for line in loops))
    assert 64 in sizes if _avx512() else sizes, sizes
