"""Run-time shapes for quantization, Resize, pads that depend on a size, GroupNorm and LRN.

Each of these was refused once an input dim was symbolic, though a static
model of the same op ran: quantization's scale layout ("needs static
shapes"), QLinearMatMul's per-row/per-column scales, Resize with run-time
`sizes` (ONNX's own shape inference erred at import), auto_pad SAME with a
stride and ceil_mode along a `?` dim (the pads depend on the size),
ConvTranspose's output_shape, GroupNormalization and LRN over `?` channels.
Each model is compiled once and run at several sizes against onnxruntime or
ONNX's reference; lengths that cannot fit fail the run naming the node.
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
from rung.importers.onnx import import_model
from rung.runtime import InferenceSession

F, I8, U8, I64 = TensorProto.FLOAT, TensorProto.INT8, TensorProto.UINT8, TensorProto.INT64
RNG = np.random.default_rng(7)
LEVELS = ["core", "kernel"]


def _model(
    nodes: Sequence[onnx.NodeProto],
    inputs: Sequence[onnx.ValueInfoProto],
    outputs: Sequence[onnx.ValueInfoProto],
    inits: Sequence[onnx.TensorProto] = (),
    opset: int = 21,
) -> onnx.ModelProto:
    graph = helper.make_graph(list(nodes), "g", list(inputs), list(outputs), list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _out(name: str, elem: int, rank: int) -> onnx.ValueInfoProto:
    """An output of `rank` symbolic dims: its shape is for rung to compute."""
    return helper.make_tensor_value_info(name, elem, [f"{name}_{i}" for i in range(rank)])


def _ort(model: onnx.ModelProto) -> ort.InferenceSession:
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def _weight(name: str, shape: Sequence[int]) -> onnx.TensorProto:
    return numpy_helper.from_array(RNG.standard_normal(shape).astype(np.float32), name)


def _assert_match(got: Sequence[np.ndarray], want: Sequence[object], names: list[str]) -> None:
    for name, g, w in zip(names, got, want, strict=True):
        w = np.asarray(w)
        assert g.shape == w.shape, f"{name}: shape {g.shape}, expected {w.shape}"
        np.testing.assert_allclose(
            g.astype(np.float64), w.astype(np.float64), rtol=1e-4, atol=1e-4, err_msg=name
        )


# ---- pads that depend on a `?` size -----------------------------------------------------------

PAD_NODES: list[tuple[str, str, list[str], dict[str, object]]] = [
    ("conv_same_lower", "Conv", ["w6"], {"auto_pad": "SAME_LOWER", "strides": [2, 2]}),
    (
        "conv_same_upper",
        "Conv",
        ["w6", "b6"],
        {"auto_pad": "SAME_UPPER", "strides": [2, 3]},
    ),
    (
        "max_pool_same",
        "MaxPool",
        [],
        {"kernel_shape": [3, 3], "auto_pad": "SAME_UPPER", "strides": [2, 2]},
    ),
    (
        "avg_pool_same",
        "AveragePool",
        [],
        {"kernel_shape": [3, 2], "auto_pad": "SAME_LOWER", "strides": [2, 2]},
    ),
    (
        "max_pool_ceil_in_pad",
        "MaxPool",
        [],
        {"kernel_shape": [2, 2], "pads": [1, 1, 1, 1], "strides": [2, 2], "ceil_mode": 1},
    ),
    (
        "avg_pool_ceil_in_pad",
        "AveragePool",
        [],
        {"kernel_shape": [2, 2], "pads": [1, 1, 1, 1], "strides": [2, 2], "ceil_mode": 1},
    ),
    (
        "avg_pool_ceil_in_pad_counted",
        "AveragePool",
        [],
        {
            "kernel_shape": [3, 2],
            "pads": [1, 1, 2, 1],
            "strides": [3, 2],
            "ceil_mode": 1,
            "count_include_pad": 1,
        },
    ),
    (
        "lp_pool_same",
        "LpPool",
        [],
        {"kernel_shape": [2, 2], "auto_pad": "SAME_UPPER", "strides": [2, 2]},
    ),
]


def _pad_model() -> onnx.ModelProto:
    """Every node reads x [n, 4, h, w]: its pads depend on h and w."""
    nodes = [helper.make_node(op, ["x", *ws], [name], **attrs) for name, op, ws, attrs in PAD_NODES]
    outputs = [
        helper.make_tensor_value_info(name, F, ["n", "c", "ho", "wo"]) for name, *_ in PAD_NODES
    ]
    inputs = [helper.make_tensor_value_info("x", F, ["n", 4, "h", "w"])]
    return _model(nodes, inputs, outputs, [_weight("w6", [6, 4, 3, 3]), _weight("b6", [6])], 19)


@pytest.mark.parametrize("level", LEVELS)
def test_pads_that_depend_on_a_dynamic_size_are_computed_at_run_time(level: str) -> None:
    model = _pad_model()
    session = InferenceSession(model, level=level)
    reference = _ort(model)
    names = [name for name, *_ in PAD_NODES]
    for shape in [(1, 4, 7, 9), (2, 4, 8, 6), (1, 4, 5, 4)]:
        feed = {"x": RNG.standard_normal(shape).astype(np.float32)}
        _assert_match(session.run(None, feed), reference.run(None, feed), names)


def _conv_transpose_model(attrs: dict[str, object], kernel: Sequence[object]) -> onnx.ModelProto:
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], **attrs)
    inputs = [
        helper.make_tensor_value_info("x", F, ["n", 2, "h", "w"]),
        helper.make_tensor_value_info("w", F, [2, 3, *kernel]),
    ]
    return _model([node], inputs, [_out("y", F, 4)], opset=19)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(
    ("attrs", "kernel"),
    [
        ({"output_shape": [10, 8], "strides": [3, 2]}, [3, 3]),
        ({"output_shape": [10, 8], "strides": [3, 2], "output_padding": [1, 1]}, [3, 3]),
        ({"auto_pad": "SAME_UPPER", "strides": [2, 2]}, ["kh", "kw"]),
        ({"auto_pad": "SAME_LOWER", "strides": [2, 3], "output_padding": [1, 0]}, ["kh", "kw"]),
    ],
    ids=["output_shape", "output_shape_padding", "same_upper_dynamic_kernel", "same_lower"],
)
def test_conv_transpose_pads_at_run_time(
    level: str, attrs: dict[str, object], kernel: list[object]
) -> None:
    """output_shape over `?` input dims, and auto_pad SAME with a `?` kernel: the output is
    cropped to its size when the model runs."""
    model = _conv_transpose_model(attrs, kernel)
    session = InferenceSession(model, level=level)
    reference = _ort(model)
    for x_shape, k in [((1, 2, 4, 4), (3, 3)), ((2, 2, 5, 6), (2, 4))]:
        w_shape = (2, 3, *(k if "kh" in kernel else (3, 3)))
        feed = {
            "x": RNG.standard_normal(x_shape).astype(np.float32),
            "w": RNG.standard_normal(w_shape).astype(np.float32),
        }
        _assert_match(session.run(None, feed), reference.run(None, feed), ["y"])


# ---- GroupNormalization and LRN over `?` channels ---------------------------------------------


LRN = helper.make_node("LRN", ["x"], ["l"], size=3, alpha=2e-3, beta=0.6, bias=1.5)


def _norm_model() -> onnx.ModelProto:
    nodes = [
        helper.make_node("GroupNormalization", ["x", "s", "b"], ["g"], num_groups=2, epsilon=1e-3),
        LRN,
    ]
    inputs = [
        helper.make_tensor_value_info("x", F, ["n", "c", "h", "w"]),
        helper.make_tensor_value_info("s", F, ["c"]),
        helper.make_tensor_value_info("b", F, ["c"]),
    ]
    outputs = [_out(o, F, 4) for o in ("g", "l")]
    return _model(nodes, inputs, outputs)


def _group_norm(x: np.ndarray, s: np.ndarray, b: np.ndarray, groups: int, eps: float) -> np.ndarray:
    n, c = x.shape[:2]
    g = x.reshape(n, groups, -1).astype(np.float64)
    mean = g.mean(axis=2, keepdims=True)
    var = g.var(axis=2, keepdims=True)
    y = ((g - mean) / np.sqrt(var + eps)).reshape(x.shape)
    view = [1, c] + [1] * (x.ndim - 2)
    return y * s.reshape(view) + b.reshape(view)


@pytest.mark.parametrize("level", LEVELS)
def test_group_norm_and_lrn_over_dynamic_channels(level: str) -> None:
    model = _norm_model()
    session = InferenceSession(model, level=level)
    x_info = helper.make_tensor_value_info("x", F, ["n", "c", "h", "w"])
    lrn = _ort(_model([LRN], [x_info], [_out("l", F, 4)], opset=13))
    for shape in [(2, 4, 3, 3), (1, 6, 2, 5)]:
        x = RNG.standard_normal(shape).astype(np.float32)
        s, b = (RNG.standard_normal(shape[1]).astype(np.float32) for _ in range(2))
        got = session.run(None, {"x": x, "s": s, "b": b})
        want = [_group_norm(x, s, b, 2, 1e-3), lrn.run(None, {"x": x})[0]]
        _assert_match(got, want, ["g", "l"])


@pytest.mark.parametrize("level", LEVELS)
def test_group_norm_channels_that_do_not_split_fail_the_run(level: str) -> None:
    session = InferenceSession(_norm_model(), level=level)
    x = np.zeros((1, 3, 2, 2), np.float32)
    s = np.ones(3, np.float32)
    with pytest.raises(RungError, match="channels do not split into groups"):
        session.run(None, {"x": x, "s": s, "b": s})


# ---- QuantizeLinear / DequantizeLinear --------------------------------------------------------


def _quant_model(
    op: str, x_type: int, y_type: int, attrs: dict[str, object], dims: dict[str, list[object]]
) -> onnx.ModelProto:
    node = helper.make_node(op, ["x", "s", "z"], ["y"], name="q", **attrs)
    inputs = [
        helper.make_tensor_value_info("x", x_type, dims["x"]),
        helper.make_tensor_value_info("s", F, dims["s"]),
        helper.make_tensor_value_info("z", y_type if op == "QuantizeLinear" else x_type, dims["z"]),
    ]
    return _model([node], inputs, [_out("y", y_type, len(dims["x"]))])


QUANT_CASES = {
    "per_tensor_dynamic_zero_point": (
        {},
        {"x": ["a", "b"], "s": [], "z": ["k"]},
        [((3, 5), (), (1,)), ((2, 2), (), (1,))],
    ),
    "per_axis": (
        {"axis": 1},
        {"x": ["a", "b", "c"], "s": ["sb"], "z": ["zb"]},
        [((2, 3, 4), (3,), (3,)), ((1, 5, 2), (5,), (5,)), ((2, 4, 3), (1,), (1,))],
    ),
    "blocked": (
        {"axis": 1, "block_size": 2},
        {"x": ["a", "b"], "s": ["sa", "sb"], "z": ["za", "zb"]},
        [((3, 4), (3, 2), (3, 2)), ((2, 5), (2, 3), (2, 3))],
    ),
    "blocked_axis_0": (
        {"axis": 0, "block_size": 3},
        {"x": ["a", "b"], "s": ["sa", "sb"], "z": ["za", "zb"]},
        [((7, 2), (3, 2), (3, 2))],
    ),
}


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("case", sorted(QUANT_CASES))
@pytest.mark.parametrize("op", ["QuantizeLinear", "DequantizeLinear"])
def test_quantization_layouts_with_dynamic_dims(level: str, case: str, op: str) -> None:
    attrs, dims, sizes = QUANT_CASES[case]
    quantize = op == "QuantizeLinear"
    x_type, y_type = (F, U8) if quantize else (U8, F)
    model = _quant_model(op, x_type, y_type, attrs, dims)
    session = InferenceSession(model, level=level)
    reference = ReferenceEvaluator(model)
    for x_shape, s_shape, z_shape in sizes:
        if quantize:
            x = (RNG.standard_normal(x_shape) * 40).astype(np.float32)
        else:
            x = RNG.integers(0, 256, x_shape).astype(np.uint8)
        feed = {
            "x": x,
            "s": RNG.uniform(0.5, 2.0, s_shape).astype(np.float32),
            "z": RNG.integers(0, 256, z_shape).astype(np.uint8),
        }
        _assert_match(session.run(None, feed), reference.run(None, feed), ["y"])


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(
    ("case", "x_shape", "s_shape", "message"),
    [
        (
            "per_axis",
            (2, 3, 4),
            (4,),
            "node 'q': the per-axis scale or zero point does not fit dim 1",
        ),
        ("blocked", (3, 4), (3, 3), "node 'q': the blocked scale or zero point does not fit"),
        ("per_tensor_dynamic_zero_point", (3, 5), (), "must hold one element"),
    ],
)
def test_quantization_lengths_that_do_not_fit_fail_the_run(
    level: str, case: str, x_shape: tuple[int, ...], s_shape: tuple[int, ...], message: str
) -> None:
    attrs, dims, _ = QUANT_CASES[case]
    session = InferenceSession(_quant_model("DequantizeLinear", U8, F, attrs, dims), level=level)
    z_shape = (2,) if case == "per_tensor_dynamic_zero_point" else s_shape
    feed = {
        "x": np.zeros(x_shape, np.uint8),
        "s": np.ones(s_shape, np.float32),
        "z": np.zeros(z_shape, np.uint8),
    }
    with pytest.raises(RungError, match=message):
        session.run(None, feed)


# ---- QLinearMatMul with per-row and per-column scales -----------------------------------------


def _qlinear_model(
    a_dims: list[object], b_dims: list[object], row: list[object], col: list[object]
) -> onnx.ModelProto:
    names = [
        "a",
        "a_scale",
        "a_zero_point",
        "b",
        "b_scale",
        "b_zero_point",
        "y_scale",
        "y_zero_point",
    ]
    node = helper.make_node("QLinearMatMul", names, ["y"], name="qmm")
    types = [I8, F, I8, I8, F, I8, F, I8]
    dims = [a_dims, row, row, b_dims, col, col, col, col]
    inputs = [
        helper.make_tensor_value_info(n, t, d) for n, t, d in zip(names, types, dims, strict=True)
    ]
    return _model([node], inputs, [_out("y", I8, 2)])


def _qlinear_feed(m: int, k: int, n: int, rows: int, cols: int) -> dict[str, np.ndarray]:
    def ints(*shape: int) -> np.ndarray:
        return RNG.integers(-20, 20, shape).astype(np.int8)

    def scales(*shape: int) -> np.ndarray:
        return RNG.uniform(0.01, 0.05, shape).astype(np.float32)

    return {
        "a": ints(m, k),
        "a_scale": scales(rows, 1),
        "a_zero_point": ints(rows, 1),
        "b": ints(k, n),
        "b_scale": scales(1, cols),
        "b_zero_point": ints(1, cols),
        "y_scale": scales(1, cols),
        "y_zero_point": ints(1, cols),
    }


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_qlinear_matmul_per_row_and_per_column(level: str, dynamic: bool) -> None:
    """Scales and zero points [M, 1] for `a` and [1, N] for `b` and `y`, as ONNX's reference
    broadcasts them; with `?` dims a length of 1 (per tensor) works as well."""
    if dynamic:
        model = _qlinear_model(["m", "k"], ["k", "n"], ["r", 1], [1, "c"])
        sizes = [(3, 4, 5, 3, 5), (2, 3, 4, 1, 1), (4, 2, 2, 4, 1)]
    else:
        model = _qlinear_model([3, 4], [4, 5], [3, 1], [1, 5])
        sizes = [(3, 4, 5, 3, 5)]
    session = InferenceSession(model, level=level)
    reference = ReferenceEvaluator(model)
    for size in sizes:
        feed = _qlinear_feed(*size)
        _assert_match(session.run(None, feed), reference.run(None, feed), ["y"])


@pytest.mark.parametrize("level", LEVELS)
def test_qlinear_matmul_scales_that_do_not_fit_fail_the_run(level: str) -> None:
    model = _qlinear_model(["m", "k"], ["k", "n"], ["r", 1], [1, "c"])
    session = InferenceSession(model, level=level)
    with pytest.raises(RungError, match="node 'qmm': operand shapes cannot be broadcast together"):
        session.run(None, _qlinear_feed(3, 4, 5, 2, 5))


# ---- Resize with run-time sizes: ONNX's inference errs on what it does not know ---------------


def _resize_model(sizes_dims: list[object], x_dims: list[object]) -> onnx.ModelProto:
    node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="linear")
    inputs = [
        helper.make_tensor_value_info("x", F, x_dims),
        helper.make_tensor_value_info("sizes", I64, sizes_dims),
    ]
    return _model([node], inputs, [_out("y", F, 4)], opset=19)


@pytest.mark.parametrize("level", LEVELS)
def test_resize_with_sizes_of_unknown_length_imports_and_runs(level: str) -> None:
    """Regression: ONNX's strict inference reads the unknown length of `sizes` as 0 and
    called the graph inconsistent ("Number of elements of input 'sizes' (0) must be same as
    rank of input 'X'"). Expected: onnxruntime on the model with the length declared."""
    model = _resize_model(["k"], ["n", "c", "h", "w"])
    session = InferenceSession(model, level=level)
    reference = _ort(_resize_model([4], ["n", "c", "h", "w"]))
    for shape, sizes in [((1, 2, 3, 4), (1, 2, 5, 7)), ((2, 1, 4, 4), (2, 1, 2, 3))]:
        feed = {
            "x": RNG.standard_normal(shape).astype(np.float32),
            "sizes": np.array(sizes, np.int64),
        }
        _assert_match(session.run(None, feed), reference.run(None, feed), ["y"])


def test_inference_errors_about_known_shapes_still_refuse_the_graph() -> None:
    """Only a node with an input of unknown shape is let through; the same complaint about
    static shapes is an inconsistent graph."""
    model = _resize_model([3], [1, 2, 3, 4])
    with pytest.raises(RungError, match="inconsistent graph: .*sizes"):
        import_model(model)
