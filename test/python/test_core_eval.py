"""The core interpreter against ONNX's reference implementation, op by op."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64

from rung.dialects import core, parse_module
from rung.dialects.core_eval import HANDLERS, CoreInterpreter, evaluate
from rung.errors import UnsupportedOpError

RNG = np.random.default_rng(7)


def onnx_ref(op_type: str, inputs: list[np.ndarray], **attrs: object) -> np.ndarray:
    names = [f"i{k}" for k in range(len(inputs))]
    node = helper.make_node(op_type, names, ["out"], **attrs)
    return ReferenceEvaluator(node).run(None, dict(zip(names, inputs, strict=True)))[0]


def ort_ref(op_type: str, inputs: list[np.ndarray], **attrs: object) -> np.ndarray:
    import onnxruntime as ort
    from onnx import TensorProto

    names = [f"i{k}" for k in range(len(inputs))]
    node = helper.make_node(op_type, names, ["out"], **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape)
            for n, a in zip(names, inputs, strict=True)
        ],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, dict(zip(names, inputs, strict=True)))[0]


def t(a: np.ndarray) -> str:
    el = {
        np.float32: "f32",
        np.float16: "f16",
        ml_dtypes.bfloat16: "bf16",
        np.int64: "i64",
        np.bool_: "i1",
        np.int32: "i32",
    }[a.dtype.type]
    return "tensor<" + "".join(f"{d}x" for d in a.shape) + el + ">"


def run_core(op_text: str, inputs: list[np.ndarray], result_type: str) -> object:
    args = ", ".join(f"%a{k}: {t(a)}" for k, a in enumerate(inputs))
    names = ", ".join(f"%a{k}" for k in range(len(inputs)))
    types = ", ".join(t(a) for a in inputs)
    text = (
        f"func.func @f({args}) -> {result_type} {{\n"
        f"  %r = {op_text.format(args=names, types=types, result=result_type)}\n"
        f"  func.return %r : {result_type}\n}}\n"
    )
    return evaluate(parse_module(text), inputs)[0]


CONV = (
    "core.conv({args}) {{strides = array<i64: {s}>, dilations = array<i64: {d}>, "
    "pad_low = array<i64: {pl}>, pad_high = array<i64: {ph}>, groups = {g} : i64, "
    'layout = "NCHW", acc = f32}} : ({types}) -> {result}'
)


def arr(values: tuple[int, ...]) -> str:
    return ", ".join(str(v) for v in values)


@pytest.mark.parametrize(
    ("strides", "dilations", "pads", "groups"),
    [
        ((1, 1), (1, 1), (0, 0, 0, 0), 1),
        ((2, 1), (1, 2), (1, 0, 2, 1), 1),
        ((1, 2), (2, 1), (1, 1, 1, 1), 2),
    ],
)
def test_conv_matches_onnx(strides, dilations, pads, groups) -> None:
    x = RNG.standard_normal((2, 4, 7, 8)).astype(np.float32)
    w = RNG.standard_normal((6, 4 // groups, 3, 2)).astype(np.float32)
    expected = onnx_ref(
        "Conv",
        [x, w],
        strides=list(strides),
        dilations=list(dilations),
        pads=list(pads),
        group=groups,
    )
    text = (
        CONV.replace("{s}", arr(strides))
        .replace("{d}", arr(dilations))
        .replace("{pl}", arr(pads[:2]))
        .replace("{ph}", arr(pads[2:]))
        .replace("{g}", str(groups))
    )
    got = run_core(text, [x, w], t(expected))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_conv_transpose_matches_onnx() -> None:
    x = RNG.standard_normal((1, 4, 3, 4)).astype(np.float32)
    w = RNG.standard_normal((4, 3, 3, 2)).astype(np.float32)
    # onnx.reference mishandles groups in ConvTranspose; onnxruntime does not.
    expected = ort_ref("ConvTranspose", [x, w], strides=[2, 1], pads=[1, 0, 0, 1], group=2)
    text = (
        "core.conv_transpose({args}) {{strides = array<i64: 2, 1>, dilations = array<i64: 1, 1>, "
        "pad_low = array<i64: 1, 0>, pad_high = array<i64: 0, 1>, groups = 2 : i64, acc = f32}} "
        ": ({types}) -> {result}"
    )
    got = run_core(text, [x, w], t(expected))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_max_and_sum_pool_match_onnx() -> None:
    x = RNG.standard_normal((1, 2, 7, 6)).astype(np.float32)
    expected = onnx_ref(
        "MaxPool", [x], kernel_shape=[3, 2], strides=[2, 2], pads=[1, 0, 1, 1], dilations=[1, 2]
    )
    text = (
        "core.pool max({args}) {{window = array<i64: 3, 2>, strides = array<i64: 2, 2>, "
        "dilations = array<i64: 1, 2>, pad_low = array<i64: 1, 0>, pad_high = array<i64: 1, 1>}} "
        ": ({types}) -> {result}"
    )
    np.testing.assert_allclose(run_core(text, [x], t(expected)), expected, rtol=1e-6)
    avg = onnx_ref(
        "AveragePool",
        [x],
        kernel_shape=[2, 2],
        strides=[1, 2],
        pads=[1, 1, 0, 0],
        count_include_pad=1,
    )
    text = (
        "core.pool sum({args}) {{window = array<i64: 2, 2>, strides = array<i64: 1, 2>, "
        "dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 0, 0>}} "
        ": ({types}) -> {result}"
    )
    np.testing.assert_allclose(run_core(text, [x], t(avg)) / 4, avg, rtol=1e-5, atol=1e-6)


def test_integer_division_and_modulo_follow_onnx() -> None:
    a = np.array([7, -7, 7, -7], dtype=np.int64)
    b = np.array([2, 2, -2, -2], dtype=np.int64)
    div = "core.binary div({args}) : ({types}) -> {result}"
    np.testing.assert_array_equal(run_core(div, [a, b], t(a)), onnx_ref("Div", [a, b]))
    mod = "core.binary mod({args}) : ({types}) -> {result}"
    np.testing.assert_array_equal(run_core(mod, [a, b], t(a)), onnx_ref("Mod", [a, b]))
    rem = "core.binary rem({args}) : ({types}) -> {result}"
    np.testing.assert_array_equal(run_core(rem, [a, b], t(a)), onnx_ref("Mod", [a, b], fmod=1))


def test_gather_nd_and_scatter_nd_match_onnx() -> None:
    data = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    idx = np.array([[[0, 1], [2, 3]], [[1, 0], [0, 2]]], dtype=np.int64)
    expected = onnx_ref("GatherND", [data, idx], batch_dims=1)
    text = "core.gather_nd({args}) {{batch_dims = 1 : i64}} : ({types}) -> {result}"
    np.testing.assert_array_equal(run_core(text, [data, idx], t(expected)), expected)
    sidx = np.array([[0, 1], [1, 2], [0, 1]], dtype=np.int64)
    upd = RNG.standard_normal((3, 4)).astype(np.float32)
    expected = onnx_ref("ScatterND", [data, sidx, upd], reduction="add")
    text = "core.scatter_nd add({args}) : ({types}) -> {result}"
    np.testing.assert_allclose(run_core(text, [data, sidx, upd], t(expected)), expected, rtol=1e-6)


def test_slice_with_negative_stride_and_pads() -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    text = (
        "core.slice({args}) {{start = array<i64: 2, 3>, stride = array<i64: -1, -2>}} "
        ": ({types}) -> tensor<3x2xf32>"
    )
    np.testing.assert_array_equal(run_core(text, [x], "tensor<3x2xf32>"), x[::-1, ::-2])
    for mode in ("reflect", "edge", "wrap"):
        expected = np.pad(x, ((1, 0), (2, 1)), mode=mode)
        zero = np.zeros((), dtype=np.float32)
        text = (
            f"core.pad {mode}({{args}}) {{{{pad_low = array<i64: 1, 2>, "
            "pad_high = array<i64: 0, 1>}} : ({types}) -> {result}"
        )
        np.testing.assert_array_equal(run_core(text, [x, zero], t(expected)), expected)


def test_sort_cumulative_and_arg_reduce() -> None:
    x = np.array([[3, 1, 3, 2], [0, 5, 5, 1]], dtype=np.float32)
    text = "core.cumulative sum({args}) {{axis = 1 : i64, exclusive = 1 : i64, reverse = 1 : i64}} : ({types}) -> {result}"
    expected = onnx_ref("CumSum", [x, np.array(1)], exclusive=1, reverse=1)
    np.testing.assert_array_equal(run_core(text, [x], t(x)), expected)
    text = "core.arg_reduce max({args}) {{axis = 1 : i64, last = 1 : i64}} : ({types}) -> tensor<2xi64>"
    expected = onnx_ref("ArgMax", [x], axis=1, keepdims=0, select_last_index=1)
    np.testing.assert_array_equal(run_core(text, [x], "tensor<2xi64>"), expected)


def test_every_core_op_but_yield_has_semantics() -> None:
    missing = [cls.name for cls in core.CORE_OPS if cls not in HANDLERS]
    assert missing == ["core.yield"]


def test_an_op_without_semantics_is_named_in_the_error() -> None:
    op = arith.ConstantOp(IntegerAttr(1, i64))
    with pytest.raises(UnsupportedOpError, match="arith.constant"):
        CoreInterpreter(ModuleOp([])).eval(op, {})


@pytest.mark.parametrize(("dtype", "el"), [(np.float16, "f16"), (ml_dtypes.bfloat16, "bf16")])
def test_half_sums_accumulate_in_f32(dtype: type, el: str) -> None:
    """Summed in f16, 5000 ones stop at 2048 (in bf16 at 256): each 1 is under half an ulp."""
    x = np.ones((5000, 2), dtype=dtype)
    text = "core.reduce sum({args}) {{axes = array<i64: 0>}} : ({types}) -> {result}"
    got = run_core(text, [x], f"tensor<2x{el}>")
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, np.full(2, 5000, dtype=dtype))
    ones = np.ones((1, 5000), dtype=dtype)
    text = f"core.matmul({{args}}) {{{{acc = {el}}}}} : ({{types}}) -> {{result}}"
    got = run_core(text, [ones, ones.T.copy()], f"tensor<1x1x{el}>")
    np.testing.assert_array_equal(got, np.full((1, 1), 5000, dtype=dtype))
    x = np.ones((1, 1, 5000, 2), dtype=dtype)
    text = (
        "core.pool sum({args}) {{window = array<i64: 5000, 1>, strides = array<i64: 1, 1>, "
        "dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, "
        "pad_high = array<i64: 0, 0>}} : ({types}) -> {result}"
    )
    got = run_core(text, [x], f"tensor<1x1x1x2x{el}>")
    np.testing.assert_array_equal(got, np.full((1, 1, 1, 2), 5000, dtype=dtype))


@pytest.mark.parametrize("fn", ["max", "min"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32], ids=["f32", "i32"])
def test_reducing_an_empty_axis_gives_the_identity_as_onnx_does(fn: str, dtype: type) -> None:
    x = np.zeros((2, 0, 3), dtype=dtype)
    expected = onnx_ref(f"Reduce{fn.title()}", [x, np.array([1])], keepdims=1)
    assert expected.shape == (2, 1, 3)
    text = f"core.reduce {fn}({{args}}) {{{{axes = array<i64: 1>}}}} : ({{types}}) -> {{result}}"
    got = run_core(text, [x], t(np.zeros((2, 3), dtype=dtype)))
    np.testing.assert_array_equal(got, expected.reshape(2, 3))
    assert got.dtype == expected.dtype


@pytest.mark.parametrize("reverse", [0, 1])
def test_exclusive_cumsum_over_an_empty_axis_is_empty(reverse: int) -> None:
    x = np.zeros((2, 0), dtype=np.float32)
    expected = onnx_ref("CumSum", [x, np.array(1)], exclusive=1, reverse=reverse)
    text = (
        "core.cumulative sum({args}) {{axis = 1 : i64, exclusive = 1 : i64, "
        f"reverse = {reverse} : i64}}}} : ({{types}}) -> {{result}}"
    )
    got = run_core(text, [x], t(x))
    assert got.shape == expected.shape == (2, 0)


def test_exclusive_cumprod_starts_from_one() -> None:
    x = np.array([[2, 3, 4]], dtype=np.float32)
    text = (
        "core.cumulative prod({args}) {{axis = 1 : i64, exclusive = 1 : i64, "
        "reverse = 0 : i64}} : ({types}) -> {result}"
    )
    np.testing.assert_array_equal(run_core(text, [x], t(x)), [[1, 2, 6]])
