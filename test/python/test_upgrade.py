"""Tests for `rung.importers.onnx.upgrade`: an old-opset model must compute the same
numbers after being upgraded to the latest opset.

Each rule test builds a small model at an old opset, gets the expected outputs
from an oracle independent of the upgrader (onnxruntime running the ORIGINAL
model where it still supports that opset, otherwise numpy code written from the
old op's spec), then checks the upgraded model with onnx's ReferenceEvaluator
and with onnxruntime. Every rule test runs twice: through onnx's version
converter (the normal path) and with the converter forced to fail, so our own
rules alone must give the same numbers.
"""

from __future__ import annotations

import functools
import glob
import os
import time
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx import numpy_helper
from onnx.reference import ReferenceEvaluator

from rung.errors import RungError
from rung.importers.onnx import upgrade as upgrade_mod
from rung.importers.onnx.upgrade import context as upgrade_context
from rung.importers.onnx.upgrade import upgrade_model
from rung.importers.onnx.upgrade.compatible import COMPATIBLE
from rung.importers.onnx.upgrade.history import canon_domain, schema_histories
from rung.importers.onnx.upgrade.registry import RULES

LATEST = onnx.defs.onnx_opset_version()
LATEST_ML = max(
    s.since_version for s in onnx.defs.get_all_schemas_with_history() if s.domain == "ai.onnx.ml"
)
RNG = np.random.default_rng(0)

ort.set_default_logger_severity(3)


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------


@functools.cache
def ort_max_opset() -> int:
    """The newest default-domain opset this onnxruntime accepts (probed, not assumed)."""
    for v in range(LATEST, 6, -1):
        g = oh.make_graph(
            [oh.make_node("Relu", ["x"], ["y"])],
            "probe",
            [oh.make_tensor_value_info("x", TP.FLOAT, [1])],
            [oh.make_tensor_value_info("y", TP.FLOAT, [1])],
        )
        m = oh.make_model(g, opset_imports=[oh.make_opsetid("", v)])
        m.ir_version = 8
        try:
            ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
            return v
        except Exception:  # noqa: BLE001 - probing
            continue
    raise AssertionError("onnxruntime accepts no opset")


def make_model(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: list[onnx.ValueInfoProto],
    opset: int,
    initializers: list[onnx.TensorProto] = (),
    ml_opset: int | None = None,
    ir_version: int | None = None,
) -> onnx.ModelProto:
    imports = [oh.make_opsetid("", opset)]
    if ml_opset is not None:
        imports.append(oh.make_opsetid("ai.onnx.ml", ml_opset))
    g = oh.make_graph(nodes, "g", inputs, outputs, list(initializers))
    m = oh.make_model(g, opset_imports=imports)
    m.ir_version = ir_version or (3 if opset < 7 else 4 if opset < 9 else 7)
    # The checker wants a shape on graph outputs; take it from shape inference.
    inferred = {v.name: v for v in onnx.shape_inference.infer_shapes(m).graph.output}
    for out in m.graph.output:
        t = inferred[out.name].type
        if not out.type.tensor_type.HasField("shape") and t.tensor_type.HasField("shape"):
            out.type.tensor_type.shape.CopyFrom(t.tensor_type.shape)
    return m


def vi(name: str, elem: int = TP.FLOAT, shape: list | None = None) -> onnx.ValueInfoProto:
    return oh.make_tensor_value_info(name, elem, shape)


def default_opset(model: onnx.ModelProto, domain: str = "") -> int | None:
    spellings = ("", "ai.onnx") if domain == "" else (domain,)
    return next((o.version for o in model.opset_import if o.domain in spellings), None)


def all_nodes(graph: onnx.GraphProto):
    for n in graph.node:
        yield n
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from all_nodes(a.g)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for sub in a.graphs:
                    yield from all_nodes(sub)


def run_ort(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def run_ref(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ReferenceEvaluator(model).run(None, feeds)


def for_ort(model: onnx.ModelProto) -> onnx.ModelProto:
    """The same model stamped with an opset onnxruntime accepts.

    Only valid when no op in it changed after that opset, which is asserted:
    then the restamped model is the identical program.
    """
    top = ort_max_opset()
    if default_opset(model) <= top:
        return model
    for node in all_nodes(model.graph):
        if node.domain in ("", "ai.onnx"):
            since = onnx.defs.get_schema(node.op_type, LATEST, "").since_version
            assert since <= top, f"{node.op_type}-{since} is newer than onnxruntime's opset {top}"
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for imp in m.opset_import:
        if imp.domain in ("", "ai.onnx"):
            imp.version = top
    m.ir_version = oh.find_min_ir_version_for([oh.make_opsetid("", top)], True)
    return m


def assert_close(got: list, expected: list, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    assert len(got) >= len(expected)
    for g, e in zip(got, expected, strict=False):
        e = np.asarray(e)
        g = np.asarray(g)
        assert g.shape == e.shape, (g.shape, e.shape)
        if e.dtype.kind in "fc":
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(g, e)


@pytest.fixture(params=["converter", "rules-only"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test through the version converter, and again with it failing."""
    if request.param == "rules-only":
        monkeypatch.setattr(onnx.version_converter, "convert_version", _broken_converter)
    return request.param


def _broken_converter(*_args: object, **_kwargs: object) -> onnx.ModelProto:
    raise RuntimeError("converter disabled by the test")


def check(
    model: onnx.ModelProto,
    feeds: dict[str, np.ndarray],
    expected: list[np.ndarray],
    *,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    absent: tuple[str, ...] = (),
    present: tuple[str, ...] = (),
    use_ort: bool = True,
    use_ref: bool = True,
    ort_opset: int | None = None,
) -> onnx.ModelProto:
    """Upgrade `model` and check the result against `expected` in both runtimes."""
    original_bytes = model.SerializeToString()
    upgraded, opsets = upgrade_model(model)
    assert model.SerializeToString() == original_bytes, "the input model was modified"
    assert opsets == {o.domain: o.version for o in model.opset_import}
    assert default_opset(upgraded) == LATEST
    onnx.checker.check_model(upgraded, full_check=True)
    op_types = {n.op_type for n in all_nodes(upgraded.graph)}
    for op in absent:
        assert op not in op_types, f"{op} left in the upgraded model"
    for op in present:
        assert op in op_types, f"{op} missing from the upgraded model"
    if use_ref:
        assert_close(run_ref(upgraded, feeds), expected, rtol, atol)
    if use_ort:
        # onnxruntime lags onnx: run the same model upgraded to the newest opset it
        # accepts (or to `ort_opset` when it lacks a kernel for the newest op version).
        target = ort_opset or min(LATEST, ort_max_opset())
        at_ort, _ = upgrade_model(model, target_opset=target)
        assert default_opset(at_ort) == target
        assert_close(run_ort(at_ort, feeds), expected, rtol, atol)
    return upgraded


def rand(*shape: int, dtype: type = np.float32) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


# --------------------------------------------------------------------------
# attributes that became inputs
# --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
def test_pad_2(path: str, dtype: type, mode: str) -> None:
    elem = oh.np_dtype_to_tensor_dtype(np.dtype(dtype))
    pads = [0, 0, 1, 2, 0, 0, 2, 1]
    node = oh.make_node("Pad", ["x"], ["y"], pads=pads, mode=mode, value=1.5)
    m = make_model([node], [vi("x", elem, [1, 2, 3, 4])], [vi("y", elem)], 2)
    x = rand(1, 2, 3, 4, dtype=dtype)
    width = ((0, 0), (0, 0), (1, 2), (2, 1))
    expected = np.pad(
        x, width, mode=mode, **({"constant_values": 1.5} if mode == "constant" else {})
    )
    up = check(m, {"x": x}, [expected])
    pad = next(n for n in up.graph.node if n.op_type == "Pad")
    assert not [a for a in pad.attribute if a.name in ("pads", "value")]


def test_pad_1_paddings(path: str) -> None:
    node = oh.make_node("Pad", ["x"], ["y"], paddings=[1, 0, 0, 2], value=-1.0)
    m = make_model([node], [vi("x", TP.FLOAT, [2, 3])], [vi("y", TP.FLOAT, [3, 5])], 1)
    x = rand(2, 3)
    check(m, {"x": x}, [np.pad(x, ((1, 0), (0, 2)), constant_values=-1.0)])


@pytest.mark.parametrize(
    ("starts", "ends", "axes"),
    [([1, 0, 2], [3, 1000, -1], None), ([1, 2], [1000, -1], [0, 2]), ([2], [2**31 - 1], [-1])],
)
def test_slice_1(path: str, starts: list[int], ends: list[int], axes: list[int] | None) -> None:
    x = rand(4, 5, 6)
    attrs = {"starts": starts, "ends": ends} | ({"axes": axes} if axes else {})
    node = oh.make_node("Slice", ["x"], ["y"], **attrs)
    m = make_model([node], [vi("x", TP.FLOAT, [4, 5, 6])], [vi("y")], 1)
    index = [slice(None)] * 3
    for ax, s, e in zip(axes or range(3), starts, ends, strict=True):
        index[ax] = slice(s, e)
    check(m, {"x": x}, [x[tuple(index)]])


REDUCE_NP = {
    "ReduceSum": np.sum,
    "ReduceMean": np.mean,
    "ReduceMax": np.max,
    "ReduceMin": np.min,
    "ReduceProd": np.prod,
    "ReduceL1": lambda x, axis, keepdims: np.sum(np.abs(x), axis=axis, keepdims=keepdims),
    "ReduceL2": lambda x, axis, keepdims: np.sqrt(np.sum(x * x, axis=axis, keepdims=keepdims)),
    "ReduceSumSquare": lambda x, axis, keepdims: np.sum(x * x, axis=axis, keepdims=keepdims),
    "ReduceLogSumExp": lambda x, axis, keepdims: np.log(
        np.sum(np.exp(x), axis=axis, keepdims=keepdims)
    ),
    "ReduceLogSum": lambda x, axis, keepdims: np.log(np.sum(x, axis=axis, keepdims=keepdims)),
}


@pytest.mark.parametrize(
    ("op", "opset"),
    # (ReduceSum-13 already takes axes as an input)
    [(op, v) for op in sorted(REDUCE_NP) for v in (1, 11, 13) if (op, v) != ("ReduceSum", 13)],
)
@pytest.mark.parametrize(("axes", "keepdims"), [([1, -1], 0), ([0], 1), (None, 1)])
def test_reduce_axes(path: str, op: str, opset: int, axes: list[int] | None, keepdims: int) -> None:
    x = np.abs(rand(2, 3, 4)) + 0.5
    attrs = {"keepdims": keepdims} | ({"axes": axes} if axes else {})
    m = make_model(
        [oh.make_node(op, ["x"], ["y"], **attrs)], [vi("x", TP.FLOAT, [2, 3, 4])], [vi("y")], opset
    )
    expected = REDUCE_NP[op](x, axis=tuple(axes) if axes else None, keepdims=bool(keepdims))
    up = check(m, {"x": x}, [np.asarray(expected, np.float32)], rtol=1e-4)
    node = next(n for n in up.graph.node if n.op_type == op)
    assert not [a for a in node.attribute if a.name == "axes"]
    assert len(node.input) == (2 if axes else 1)


@pytest.mark.parametrize("opset", [1, 11])
def test_squeeze_unsqueeze(path: str, opset: int) -> None:
    nodes = [
        oh.make_node("Squeeze", ["x"], ["s"], axes=[1, 3]),
        oh.make_node("Unsqueeze", ["s"], ["u"], axes=[0, 3]),
        oh.make_node("Squeeze", ["u"], ["y"]),
    ]
    m = make_model(nodes, [vi("x", TP.FLOAT, [2, 1, 3, 1])], [vi("y")], opset)
    x = rand(2, 1, 3, 1)
    up = check(m, {"x": x}, [x.reshape(2, 3)])
    assert all(not n.attribute for n in up.graph.node if n.op_type in ("Squeeze", "Unsqueeze"))


def test_unsqueeze_negative_axis(path: str) -> None:
    m = make_model(
        [oh.make_node("Unsqueeze", ["x"], ["y"], axes=[-1])],
        [vi("x", TP.FLOAT, [2, 3])],
        [vi("y")],
        11,
    )
    x = rand(2, 3)
    check(m, {"x": x}, [x[..., None]])


@pytest.mark.parametrize(
    ("opset", "attrs", "sizes"),
    [
        (2, {"axis": 1, "split": [1, 3]}, [1, 3]),
        (11, {"axis": -1, "split": [2, 2, 2]}, [2, 2, 2]),
        (11, {"axis": 0}, None),
        (13, {"axis": 1}, None),
    ],
)
def test_split(path: str, opset: int, attrs: dict, sizes: list[int] | None) -> None:
    x = rand(4, 4, 6)
    axis = attrs["axis"]
    n_out = len(sizes) if sizes else 2
    outs = [f"y{i}" for i in range(n_out)]
    m = make_model(
        [oh.make_node("Split", ["x"], outs, **attrs)],
        [vi("x", TP.FLOAT, [4, 4, 6])],
        [vi(o) for o in outs],
        opset,
    )
    expected = np.split(x, np.cumsum(sizes)[:-1] if sizes else n_out, axis=axis)
    up = check(m, {"x": x}, expected)
    split = next(n for n in up.graph.node if n.op_type == "Split")
    assert len(split.input) == 2 or any(a.name == "num_outputs" for a in split.attribute)


def test_split_1_sizes_input(path: str) -> None:
    sizes = numpy_helper.from_array(np.array([1, 2], np.int64), "sizes")
    node = oh.make_node("Split", ["x", "sizes"], ["a", "b"], axis=1)
    outputs = [vi("a", TP.FLOAT, [2, 1]), vi("b", TP.FLOAT, [2, 2])]
    m = make_model([node], [vi("x", TP.FLOAT, [2, 3])], outputs, 1, [sizes])
    x = rand(2, 3)
    check(m, {"x": x}, [x[:, :1], x[:, 1:]], use_ort=True)


def test_topk_1(path: str) -> None:
    node = oh.make_node("TopK", ["x"], ["v", "i"], k=2, axis=1)
    m = make_model([node], [vi("x", TP.FLOAT, [3, 5])], [vi("v"), vi("i", TP.INT64)], 1)
    x = rand(3, 5)
    order = np.argsort(-x, axis=1, kind="stable")[:, :2]
    expected = [np.take_along_axis(x, order, axis=1), order]
    assert_close(run_ort(m, {"x": x}), expected)  # the oracle agrees with onnxruntime-1
    check(m, {"x": x}, expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("lo", "hi"), [(-0.5, 0.25), (None, 0.25), (-0.5, None)])
def test_clip_6(path: str, dtype: type, lo: float | None, hi: float | None) -> None:
    elem = oh.np_dtype_to_tensor_dtype(np.dtype(dtype))
    attrs = {k: v for k, v in (("min", lo), ("max", hi)) if v is not None}
    m = make_model(
        [oh.make_node("Clip", ["x"], ["y"], **attrs)], [vi("x", elem, [3, 4])], [vi("y", elem)], 6
    )
    x = rand(3, 4, dtype=dtype)
    check(m, {"x": x}, [np.clip(x, lo, hi)])


def test_reshape_1(path: str) -> None:
    node = oh.make_node("Reshape", ["x"], ["y"], shape=[0, -1], consumed_inputs=[0])
    m = make_model([node], [vi("x", TP.FLOAT, [2, 3, 4])], [vi("y", TP.FLOAT, [2, 12])], 1)
    x = rand(2, 3, 4)
    check(m, {"x": x}, [x.reshape(2, 12)])


@pytest.mark.parametrize("static", [True, False])
def test_tile_1(path: str, static: bool) -> None:
    """Tile-1 repeats the whole tensor `tiles` times along `axis` (np.tile on one axis)."""
    x = rand(2, 3)
    tiles = np.array([3], np.int64)
    axis = np.array([1], np.int64)
    if static:
        inits = [numpy_helper.from_array(tiles, "t"), numpy_helper.from_array(axis, "a")]
        inputs = [vi("x", TP.FLOAT, [2, 3])]
        feeds = {"x": x}
    else:
        inits = []
        inputs = [vi("x", TP.FLOAT, [2, 3]), vi("t", TP.INT64, [1]), vi("a", TP.INT64, [1])]
        feeds = {"x": x, "t": tiles, "a": axis}
    out = vi("y", TP.FLOAT, [2, 9])
    m = make_model([oh.make_node("Tile", ["x", "t", "a"], ["y"])], inputs, [out], 1, inits)
    check(m, feeds, [np.tile(x, (1, 3))])


def test_dft_17(path: str) -> None:
    """DFT-17's axis defaulted to 1 (DFT-20's to -2): the default must be pinned."""
    x = rand(2, 4, 3, 1)
    nodes = [
        oh.make_node("DFT", ["x"], ["y"]),
        oh.make_node("DFT", ["x"], ["z"], axis=2, onesided=1),
    ]
    m = make_model(nodes, [vi("x", TP.FLOAT, [2, 4, 3, 1])], [vi("y"), vi("z")], 17)
    full = np.fft.fft(x[..., 0], axis=1)
    half = np.fft.rfft(x[..., 0], axis=2)
    expected = [np.stack([full.real, full.imag], -1), np.stack([half.real, half.imag], -1)]
    assert_close(run_ort(m, {"x": x}), expected, rtol=1e-4, atol=1e-5)
    check(m, {"x": x}, expected, rtol=1e-4, atol=1e-5)


# --------------------------------------------------------------------------
# Upsample / Resize: sampling conventions changed, not just the signature
# --------------------------------------------------------------------------


def _scales_model(
    op: str, opset: int, scales: list[float], mode: str, dynamic: bool = False
) -> tuple:
    x = rand(1, 2, 5, 7)
    out_shape = [int(np.floor(d * s)) for d, s in zip(x.shape, scales, strict=True)]
    s = np.array(scales, np.float32)
    inputs = [vi("x", TP.FLOAT, list(x.shape))]
    feeds = {"x": x}
    inits = []
    if dynamic:
        inputs.append(vi("s", TP.FLOAT, [4]))
        feeds["s"] = s
    else:
        inits.append(numpy_helper.from_array(s, "s"))
    node = oh.make_node(op, ["x", "s"], ["y"], mode=mode)
    return make_model([node], inputs, [vi("y", TP.FLOAT, out_shape)], opset, inits), feeds


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize(
    "scales",
    [[1, 1, 2, 3], [1, 1, 0.6, 0.5], [1, 1, 1.7, 0.35], [1, 1, 2.5, 1.5]],
    ids=["up", "down", "mixed", "fractional-up"],
)
@pytest.mark.parametrize("dynamic", [False, True], ids=["const-scales", "input-scales"])
def test_resize_10(path: str, mode: str, scales: list[float], dynamic: bool) -> None:
    """Resize-10 is what onnxruntime implements for it: asymmetric sampling, nearest
    flooring when upsampling and taking the ceiling when downsampling."""
    m, feeds = _scales_model("Resize", 10, scales, mode, dynamic)
    expected = run_ort(m, feeds)
    check(m, feeds, expected, absent=("Upsample",))


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("scales", [[1, 1, 2, 3], [1, 1, 2.5, 1.5]], ids=["int", "fractional"])
@pytest.mark.parametrize("dynamic", [False, True], ids=["const-scales", "input-scales"])
def test_upsample_9(path: str, mode: str, scales: list[float], dynamic: bool) -> None:
    m, feeds = _scales_model("Upsample", 9, scales, mode, dynamic)
    check(m, feeds, run_ort(m, feeds), absent=("Upsample",), present=("Resize",))


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_upsample_7(path: str, mode: str) -> None:
    x = rand(1, 2, 3, 4)
    node = oh.make_node("Upsample", ["x"], ["y"], mode=mode, scales=[1.0, 1.0, 2.0, 1.5])
    m = make_model([node], [vi("x", TP.FLOAT, [1, 2, 3, 4])], [vi("y", TP.FLOAT, [1, 2, 6, 6])], 7)
    check(m, {"x": x}, run_ort(m, {"x": x}), absent=("Upsample",))


@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
def test_upsample_1(path: str, mode: str) -> None:
    """Upsample-1 (height/width scales, 'bilinear') means Upsample-7 with scales [1, 1, h, w]."""
    x = rand(1, 2, 3, 4)
    old = oh.make_node("Upsample", ["x"], ["y"], mode=mode, height_scale=2.0, width_scale=3.0)
    out = [vi("y", TP.FLOAT, [1, 2, 6, 12])]
    m = make_model([old], [vi("x", TP.FLOAT, [1, 2, 3, 4])], out, 1)
    spec_twin = oh.make_node(
        "Upsample", ["x"], ["y"], mode=mode.replace("bi", ""), scales=[1.0, 1.0, 2.0, 3.0]
    )
    twin = make_model([spec_twin], [vi("x", TP.FLOAT, [1, 2, 3, 4])], out, 7)
    check(m, {"x": x}, run_ort(twin, {"x": x}), absent=("Upsample",))


def test_upsample_left_at_opset_10(path: str) -> None:
    """A deprecated Upsample in an opset-10 model stays valid for the converter; we replace it."""
    m, feeds = _scales_model("Upsample", 9, [1, 1, 2, 2], "nearest")
    expected = run_ort(m, feeds)
    m.opset_import[0].version = 10
    upgraded, _ = upgrade_model(m)
    assert "Upsample" not in {n.op_type for n in upgraded.graph.node}
    assert_close(run_ref(upgraded, feeds), expected)


# --------------------------------------------------------------------------
# Dropout / BatchNormalization: training flags went away
# --------------------------------------------------------------------------


def test_dropout_7_mask_used(path: str) -> None:
    """A read mask keeps its old float type. Its values in inference were never
    specified (onnxruntime-7 returns zeros, the reference ones), so only Y is compared."""
    node = oh.make_node("Dropout", ["x"], ["y", "mask"], ratio=0.3)
    outs = [vi("y", TP.FLOAT, [2, 3]), vi("mask", TP.FLOAT, [2, 3])]
    m = make_model([node], [vi("x", TP.FLOAT, [2, 3])], outs, 7)
    x = rand(2, 3)
    expected = run_ort(m, {"x": x})[:1]
    np.testing.assert_array_equal(expected[0], x)
    up = check(m, {"x": x}, expected)
    mask_type = next(o for o in up.graph.output if o.name == "mask").type.tensor_type.elem_type
    assert mask_type == TP.FLOAT
    assert run_ref(up, {"x": x})[1].dtype == np.float32


@pytest.mark.parametrize(
    ("opset", "attrs"),
    [(1, {"is_test": 1, "consumed_inputs": [0]}), (6, {"is_test": 0}), (10, {"ratio": 0.2})],
)
def test_dropout_inference(path: str, opset: int, attrs: dict) -> None:
    nodes = [
        oh.make_node("Dropout", ["x"], ["d", "unused_mask"], **attrs),
        oh.make_node("Relu", ["d"], ["y"]),
    ]
    m = make_model(nodes, [vi("x", TP.FLOAT, [2, 3])], [vi("y", TP.FLOAT, [2, 3])], opset)
    x = rand(2, 3)
    up = check(m, {"x": x}, [np.maximum(x, 0)])
    dropout = next(n for n in up.graph.node if n.op_type == "Dropout")
    if opset < 10:  # the float mask became bool; an unread one is simply dropped
        assert list(dropout.output) == ["d"]
    assert not [a for a in dropout.attribute if a.name in ("is_test", "ratio", "consumed_inputs")]


def _bn_inputs(c: int, shape: tuple[int, ...]) -> tuple[list, dict]:
    stats = {
        "scale": rand(*shape) + 1.5,
        "b": rand(*shape),
        "mean": rand(*shape),
        "var": np.abs(rand(*shape)) + 0.5,
    }
    return [numpy_helper.from_array(v, k) for k, v in stats.items()], stats


@pytest.mark.parametrize(
    ("opset", "attrs"),
    [
        (1, {"consumed_inputs": [0, 0, 0, 1, 1], "is_test": 1}),
        (6, {"is_test": 1, "epsilon": 1e-3}),
        (7, {"spatial": 1}),
        (9, {"momentum": 0.8}),
    ],
)
def test_batchnorm_inference(path: str, opset: int, attrs: dict) -> None:
    inits, st = _bn_inputs(3, (3,))
    node = oh.make_node("BatchNormalization", ["x", "scale", "b", "mean", "var"], ["y"], **attrs)
    m = make_model(
        [node], [vi("x", TP.FLOAT, [2, 3, 4, 5])], [vi("y", TP.FLOAT, [2, 3, 4, 5])], opset, inits
    )
    x = rand(2, 3, 4, 5)
    eps = attrs.get("epsilon", 1e-5)
    c = (slice(None), None, None)
    expected = (x - st["mean"][c]) / np.sqrt(st["var"][c] + eps) * st["scale"][c] + st["b"][c]
    up = check(m, {"x": x}, [expected], rtol=1e-4, atol=1e-5)
    bn = next(n for n in up.graph.node if n.op_type == "BatchNormalization")
    assert {a.name for a in bn.attribute} <= {"epsilon", "momentum"}


def test_batchnorm_7_not_spatial(path: str) -> None:
    """spatial=0 normalizes each (C, H, W) element with its own statistics."""
    inits, st = _bn_inputs(3, (3, 4, 5))
    node = oh.make_node("BatchNormalization", ["x", "scale", "b", "mean", "var"], ["y"], spatial=0)
    m = make_model(
        [node], [vi("x", TP.FLOAT, [2, 3, 4, 5])], [vi("y", TP.FLOAT, [2, 3, 4, 5])], 7, inits
    )
    x = rand(2, 3, 4, 5)
    expected = (x - st["mean"]) / np.sqrt(st["var"] + 1e-5) * st["scale"] + st["b"]
    check(
        m, {"x": x}, [expected], rtol=1e-4, atol=1e-5, absent=("BatchNormalization",), use_ort=True
    )


def test_batchnorm_9_training_outputs(path: str) -> None:
    """Extra outputs meant training mode; version 14 says so with training_mode=1."""
    inits, _ = _bn_inputs(3, (3,))
    node = oh.make_node("BatchNormalization", ["x", "scale", "b", "mean", "var"], ["y", "rm", "rv"])
    outs = [vi("y", TP.FLOAT, [2, 3, 4]), vi("rm", TP.FLOAT, [3]), vi("rv", TP.FLOAT, [3])]
    m = make_model([node], [vi("x", TP.FLOAT, [2, 3, 4])], outs, 9, inits)
    upgraded, _ = upgrade_model(m)
    onnx.checker.check_model(upgraded, full_check=True)
    bn = next(n for n in upgraded.graph.node if n.op_type == "BatchNormalization")
    assert oh.get_attribute_value(next(a for a in bn.attribute if a.name == "training_mode")) == 1


def test_batchnorm_9_unread_training_outputs_keep_training_mode(path: str) -> None:
    """Declared outputs decide BN-9's mode even when nothing reads them."""
    from onnx.reference import ReferenceEvaluator

    inits, _ = _bn_inputs(3, (3,))
    node = oh.make_node(
        "BatchNormalization",
        ["x", "scale", "b", "mean", "var"],
        ["y", "rm", "rv", "sm", "sv"],
        momentum=0.8,
    )
    m = make_model([node], [vi("x", TP.FLOAT, [2, 3, 4])], [vi("y", TP.FLOAT, [2, 3, 4])], 9, inits)
    x = rand(2, 3, 4)
    # Training mode normalizes with the batch's statistics, per channel.
    mean = x.mean(axis=(0, 2), keepdims=True)
    var = x.var(axis=(0, 2), keepdims=True)
    scale = numpy_helper.to_array(next(t for t in inits if t.name == "scale")).reshape(1, 3, 1)
    bias = numpy_helper.to_array(next(t for t in inits if t.name == "b")).reshape(1, 3, 1)
    expected = (x - mean) / np.sqrt(var + 1e-5) * scale + bias
    upgraded, _ = upgrade_model(m)
    bn = next(n for n in upgraded.graph.node if n.op_type == "BatchNormalization")
    assert oh.get_attribute_value(next(a for a in bn.attribute if a.name == "training_mode")) == 1
    got = ReferenceEvaluator(upgraded).run(None, {"x": x})[0]
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


# --------------------------------------------------------------------------
# renamed ops and attribute values
# --------------------------------------------------------------------------


@pytest.mark.parametrize("opset", [9, 11])
def test_scatter(path: str, opset: int) -> None:
    """Scatter became ScatterElements in 11; an opset-11 Scatter is still valid there
    (deprecated), so the converter leaves it behind."""
    data = np.zeros((3, 3), np.float32)
    idx = np.array([[1, 0, 2], [0, 2, 1]], np.int64)
    upd = rand(2, 3)
    node = oh.make_node("Scatter", ["data", "idx", "upd"], ["y"], axis=0)
    inputs = [
        vi("data", TP.FLOAT, [3, 3]),
        vi("idx", TP.INT64, [2, 3]),
        vi("upd", TP.FLOAT, [2, 3]),
    ]
    m = make_model([node], inputs, [vi("y", TP.FLOAT, [3, 3])], opset)
    expected = data.copy()
    np.put_along_axis(expected, idx, upd, axis=0)
    check(
        m,
        {"data": data, "idx": idx, "upd": upd},
        [expected],
        absent=("Scatter",),
        present=("ScatterElements",),
    )


def test_cast_1_string_type(path: str) -> None:
    m = make_model(
        [oh.make_node("Cast", ["x"], ["y"], to="INT32")],
        [vi("x", TP.FLOAT, [4])],
        [vi("y", TP.INT32, [4])],
        1,
    )
    x = np.array([1.7, -2.2, 3.0, 0.4], np.float32)
    up = check(m, {"x": x}, [x.astype(np.int32)])
    assert oh.get_attribute_value(up.graph.node[0].attribute[0]) == TP.INT32


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "nearest"])
def test_gridsample_16(path: str, mode: str) -> None:
    x = rand(1, 2, 4, 5)
    grid = np.clip(rand(1, 3, 3, 2), -1, 1)
    node = oh.make_node("GridSample", ["x", "grid"], ["y"], mode=mode, align_corners=1)
    inputs = [vi("x", TP.FLOAT, [1, 2, 4, 5]), vi("grid", TP.FLOAT, [1, 3, 3, 2])]
    m = make_model([node], inputs, [vi("y", TP.FLOAT, [1, 2, 3, 3])], 16)
    feeds = {"x": x, "grid": grid}
    up = check(m, feeds, run_ort(m, feeds), rtol=1e-4, atol=1e-5)
    assert oh.get_attribute_value(
        next(a for a in up.graph.node[0].attribute if a.name == "mode")
    ).decode() in ("linear", "cubic", "nearest")


@pytest.mark.parametrize("static", [True, False], ids=["initializer-scale", "input-scale"])
def test_groupnorm_18(path: str, static: bool) -> None:
    """GroupNormalization-18 took one scale/bias per group; 21 takes one per channel."""
    x = rand(2, 6, 3, 2)
    groups = 3
    scale, bias = rand(groups) + 1.0, rand(groups)
    node = oh.make_node(
        "GroupNormalization", ["x", "scale", "bias"], ["y"], num_groups=groups, epsilon=1e-5
    )
    inputs = [vi("x", TP.FLOAT, [2, 6, 3, 2])]
    feeds = {"x": x}
    inits = []
    if static:
        inits = [numpy_helper.from_array(scale, "scale"), numpy_helper.from_array(bias, "bias")]
    else:
        inputs += [vi("scale", TP.FLOAT, [groups]), vi("bias", TP.FLOAT, [groups])]
        feeds |= {"scale": scale, "bias": bias}
    m = make_model([node], inputs, [vi("y", TP.FLOAT, [2, 6, 3, 2])], 18, inits)
    g = x.reshape(2, groups, -1)
    normed = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)).reshape(
        x.shape
    )
    per_channel = (slice(None), None, None)
    expected = normed * np.repeat(scale, 2)[per_channel] + np.repeat(bias, 2)[per_channel]
    check(m, feeds, [expected], rtol=1e-4, atol=1e-4)


# --------------------------------------------------------------------------
# Softmax family: coerced to 2-D before opset 13
# --------------------------------------------------------------------------


def test_softmax_11_negative_axis(path: str) -> None:
    """Negative axes arrived in opset 11; -1 needs no reshaping."""
    x = rand(2, 3, 4)
    node = oh.make_node("LogSoftmax", ["x"], ["y"], axis=-1)
    m = make_model([node], [vi("x", TP.FLOAT, [2, 3, 4])], [vi("y", TP.FLOAT, [2, 3, 4])], 11)
    up = check(m, {"x": x}, [_np_softmax_family("LogSoftmax", x, 2)], rtol=1e-5)
    assert [n.op_type for n in up.graph.node] == ["LogSoftmax"]


def _np_softmax_family(op: str, x: np.ndarray, axis: int) -> np.ndarray:
    """The pre-13 spec: flatten to (prod(shape[:axis]), prod(shape[axis:])), normalize rows."""
    rows = x.reshape(int(np.prod(x.shape[:axis])), -1)
    if op == "Hardmax":
        out = np.zeros_like(rows)
        out[np.arange(rows.shape[0]), rows.argmax(1)] = 1
    else:
        e = np.exp(rows - rows.max(1, keepdims=True))
        out = e / e.sum(1, keepdims=True)
        if op == "LogSoftmax":
            out = np.log(out)
    return out.reshape(x.shape)


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax", "Hardmax"])
@pytest.mark.parametrize(
    ("shape", "axis"),
    [
        ((2, 3, 4), 1),
        ((2, 3, 4, 5), 1),
        ((2, 3, 4, 5), 2),
        ((2, 3, 4), None),
        ((2, 3, 4), 2),
    ],
)
@pytest.mark.parametrize("opset", [1, 11])
def test_softmax_family(path: str, op: str, shape: tuple, axis: int | None, opset: int) -> None:
    x = rand(*shape)
    attrs = {} if axis is None else {"axis": axis}
    m = make_model(
        [oh.make_node(op, ["x"], ["y"], **attrs)],
        [vi("x", TP.FLOAT, list(shape))],
        [vi("y", TP.FLOAT, list(shape))],
        opset,
    )
    expected = _np_softmax_family(op, x, (1 if axis is None else axis) % len(shape))
    assert_close(run_ort(m, {"x": x}), [expected], rtol=1e-5, atol=1e-6)
    check(m, {"x": x}, [expected], rtol=1e-5, atol=1e-6)


# --------------------------------------------------------------------------
# legacy broadcasting (opset < 7)
# --------------------------------------------------------------------------

BINARY_NP = {
    "Add": np.add,
    "Sub": np.subtract,
    "Mul": np.multiply,
    "Div": np.divide,
    "Pow": np.power,
    "Equal": np.equal,
    "Greater": np.greater,
    "Less": np.less,
    "And": np.logical_and,
    "Or": np.logical_or,
    "Xor": np.logical_xor,
}


def _legacy_broadcast_np(op: str, a: np.ndarray, b: np.ndarray, axis: int | None) -> np.ndarray:
    """Old spec: B's shape matches a contiguous span of A's starting at `axis`
    (or A's trailing dims when axis is absent)."""
    if axis is not None:
        b = b.reshape(b.shape + (1,) * (a.ndim - axis - b.ndim))
    return BINARY_NP[op](a, b)


@pytest.mark.parametrize("op", sorted(BINARY_NP))
@pytest.mark.parametrize(
    ("b_shape", "axis"),
    [((3, 4), 1), ((3,), 1), ((2,), 0), ((5,), None), ((4, 5), None), ((3, 4, 5), 1)],
)
@pytest.mark.parametrize("ranks_known", [True, False])
def test_legacy_broadcast(
    path: str,
    op: str,
    b_shape: tuple,
    axis: int | None,
    ranks_known: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    logical = op in ("And", "Or", "Xor")
    elem, dtype = (TP.BOOL, bool) if logical else (TP.FLOAT, np.float32)
    a = rand(2, 3, 4, 5) > 0 if logical else np.abs(rand(2, 3, 4, 5)) + 0.5
    b = rand(*b_shape) > 0 if logical else np.abs(rand(*b_shape)) + 0.5
    attrs = {"broadcast": 1} | ({} if axis is None else {"axis": axis})
    opset = 6 if op in ("Add", "Sub", "Mul", "Div") else 1
    out_elem = TP.BOOL if op in ("Equal", "Greater", "Less") or logical else TP.FLOAT
    inputs = [vi("a", elem, [2, 3, 4, 5]), vi("b", elem, list(b_shape))]
    feeds = {"a": a.astype(dtype), "b": b.astype(dtype)}
    m = make_model(
        [oh.make_node(op, ["a", "b"], ["y"], **attrs)],
        inputs,
        [vi("y", out_elem, [2, 3, 4, 5])],
        opset,
    )
    if not ranks_known:
        # Type inference is how the rules learn ranks; without it they must fall
        # back to reshaping B at run time.
        monkeypatch.setattr(upgrade_context, "_infer_types", lambda _model: {})
    expected = _legacy_broadcast_np(op, feeds["a"], feeds["b"], axis)
    up = check(m, feeds, [expected], rtol=1e-5)
    node = next(n for n in up.graph.node if n.op_type == op)
    assert not node.attribute
    if not ranks_known and axis is not None and len(b_shape) + axis < 4:
        assert "Reshape" in {n.op_type for n in up.graph.node}


def test_gemm_6_broadcast(path: str) -> None:
    a, b, c = rand(2, 3), rand(3, 4), rand(4)
    node = oh.make_node("Gemm", ["a", "b", "c"], ["y"], broadcast=1, alpha=0.5, beta=2.0)
    inputs = [vi("a", TP.FLOAT, [2, 3]), vi("b", TP.FLOAT, [3, 4]), vi("c", TP.FLOAT, [4])]
    m = make_model([node], inputs, [vi("y", TP.FLOAT, [2, 4])], 6)
    check(m, {"a": a, "b": b, "c": c}, [0.5 * a @ b + 2.0 * c], rtol=1e-5)


@pytest.mark.parametrize("slope_kind", ["initializer", "input", "scalar"])
def test_prelu_6_per_channel(path: str, slope_kind: str) -> None:
    """PRelu-6 applied a 1-D slope per channel (axis 1); PRelu-7 broadcasts from the end."""
    x = rand(2, 3, 4, 5)
    slope = (
        np.array([0.1], np.float32)
        if slope_kind == "scalar"
        else np.array([0.1, 0.2, 0.3], np.float32)
    )
    inputs = [vi("x", TP.FLOAT, [2, 3, 4, 5])]
    feeds = {"x": x}
    inits = []
    if slope_kind == "input":
        inputs.append(vi("slope", TP.FLOAT, [3]))
        feeds["slope"] = slope
    else:
        inits.append(numpy_helper.from_array(slope, "slope"))
    m = make_model(
        [oh.make_node("PRelu", ["x", "slope"], ["y"])],
        inputs,
        [vi("y", TP.FLOAT, [2, 3, 4, 5])],
        6,
        inits,
    )
    per_channel = slope.reshape(-1, 1, 1)
    check(m, feeds, [np.where(x < 0, per_channel * x, x)])


# --------------------------------------------------------------------------
# smaller attribute changes
# --------------------------------------------------------------------------


def test_concat_1_default_axis(path: str) -> None:
    m = make_model(
        [oh.make_node("Concat", ["a", "b"], ["y"])],
        [vi("a", TP.FLOAT, [2, 3]), vi("b", TP.FLOAT, [2, 2])],
        [vi("y", TP.FLOAT, [2, 5])],
        1,
    )
    a, b = rand(2, 3), rand(2, 2)
    up = check(m, {"a": a, "b": b}, [np.concatenate([a, b], axis=1)])
    assert oh.get_attribute_value(up.graph.node[0].attribute[0]) == 1


def test_global_lp_pool_1(path: str) -> None:
    x = rand(2, 3, 4, 5)
    node = oh.make_node("GlobalLpPool", ["x"], ["y"], p=3.0)
    m = make_model([node], [vi("x", TP.FLOAT, [2, 3, 4, 5])], [vi("y", TP.FLOAT, [2, 3, 1, 1])], 1)
    expected = np.sum(np.abs(x) ** 3, axis=(2, 3), keepdims=True) ** (1 / 3)
    # The reference lacks GlobalLpPool, onnxruntime GlobalLpPool-22: check at opset 21.
    check(m, {"x": x}, [expected], rtol=1e-4, use_ref=False, ort_opset=21)


def test_lp_pool_1(path: str) -> None:
    x = rand(1, 2, 4, 4)
    node = oh.make_node("LpPool", ["x"], ["y"], p=2.0, kernel_shape=[2, 2], strides=[2, 2])
    m = make_model([node], [vi("x", TP.FLOAT, [1, 2, 4, 4])], [vi("y", TP.FLOAT, [1, 2, 2, 2])], 1)
    blocks = x.reshape(1, 2, 2, 2, 2, 2).transpose(0, 1, 2, 4, 3, 5)
    check(m, {"x": x}, [np.sqrt(np.sum(blocks**2, axis=(4, 5)))], rtol=1e-4)


def test_selu_1_old_defaults(path: str) -> None:
    x = rand(3, 4)
    m = make_model(
        [oh.make_node("Selu", ["x"], ["y"], consumed_inputs=[0])],
        [vi("x", TP.FLOAT, [3, 4])],
        [vi("y", TP.FLOAT, [3, 4])],
        1,
    )
    alpha, gamma = 1.6732, 1.0507  # Selu-1's documented defaults
    check(m, {"x": x}, [gamma * np.where(x > 0, x, alpha * (np.exp(x) - 1))], rtol=1e-6)


def test_roialign_10(path: str) -> None:
    x = rand(1, 2, 6, 6)
    rois = np.array([[0.5, 0.5, 4.2, 3.7], [1, 1, 5, 5]], np.float32)
    idx = np.array([0, 0], np.int64)
    node = oh.make_node(
        "RoiAlign", ["x", "rois", "idx"], ["y"], output_height=2, output_width=2, sampling_ratio=2
    )
    inputs = [
        vi("x", TP.FLOAT, [1, 2, 6, 6]),
        vi("rois", TP.FLOAT, [2, 4]),
        vi("idx", TP.INT64, [2]),
    ]
    m = make_model([node], inputs, [vi("y", TP.FLOAT, [2, 2, 2, 2])], 10)
    feeds = {"x": x, "rois": rois, "idx": idx}
    # onnxruntime has RoiAlign-16 but not 22: check it at opset 21.
    check(m, feeds, run_ort(m, feeds), rtol=1e-4, atol=1e-5, ort_opset=21)


def test_reduce_log_sum_int_input(path: str) -> None:
    """ReduceLogSum-28 dropped integer inputs; the old integer result must survive."""
    x = np.array([[1, 2, 3], [4, 5, 60]], np.int32)
    node = oh.make_node("ReduceLogSum", ["x", "axes"], ["y"], keepdims=0)
    axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
    m = make_model([node], [vi("x", TP.INT32, [2, 3])], [vi("y", TP.INT32, [2])], 18, [axes])
    expected = run_ort(m, {"x": x})  # onnxruntime's ReduceLogSum-18, on the original
    np.testing.assert_array_equal(expected[0], np.log(x.sum(1)).astype(np.int32))
    up = check(m, {"x": x}, expected, present=("Cast",))
    assert up.graph.node[0].op_type == "Cast"


@pytest.mark.parametrize("direction", [None, "foward", "reverse"])
def test_gru_1(path: str, direction: str | None) -> None:
    """GRU-1 spelled its default direction 'foward'; compared with the same GRU at opset 7."""
    seq, batch, inp, hidden = 3, 2, 4, 5
    x = rand(seq, batch, inp)
    w, r = rand(1, 3 * hidden, inp), rand(1, 3 * hidden, hidden)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(r, "r")]
    attrs = {"hidden_size": hidden} | ({"direction": direction} if direction else {})
    outs = [vi("y", TP.FLOAT, [seq, 1, batch, hidden]), vi("yh", TP.FLOAT, [1, batch, hidden])]
    m = make_model(
        [oh.make_node("GRU", ["x", "w", "r"], ["y", "yh"], **attrs)],
        [vi("x", TP.FLOAT, [seq, batch, inp])],
        outs,
        1,
        inits,
    )
    twin_attrs = dict(attrs)
    if direction == "foward":
        twin_attrs["direction"] = "forward"
    twin = make_model(
        [oh.make_node("GRU", ["x", "w", "r"], ["y", "yh"], **twin_attrs)],
        [vi("x", TP.FLOAT, [seq, batch, inp])],
        outs,
        7,
        inits,
    )
    check(m, {"x": x}, run_ort(twin, {"x": x}), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("op", ["RNN", "LSTM"])
def test_rnn_output_sequence(path: str, op: str) -> None:
    seq, batch, inp, hidden = 3, 2, 4, 5
    gates = {"RNN": 1, "LSTM": 4}[op]
    x = rand(seq, batch, inp)
    inits = [
        numpy_helper.from_array(rand(1, gates * hidden, inp), "w"),
        numpy_helper.from_array(rand(1, gates * hidden, hidden), "r"),
    ]
    outs = [vi("y", TP.FLOAT, [seq, 1, batch, hidden])]
    node = oh.make_node(op, ["x", "w", "r"], ["y"], hidden_size=hidden, output_sequence=1)
    m = make_model([node], [vi("x", TP.FLOAT, [seq, batch, inp])], outs, 1, inits)
    twin = make_model(
        [oh.make_node(op, ["x", "w", "r"], ["y"], hidden_size=hidden)],
        [vi("x", TP.FLOAT, [seq, batch, inp])],
        outs,
        7,
        inits,
    )
    up = check(m, {"x": x}, run_ort(twin, {"x": x}), rtol=1e-4, atol=1e-5)
    assert not [a for a in up.graph.node[0].attribute if a.name == "output_sequence"]


@pytest.mark.parametrize("directions", [None, [1]])
def test_scan_8(path: str, directions: list[int] | None) -> None:
    """Scan-8 had a batch axis on everything; it must not turn into the scan axis."""
    batch, seq = 2, 3
    body = oh.make_graph(
        [
            oh.make_node("Add", ["s", "xt"], ["s_out"]),
            oh.make_node("Mul", ["s_out", "two"], ["yt"]),
        ],
        "body",
        [vi("s", TP.FLOAT, [2]), vi("xt", TP.FLOAT, [2])],
        [vi("s_out", TP.FLOAT, [2]), vi("yt", TP.FLOAT, [2])],
        [numpy_helper.from_array(np.array(2.0, np.float32), "two")],
    )
    attrs = {"body": body, "num_scan_inputs": 1} | (
        {"directions": directions} if directions else {}
    )
    node = oh.make_node("Scan", ["", "s0", "x"], ["s_final", "ys"], **attrs)
    inputs = [vi("s0", TP.FLOAT, [batch, 2]), vi("x", TP.FLOAT, [batch, seq, 2])]
    outs = [vi("s_final", TP.FLOAT, [batch, 2]), vi("ys", TP.FLOAT, [batch, seq, 2])]
    m = make_model([node], inputs, outs, 8)
    feeds = {"s0": rand(batch, 2), "x": rand(batch, seq, 2)}
    xs = feeds["x"][:, ::-1] if directions else feeds["x"]
    running = feeds["s0"][:, None, :] + np.cumsum(xs, axis=1)
    expected = [running[:, -1], 2 * running]
    assert_close(run_ort(m, feeds), expected, rtol=1e-5)
    check(m, feeds, expected, rtol=1e-5, use_ref=not directions)  # no reverse scan in the reference


# --------------------------------------------------------------------------
# ai.onnx.ml and removed experimental ops
# --------------------------------------------------------------------------


@pytest.mark.parametrize("direction", ["to_int", "to_string"])
def test_label_encoder_1(path: str, direction: str) -> None:
    classes = ["cat", "dog", "emu"]
    if direction == "to_int":
        node = oh.make_node(
            "LabelEncoder",
            ["x"],
            ["y"],
            domain="ai.onnx.ml",
            classes_strings=classes,
            default_int64=-7,
        )
        x = np.array(["dog", "emu", "yak", "cat"], dtype=object)
        io = ([vi("x", TP.STRING, [4])], [vi("y", TP.INT64, [4])])
        expected = [np.array([1, 2, -7, 0], np.int64)]
    else:
        node = oh.make_node(
            "LabelEncoder",
            ["x"],
            ["y"],
            domain="ai.onnx.ml",
            classes_strings=classes,
            default_string="?",
        )
        x = np.array([2, 0, 5], np.int64)
        io = ([vi("x", TP.INT64, [3])], [vi("y", TP.STRING, [3])])
        expected = [np.array(["emu", "cat", "?"], dtype=object)]
    m = make_model([node], *io, 9, ml_opset=1)
    assert_close(run_ort(m, {"x": x}), expected)  # the oracle agrees with onnxruntime
    upgraded, _ = upgrade_model(m)
    assert {o.domain: o.version for o in upgraded.opset_import}["ai.onnx.ml"] == LATEST_ML
    onnx.checker.check_model(upgraded, full_check=True)
    assert_close(run_ref(upgraded, {"x": x}), expected)
    assert_close(
        run_ort(for_ort(upgrade_model(m, target_opset=ort_max_opset())[0]), {"x": x}), expected
    )


EXPERIMENTAL = [
    (
        "ImageScaler",
        {"scale": 0.5, "bias": [1.0, -2.0]},
        lambda x: 0.5 * x + np.array([1.0, -2.0], np.float32)[:, None, None],
    ),
    ("Scale", {"scale": 3.0}, lambda x: 3.0 * x),
    ("Affine", {"alpha": 2.0, "beta": -1.0}, lambda x: 2.0 * x - 1.0),
    ("ScaledTanh", {"alpha": 2.0, "beta": 0.5}, lambda x: 2.0 * np.tanh(0.5 * x)),
    ("ParametricSoftplus", {"alpha": 2.0, "beta": 0.5}, lambda x: 2.0 * np.log1p(np.exp(0.5 * x))),
    ("ThresholdedRelu", {"alpha": 0.3}, lambda x: np.where(x > 0.3, x, 0)),
    ("Crop", {"border": [1, 0, 1, 1]}, lambda x: x[:, :, 0:-1, 1:-1]),
    ("Crop", {"border": [1, 1, 0, 0], "scale": [2, 2]}, lambda x: x[:, :, 1:3, 1:3]),
]


@pytest.mark.parametrize(
    ("op", "attrs", "fn"), EXPERIMENTAL, ids=[f"{e[0]}-{i}" for i, e in enumerate(EXPERIMENTAL)]
)
def test_experimental_ops(path: str, op: str, attrs: dict, fn) -> None:
    """Experimental ops onnx removed long ago (no schema left), written from their old docs."""
    x = rand(1, 2, 4, 5)
    expected = fn(x).astype(np.float32)
    m = make_model(
        [oh.make_node(op, ["x"], ["y"], **attrs)],
        [vi("x", TP.FLOAT, [1, 2, 4, 5])],
        [vi("y", TP.FLOAT, list(expected.shape))],
        7,
    )
    check(m, {"x": x}, [expected], rtol=1e-5, absent=(op,) if op != "ThresholdedRelu" else ())


def test_dynamic_slice(path: str) -> None:
    x = rand(4, 5)
    starts, ends = np.array([1, 0], np.int64), np.array([3, -1], np.int64)
    inputs = [vi("x", TP.FLOAT, [4, 5]), vi("s", TP.INT64, [2]), vi("e", TP.INT64, [2])]
    m = make_model(
        [oh.make_node("DynamicSlice", ["x", "s", "e"], ["y"])],
        inputs,
        [vi("y", TP.FLOAT, [2, 4])],
        9,
    )
    check(m, {"x": x, "s": starts, "e": ends}, [x[1:3, 0:-1]], absent=("DynamicSlice",))


# --------------------------------------------------------------------------
# nested graphs and local functions
# --------------------------------------------------------------------------


def test_nested_if_and_loop(path: str) -> None:
    """Subgraph bodies are upgraded too, including ones nested two deep."""
    then_g = oh.make_graph(
        [oh.make_node("Pad", ["x"], ["t"], pads=[1, 1], value=2.0)],
        "then",
        [],
        [vi("t", TP.FLOAT, [6])],
    )
    else_g = oh.make_graph(
        [
            oh.make_node("Slice", ["x"], ["e"], starts=[1], ends=[3]),
            oh.make_node("Pad", ["e"], ["e2"], pads=[2, 2]),
        ],
        "else",
        [],
        [vi("e2", TP.FLOAT, [6])],
    )
    loop_body = oh.make_graph(
        [
            oh.make_node("If", ["c"], ["branch"], then_branch=then_g, else_branch=else_g),
            oh.make_node("Add", ["acc", "branch"], ["acc_out"]),
            oh.make_node("Identity", ["cond_in"], ["cond_out"]),
        ],
        "loop_body",
        [vi("i", TP.INT64, []), vi("cond_in", TP.BOOL, []), vi("acc", TP.FLOAT, [6])],
        [vi("cond_out", TP.BOOL, []), vi("acc_out", TP.FLOAT, [6])],
    )
    # (the reference evaluator's Loop does not run with an omitted condition input)
    nodes = [oh.make_node("Loop", ["n", "go", "acc0"], ["acc_final"], body=loop_body)]
    inputs = [
        vi("x", TP.FLOAT, [4]),
        vi("c", TP.BOOL, []),
        vi("n", TP.INT64, []),
        vi("go", TP.BOOL, []),
        vi("acc0", TP.FLOAT, [6]),
    ]
    m = make_model(nodes, inputs, [vi("acc_final", TP.FLOAT, [6])], 9)
    x = rand(4)
    for c in (True, False):
        feeds = {
            "x": x,
            "c": np.array(c),
            "n": np.array(3, np.int64),
            "go": np.array(True),
            "acc0": np.zeros(6, np.float32),
        }
        branch = np.pad(x, 1, constant_values=2.0) if c else np.pad(x[1:3], 2)
        up = check(m, feeds, [3 * branch])
    inner = [n for n in all_nodes(up.graph) if n.op_type in ("Pad", "Slice")]
    assert len(inner) == 3 and all(len(n.input) >= 2 for n in inner)


def test_local_function_body(path: str) -> None:
    body = [
        oh.make_node("Pad", ["a"], ["p"], pads=[1, 1], value=-1.0),
        oh.make_node("Reshape", ["p"], ["b"], shape=[2, 3]),
    ]
    fn = oh.make_function("local", "PadReshape", ["a"], ["b"], body, [oh.make_opsetid("", 4)])
    call = oh.make_node("PadReshape", ["x"], ["y"], domain="local")
    g = oh.make_graph([call], "g", [vi("x", TP.FLOAT, [4])], [vi("y", TP.FLOAT, [2, 3])])
    imports = [oh.make_opsetid("", 4), oh.make_opsetid("local", 1)]
    m = oh.make_model(g, opset_imports=imports, functions=[fn], ir_version=8)
    x = rand(4)
    upgraded, _ = upgrade_model(m)
    onnx.checker.check_model(upgraded, full_check=True)
    f = upgraded.functions[0]
    assert {o.domain: o.version for o in f.opset_import}[""] == LATEST
    assert all(not n.attribute for n in f.node if n.op_type in ("Pad", "Reshape"))
    assert_close(run_ref(upgraded, {"x": x}), [np.pad(x, 1, constant_values=-1.0).reshape(2, 3)])


# --------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------


@pytest.mark.parametrize("opset", [13, LATEST])
def test_unknown_op_is_named(opset: int) -> None:
    nodes = [oh.make_node("Relu", ["x"], ["r"]), oh.make_node("Foo", ["r"], ["y"], name="n1")]
    m = make_model(nodes, [vi("x", TP.FLOAT, [2])], [vi("y", TP.FLOAT, [2])], opset)
    with pytest.raises(RungError) as err:
        upgrade_model(m)
    assert str(err.value) == (
        f"unknown op 'Foo' in domain 'ai.onnx' (opset {opset}) at node 'n1'; "
        "it is not an ONNX operator — is the domain wrong?"
    )


def test_unknown_op_unnamed_node_uses_index() -> None:
    nodes = [oh.make_node("Relu", ["x"], ["r"]), oh.make_node("Frobnicate", ["r"], ["y"])]
    m = make_model(nodes, [vi("x", TP.FLOAT, [2])], [vi("y", TP.FLOAT, [2])], 9)
    with pytest.raises(RungError, match=r"node #1 \(Frobnicate\)"):
        upgrade_model(m)


def test_unknown_ml_op() -> None:
    node = oh.make_node("Frobnicate", ["x"], ["y"], domain="ai.onnx.ml", name="m")
    m = make_model([node], [vi("x", TP.FLOAT, [2])], [vi("y", TP.FLOAT, [2])], 13, ml_opset=3)
    with pytest.raises(RungError, match="unknown op 'Frobnicate' in domain 'ai.onnx.ml' .*ONNX-ML"):
        upgrade_model(m)


def test_other_domains_untouched() -> None:
    node = oh.make_node("Whatever", ["x"], ["y"], domain="com.example")
    g = oh.make_graph(
        [node, oh.make_node("Pad", ["y"], ["z"], pads=[1, 1])],
        "g",
        [vi("x", TP.FLOAT, [2])],
        [vi("z", TP.FLOAT, [4])],
    )
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 9), oh.make_opsetid("com.example", 3)])
    upgraded, opsets = upgrade_model(m)
    assert opsets == {"": 9, "com.example": 3}
    assert {o.domain: o.version for o in upgraded.opset_import} == {"": LATEST, "com.example": 3}
    assert upgraded.graph.node[0] == node


def test_op_newer_than_model_opset() -> None:
    m = make_model(
        [oh.make_node("Resize", ["x", "s"], ["y"], name="r")],
        [vi("x", TP.FLOAT, [2]), vi("s", TP.FLOAT, [1])],
        [vi("y", TP.FLOAT, [2])],
        9,
    )
    with pytest.raises(
        RungError,
        match=r"'Resize' at node 'r' does not exist in ai.onnx opset 9 \(it was added in opset 10\)",
    ):
        upgrade_model(m)


def test_removed_experimental_op_without_rule() -> None:
    node = oh.make_node("ConstantFill", ["x"], ["y"], name="cf")
    m = make_model([node], [vi("x", TP.INT64, [2])], [vi("y", TP.FLOAT, [2])], 7)
    with pytest.raises(RungError, match="'ConstantFill' at node 'cf' .*experimental ONNX op"):
        upgrade_model(m)


def test_semantic_change_without_equivalent_is_refused() -> None:
    node = oh.make_node("GlobalLpPool", ["x"], ["y"], p=2.5, name="pool")
    m = make_model([node], [vi("x", TP.FLOAT, [1, 2, 3, 3])], [vi("y", TP.FLOAT, [1, 2, 1, 1])], 1)
    with pytest.raises(
        RungError, match=r"GlobalLpPool \(version 1\) at node 'pool' to opset \d+: p=2.5"
    ):
        upgrade_model(m)


def test_scan_8_sequence_lens_refused() -> None:
    body = oh.make_graph(
        [oh.make_node("Identity", ["s"], ["s_out"])],
        "b",
        [vi("s", TP.FLOAT, [1])],
        [vi("s_out", TP.FLOAT, [1])],
    )
    node = oh.make_node(
        "Scan", ["lens", "s0"], ["s_final"], body=body, num_scan_inputs=0, name="scan"
    )
    m = make_model(
        [node],
        [vi("lens", TP.INT32, [1]), vi("s0", TP.FLOAT, [1, 1])],
        [vi("s_final", TP.FLOAT, [1, 1])],
        8,
    )
    with pytest.raises(RungError, match="node 'scan'.*sequence_lens"):
        upgrade_model(m)


def test_removed_ml_op_without_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """An op gone from ai.onnx.ml 5 that no rule rewrites is refused, not guessed at
    (TreeEnsembleClassifier, with its rule taken away)."""
    monkeypatch.delitem(RULES, ("ai.onnx.ml", "TreeEnsembleClassifier", 3))
    node = oh.make_node(
        "TreeEnsembleClassifier", ["x"], ["label", "scores"], domain="ai.onnx.ml", name="trees",
        nodes_treeids=[0], nodes_nodeids=[0], nodes_modes=["LEAF"], nodes_featureids=[0],
        nodes_values=[0.0], nodes_truenodeids=[0], nodes_falsenodeids=[0],
        class_treeids=[0], class_nodeids=[0], class_ids=[0], class_weights=[1.0],
        classlabels_int64s=[0, 1],
    )  # fmt: skip
    outs = [vi("label", TP.INT64, [1]), vi("scores", TP.FLOAT, [1, 2])]
    m = make_model([node], [vi("x", TP.FLOAT, [1, 2])], outs, 13, ml_opset=3)
    with pytest.raises(RungError, match="TreeEnsembleClassifier .*node 'trees'.*removed"):
        upgrade_model(m)
    upgraded, _ = upgrade_model(m, target_ml_opset=4)  # still there at 4
    assert upgraded.graph.node[0].op_type == "TreeEnsembleClassifier"


def _regressor(aggregate: str, n_targets: int, base: bool, post: str, as_tensor: bool, multi: bool):
    """Two trees (one of them a single leaf) over 3 features, every branch mode used."""
    nodes = {
        "nodes_treeids": [0, 0, 0, 0, 0, 0, 0, 1],
        "nodes_nodeids": [0, 1, 2, 3, 4, 5, 6, 0],
        "nodes_modes": [
            "BRANCH_LEQ",
            "BRANCH_GT",
            "BRANCH_NEQ",
            "LEAF",
            "LEAF",
            "LEAF",
            "LEAF",
            "LEAF",
        ],
        "nodes_featureids": [0, 1, 2, 0, 0, 0, 0, 0],
        "nodes_truenodeids": [1, 3, 5, 0, 0, 0, 0, 0],
        "nodes_falsenodeids": [2, 4, 6, 0, 0, 0, 0, 0],
        "nodes_missing_value_tracks_true": [1, 0, 0, 0, 0, 0, 0, 0],
    }
    values = [0.125, -0.25, 0.75, 0, 0, 0, 0, 0]  # exact in float32: *_as_tensor twins agree
    leaves = [(0, 3), (0, 4), (0, 5), (0, 6), (1, 0)]
    targets = {"target_treeids": [], "target_nodeids": [], "target_ids": []}
    w = []
    for k, (t, n) in enumerate(leaves):
        for target in range(n_targets) if multi else [k % n_targets]:
            targets["target_treeids"].append(t)
            targets["target_nodeids"].append(n)
            targets["target_ids"].append(target)
            w.append(0.5 + k - 0.25 * target)
    attrs = (
        nodes
        | targets
        | {"n_targets": n_targets, "aggregate_function": aggregate, "post_transform": post}
    )
    if as_tensor:
        attrs |= {
            "nodes_values_as_tensor": numpy_helper.from_array(np.array(values, np.float64)),
            "target_weights_as_tensor": numpy_helper.from_array(np.array(w, np.float64)),
        }
    else:
        attrs |= {"nodes_values": values, "target_weights": w}
    if base:
        attrs["base_values"] = [0.5 * (i + 1) for i in range(n_targets)]
    node = oh.make_node("TreeEnsembleRegressor", ["x"], ["y"], domain="ai.onnx.ml", **attrs)
    x = vi("x", TP.DOUBLE if as_tensor else TP.FLOAT, [6, 3])
    return make_model([node], [x], [vi("y", TP.FLOAT, [6, n_targets])], 13, ml_opset=3)


@pytest.mark.parametrize(
    ("aggregate", "n_targets", "base", "post", "as_tensor", "multi"),
    [
        ("SUM", 1, False, "NONE", False, False),
        ("SUM", 2, True, "NONE", False, False),
        ("AVERAGE", 2, True, "NONE", True, False),
        ("MIN", 1, True, "NONE", False, False),
        ("MAX", 1, False, "NONE", True, False),
        ("SUM", 3, True, "NONE", False, True),
        ("AVERAGE", 2, False, "NONE", False, True),
        ("SUM", 2, True, "LOGISTIC", False, True),
        ("AVERAGE", 3, False, "SOFTMAX", False, True),
    ],
)
def test_tree_ensemble_regressor(
    path: str, aggregate: str, n_targets: int, base: bool, post: str, as_tensor: bool, multi: bool
) -> None:
    """TreeEnsembleRegressor (ai.onnx.ml 3) -> TreeEnsemble (5).

    Oracle: the reference evaluator on the original model; it implements no post
    transform, so those cases use onnxruntime's legacy kernel instead. (That kernel
    skips base values for targets no tree voted for, against the spec; the
    post-transform cases have every leaf vote for every target, so it agrees.)
    """
    m = _regressor(aggregate, n_targets, base, post, as_tensor, multi)
    x = rand(6, 3, dtype=np.float64 if as_tensor else np.float32)
    x[0, 0] = np.nan  # a missing value: the root sends it to its true branch
    # Neither runtime runs the *_as_tensor (double) form of the old op; its twin
    # with float lists holds the same (exactly representable) numbers.
    twin = _regressor(aggregate, n_targets, base, post, False, multi) if as_tensor else m
    twin.graph.input[0].type.tensor_type.elem_type = m.graph.input[0].type.tensor_type.elem_type
    expected = run_ref(twin, {"x": x}) if post == "NONE" else run_ort(twin, {"x": x})
    upgraded, _ = upgrade_model(m)
    onnx.checker.check_model(upgraded, full_check=True)
    assert "TreeEnsembleRegressor" not in {n.op_type for n in upgraded.graph.node}
    at_ort, _ = upgrade_model(m, target_opset=ort_max_opset())  # Cast-28 is too new for it
    assert_close(run_ort(at_ort, {"x": x}), expected, rtol=1e-5, atol=1e-6)
    if post == "NONE":  # the reference's TreeEnsemble ignores post_transform
        assert_close(run_ref(upgraded, {"x": x}), expected, rtol=1e-5, atol=1e-6)


def test_tree_ensemble_regressor_ambiguous_max() -> None:
    m = _regressor("MAX", 2, False, "NONE", False, False)
    with pytest.raises(RungError, match="MAX over 2 targets is ambiguous"):
        upgrade_model(m)


@pytest.mark.parametrize(
    ("opset", "kwargs", "message"),
    [
        (LATEST, {"target_opset": 20}, "rung does not downgrade"),
        (13, {"target_opset": LATEST + 1}, "outside 1"),
    ],
)
def test_bad_targets(opset: int, kwargs: dict, message: str) -> None:
    m = make_model(
        [oh.make_node("Relu", ["x"], ["y"])],
        [vi("x", TP.FLOAT, [2])],
        [vi("y", TP.FLOAT, [2])],
        opset,
    )
    with pytest.raises(RungError, match=message):
        upgrade_model(m, **kwargs)


def test_model_newer_than_onnx() -> None:
    m = make_model(
        [oh.make_node("Relu", ["x"], ["y"])], [vi("x", TP.FLOAT, [2])], [vi("y", TP.FLOAT, [2])], 13
    )
    m.opset_import[0].version = LATEST + 1
    with pytest.raises(RungError, match="upgrade the onnx package"):
        upgrade_model(m)


# --------------------------------------------------------------------------
# behaviour of the transform as a whole
# --------------------------------------------------------------------------


def test_latest_model_returned_as_is() -> None:
    m = make_model(
        [oh.make_node("Relu", ["x"], ["y"])],
        [vi("x", TP.FLOAT, [2])],
        [vi("y", TP.FLOAT, [2])],
        LATEST,
    )
    upgraded, opsets = upgrade_model(m)
    assert upgraded is m
    assert opsets == {"": LATEST}


def test_latest_model_is_fast(monkeypatch: pytest.MonkeyPatch) -> None:
    """A model at the target never reaches the converter and costs next to nothing."""
    light = _light_models()[1]  # densenet121: ~1700 nodes
    m = onnx.load(light)
    m.opset_import[0].version = LATEST
    for node in m.graph.node:  # make it a valid opset-28 model: Unsqueeze takes axes as input
        if node.op_type == "Unsqueeze":
            del node.attribute[:]
    monkeypatch.setattr(
        onnx.version_converter, "convert_version", lambda *a: pytest.fail("converter called")
    )
    upgrade_model(m)
    start = time.perf_counter()
    upgraded, _ = upgrade_model(m)
    assert time.perf_counter() - start < 0.05  # ~3 ms measured; slack for loaded machines
    assert upgraded is m


def test_new_names_do_not_clash(path: str) -> None:
    """Generated initializer names avoid names already in use (here: the obvious one)."""
    nodes = [
        oh.make_node("Pad", ["x"], ["y"], pads=[1, 1], value=3.0),
        oh.make_node("Add", ["y", "y_pads"], ["z"]),
    ]
    inputs = [vi("x", TP.FLOAT, [2]), vi("y_pads", TP.FLOAT, [4])]
    m = make_model(nodes, inputs, [vi("z", TP.FLOAT, [4])], 9)
    x, other = rand(2), rand(4)
    check(m, {"x": x, "y_pads": other}, [np.pad(x, 1, constant_values=3.0) + other])


def test_converter_output_with_clashing_names_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """The converter names new values `_v_N` without checking; if that breaks SSA we
    must not use its output."""
    real = onnx.version_converter.convert_version

    def clashing(model: onnx.ModelProto, target: int) -> onnx.ModelProto:
        out = real(model, target)
        out.graph.node[-1].output[0] = out.graph.node[0].output[0]
        return out

    monkeypatch.setattr(onnx.version_converter, "convert_version", clashing)
    nodes = [
        oh.make_node("Reshape", ["x"], ["r"], shape=[3, 2]),
        oh.make_node("Relu", ["r"], ["y"]),
    ]
    m = make_model(nodes, [vi("x", TP.FLOAT, [6])], [vi("y", TP.FLOAT, [3, 2])], 4)
    x = rand(6)
    upgraded, _ = upgrade_model(m)
    onnx.checker.check_model(upgraded, full_check=True)
    assert_close(run_ref(upgraded, {"x": x}), [np.maximum(x, 0).reshape(3, 2)])


def test_large_initializers_bypass_converter_and_survive(path: str) -> None:
    w = rand(64, 64)
    w_init = numpy_helper.from_array(w, "w")
    nodes = [
        oh.make_node("Gemm", ["x", "w", "b"], ["g"], broadcast=1),
        oh.make_node("Softmax", ["g"], ["y"]),
    ]
    inits = [w_init, numpy_helper.from_array(rand(64), "b")]
    m = make_model(nodes, [vi("x", TP.FLOAT, [2, 64])], [vi("y", TP.FLOAT, [2, 64])], 6, inits)
    x = rand(2, 64)
    z = x @ w + numpy_helper.to_array(inits[1])
    e = np.exp(z - z.max(1, keepdims=True))
    up = check(m, {"x": x}, [e / e.sum(1, keepdims=True)], rtol=1e-4, atol=1e-6)
    assert [i.name for i in up.graph.input] == ["x"]
    assert next(t for t in up.graph.initializer if t.name == "w") == w_init


def test_ir_version_follows_opset(path: str) -> None:
    m = make_model(
        [oh.make_node("Relu", ["x"], ["y"])], [vi("x", TP.FLOAT, [2])], [vi("y", TP.FLOAT, [2])], 6
    )
    assert m.ir_version == 3
    upgraded, _ = upgrade_model(m)
    assert upgraded.ir_version >= oh.find_min_ir_version_for([oh.make_opsetid("", LATEST)], True)


def test_every_transition_is_reviewed() -> None:
    """Every version change in onnx's schema history has a rule or is marked compatible,
    and nothing is both."""
    missing, both = [], []
    for schema_domain, ops in schema_histories().items():
        compatible = COMPATIBLE[schema_domain]
        for op, hist in ops.items():
            for v in hist.versions:
                if v == hist.versions[-1] and hist.removed is None:
                    continue
                has_rule = (schema_domain, op, v) in RULES
                is_compatible = v in compatible.get(op, ())
                if has_rule and is_compatible:
                    both.append((op, v))
                elif not has_rule and not is_compatible and v != hist.removed:
                    missing.append((schema_domain, op, v))
        for op, versions in compatible.items():
            assert set(versions) <= set(ops[op].versions), (op, versions)
    assert not both
    assert missing == []


def test_compatible_transitions_keep_the_signature() -> None:
    """A cheap guard on `COMPATIBLE`: no attribute or input a node could use vanishes."""
    by_op: dict = {}
    for s in onnx.defs.get_all_schemas_with_history():
        by_op[(s.domain, s.name, s.since_version)] = s
    for schema_domain, ops in COMPATIBLE.items():
        for op, versions in ops.items():
            hist = schema_histories()[schema_domain][op]
            for v in versions:
                old = by_op[(schema_domain, op, v)]
                new = by_op[(schema_domain, op, hist.after(v, 10**9))]
                assert set(old.attributes) <= set(new.attributes), (op, v)
                assert len(old.inputs) <= len(new.inputs) or op in ("Scan",), (op, v)


def test_converter_facts_still_hold() -> None:
    """Pins what `_CONVERTER_WRONG` relies on, so a fixed onnx shows up here.

    * Hardmax-11 -> 13 is treated as compatible (it is not: 2-D coercion).
    * GroupNormalization-18 -> 21 comes out unchanged (per-group scale kept).
    * Resize-10 -> 11 keeps Resize-11's half_pixel default (wrong for 'linear').
    * Pad-2 -> 11 makes the fill value float32 whatever the data type.
    """
    x = rand(1, 2, 3, 4)

    def convert(m: onnx.ModelProto) -> onnx.ModelProto:
        return onnx.version_converter.convert_version(m, LATEST)

    hm = make_model(
        [oh.make_node("Hardmax", ["x"], ["y"], axis=1)],
        [vi("x", TP.FLOAT, [1, 2, 3, 4])],
        [vi("y", TP.FLOAT, [1, 2, 3, 4])],
        11,
    )
    assert not np.allclose(run_ref(convert(hm), {"x": x})[0], _np_softmax_family("Hardmax", x, 1))

    gn = make_model(
        [oh.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=1)],
        [vi("x", TP.FLOAT, [1, 2, 3, 4])], [vi("y", TP.FLOAT, [1, 2, 3, 4])], 18,
        [numpy_helper.from_array(np.ones(1, np.float32), "s"), numpy_helper.from_array(np.zeros(1, np.float32), "b")],
    )  # fmt: skip
    assert [n.op_type for n in convert(gn).graph.node] == ["GroupNormalization"]
    assert list(convert(gn).graph.initializer[0].dims) == [1]

    rs, feeds = _scales_model("Resize", 10, [1, 1, 2, 3], "linear")
    assert not np.allclose(run_ref(convert(rs), feeds)[0], run_ort(rs, feeds)[0])

    pad = make_model(
        [oh.make_node("Pad", ["x"], ["y"], pads=[1, 1], value=1.0)],
        [vi("x", TP.DOUBLE, [2])],
        [vi("y", TP.DOUBLE, [4])],
        2,
    )
    with pytest.raises(onnx.checker.ValidationError):
        onnx.checker.check_model(convert(pad), full_check=True)


# --------------------------------------------------------------------------
# whole models: onnx's "light" model zoo copies (opset 9)
# --------------------------------------------------------------------------


@functools.cache
def _light_models() -> list[str]:
    return sorted(
        glob.glob(
            os.path.join(os.path.dirname(onnx.__file__), "backend/test/data/light/light_*.onnx")
        )
    )


def test_light_models_present() -> None:
    assert len(_light_models()) == 9


@pytest.mark.parametrize("file", _light_models(), ids=lambda f: os.path.basename(f)[6:-5])
def test_light_model(path: str, file: str, monkeypatch: pytest.MonkeyPatch) -> None:
    model = onnx.load(file)
    results = []
    real = upgrade_mod.try_converter

    def spy(*args: object) -> onnx.ModelProto | None:
        results.append(real(*args))
        return results[-1]

    monkeypatch.setattr(upgrade_mod, "try_converter", spy)
    start = time.perf_counter()
    upgraded, opsets = upgrade_model(model)
    elapsed = time.perf_counter() - start
    # the converter path really used the converter; the other one really did not
    assert [r is not None for r in results] == [path == "converter"]
    assert opsets == {"": 9}
    assert default_opset(upgraded) == LATEST
    onnx.checker.check_model(upgraded, full_check=True)
    assert elapsed < 0.5
    feeds, expected = _light_reference(file)
    assert_close(run_ort(for_ort(upgraded), feeds), expected, rtol=1e-3, atol=1e-4)


@functools.cache
def _light_reference(file: str) -> tuple[dict, list]:
    """A random input and the ORIGINAL model's onnxruntime output (shared by both paths)."""
    model = onnx.load(file)
    initializers = {t.name for t in model.graph.initializer}
    (data,) = [i for i in model.graph.input if i.name not in initializers]
    shape = [d.dim_value for d in data.type.tensor_type.shape.dim]
    feeds = {data.name: np.random.default_rng(1).random(shape, dtype=np.float32)}
    return feeds, run_ort(model, feeds)


# --------------------------------------------------------------------------
# onnx's own node test cases below the latest opset
# --------------------------------------------------------------------------


def _node_cases() -> list:
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = collect_testcases()
    # Cases below the newest default opset, plus the ai.onnx.ml ones below its newest.
    return [
        c
        for c in cases
        if (default_opset(c.model) or LATEST) < LATEST
        or (default_opset(c.model, "ai.onnx.ml") or LATEST_ML) < LATEST_ML
    ]


_NODE_CASES = _node_cases()

try:
    import PIL  # noqa: F401 - only probing: the reference's ImageDecoder needs it

    _HAVE_PILLOW = True
except ImportError:
    _HAVE_PILLOW = False

# Cases the ReferenceEvaluator gets wrong at their ORIGINAL opset too, so their
# upgraded form cannot match either. Strict: if one starts passing, look again.
_NODE_XFAIL: dict[str, str] = {
    **{
        f"test_range_{kind}_expanded": "the reference's Loop stacks scalar scan outputs as "
        "[n, 1] instead of [n], on the original model too"
        for kind in (
            "float_type_positive_delta", "float16_type_positive_delta",
            "bfloat16_type_positive_delta", "int32_type_negative_delta",
        )
    },
    "test_if_opt": "the reference's If returns the optional's tensor with an extra axis, "
    "on the original model too",
}  # fmt: skip
if not _HAVE_PILLOW:
    _NODE_XFAIL |= {
        f"test_image_decoder_decode_{kind}": "the reference's ImageDecoder needs Pillow, "
        "which is not installed"
        for kind in (
            "jpeg_rgb", "jpeg_grayscale", "jpeg_bgr", "jpeg2k_rgb", "bmp_rgb", "png_rgb",
            "tiff_rgb", "webp_rgb", "pnm_rgb",
        )
    }  # fmt: skip
# Random outputs: the expected values are one draw, so only shape and support are compared.
_RANDOM_CASES = frozenset(
    f"test_bernoulli{kind}"
    for kind in ("", "_expanded", "_double", "_double_expanded", "_seed", "_seed_expanded")
)


def _as_numpy(value: object) -> object:
    """Case data holds TensorProto for element types numpy lacks (float8, int4, ...)."""
    return numpy_helper.to_array(value) if isinstance(value, onnx.TensorProto) else value


def _compare_case_outputs(got: list, expected: list, rtol: float, atol: float) -> None:
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        e = _as_numpy(e)
        if isinstance(e, list):
            _compare_case_outputs(g, e, rtol, atol)
            continue
        if e is None:
            assert g is None
            continue
        e, g = np.asarray(e), np.asarray(g)
        assert g.shape == e.shape, (g.shape, e.shape)
        if e.dtype.kind == "V" and "float" in e.dtype.name:  # bfloat16, float8 (ml_dtypes)
            e, g = e.astype(np.float32), g.astype(np.float32)
        if e.dtype.kind in "fc":
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, equal_nan=True)
        else:
            np.testing.assert_array_equal(g, e)


def _hits_a_rule(model: onnx.ModelProto) -> bool:
    """Whether upgrading `model` takes some node through one of our rules (not only
    through transitions that are compatible)."""
    opsets = {canon_domain(o.domain): o.version for o in model.opset_import}
    for node in all_nodes(model.graph):
        domain = canon_domain(node.domain)
        hist = schema_histories().get(domain, {}).get(node.op_type)
        if domain not in opsets or hist is None:
            continue
        version = hist.at(opsets[domain])
        while version is not None:
            if (domain, node.op_type, version) in RULES:
                return True
            version = hist.after(version, LATEST)
    return False


def _case_params() -> list:
    """Every case through the converter; the ones our rules touch also without it."""
    params = []
    for case in _NODE_CASES:
        marks = ()
        if case.name in _NODE_XFAIL:
            marks = pytest.mark.xfail(reason=_NODE_XFAIL[case.name], strict=True)
        params.append(pytest.param(case, "converter", id=f"converter-{case.name}", marks=marks))
        if _hits_a_rule(case.model):
            params.append(
                pytest.param(case, "rules-only", id=f"rules-only-{case.name}", marks=marks)
            )
    return params


def test_node_case_selection() -> None:
    assert len(_NODE_CASES) > 1000
    assert set(_NODE_XFAIL) <= {c.name for c in _NODE_CASES}, set(_NODE_XFAIL) - {
        c.name for c in _NODE_CASES
    }


@pytest.mark.parametrize(("case", "route"), _case_params())
def test_onnx_node_case(case, route: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if route == "rules-only":
        monkeypatch.setattr(onnx.version_converter, "convert_version", _broken_converter)
    upgraded, _ = upgrade_model(case.model)
    assert default_opset(upgraded) in (None, LATEST)
    assert default_opset(upgraded, "ai.onnx.ml") in (None, LATEST_ML)
    onnx.checker.check_model(upgraded)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = ReferenceEvaluator(upgraded)
        for inputs, outputs in case.data_sets:
            feeds = {
                i.name: _as_numpy(v) for i, v in zip(upgraded.graph.input, inputs, strict=False)
            }
            got = ref.run(None, feeds)
            if case.name in _RANDOM_CASES:
                for g, e in zip(got, outputs, strict=True):
                    assert g.shape == e.shape and g.dtype == e.dtype
                    assert set(np.unique(g).tolist()) <= {0, 1}
            else:
                _compare_case_outputs(got, outputs, case.rtol, case.atol)


def test_external_initializers_kept_by_reference(path: str) -> None:
    """Weights stored outside the model stay references: the converter never sees them."""
    w = numpy_helper.from_array(np.zeros((4, 4), np.float32), "w")
    w.ClearField("raw_data")
    w.data_location = onnx.TensorProto.EXTERNAL
    w.external_data.add(key="location", value="weights.bin")
    w.external_data.add(key="length", value="64")
    nodes = [
        oh.make_node("MatMul", ["x", "w"], ["m"]),
        oh.make_node("Reshape", ["m"], ["y"], shape=[16]),
    ]
    m = make_model(nodes, [vi("x", TP.FLOAT, [4, 4])], [vi("y", TP.FLOAT, [16])], 4, [w])
    upgraded, _ = upgrade_model(m)
    assert default_opset(upgraded) == LATEST
    (kept,) = [t for t in upgraded.graph.initializer if t.name == "w"]
    assert kept == w
    assert [i.name for i in upgraded.graph.input] == ["x"]


def test_subgraph_of_foreign_node_upgraded(path: str) -> None:
    """The converter does not enter subgraphs of other domains' nodes; we must."""
    body = oh.make_graph(
        [oh.make_node("Pad", ["a"], ["b"], pads=[1, 1], value=5.0)],
        "body",
        [vi("a", TP.FLOAT, [2])],
        [vi("b", TP.FLOAT, [4])],
    )
    node = oh.make_node("Custom", ["x"], ["y"], domain="com.example", body=body)
    g = oh.make_graph(
        [node, oh.make_node("Reshape", ["y"], ["z"], shape=[4])],
        "g",
        [vi("x", TP.FLOAT, [2])],
        [vi("z", TP.FLOAT, [4])],
    )
    m = oh.make_model(
        g, opset_imports=[oh.make_opsetid("", 4), oh.make_opsetid("com.example", 1)], ir_version=8
    )
    upgraded, _ = upgrade_model(m)
    pad = upgraded.graph.node[0].attribute[0].g.node
    assert [n.op_type for n in pad] == ["Pad"] and not pad[0].attribute and len(pad[0].input) == 3
    inner_inits = {
        t.name: numpy_helper.to_array(t) for t in upgraded.graph.node[0].attribute[0].g.initializer
    }
    assert sorted(
        v.tolist() if v.ndim else float(v) for v in inner_inits.values() if v.dtype == np.int64
    ) == [[1, 1]]
