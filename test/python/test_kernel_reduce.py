"""The reduce family compiled to C, against the core interpreter and onnxruntime.

core.reduce, core.arg_reduce, core.cumulative, core.sort and core.nonzero run
natively (`level="kernel"`) and through the numpy interpreter of the core
dialect (`level="core"`, the executable spec); integer results and orders must
agree exactly, floats within rounding. Models of opset 21 are also checked
against onnxruntime. Several ops share one model, so that each test compiles
once.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from rung.dialects import parse_module
from rung.runtime import InferenceSession

RNG = np.random.default_rng(7)
F, D, I32, I64, F16, B = (
    TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT32, TensorProto.INT64,
    TensorProto.FLOAT16, TensorProto.BOOL,
)  # fmt: skip
NUMPY = {F: np.float32, D: np.float64, I32: np.int32, I64: np.int64, F16: np.float16, B: np.bool_}
AXES = [[1], [0, 2], [2], [0], [0, 1, 2], [1, 2]]


def make_model(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: list[onnx.ValueInfoProto],
    initializers: Sequence[TensorProto] = (),
    opset: int = 21,
) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


def vi(name: str, elem: int, shape: Sequence[int | str] | int) -> onnx.ValueInfoProto:
    """A value info; an int shape is a rank with named (unknown) dims."""
    if isinstance(shape, int):
        shape = [f"{name}_{i}" for i in range(shape)]
    return helper.make_tensor_value_info(name, elem, list(shape))


def ints(name: str, values: Sequence[int] | int) -> TensorProto:
    return numpy_helper.from_array(np.array(values, np.int64), name)


def run(model: object, feed: dict[str, np.ndarray], level: str) -> list[np.ndarray]:
    return InferenceSession(model, level=level).run(None, feed)  # type: ignore[arg-type]


def same(got: Sequence[np.ndarray], want: Sequence[np.ndarray], rtol: float = 1e-5) -> None:
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, (i, g.dtype, w.dtype, g.shape, w.shape)
        if np.issubdtype(w.dtype, np.floating):
            np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol, err_msg=f"output {i}")
        else:
            np.testing.assert_array_equal(g, w, err_msg=f"output {i}")


def check(model: onnx.ModelProto, feed: dict[str, np.ndarray], with_ort: bool = True) -> list:
    """Kernel results against the core interpreter and (opset <= 21) onnxruntime."""
    kernel = run(model, feed, "kernel")
    same(kernel, run(model, feed, "core"))
    if with_ort:
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        same(kernel, sess.run(None, feed))
    return kernel


def check_core(text: str, *inputs: np.ndarray) -> list:
    """A core module run natively and by the interpreter; exact agreement."""
    feed = {f"input_{i}": x for i, x in enumerate(inputs)}
    kernel = run(parse_module(text), feed, "kernel")
    core = run(parse_module(text), feed, "core")
    same(kernel, core, rtol=0)
    return kernel


# ---- core.reduce ---------------------------------------------------------------------------


def test_reduce_axes_and_keepdims() -> None:
    """Every reduction over axis sets that reduce the innermost dim or keep it, keepdims 0/1,
    for f32, f64, i32 and i64 inputs."""
    nodes, inputs, outputs, feed = [], [], [], {}
    inits = [ints(f"axes{a}", axes) for a, axes in enumerate(AXES)]
    for elem in (F, D, I32, I64):
        x = f"x{elem}"
        inputs.append(vi(x, elem, [3, 4, 5]))
        if elem in (F, D):
            feed[x] = RNG.uniform(0.5, 1.5, (3, 4, 5)).astype(NUMPY[elem])
        else:
            feed[x] = RNG.integers(-3, 4, (3, 4, 5)).astype(NUMPY[elem])
        ops = ["ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd"]
        ops += ["ReduceMean"] if elem in (F, D) else []
        for a, axes in enumerate(AXES):
            for op in ops:
                keep = a % 2
                name = f"{op}_{a}_{elem}"
                nodes.append(helper.make_node(op, [x, f"axes{a}"], [name], keepdims=keep))
                outputs.append(vi(name, elem, 3 if keep else 3 - len(axes)))
    check(make_model(nodes, inputs, outputs, inits), feed)


def test_reduce_run_time_sizes_and_empty() -> None:
    """Run-time sizes in both forms, including a size of 0 (the identity)."""
    nodes = [
        helper.make_node("ReduceSum", ["x", "a0"], ["s0"], keepdims=0),
        helper.make_node("ReduceMax", ["x", "a1"], ["m1"], keepdims=1),
        helper.make_node("ReduceMin", ["x", "a0"], ["n0"], keepdims=0),
        helper.make_node("ReduceProd", ["x", "a1"], ["p1"], keepdims=0),
    ]
    outputs = [vi("s0", F, 1), vi("m1", F, 2), vi("n0", F, 1), vi("p1", F, 1)]
    model = make_model(nodes, [vi("x", F, ["N", "M"])], outputs, [ints("a0", [0]), ints("a1", [1])])
    for shape in [(5, 3), (1, 7)]:
        check(model, {"x": RNG.standard_normal(shape).astype(np.float32)})
    # numpy has no identity for an empty max/min; the kernel level gives ONNX's
    s, m, n, p = run(model, {"x": np.zeros((0, 4), np.float32)}, "kernel")
    assert (s == 0).all() and s.shape == (4,) and (n == np.inf).all() and n.shape == (4,)
    s, m, n, p = run(model, {"x": np.zeros((3, 0), np.float32)}, "kernel")
    assert s.shape == (0,) and n.shape == (0,)
    assert (m == -np.inf).all() and m.shape == (3, 1)
    assert (p == 1).all() and p.shape == (3,)


def test_reduce_empty_axis_identities() -> None:
    x = np.zeros((2, 0, 3), np.float32)
    nodes = [
        helper.make_node(op, ["x", "a"], [op], keepdims=0)
        for op in ("ReduceSum", "ReduceProd", "ReduceMax", "ReduceMin")
    ]
    outputs = [vi(n.output[0], F, [2, 3]) for n in nodes]
    model = make_model(nodes, [vi("x", F, [2, 0, 3])], outputs, [ints("a", [1])])
    got = run(model, {"x": x}, "kernel")
    for g, want in zip(got, [0.0, 1.0, -np.inf, np.inf], strict=True):
        assert g.dtype == np.float32 and g.shape == (2, 3) and (g == want).all()


REDUCE_F16 = """
func.func @f(%a0: tensor<2x3000xf16>, %a1: tensor<3000x2xf16>) -> (tensor<2xf16>, tensor<2xf16>) {
  %r = core.reduce sum(%a0) {axes = array<i64: 1>} : (tensor<2x3000xf16>) -> tensor<2xf16>
  %c = core.reduce sum(%a1) {axes = array<i64: 0>} : (tensor<3000x2xf16>) -> tensor<2xf16>
  func.return %r, %c : tensor<2xf16>, tensor<2xf16>
}"""


def test_reduce_f16_accumulates_in_f32() -> None:
    """3000 ones sum to 3000 (an f16 accumulator would stop at 2048), in both forms.

    numpy sums a strided f16 axis in f16, so this compares with the exact sums.
    """
    feed = {"input_0": np.ones((2, 3000), np.float16), "input_1": np.ones((3000, 2), np.float16)}
    rows, cols = run(parse_module(REDUCE_F16), feed, "kernel")
    assert rows.dtype == cols.dtype == np.float16
    assert (rows == 3000).all() and (cols == 3000).all()


def test_reduce_f16_onnx() -> None:
    nodes = [
        helper.make_node("ReduceMean", ["x", "a"], ["m"], keepdims=1),
        helper.make_node("ReduceMax", ["x", "b"], ["h"], keepdims=0),
    ]
    model = make_model(
        nodes,
        [vi("x", F16, [4, 6])],
        [vi("m", F16, [4, 1]), vi("h", F16, [6])],
        [ints("a", [1]), ints("b", [0])],
    )
    x = RNG.standard_normal((4, 6)).astype(np.float16)
    kernel = run(model, {"x": x}, "kernel")
    same(kernel, run(model, {"x": x}, "core"), rtol=2e-3)


REDUCE_BOOL = """
func.func @f(%a0: tensor<3x4xi1>, %a1: tensor<3x4xf32>)
    -> (tensor<3xi1>, tensor<4xi1>, tensor<3xi1>, tensor<3xf32>, tensor<4xf32>, tensor<i1>) {
  %and = core.reduce and(%a0) {axes = array<i64: 1>} : (tensor<3x4xi1>) -> tensor<3xi1>
  %or = core.reduce or(%a0) {axes = array<i64: 0>} : (tensor<3x4xi1>) -> tensor<4xi1>
  %sum = core.reduce sum(%a0) {axes = array<i64: 1>} : (tensor<3x4xi1>) -> tensor<3xi1>
  %fand = core.reduce and(%a1) {axes = array<i64: 1>} : (tensor<3x4xf32>) -> tensor<3xf32>
  %for = core.reduce or(%a1) {axes = array<i64: 0>} : (tensor<3x4xf32>) -> tensor<4xf32>
  %all = core.reduce prod(%a0) {axes = array<i64: 0, 1>} : (tensor<3x4xi1>) -> tensor<i1>
  func.return %and, %or, %sum, %fand, %for, %all
      : tensor<3xi1>, tensor<4xi1>, tensor<3xi1>, tensor<3xf32>, tensor<4xf32>, tensor<i1>
}"""


def test_reduce_and_or_booleans() -> None:
    b = np.array([[1, 1, 1, 1], [0, 1, 0, 0], [0, 0, 0, 0]], bool)
    f = np.array([[1, 2, np.nan, -1], [0, 0, 0, 0], [0, 3, 0, 0]], np.float32)
    got = check_core(REDUCE_BOOL, b, f)
    assert got[0].tolist() == [True, False, False]
    assert got[3].tolist() == [1.0, 0.0, 0.0]


REDUCE_UNSIGNED = """
func.func @f(%a0: tensor<3x4xui8>) -> (tensor<3xui8>, tensor<4xui8>, tensor<3xi64>, tensor<4xui8>) {
  %max = core.reduce max(%a0) {axes = array<i64: 1>} : (tensor<3x4xui8>) -> tensor<3xui8>
  %min = core.reduce min(%a0) {axes = array<i64: 0>} : (tensor<3x4xui8>) -> tensor<4xui8>
  %arg = core.arg_reduce min(%a0) {axis = 1 : i64, last = 0 : i64} : (tensor<3x4xui8>) -> tensor<3xi64>
  %sum = core.reduce sum(%a0) {axes = array<i64: 0>} : (tensor<3x4xui8>) -> tensor<4xui8>
  func.return %max, %min, %arg, %sum : tensor<3xui8>, tensor<4xui8>, tensor<3xi64>, tensor<4xui8>
}"""


def test_reduce_unsigned() -> None:
    x = np.array([[255, 0, 7, 200], [128, 129, 255, 255], [3, 3, 1, 1]], np.uint8)
    got = check_core(REDUCE_UNSIGNED, x)
    assert got[0].tolist() == [255, 255, 3] and got[2].tolist() == [1, 0, 2]


def test_softmax_log_softmax_layer_norm() -> None:
    """The compositions that use reductions most, against onnxruntime."""
    nodes = [
        helper.make_node("Softmax", ["x"], ["s"], axis=-1),
        helper.make_node("LogSoftmax", ["x"], ["l"], axis=1),
        helper.make_node("LayerNormalization", ["x", "g", "b"], ["n"], axis=-1, epsilon=1e-5),
        helper.make_node("ReduceLogSumExp", ["x", "a"], ["e"], keepdims=0),
        helper.make_node("ReduceL2", ["x", "a"], ["q"], keepdims=1),
    ]
    outputs = [vi(n, F, [2, 3, 8]) for n in "sln"] + [vi("e", F, [2, 8]), vi("q", F, [2, 1, 8])]
    inits = [
        numpy_helper.from_array(RNG.standard_normal(8).astype(np.float32), "g"),
        numpy_helper.from_array(RNG.standard_normal(8).astype(np.float32), "b"),
        ints("a", [1]),
    ]
    model = make_model(nodes, [vi("x", F, [2, 3, 8])], outputs, inits)
    check(model, {"x": (RNG.standard_normal((2, 3, 8)) * 4).astype(np.float32)})


# ---- core.arg_reduce -----------------------------------------------------------------------


def _arg_model(elems: Sequence[int]) -> onnx.ModelProto:
    nodes, inputs, outputs = [], [], []
    for elem in elems:
        inputs.append(vi(f"x{elem}", elem, [3, 4, 5]))
        for op in ("ArgMax", "ArgMin"):
            for axis in (0, 1, 2, -1):
                for last in (0, 1):
                    keep = int(axis == 1)
                    name = f"{op}_{axis}_{last}_{elem}".replace("-", "m")
                    node = helper.make_node(
                        op, [f"x{elem}"], [name], axis=axis, keepdims=keep, select_last_index=last
                    )
                    nodes.append(node)
                    outputs.append(vi(name, I64, 3 if keep else 2))
    return make_model(nodes, inputs, outputs)


def test_arg_reduce_ties() -> None:
    """Few distinct values, so most lines have ties: first and last indices both checked."""
    x = RNG.integers(0, 3, (3, 4, 5))
    check(_arg_model([F, I32]), {f"x{F}": x.astype(np.float32), f"x{I32}": x.astype(np.int32)})


def test_arg_reduce_nans() -> None:
    """Like numpy: the first NaN wins (the last one with select_last_index)."""
    x = RNG.integers(0, 3, (3, 4, 5)).astype(np.float32)
    x[0, 1, :] = np.nan
    x[0, 3, ::2] = np.nan
    x[2, :, 4] = np.nan
    x[1, 2, 3] = -np.inf
    model = _arg_model([F])
    got = check(model, {f"x{F}": x}, with_ort=False)
    names = [o.name for o in model.graph.output]
    assert got[names.index(f"ArgMax_1_0_{F}")][0, 0, 0] == 1
    assert got[names.index(f"ArgMax_1_1_{F}")][0, 0, 0] == 3
    assert got[names.index(f"ArgMin_2_0_{F}")][2, 0] == 4


# ---- core.cumulative -----------------------------------------------------------------------


def _cumulative_model(
    op: str, elems: Sequence[int], shape: Sequence[int | str], opset: int
) -> onnx.ModelProto:
    nodes, inputs, outputs, inits = [], [], [], []
    rank = len(shape)
    for axis in range(-1, rank):
        inits.append(ints(f"axis{axis + 1}", axis))
    for elem in elems:
        inputs.append(vi(f"x{elem}", elem, list(shape)))
        for axis in range(-1, rank):
            for exclusive in (0, 1):
                for reverse in (0, 1):
                    name = f"{op}_{axis + 1}_{exclusive}{reverse}_{elem}"
                    node = helper.make_node(
                        op,
                        [f"x{elem}", f"axis{axis + 1}"],
                        [name],
                        exclusive=exclusive,
                        reverse=reverse,
                    )
                    nodes.append(node)
                    outputs.append(vi(name, elem, rank))
    return make_model(nodes, inputs, outputs, inits, opset)


def test_cumsum_axes_exclusive_reverse() -> None:
    elems = [F, D, I32, I64]
    x = RNG.integers(-5, 6, (3, 4, 5))
    check(
        _cumulative_model("CumSum", elems, [3, 4, 5], 21),
        {f"x{e}": x.astype(NUMPY[e]) for e in elems},
    )


def test_cumsum_run_time_sizes() -> None:
    """The axis of run-time size 0, 1 and more, as innermost dim and not."""
    model = _cumulative_model("CumSum", [F], ["N", "M"], 21)
    for shape in [(4, 3), (1, 5), (3, 1)]:
        check(model, {f"x{F}": RNG.standard_normal(shape).astype(np.float32)})
    for shape in [(0, 2), (2, 0)]:  # numpy's reference cannot take an empty exclusive sum
        got = run(model, {f"x{F}": np.zeros(shape, np.float32)}, "kernel")
        assert all(g.shape == shape for g in got)


def test_cumprod() -> None:
    model = _cumulative_model("CumProd", [F], [3, 4, 5], onnx.defs.onnx_opset_version())
    x = RNG.uniform(0.5, 1.5, (3, 4, 5)).astype(np.float32)
    check(model, {f"x{F}": x}, with_ort=False)


# ---- core.sort -----------------------------------------------------------------------------


def _topk_model(elems: Sequence[int], k: int) -> onnx.ModelProto:
    nodes, inputs, outputs = [], [], []
    for elem in elems:
        inputs.append(vi(f"x{elem}", elem, [6, 6, 6]))
        for axis in (0, 1, -1):
            for largest in (1, 0):
                v, i = (f"{n}_{axis}_{largest}_{elem}".replace("-", "m") for n in "vi")
                nodes.append(
                    helper.make_node("TopK", [f"x{elem}", "k"], [v, i], axis=axis, largest=largest)
                )
                outputs += [vi(v, elem, 3), vi(i, I64, 3)]
    return make_model(nodes, inputs, outputs, [ints("k", [k])])


def test_topk_ties() -> None:
    """Descending and ascending along every axis; equal values keep the lower index first."""
    elems = [F, I64, D]
    x = RNG.integers(-3, 4, (6, 6, 6))
    check(_topk_model(elems, 4), {f"x{e}": x.astype(NUMPY[e]) for e in elems})


def test_topk_all_of_the_axis() -> None:
    x = RNG.standard_normal((6, 6, 6)).astype(np.float32)
    check(_topk_model([F], 6), {f"x{F}": x})


SORT = """
func.func @f(%a0: tensor<?x?xf32>)
    -> (tensor<?x?xf32>, tensor<?x?xi64>, tensor<?x?xf32>, tensor<?x?xi64>) {
  %v, %i = core.sort(%a0) {axis = 1 : i64, descending = 0 : i64}
      : (tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xi64>)
  %w, %j = core.sort(%a0) {axis = 0 : i64, descending = 1 : i64}
      : (tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xi64>)
  func.return %v, %i, %w, %j : tensor<?x?xf32>, tensor<?x?xi64>, tensor<?x?xf32>, tensor<?x?xi64>
}"""


def test_sort_nans_zeros_and_long_lines() -> None:
    """NaNs last both ways, -0.0 ties 0.0, and lines long enough to merge many runs stably."""
    x = np.array(
        [[np.nan, 1, -0.0, 0.0, -np.inf, np.nan, 1, np.inf], [3, np.nan, 2, 2, 0.0, -0.0, 1, 3]],
        np.float32,
    )
    got = check_core(SORT, x)
    assert got[1][0].tolist() == [4, 2, 3, 1, 6, 7, 0, 5]
    assert np.isnan(got[2][1, 0]) and got[3][:, 0].tolist() == [1, 0]
    check_core(SORT, RNG.integers(0, 5, (3, 1000)).astype(np.float32))
    check_core(SORT, RNG.integers(0, 5, (77, 2)).astype(np.float32))
    check_core(SORT, np.zeros((0, 3), np.float32))


SORT_TYPES = """
func.func @f(%a0: tensor<40xi64>, %a1: tensor<40xf16>, %a2: tensor<5x8xi32>)
    -> (tensor<40xi64>, tensor<40xi64>, tensor<40xf16>, tensor<40xi64>, tensor<5x8xi32>,
        tensor<5x8xi64>) {
  %v, %i = core.sort(%a0) {axis = 0 : i64, descending = 1 : i64}
      : (tensor<40xi64>) -> (tensor<40xi64>, tensor<40xi64>)
  %w, %j = core.sort(%a1) {axis = 0 : i64, descending = 0 : i64}
      : (tensor<40xf16>) -> (tensor<40xf16>, tensor<40xi64>)
  %y, %k = core.sort(%a2) {axis = 0 : i64, descending = 1 : i64}
      : (tensor<5x8xi32>) -> (tensor<5x8xi32>, tensor<5x8xi64>)
  func.return %v, %i, %w, %j, %y, %k : tensor<40xi64>, tensor<40xi64>, tensor<40xf16>,
      tensor<40xi64>, tensor<5x8xi32>, tensor<5x8xi64>
}"""


def test_sort_integer_and_half_types() -> None:
    big = np.array([2**62, 2**62 + 1, -(2**63), 2**63 - 1], np.int64)
    a = np.concatenate([RNG.integers(-4, 4, 36), big]).astype(np.int64)
    h = RNG.integers(-3, 3, 40).astype(np.float16)
    h[[3, 17]] = np.nan
    c = RNG.integers(-2, 2, (5, 8)).astype(np.int32)
    check_core(SORT_TYPES, a, h, c)


# ---- core.nonzero --------------------------------------------------------------------------


def test_nonzero() -> None:
    nodes = [
        helper.make_node("NonZero", ["x"], ["nx"]),
        helper.make_node("NonZero", ["b"], ["nb"]),
        helper.make_node("NonZero", ["i"], ["ni"]),
    ]
    model = make_model(
        nodes,
        [vi("x", F, [3, 4, 5]), vi("b", B, ["N"]), vi("i", I32, [2, 3])],
        [vi("nx", I64, 2), vi("nb", I64, 2), vi("ni", I64, 2)],
    )
    x = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    x[x < 0.5] = 0
    x[1, 1, 1] = np.nan
    feed = {"x": x, "b": RNG.random(9) < 0.4, "i": np.array([[0, -1, 0], [2, 0, 3]], np.int32)}
    got = check(model, feed)
    assert got[0].shape[0] == 3 and got[2].tolist() == [[0, 1, 1], [1, 0, 2]]
    zeros = {
        "x": np.zeros((3, 4, 5), np.float32),
        "b": np.zeros(0, bool),
        "i": np.zeros((2, 3), np.int32),
    }
    got = check(model, zeros)
    assert [g.shape for g in got] == [(3, 0), (1, 0), (2, 0)]
