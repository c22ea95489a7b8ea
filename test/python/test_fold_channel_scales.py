"""core-fold-channel-scales on squeeze-and-excite blocks: the gate that scales a feature
map before a convolution moves onto the convolution's weights, and the results still
match onnxruntime (EfficientNet's block: SiLU, a gate from a pooled squeeze, a 1x1
projection; and a 3x3 convolution with padding after the gate).
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from rung.dialects import context, core
from rung.lowering.pipelines import default_registry
from rung.runtime import InferenceSession
from rung.runtime.levels import lower
from rung.runtime.session import load_module


def _se_block(kernel: int, batch: int | str = 1, c: int = 16, out: int = 8) -> onnx.ModelProto:
    rng = np.random.default_rng(11)
    inits = {
        "w1": rng.standard_normal((4, c, 1, 1)) * 0.3,
        "b1": rng.standard_normal(4) * 0.1,
        "w2": rng.standard_normal((c, 4, 1, 1)) * 0.3,
        "b2": rng.standard_normal(c) * 0.1,
        "wp": rng.standard_normal((out, c, kernel, kernel)) * 0.2,
        "bp": rng.standard_normal(out) * 0.1,
    }
    nodes = [
        helper.make_node("Sigmoid", ["x"], ["sig"]),
        helper.make_node("Mul", ["x", "sig"], ["act"]),
        helper.make_node("GlobalAveragePool", ["act"], ["pooled"]),
        helper.make_node("Conv", ["pooled", "w1", "b1"], ["squeezed"]),
        helper.make_node("Relu", ["squeezed"], ["relu"]),
        helper.make_node("Conv", ["relu", "w2", "b2"], ["excited"]),
        helper.make_node("Sigmoid", ["excited"], ["gate"]),
        helper.make_node("Mul", ["gate", "act"], ["scaled"]),
        helper.make_node("Conv", ["scaled", "wp", "bp"], ["y"], pads=[kernel // 2] * 4),
    ]
    graph = helper.make_graph(
        nodes,
        "se",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, c, 14, 14])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, out, 14, 14])],
        [numpy_helper.from_array(v.astype(np.float32), k) for k, v in inits.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _scaled_weights(model: onnx.ModelProto) -> int:
    """How many convolutions of the kernel-bound core IR read weights computed by a mul."""
    module = load_module(model)
    lower(module, "core")
    default_registry().build("core-fold-channel-scales,dce").apply(context(), module)
    convs = [op for op in module.walk() if isinstance(op, core.ConvOp)]
    return sum(isinstance(c.weight.owner, core.BinaryOp) for c in convs)


@pytest.mark.parametrize(("kernel", "batch", "folded"), [(1, 1, 1), (3, 1, 1), (1, 2, 0)])
def test_se_block_matches_onnxruntime(kernel: int, batch: int, folded: int) -> None:
    """A gate that differs per image (batch 2) stays a scale of the map."""
    model = _se_block(kernel, batch)
    x = np.random.default_rng(1).standard_normal((batch, 16, 14, 14)).astype(np.float32)
    (got,) = InferenceSession(model).run(None, {"x": x})
    ref = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = ref.run(None, {"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert _scaled_weights(model) == folded
