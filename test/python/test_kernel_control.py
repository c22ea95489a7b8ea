"""Control flow at level kernel: If, Loop, Scan and the recurrent ops, compiled to C.

Each ONNX model runs at level kernel (scf.if / scf.while in the kernel IR,
compiled C) and is compared with level core (the reference interpreter) and
with onnxruntime. The loops cover static and run-time trip counts, loops
ended by their condition, zero trips, scan outputs and carried values that
swap or hold the iteration number.
"""

from __future__ import annotations

import re

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.utils.exceptions import VerifyException

from rung.dialects import context, kernel, parse_module
from rung.errors import EvaluationError
from rung.runtime import InferenceSession
from rung.runtime.levels import UnsupportedOpError

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
RNG = np.random.default_rng(5)


def vi(name: str, elem: int, shape: list[int | str | None] | None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def make(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: list[onnx.ValueInfoProto],
    inits: list[onnx.TensorProto] = (),  # type: ignore[assignment]
) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "control", inputs, outputs, list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    onnx.checker.check_model(model, full_check=True)
    return model


def scalar(name: str, value: object, dtype: type) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(value, dtype=dtype), name)


def run_all(model: onnx.ModelProto, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The kernel level's outputs, checked against level core and onnxruntime."""
    got = InferenceSession(model, level="kernel").run(None, feed)
    core = InferenceSession(model, level="core").run(None, feed)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = sess.run(None, feed)
    assert len(got) == len(core) == len(expected)
    for g, c, e in zip(got, core, expected, strict=True):
        g, c, e = np.asarray(g), np.asarray(c), np.asarray(e)
        assert g.dtype == e.dtype and g.shape == e.shape == c.shape
        np.testing.assert_allclose(g, c, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)
    return got


# ---- If ---------------------------------------------------------------------------------------


def if_model() -> onnx.ModelProto:
    """Branches of different static shapes ([3] and [4]): the result is `?`."""
    then = helper.make_graph(
        [helper.make_node("Add", ["x", "x"], ["t"])], "then", [], [vi("t", F, [3])]
    )
    other = helper.make_graph(
        [helper.make_node("Mul", ["y", "y"], ["e"])], "else", [], [vi("e", F, [4])]
    )
    node = helper.make_node("If", ["c"], ["r"], then_branch=then, else_branch=other)
    return make([node], [vi("c", B, []), vi("x", F, [3]), vi("y", F, [4])], [vi("r", F, ["n"])])


@pytest.mark.parametrize("cond", [True, False])
def test_if_branches_of_different_shapes(cond: bool) -> None:
    feed = {
        "c": np.array(cond),
        "x": RNG.standard_normal(3).astype(np.float32),
        "y": RNG.standard_normal(4).astype(np.float32),
    }
    (r,) = run_all(if_model(), feed)
    assert r.shape == ((3,) if cond else (4,))


def test_if_lowers_to_scf_if_with_buffer_results() -> None:
    module = InferenceSession(if_model(), level="kernel").module
    ifs = [op for op in module.walk() if op.name == "scf.if"]
    assert len(ifs) == 1 and str(ifs[0].results[0].type) == "memref<?xf32>"
    assert not [op for op in module.walk() if op.name.startswith("core.")]


# ---- Loop -------------------------------------------------------------------------------------


def counted_body(stop_after: int | None = None) -> onnx.GraphProto:
    """x ← x * 0.5 + iter; scans -x; the condition is kept, or set to `iter < stop_after`."""
    nodes = [
        helper.make_node("Cast", ["iter"], ["it"], to=F),
        helper.make_node(
            "Constant", [], ["half"], value=numpy_helper.from_array(np.array(0.5, dtype=np.float32))
        ),
        helper.make_node("Mul", ["x_in", "half"], ["xh"]),
        helper.make_node("Add", ["xh", "it"], ["x_out"]),
        helper.make_node("Neg", ["x_out"], ["scan"]),
    ]
    if stop_after is None:
        nodes.append(helper.make_node("Identity", ["cond_in"], ["cond_out"]))
    else:
        nodes += [
            helper.make_node(
                "Constant",
                [],
                ["stop"],
                value=numpy_helper.from_array(np.array(stop_after, dtype=np.int64)),
            ),
            helper.make_node("Less", ["iter", "stop"], ["cond_out"]),
        ]
    return helper.make_graph(
        nodes,
        "body",
        [vi("iter", I64, []), vi("cond_in", B, []), vi("x_in", F, [2])],
        [vi("cond_out", B, []), vi("x_out", F, [2]), vi("scan", F, [2])],
    )


def loop_model(
    trips: int | None, cond: bool | None = None, stop_after: int | None = None
) -> onnx.ModelProto:
    """A Loop with one carried value and one scan output.

    `trips` None makes M a graph input; `cond` None leaves cond out, else it
    is a graph input (the value is given at run time).
    """
    inputs = [vi("x", F, [2])]
    inits = []
    if trips is None:
        inputs.append(vi("M", I64, []))
    else:
        inits.append(scalar("M", trips, np.int64))
    if cond is not None:
        inputs.append(vi("cond", B, []))
    node = helper.make_node(
        "Loop",
        ["M", "cond" if cond is not None else "", "x"],
        ["x_final", "scans"],
        body=counted_body(stop_after),
    )
    return make([node], inputs, [vi("x_final", F, [2]), vi("scans", F, ["n", 2])], inits)


X2 = np.array([1.5, -2.0], dtype=np.float32)


def test_loop_static_trip_count() -> None:
    x, scans = run_all(loop_model(4), {"x": X2})
    assert scans.shape == (4, 2)


@pytest.mark.parametrize("trips", [3, 1, 0])
def test_loop_run_time_trip_count(trips: int) -> None:
    feed = {"x": X2, "M": np.array(trips, dtype=np.int64), "cond": np.array(True)}
    x, scans = run_all(loop_model(None, cond=True), feed)
    assert scans.shape == (trips, 2)


def test_loop_zero_trips_gives_the_initial_values_and_empty_scans() -> None:
    """Zero trips by the count, and by a false initial condition."""
    for trips, cond in ((0, True), (5, False)):
        feed = {"x": X2, "M": np.array(trips, dtype=np.int64), "cond": np.array(cond)}
        x, scans = run_all(loop_model(None, cond=True), feed)
        np.testing.assert_array_equal(x, X2)
        assert scans.shape == (0, 2)


def test_loop_ended_by_its_condition() -> None:
    """`iter < 2` stops the loop after three iterations of at most ten."""
    feed = {"x": X2, "M": np.array(10, dtype=np.int64), "cond": np.array(True)}
    x, scans = run_all(loop_model(None, cond=True, stop_after=2), feed)
    assert scans.shape == (3, 2)


def test_loop_without_trip_count_or_scans() -> None:
    """A loop bounded only by its condition (M absent) and carrying values only."""
    body = helper.make_graph(
        [
            helper.make_node(
                "Constant", [], ["four"], value=numpy_helper.from_array(np.array(4, dtype=np.int64))
            ),
            helper.make_node("Less", ["iter", "four"], ["cond_out"]),
            helper.make_node("Add", ["x_in", "x_in"], ["x_out"]),
        ],
        "body",
        [vi("iter", I64, []), vi("cond_in", B, []), vi("x_in", F, [2])],
        [vi("cond_out", B, []), vi("x_out", F, [2])],
    )
    node = helper.make_node("Loop", ["", "cond", "x"], ["x_final"], body=body)
    model = make([node], [vi("x", F, [2]), vi("cond", B, [])], [vi("x_final", F, [2])])
    (x,) = run_all(model, {"x": X2, "cond": np.array(True)})
    np.testing.assert_array_equal(x, X2 * 32)


def swap_model(fibonacci: bool) -> onnx.ModelProto:
    """Carried (a, b) become (b, a + b), or just (b, a)."""
    nodes = [helper.make_node("Identity", ["b_in"], ["a_out"])]
    if fibonacci:
        nodes.append(helper.make_node("Add", ["a_in", "b_in"], ["b_out"]))
    else:
        nodes.append(helper.make_node("Identity", ["a_in"], ["b_out"]))
    nodes.append(helper.make_node("Identity", ["cond_in"], ["cond_out"]))
    body = helper.make_graph(
        nodes,
        "body",
        [vi("iter", I64, []), vi("cond_in", B, []), vi("a_in", F, [2]), vi("b_in", F, [2])],
        [vi("cond_out", B, []), vi("a_out", F, [2]), vi("b_out", F, [2])],
    )
    node = helper.make_node("Loop", ["M", "", "a", "b"], ["a_final", "b_final"], body=body)
    return make(
        [node],
        [vi("M", I64, []), vi("a", F, [2]), vi("b", F, [2])],
        [vi("a_final", F, [2]), vi("b_final", F, [2])],
    )


@pytest.mark.parametrize("fibonacci", [False, True])
@pytest.mark.parametrize("trips", [0, 1, 3, 6])
def test_loop_carried_values_swapped(fibonacci: bool, trips: int) -> None:
    a = np.array([1.0, 0.0], dtype=np.float32)
    b = np.array([1.0, 2.0], dtype=np.float32)
    run_all(swap_model(fibonacci), {"M": np.array(trips, dtype=np.int64), "a": a, "b": b})


def test_loop_carries_the_iteration_number() -> None:
    """The body carries `iter` on and scans the previous one: [-1, 0, 1, 2], then 3.

    The iteration number lives in a buffer rewritten every iteration, so the
    carried value must be a copy of it.
    """
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["iter"], ["prev_out"]),
            helper.make_node("Identity", ["prev_in"], ["seen"]),
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        ],
        "body",
        [vi("iter", I64, []), vi("cond_in", B, []), vi("prev_in", I64, [])],
        [vi("cond_out", B, []), vi("prev_out", I64, []), vi("seen", I64, [])],
    )
    node = helper.make_node("Loop", ["M", "", "p"], ["last", "seen_all"], body=body)
    model = make(
        [node],
        [vi("M", I64, []), vi("p", I64, [])],
        [vi("last", I64, []), vi("seen_all", I64, ["n"])],
    )
    last, seen = run_all(model, {"M": np.array(4, dtype=np.int64), "p": np.array(-1)})
    assert int(last) == 3
    np.testing.assert_array_equal(seen, [-1, 0, 1, 2])


def test_loop_carried_value_grows() -> None:
    """x ← concat(x, x + iter): the carried buffer's size changes every iteration."""
    body = helper.make_graph(
        [
            helper.make_node("Cast", ["iter"], ["it"], to=F),
            helper.make_node("Add", ["x_in", "it"], ["shifted"]),
            helper.make_node("Concat", ["x_in", "shifted"], ["x_out"], axis=0),
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        ],
        "body",
        [vi("iter", I64, []), vi("cond_in", B, []), vi("x_in", F, ["n"])],
        [vi("cond_out", B, []), vi("x_out", F, ["m"])],
    )
    node = helper.make_node("Loop", ["M", "", "x"], ["x_final"], body=body)
    model = make([node], [vi("M", I64, []), vi("x", F, [2])], [vi("x_final", F, ["k"])])
    for trips in (0, 3):
        (x,) = run_all(model, {"M": np.array(trips, dtype=np.int64), "x": X2})
        assert x.shape == (2 * 2**trips,)


def test_if_inside_loop() -> None:
    """Odd iterations double the carried value, even ones negate it; both are scanned."""

    def branch(op: str, name: str) -> onnx.GraphProto:
        inputs = ["x_in", "x_in"] if op == "Add" else ["x_in"]
        return helper.make_graph(
            [helper.make_node(op, inputs, [name])], name, [], [vi(name, F, [2])]
        )

    body = helper.make_graph(
        [
            helper.make_node(
                "Constant", [], ["two"], value=numpy_helper.from_array(np.array(2, dtype=np.int64))
            ),
            helper.make_node("Mod", ["iter", "two"], ["parity"]),
            helper.make_node("Cast", ["parity"], ["odd"], to=B),
            helper.make_node(
                "If",
                ["odd"],
                ["x_out"],
                then_branch=branch("Add", "doubled"),
                else_branch=branch("Neg", "negated"),
            ),
            helper.make_node("Abs", ["x_out"], ["scan"]),
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        ],
        "body",
        [vi("iter", I64, []), vi("cond_in", B, []), vi("x_in", F, [2])],
        [vi("cond_out", B, []), vi("x_out", F, [2]), vi("scan", F, [2])],
    )
    node = helper.make_node("Loop", ["M", "", "x"], ["x_final", "scans"], body=body)
    model = make(
        [node],
        [vi("M", I64, []), vi("x", F, [2])],
        [vi("x_final", F, [2]), vi("scans", F, ["n", 2])],
    )
    x, scans = run_all(model, {"M": np.array(5, dtype=np.int64), "x": X2})
    np.testing.assert_array_equal(x, -X2 * 4)


def test_loop_bounded_only_by_its_condition_with_scans_is_refused() -> None:
    """Without M, the scan outputs have no bound to allocate them with."""
    node = helper.make_node("Loop", ["", "cond", "x"], ["x_final", "scans"], body=counted_body(2))
    model = make(
        [node],
        [vi("x", F, [2]), vi("cond", B, [])],
        [vi("x_final", F, [2]), vi("scans", F, ["n", 2])],
    )
    with pytest.raises(UnsupportedOpError, match="scan outputs and a trip count of"):
        InferenceSession(model, level="kernel")


def abs_scan_loop() -> onnx.ModelProto:
    """x ← -x for M trips, scanning |x|: rows of the run-time size of x."""
    body = helper.make_graph(
        [
            helper.make_node("Neg", ["x_in"], ["x_out"]),
            helper.make_node("Abs", ["x_in"], ["scan"]),
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        ],
        "body",
        [vi("iter", I64, []), vi("cond_in", B, []), vi("x_in", F, ["n"])],
        [vi("cond_out", B, []), vi("x_out", F, ["n"]), vi("scan", F, ["n"])],
    )
    node = helper.make_node("Loop", ["M", "", "x"], ["x_final", "scans"], body=body)
    return make(
        [node],
        [vi("M", I64, []), vi("x", F, ["n"])],
        [vi("x_final", F, ["n"]), vi("scans", F, ["k", "n"])],
    )


def test_loop_scan_of_run_time_shape() -> None:
    """Rows as long as the carried x: sized before the loop from x's initial size."""
    session = InferenceSession(abs_scan_loop(), level="kernel")
    for trips, n in ((3, 4), (1, 1), (5, 7), (0, 2)):
        x = RNG.standard_normal(n).astype(np.float32)
        final, scans = session.run(None, {"M": np.array(trips, dtype=np.int64), "x": x})
        np.testing.assert_array_equal(final, x * (-1) ** trips)
        np.testing.assert_array_equal(scans, np.tile(np.abs(x), (trips, 1)))


# ---- Scan -------------------------------------------------------------------------------------


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_running_sum(reverse: bool) -> None:
    body = helper.make_graph(
        [
            helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
            helper.make_node("Mul", ["s_out", "x_t"], ["y_t"]),
        ],
        "body",
        [vi("s_in", F, [2]), vi("x_t", F, [2])],
        [vi("s_out", F, [2]), vi("y_t", F, [2])],
    )
    node = helper.make_node(
        "Scan",
        ["s", "x"],
        ["s_final", "y"],
        body=body,
        num_scan_inputs=1,
        scan_input_directions=[int(reverse)],
        scan_output_directions=[int(reverse)],
    )
    model = make(
        [node], [vi("s", F, [2]), vi("x", F, [4, 2])], [vi("s_final", F, [2]), vi("y", F, [4, 2])]
    )
    feed = {
        "s": RNG.standard_normal(2).astype(np.float32),
        "x": RNG.standard_normal((4, 2)).astype(np.float32),
    }
    run_all(model, feed)


# ---- Scan rows of run-time shape -------------------------------------------------------------


def run_sizes(model: onnx.ModelProto, feeds: list[dict[str, np.ndarray]]) -> None:
    """One kernel-level session run at each feed's sizes, each compared with onnxruntime."""
    session = InferenceSession(model, level="kernel")
    reference = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for feed in feeds:
        got = session.run(None, feed)
        expected = reference.run(None, feed)
        for g, e in zip(got, expected, strict=True):
            g, e = np.asarray(g), np.asarray(e)
            assert g.dtype == e.dtype and g.shape == e.shape
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)


def nearest_model(reverse: bool) -> onnx.ModelProto:
    """k-nearest-neighbour distances as skl2onnx exports them: a Scan over the training
    points (last to first if `reverse`) whose state is the batch X (passed on unchanged),
    each step giving the squared distances of the N samples to one point; then each
    sample's nearest point."""
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["s_in"], ["s_out"]),
            helper.make_node("Sub", ["s_in", "p"], ["diff"]),
            helper.make_node("ReduceSumSquare", ["diff", "axis1"], ["dist"], keepdims=0),
        ],
        "body",
        [vi("s_in", F, ["N", 4]), vi("p", F, [4])],
        [vi("s_out", F, ["N", 4]), vi("dist", F, ["N"])],
        [numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1")],
    )
    scan = helper.make_node(
        "Scan",
        ["X", "points"],
        ["X_out", "dists"],
        body=body,
        num_scan_inputs=1,
        scan_input_directions=[int(reverse)],
    )
    nearest = helper.make_node("ArgMin", ["dists"], ["nearest"], axis=0, keepdims=0)
    points = numpy_helper.from_array(RNG.standard_normal((5, 4)).astype(np.float32), "points")
    return make(
        [scan, nearest],
        [vi("X", F, ["N", 4])],
        [vi("X_out", F, ["N", 4]), vi("dists", F, [5, "N"]), vi("nearest", I64, ["N"])],
        [points],
    )


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_rows_of_the_batch_size(reverse: bool) -> None:
    """One session, several batch sizes: the rows take N from the state before the loop."""
    feeds = [{"X": RNG.standard_normal((n, 4)).astype(np.float32)} for n in (1, 7, 3)]
    run_sizes(nearest_model(reverse), feeds)


def test_scan_rows_shaped_like_an_outer_input() -> None:
    """A body that reads an outer value of run-time shape (N, M) scans rows of that shape."""
    body = helper.make_graph(
        [
            helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
            helper.make_node("Mul", ["Y", "s_out"], ["row"]),
        ],
        "body",
        [vi("s_in", F, []), vi("x_t", F, [])],
        [vi("s_out", F, []), vi("row", F, ["N", "M"])],
    )
    node = helper.make_node("Scan", ["s", "x"], ["s_final", "rows"], body=body, num_scan_inputs=1)
    model = make(
        [node],
        [vi("s", F, []), vi("x", F, [3]), vi("Y", F, ["N", "M"])],
        [vi("s_final", F, []), vi("rows", F, [3, "N", "M"])],
    )
    feeds = [
        {
            "s": np.array(0.5, dtype=np.float32),
            "x": RNG.standard_normal(3).astype(np.float32),
            "Y": RNG.standard_normal(shape).astype(np.float32),
        }
        for shape in ((1, 2), (4, 3), (2, 5))
    ]
    run_sizes(model, feeds)


def test_scan_rows_sized_in_the_body_are_refused() -> None:
    """Rows of Range(0, iter): their size is computed in the body, not known before the loop."""
    body = helper.make_graph(
        [
            helper.make_node("Range", ["zero", "iter", "one"], ["scan"]),
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Identity", ["x_in"], ["x_out"]),
        ],
        "body",
        [vi("iter", I64, []), vi("cond_in", B, []), vi("x_in", F, [2])],
        [vi("cond_out", B, []), vi("x_out", F, [2]), vi("scan", I64, ["k"])],
        [scalar("zero", 0, np.int64), scalar("one", 1, np.int64)],
    )
    node = helper.make_node("Loop", ["M", "", "x"], ["x_final", "scans"], body=body)
    model = make(
        [node],
        [vi("M", I64, []), vi("x", F, [2])],
        [vi("x_final", F, [2]), vi("scans", I64, ["n", "k"])],
    )
    with pytest.raises(
        UnsupportedOpError, match="run-time shape that is read from a buffer inside"
    ):
        InferenceSession(model, level="kernel")


def test_scan_of_a_growing_carried_value_fails_the_run() -> None:
    """x ← concat(x, x), scanning x: the types (`n` in, `n` out) let the rows be sized
    from x's initial size, and the second row, twice as long, fails the run with the
    check's message instead of being written past the buffer."""
    body = helper.make_graph(
        [
            helper.make_node("Concat", ["x_in", "x_in"], ["x_out"], axis=0),
            helper.make_node("Identity", ["x_in"], ["scan"]),
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        ],
        "body",
        [vi("iter", I64, []), vi("cond_in", B, []), vi("x_in", F, ["n"])],
        [vi("cond_out", B, []), vi("x_out", F, ["n"]), vi("scan", F, ["n"])],
    )
    node = helper.make_node("Loop", ["M", "", "x"], ["x_final", "scans"], body=body)
    model = make(
        [node],
        [vi("M", I64, []), vi("x", F, ["n"])],
        [vi("x_final", F, ["m"]), vi("scans", F, ["k", "n"])],
    )
    session = InferenceSession(model, level="kernel")
    x = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    final, scans = session.run(None, {"M": np.array(1, dtype=np.int64), "x": x})
    np.testing.assert_array_equal(final, np.concatenate([x, x]))
    np.testing.assert_array_equal(scans, x[None])
    with pytest.raises(EvaluationError, match="changed shape between iterations"):
        session.run(None, {"M": np.array(3, dtype=np.int64), "x": x})


# ---- LSTM, GRU, RNN ---------------------------------------------------------------------------

SEQ, BATCH, INPUT, HIDDEN = 3, 2, 4, 5


def recurrent_model(op: str, direction: str) -> onnx.ModelProto:
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    dirs = 2 if direction == "bidirectional" else 1
    rng = np.random.default_rng(3)

    def weight(name: str, shape: tuple[int, ...]) -> onnx.TensorProto:
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.4).astype(np.float32), name)

    inits = [
        weight("W", (dirs, gates * HIDDEN, INPUT)),
        weight("R", (dirs, gates * HIDDEN, HIDDEN)),
        weight("B", (dirs, 2 * gates * HIDDEN)),
    ]
    outputs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    node = helper.make_node(
        op, ["X", "W", "R", "B"], outputs, hidden_size=HIDDEN, direction=direction
    )
    out_vi = [vi("Y", F, [SEQ, dirs, BATCH, HIDDEN]), vi("Y_h", F, [dirs, BATCH, HIDDEN])]
    if op == "LSTM":
        out_vi.append(vi("Y_c", F, [dirs, BATCH, HIDDEN]))
    return make([node], [vi("X", F, [SEQ, BATCH, INPUT])], out_vi, inits)


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_recurrent_ops(op: str, direction: str) -> None:
    model = recurrent_model(op, direction)
    core = InferenceSession(model, level="core").module
    from rung.lowering.core_to_kernel.registry import lowering_for

    missing = sorted(
        {o.name for o in core.walk() if o.name.startswith("core.") and lowering_for(o) is None}
    )
    missing = [name for name in missing if name != "core.yield"]
    if missing:
        pytest.skip(f"no kernel lowering yet for {', '.join(missing)}")
    feed = {"X": RNG.standard_normal((SEQ, BATCH, INPUT)).astype(np.float32)}
    run_all(model, feed)


# ---- kernel.subview ---------------------------------------------------------------------------

SUBVIEW = """\
func.func @f(%x: memref<?x3x4xf32>, %i: index) -> memref<4xf32> {
  %r = kernel.subview %x[%i, %i] : memref<?x3x4xf32> -> memref<4xf32>
  func.return %r : memref<4xf32>
}
"""


def test_subview_round_trips() -> None:
    module = parse_module(SUBVIEW)
    module.verify()
    assert "kernel.subview %x[%i, %i] : memref<?x3x4xf32> -> memref<4xf32>" in str(module)
    op = next(o for o in module.walk() if isinstance(o, kernel.SubviewOp))
    assert str(kernel.SubviewOp(op.source, [op.indices[0]]).result.type) == "memref<3x4xf32>"


@pytest.mark.parametrize(
    ("indices", "result", "message"),
    [
        ("%i, %i", "memref<3x4xf32>", "is memref<4xf32>, not memref<3x4xf32>"),
        ("%i", "memref<?x4xf32>", "is memref<3x4xf32>, not memref<?x4xf32>"),
        ("%i", "memref<3x4xi32>", "element types differ"),
        ("%i, %i, %i, %i", "memref<f32>", "4 indices for a buffer of rank 3"),
    ],
)
def test_subview_verifier(indices: str, result: str, message: str) -> None:
    text = (
        SUBVIEW.replace("%x[%i, %i]", f"%x[{indices}]")
        .replace("-> memref<4xf32>\n  func", f"-> {result}\n  func")
        .replace("-> memref<4xf32> {", f"-> {result} {{")
        .replace("func.return %r : memref<4xf32>", f"func.return %r : {result}")
    )
    with pytest.raises(VerifyException, match=re.escape(message)):
        parse_module(text)


def test_kernel_context_has_subview() -> None:
    assert context().get_optional_op("kernel.subview") is kernel.SubviewOp
