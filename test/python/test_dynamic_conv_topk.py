"""Conv and pooling over `?` spatial dims, and TopK with a run-time K or a `?` axis.

TorchScript exports lose spatial sizes after a channel shuffle's Reshape
(ShuffleNet), and detection heads take the top `min(300, n)` of `n` boxes
found (SSD). Both were refused ("dynamic spatial dims", "TopK along a dynamic
dim"). Each model here is compiled once and run at several sizes against
onnxruntime; a K out of range at run time must be a rung error naming the
node, not a read past the sorted values.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import StringAttr, TensorType, i64
from xdsl.ir import Block
from xdsl.utils.exceptions import VerifyException

from rung.dialects import context, core
from rung.dialects.dtypes import i1
from rung.errors import RungError
from rung.importers.onnx import import_model
from rung.lowering.kit import ranked_shape
from rung.lowering.pipelines import default_registry
from rung.runtime import InferenceSession

F, I64 = TensorProto.FLOAT, TensorProto.INT64
RNG = np.random.default_rng(2024)


def _weight(name: str, shape: Sequence[int]) -> onnx.TensorProto:
    return numpy_helper.from_array(RNG.standard_normal(shape).astype(np.float32), name)


def _reference(model: onnx.ModelProto) -> ort.InferenceSession:
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def _assert_match(got: Sequence[np.ndarray], want: Sequence[np.ndarray], names: list[str]) -> None:
    for name, g, w in zip(names, got, want, strict=True):
        assert g.shape == w.shape, f"{name}: shape {g.shape}, onnxruntime {w.shape}"
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4, err_msg=name)


# ---- conv and pooling ----------------------------------------------------------------------

CONV_POOL_NODES: list[tuple[str, str, list[str], dict[str, object]]] = [
    (
        "conv",
        "Conv",
        ["w6", "b6"],
        {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2]},
    ),
    (
        "conv_grouped_dilated",
        "Conv",
        ["w6g"],
        {"pads": [1, 0, 1, 2], "strides": [2, 1], "group": 2, "dilations": [2, 1]},
    ),
    ("conv_depthwise", "Conv", ["w4d"], {"pads": [1, 1, 1, 1], "strides": [2, 2], "group": 4}),
    ("conv_same", "Conv", ["w6"], {"auto_pad": "SAME_UPPER"}),
    ("conv_pointwise", "Conv", ["w8p"], {}),
    (
        "conv_transpose",
        "ConvTranspose",
        ["wt"],
        {"pads": [1, 1, 1, 1], "strides": [2, 2], "output_padding": [1, 0]},
    ),
    ("conv_transpose_same", "ConvTranspose", ["wt"], {"auto_pad": "SAME_UPPER", "strides": [2, 2]}),
    ("max_pool", "MaxPool", [], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2]}),
    ("max_pool_ceil", "MaxPool", [], {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
    (
        "avg_pool",
        "AveragePool",
        [],
        {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2]},
    ),
    (
        "avg_pool_include_pad",
        "AveragePool",
        [],
        {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2], "count_include_pad": 1},
    ),
    (
        "avg_pool_ceil_include_pad",
        "AveragePool",
        [],
        {
            "kernel_shape": [3, 2],
            "pads": [0, 1, 0, 0],
            "strides": [2, 2],
            "ceil_mode": 1,
            "count_include_pad": 1,
        },
    ),
    (
        "avg_pool_ceil",
        "AveragePool",
        [],
        {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1},
    ),
    ("avg_pool_uniform", "AveragePool", [], {"kernel_shape": [2, 2], "strides": [2, 2]}),
    ("lp_pool", "LpPool", [], {"kernel_shape": [2, 3], "strides": [1, 2], "p": 2}),
    ("global_avg", "GlobalAveragePool", [], {}),
    ("global_max", "GlobalMaxPool", [], {}),
    ("global_lp", "GlobalLpPool", [], {"p": 3}),
]


def _conv_pool_model() -> onnx.ModelProto:
    """Every node reads x [n, 4, h, w]: batch and spatial dims only the run knows."""
    nodes = [
        helper.make_node(op, ["x", *ws], [name], **attrs) for name, op, ws, attrs in CONV_POOL_NODES
    ]
    inits = [
        _weight("w6", [6, 4, 3, 3]),
        _weight("b6", [6]),
        _weight("w6g", [6, 2, 3, 3]),
        _weight("w4d", [4, 1, 3, 3]),
        _weight("w8p", [8, 4, 1, 1]),
        _weight("wt", [4, 3, 3, 3]),
    ]
    outputs = [
        helper.make_tensor_value_info(name, F, ["n", "c", "ho", "wo"])
        for name, *_ in CONV_POOL_NODES
    ]
    graph = helper.make_graph(
        nodes,
        "conv_pool",
        [helper.make_tensor_value_info("x", F, ["n", 4, "h", "w"])],
        outputs,
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


@pytest.mark.parametrize("level", ["core", "kernel"])
def test_conv_and_pooling_over_dynamic_spatial_dims(level: str) -> None:
    model = _conv_pool_model()
    session = InferenceSession(model, level=level)
    reference = _reference(model)
    names = [name for name, *_ in CONV_POOL_NODES]
    for shape in [(2, 4, 7, 9), (1, 4, 12, 5), (3, 4, 4, 4)]:
        feed = {"x": RNG.standard_normal(shape).astype(np.float32)}
        _assert_match(session.run(None, feed), reference.run(None, feed), names)


def _shuffle_model() -> onnx.ModelProto:
    """ShuffleNet's channel shuffle and chunk as TorchScript exports them: the shapes of
    both Reshapes and the bounds of the Slice come from Shape ops, so the conv after
    them sees `?` spatial dims."""

    def dim(source: str, i: int) -> list[onnx.NodeProto]:
        return [
            helper.make_node("Gather", [source, f"i{i}"], [f"{source}{i}"], axis=0),
            helper.make_node("Unsqueeze", [f"{source}{i}", "zero"], [f"{source}{i}u"]),
        ]

    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Shape", ["r"], ["s"]),
        *dim("s", 0),
        *dim("s", 2),
        *dim("s", 3),
        helper.make_node("Concat", ["s0u", "two", "two", "s2u", "s3u"], ["split_shape"], axis=0),
        helper.make_node("Reshape", ["r", "split_shape"], ["split"]),
        helper.make_node("Transpose", ["split"], ["swapped"], perm=[0, 2, 1, 3, 4]),
        helper.make_node("Concat", ["s0u", "minus_one", "s2u", "s3u"], ["back_shape"], axis=0),
        helper.make_node("Reshape", ["swapped", "back_shape"], ["shuffled"]),
        # x.chunk(2, dim=1)[1]: from channels // 2 to the end.
        helper.make_node("Shape", ["shuffled"], ["t"]),
        helper.make_node("Gather", ["t", "i1"], ["channels"], axis=0),
        helper.make_node("Div", ["channels", "i2"], ["half"]),
        helper.make_node("Unsqueeze", ["half", "zero"], ["start"]),
        helper.make_node("Unsqueeze", ["channels", "zero"], ["end"]),
        helper.make_node("Slice", ["shuffled", "start", "end", "one"], ["chunk"]),
        helper.make_node(
            "Conv", ["chunk", "wd"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2], group=2
        ),
        helper.make_node("ReduceMean", ["c", "axes"], ["y"], keepdims=0),
    ]
    consts = {
        "i0": np.array(0, np.int64),
        "i1": np.array(1, np.int64),
        "i2": np.array(2, np.int64),
        "i3": np.array(3, np.int64),
        "zero": np.array([0], np.int64),
        "one": np.array([1], np.int64),
        "two": np.array([2], np.int64),
        "minus_one": np.array([-1], np.int64),
        "axes": np.array([2, 3], np.int64),
    }
    inits = [numpy_helper.from_array(v, k) for k, v in consts.items()]
    inits.append(_weight("wd", [2, 1, 3, 3]))
    graph = helper.make_graph(
        nodes,
        "shuffle",
        [helper.make_tensor_value_info("x", F, ["batch", 4, 8, 8])],
        [helper.make_tensor_value_info("y", F, ["batch", 2])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_channel_shuffle_leaves_a_conv_over_dynamic_spatial_dims() -> None:
    """Regression (ShuffleNet, TorchScript): "onnx.Conv with dynamic spatial dims"."""
    model = _shuffle_model()
    module = import_model(model)
    default_registry().build("lower-to-core").apply(context(), module)
    convs = [op for op in module.walk() if isinstance(op, core.ConvOp)]
    assert [ranked_shape(op.input)[2:] for op in convs] == [(-1, -1)]
    session = InferenceSession(model, level="kernel")
    reference = _reference(model)
    for batch in (1, 3):
        feed = {"x": RNG.standard_normal((batch, 4, 8, 8)).astype(np.float32)}
        _assert_match(session.run(None, feed), reference.run(None, feed), ["y"])


# ---- TopK -----------------------------------------------------------------------------------


def _top_k(
    x_dims: list[object], out_dim: object, *, k: int | None = None, axis: int = 1, largest: int = 1
) -> onnx.ModelProto:
    """TopK named 'top' of x along `axis`; K a constant when given, else the input `k`."""
    inputs = [helper.make_tensor_value_info("x", F, x_dims)]
    inits = []
    if k is None:
        inputs.append(helper.make_tensor_value_info("k", I64, [1]))
    else:
        inits.append(numpy_helper.from_array(np.array([k], np.int64), "k"))
    out = list(x_dims)
    out[axis] = out_dim
    graph = helper.make_graph(
        [helper.make_node("TopK", ["x", "k"], ["v", "i"], name="top", axis=axis, largest=largest)],
        "top_k",
        inputs,
        [helper.make_tensor_value_info("v", F, out), helper.make_tensor_value_info("i", I64, out)],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


TOP_K_CASES = {
    "dynamic_axis_runtime_k": (
        _top_k(["b", "n"], "k"),
        [((2, 5), 2), ((1, 3), 3), ((3, 9), 0), ((2, 300), 300)],
    ),
    "dynamic_axis_constant_k": (_top_k(["b", "n"], 3, k=3), [((2, 5), None), ((1, 3), None)]),
    "static_axis_runtime_k": (_top_k(["b", 7], "k"), [((2, 7), 2), ((1, 7), 7), ((2, 7), 0)]),
    "static_axis_runtime_k_declared": (_top_k(["b", 7], 4), [((2, 7), 4)]),
    "dynamic_leading_axis_smallest": (
        _top_k(["n", 3], "k", axis=0, largest=0),
        [((5, 3), 2), ((4, 3), 4)],
    ),
}


@pytest.mark.parametrize("level", ["core", "kernel"])
@pytest.mark.parametrize("case", list(TOP_K_CASES))
def test_top_k_with_run_time_k_or_axis(case: str, level: str) -> None:
    model, runs = TOP_K_CASES[case]
    session = InferenceSession(model, level=level)
    reference = _reference(model)
    for shape, k in runs:
        # Distinct values: ties may come in either order in onnxruntime.
        feed = {"x": RNG.permutation(int(np.prod(shape))).reshape(shape).astype(np.float32)}
        if k is not None:
            feed["k"] = np.array([k], np.int64)
        _assert_match(session.run(None, feed), reference.run(None, feed), ["values", "indices"])


@pytest.mark.parametrize("level", ["core", "kernel"])
def test_top_k_larger_than_its_axis_at_run_time_is_a_rung_error(level: str) -> None:
    """K > the axis's size must fail the run with an error naming the node (before, K
    along a `?` axis was refused; a K read from the result type was never checked)."""
    session = InferenceSession(_top_k(["b", "n"], "k"), level=level)
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    message = r"node 'top': TopK: K is negative or larger than the size of axis 1"
    for k in (4, -1):
        with pytest.raises(RungError, match=message):
            session.run(None, {"x": x, "k": np.array([k], np.int64)})
    # The session is still usable after a failed run.
    values, indices = session.run(None, {"x": x, "k": np.array([3], np.int64)})
    np.testing.assert_array_equal(values, -np.sort(-x, axis=1))
    np.testing.assert_array_equal(indices, np.argsort(-x, axis=1, kind="stable"))


@pytest.mark.parametrize("level", ["core", "kernel"])
def test_top_k_with_a_constant_k_along_a_short_dynamic_axis_is_a_rung_error(level: str) -> None:
    session = InferenceSession(_top_k(["b", "n"], 3, k=3), level=level)
    with pytest.raises(RungError, match="node 'top': TopK: K is negative or larger"):
        session.run(None, {"x": np.zeros((2, 2), np.float32)})


@pytest.mark.parametrize("level", ["core", "kernel"])
def test_top_k_with_k_other_than_its_declared_size_is_a_rung_error(level: str) -> None:
    session = InferenceSession(_top_k(["b", 7], 4), level=level)
    with pytest.raises(RungError, match="node 'top': TopK: K differs from 4"):
        session.run(None, {"x": np.zeros((2, 7), np.float32), "k": np.array([3], np.int64)})


# ---- core.check ------------------------------------------------------------------------------


def _check(value_type: TensorType, cond_type: TensorType, result_type: TensorType) -> core.CheckOp:
    block = Block(arg_types=[value_type, cond_type])
    return core.CheckOp.create(
        operands=list(block.args),
        result_types=[result_type],
        properties={"message": StringAttr("bad")},
    )


def test_check_verifies_its_types() -> None:
    k, ok = TensorType(i64, [1]), TensorType(i1, [1])
    _check(k, ok, k).verify()
    with pytest.raises(VerifyException, match="is not the input's"):
        _check(k, ok, TensorType(i64, [2])).verify()
    with pytest.raises(VerifyException, match="cond must be a tensor of i1"):
        _check(k, k, k).verify()
