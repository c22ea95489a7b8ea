"""kernel-coalesce on whole models: merged dims compute what the nests computed.

A CNN tail at 7x7 (BatchNormalization, Relu, a Concat, a Slice, a Transpose, a
broadcast Add, a global average pool) runs at level kernel against onnxruntime;
the generated C shows that the pass merged the elementwise nests (loops over
whole maps and whole buffers) and left the others alone.
"""

from __future__ import annotations

import re

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from rung.lowering.kernel_to_c import generate_c
from rung.runtime import InferenceSession
from rung.runtime.levels import lower
from rung.runtime.loading import load_module

RNG = np.random.default_rng(0)


def tail_model() -> onnx.ModelProto:
    c = 40
    inits = [
        numpy_helper.from_array(RNG.standard_normal(c).astype(np.float32), "gamma"),
        numpy_helper.from_array(RNG.standard_normal(c).astype(np.float32), "beta"),
        numpy_helper.from_array(RNG.standard_normal(c).astype(np.float32), "mean"),
        numpy_helper.from_array(RNG.random(c).astype(np.float32) + 0.5, "var"),
        numpy_helper.from_array(RNG.standard_normal((c + 24, 1, 1)).astype(np.float32), "bias"),
        numpy_helper.from_array(np.array([1], np.int64), "start"),
        numpy_helper.from_array(np.array([6], np.int64), "end"),
        numpy_helper.from_array(np.array([2], np.int64), "axis"),
    ]
    nodes = [
        helper.make_node("BatchNormalization", ["x", "gamma", "beta", "mean", "var"], ["bn"]),
        helper.make_node("Relu", ["bn"], ["r"]),
        helper.make_node("Concat", ["r", "y"], ["cat"], axis=1),
        helper.make_node("Add", ["cat", "bias"], ["biased"]),
        helper.make_node("Slice", ["biased", "start", "end", "axis"], ["rows"]),
        helper.make_node("Transpose", ["rows"], ["t"], perm=[0, 1, 3, 2]),
        helper.make_node("GlobalAveragePool", ["biased"], ["pooled"]),
    ]
    graph = helper.make_graph(
        nodes,
        "tail",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, 7, 7]),
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 24, 7, 7]),
        ],
        [
            helper.make_tensor_value_info("t", TensorProto.FLOAT, [1, c + 24, 7, 5]),
            helper.make_tensor_value_info("pooled", TensorProto.FLOAT, [1, c + 24, 1, 1]),
            helper.make_tensor_value_info("cat", TensorProto.FLOAT, [1, c + 24, 7, 7]),
        ],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_coalesced_nests_match_onnxruntime() -> None:
    model = tail_model()
    feed = {
        "x": RNG.standard_normal((1, 40, 7, 7)).astype(np.float32),
        "y": RNG.standard_normal((1, 24, 7, 7)).astype(np.float32),
    }
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    got = InferenceSession(model, level="kernel").run(None, feed)
    for g, w in zip(got, want.run(None, feed), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_the_pass_merges_whole_maps() -> None:
    module = load_module(tail_model())
    lower(module, "kernel")
    source = generate_c(module, "model").source
    bounds = {int(b) for b in re.findall(r"for \(int64_t \w+ = 0; \w+ < (\d+); ", source)}
    # A map of 7x7 (49), or whole channels of it (40 * 49, 24 * 49), in one loop.
    assert bounds & {49, 40 * 49, 24 * 49, 64 * 49}, source
    # The Slice keeps rows of 5 apart from rows of 7, and the Transpose its two dims.
    assert 5 in bounds and 7 in bounds, source


def depthwise_model() -> onnx.ModelProto:
    """EfficientNet's block: a depthwise 3x3 conv with a bias, then SiLU (x * sigmoid(x)),
    its sigmoid also an output (so that its nest is no epilogue), then a depthwise conv."""
    c = 32
    inits = [
        numpy_helper.from_array(RNG.standard_normal((c, 1, 3, 3)).astype(np.float32), "w"),
        numpy_helper.from_array(RNG.standard_normal(c).astype(np.float32), "b"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["conv"], group=c, pads=[1, 1, 1, 1]),
        helper.make_node("Sigmoid", ["conv"], ["sig"]),
        helper.make_node("Mul", ["conv", "sig"], ["y"]),
        helper.make_node("Conv", ["y", "w", "b"], ["z"], group=c, pads=[1, 1, 1, 1]),
    ]
    graph = helper.make_graph(
        nodes,
        "dw",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, 56, 56])],
        [
            helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, c, 56, 56]),
            helper.make_tensor_value_info("sig", TensorProto.FLOAT, [1, c, 56, 56]),
        ],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_coalescing_keeps_every_parallel_nest_parallel() -> None:
    """Views go before the outermost nest: a view in a nest's body (the padded copy of a
    depthwise conv's input, per channel) kept kernel-parallelize from sharing that nest,
    and EfficientNet-B0 ran 20% slower on two threads."""
    from xdsl.dialects.func import FuncOp

    from rung.dialects import context, kernel
    from rung.lowering.pipelines import default_registry

    def parallel_nests(passes: str) -> int:
        module = load_module(depthwise_model())
        lower(module, "core")
        default_registry().build(passes).apply(context(), module)
        (func,) = [op for op in module.body.block.ops if isinstance(op, FuncOp)]
        nests = [op for op in func.body.block.ops if isinstance(op, kernel.LoopOp)]
        assert all(not isinstance(op, kernel.ViewOp) for n in nests for op in n.walk())
        return sum(n.omp is not None for n in nests)

    names = [a.name for a in default_registry().expand("core-to-kernel")]
    assert "kernel-coalesce" in names
    without = ",".join(n for n in names if n != "kernel-coalesce")
    assert parallel_nests(",".join(names)) == parallel_nests(without) >= 1
