"""Models shaped like what exporters emit, at level core against onnxruntime.

Each is built with onnx.helper the way PyTorch's exporter writes such blocks
(shape arithmetic with Shape/Gather/Concat/Reshape, decomposed Gelu, …), with
a dynamic batch dimension, and run on random inputs.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from rung.runtime import InferenceSession

RNG = np.random.default_rng(3)
F = TensorProto.FLOAT


def w(name: str, *shape: int, scale: float | None = None) -> TensorProto:
    fan_in = shape[0] if len(shape) == 2 else int(np.prod(shape[1:])) if len(shape) > 1 else 1
    s = scale if scale is not None else 1 / np.sqrt(fan_in)
    return numpy_helper.from_array((RNG.standard_normal(shape) * s).astype(np.float32), name)


def ints(name: str, values: list[int]) -> TensorProto:
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def model(
    nodes: list, inputs: list, outputs: list, inits: list, opset: int = 17
) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
    onnx.checker.check_model(m, full_check=True)
    return m


def transformer_block() -> onnx.ModelProto:
    d, h = 8, 2
    n = helper.make_node
    nodes = [
        n("LayerNormalization", ["x", "ln_g", "ln_b"], ["ln"], axis=-1, epsilon=1e-5),
        n("MatMul", ["ln", "wqkv"], ["qkv"]),
        n("Split", ["qkv", "split"], ["q", "k", "v"], axis=-1),
        # Exporter-style head split: [B, T, D] -> [B, T, H, D/H] via Shape/Gather/Concat.
        n("Shape", ["x"], ["shape"]),
        n("Gather", ["shape", "i0"], ["b"], axis=0),
        n("Gather", ["shape", "i1"], ["t"], axis=0),
        n("Concat", ["b", "t", "heads", "hd"], ["hshape"], axis=0),
        *[n("Reshape", [s, "hshape"], [s + "4"]) for s in ("q", "k", "v")],
        n("Transpose", ["q4"], ["qh"], perm=[0, 2, 1, 3]),
        n("Transpose", ["k4"], ["kh"], perm=[0, 2, 3, 1]),
        n("Transpose", ["v4"], ["vh"], perm=[0, 2, 1, 3]),
        n("MatMul", ["qh", "kh"], ["scores0"]),
        n("Div", ["scores0", "sqrt_d"], ["scores"]),
        n("Shape", ["scores"], ["sshape"]),
        n(
            "ConstantOfShape",
            ["sshape"],
            ["ones"],
            value=numpy_helper.from_array(np.array([1.0], np.float32)),
        ),
        n("Trilu", ["ones"], ["causal"], upper=0),
        n("Equal", ["causal", "zero"], ["masked"]),
        n("Where", ["masked", "neg_inf", "scores"], ["scores_m"]),
        n("Softmax", ["scores_m"], ["attn"], axis=-1),
        n("MatMul", ["attn", "vh"], ["ctx4"]),
        n("Transpose", ["ctx4"], ["ctx_t"], perm=[0, 2, 1, 3]),
        n("Concat", ["b", "t", "dd"], ["oshape"], axis=0),
        n("Reshape", ["ctx_t", "oshape"], ["ctx"]),
        n("MatMul", ["ctx", "wo"], ["proj"]),
        n("Add", ["x", "proj"], ["res"]),
        # Gelu as exporters decompose it: 0.5 * x * (1 + erf(x / sqrt(2))).
        n("Div", ["res", "sqrt2"], ["gd"]),
        n("Erf", ["gd"], ["ge"]),
        n("Add", ["ge", "one"], ["g1"]),
        n("Mul", ["res", "g1"], ["g2"]),
        n("Mul", ["g2", "half"], ["y"]),
    ]
    inits = [
        w("ln_g", d, scale=1.0),
        w("ln_b", d, scale=0.1),
        w("wqkv", d, 3 * d),
        w("wo", d, d),
        ints("split", [d, d, d]),
        ints("i0", [0]),
        ints("i1", [1]),
        ints("heads", [h]),
        ints("hd", [d // h]),
        ints("dd", [d]),
        numpy_helper.from_array(np.array(np.sqrt(d // h), np.float32), "sqrt_d"),
        numpy_helper.from_array(np.array(0.0, np.float32), "zero"),
        numpy_helper.from_array(np.array(-1e9, np.float32), "neg_inf"),
        numpy_helper.from_array(np.array(np.sqrt(2.0), np.float32), "sqrt2"),
        numpy_helper.from_array(np.array(1.0, np.float32), "one"),
        numpy_helper.from_array(np.array(0.5, np.float32), "half"),
    ]
    return model(
        nodes,
        [helper.make_tensor_value_info("x", F, ["B", 5, d])],
        [helper.make_tensor_value_info("y", F, ["B", 5, d])],
        inits,
    )


def mobilenet_block() -> onnx.ModelProto:
    c, e = 4, 8
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "w1", "b1"], ["c1"]),
        n("Clip", ["c1", "lo", "hi"], ["r1"]),
        n("Conv", ["r1", "wd", "bd"], ["c2"], group=e, pads=[1, 1, 1, 1]),
        n("Clip", ["c2", "lo", "hi"], ["r2"]),
        n("Conv", ["r2", "w3", "b3"], ["c3"]),
        n("Add", ["x", "c3"], ["res"]),
        n("GlobalAveragePool", ["res"], ["gap"]),
        n("Flatten", ["gap"], ["flat"]),
        n("Gemm", ["flat", "fc", "fcb"], ["y"], transB=1),
    ]
    inits = [
        w("w1", e, c, 1, 1),
        w("b1", e, scale=0.1),
        w("wd", e, 1, 3, 3),
        w("bd", e, scale=0.1),
        w("w3", c, e, 1, 1),
        w("b3", c, scale=0.1),
        w("fc", 10, c),
        w("fcb", 10, scale=0.1),
        numpy_helper.from_array(np.array(0.0, np.float32), "lo"),
        numpy_helper.from_array(np.array(6.0, np.float32), "hi"),
    ]
    return model(
        nodes,
        [helper.make_tensor_value_info("x", F, ["N", c, 8, 8])],
        [helper.make_tensor_value_info("y", F, ["N", 10])],
        inits,
    )


def unet_decoder() -> onnx.ModelProto:
    n = helper.make_node
    nodes = [
        n("ConvTranspose", ["low", "wt", "bt"], ["up"], strides=[2, 2], kernel_shape=[2, 2]),
        n("Concat", ["up", "skip"], ["cat"], axis=1),
        n("Conv", ["cat", "wc", "bc"], ["c"], pads=[1, 1, 1, 1]),
        n("Relu", ["c"], ["r"]),
        n("Resize", ["r", "", "scales"], ["y"], mode="nearest"),
    ]
    inits = [
        w("wt", 8, 4, 2, 2),
        w("bt", 4, scale=0.1),
        w("wc", 4, 8, 3, 3),
        w("bc", 4, scale=0.1),
        numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales"),
    ]
    return model(
        nodes,
        [
            helper.make_tensor_value_info("low", F, ["N", 8, 4, 4]),
            helper.make_tensor_value_info("skip", F, ["N", 4, 8, 8]),
        ],
        [helper.make_tensor_value_info("y", F, ["N", 4, 16, 16])],
        inits,
    )


def recurrent_tagger() -> onnx.ModelProto:
    seq, batch, d, hid, tags = 6, 2, 5, 4, 3
    n = helper.make_node
    nodes = [
        n("LSTM", ["x", "lw", "lr", "lb"], ["ly"], hidden_size=hid, direction="bidirectional"),
        # [T, 2, B, H] -> [T, B, 2H]
        n("Transpose", ["ly"], ["lt"], perm=[0, 2, 1, 3]),
        n("Reshape", ["lt", "shape1"], ["lf"]),
        n("GRU", ["lf", "gw", "gr", "gb"], ["gy"], hidden_size=hid, linear_before_reset=1),
        n("Squeeze", ["gy", "ax1"], ["gs"]),
        n("MatMul", ["gs", "proj"], ["logits"]),
        n("LogSoftmax", ["logits"], ["y"], axis=-1),
    ]
    inits = [
        w("lw", 2, 4 * hid, d),
        w("lr", 2, 4 * hid, hid),
        w("lb", 2, 8 * hid, scale=0.1),
        w("gw", 1, 3 * hid, 2 * hid),
        w("gr", 1, 3 * hid, hid),
        w("gb", 1, 6 * hid, scale=0.1),
        w("proj", hid, tags),
        ints("shape1", [seq, batch, 2 * hid]),
        ints("ax1", [1]),
    ]
    return model(
        nodes,
        [helper.make_tensor_value_info("x", F, [seq, batch, d])],
        [helper.make_tensor_value_info("y", F, [seq, batch, tags])],
        inits,
    )


MODELS = {
    "transformer_block": (transformer_block, {"x": (2, 5, 8)}),
    "mobilenet_block": (mobilenet_block, {"x": (2, 4, 8, 8)}),
    "unet_decoder": (unet_decoder, {"low": (2, 8, 4, 4), "skip": (2, 4, 8, 8)}),
    "recurrent_tagger": (recurrent_tagger, {"x": (6, 2, 5)}),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_exporter_style_model_matches_onnxruntime(name: str) -> None:
    build, shapes = MODELS[name]
    m = build()
    feed = {k: RNG.standard_normal(s).astype(np.float32) for k, s in shapes.items()}
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = sess.run(None, feed)
    got = InferenceSession(m, level="core").run(None, feed)
    for g, e in zip(got, expected, strict=True):
        assert g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=1e-3, atol=1e-4)
