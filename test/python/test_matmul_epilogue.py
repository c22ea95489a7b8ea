"""The elementwise work after a matmul, done in its epilogue (`kernel-fuse-matmul-epilogue`):
the generated C calls the fused product, and the outputs are onnxruntime's, on one and two
threads, for each kind of operand (per row, per column, per element, scalar) and each op,
with the product on either side."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from rung.dialects import kernel
from rung.lowering.kernel_to_c import generate_c
from rung.runtime import InferenceSession, SessionOptions
from rung.runtime.levels import lower
from rung.runtime.session import load_module


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNG_CACHE_DIR", str(tmp_path / "cache"))


def _model(
    name: str,
    nodes: list[onnx.NodeProto],
    x_shape: list[int],
    y_shape: list[int],
    inits: dict[str, np.ndarray],
    extra_inputs: dict[str, list[int]] | None = None,
) -> onnx.ModelProto:
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)]
    for input_name, shape in (extra_inputs or {}).items():
        inputs.append(helper.make_tensor_value_info(input_name, TensorProto.FLOAT, shape))
    graph = helper.make_graph(
        nodes,
        name,
        inputs,
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)],
        [numpy_helper.from_array(v.astype(np.float32), k) for k, v in inits.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


RNG = np.random.default_rng(7)


def _w(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape) / np.sqrt(
        shape[-1] if len(shape) == 2 else np.prod(shape[1:])
    )


def conv_bn_relu() -> onnx.ModelProto:
    """Per-row steps: a 1x1 conv's bias, BatchNorm's scale and shift, ReLU (a scalar)."""
    c = 24
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"]),
        helper.make_node("BatchNormalization", ["c", "s", "t", "m", "v"], ["n"]),
        helper.make_node("Relu", ["n"], ["y"]),
    ]
    inits = {
        "w": _w(c, 16, 1, 1),
        "b": RNG.standard_normal(c),
        "s": RNG.uniform(0.5, 1.5, c),
        "t": RNG.standard_normal(c),
        "m": RNG.standard_normal(c),
        "v": RNG.uniform(0.5, 1.5, c),
    }
    return _model("conv_bn_relu", nodes, [1, 16, 13, 11], [1, c, 13, 11], inits)


def conv_residual_clip() -> onnx.ModelProto:
    """A per-element step (the residual, an input) and Clip's max and min (scalars)."""
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"]),
        helper.make_node("Add", ["r", "c"], ["a"]),
        helper.make_node("Clip", ["a", "lo", "hi"], ["y"]),
    ]
    inits = {"w": _w(20, 20, 1, 1), "lo": np.array(-0.5), "hi": np.array(0.75)}
    return _model(
        "conv_residual_clip", nodes, [1, 20, 9, 9], [1, 20, 9, 9], inits, {"r": [1, 20, 9, 9]}
    )


def linear_ops() -> onnx.ModelProto:
    """Per-column steps on a Linear layer (MatMul, bias), then the product on the right of
    a Sub and a Div, and on the left of a Min."""
    n = 37
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["p"]),
        helper.make_node("Add", ["p", "b"], ["q"]),
        helper.make_node("Sub", ["k", "q"], ["d"]),
        helper.make_node("Div", ["e", "d"], ["f"]),
        helper.make_node("Min", ["f", "cap"], ["y"]),
    ]
    inits = {
        "w": _w(64, n),
        "b": RNG.standard_normal(n),
        "k": np.full(n, 9.0),  # keeps the divisor away from 0
        "e": RNG.uniform(1.0, 2.0, n),
        "cap": np.array(0.3),
    }
    return _model("linear_ops", nodes, [1, 50, 64], [1, 50, n], inits)


def gemm_bias_relu() -> onnx.ModelProto:
    """Gemm with transB and its bias (a few rows: the thin product's paths)."""
    nodes = [
        helper.make_node("Gemm", ["x", "w", "b"], ["g"], transB=1),
        helper.make_node("Relu", ["g"], ["y"]),
    ]
    inits = {"w": _w(300, 128), "b": RNG.standard_normal(300)}
    return _model("gemm_bias_relu", nodes, [3, 128], [3, 300], inits)


def shifted_conv_bn_residual_relu() -> onnx.ModelProto:
    """A 3x3 stride-1 conv by shifted rows (`rung_conv_shift_float`): its bias and
    BatchNorm per row, a residual per element, ReLU, on a 30-wide map (one flat run)."""
    c = 12
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "s", "t", "m", "v"], ["n"]),
        helper.make_node("Add", ["n", "r"], ["a"]),
        helper.make_node("Relu", ["a"], ["y"]),
    ]
    inits = {
        "w": _w(c, 8, 3, 3),
        "b": RNG.standard_normal(c),
        "s": RNG.uniform(0.5, 1.5, c),
        "t": RNG.standard_normal(c),
        "m": RNG.standard_normal(c),
        "v": RNG.uniform(0.5, 1.5, c),
    }
    return _model(
        "shifted_conv", nodes, [1, 8, 10, 30], [1, c, 10, 30], inits, {"r": [1, c, 10, 30]}
    )


def depthwise_bn_clip_residual() -> onnx.ModelProto:
    """A depthwise conv (`rung_depthwise_float`), stride 2: its bias and BatchNorm per row,
    ReLU6's max and min (scalars), a residual per element, applied per channel plane."""
    c = 10
    nodes = [
        helper.make_node(
            "Conv", ["x", "w", "b"], ["c"], group=c, pads=[1, 1, 1, 1], strides=[2, 2]
        ),
        helper.make_node("BatchNormalization", ["c", "s", "t", "m", "v"], ["n"]),
        helper.make_node("Clip", ["n", "lo", "hi"], ["k"]),
        helper.make_node("Sub", ["r", "k"], ["y"]),
    ]
    inits = {
        "w": _w(c, 1, 3, 3),
        "b": RNG.standard_normal(c),
        "s": RNG.uniform(0.5, 1.5, c),
        "t": RNG.standard_normal(c),
        "m": RNG.standard_normal(c),
        "v": RNG.uniform(0.5, 1.5, c),
        "lo": np.array(0.0),
        "hi": np.array(6.0),
    }
    return _model("depthwise", nodes, [1, c, 15, 17], [1, c, 8, 9], inits, {"r": [1, c, 8, 9]})


def row_block_conv_bias_relu() -> onnx.ModelProto:
    """A stride-2 conv on a large map (`rung_conv_rows_float`, GEMMs on blocks of output
    rows): its bias per row and ReLU, applied to each block's tiles."""
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c"], ["y"]),
    ]
    inits = {"w": _w(8, 16, 3, 3), "b": RNG.standard_normal(8)}
    return _model("row_blocks", nodes, [1, 16, 200, 200], [1, 8, 100, 100], inits)


MODELS = [
    depthwise_bn_clip_residual,
    row_block_conv_bias_relu,
    conv_bn_relu,
    conv_residual_clip,
    linear_ops,
    gemm_bias_relu,
    shifted_conv_bn_residual_relu,
]


@pytest.mark.parametrize("build", MODELS, ids=[m.__name__ for m in MODELS])
def test_the_product_carries_the_epilogue(build) -> None:  # type: ignore[no-untyped-def]
    """Every op after the product is a step of its epilogue: no nest is left."""
    module = lower(load_module(build()), "kernel")
    assert not [op for op in module.walk() if isinstance(op, kernel.LoopOp)]
    (product,) = [
        op
        for op in module.walk()
        if isinstance(op, kernel.MatmulOp)
        or (isinstance(op, kernel.CallOp) and op.callee.data in kernel.CallOp.EPILOGUE_OUT)
    ]
    assert len(product.steps()) >= 2
    source = generate_c(module, "model").source
    fused = ("rung_matmul_float_ep(", "rung_gemm_epilogue_apply(", "&(const rung_gemm_epilogue)")
    assert any(f in source for f in fused), source


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("build", MODELS, ids=[m.__name__ for m in MODELS])
def test_results_match_onnxruntime(build, threads: int) -> None:  # type: ignore[no-untyped-def]
    model = build()
    rng = np.random.default_rng(3)
    feeds = {
        i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(
            np.float32
        )
        for i in model.graph.input
    }
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = want.run(None, feeds)[0]
    options = SessionOptions()
    options.intra_op_num_threads = threads
    got = InferenceSession(model, sess_options=options).run(None, feeds)[0]
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def _silu(x: str, y: str, flip: bool = False) -> list[onnx.NodeProto]:
    """SiLU as exporters write it: Sigmoid, then a Mul by its input (either side)."""
    s = f"{x}_sigmoid"
    mul = [s, x] if flip else [x, s]
    return [helper.make_node("Sigmoid", [x], [s]), helper.make_node("Mul", mul, [y])]


def conv_bias_silu() -> onnx.ModelProto:
    """A 1x1 conv (the GEMM) with its bias, then SiLU, on 13 x 11 points: edge tiles."""
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"]), *_silu("c", "y")]
    inits = {"w": _w(20, 16, 1, 1), "b": RNG.standard_normal(20)}
    return _model("conv_bias_silu", nodes, [1, 16, 13, 11], [1, 20, 13, 11], inits)


def shifted_conv_silu() -> onnx.ModelProto:
    """A 3x3 conv by shifted rows (a 30-wide flat run), SiLU with the Mul's sides swapped."""
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        *_silu("c", "y", flip=True),
    ]
    inits = {"w": _w(12, 8, 3, 3), "b": RNG.standard_normal(12)}
    return _model("shifted_conv_silu", nodes, [1, 8, 10, 30], [1, 12, 10, 30], inits)


def shifted_rows_silu() -> onnx.ModelProto:
    """A 3x3 conv on 32-wide rows (tiles across row ends) with no bias: SiLU alone."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), *_silu("c", "y")]
    return _model("shifted_rows_silu", nodes, [1, 6, 7, 32], [1, 9, 7, 32], {"w": _w(9, 6, 3, 3)})


def depthwise_silu() -> onnx.ModelProto:
    """A depthwise conv with its bias, then SiLU, per channel plane."""
    c = 10
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], group=c, pads=[2, 2, 2, 2]),
        *_silu("c", "y"),
    ]
    inits = {"w": _w(c, 1, 5, 5), "b": RNG.standard_normal(c)}
    return _model("depthwise_silu", nodes, [1, c, 14, 9], [1, c, 14, 9], inits)


def linear_silu() -> onnx.ModelProto:
    """A Linear layer without bias: the product, then SiLU, no step before it."""
    nodes = [helper.make_node("MatMul", ["x", "w"], ["p"]), *_silu("p", "y")]
    return _model("linear_silu", nodes, [1, 50, 64], [1, 50, 37], {"w": _w(64, 37)})


def gemm_silu_thin() -> onnx.ModelProto:
    """Gemm with transB on 3 rows (the thin product, its epilogue applied after), SiLU."""
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["g"], transB=1), *_silu("g", "y")]
    inits = {"w": _w(300, 128), "b": RNG.standard_normal(300)}
    return _model("gemm_silu_thin", nodes, [3, 128], [3, 300], inits)


def row_block_conv_silu() -> onnx.ModelProto:
    """A stride-2 conv by blocks of output rows, its bias, then SiLU."""
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
        *_silu("c", "y"),
    ]
    inits = {"w": _w(8, 16, 3, 3), "b": RNG.standard_normal(8)}
    return _model("row_blocks_silu", nodes, [1, 16, 200, 200], [1, 8, 100, 100], inits)


def _gelu(x: str, y: str) -> tuple[list[onnx.NodeProto], dict[str, np.ndarray]]:
    """GELU as torch exports it: x * (erf(x / sqrt(2)) + 1) * 0.5."""
    nodes = [
        helper.make_node("Div", [x, "sqrt2"], ["gd"]),
        helper.make_node("Erf", ["gd"], ["ge"]),
        helper.make_node("Add", ["ge", "gone"], ["ga"]),
        helper.make_node("Mul", [x, "ga"], ["gm"]),
        helper.make_node("Mul", ["gm", "ghalf"], [y]),
    ]
    consts = {"sqrt2": np.array(np.sqrt(2.0)), "gone": np.array(1.0), "ghalf": np.array(0.5)}
    return nodes, consts


def linear_bias_gelu() -> onnx.ModelProto:
    """A Linear layer's bias (per column), then GELU: a transformer's MLP."""
    gelu, consts = _gelu("q", "y")
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["p"]),
        helper.make_node("Add", ["p", "b"], ["q"]),
    ]
    inits = {"w": _w(64, 100), "b": RNG.standard_normal(100), **consts}
    return _model("linear_bias_gelu", [*nodes, *gelu], [1, 50, 64], [1, 50, 100], inits)


def conv_hardswish() -> onnx.ModelProto:
    """A 1x1 conv with its bias, then HardSwish: MobileNetV3's expansions."""
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"]),
        helper.make_node("HardSwish", ["c"], ["y"]),
    ]
    inits = {"w": _w(20, 16, 1, 1), "b": RNG.standard_normal(20)}
    return _model("conv_hardswish", nodes, [1, 16, 13, 11], [1, 20, 13, 11], inits)


def depthwise_hardswish() -> onnx.ModelProto:
    """A stride-2 depthwise conv with its bias, then HardSwish."""
    c = 10
    nodes = [
        helper.make_node(
            "Conv", ["x", "w", "b"], ["c"], group=c, pads=[1, 1, 1, 1], strides=[2, 2]
        ),
        helper.make_node("HardSwish", ["c"], ["y"]),
    ]
    inits = {"w": _w(c, 1, 3, 3), "b": RNG.standard_normal(c)}
    return _model("depthwise_hardswish", nodes, [1, c, 15, 17], [1, c, 8, 9], inits)


def linear_gelu_other_constant() -> onnx.ModelProto:
    """A GELU-shaped chain with 1.5 where sqrt(2) belongs: not GELU, the nest stays."""
    gelu, consts = _gelu("p", "y")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["p"])]
    inits = {"w": _w(64, 37), **consts, "sqrt2": np.array(1.5)}
    return _model("linear_gelu_other_constant", [*nodes, *gelu], [1, 50, 64], [1, 50, 37], inits)


ACTIVATION_MODELS = {
    linear_bias_gelu: "gelu",
    conv_hardswish: "hardswish",
    depthwise_hardswish: "hardswish",
}


SILU_MODELS = [
    conv_bias_silu,
    shifted_conv_silu,
    shifted_rows_silu,
    depthwise_silu,
    linear_silu,
    gemm_silu_thin,
    row_block_conv_silu,
]


def silu_then_scale() -> onnx.ModelProto:
    """SiLU that is not the chain's last op (a per-channel scale follows): no activation,
    the nest stays."""
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"]),
        *_silu("c", "a"),
        helper.make_node("Mul", ["a", "s"], ["y"]),
    ]
    inits = {
        "w": _w(20, 16, 1, 1),
        "b": RNG.standard_normal(20),
        "s": RNG.standard_normal((20, 1, 1)),
    }
    return _model("silu_then_scale", nodes, [1, 16, 13, 11], [1, 20, 13, 11], inits)


ALL_ACTIVATIONS = {**{m: "silu" for m in SILU_MODELS}, **ACTIVATION_MODELS}


@pytest.mark.parametrize("build", list(ALL_ACTIVATIONS), ids=[m.__name__ for m in ALL_ACTIVATIONS])
def test_the_activation_is_the_product_s(build) -> None:  # type: ignore[no-untyped-def]
    """SiLU (Sigmoid then Mul by the same value), GELU (torch's Div, Erf, Add, Mul, Mul)
    and HardSwish become the product's activation, after its steps: no nest is left, and
    the C passes RUNG_ACT_<name>."""
    name = ALL_ACTIVATIONS[build]
    module = lower(load_module(build()), "kernel")
    assert not [op for op in module.walk() if isinstance(op, kernel.LoopOp)]
    (product,) = [
        op
        for op in module.walk()
        if isinstance(op, kernel.MatmulOp)
        or (isinstance(op, kernel.CallOp) and op.callee.data in kernel.CallOp.EPILOGUE_OUT)
    ]
    assert product.activation is not None and product.activation.data == name
    assert f"RUNG_ACT_{name.upper()}}}" in generate_c(module, "model").source


@pytest.mark.parametrize("build", [silu_then_scale, linear_gelu_other_constant])
def test_a_near_activation_stays_a_nest(build) -> None:  # type: ignore[no-untyped-def]
    """SiLU before another op (the activation must come last), and GELU's ops with
    another constant, are left to their nest."""
    module = lower(load_module(build()), "kernel")
    assert [op for op in module.walk() if isinstance(op, kernel.LoopOp)]
    assert all(
        op.activation is None
        for op in module.walk()
        if isinstance(op, kernel.MatmulOp | kernel.CallOp)
    )


CHECKED = [*ALL_ACTIVATIONS, silu_then_scale, linear_gelu_other_constant]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("build", CHECKED, ids=[m.__name__ for m in CHECKED])
def test_activations_match_onnxruntime(build, threads: int) -> None:  # type: ignore[no-untyped-def]
    """Including inputs whose exponentials overflow and underflow (x = -100 gives -0, x =
    100 gives 100)."""
    model = build()
    rng = np.random.default_rng(5)
    feeds = {}
    for i in model.graph.input:
        shape = [d.dim_value for d in i.type.tensor_type.shape.dim]
        x = (4 * rng.standard_normal(shape)).astype(np.float32)
        x.reshape(-1)[:4] = [-100.0, 100.0, 0.0, -0.0]
        feeds[i.name] = x
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = want.run(None, feeds)[0]
    options = SessionOptions()
    options.intra_op_num_threads = threads
    got = InferenceSession(model, sess_options=options).run(None, feeds)[0]
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
