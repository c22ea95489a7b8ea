"""The light models with seeded random weights in place of their ConstantOfShape fills.

Their shipped weights are constant fills, which make the outputs almost
independent of the input; random weights (scaled by fan-in, BatchNorm scales
near 0.5) make a comparison with onnxruntime meaningful.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import numpy_helper


def _constant_shapes(graph: onnx.GraphProto) -> dict[str, list[int]]:
    found = {t.name: numpy_helper.to_array(t).astype(int).tolist() for t in graph.initializer}
    for node in graph.node:
        if node.op_type == "Constant":
            for attr in node.attribute:
                if attr.name == "value":
                    found[node.output[0]] = numpy_helper.to_array(attr.t).astype(int).tolist()
    return found


def with_random_weights(model: onnx.ModelProto, seed: int = 0) -> onnx.ModelProto:
    """A copy of `model` whose ConstantOfShape weights are seeded random initializers."""
    rng = np.random.default_rng(seed)
    out = onnx.ModelProto()
    out.CopyFrom(model)
    graph = out.graph
    shapes = _constant_shapes(graph)
    uses: dict[str, tuple[str, int]] = {}
    for node in graph.node:
        for i, name in enumerate(node.input):
            uses.setdefault(name, (node.op_type, i))
    keep = []
    for node in graph.node:
        if node.op_type != "ConstantOfShape" or node.input[0] not in shapes:
            keep.append(node)
            continue
        shape = shapes[node.input[0]]
        name = node.output[0]
        op, index = uses.get(name, ("", 0))
        if op == "BatchNormalization":
            data = {
                1: rng.uniform(0.4, 0.6, shape),
                2: 0.1 * rng.standard_normal(shape),
                3: 0.1 * rng.standard_normal(shape),
                4: rng.uniform(0.5, 1.5, shape),
            }[index]
        elif len(shape) == 1:
            data = 0.01 * rng.standard_normal(shape)
        else:
            fan_in = int(np.prod(shape[1:]))
            data = rng.standard_normal(shape) / np.sqrt(fan_in)
        graph.initializer.append(numpy_helper.from_array(data.astype(np.float32), name))
    del graph.node[:]
    graph.node.extend(keep)
    # IR 4 lets initializers stand apart from the graph inputs.
    out.ir_version = max(out.ir_version, 4)
    return out
