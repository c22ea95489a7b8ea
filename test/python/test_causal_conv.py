"""CausalConvWithState, lowered directly to core, against ONNX's reference implementation.

ONNX builds the op's function body only for a static channel count (its Conv's
`group`), so a model of `?` dims used to be refused. The handler lowers a
static count to a grouped conv and a run-time one to gathered windows; both
must match the reference for every combination of bias, past state and
activation, at every run-time size a compiled model is fed (kernel size 1,
an input shorter than the state, one step of decoding), and sizes that
contradict each other must fail the run with an error naming the node.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from rung.errors import RungError
from rung.runtime import InferenceSession

LEVELS = ["core", "kernel"]
RNG = np.random.default_rng(27)

SIZES = [(2, 4, 8, 4), (1, 3, 1, 2), (3, 2, 2, 5), (2, 5, 6, 1)]
"""(batch, channels, length, kernel size) fed to one compiled model: a prefill, one
decode step, an input shorter than the state, a kernel of one tap (an empty state)."""

FORMS = [
    pytest.param(False, False, "none", id="plain"),
    pytest.param(True, False, "none", id="bias"),
    pytest.param(False, True, "silu", id="past-silu"),
    pytest.param(True, True, "swish", id="bias-past-swish"),
]


def _model(
    bias: bool,
    past: bool,
    activation: str,
    element: int = TensorProto.FLOAT,
    shapes: dict[str, Sequence[int | str]] | None = None,
) -> onnx.ModelProto:
    """One CausalConvWithState node; every dim symbolic unless `shapes` fixes some."""
    names = ["x", "w", "b" if bias else "", "p" if past else ""]
    while names[-1] == "":
        names.pop()
    node = helper.make_node(
        "CausalConvWithState", names, ["y", "s"], name="ccs", activation=activation
    )
    dims: dict[str, Sequence[int | str]] = {
        "x": ["B", "C", "L"],
        "w": ["Cw", "One", "K"],
        "b": ["Cb"],
        "p": ["Bp", "Cp", "Km1"],
        "y": ["By", "Cy", "Ly"],
        "s": ["Bs", "Cs", "Ls"],
    }
    dims.update(shapes or {})
    inputs = [helper.make_tensor_value_info(n, element, dims[n]) for n in names if n]
    outputs = [helper.make_tensor_value_info(n, element, dims[n]) for n in ("y", "s")]
    graph = helper.make_graph([node], "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 27)])


def _feed(
    model: onnx.ModelProto, sizes: tuple[int, int, int, int], dtype: type = np.float32
) -> dict[str, np.ndarray]:
    n, c, length, k = sizes
    shapes = {"x": (n, c, length), "w": (c, 1, k), "b": (c,), "p": (n, c, k - 1)}
    return {i.name: RNG.standard_normal(shapes[i.name]).astype(dtype) for i in model.graph.input}


def _check(
    session: InferenceSession,
    model: onnx.ModelProto,
    feed: dict[str, np.ndarray],
    rtol: float = 1e-5,
    atol: float = 1e-5,
) -> None:
    got = session.run(None, feed)
    want = ReferenceEvaluator(model).run(None, feed)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        assert g.shape == w.shape, f"shape {g.shape}, expected {w.shape}"
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(("bias", "past", "activation"), FORMS)
def test_every_dim_at_run_time(level: str, bias: bool, past: bool, activation: str) -> None:
    model = _model(bias, past, activation)
    session = InferenceSession(model, level=level)
    for sizes in SIZES:
        _check(session, model, _feed(model, sizes))


@pytest.mark.parametrize("level", LEVELS)
def test_static_channels_with_run_time_batch_length_and_kernel(level: str) -> None:
    """A static channel count makes a grouped conv, whatever else is `?`."""
    shapes: dict[str, Sequence[int | str]] = {"x": ["B", 3, "L"], "w": [3, 1, "K"]}
    model = _model(True, True, "silu", shapes=shapes)
    session = InferenceSession(model, level=level)
    for n, _, length, k in SIZES:
        _check(session, model, _feed(model, (n, 3, length, k)))


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("past", [False, True])
def test_static_and_run_time_shapes_agree(level: str, past: bool) -> None:
    """The grouped conv (static shapes) and the windows (`?` shapes) give one result."""
    sizes = (2, 4, 8, 4)
    dynamic = _model(True, past, "silu")
    feed = _feed(dynamic, sizes)
    static_dims = {name: list(v.shape) for name, v in feed.items()}
    static_dims.update(y=[2, 4, 8], s=[2, 4, 3])
    static = _model(True, past, "silu", shapes=static_dims)
    want = InferenceSession(static, level=level).run(None, feed)
    got = InferenceSession(dynamic, level=level).run(None, feed)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
    _check(InferenceSession(static, level=level), static, feed)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("activation", ["none", "silu"])
def test_float16(level: str, activation: str) -> None:
    """SiLU is taken in f32 and the products are summed in f32, as the reference does."""
    model = _model(True, True, activation, element=TensorProto.FLOAT16)
    session = InferenceSession(model, level=level)
    for sizes in SIZES[:3]:
        _check(session, model, _feed(model, sizes, np.float16), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(
    ("shapes", "message"),
    [
        ({"w": (3, 1, 4)}, "weight is not"),
        ({"w": (4, 2, 4)}, "weight is not"),
        ({"b": (3,)}, "bias is not"),
        ({"p": (2, 4, 2)}, "past_state is not"),
        ({"p": (1, 4, 3)}, "past_state is not"),
        ({"w": (4, 1, 0), "p": (2, 4, 0)}, "kernel size of 0"),
    ],
)
def test_sizes_that_contradict_each_other_fail_the_run(
    level: str, shapes: dict[str, tuple[int, ...]], message: str
) -> None:
    model = _model(True, True, "none")
    session = InferenceSession(model, level=level)
    feed = _feed(model, (2, 4, 8, 4))
    feed.update({name: RNG.standard_normal(s).astype(np.float32) for name, s in shapes.items()})
    with pytest.raises(RungError, match=f"node 'ccs'.*{message}"):
        session.run(None, feed)


def test_static_sizes_that_contradict_each_other_are_refused() -> None:
    model = _model(False, True, "none", shapes={"w": [4, 1, 4], "p": [2, 4, 2]})
    with pytest.raises(RungError, match="node 'ccs'.*past_state is not"):
        InferenceSession(model, level="core")


def test_an_unknown_activation_is_refused() -> None:
    model = _model(False, False, "relu")
    with pytest.raises(RungError, match="node 'ccs'.*activation 'relu'"):
        InferenceSession(model, level="core")
