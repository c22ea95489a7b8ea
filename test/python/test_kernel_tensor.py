"""The data-movement family at level kernel, against the core interpreter and onnxruntime.

Core-IR cases cover the forms ONNX models rarely reach (run-time dims, the
dynamic slice and pad forms, negative pads, pads wider than the input); ONNX
models check the whole path against onnxruntime.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from rung.dialects import context, parse_module, print_module
from rung.dialects.core_eval import evaluate
from rung.lowering.pipelines import default_registry
from rung.runtime import InferenceSession

RNG = np.random.default_rng(11)
KERNEL = "convert-core-to-kernel,cse,dce,optimize-kernel,kernel-plan-memory"
EL = {np.float32: "f32", np.int64: "i64", np.int32: "i32", np.bool_: "i1", np.float64: "f64"}


def ttype(shape: tuple[int | None, ...], dtype: type) -> str:
    dims = "".join(f"{'?' if d is None else d}x" for d in shape)
    return f"tensor<{dims}{EL[dtype]}>"


def run_core(body: str, inputs: list[np.ndarray], arg_types: list[str], result_type: str):
    """Run `%r = <body>` at level kernel and in the core interpreter; gives both results.

    Lines of `body` before the last define helper values (`%s = ...`).
    """
    args = ", ".join(f"%a{k}: {t}" for k, t in enumerate(arg_types))
    *prelude, last = body.split("\n")
    text = (
        f"func.func @f({args}) -> {result_type} {{\n"
        + "".join(f"  {line}\n" for line in prelude)
        + f"  %r = {last}\n"
        f"  func.return %r : {result_type}\n}}\n"
    )
    expected = evaluate(parse_module(text), inputs)[0]
    module = parse_module(text)
    default_registry().build(KERNEL).apply(context(), module)
    got = InferenceSession(module, level="kernel").run(
        None, {f"input_{k}": a for k, a in enumerate(inputs)}
    )[0]
    return got, np.asarray(expected), module


def check_core(body: str, inputs: list[np.ndarray], arg_types: list[str], result_type: str):
    got, expected, module = run_core(body, inputs, arg_types, result_type)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    return module


def static(*arrays: np.ndarray) -> list[str]:
    return [ttype(a.shape, a.dtype.type) for a in arrays]


def f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


# ---- transpose -----------------------------------------------------------------------------


def test_transpose_static() -> None:
    x = f32(2, 3, 4)
    check_core(
        "core.transpose(%a0) {perm = array<i64: 2, 0, 1>} : "
        "(tensor<2x3x4xf32>) -> tensor<4x2x3xf32>",
        [x],
        static(x),
        "tensor<4x2x3xf32>",
    )


def test_transpose_dynamic_dims() -> None:
    x = f32(5, 3, 2)
    check_core(
        "core.transpose(%a0) {perm = array<i64: 1, 2, 0>} : "
        "(tensor<?x3x?xf32>) -> tensor<3x?x?xf32>",
        [x],
        ["tensor<?x3x?xf32>"],
        "tensor<3x?x?xf32>",
    )


def test_transpose_of_unit_dims_is_a_view() -> None:
    x = f32(3, 1, 4)
    module = check_core(
        "core.transpose(%a0) {perm = array<i64: 1, 0, 2>} : "
        "(tensor<3x1x4xf32>) -> tensor<1x3x4xf32>",
        [x],
        static(x),
        "tensor<1x3x4xf32>",
    )
    text = print_module(module)
    assert "kernel.view" in text and "kernel.loop" not in text


# ---- slice ---------------------------------------------------------------------------------


def test_slice_static_negative_stride() -> None:
    x = f32(5, 6)
    check_core(
        "core.slice(%a0) {start = array<i64: 4, 1>, stride = array<i64: -2, 2>} : "
        "(tensor<5x6xf32>) -> tensor<3x3xf32>",
        [x],
        static(x),
        "tensor<3x3xf32>",
    )


@pytest.mark.parametrize(
    ("start", "size", "stride"),
    [([1, 0], [2, 6], [1, 1]), ([4, 5], [3, 2], [-1, -3]), ([0, 5], [0, 6], [1, -1])],
)
def test_slice_dynamic_form(start: list[int], size: list[int], stride: list[int]) -> None:
    x = f32(5, 6)
    vec = [np.array(v, np.int64) for v in (start, size, stride)]
    check_core(
        "core.slice(%a0, %a1, %a2, %a3) : "
        "(tensor<?x6xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x?xf32>",
        [x, *vec],
        ["tensor<?x6xf32>"] + ["tensor<2xi64>"] * 3,
        "tensor<?x?xf32>",
    )


# ---- concat --------------------------------------------------------------------------------


def test_concat_static() -> None:
    a, b, c = f32(2, 1, 3), f32(2, 4, 3), f32(2, 2, 3)
    check_core(
        "core.concat(%a0, %a1, %a2) {axis = 1 : i64} : "
        "(tensor<2x1x3xf32>, tensor<2x4x3xf32>, tensor<2x2x3xf32>) -> tensor<2x7x3xf32>",
        [a, b, c],
        static(a, b, c),
        "tensor<2x7x3xf32>",
    )


@pytest.mark.parametrize(
    ("types", "result"),
    [
        (["tensor<?x2xf32>", "tensor<3x?xf32>"], "tensor<?x?xf32>"),
        (["tensor<?x2xf32>", "tensor<?x?xf32>"], "tensor<3x7xf32>"),
    ],
)
def test_concat_dynamic_dims(types: list[str], result: str) -> None:
    a, b = f32(3, 2), f32(3, 5)
    check_core(
        f"core.concat(%a0, %a1) {{axis = 1 : i64}} : ({types[0]}, {types[1]}) -> {result}",
        [a, b],
        types,
        result,
    )


# ---- pad -----------------------------------------------------------------------------------

SCALAR = "core.reshape(%a1) : (tensor<1xf32>) -> tensor<f32>"
"""The fill value as a rank-0 view of a 1-element input."""

PADS = [
    ([1, 2], [2, 1]),  # plain
    ([-1, 2], [1, -2]),  # crops on either side
    ([4, 7], [6, 5]),  # wider than the input: reflect and wrap go round more than once
]


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
@pytest.mark.parametrize(("low", "high"), PADS)
def test_pad_static(mode: str, low: list[int], high: list[int]) -> None:
    x = f32(4, 3)
    width = 3 + low[1] + high[1]
    v = np.array([1.5], np.float32)
    check_core(
        f"%v = {SCALAR}\n"
        f"core.pad {mode}(%a0, %v) {{pad_low = array<i64: {low[0]}, {low[1]}>, "
        f"pad_high = array<i64: {high[0]}, {high[1]}>}} : (tensor<?x3xf32>, tensor<f32>) "
        f"-> tensor<?x{width}xf32>",
        [x, v],
        ["tensor<?x3xf32>", "tensor<1xf32>"],
        f"tensor<?x{width}xf32>",
    )


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
def test_pad_dynamic_pads(mode: str) -> None:
    x = f32(4, 5)
    pads = np.array([2, -1, -1, 3], np.int64)
    v = np.array(-2.0, np.float32)
    check_core(
        f"core.pad {mode}(%a0, %a1, %a2) : (tensor<4x?xf32>, tensor<f32>, tensor<4xi64>) "
        "-> tensor<?x?xf32>",
        [x, v, pads],
        ["tensor<4x?xf32>", "tensor<f32>", "tensor<4xi64>"],
        "tensor<?x?xf32>",
    )


def test_pad_single_element_reflect() -> None:
    x = f32(1, 3)
    check_core(
        "%v = core.constant() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>\n"
        "core.pad reflect(%a0, %v) {pad_low = array<i64: 2, 0>, pad_high = array<i64: 1, 0>} "
        ": (tensor<1x3xf32>, tensor<f32>) -> tensor<4x3xf32>",
        [x],
        ["tensor<1x3xf32>"],
        "tensor<4x3xf32>",
    )


def test_pad_constant_integer_fill() -> None:
    x = RNG.integers(-9, 9, (2, 3)).astype(np.int32)
    module = check_core(
        "%v = core.constant() {value = dense<7> : tensor<i32>} : () -> tensor<i32>\n"
        "core.pad constant(%a0, %v) {pad_low = array<i64: 1, 0>, pad_high = array<i64: 0, 2>} "
        ": (tensor<2x3xi32>, tensor<i32>) -> tensor<3x5xi32>",
        [x],
        ["tensor<2x3xi32>"],
        "tensor<3x5xi32>",
    )
    assert "arith.constant 7 : i32" in print_module(module)  # a literal, not a load


# ---- gathers -------------------------------------------------------------------------------


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_gather(axis: int) -> None:
    x = f32(3, 4, 5)
    idx = RNG.integers(0, x.shape[axis], (2, 3)).astype(np.int64)
    shape = list(x.shape[:axis]) + [2, 3] + list(x.shape[axis + 1 :])
    result = ttype(tuple(shape), np.float32)
    check_core(
        f"core.gather(%a0, %a1) {{axis = {axis} : i64}} : "
        f"(tensor<3x4x5xf32>, tensor<2x3xi64>) -> {result}",
        [x, idx],
        static(x, idx),
        result,
    )


def test_gather_scalar_index_dynamic_dims() -> None:
    x = f32(6, 4)
    idx = np.array([2], np.int32)
    check_core(
        "%i = core.reshape(%a1) : (tensor<1xi32>) -> tensor<i32>\n"
        "core.gather(%a0, %i) {axis = 0 : i64} : (tensor<?x?xf32>, tensor<i32>) -> tensor<?xf32>",
        [x, idx],
        ["tensor<?x?xf32>", "tensor<1xi32>"],
        "tensor<?xf32>",
    )


@pytest.mark.parametrize("axis", [0, 1])
def test_gather_elements(axis: int) -> None:
    x = RNG.integers(-50, 50, (3, 4)).astype(np.int64)
    shape = (2, 4) if axis == 0 else (3, 6)
    idx = RNG.integers(0, x.shape[axis], shape).astype(np.int64)
    it = ttype(shape, np.int64)
    check_core(
        f"core.gather_elements(%a0, %a1) {{axis = {axis} : i64}} : (tensor<3x4xi64>, {it}) -> {it}",
        [x, idx],
        static(x, idx),
        it,
    )


@pytest.mark.parametrize(
    ("batch", "x_shape", "idx_shape", "out_shape"),
    [
        (0, (3, 4, 5), (2, 2), (2, 5)),
        (0, (3, 4), (2, 3, 2), (2, 3)),
        (1, (2, 3, 4), (2, 5, 1), (2, 5, 4)),
        (2, (2, 3, 4, 5), (2, 3, 1), (2, 3, 5)),
        (1, (2, 3, 4), (2, 2), (2,)),
    ],
)
def test_gather_nd(batch: int, x_shape: tuple, idx_shape: tuple, out_shape: tuple) -> None:
    x = f32(*x_shape)
    depth = idx_shape[-1]
    bounds = np.array(x_shape[batch : batch + depth])
    idx = (RNG.random(idx_shape) * bounds).astype(np.int64)
    result = ttype(out_shape, np.float32)
    check_core(
        f"core.gather_nd(%a0, %a1) {{batch_dims = {batch} : i64}} : "
        f"({ttype(x_shape, np.float32)}, {ttype(idx_shape, np.int64)}) -> {result}",
        [x, idx],
        static(x, idx),
        result,
    )


def test_gather_nd_dynamic_dims() -> None:
    x = f32(4, 3, 5)
    idx = np.array([[3, 1], [0, 2], [3, 1]], np.int64)
    check_core(
        "core.gather_nd(%a0, %a1) {batch_dims = 0 : i64} : "
        "(tensor<?x3x?xf32>, tensor<?x2xi64>) -> tensor<?x?xf32>",
        [x, idx],
        ["tensor<?x3x?xf32>", "tensor<?x2xi64>"],
        "tensor<?x?xf32>",
    )


# ---- scatters ------------------------------------------------------------------------------

REDUCTIONS = ["none", "add", "mul", "max", "min"]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("axis", [0, 1])
def test_scatter_elements(reduction: str, axis: int) -> None:
    x = f32(3, 4)
    idx = np.array([[0, 2, 1, 2], [2, 2, 0, 1]], np.int64)  # duplicates along axis 0
    if axis == 1:
        idx = np.array([[1, 1, 3], [0, 3, 0], [2, 2, 2]], np.int64)
    upd = f32(*idx.shape)
    it, ut = ttype(idx.shape, np.int64), ttype(upd.shape, np.float32)
    check_core(
        f"core.scatter_elements {reduction}(%a0, %a1, %a2) {{axis = {axis} : i64}} : "
        f"(tensor<3x4xf32>, {it}, {ut}) -> tensor<3x4xf32>",
        [x, idx, upd],
        static(x, idx, upd),
        "tensor<3x4xf32>",
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_scatter_nd_slabs(reduction: str) -> None:
    x = f32(4, 3, 2)
    idx = np.array([[1], [3], [1]], np.int64)
    upd = f32(3, 3, 2)
    check_core(
        f"core.scatter_nd {reduction}(%a0, %a1, %a2) : "
        "(tensor<4x3x2xf32>, tensor<3x1xi64>, tensor<3x3x2xf32>) -> tensor<4x3x2xf32>",
        [x, idx, upd],
        static(x, idx, upd),
        "tensor<4x3x2xf32>",
    )


@pytest.mark.parametrize("reduction", ["none", "add"])
def test_scatter_nd_elements_dynamic(reduction: str) -> None:
    x = RNG.integers(-9, 9, (3, 4)).astype(np.int32)
    idx = np.array([[2, 3], [0, 0], [2, 3]], np.int64)
    upd = np.array([5, 6, 7], np.int32)
    check_core(
        f"core.scatter_nd {reduction}(%a0, %a1, %a2) : "
        "(tensor<?x4xi32>, tensor<?x2xi64>, tensor<?xi32>) -> tensor<?x4xi32>",
        [x, idx, upd],
        ["tensor<?x4xi32>", "tensor<?x2xi64>", "tensor<?xi32>"],
        "tensor<?x4xi32>",
    )


# ---- whole ONNX models against onnxruntime --------------------------------------------------


def onnx_case(
    op: str,
    inputs: dict[str, np.ndarray],
    consts: dict[str, np.ndarray] | None = None,
    **attrs: object,
) -> None:
    """One ONNX node (constant inputs as initializers): level kernel against onnxruntime."""
    consts = consts or {}
    names = list(inputs) + list(consts)
    node = helper.make_node(op, names, ["y"], **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info(
                n, helper.np_dtype_to_tensor_dtype(a.dtype), list(a.shape)
            )
            for n, a in inputs.items()
        ],
        [helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)],
        [numpy_helper.from_array(a, n) for n, a in consts.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    model = onnx.shape_inference.infer_shapes(model)
    ref = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = ref.run(None, inputs)[0]
    got = InferenceSession(model, level="kernel").run(None, inputs)[0]
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


def test_onnx_transpose_and_depth_to_space() -> None:
    onnx_case("Transpose", {"x": f32(2, 3, 4, 5)}, perm=[3, 1, 0, 2])
    onnx_case("DepthToSpace", {"x": f32(1, 8, 2, 3)}, blocksize=2, mode="CRD")


def test_onnx_slice_negative_steps() -> None:
    consts = {
        "starts": np.array([-1, 10], np.int64),
        "ends": np.array([-100, 0], np.int64),
        "axes": np.array([0, 2], np.int64),
        "steps": np.array([-2, -3], np.int64),
    }
    onnx_case("Slice", {"x": f32(5, 2, 7)}, consts)


def test_onnx_slice_runtime_starts() -> None:
    inputs = {"x": f32(6, 4), "starts": np.array([1, -3], np.int64)}
    onnx_case("Slice", inputs, {"ends": np.array([5, 4], np.int64)})


def test_onnx_concat() -> None:
    onnx_case("Concat", {"a": f32(2, 3), "b": f32(2, 1), "c": f32(2, 4)}, axis=-1)


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
def test_onnx_pad(mode: str) -> None:
    consts = {"pads": np.array([1, 0, 2, 2, -1, 1], np.int64)}
    if mode == "constant":
        consts["value"] = np.array(3.25, np.float32)
    onnx_case("Pad", {"x": f32(3, 4, 5)}, consts, mode=mode)


def test_onnx_pad_runtime_pads() -> None:
    onnx_case("Pad", {"x": f32(3, 4), "pads": np.array([0, 2, 1, -1], np.int64)}, mode="edge")


def test_onnx_gathers() -> None:
    x = f32(4, 5)
    onnx_case("Gather", {"x": x}, {"i": np.array([[-1, 0], [2, 3]], np.int64)}, axis=1)
    idx = np.array([[3, -1, 0, 2, 1], [0, 0, 3, 1, 2]], np.int64)
    onnx_case("GatherElements", {"x": x, "i": idx}, axis=0)
    onnx_case("GatherND", {"x": f32(2, 3, 4), "i": np.array([[1], [-1]], np.int64)}, batch_dims=1)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_onnx_scatters(reduction: str) -> None:
    x = f32(3, 4)
    idx = np.array([[1, 0, 3], [-1, 2, 2]], np.int64)
    upd = f32(2, 3)
    onnx_case("ScatterElements", {"x": x, "i": idx, "u": upd}, axis=1, reduction=reduction)
    nd_idx = np.array([[0, 1], [2, 3], [0, 1]], np.int64)
    if reduction == "none":
        nd_idx = nd_idx[:2]  # onnxruntime wants distinct indices without a reduction
    onnx_case("ScatterND", {"x": x, "i": nd_idx, "u": f32(len(nd_idx))}, reduction=reduction)
