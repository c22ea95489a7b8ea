"""Reductions over axes known only at run time, and TopK, Hardmax and Einsum over `?` dims.

The Reduce* ops take `axes` as an input; when it is a graph input (typed
`[?]`) over an input of `?` dims, neither the axes nor the result's sizes are
known before the run. They lower to core.masked_reduce, whose mask of reduced
dims is computed at run time. Each model is compiled once (level kernel) and
run on several shapes and axes against onnxruntime, and the core interpreter
must agree. Bad axes must fail the run with an error naming the node.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from rung.dialects import parse_module
from rung.errors import RungError
from rung.runtime import InferenceSession

F, F16, I32, I64 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT32, TensorProto.INT64
RNG = np.random.default_rng(11)

REDUCTIONS = [
    "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
    "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare",
]  # fmt: skip


def _model(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: list[onnx.ValueInfoProto],
    opset: int = 18,
) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=9)


def _symbolic(name: str, elem: int, rank: int) -> onnx.ValueInfoProto:
    """A value of `rank` dims, every one symbolic."""
    return helper.make_tensor_value_info(name, elem, [f"{name}_{i}" for i in range(rank)])


class _Compiled:
    """One model at level kernel, checked against the core interpreter and onnxruntime."""

    def __init__(self, model: onnx.ModelProto) -> None:
        self.kernel = InferenceSession(model, level="kernel")
        self.core = InferenceSession(model, level="core")
        self.ort = ort.InferenceSession(
            model.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        self.names = [o.name for o in model.graph.output]

    def check(self, feed: dict[str, np.ndarray], rtol: float = 1e-4) -> list[np.ndarray]:
        got = self.kernel.run(None, feed)
        want = self.ort.run(None, feed)
        spec = self.core.run(None, feed)
        for name, g, w, c in zip(self.names, got, want, spec, strict=True):
            g, w, c = np.asarray(g), np.asarray(w), np.asarray(c)
            assert g.shape == w.shape, f"{name}: shape {g.shape}, onnxruntime {w.shape}"
            assert g.dtype == w.dtype, f"{name}: dtype {g.dtype}, onnxruntime {w.dtype}"
            np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol, err_msg=name)
            np.testing.assert_allclose(c, g, rtol=rtol, atol=rtol, err_msg=f"{name} (core)")
        return got

    def fails(self, feed: dict[str, np.ndarray], message: str) -> None:
        for session in (self.kernel, self.core):
            with pytest.raises(RungError, match=message):
                session.run(None, feed)


# ---- Reduce* over run-time axes --------------------------------------------------------------


def _reductions(keepdims: int, out_rank: int, noop: int = 0, elem: int = F) -> _Compiled:
    nodes = [
        helper.make_node(
            op,
            ["x", "axes"],
            [op.lower()],
            name=op.lower(),
            keepdims=keepdims,
            noop_with_empty_axes=noop,
        )
        for op in REDUCTIONS
    ]
    outputs = [_symbolic(op.lower(), elem, out_rank) for op in REDUCTIONS]
    return _Compiled(_model(nodes, [_symbolic("x", elem, 3), _symbolic("axes", I64, 1)], outputs))


@pytest.fixture(scope="module")
def kept() -> _Compiled:
    return _reductions(keepdims=1, out_rank=3)


@pytest.fixture(scope="module")
def dropped_one() -> _Compiled:
    return _reductions(keepdims=0, out_rank=2)


def _positive(shape: Sequence[int]) -> np.ndarray:
    """Inputs away from 0, so that log-sums and products stay well defined."""
    return RNG.uniform(0.5, 1.5, shape).astype(np.float32)


@pytest.mark.parametrize(
    ("shape", "axes"),
    [
        ((2, 3, 4), [1]),
        ((2, 3, 4), [-1]),
        ((2, 3, 4), [0, 2]),
        ((5, 1, 3), [2, -3]),
        ((2, 3, 4), [0, 1, 2]),
        ((4, 2, 3), []),  # no axes: every dim
    ],
)
def test_keepdims_every_reduction(kept: _Compiled, shape: tuple[int, ...], axes: list[int]) -> None:
    kept.check({"x": _positive(shape), "axes": np.array(axes, np.int64)})


@pytest.mark.parametrize(("shape", "axis"), [((2, 3, 4), 0), ((3, 5, 2), -2), ((1, 6, 7), 2)])
def test_dropped_axis_every_reduction(
    dropped_one: _Compiled, shape: tuple[int, ...], axis: int
) -> None:
    dropped_one.check({"x": _positive(shape), "axes": np.array([axis], np.int64)})


EMPTY_SET = {
    "ReduceSum": 0.0, "ReduceMean": np.nan, "ReduceMax": -np.inf, "ReduceMin": np.inf,
    "ReduceProd": 1.0, "ReduceL1": 0.0, "ReduceL2": 0.0, "ReduceLogSum": -np.inf,
    "ReduceLogSumExp": -np.inf, "ReduceSumSquare": 0.0,
}  # fmt: skip
"""What reducing an empty set gives: numpy's (the ONNX reference's) answers."""


def test_empty_set_gives_the_identity(kept: _Compiled) -> None:
    """A reduced dim of size 0 gives the identity (the mean of nothing is NaN, as in numpy;
    onnxruntime says 0)."""
    feed = {"x": np.zeros((2, 0, 3), np.float32), "axes": np.array([1], np.int64)}
    for session in (kept.kernel, kept.core):
        got = session.run(None, feed)
        for op, value in zip(REDUCTIONS, got, strict=True):
            want = np.full((2, 1, 3), EMPTY_SET[op], np.float32)
            np.testing.assert_array_equal(value, want, err_msg=op)


def test_noop_with_empty_axes_reduces_nothing() -> None:
    """noop_with_empty_axes: empty run-time axes reduce nothing; the composite ops are
    then their elementwise part (ReduceL1 gives |x|, as ONNX's reference and onnxruntime
    say). Other axes reduce as usual."""
    model = _reductions(keepdims=1, out_rank=3, noop=1)
    x = _positive((2, 3, 4))
    got = model.check({"x": x, "axes": np.zeros(0, np.int64)})
    np.testing.assert_array_equal(got[REDUCTIONS.index("ReduceSum")], x)
    np.testing.assert_allclose(got[REDUCTIONS.index("ReduceLogSum")], np.log(x), rtol=1e-6)
    model.check({"x": _positive((2, 3, 4)), "axes": np.array([0, 2], np.int64)})


def test_integer_and_half_reductions() -> None:
    """ReduceMax of int32 and ReduceSum of float16 (summed in f32) over run-time axes."""
    nodes = [
        helper.make_node("ReduceMax", ["i", "axes"], ["imax"], keepdims=0),
        helper.make_node("ReduceSum", ["h", "axes"], ["hsum"], keepdims=0),
    ]
    inputs = [_symbolic("i", I32, 3), _symbolic("h", F16, 3), _symbolic("axes", I64, 1)]
    outputs = [_symbolic("imax", I32, 1), _symbolic("hsum", F16, 1)]
    model = _Compiled(_model(nodes, inputs, outputs))
    for shape, axes in [((2, 3, 4), [0, 2]), ((4, 1, 5), [-1, 1]), ((3, 3, 3), [1, 0])]:
        feed = {
            "i": RNG.integers(-100, 100, shape).astype(np.int32),
            "h": RNG.uniform(-1, 1, shape).astype(np.float16),
            "axes": np.array(axes, np.int64),
        }
        model.check(feed, rtol=1e-2)


def test_axes_of_static_length_give_the_rank() -> None:
    """keepdims=0 with an undeclared result rank: the static number of axes decides it."""
    nodes = [
        helper.make_node("ReduceSum", ["x", "axes"], ["s"], keepdims=0),
        helper.make_node("Neg", ["s"], ["y"]),
    ]
    inputs = [_symbolic("x", F, 3), helper.make_tensor_value_info("axes", I64, [2])]
    outputs = [_symbolic("y", F, 1)]  # `s` has no declared type: ONNX infers none
    model = _Compiled(_model(nodes, inputs, outputs))
    model.check({"x": _positive((2, 3, 4)), "axes": np.array([2, 0], np.int64)})
    model.check({"x": _positive((5, 2, 1)), "axes": np.array([-1, 1], np.int64)})


def test_rank_from_the_users_of_an_undeclared_result() -> None:
    """keepdims=0 over axes of run-time length, as an expanded ReduceL2 writes it: the
    result's rank comes from the ranked output its elementwise users declare, and the
    run checks the axes drop that many dims."""
    nodes = [
        helper.make_node("ReduceSum", ["x", "axes"], ["s"], keepdims=0),
        helper.make_node("Cast", ["s"], ["c"], to=F),
        helper.make_node("Sqrt", ["c"], ["y"], name="sqrt"),
    ]
    inputs = [_symbolic("x", F, 3), _symbolic("axes", I64, 1)]
    outputs = [_symbolic("y", F, 2)]  # `s` and `c` have no declared type
    model = _Compiled(_model(nodes, inputs, outputs))
    model.check({"x": _positive((2, 3, 4)), "axes": np.array([1], np.int64)})
    model.check({"x": _positive((5, 2, 1)), "axes": np.array([-1], np.int64)})
    model.fails(
        {"x": _positive((2, 3, 4)), "axes": np.array([0, 1], np.int64)},
        "must name exactly 1 distinct",
    )


def test_bad_axes_fail_the_run(kept: _Compiled, dropped_one: _Compiled) -> None:
    x = _positive((2, 3, 4))
    kept.fails(
        {"x": x, "axes": np.array([3], np.int64)}, r"node 'reducesum': axes must lie in \[-3, 2\]"
    )
    kept.fails({"x": x, "axes": np.array([-4], np.int64)}, "axes must lie in")
    dropped_one.fails(
        {"x": x, "axes": np.array([0, 1], np.int64)}, "the axes must name exactly 1 distinct dims"
    )
    dropped_one.fails({"x": x, "axes": np.zeros(0, np.int64)}, "must name exactly 1 distinct")


def test_static_result_shape_is_checked() -> None:
    """A declared static result is a claim: run-time axes that contradict it fail the run."""
    nodes = [helper.make_node("ReduceMax", ["x", "axes"], ["m"], name="m", keepdims=1)]
    inputs = [helper.make_tensor_value_info("x", F, [2, 3]), _symbolic("axes", I64, 1)]
    outputs = [helper.make_tensor_value_info("m", F, [2, 1])]
    model = _Compiled(_model(nodes, inputs, outputs))
    model.check({"x": _positive((2, 3)), "axes": np.array([1], np.int64)})
    model.fails(
        {"x": _positive((2, 3)), "axes": np.array([0], np.int64)},
        "node 'm': the reduction: the result's shape differs from the declared",
    )


# ---- core.masked_reduce itself ---------------------------------------------------------------

MASKED = """
func.func @f(%x: tensor<?x?x?xf32>, %m: tensor<3xi1>, %i: tensor<?x?xi64>, %n: tensor<2xi1>)
    -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?xi64>, tensor<?x?xi64>) {
  %s = core.masked_reduce sum(%x, %m) : (tensor<?x?x?xf32>, tensor<3xi1>) -> tensor<?x?x?xf32>
  %mn = core.masked_reduce min(%x, %m) : (tensor<?x?x?xf32>, tensor<3xi1>) -> tensor<?x?x?xf32>
  %p = core.masked_reduce prod(%i, %n) : (tensor<?x?xi64>, tensor<2xi1>) -> tensor<?x?xi64>
  %o = core.masked_reduce max(%i, %n) : (tensor<?x?xi64>, tensor<2xi1>) -> tensor<?x?xi64>
  func.return %s, %mn, %p, %o : tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?xi64>, tensor<?x?xi64>
}
"""


@pytest.mark.parametrize(
    ("mask", "mask2"),
    [([True, False, True], [False, True]), ([False] * 3, [True, True]), ([True] * 3, [False] * 2)],
)
def test_masked_reduce_against_numpy(mask: list[bool], mask2: list[bool]) -> None:
    x = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    i = RNG.integers(-3, 4, (4, 3)).astype(np.int64)
    feed = {"input_0": x, "input_1": np.array(mask), "input_2": i, "input_3": np.array(mask2)}
    axes = tuple(np.flatnonzero(mask))
    axes2 = tuple(np.flatnonzero(mask2))
    want = [
        np.sum(x, axis=axes, keepdims=True),
        np.min(x, axis=axes, keepdims=True),
        np.prod(i, axis=axes2, keepdims=True),
        np.max(i, axis=axes2, keepdims=True),
    ]
    for level in ("kernel", "core"):
        got = InferenceSession(parse_module(MASKED), level=level).run(None, feed)
        for g, w in zip(got, want, strict=True):
            assert g.shape == w.shape and g.dtype == w.dtype, (level, g.shape, w.shape)
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=level)


# ---- TopK, Hardmax, Einsum over `?` dims -----------------------------------------------------


def test_top_k_with_k_of_dynamic_length() -> None:
    """K typed `[?]`: it must hold one value, which the run checks."""
    node = helper.make_node("TopK", ["x", "k"], ["v", "i"], name="top", axis=-1)
    inputs = [_symbolic("x", F, 2), _symbolic("k", I64, 1)]
    outputs = [_symbolic("v", F, 2), _symbolic("i", I64, 2)]
    model = _Compiled(_model([node], inputs, outputs))
    for shape, k in [((3, 5), 2), ((2, 7), 7), ((4, 1), 0)]:
        model.check({"x": RNG.standard_normal(shape).astype(np.float32), "k": np.array([k])})
    x = RNG.standard_normal((3, 5)).astype(np.float32)
    model.fails({"x": x, "k": np.array([1, 2])}, "node 'top': TopK: K must hold one value")
    model.fails({"x": x, "k": np.zeros(0, np.int64)}, "TopK: K must hold one value")


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_hardmax_along_a_dynamic_dim(axis: int) -> None:
    node = helper.make_node("Hardmax", ["x"], ["y"], axis=axis)
    model = _Compiled(_model([node], [_symbolic("x", F, 3)], [_symbolic("y", F, 3)]))
    for shape in [(2, 3, 4), (5, 1, 2), (1, 6, 1)]:
        x = RNG.integers(0, 3, shape).astype(np.float32)  # ties: the first index wins
        model.check({"x": x})


EINSUMS = [
    ("bij,bjk->bik", [3, 3]),
    ("ii->i", [2]),
    ("...ii->...i", [3]),
    ("pqs,qsr->pr", [3, 3]),
    ("i,i", [1, 1]),
    ("ij->ji", [2]),
    ("ij->i", [2]),
    ("ij,jk,kl->il", [2, 2, 2]),
]


def _einsum_feed(equation: str, sizes: dict[str, int]) -> dict[str, np.ndarray]:
    terms = equation.split("->")[0].split(",")
    feed = {}
    for n, term in enumerate(terms):
        shape = [sizes[c] for c in term.replace("...", "E")]
        feed[f"x{n}"] = RNG.standard_normal(shape).astype(np.float32)
    return feed


@pytest.mark.parametrize(("equation", "ranks"), EINSUMS)
def test_einsum_over_dynamic_dims(equation: str, ranks: list[int]) -> None:
    names = [f"x{n}" for n in range(len(ranks))]
    node = helper.make_node("Einsum", names, ["y"], name="e", equation=equation)
    inputs = [_symbolic(name, F, rank) for name, rank in zip(names, ranks, strict=True)]
    out_rank = len(np.einsum(equation, *(np.zeros([1] * r) for r in ranks)).shape)
    model = _Compiled(_model([node], inputs, [_symbolic("y", F, out_rank)], opset=21))
    for _ in range(2):
        sizes = {c: int(v) for c, v in zip("bijklpqrsE", RNG.integers(1, 5, 10), strict=True)}
        model.check(_einsum_feed(equation, sizes))


def test_einsum_sizes_that_differ_fail_the_run() -> None:
    node = helper.make_node("Einsum", ["a", "b"], ["y"], name="mm", equation="ij,jk->ik")
    inputs = [_symbolic("a", F, 2), _symbolic("b", F, 2)]
    model = _Compiled(_model([node], inputs, [_symbolic("y", F, 2)], opset=21))
    feed = {"a": np.ones((2, 3), np.float32), "b": np.ones((4, 5), np.float32)}
    model.fails(feed, "node 'mm': Einsum: index 'j' has different sizes")
