"""Values that arrive at run time are checked before they are used.

- An index out of [-dim, dim) used to read outside the buffer (garbage, or a
  segfault) and, for the scatters, write outside it. Now the run fails with an
  error naming the node, at every level, and the process goes on; indices in
  range, negative ones included, give onnxruntime's answer. A constant index
  out of range is refused when the model is compiled.
- A Reshape's run-time shape must hold as many elements as its input, with one
  -1 at most and no other negative size (a view of 100 elements over 24 read
  past the buffer); where the model declares a static result, the computed
  shape must match it (the declared one was returned silently).
- A run-time size too large to allocate (or whose byte count overflows) fails
  the run before any allocation, naming the node.
- Slice's run-time axes are checked like indices (huge or negative ones used
  to crash, or read garbage), and a huge step cannot overflow the size
  arithmetic. Tile's repeats, OneHot's depth (NaN, infinite or huge floats
  have no integer value) and Range's count (an infinite limit, a zero delta)
  are checked before they size anything.
- Every such error quotes the bad value ("..., got 7").
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from rung.errors import RungError
from rung.runtime import InferenceSession

F, I64 = TensorProto.FLOAT, TensorProto.INT64
RNG = np.random.default_rng(11)


def _model(
    node: onnx.NodeProto, inputs: list[onnx.ValueInfoProto], out_shape: list[object]
) -> onnx.ModelProto:
    graph = helper.make_graph(
        [node], "g", inputs, [helper.make_tensor_value_info("y", F, out_shape)]
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _data(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


CASES: dict[str, tuple[onnx.ModelProto, dict[str, np.ndarray], dict[str, np.ndarray]]] = {
    # name: (model, a feed in range with negative indices, the same feed with one bad index)
    "Gather": (
        _model(
            helper.make_node("Gather", ["x", "i"], ["y"], name="op", axis=1),
            [
                helper.make_tensor_value_info("x", F, [3, 5]),
                helper.make_tensor_value_info("i", I64, [4]),
            ],
            [3, 4],
        ),
        {"x": _data(3, 5), "i": np.array([0, -1, 4, -5], np.int64)},
        {"x": _data(3, 5), "i": np.array([0, 5, 1, 2], np.int64)},
    ),
    "GatherElements": (
        _model(
            helper.make_node("GatherElements", ["x", "i"], ["y"], name="op", axis=0),
            [
                helper.make_tensor_value_info("x", F, [3, 2]),
                helper.make_tensor_value_info("i", I64, [2, 2]),
            ],
            [2, 2],
        ),
        {"x": _data(3, 2), "i": np.array([[0, -3], [2, -1]], np.int64)},
        {"x": _data(3, 2), "i": np.array([[0, -4], [2, 1]], np.int64)},
    ),
    "GatherND": (
        _model(
            helper.make_node("GatherND", ["x", "i"], ["y"], name="op"),
            [
                helper.make_tensor_value_info("x", F, ["a", "b", 2]),
                helper.make_tensor_value_info("i", I64, ["n", 2]),
            ],
            ["n", 2],
        ),
        {"x": _data(3, 4, 2), "i": np.array([[0, -1], [-3, 3]], np.int64)},
        {"x": _data(3, 4, 2), "i": np.array([[0, 1], [1, 4]], np.int64)},
    ),
    "ScatterElements": (
        _model(
            helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], name="op", axis=1),
            [
                helper.make_tensor_value_info("x", F, [2, 3]),
                helper.make_tensor_value_info("i", I64, [2, 1]),
                helper.make_tensor_value_info("u", F, [2, 1]),
            ],
            [2, 3],
        ),
        {"x": _data(2, 3), "i": np.array([[-1], [2]], np.int64), "u": _data(2, 1)},
        {"x": _data(2, 3), "i": np.array([[-1], [1000]], np.int64), "u": _data(2, 1)},
    ),
    "ScatterND": (
        _model(
            helper.make_node("ScatterND", ["x", "i", "u"], ["y"], name="op"),
            [
                helper.make_tensor_value_info("x", F, [4, 3]),
                helper.make_tensor_value_info("i", I64, [2, 1]),
                helper.make_tensor_value_info("u", F, [2, 3]),
            ],
            [4, 3],
        ),
        {"x": _data(4, 3), "i": np.array([[-4], [2]], np.int64), "u": _data(2, 3)},
        {"x": _data(4, 3), "i": np.array([[-5], [2]], np.int64), "u": _data(2, 3)},
    ),
}

BAD = {"Gather": 5, "GatherElements": -4, "GatherND": 4, "ScatterElements": 1000, "ScatterND": -5}
"""The bad index in each case's bad feed, which the error must quote."""


@pytest.mark.parametrize("level", ["core", "kernel"])
@pytest.mark.parametrize("op", sorted(CASES))
def test_out_of_range_index_fails_the_run(op: str, level: str) -> None:
    model, good, bad = CASES[op]
    session = InferenceSession(model, level=level)
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(session.run(None, good)[0], want.run(None, good)[0], rtol=1e-6)
    message = f"node 'op': {op}: an index is out of range of the dim it indexes, got {BAD[op]}$"
    with pytest.raises(RungError, match=message):
        session.run(None, bad)
    # The session is still usable after the failed run.
    np.testing.assert_allclose(session.run(None, good)[0], want.run(None, good)[0], rtol=1e-6)


def test_constant_index_out_of_range_is_refused_at_compile_time() -> None:
    node = helper.make_node("Gather", ["x", "i"], ["y"], name="op", axis=0)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", F, [3, 2])],
        [helper.make_tensor_value_info("y", F, [1, 2])],
        initializer=[onnx.numpy_helper.from_array(np.array([3], np.int64), "i")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    with pytest.raises(RungError, match="Gather: index 3 is out of range for a dim of 3"):
        InferenceSession(model, level="core")


def _reshape_model(declared: list[object], rank: int) -> onnx.ModelProto:
    node = helper.make_node("Reshape", ["x", "s"], ["y"], name="r")
    inputs = [
        helper.make_tensor_value_info("x", F, [2, 3, 4]),
        helper.make_tensor_value_info("s", I64, [rank]),
    ]
    return _model(node, inputs, declared)


@pytest.mark.parametrize("level", ["core", "kernel"])
def test_reshape_shape_is_checked(level: str) -> None:
    session = InferenceSession(_reshape_model(["n", "m"], 2), level=level)
    x = _data(2, 3, 4)
    for shape, want in (([6, -1], (6, 4)), ([0, 12], (2, 12)), ([-1, 1], (24, 1))):
        np.testing.assert_array_equal(
            session.run(None, {"x": x, "s": np.array(shape)})[0], x.reshape(want)
        )
    for shape, message in (
        ([10, 10], "the shape does not hold as many elements as the input"),
        ([5, -1], "the shape does not hold as many elements as the input"),
        ([-2, -12], "the shape may hold one -1 and no other negative size"),
        ([-1, -1], "the shape may hold one -1 and no other negative size"),
    ):
        with pytest.raises(RungError, match=f"node 'r': Reshape: {message}"):
            session.run(None, {"x": x, "s": np.array(shape)})


@pytest.mark.parametrize("level", ["core", "kernel"])
def test_declared_static_reshape_result_is_checked(level: str) -> None:
    """The model claims [4, 2, 3]; a shape input of [24, 1, 1] used to return (4, 2, 3)."""
    session = InferenceSession(_reshape_model([4, 2, 3], 3), level=level)
    x = _data(2, 3, 4)
    got = session.run(None, {"x": x, "s": np.array([4, 2, 3])})[0]
    np.testing.assert_array_equal(got, x.reshape(4, 2, 3))
    with pytest.raises(RungError, match="node 'r': Reshape: the result's shape differs"):
        session.run(None, {"x": x, "s": np.array([24, 1, 1])})


@pytest.mark.parametrize("level", ["core", "kernel"])
def test_size_too_large_to_allocate_fails_the_run(level: str) -> None:
    """Expand to [2**40] * 3: the element count overflows 64 bits; it used to crash."""
    node = helper.make_node("Expand", ["x", "s"], ["y"], name="e")
    inputs = [
        helper.make_tensor_value_info("x", F, [1]),
        helper.make_tensor_value_info("s", I64, [3]),
    ]
    session = InferenceSession(_model(node, inputs, ["a", "b", "c"]), level=level)
    x = np.ones(1, np.float32)
    assert session.run(None, {"x": x, "s": np.array([2, 1, 3])})[0].shape == (2, 1, 3)
    with pytest.raises(RungError, match="node 'e': "):
        session.run(None, {"x": x, "s": np.array([2**40] * 3)})


def _ort(model: onnx.ModelProto, feed: dict[str, np.ndarray]) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feed)[0]


def _slice_model() -> onnx.ModelProto:
    node = helper.make_node("Slice", ["x", "s", "e", "a", "p"], ["y"], name="op")
    inputs = [helper.make_tensor_value_info("x", F, [3, 4])] + [
        helper.make_tensor_value_info(n, I64, [1]) for n in "seap"
    ]
    return _model(node, inputs, ["r", "c"])


def _slice_feed(start: int, end: int, axis: int, step: int) -> dict[str, np.ndarray]:
    feed = {"x": np.arange(12, dtype=np.float32).reshape(3, 4)}
    for name, v in zip("seap", (start, end, axis, step), strict=True):
        feed[name] = np.array([v], np.int64)
    return feed


@pytest.mark.parametrize("level", ["core", "kernel"])
def test_slice_axes_and_steps_are_checked(level: str) -> None:
    model = _slice_model()
    session = InferenceSession(model, level=level)
    big = 2**62
    for good in (
        (0, 3, -1, 2),
        (big, -big, 1, -big),  # steps so large that ceil(span / step) used to overflow
        (-big, big, 0, big),
        (big, -big, -2, -1),
        (2, 1, 1, 1),  # empty
    ):
        feed = _slice_feed(*good)
        np.testing.assert_array_equal(session.run(None, feed)[0], _ort(model, feed))
    for bad, message in (
        ((0, 2, -7, 1), "Slice's axes: an index is out of range of the dim it indexes, got -7"),
        (
            (0, 2, 2**40, 1),
            "Slice's axes: an index is out of range of the dim it indexes, got 1099511627776",
        ),
        ((0, 2, 1, 0), "Slice's steps must not be 0, got 0"),
    ):
        with pytest.raises(RungError, match=f"node 'op': {message}$"):
            session.run(None, _slice_feed(*bad))


@pytest.mark.parametrize("level", ["core", "kernel"])
def test_tile_repeats_are_checked(level: str) -> None:
    node = helper.make_node("Tile", ["x", "r"], ["y"], name="op")
    inputs = [
        helper.make_tensor_value_info("x", F, [2, 3]),
        helper.make_tensor_value_info("r", I64, [2]),
    ]
    model = _model(node, inputs, ["a", "b"])
    session = InferenceSession(model, level=level)
    feed = {"x": _data(2, 3), "r": np.array([2, 1], np.int64)}
    np.testing.assert_array_equal(session.run(None, feed)[0], _ort(model, feed))
    with pytest.raises(RungError, match="node 'op': Tile's repeats must not be negative, got -1$"):
        session.run(None, {**feed, "r": np.array([3, -1], np.int64)})
    with pytest.raises(RungError, match="node 'op': "):  # too large to allocate
        session.run(None, {**feed, "r": np.array([2**40, 2**40], np.int64)})


@pytest.mark.parametrize("level", ["core", "kernel"])
def test_one_hot_depth_is_checked(level: str) -> None:
    node = helper.make_node("OneHot", ["i", "d", "v"], ["y"], name="op")
    inputs = [
        helper.make_tensor_value_info("i", I64, [3]),
        helper.make_tensor_value_info("d", F, []),
        helper.make_tensor_value_info("v", F, [2]),
    ]
    model = _model(node, inputs, [3, "d"])
    session = InferenceSession(model, level=level)
    feed = {
        "i": np.array([0, 2, -1], np.int64),
        "d": np.array(4.0, np.float32),
        "v": np.array([0.5, 2.0], np.float32),
    }
    np.testing.assert_array_equal(session.run(None, feed)[0], _ort(model, feed))
    for depth, quoted in ((np.nan, "nan"), (1e30, "1e\\+30"), (-3.0, "-3"), (np.inf, "inf")):
        with pytest.raises(
            RungError,
            match=f"node 'op': OneHot's depth must be a number of classes in \\[0, \\d+\\], got {quoted}$",
        ):
            session.run(None, {**feed, "d": np.array(depth, np.float32)})


def _range_model() -> onnx.ModelProto:
    node = helper.make_node("Range", ["a", "b", "c"], ["y"], name="op")
    inputs = [helper.make_tensor_value_info(n, F, []) for n in "abc"]
    return _model(node, inputs, ["n"])


@pytest.mark.parametrize("level", ["core", "kernel"])
def test_range_count_is_checked(level: str) -> None:
    model = _range_model()
    session = InferenceSession(model, level=level)

    def feed(a: float, b: float, c: float) -> dict[str, np.ndarray]:
        return {k: np.array(v, np.float32) for k, v in zip("abc", (a, b, c), strict=True)}

    for good in ((0, 5, 1.5), (3, -2, -1), (1, 1, 1)):
        np.testing.assert_allclose(session.run(None, feed(*good))[0], _ort(model, feed(*good)))
    for bad, quoted in (((0, np.inf, 1), "inf"), ((0, np.nan, 1), "nan"), ((0, 5, 0), "inf")):
        with pytest.raises(
            RungError,
            match=f"node 'op': Range's count .* must be finite and at most \\d+, got {quoted}$",
        ):
            session.run(None, feed(*bad))


def test_constant_range_with_zero_delta_is_refused_at_compile_time() -> None:
    model = _range_model()
    model.graph.input.pop()
    model.graph.initializer.append(onnx.numpy_helper.from_array(np.array(0, np.float32), "c"))
    for name, value in (("a", 0), ("b", 5)):
        model.graph.input.pop(0)
        model.graph.initializer.append(
            onnx.numpy_helper.from_array(np.array(value, np.float32), name)
        )
    with pytest.raises(RungError, match="Range's count .* got inf"):
        InferenceSession(model, level="core")


def test_names_with_newlines_and_quotes_reach_the_error_intact() -> None:
    """Node and value names go into the C as string literals: a newline, a quote, a
    backslash or a `?` in them used to break the C (the compile failed)."""
    odd = 'x\n"q"\\?é'
    node = helper.make_node("Gather", [odd, "i"], ["y"], name='n\n"ode"?é', axis=0)
    inputs = [
        helper.make_tensor_value_info(odd, F, ["a", 2]),
        helper.make_tensor_value_info("i", I64, [2]),
    ]
    session = InferenceSession(_model(node, inputs, [2, 2]), level="kernel")
    x = _data(3, 2)
    np.testing.assert_array_equal(session.run(None, {odd: x, "i": np.array([2, 0])})[0], x[[2, 0]])
    with pytest.raises(RungError) as err:
        session.run(None, {odd: x, "i": np.array([5, 0])})
    assert "node 'n\n\"ode\"?é': Gather: an index is out of range" in str(err.value)


def test_static_buffer_too_large_to_address_is_refused_at_compile_time() -> None:
    """Declared dims of 2**31 x 2**31 floats: the memory plan's offsets overflowed i64 and
    the error was xDSL's 'Integer value ... is out of range for type i64'."""
    node = helper.make_node("Relu", ["x"], ["y"], name="r")
    inputs = [helper.make_tensor_value_info("x", F, [2**31, 2**31])]
    model = _model(node, inputs, [2**31, 2**31])
    with pytest.raises(RungError, match="would take 18446744073709551616 bytes, more than"):
        InferenceSession(model, level="kernel")


def _if_model(cond_shape: list[object]) -> onnx.ModelProto:
    def branch(value: float) -> onnx.GraphProto:
        constant = helper.make_tensor("t", F, [1], [value])
        node = helper.make_node("Constant", [], ["o"], value=constant)
        return helper.make_graph([node], "b", [], [helper.make_tensor_value_info("o", F, [1])])

    node = helper.make_node(
        "If", ["c"], ["y"], name="if", then_branch=branch(1.0), else_branch=branch(2.0)
    )
    inputs = [helper.make_tensor_value_info("c", TensorProto.BOOL, cond_shape)]
    return _model(node, inputs, [1])


@pytest.mark.parametrize("level", ["core", "kernel"])
def test_if_condition_must_hold_one_value(level: str) -> None:
    """ONNX's If takes a condition of exactly one element; one of two ran a branch."""
    with pytest.raises(RungError, match="If's condition must hold one value, got tensor<2xi1>"):
        InferenceSession(_if_model([2]), level=level)
    session = InferenceSession(_if_model(["n"]), level=level)
    for cond, want in ((np.array([True]), 1.0), (np.array([False]), 2.0)):
        np.testing.assert_array_equal(session.run(None, {"c": cond})[0], [want])
    with pytest.raises(RungError, match="node 'if': If's condition must hold one value"):
        session.run(None, {"c": np.array([True, False])})
