"""`rung compare` and `rung.compare`: verdicts against independent references, and bisection.

Faults are injected with the plugin `compare_fault_plugin.py` beside this file:
an ONNX → core lowering that adds 0.5 to one Sigmoid node (wrong from level
core down), a core → kernel lowering that does so for another (wrong at kernel
only), and a level whose onnx evaluator does so. Each test checks that compare
names exactly that node, on a model of 120 nodes, in a logarithmic number of
probes. References are onnxruntime and torch eager, never rung itself.
Plugin lowerings and levels are global to the process; every test takes away
what it added.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import compare_fault_plugin as faults
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import rung
from rung.errors import RungError
from rung.lowering.pipelines import Registry
from rung.runtime import levels as rung_levels
from rung.runtime.compare import (
    CompareReport,
    compare,
    compare_values,
    cut_points,
    make_cut,
)
from rung.runtime.session import InferenceSession, load_module
from rung.tools import plugins
from rung.tools.cli import main

PLUGIN = str(Path(faults.__file__).resolve())
BLOCKS = 20
WIDTH = 16


def chain_model(blocks: int = BLOCKS, width: int = WIDTH, seed: int = 0) -> onnx.ModelProto:
    """Blocks of MatMul, Add, Relu, Sigmoid, Mul, LayerNormalization (6 named nodes each)."""
    rng = np.random.default_rng(seed)
    nodes, weights = [], []
    x = "x"
    for i in range(blocks):
        p = f"blk{i}"
        w = rng.standard_normal((width, width)) / np.sqrt(width)
        weights += [
            numpy_helper.from_array(w.astype(np.float32), f"{p}_w"),
            numpy_helper.from_array(
                (0.1 * rng.standard_normal(width)).astype(np.float32), f"{p}_b"
            ),
            numpy_helper.from_array(
                (1 + 0.1 * rng.standard_normal(width)).astype(np.float32), f"{p}_g"
            ),
            numpy_helper.from_array(
                (0.1 * rng.standard_normal(width)).astype(np.float32), f"{p}_beta"
            ),
        ]
        nodes += [
            helper.make_node("MatMul", [x, f"{p}_w"], [f"{p}_mm"], name=f"{p}_MatMul"),
            helper.make_node("Add", [f"{p}_mm", f"{p}_b"], [f"{p}_add"], name=f"{p}_Add"),
            helper.make_node("Relu", [f"{p}_add"], [f"{p}_relu"], name=f"{p}_Relu"),
            helper.make_node("Sigmoid", [f"{p}_add"], [f"{p}_sig"], name=f"{p}_Sigmoid"),
            helper.make_node("Mul", [f"{p}_relu", f"{p}_sig"], [f"{p}_mul"], name=f"{p}_Mul"),
            helper.make_node(
                "LayerNormalization",
                [f"{p}_mul", f"{p}_g", f"{p}_beta"],
                [f"{p}_ln"],
                name=f"{p}_LayerNorm",
                axis=-1,
            ),
        ]
        x = f"{p}_ln"
    graph = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, width])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [2, width])],
        weights,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    onnx.checker.check_model(model)
    return model


@pytest.fixture(scope="module")
def model() -> onnx.ModelProto:
    return chain_model()


@pytest.fixture
def model_file(tmp_path: Path, model: onnx.ModelProto) -> Path:
    path = tmp_path / "chain.onnx"
    onnx.save(model, str(path))
    return path


@pytest.fixture
def clean_plugins() -> Iterator[None]:
    """Lowerings and levels a test adds through plugins are taken away afterwards."""
    before = dict(plugins._PLUGIN_LOWERINGS)  # pyright: ignore[reportPrivateUsage]
    yield
    for _, op in [k for k in plugins._PLUGIN_LOWERINGS if k not in before]:  # pyright: ignore[reportPrivateUsage]
        plugins.remove_lowering(op)
    rung_levels.unregister_level(faults.FAULTY_LEVEL)


def _registry() -> plugins.PluginRegistry:
    return plugins.PluginRegistry(Registry(), "plugin 'test_compare'", "test_compare")


def _probe_bound(n: int) -> int:
    return math.ceil(math.log2(n)) + 2


# ---- comparing values ---------------------------------------------------------------------------


def test_float_tolerance_scales_with_the_output() -> None:
    ref = np.array([1000.0, 0.0], dtype=np.float32)
    assert compare_values("y", ref, ref + np.float32(0.05)).ok  # atol 1e-4 x 1000
    bad = compare_values("y", ref, ref + np.float32([0.0, 0.2]))
    assert not bad.ok and bad.verdict == "MISMATCH"
    assert bad.max_abs == pytest.approx(0.2, rel=1e-3)
    assert "1/2 values differ" in bad.reason


def test_nan_in_the_same_place_matches() -> None:
    ref = np.array([np.nan, 1.0, np.inf], dtype=np.float32)
    assert compare_values("y", ref, ref.copy()).ok
    assert not compare_values("y", ref, np.array([0.0, 1.0, np.inf], np.float32)).ok
    assert not compare_values("y", ref, np.array([np.nan, 1.0, -np.inf], np.float32)).ok


def test_integers_bools_and_strings_must_be_equal() -> None:
    assert not compare_values("i", np.array([1, 2]), np.array([1, 3])).ok
    assert not compare_values("b", np.array([True]), np.array([False])).ok
    assert not compare_values("s", np.array(["a"], object), np.array(["b"], object)).ok
    assert compare_values("s", np.array(["a"], object), np.array(["a"])).ok
    dtype = compare_values("i", np.array([1, 2]), np.array([1, 2], np.int32))
    assert not dtype.ok and "dtype int32" in dtype.reason


def test_scalars_compare() -> None:
    assert compare_values("s", np.float32(2.0), np.float32(2.0)).ok
    bad = compare_values("s", np.array(2.0, np.float32), np.array(3.0, np.float32))
    assert not bad.ok and bad.max_abs == 1.0 and bad.shape == ()
    ints = compare_values("i", np.array(4), np.array(6))
    assert not ints.ok and ints.max_abs == 2.0 and ints.max_rel == 0.5


def test_a_shape_difference_is_a_mismatch_with_a_reason() -> None:
    diff = compare_values("y", np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32))
    assert not diff.ok
    assert diff.reason == "shape [3, 2], expected [2, 3]"


def test_relative_error_is_measured_where_the_reference_is_not_tiny() -> None:
    ref = np.array([2.0, 0.0], dtype=np.float32)
    diff = compare_values("y", ref, np.array([2.2, 1e-9], dtype=np.float32))
    assert diff.max_rel == pytest.approx(0.1, rel=1e-3)


# ---- cuts ---------------------------------------------------------------------------------------


def test_a_cut_returns_the_frontier_computed_so_far(model: onnx.ModelProto) -> None:
    import onnxruntime

    module = load_module(model)
    points = cut_points(module)
    assert len(points) == 6 * BLOCKS  # the weights are constants, never cut points
    cut = make_cut(module, 6 * 3 + 3)  # after blk3_Sigmoid
    # Still needed: blk3_Relu's result (by blk3_Mul), and the cut op's own result.
    assert cut.names == ["blk3_Relu:0", "blk3_Sigmoid:0"]
    assert cut.own == [1]
    x = np.random.default_rng(1).standard_normal((2, WIDTH)).astype(np.float32)
    got = InferenceSession(cut.module, level="onnx").run(None, {"x": x})
    # The reference: the same values, exposed as outputs of the original model.
    exposed = onnx.ModelProto()
    exposed.CopyFrom(model)
    del exposed.graph.output[:]
    for name in ("blk3_relu", "blk3_sig"):
        exposed.graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    ort = onnxruntime.InferenceSession(exposed.SerializeToString())
    want = ort.run(None, {"x": x})
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    assert len(cut_points(module)) == 6 * BLOCKS  # the model itself is untouched


# ---- whole models -------------------------------------------------------------------------------


def test_without_a_fault_every_level_is_ok(model: onnx.ModelProto) -> None:
    report = compare(model, levels=("onnx", "core", "kernel"))
    assert report.ok, str(report)
    assert report.first_divergence is None
    assert [lv.level for lv in report.levels] == ["onnx", "core", "kernel"]
    text = str(report)
    assert "against onnxruntime" in text
    assert text.count("blk19_ln") == 3 and "MISMATCH" not in text


def test_an_onnx_to_core_fault_is_named_at_core_and_kernel(
    model: onnx.ModelProto, clean_plugins: None
) -> None:
    plugins.load_plugin_file(Registry(), PLUGIN)
    lines: list[str] = []
    report = rung.compare(model, levels=("core", "kernel"), progress=lines.append)
    assert not report.ok
    assert report.culprit_nodes() == {"core": faults.ONNX_FAULT, "kernel": faults.ONNX_FAULT}
    for level in report.levels:
        found = level.divergence
        assert found is not None
        assert found.op == "onnx.Sigmoid"
        assert found.location == f'loc("{faults.ONNX_FAULT}")'
        assert found.probes <= _probe_bound(found.cut_points)
        assert found.outputs[0].max_abs == pytest.approx(0.5, abs=1e-3)
        assert found.input_shapes == [f"blk7_Add:0 [2, {WIDTH}] f32"]
        # Lowering keeps the node's location on the ops it makes, at core and at kernel.
        assert found.lowered_ops is not None and found.lowered_ops > 0
    assert len(lines) == sum(lv.divergence.probes for lv in report.levels)  # type: ignore[union-attr]
    assert "first diverging node: 'blk7_Sigmoid' (onnx.Sigmoid)" in str(report)


def test_a_core_to_kernel_fault_is_named_at_kernel_only(
    model: onnx.ModelProto, clean_plugins: None
) -> None:
    faults.register_kernel_fault(_registry())
    report = compare(model, levels=("core", "kernel"))
    core_result, kernel_result = report.levels
    assert core_result.ok and core_result.divergence is None
    assert not kernel_result.ok
    assert kernel_result.divergence is not None
    assert kernel_result.divergence.node == faults.KERNEL_FAULT
    assert kernel_result.divergence.probes <= _probe_bound(6 * BLOCKS)
    assert report.first_divergence is kernel_result.divergence


def test_a_fault_in_the_onnx_level_evaluator_is_named(
    model: onnx.ModelProto, clean_plugins: None
) -> None:
    rung_levels.load_level_plugin(PLUGIN)
    report = compare(model, levels=(faults.FAULTY_LEVEL,))
    assert report.culprit_nodes() == {faults.FAULTY_LEVEL: faults.ONNX_FAULT}


def test_a_fault_in_the_onnx_level_itself_is_named(
    model: onnx.ModelProto, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rung.runtime import onnx_eval

    original = onnx_eval.OnnxEvaluator.eval_op

    def wrong(self: object, op: object, env: dict) -> list[object]:
        results = original(self, op, env)  # type: ignore[arg-type]
        if faults._located_at(op, "blk13_Mul"):  # type: ignore[arg-type]  # pyright: ignore[reportPrivateUsage]
            wrong = np.array(results[0], copy=True)  # one element off: a uniform change
            wrong.flat[0] += 1  # would vanish in the LayerNormalization that follows
            return [wrong]
        return results

    monkeypatch.setattr(onnx_eval.OnnxEvaluator, "eval_op", wrong)
    report = compare(model, levels=("onnx",))
    assert report.culprit_nodes() == {"onnx": "blk13_Mul"}


def test_probes_stay_logarithmic_on_a_large_model(clean_plugins: None) -> None:
    big = chain_model(blocks=60, width=8)  # 360 nodes
    rung_levels.load_level_plugin(PLUGIN)
    report = compare(big, levels=(faults.FAULTY_LEVEL,))
    found = report.first_divergence
    assert found is not None and found.node == faults.ONNX_FAULT
    assert found.cut_points == 360
    assert found.probes <= _probe_bound(360)  # 11, not 360


def test_a_node_a_level_cannot_run_is_named(model: onnx.ModelProto, clean_plugins: None) -> None:
    from rung.dialects.onnx import generated_ops as onnx_ops
    from rung.lowering.kit import LoweringError

    def refuse_one(b: object, op: onnx_ops.SigmoidOp) -> list[object]:
        if faults._located_at(op, "blk4_Sigmoid"):  # pyright: ignore[reportPrivateUsage]
            raise LoweringError("refused for the test")
        return [b.unary("sigmoid", op.X)]  # type: ignore[attr-defined]

    _registry().add_lowering(onnx_ops.SigmoidOp, refuse_one, replace=True)
    report = compare(model, levels=("core",))
    (level,) = report.levels
    assert not report.ok
    assert "blk4_Sigmoid" in level.error and "refused for the test" in level.error
    assert level.divergence is not None and level.divergence.node == "blk4_Sigmoid"
    assert "the cut after it fails" in level.divergence.note
    assert "level core: FAILED: " in str(report)


def test_bisecting_against_another_level(model: onnx.ModelProto, clean_plugins: None) -> None:
    plugins.load_plugin_file(Registry(), PLUGIN)
    report = compare(model, against="onnx", levels=("core",))
    assert report.culprit_nodes() == {"core": faults.ONNX_FAULT}


def test_no_bisect_reports_the_outputs_only(model: onnx.ModelProto, clean_plugins: None) -> None:
    plugins.load_plugin_file(Registry(), PLUGIN)
    report = compare(model, levels=("core",), bisect=False)
    assert not report.ok and report.first_divergence is None
    assert isinstance(report, CompareReport)


def test_inputs_given_by_name_are_used(model: onnx.ModelProto) -> None:
    x = np.full((2, WIDTH), 3.0, dtype=np.float32)
    report = compare(model, {"x": x}, levels=("core",))
    assert report.ok


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"levels": ("nope",)}, "unknown level 'nope'"),
        ({"against": "nope"}, "unknown reference 'nope': use onnxruntime or torch"),
        ({"inputs": {"y": np.zeros((2, WIDTH), np.float32)}}, "unknown input 'y'"),
        ({"inputs": {}}, "missing input 'x'"),
        ({"rtol": -1.0}, "rtol must be a non-negative number"),
        ({"levels": ()}, "at least one level"),
    ],
)
def test_bad_arguments_are_refused(model: onnx.ModelProto, kwargs: dict, message: str) -> None:
    with pytest.raises(RungError, match=message):
        compare(model, **kwargs)


def test_import_rung_stays_light() -> None:
    code = "import sys, rung; print('rung.runtime.compare' in sys.modules, 'xdsl' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
    from rung.runtime.compare import compare as the_function

    assert rung.compare is the_function


# ---- the command --------------------------------------------------------------------------------


def test_cli_ok_exits_0(model_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(model_file), "--levels", "onnx,core"]) == 0
    out = capsys.readouterr().out
    assert f"compare {model_file} against onnxruntime" in out
    assert "level onnx: ok" in out and "level core: ok" in out
    assert "max abs err" in out and "verdict" in out


def test_cli_names_the_node_and_exits_1(
    model_file: Path, clean_plugins: None, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["compare", str(model_file), "--levels", "core", "--load-plugin", PLUGIN])
    captured = capsys.readouterr()
    assert code == 1
    assert "level core: MISMATCH" in captured.out
    assert "first diverging node: 'blk7_Sigmoid' (onnx.Sigmoid) at loc(\"blk7_Sigmoid\")" in (
        captured.out
    )
    assert "probes over 120 nodes" in captured.out
    assert "probe " not in captured.err  # progress lines only on a terminal


def test_cli_level_plugin(
    model_file: Path, clean_plugins: None, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["compare", str(model_file), "--load-level", PLUGIN, "--levels", faults.FAULTY_LEVEL]
    assert main(argv) == 1
    assert "first diverging node: 'blk7_Sigmoid'" in capsys.readouterr().out


def test_cli_no_bisect(
    model_file: Path, clean_plugins: None, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["compare", str(model_file), "--levels", "core", "--no-bisect", "--load-plugin", PLUGIN]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "MISMATCH" in out and "first diverging node" not in out


def test_cli_inputs_from_files(
    model_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    x = np.random.default_rng(5).standard_normal((2, WIDTH)).astype(np.float32)
    np.savez(tmp_path / "feed.npz", x=x)
    np.save(tmp_path / "x.npy", x)
    assert (
        main(
            ["compare", str(model_file), "--levels", "onnx", "--inputs", str(tmp_path / "feed.npz")]
        )
        == 0
    )
    argv = ["compare", str(model_file), "--levels", "onnx", "--input", f"x={tmp_path / 'x.npy'}"]
    assert main(argv) == 0


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--levels", "nope"], "unknown level 'nope'"),
        (["--against", "nope"], "unknown reference 'nope': use onnxruntime or torch"),
        (["--inputs", "missing.npz"], "no such file 'missing.npz'"),
        (["--inputs", "wrong.npz"], "unknown input 'y' in 'wrong.npz'"),
        (["--inputs", "notnpz.npz"], "cannot read inputs from 'notnpz.npz'"),
        (["--inputs", "wrong.npz", "--random-inputs"], "give the inputs one way"),
        (["--input", "x"], "must look like NAME=FILE.npy"),
        (["--rtol", "-1"], "must be a non-negative number"),
        (["--load-plugin", "nowhere.py"], "cannot load plugin 'nowhere.py': no such file"),
    ],
)
def test_cli_bad_input(
    model_file: Path,
    tmp_cwd: Path,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    message: str,
) -> None:
    np.savez(tmp_cwd / "wrong.npz", y=np.zeros((2, WIDTH), np.float32))
    (tmp_cwd / "notnpz.npz").write_text("not a zip")
    assert main(["compare", str(model_file), *extra]) == 1
    err = capsys.readouterr().err
    assert err.startswith("rung: error: ")
    assert message in err
    assert "Traceback" not in err


def test_cli_missing_model(tmp_cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "absent.onnx"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("rung: error: ") and "absent.onnx" in err


# ---- PyTorch ------------------------------------------------------------------------------------


def _torch_module(seed: int) -> object:
    torch = pytest.importorskip("torch")

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.l1 = torch.nn.Linear(8, 16)
            self.l2 = torch.nn.Linear(16, 4)

        def forward(self, x: object) -> object:
            return torch.softmax(self.l2(torch.sigmoid(self.l1(x))), -1)

    torch.manual_seed(seed)
    return Net().eval()


def _save_pt2(net: object, path: Path) -> None:
    import torch

    program = torch.export.export(net, (torch.randn(2, 8),))  # type: ignore[arg-type]
    torch.export.save(program, str(path))


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_a_pt2_program_against_torch_eager(
    tmp_path: Path, clean_plugins: None, capsys: pytest.CaptureFixture[str]
) -> None:
    net = _torch_module(0)
    _save_pt2(net, tmp_path / "net.pt2")
    assert main(["compare", str(tmp_path / "net.pt2"), "--levels", "core,kernel"]) == 0
    assert "against torch" in capsys.readouterr().out
    faults.register_kernel_fault(_registry(), node="sigmoid")
    report = compare(tmp_path / "net.pt2", levels=("kernel",))
    found = report.first_divergence
    assert found is not None
    assert found.node == "sigmoid" and found.op == "torch.aten.sigmoid"
    assert found.location.startswith('loc("sigmoid"("') and "test_compare.py" in found.location


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_an_onnx_model_against_the_pt2_beside_it(tmp_path: Path, clean_plugins: None) -> None:
    import torch

    net = _torch_module(0)
    torch.onnx.export(
        net, (torch.randn(2, 8),), str(tmp_path / "net.onnx"), dynamo=False, input_names=["x"]
    )  # type: ignore[arg-type]
    _save_pt2(net, tmp_path / "net.pt2")
    report = compare(tmp_path / "net.onnx", against="torch", levels=("kernel",))
    assert report.ok, str(report)
    assert "net.pt2" in report.note
    # The ONNX file renamed so its Sigmoid is the one the plugin gets wrong.
    exported = onnx.load(str(tmp_path / "net.onnx"))
    sigmoid = next(n for n in exported.graph.node if n.op_type == "Sigmoid")
    sigmoid.name = faults.ONNX_FAULT
    onnx.save(exported, str(tmp_path / "net.onnx"))
    plugins.load_plugin_file(Registry(), PLUGIN)
    report = compare(tmp_path / "net.onnx", against="torch", levels=("kernel",))
    assert report.culprit_nodes() == {"kernel": faults.ONNX_FAULT}


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_an_onnx_model_that_differs_from_its_pt2(tmp_path: Path) -> None:
    import torch

    torch.onnx.export(
        _torch_module(0),
        (torch.randn(2, 8),),
        str(tmp_path / "net.onnx"),
        dynamo=False,
        input_names=["x"],
    )  # type: ignore[arg-type]
    _save_pt2(_torch_module(1), tmp_path / "net.pt2")  # other weights
    report = compare(tmp_path / "net.onnx", against="torch", levels=("kernel",))
    assert not report.ok
    assert report.first_divergence is None
    assert "agrees with onnxruntime" in report.levels[0].note


def test_against_torch_needs_a_program(model_file: Path) -> None:
    with pytest.raises(RungError, match="needs a PyTorch program"):
        compare(model_file, against="torch")


def test_cli_html_marks_the_diverging_node(
    model_file: Path, tmp_path: Path, clean_plugins: None, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "compare.html"
    argv = ["compare", str(model_file), "--levels", "core", "--load-plugin", PLUGIN]
    assert main([*argv, "--html", str(page)]) == 1
    text = page.read_text(encoding="utf-8")
    data = json.loads(
        re.search(r'<script type="application/json"[^>]*>(.*?)</script>', text, re.S)[1]
    )
    assert list(data["marks"]) == ["blk7_Sigmoid"]
    assert "level core: first diverging node (onnx.Sigmoid)" in data["marks"]["blk7_Sigmoid"]
    capsys.readouterr()
    assert main([*argv, "--html", str(page)]) == 1  # refused before any work is done
    captured = capsys.readouterr()
    assert "exists; pass --force" in captured.err and "level core" not in captured.out
    assert main([*argv, "--html", str(page), "--force"]) == 1
    assert "blk7_Sigmoid" in page.read_text(encoding="utf-8")
