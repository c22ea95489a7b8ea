"""Compress and ReverseSequence at core and kernel level, against onnxruntime and numpy.

Both take data-dependent positions: Compress's result size is known only at
run time, ReverseSequence reads at positions computed from its lengths, so
out-of-range data must fail the run rather than read outside the input.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from rung.errors import RungError
from rung.runtime import InferenceSession

LEVELS = ["core", "kernel"]


def _model(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: list[onnx.ValueInfoProto],
) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8  # onnxruntime's
    return model


def _compress(dims: list[object], axis: int | None, cond_len: object) -> onnx.ModelProto:
    attrs = {} if axis is None else {"axis": axis}
    out_dims = ["r"] if axis is None else [f"r{i}" for i in range(len(dims))]
    return _model(
        [helper.make_node("Compress", ["x", "c"], ["y"], name="cmp", **attrs)],
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, dims),
            helper.make_tensor_value_info("c", TensorProto.BOOL, [cond_len]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_dims)],
    )


def _check_against_ort(
    model: onnx.ModelProto, feeds: list[dict[str, np.ndarray]], level: str
) -> None:
    session = InferenceSession(model, level=level)
    reference = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for feed in feeds:
        (got,) = session.run(None, feed)
        (want,) = reference.run(None, feed)
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(
    ("dims", "axis", "cond_len"),
    [
        ([3, 4], 0, 3),
        ([3, 4], 1, 2),  # shorter than the axis: the rest is dropped
        ([3, 4], -1, 4),
        ([3, 4], None, 7),  # flattened
        (["n", 4], 0, "m"),
        (["n", "k"], 1, "m"),
        (["n", 4], None, "m"),
    ],
)
def test_compress_matches_onnxruntime(
    level: str, dims: list[object], axis: int | None, cond_len: object
) -> None:
    model = _compress(dims, axis, cond_len)
    rng = np.random.default_rng(3)
    feeds = []
    for shape in ([3, 4], [5, 4]) if any(isinstance(d, str) for d in dims) else ([3, 4],):
        x = rng.standard_normal(shape).astype(np.float32)
        extent = x.size if axis is None else shape[axis]
        length = cond_len if isinstance(cond_len, int) else extent - 1
        for pattern in (rng.random(length) < 0.5, np.zeros(length, bool), np.ones(length, bool)):
            feeds.append({"x": x, "c": pattern})
    _check_against_ort(model, feeds, level)


@pytest.mark.parametrize("level", LEVELS)
def test_compress_refuses_a_condition_true_past_the_axis(level: str) -> None:
    """numpy's compress raises there; reading on would leave the input."""
    session = InferenceSession(_compress(["n", 4], 0, "m"), level=level)
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    (got,) = session.run(None, {"x": x, "c": np.array([False, True, False])})
    np.testing.assert_array_equal(got, x[1:2])
    with pytest.raises(RungError, match="node 'cmp': Compress: the condition is true past"):
        session.run(None, {"x": x, "c": np.array([False, True, True])})


def _reverse(dims: list[object], time_axis: int, batch_axis: int, n: object) -> onnx.ModelProto:
    return _model(
        [
            helper.make_node(
                "ReverseSequence",
                ["x", "lens"],
                ["y"],
                name="rev",
                time_axis=time_axis,
                batch_axis=batch_axis,
            )
        ],
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, dims),
            helper.make_tensor_value_info("lens", TensorProto.INT64, [n]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, dims)],
    )


def _reversed(x: np.ndarray, lens: np.ndarray, time_axis: int) -> np.ndarray:
    """numpy: the first lens[b] steps of each batch entry, reversed."""
    t_first = x if time_axis == 0 else np.swapaxes(x, 0, 1)
    out = t_first.copy()
    for b, n in enumerate(lens):
        out[:n, b] = t_first[:n, b][::-1]
    return out if time_axis == 0 else np.swapaxes(out, 0, 1)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(
    ("dims", "time_axis", "batch_axis", "n"),
    [
        ([5, 3, 2], 0, 1, 3),
        ([3, 5, 2], 1, 0, 3),
        (["t", "b", 2], 0, 1, "b"),
        (["b", "t"], 1, 0, "m"),
    ],
)
def test_reverse_sequence_matches_numpy_and_onnxruntime(
    level: str, dims: list[object], time_axis: int, batch_axis: int, n: object
) -> None:
    model = _reverse(dims, time_axis, batch_axis, n)
    session = InferenceSession(model, level=level)
    reference = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(5)
    shapes = [[5, 3, 2], [3, 5, 2], [5, 3], [3, 5]]
    shape = [5 if a == time_axis else 3 for a in range(2)] + ([2] if len(dims) == 3 else [])
    assert shape in shapes
    x = rng.standard_normal(shape).astype(np.float32)
    for lens in ([5, 0, 2], [1, 5, 3], [0, 0, 0]):
        feed = {"x": x, "lens": np.array(lens, np.int64)}
        (got,) = session.run(None, feed)
        np.testing.assert_array_equal(got, _reversed(x, feed["lens"], time_axis))
        np.testing.assert_array_equal(got, reference.run(None, feed)[0])


@pytest.mark.parametrize("level", LEVELS)
def test_reverse_sequence_checks_its_lengths(level: str) -> None:
    session = InferenceSession(_reverse(["t", "b"], 0, 1, "m"), level=level)
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    for bad in ([4, 1], [-1, 2]):
        with pytest.raises(RungError, match="node 'rev': ReverseSequence: a sequence length is"):
            session.run(None, {"x": x, "lens": np.array(bad, np.int64)})
    with pytest.raises(RungError, match="one length per batch entry"):
        session.run(None, {"x": x, "lens": np.array([1, 2, 3], np.int64)})
