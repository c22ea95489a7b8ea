"""Batched MatMul over `?` batch dims, and means over dynamic dims, at several run-time sizes.

Regressions: a `?` batch dim facing a static one ("matmul batch dims 2 and -1
cannot be broadcast") and LayerNormalization over a dynamic dim ("a mean over
dynamic dim 1") were refused, which stopped the TorchScript exports of T5,
Llama (KV cache), Swin and MobileViT. Two `?` batch dims were taken as equal,
so a batch of 1 on one side read past the other operand's buffer. Each model
is compiled once and run at every size, as one library must serve them all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx.reference import ReferenceEvaluator

from rung.runtime import InferenceSession

LEVELS = ["core", "kernel"]
RNG = np.random.default_rng(11)


def _model(text: str) -> onnx.ModelProto:
    return onnx.parser.parse_model(f'<ir_version: 8, opset_import: ["" : 21]>\n{text}')


def _normal(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _compare(
    session: InferenceSession, want: Sequence[np.ndarray], feed: Mapping[str, np.ndarray]
) -> None:
    got = session.run(None, dict(feed))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


# ---- MatMul ------------------------------------------------------------------------------------

MATMULS = {
    "both batch dims dynamic": (
        "g (float[A, 3, 4] a, float[B, 4, 5] b) => (float[C, 3, 5] y) { y = MatMul(a, b) }",
        [((3, 3, 4), (3, 4, 5)), ((1, 3, 4), (4, 4, 5)), ((4, 3, 4), (1, 4, 5)),
         ((1, 3, 4), (1, 4, 5))],
    ),
    "dynamic against static": (
        "g (float[2, 3, 4] a, float[B, 4, 5] b) => (float[2, 3, 5] y) { y = MatMul(a, b) }",
        [((2, 3, 4), (1, 4, 5)), ((2, 3, 4), (2, 4, 5))],
    ),
    "static 2 against dynamic, and two dynamic": (
        "g (float[N, 2, 3, 4] a, float[M, K, 4, 5] b) => (float[P, 2, 3, 5] y) {"
        " y = MatMul(a, b) }",
        [((3, 2, 3, 4), (1, 2, 4, 5)), ((1, 2, 3, 4), (3, 1, 4, 5)),
         ((2, 2, 3, 4), (2, 2, 4, 5)), ((1, 2, 3, 4), (1, 1, 4, 5))],
    ),
    "dynamic rows and batch, lower rank rhs": (
        "g (float[A, B, S, 4] a, float[C, 4, T] b) => (float[A, D, S, T] y) { y = MatMul(a, b) }",
        [((2, 3, 5, 4), (1, 4, 6)), ((2, 1, 5, 4), (3, 4, 2)), ((1, 3, 1, 4), (3, 4, 1))],
    ),
    "dynamic batch against a 1-D rhs": (
        "g (float[A, B, 4] a, float[4] b) => (float[A, B] y) { y = MatMul(a, b) }",
        [((2, 3, 4), (4,)), ((1, 1, 4), (4,))],
    ),
}  # fmt: skip


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("case", MATMULS)
def test_matmul_broadcasts_dynamic_batch_dims_at_run_time(case: str, level: str) -> None:
    text, sizes = MATMULS[case]
    session = InferenceSession(_model(text), level=level)
    for a_shape, b_shape in sizes:
        a, b = _normal(*a_shape), _normal(*b_shape)
        _compare(session, [a @ b], {"a": a, "b": b})


def test_matmul_of_vague_attention_shapes_matches_onnxruntime() -> None:
    """Scores × values as TorchScript types them: `?` everywhere but the head count."""
    model = _model(
        "g (float[A, 2, S, T] p, float[B, H, T, D] v) => (float[C, 2, S, D] y) { y = MatMul(p, v) }"
    )
    session = InferenceSession(model, level="kernel")
    reference = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for batch_p, batch_v, heads_v, s, t in [(1, 1, 2, 1, 7), (3, 3, 2, 4, 9), (2, 1, 1, 5, 3)]:
        feed = {"p": _normal(batch_p, 2, s, t), "v": _normal(batch_v, heads_v, t, 16)}
        _compare(session, reference.run(None, feed), feed)


# ---- means over dynamic dims ---------------------------------------------------------------------

NORMS = {
    "LayerNormalization, last dim dynamic": (
        "g (float[B, S, N] x, float[N] s, float[N] b) => (float[B, S, N] y) {"
        " y = LayerNormalization <axis = -1, epsilon = 0.001> (x, s, b) }",
        {"s": (-1,), "b": (-1,)},
        [(2, 3, 8), (1, 1, 1), (3, 5, 16)],
    ),
    "LayerNormalization over two dims, with Mean and InvStdDev": (
        "g (float[B, S, N] x, float[S, N] s) => (float[B, S, N] y, float[B, 1, 1] m,"
        " float[B, 1, 1] r) {"
        " y, m, r = LayerNormalization <axis = 1, epsilon = 0.0001> (x, s) }",
        {"s": (-2, -1)},
        [(2, 3, 4), (1, 5, 2)],
    ),
    "InstanceNormalization, dynamic spatial dims": (
        "g (float[N, 3, H, W] x, float[3] s, float[3] b) => (float[N, 3, H, W] y) {"
        " y = InstanceNormalization <epsilon = 0.001> (x, s, b) }",
        {"s": (1,), "b": (1,)},
        [(2, 3, 4, 5), (1, 3, 7, 1)],
    ),
    "MeanVarianceNormalization, dynamic dims": (
        "g (float[N, 3, H, W] x) => (float[N, 3, H, W] y) { y = MeanVarianceNormalization (x) }",
        {},
        [(2, 3, 4, 5), (1, 3, 2, 3)],
    ),
    "ReduceMean over a dynamic dim": (
        "g (float[B, N] x) => (float[B, 1] y) {"
        " axes = Constant <value = int64[1] {1}> () y = ReduceMean <keepdims = 1> (x, axes) }",
        {},
        [(2, 7), (3, 1)],
    ),
}


def _norm_feed(
    shape: tuple[int, ...], params: Mapping[str, tuple[int, ...]]
) -> dict[str, np.ndarray]:
    """`x` of `shape`; each parameter shaped like the dims of `x` it names (negative: from the end,
    positive: that dim)."""
    feed = {"x": _normal(*shape) * 3 + 1}
    for name, dims in params.items():
        feed[name] = _normal(*(shape[d] for d in dims))
    return feed


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("case", NORMS)
def test_means_over_dynamic_dims_match_onnxruntime(case: str, level: str) -> None:
    text, params, sizes = NORMS[case]
    model = _model(text)
    session = InferenceSession(model, level=level)
    reference = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for shape in sizes:
        feed = _norm_feed(shape, params)
        _compare(session, reference.run(None, feed), feed)


@pytest.mark.parametrize("level", LEVELS)
def test_training_batch_norm_over_a_dynamic_batch(level: str) -> None:
    """The batch statistics (and the running ones) divide by N·H·W read at run time."""
    model = _model(
        "g (float[N, 2, H, W] x, float[2] s, float[2] b, float[2] m, float[2] v)"
        " => (float[N, 2, H, W] y, float[2] rm, float[2] rv) {"
        " y, rm, rv = BatchNormalization <training_mode = 1, momentum = 0.8> (x, s, b, m, v) }"
    )
    session = InferenceSession(model, level=level)
    reference = ReferenceEvaluator(model)
    for shape in [(3, 2, 4, 5), (1, 2, 1, 3)]:
        feed = {
            "x": _normal(*shape),
            "s": _normal(2),
            "b": _normal(2),
            "m": _normal(2),
            "v": np.abs(_normal(2)) + 0.5,
        }
        _compare(session, reference.run(None, feed), feed)
