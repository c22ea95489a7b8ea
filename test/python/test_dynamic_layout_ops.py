"""Layout and index ops with `?` dims and run-time operands: Trilu, EyeLike, OneHot,
DepthToSpace, SpaceToDepth, Tile, GatherND and ScatterND.

Each was refused as soon as an input dim was symbolic ("needs a static shape",
"with a dynamic index depth"). Each model here is compiled once and run at
several sizes against ONNX's reference implementation; a run-time value that
does not fit (an index depth other than the ranks imply, a negative depth or
repeat, channels that do not split into blocks) must be a rung error naming
the node, not a read past a buffer.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from rung.errors import RungError
from rung.runtime import InferenceSession

F, I64 = TensorProto.FLOAT, TensorProto.INT64
RNG = np.random.default_rng(7)
LEVELS = ["core", "kernel"]

Dims = Sequence[object]


def _model(
    node: onnx.NodeProto,
    inputs: Sequence[tuple[str, int, Dims]],
    output: tuple[int, Dims],
    opset: int = 21,
    initializers: Sequence[onnx.TensorProto] = (),
) -> onnx.ModelProto:
    graph = helper.make_graph(
        [node],
        node.name,
        [helper.make_tensor_value_info(n, t, d) for n, t, d in inputs],
        [helper.make_tensor_value_info(node.output[0], *output)],
        list(initializers),
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _matches_reference(
    model: onnx.ModelProto, level: str, feeds: Sequence[dict[str, np.ndarray]]
) -> None:
    """One compiled session serves every feed, and agrees with onnxruntime on each (with
    ONNX's reference for opsets onnxruntime lacks)."""
    session = InferenceSession(model, level=level)
    if model.opset_import[0].version > 21:
        reference: ReferenceEvaluator | ort.InferenceSession = ReferenceEvaluator(model)
    else:
        reference = ort.InferenceSession(
            model.SerializeToString(), providers=["CPUExecutionProvider"]
        )
    for feed in feeds:
        (got,) = session.run(None, feed)
        (want,) = reference.run(None, feed)
        assert got.shape == want.shape, feed
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def _floats(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


# ---- Trilu and EyeLike -------------------------------------------------------------------------


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("upper", [0, 1])
def test_trilu_of_dynamic_matrices_with_a_run_time_k(level: str, upper: int) -> None:
    node = helper.make_node("Trilu", ["x", "k"], ["y"], name="tri", upper=upper)
    model = _model(node, [("x", F, ["b", "n", "m"]), ("k", I64, [])], (F, ["b", "n", "m"]))
    feeds = [
        {"x": _floats(*shape), "k": np.array(k, np.int64)}
        for shape, k in [((2, 3, 4), 0), ((1, 5, 2), -1), ((3, 4, 4), 2), ((2, 0, 3), 1)]
    ]
    _matches_reference(model, level, feeds)


@pytest.mark.parametrize("level", LEVELS)
def test_trilu_with_dynamic_rows_only_and_no_k(level: str) -> None:
    node = helper.make_node("Trilu", ["x"], ["y"], name="tri", upper=1)
    model = _model(node, [("x", F, ["n", 4])], (F, ["n", 4]))
    _matches_reference(model, level, [{"x": _floats(n, 4)} for n in (1, 3, 6)])


@pytest.mark.parametrize("level", LEVELS)
def test_trilu_k_of_one_value_in_a_dynamic_vector(level: str) -> None:
    """k given as a 1-D tensor of run-time length: one value is fine, two fail the run."""
    node = helper.make_node("Trilu", ["x", "k"], ["y"], name="tri")
    model = _model(node, [("x", F, ["n", "m"]), ("k", I64, ["one"])], (F, ["n", "m"]))
    x = _floats(3, 5)
    _matches_reference(model, level, [{"x": x, "k": np.array([1], np.int64)}])
    session = InferenceSession(model, level=level)
    with pytest.raises(RungError, match="node 'tri': Trilu's k must hold one value"):
        session.run(None, {"x": x, "k": np.array([1, 2], np.int64)})


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(("k", "dtype"), [(0, TensorProto.FLOAT), (1, TensorProto.INT32)])
def test_eye_like_of_a_dynamic_matrix(level: str, k: int, dtype: int) -> None:
    node = helper.make_node("EyeLike", ["x"], ["y"], name="eye", k=k, dtype=dtype)
    model = _model(node, [("x", F, ["n", "m"])], (dtype, ["n", "m"]))
    _matches_reference(model, level, [{"x": _floats(*s)} for s in [(3, 4), (5, 2), (1, 1)]])


# ---- OneHot ------------------------------------------------------------------------------------


def _one_hot(axis: int, index_dims: Dims, out_dims: Dims) -> onnx.ModelProto:
    node = helper.make_node("OneHot", ["i", "depth", "values"], ["y"], name="hot", axis=axis)
    inputs = [("i", I64, index_dims), ("depth", F, []), ("values", F, ["two"])]
    return _model(node, inputs, (F, out_dims))


@pytest.mark.parametrize("level", LEVELS)
def test_one_hot_with_a_run_time_depth(level: str) -> None:
    """The depth is a value: the result's last dim is computed from it (a float depth is
    truncated). Negative indices count from the end; out-of-range ones give all-off rows."""
    model = _one_hot(-1, ["n"], ["n", "d"])
    values = np.array([-1.0, 5.0], np.float32)
    feeds = [
        {"i": np.array(i, np.int64), "depth": np.array(d, np.float32), "values": values}
        for i, d in [([0, 2, -1], 3.0), ([1, 7, -8, 4], 5.0), ([], 4.0), ([2], 3.7)]
    ]
    _matches_reference(model, level, feeds)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("axis", [0, 1, -3])
def test_one_hot_along_an_inner_axis(level: str, axis: int) -> None:
    model = _one_hot(axis, ["a", "b"], ["p", "q", "r"])
    values = np.array([0.0, 1.0], np.float32)
    feeds = [
        {
            "i": RNG.integers(-d, d, shape).astype(np.int64),
            "depth": np.array(d, np.float32),
            "values": values,
        }
        for shape, d in [((2, 3), 4), ((1, 5), 2)]
    ]
    _matches_reference(model, level, feeds)


@pytest.mark.parametrize("level", LEVELS)
def test_one_hot_of_dynamic_indices_with_a_constant_depth(level: str) -> None:
    """A constant depth gives a static result dim, though ONNX typed it `?`."""
    node = helper.make_node("OneHot", ["i", "depth", "values"], ["y"], name="hot")
    inits = [
        numpy_helper.from_array(np.array([4], np.int64), "depth"),
        numpy_helper.from_array(np.array([2.0, 9.0], np.float32), "values"),
    ]
    model = _model(node, [("i", I64, ["n"])], (F, ["n", "d"]), 21, inits)
    feeds = [{"i": np.array(i, np.int64)} for i in ([0, 3, -1], [5], [])]
    _matches_reference(model, level, feeds)


@pytest.mark.parametrize("level", LEVELS)
def test_one_hot_refuses_a_negative_depth_and_short_values_at_run_time(level: str) -> None:
    session = InferenceSession(_one_hot(-1, ["n"], ["n", "d"]), level=level)
    i = np.array([0, 1], np.int64)
    values = np.array([0.0, 1.0], np.float32)
    with pytest.raises(
        RungError, match="node 'hot': OneHot's depth must be a number of classes in .*, got -"
    ):
        session.run(None, {"i": i, "depth": np.array(-2.0, np.float32), "values": values})
    with pytest.raises(RungError, match="node 'hot': OneHot's values must hold 2 values"):
        session.run(None, {"i": i, "depth": np.array(3.0, np.float32), "values": values[:1]})


# ---- DepthToSpace and SpaceToDepth -------------------------------------------------------------


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space_of_dynamic_images(level: str, mode: str) -> None:
    node = helper.make_node("DepthToSpace", ["x"], ["y"], name="d2s", blocksize=2, mode=mode)
    model = _model(node, [("x", F, ["n", "c", "h", "w"])], (F, ["n", "c2", "h2", "w2"]), 28)
    feeds = [{"x": _floats(*s)} for s in [(1, 8, 2, 3), (2, 4, 3, 1), (1, 12, 1, 2)]]
    _matches_reference(model, level, feeds)
    session = InferenceSession(model, level=level)
    with pytest.raises(RungError, match="node 'd2s': DepthToSpace: the channels must be a"):
        session.run(None, {"x": _floats(1, 6, 2, 2)})


@pytest.mark.parametrize("level", LEVELS)
def test_depth_to_space_with_a_dynamic_batch_only(level: str) -> None:
    node = helper.make_node("DepthToSpace", ["x"], ["y"], name="d2s", blocksize=2)
    model = _model(node, [("x", F, ["n", 8, 2, 3])], (F, ["n", 2, 4, 6]), 28)
    _matches_reference(model, level, [{"x": _floats(n, 8, 2, 3)} for n in (1, 3)])


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_space_to_depth_of_dynamic_images(level: str, mode: str) -> None:
    node = helper.make_node("SpaceToDepth", ["x"], ["y"], name="s2d", blocksize=2, mode=mode)
    model = _model(node, [("x", F, ["n", "c", "h", "w"])], (F, ["n", "c4", "h2", "w2"]), 28)
    feeds = [{"x": _floats(*s)} for s in [(1, 2, 4, 6), (2, 3, 2, 2), (1, 1, 6, 4)]]
    _matches_reference(model, level, feeds)
    session = InferenceSession(model, level=level)
    with pytest.raises(RungError, match="node 's2d': SpaceToDepth: the height and width"):
        session.run(None, {"x": _floats(1, 2, 4, 5)})


# ---- Tile --------------------------------------------------------------------------------------


@pytest.mark.parametrize("level", LEVELS)
def test_tile_of_a_dynamic_input_by_run_time_repeats(level: str) -> None:
    node = helper.make_node("Tile", ["x", "r"], ["y"], name="tile")
    model = _model(node, [("x", F, ["a", "b"]), ("r", I64, ["two"])], (F, ["p", "q"]))
    feeds = [
        {"x": _floats(*s), "r": np.array(r, np.int64)}
        for s, r in [((2, 3), [2, 1]), ((1, 4), [3, 2]), ((2, 2), [0, 2])]
    ]
    _matches_reference(model, level, feeds)
    session = InferenceSession(model, level=level)
    x = _floats(2, 3)
    with pytest.raises(RungError, match="node 'tile': Tile's repeats must not be negative"):
        session.run(None, {"x": x, "r": np.array([2, -1], np.int64)})
    with pytest.raises(RungError, match="node 'tile': Tile's repeats must hold 2 values"):
        session.run(None, {"x": x, "r": np.array([2, 1, 1], np.int64)})


@pytest.mark.parametrize("level", LEVELS)
def test_tile_of_a_dynamic_input_by_constant_repeats(level: str) -> None:
    node = helper.make_node("Tile", ["x", "r"], ["y"], name="tile")
    repeats = numpy_helper.from_array(np.array([1, 2, 3], np.int64), "r")
    model = _model(node, [("x", F, ["a", 2, "c"])], (F, ["a", 4, "c3"]), 21, [repeats])
    _matches_reference(model, level, [{"x": _floats(a, 2, c)} for a, c in [(1, 3), (2, 1)]])


# ---- GatherND and ScatterND --------------------------------------------------------------------


@pytest.mark.parametrize("level", LEVELS)
def test_gather_nd_with_a_dynamic_index_depth(level: str) -> None:
    """The result's rank says the tuples have 2 entries; the run checks it."""
    node = helper.make_node("GatherND", ["data", "i"], ["y"], name="gnd")
    model = _model(node, [("data", F, ["a", "b", "c"]), ("i", I64, ["n", "k"])], (F, ["n", "c"]))
    feeds = []
    for a, b, c, n in [(2, 3, 4, 5), (4, 1, 2, 1), (3, 2, 1, 0)]:
        i = np.stack([RNG.integers(-a, a, n), RNG.integers(-b, b, n)], axis=1)
        feeds.append({"data": _floats(a, b, c), "i": i.astype(np.int64)})
    _matches_reference(model, level, feeds)
    session = InferenceSession(model, level=level)
    with pytest.raises(RungError, match="node 'gnd': GatherND: the index tuples must have 2"):
        session.run(None, {"data": _floats(2, 3, 4), "i": np.zeros((2, 1), np.int64)})


@pytest.mark.parametrize("level", LEVELS)
def test_gather_nd_with_batch_dims_and_a_dynamic_index_depth(level: str) -> None:
    node = helper.make_node("GatherND", ["data", "i"], ["y"], name="gnd", batch_dims=1)
    model = _model(node, [("data", F, ["a", "b", "c"]), ("i", I64, ["a", "k"])], (F, ["a", "c"]))
    feeds = [
        {"data": _floats(a, b, 3), "i": RNG.integers(-b, b, (a, 1)).astype(np.int64)}
        for a, b in [(2, 2), (3, 5)]
    ]
    _matches_reference(model, level, feeds)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("reduction", ["none", "add", "max"])
def test_scatter_nd_with_a_dynamic_index_depth(level: str, reduction: str) -> None:
    """Updates of rank 1 into data of rank 2: the tuples have 2 entries (element updates)."""
    node = helper.make_node("ScatterND", ["data", "i", "u"], ["y"], name="snd", reduction=reduction)
    inputs = [("data", F, ["a", "b"]), ("i", I64, ["n", "k"]), ("u", F, ["n"])]
    model = _model(node, inputs, (F, ["a", "b"]))
    feeds = []
    for a, b, picks in [(3, 4, [(0, 1), (2, -1), (-3, 0)]), (2, 2, [(1, 1)])]:
        feeds.append(
            {
                "data": _floats(a, b),
                "i": np.array(picks, np.int64),
                "u": _floats(len(picks)),
            }
        )
    _matches_reference(model, level, feeds)
    session = InferenceSession(model, level=level)
    with pytest.raises(RungError, match="node 'snd': ScatterND: the index tuples must have 2"):
        session.run(
            None,
            {"data": _floats(3, 4), "i": np.zeros((1, 3), np.int64), "u": _floats(1)},
        )


@pytest.mark.parametrize("level", LEVELS)
def test_gather_nd_batch_dims_that_differ_at_run_time_are_a_rung_error(level: str) -> None:
    node = helper.make_node("GatherND", ["data", "i"], ["y"], name="gnd", batch_dims=1)
    inputs = [("data", F, ["a", "b", "c"]), ("i", I64, ["n", 1])]
    session = InferenceSession(_model(node, inputs, (F, ["n", "c"])), level=level)
    with pytest.raises(RungError, match="node 'gnd': GatherND: the batch dims of data and"):
        session.run(None, {"data": _floats(2, 3, 4), "i": np.zeros((3, 1), np.int64)})


@pytest.mark.parametrize("level", LEVELS)
def test_scatter_nd_updates_of_another_shape_are_a_rung_error(level: str) -> None:
    """More updates than index tuples would read the indices past their end."""
    node = helper.make_node("ScatterND", ["data", "i", "u"], ["y"], name="snd")
    inputs = [("data", F, ["a", "b"]), ("i", I64, ["n", 1]), ("u", F, ["m", "b"])]
    session = InferenceSession(_model(node, inputs, (F, ["a", "b"])), level=level)
    feed = {"data": _floats(3, 4), "i": np.zeros((1, 1), np.int64), "u": _floats(5, 4)}
    with pytest.raises(RungError, match="node 'snd': ScatterND: the updates' shape is not"):
        session.run(None, feed)


@pytest.mark.parametrize("level", LEVELS)
def test_scatter_nd_of_slices_with_a_dynamic_index_depth(level: str) -> None:
    node = helper.make_node("ScatterND", ["data", "i", "u"], ["y"], name="snd")
    inputs = [("data", F, ["a", "b", "c"]), ("i", I64, ["n", "k"]), ("u", F, ["n", "b", "c"])]
    model = _model(node, inputs, (F, ["a", "b", "c"]))
    feeds = [
        {"data": _floats(4, 2, 3), "i": np.array([[0], [-1]], np.int64), "u": _floats(2, 2, 3)},
        {"data": _floats(2, 1, 1), "i": np.array([[1]], np.int64), "u": _floats(1, 1, 1)},
    ]
    _matches_reference(model, level, feeds)
