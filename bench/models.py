"""The benchmark's models: the nine light ONNX models and three small ones built here.

The light models ship with constant-fill weights, which make outputs nearly
independent of the input; they get seeded random weights (from the test
suite's `with_random_weights`) so that the check against onnxruntime means
something. The three hand-built small models cover what the light models
lack: a plain MLP (Gemm), a small CNN with BatchNormalization, and a
transformer block (batched MatMul attention, Softmax, LayerNormalization, Erf
GELU). The modern models (real architectures exported from torchvision and
transformers) are in `modern.py`; each spec names its group.

Every builder is deterministic: the same seed gives the same weights.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
TEST_DIR = Path(__file__).resolve().parent.parent / "test" / "python"


GROUPS = ("light", "small", "modern")
"""The groups of models, each with its own geometric mean in the report."""

Feeds = Callable[[onnx.ModelProto, int], dict[str, np.ndarray]]


@dataclass(frozen=True)
class ModelSpec:
    """A named model and how to build it; `max_repeat` caps the timed runs of big models.

    `feeds` makes the seeded inputs when random normal floats and small integers
    (`random_inputs`) do not fit the model, e.g. token ids and attention masks.
    """

    name: str
    build: Callable[[int], onnx.ModelProto]
    group: str = "small"
    max_repeat: int | None = None
    feeds: Feeds | None = None

    @property
    def light(self) -> bool:
        return self.group == "light"

    def inputs(self, model: onnx.ModelProto, seed: int) -> dict[str, np.ndarray]:
        """The model's seeded inputs: the same for every runtime."""
        return (self.feeds or random_inputs)(model, seed)


# ---- hand-built models --------------------------------------------------------------------------


class _Graph:
    """A tiny helper that names nodes and initializers and seeds the weights."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.count = 0

    def name(self, hint: str) -> str:
        self.count += 1
        return f"{hint}_{self.count}"

    def const(self, hint: str, array: np.ndarray) -> str:
        name = self.name(hint)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def weight(self, hint: str, shape: tuple[int, ...], fan_in: int) -> str:
        """A weight scaled by fan-in, so activations stay near unit size through the layers."""
        data = self.rng.standard_normal(shape) / math.sqrt(fan_in)
        return self.const(hint, data.astype(np.float32))

    def bias(self, hint: str, n: int) -> str:
        return self.const(hint, (0.01 * self.rng.standard_normal(n)).astype(np.float32))

    def op(self, op_type: str, inputs: list[str], hint: str | None = None, **attrs: object) -> str:
        out = self.name(hint or op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out

    def model(
        self, name: str, x: tuple[str, list[int]], y: tuple[str, list[int]]
    ) -> onnx.ModelProto:
        """The graph, its last node writing the output `y`; checked and shape-inferred."""
        self.nodes[-1].output[0] = y[0]
        graph = helper.make_graph(
            self.nodes,
            name,
            [helper.make_tensor_value_info(x[0], TensorProto.FLOAT, x[1])],
            [helper.make_tensor_value_info(y[0], TensorProto.FLOAT, y[1])],
            self.inits,
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        model.ir_version = 8
        onnx.checker.check_model(model)
        return onnx.shape_inference.infer_shapes(model)


def build_mlp(seed: int) -> onnx.ModelProto:
    """784 → 512 → 512 → 10 with Gemm + Relu, batch 8."""
    g = _Graph(seed)
    h = "x"
    sizes = [784, 512, 512, 10]
    for i, (n_in, n_out) in enumerate(zip(sizes, sizes[1:], strict=False)):
        w = g.weight("w", (n_out, n_in), n_in)
        h = g.op("Gemm", [h, w, g.bias("b", n_out)], transB=1)
        if i < len(sizes) - 2:
            h = g.op("Relu", [h])
    return g.model("mlp", ("x", [8, 784]), ("logits", [8, 10]))


def build_cnn(seed: int) -> onnx.ModelProto:
    """(Conv 3x3 → BatchNorm → Relu → MaxPool 2) x3, then Flatten → Gemm; 1x3x64x64 in."""
    g = _Graph(seed)
    h = "x"
    channels = [3, 16, 32, 64]
    for c_in, c_out in zip(channels, channels[1:], strict=False):
        w = g.weight("conv_w", (c_out, c_in, 3, 3), c_in * 9)
        h = g.op("Conv", [h, w, g.bias("conv_b", c_out)], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
        bn = [
            g.const("bn_scale", g.rng.uniform(0.4, 0.6, c_out).astype(np.float32)),
            g.const("bn_bias", (0.1 * g.rng.standard_normal(c_out)).astype(np.float32)),
            g.const("bn_mean", (0.1 * g.rng.standard_normal(c_out)).astype(np.float32)),
            g.const("bn_var", g.rng.uniform(0.5, 1.5, c_out).astype(np.float32)),
        ]
        h = g.op("BatchNormalization", [h, *bn], epsilon=1e-5)
        h = g.op("Relu", [h])
        h = g.op("MaxPool", [h], kernel_shape=[2, 2], strides=[2, 2])
    h = g.op("Flatten", [h], axis=1)
    features = channels[-1] * 8 * 8
    h = g.op("Gemm", [h, g.weight("fc_w", (10, features), features), g.bias("fc_b", 10)], transB=1)
    return g.model("cnn", ("x", [1, 3, 64, 64]), ("logits", [1, 10]))


def build_transformer(
    seed: int, seq: int = 128, d_model: int = 256, heads: int = 4
) -> onnx.ModelProto:
    """One pre-norm encoder block: LayerNorm → 4-head attention → residual → LayerNorm → GELU MLP
    → residual, with MatMul-based attention (batch 1, seq 128, d_model 256)."""
    g = _Graph(seed)
    d_head = d_model // heads
    d_ff = 4 * d_model

    def layer_norm(x: str) -> str:
        scale = g.const("ln_scale", np.ones(d_model, np.float32))
        bias = g.const("ln_bias", np.zeros(d_model, np.float32))
        return g.op("LayerNormalization", [x, scale, bias], axis=-1, epsilon=1e-5)

    def linear(x: str, n_in: int, n_out: int) -> str:
        y = g.op("MatMul", [x, g.weight("w", (n_in, n_out), n_in)])
        return g.op("Add", [y, g.bias("b", n_out)])

    heads_shape = g.const("heads_shape", np.array([1, seq, heads, d_head], np.int64))
    model_shape = g.const("model_shape", np.array([1, seq, d_model], np.int64))

    def split_heads(x: str, perm: list[int]) -> str:
        return g.op("Transpose", [g.op("Reshape", [x, heads_shape])], perm=perm)

    h = layer_norm("x")
    q = split_heads(linear(h, d_model, d_model), [0, 2, 1, 3])  # 1 x H x S x Dh
    k = split_heads(linear(h, d_model, d_model), [0, 2, 3, 1])  # 1 x H x Dh x S
    v = split_heads(linear(h, d_model, d_model), [0, 2, 1, 3])  # 1 x H x S x Dh
    scores = g.op("MatMul", [q, k])
    scale = g.const("scale", np.array(1.0 / math.sqrt(d_head), np.float32))
    probs = g.op("Softmax", [g.op("Mul", [scores, scale])], axis=-1)
    attn = g.op("Transpose", [g.op("MatMul", [probs, v])], perm=[0, 2, 1, 3])
    attn = linear(g.op("Reshape", [attn, model_shape]), d_model, d_model)
    x1 = g.op("Add", ["x", attn], hint="residual")

    h = linear(layer_norm(x1), d_model, d_ff)
    # GELU as in BERT exports: 0.5 * x * (1 + erf(x / sqrt(2))).
    erf = g.op("Erf", [g.op("Div", [h, g.const("sqrt2", np.array(math.sqrt(2.0), np.float32))])])
    one_plus = g.op("Add", [erf, g.const("one", np.array(1.0, np.float32))])
    gelu = g.op("Mul", [g.op("Mul", [h, one_plus]), g.const("half", np.array(0.5, np.float32))])
    g.op("Add", [x1, linear(gelu, d_ff, d_model)], hint="residual")
    return g.model("transformer", ("x", [1, seq, d_model]), ("y", [1, seq, d_model]))


# ---- the light models ---------------------------------------------------------------------------


def light_dir() -> Path:
    return Path(onnx.__file__).resolve().parent / "backend" / "test" / "data" / "light"


def _light(path: Path) -> Callable[[int], onnx.ModelProto]:
    def build(seed: int) -> onnx.ModelProto:
        if str(TEST_DIR) not in sys.path:
            sys.path.insert(0, str(TEST_DIR))
        from light_weights import with_random_weights

        return with_random_weights(onnx.load(path), seed=seed)

    return build


def all_models() -> list[ModelSpec]:
    """The light models (sorted by name), then the small ones: mlp, cnn, transformer.

    The modern models are not here: they need the zoo extra and minutes to
    export and compile (see `modern.specs`).
    """
    specs = [
        ModelSpec(
            p.stem.removeprefix("light_"),
            _light(p),
            group="light",
            max_repeat=5 if "vgg" in p.stem else None,
        )
        for p in sorted(light_dir().glob("light_*.onnx"))
    ]
    specs += [
        ModelSpec("mlp", build_mlp),
        ModelSpec("cnn", build_cnn),
        ModelSpec("transformer", build_transformer),
    ]
    return specs


def select(
    pattern: str | None, specs: list[ModelSpec] | None = None, groups: Sequence[str] = GROUPS
) -> list[ModelSpec]:
    """The models of `groups` whose name matches the regular expression (re.search), in
    suite order; from `specs` (default `all_models()`)."""
    specs = all_models() if specs is None else specs
    regex = re.compile(pattern) if pattern else None
    return [s for s in specs if s.group in groups and (regex is None or regex.search(s.name))]


def random_inputs(model: onnx.ModelProto, seed: int) -> dict[str, np.ndarray]:
    """Seeded standard-normal inputs for every graph input that is not an initializer."""
    rng = np.random.default_rng(seed)
    inits = {t.name for t in model.graph.initializer}
    feed: dict[str, np.ndarray] = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        tensor = vi.type.tensor_type
        shape = [d.dim_value if d.dim_value > 0 else 1 for d in tensor.shape.dim]
        dtype = helper.tensor_dtype_to_np_dtype(tensor.elem_type)
        if np.issubdtype(dtype, np.floating):
            feed[vi.name] = rng.standard_normal(shape).astype(dtype)
        else:
            feed[vi.name] = rng.integers(0, 4, shape).astype(dtype)
    return feed
