"""`rung export --level core`: the core level written back as ONNX, run by onnxruntime.

Every check compares onnxruntime on the exported model with an independent
reference: onnxruntime on the original model (the nine light models, small
hand-built models with symbolic dims), or the expected outputs ONNX ships
with its node test cases.
"""

from __future__ import annotations

import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from light_weights import with_random_weights
from onnx import TensorProto, helper, numpy_helper
from onnx_cases import light_models
from xdsl.dialects.builtin import ModuleOp

from rung.dialects import parse_module
from rung.errors import RungError
from rung.importers.onnx import import_model
from rung.lowering.core_to_onnx import core_module_to_model, onnx_module_to_model
from rung.runtime.levels import lower
from rung.tools.cli import main

NODE_CASE_FLOOR = 1567
"""Node cases whose exported model onnxruntime runs with the expected outputs (of about
1,900; most of the rest fail before export, at the core level, or hit types and ops
onnxruntime does not implement: 8-bit floats, 2- and 4-bit integers, bfloat16 kernels)."""


ort.set_default_logger_severity(3)


def _session(model: onnx.ModelProto) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.log_severity_level = 3
    return ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )


def _export(model: onnx.ModelProto) -> onnx.ModelProto:
    return core_module_to_model(lower(import_model(model), "core"))


def _feed(model: onnx.ModelProto, seed: int, batch: int = 1) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    inits = {t.name for t in model.graph.initializer}
    feed = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        dims = [d.dim_value if d.dim_value > 0 else batch for d in vi.type.tensor_type.shape.dim]
        feed[vi.name] = rng.standard_normal(dims).astype(np.float32)
    return feed


# ---- the nine light models ----------------------------------------------------------


@pytest.mark.parametrize("path", light_models(), ids=lambda p: p.stem.removeprefix("light_"))
def test_light_model_exported_at_core_matches_onnxruntime(path: Path) -> None:
    model = with_random_weights(onnx.load(path), seed=0)
    exported = _export(model)
    onnx.checker.check_model(exported)
    feed = _feed(model, seed=1)
    expected = _session(model).run(None, feed)
    got = _session(exported).run(None, feed)
    assert [o.name for o in exported.graph.output] == [o.name for o in model.graph.output]
    assert {i.name for i in exported.graph.input} == set(feed)
    assert exported.graph.initializer, "weights are initializers"
    assert not any(n.op_type == "Constant" for n in exported.graph.node)
    for g, e in zip(got, expected, strict=True):
        assert g.shape == e.shape and g.dtype == e.dtype
        assert float(np.max(e)) < 0.999, "a saturated softmax would check nothing"
        scale = float(np.max(np.abs(e)))
        np.testing.assert_allclose(g, e, rtol=1e-3, atol=1e-4 * scale)


# ---- symbolic dims ----------------------------------------------------------------------


def _cnn_with_symbolic_batch() -> onnx.ModelProto:
    """Conv + BatchNorm (folded at core) + ReLU + AveragePool (count_include_pad=0,
    so core divides by a count tensor) + Flatten + Gemm + Softmax, batch 'N'."""
    rng = np.random.default_rng(0)

    def init(name: str, array: np.ndarray) -> TensorProto:
        return numpy_helper.from_array(array.astype(np.float32), name)

    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("BatchNormalization", ["c", "s", "o", "m", "v"], ["n"]),
        helper.make_node("Relu", ["n"], ["r"]),
        helper.make_node(
            "AveragePool", ["r"], ["p"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]
        ),
        helper.make_node("MaxPool", ["p"], ["q"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1),
        helper.make_node("Flatten", ["q"], ["f"]),
        helper.make_node("Gemm", ["f", "g", "gb"], ["z"], transB=1),
        helper.make_node("Softmax", ["z"], ["y"]),
    ]
    inits = [
        init("w", rng.standard_normal((4, 3, 3, 3)) / 5),
        init("b", rng.standard_normal(4) / 10),
        init("s", rng.uniform(0.5, 1.5, 4)),
        init("o", rng.standard_normal(4) / 10),
        init("m", rng.standard_normal(4) / 10),
        init("v", rng.uniform(0.5, 1.5, 4)),
        init("g", rng.standard_normal((5, 16)) / 4),
        init("gb", rng.standard_normal(5) / 10),
    ]
    graph = helper.make_graph(
        nodes,
        "cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 11, 11])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 5])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_symbolic_batch_keeps_its_dim_param_and_runs_at_any_size() -> None:
    model = _cnn_with_symbolic_batch()
    exported = _export(model)
    dims = exported.graph.input[0].type.tensor_type.shape.dim
    assert dims[0].dim_param == "N" and [d.dim_value for d in dims[1:]] == [3, 11, 11]
    assert exported.graph.output[0].type.tensor_type.shape.dim[0].dim_param == "N"
    assert not any(n.op_type == "BatchNormalization" for n in exported.graph.node)
    # core's sum pool over counts is one AveragePool again, not counting the pads
    (pool,) = [n for n in exported.graph.node if n.op_type == "AveragePool"]
    assert all(a.name != "count_include_pad" or a.i == 0 for a in pool.attribute)
    for batch in (1, 3):
        feed = _feed(model, seed=batch, batch=batch)
        (expected,) = _session(model).run(None, feed)
        (got,) = _session(exported).run(None, feed)
        assert got.shape == (batch, 5)
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-6)


def test_dynamic_shapes_become_shape_ops() -> None:
    """Reshape to a size known only at run time: core computes it with shape_of, slicing
    and arithmetic, which export as Shape and friends."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("ReduceProd", ["s"], ["n"], keepdims=1),
        helper.make_node("Reshape", ["x", "n"], ["flat"]),
        helper.make_node("CumSum", ["flat", "axis"], ["c"], reverse=1),
        helper.make_node("TopK", ["c", "k"], ["v", "i"], largest=0),
    ]
    graph = helper.make_graph(
        nodes,
        "dyn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "T"])],
        [
            helper.make_tensor_value_info("v", TensorProto.FLOAT, [3]),
            helper.make_tensor_value_info("i", TensorProto.INT64, [3]),
        ],
        [
            numpy_helper.from_array(np.array(0, dtype=np.int64), "axis"),
            numpy_helper.from_array(np.array([3], dtype=np.int64), "k"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    exported = _export(model)
    assert any(n.op_type == "Shape" for n in exported.graph.node)
    for dims in ((2, 3), (4, 5)):
        feed = {"x": np.random.default_rng(sum(dims)).standard_normal(dims).astype(np.float32)}
        expected = _session(model).run(None, feed)
        got = _session(exported).run(None, feed)
        for g, e in zip(got, expected, strict=True):
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_a_torch_program_exports_through_core() -> None:
    """A torch.export program with a dynamic batch, checked against torch eager."""
    torch = pytest.importorskip("torch")
    from rung.runtime.session import load_module

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
            self.bn = torch.nn.BatchNorm2d(4)
            self.fc = torch.nn.Linear(4, 5)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = torch.relu(self.bn(self.conv(x)))
            y = torch.nn.functional.adaptive_avg_pool2d(y, 1).flatten(1)
            return torch.softmax(self.fc(y), -1)

    torch.manual_seed(0)
    net = Net().eval()
    with torch.no_grad():
        net.bn.running_mean.uniform_(-0.5, 0.5)
        net.bn.running_var.uniform_(0.5, 1.5)
    batch = torch.export.Dim("batch", min=1, max=64)
    program = torch.export.export(net, (torch.randn(2, 3, 8, 8),), dynamic_shapes={"x": {0: batch}})
    exported = core_module_to_model(lower(load_module(program), "core"))
    session = _session(exported)
    name = exported.graph.input[0].name
    assert exported.graph.input[0].type.tensor_type.shape.dim[0].dim_param
    for n in (1, 3):
        x = torch.randn(n, 3, 8, 8)
        with torch.no_grad():
            expected = net(x).numpy()
        (got,) = session.run(None, {name: x.numpy()})
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-6)


# ---- single core ops against numpy -------------------------------------------------------

SNIPPETS = {
    "atan2": (
        "core.binary atan2(%a, %b) : (tensor<12xf32>, tensor<12xf32>) -> tensor<12xf32>",
        lambda a, b: np.arctan2(a, b),
    ),
    "rsqrt": (
        "core.unary rsqrt(%a) : (tensor<12xf32>) -> tensor<12xf32>",
        lambda a, b: 1 / np.sqrt(np.abs(a) + 1),
    ),
    "mod": (
        "core.binary mod(%a, %b) : (tensor<12xf32>, tensor<12xf32>) -> tensor<12xf32>",
        lambda a, b: np.mod(a, b),
    ),
    "rem": (
        "core.binary rem(%a, %b) : (tensor<12xf32>, tensor<12xf32>) -> tensor<12xf32>",
        lambda a, b: np.fmod(a, b),
    ),
    "reverse_slice": (
        "core.slice(%a) {start = array<i64: 10>, stride = array<i64: -3>}"
        " : (tensor<12xf32>) -> tensor<4xf32>",
        lambda a, b: a[10::-3],
    ),
    "stable_sort": (
        "core.sort(%r) {axis = 0 : i64, descending = 0 : i64}"
        " : (tensor<12xf32>) -> (tensor<12xf32>, tensor<12xi64>)",
        lambda a, b: np.argsort(np.round(a), kind="stable"),
    ),
}


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_single_core_op_matches_numpy(name: str) -> None:
    body, reference = SNIPPETS[name]
    result_type = body.rsplit("-> ", 1)[1]
    if name == "rsqrt":
        body = body.replace("(%a)", "(%p)")
    if name == "stable_sort":
        result_type = "tensor<12xi64>"
    text = f"""
func.func @f(%a: tensor<12xf32>, %b: tensor<12xf32>) -> {result_type} {{
  %m = core.unary abs(%a) : (tensor<12xf32>) -> tensor<12xf32>
  %one = core.constant() {{value = dense<1.0> : tensor<12xf32>}} : () -> tensor<12xf32>
  %p = core.binary add(%m, %one) : (tensor<12xf32>, tensor<12xf32>) -> tensor<12xf32>
  %r = core.unary round(%a) : (tensor<12xf32>) -> tensor<12xf32>
  %y{":2" if name == "stable_sort" else ""} = {body}
  func.return %y{"#1" if name == "stable_sort" else ""} : {result_type}
}}
"""
    exported = core_module_to_model(parse_module(text))
    rng = np.random.default_rng(3)
    a = (rng.standard_normal(12) * 3).astype(np.float32)
    b = (rng.standard_normal(12) * 2).astype(np.float32)
    a[:4] = [0.0, -0.0, 2.0, -2.0]  # atan2's axes and signed zeros
    b[:4] = [0.0, -1.0, 0.0, 0.0]
    if name == "atan2":
        a[4:9] = [0.0, -0.0, np.inf, -np.inf, 1.0]
        b[4:9] = [-0.0, -0.0, -np.inf, np.inf, -np.inf]
    session = _session(exported)
    names = [i.name for i in session.get_inputs()]  # input_0, input_1: no source names
    (got,) = session.run(None, dict(zip(names, (a, b), strict=True)))
    expected = reference(a, b)
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    else:
        np.testing.assert_array_equal(got, expected)


# ---- the ONNX node test cases -------------------------------------------------------------


def _as_expected(got: object, expected: object) -> object:
    """onnxruntime hands 8-bit float outputs back as uint8: read them as the expected type."""
    if (
        isinstance(got, np.ndarray)
        and isinstance(expected, np.ndarray)
        and got.dtype == np.uint8
        and expected.dtype.kind == "V"
        and expected.dtype.itemsize == 1
    ):
        return got.view(expected.dtype)
    return got


def _run_case(case: object) -> tuple[str, str]:
    """(outcome, reason) of one node case exported at core and run by onnxruntime."""
    from rung.runtime.conformance import compare

    model = onnx.ModelProto.FromString(case.model)  # type: ignore[attr-defined]
    try:
        module = lower(import_model(model), "core")
    except Exception as err:  # noqa: BLE001 - the core level's own board counts these
        return "not at core", type(err).__name__
    try:
        exported = core_module_to_model(module)
    except RungError as err:
        return "export refused", err.message.splitlines()[0]
    try:
        session = _session(exported)
    except Exception as err:  # noqa: BLE001
        return "onnxruntime refuses", str(err).splitlines()[0][:160]
    inits = {t.name for t in model.graph.initializer}
    names = [vi.name for vi in model.graph.input if vi.name not in inits]
    known = {i.name for i in session.get_inputs()}
    for inputs, expected in case.data_sets:  # type: ignore[attr-defined]
        feed = {n: v for n, v in zip(names, inputs, strict=False) if n in known}
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                got = session.run(None, feed)
        except Exception as err:  # noqa: BLE001
            return "onnxruntime fails", str(err).splitlines()[0][:160]
        if len(got) != len(expected):
            return "mismatch", f"{len(got)} outputs, expected {len(expected)}"
        for i, (e, g) in enumerate(zip(expected, got, strict=True)):
            verdict = compare(e, _as_expected(g, e), case.rtol, case.atol, f"output {i}")  # type: ignore[attr-defined]
            if verdict is not None:
                return "mismatch", verdict[1]
    return "pass", ""


def test_node_cases_exported_at_core_match_their_expected_outputs() -> None:
    from rung.runtime.conformance import collect_cases

    outcomes = {case.name: _run_case(case) for case in collect_cases()}
    counts = Counter(kind for kind, _ in outcomes.values())
    print(f"\nnode cases exported at core: {dict(counts)}")
    for name, (kind, why) in sorted(outcomes.items()):
        if kind not in ("pass", "not at core"):
            print(f"  {name}: {kind}: {why}")
    # A refusal names a core op: never an internal error, never a model that is not valid.
    for name, (kind, why) in outcomes.items():
        if kind == "export refused":
            assert why.startswith("cannot export 'core."), (name, why)
    assert counts["pass"] >= NODE_CASE_FLOOR


# ---- refusals -------------------------------------------------------------------------------

UNMAPPED = """
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = core.unary lower(%x) : (tensor<4xf32>) -> tensor<4xf32> loc("to_lower")
  func.return %y : tensor<4xf32>
}
"""


def test_an_op_without_mapping_is_refused_naming_it_and_its_node() -> None:
    module = parse_module(
        """
func.func @f(%x: tensor<4xi32>) -> tensor<4xi32> {
  %y = core.binary atan2(%x, %x) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32> loc("at")
  func.return %y : tensor<4xi32>
}
"""
    )
    with pytest.raises(RungError, match=r"cannot export 'core.binary atan2' at node 'at' to ONNX"):
        core_module_to_model(module)


def test_a_foreign_op_is_refused() -> None:
    from xdsl.dialects import arith
    from xdsl.dialects.builtin import IntegerAttr, i32

    module = ModuleOp([arith.ConstantOp(IntegerAttr(1, i32))])
    with pytest.raises(RungError, match="not core-dialect IR"):
        core_module_to_model(module)


# ---- the command line -------------------------------------------------------------------------


def _small_model(path: Path) -> None:
    node = helper.make_node("Relu", ["x"], ["y"])
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def test_cli_exports_and_refuses_to_overwrite(
    tmp_cwd: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _small_model(tmp_cwd / "m.onnx")
    assert main(["export", "m.onnx", "--level", "core", "-o", "out.onnx"]) == 0
    assert "wrote out.onnx" in capsys.readouterr().out
    exported = onnx.load("out.onnx")
    x = np.array([[-1.0, 2.0, -3.0, 4.0]], dtype=np.float32)
    (y,) = _session(exported).run(None, {"x": x})
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    before = Path("out.onnx").read_bytes()
    assert main(["export", "m.onnx", "-o", "out.onnx"]) == 1
    assert "'out.onnx' exists; pass --force" in capsys.readouterr().err
    assert Path("out.onnx").read_bytes() == before
    assert main(["export", "m.onnx", "-o", "out.onnx", "--force", "--level", "onnx"]) == 0
    assert onnx.load("out.onnx").graph.node[0].op_type == "Relu"


def test_cli_refuses_the_kernel_level_and_bad_input(
    tmp_cwd: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _small_model(tmp_cwd / "m.onnx")
    assert main(["export", "m.onnx", "--level", "kernel", "-o", "k.onnx"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("rung: error: --level kernel cannot be exported as ONNX")
    assert "Traceback" not in err
    assert not Path("k.onnx").exists()
    Path("bad.onnx").write_bytes(b"not a model")
    assert main(["export", "bad.onnx", "-o", "b.onnx"]) == 1
    assert capsys.readouterr().err.startswith("rung: error: ")
    assert not Path("b.onnx").exists()
    Path("u.mlir").write_text(UNMAPPED)
    assert main(["export", "u.mlir", "-o", "u.onnx"]) == 1
    err = capsys.readouterr().err
    assert "cannot export 'core.unary lower' at node 'to_lower'" in err
    assert not Path("u.onnx").exists()


def test_onnx_level_round_trip_keeps_the_graph() -> None:
    model = _cnn_with_symbolic_batch()
    exported = onnx_module_to_model(import_model(model))
    assert [n.op_type for n in exported.graph.node] == [n.op_type for n in model.graph.node]
    feed = _feed(model, seed=2, batch=2)
    np.testing.assert_allclose(
        _session(exported).run(None, feed)[0], _session(model).run(None, feed)[0], rtol=1e-6
    )
