"""Build `examples/tiny_cnn.onnx`, the small model the README's commands run on.

A digit-classifier-shaped CNN (Conv → Relu → MaxPool → Conv → Relu →
GlobalAveragePool → Flatten → Gemm → Softmax) with seeded random weights,
at opset 13 so that importing it also exercises the opset upgrade.

    python examples/make_tiny_cnn.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build() -> onnx.ModelProto:
    rng = np.random.default_rng(2024)

    def weight(name: str, *shape: int) -> TensorProto:
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
        data = (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)
        return numpy_helper.from_array(data, name)

    initializers = [
        weight("conv1.weight", 8, 1, 3, 3),
        weight("conv1.bias", 8),
        weight("conv2.weight", 16, 8, 3, 3),
        weight("conv2.bias", 16),
        weight("fc.weight", 10, 16),
        weight("fc.bias", 10),
    ]
    nodes = [
        helper.make_node(
            "Conv", ["image", "conv1.weight", "conv1.bias"], ["c1"], name="conv1", pads=[1, 1, 1, 1]
        ),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node(
            "MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]
        ),
        helper.make_node(
            "Conv", ["p1", "conv2.weight", "conv2.bias"], ["c2"], name="conv2", pads=[1, 1, 1, 1]
        ),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc.weight", "fc.bias"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny_cnn",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 1, 28, 28])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", 10])],
        initializers,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 13)],
        ir_version=7,
        producer_name="rung-examples",
    )
    onnx.checker.check_model(model, full_check=True)
    return model


def main() -> None:
    out = Path(__file__).resolve().parent / "tiny_cnn.onnx"
    onnx.save(build(), out)
    print(f"wrote {out.name}")


if __name__ == "__main__":
    main()
