"""The conformance harness: comparing outputs, attributing cases, isolating broken levels.

This file doubles as a level plugin: `register_levels` adds deliberately broken
levels, which `rung conformance --load-level <this file>` loads in its workers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from rung.runtime.conformance import Case, compare, main_op, run_case, with_symbolic_dims

THIS_FILE = str(Path(__file__).resolve())


# ---- broken levels (loaded into the workers from this file) -------------------------


def _onnx(module: object, inputs: list[object]) -> list[object]:
    from rung.runtime.onnx_eval import evaluate

    return evaluate(module, inputs)  # type: ignore[arg-type]


def _wrong(module: object, inputs: list[object]) -> list[object]:
    return [o + 1 if isinstance(o, np.ndarray) else o for o in _onnx(module, inputs)]


def _raise(module: object, inputs: list[object]) -> list[object]:
    raise ZeroDivisionError("deliberately broken evaluator\nsecond line")


def _sleep(module: object, inputs: list[object]) -> list[object]:
    time.sleep(600)  # far beyond the 2 s limit: only the timeout ends it
    return []


def _exit(module: object, inputs: list[object]) -> list[object]:
    os._exit(3)


def _unsupported(module: object) -> object:
    from rung.runtime.levels import UnsupportedOpError

    raise UnsupportedOpError("failed to lower 'onnx.Abs' (deliberately)")


def _static_only(module: object) -> object:
    """A lowering that needs static sizes: tells whether a run hid them from it."""
    from xdsl.dialects.builtin import TensorType

    from rung.runtime.levels import UnsupportedOpError

    for op in module.walk():  # type: ignore[attr-defined]
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    if (
                        isinstance(arg.type, TensorType)
                        and min(arg.type.get_shape(), default=0) < 0
                    ):
                        raise UnsupportedOpError(f"dynamic dims in {arg.type} (deliberately)")
    return module


def register_levels(register: Callable[..., object]) -> None:
    register("fake-wrong", lowering=None, evaluator=_wrong)
    register("fake-raise", lowering=None, evaluator=_raise)
    register("fake-sleep", lowering=None, evaluator=_sleep)
    register("fake-exit", lowering=None, evaluator=_exit)
    register("fake-unsupported", lowering=_unsupported, evaluator=_onnx)
    register("fake-static-only", lowering=_static_only, evaluator=_onnx)


def node_cases() -> dict[str, object]:
    # Imported here: the workers load this file as a plugin, without the test folder on sys.path.
    from onnx_cases import node_cases as cases

    return cases()


# ---- comparing outputs -----------------------------------------------------------------


def test_compare_follows_the_onnx_runner() -> None:
    f = np.array([1.0, np.nan, 3.0], np.float32)
    assert compare(f, f.copy(), 1e-3, 1e-7, "y") is None  # NaN equals NaN
    assert compare(f, f + 1e-5, 1e-3, 1e-7, "y") is None  # within rtol
    category, message = compare(f, f + 1, 1e-3, 1e-7, "y")  # type: ignore[misc]
    assert category == "numeric mismatch"
    assert "2 of 3 elements differ; max abs error 1" in message
    assert compare(f, f.astype(np.float64), 1e-3, 1e-7, "y") == (
        "dtype mismatch",
        "y: expected dtype float32, got float64",
    )
    assert compare(f, f[:2], 1e-3, 1e-7, "y") == (
        "shape mismatch",
        "y: expected shape [3], got [2]",
    )
    strings = np.array(["a", "b"], dtype=object)
    assert compare(strings, strings.copy(), 0, 0, "s") is None
    assert compare(strings, np.array(["a", "c"], dtype=object), 0, 0, "s")[0] == "numeric mismatch"  # type: ignore[index]
    seq = [np.zeros(2, np.int64), np.ones(1, np.int64)]
    assert compare(seq, [s.copy() for s in seq], 0, 0, "q") is None
    assert compare(seq, seq[:1], 0, 0, "q")[0] == "shape mismatch"  # type: ignore[index]
    assert compare(seq, seq[0], 0, 0, "q")[0] == "dtype mismatch"  # type: ignore[index]
    # scalars inside sequences (onnx's own runner trips over these)
    assert compare([np.array(1.0)], [np.array(1.0)], 0, 0, "q") is None
    assert compare(None, None, 0, 0, "o") is None
    assert compare(None, np.zeros(1), 0, 0, "o")[0] == "dtype mismatch"  # type: ignore[index]


def test_compare_small_float_types() -> None:
    import ml_dtypes

    a = np.array([1.0, 2.0, 3.0], dtype=ml_dtypes.bfloat16)
    assert compare(a, a.copy(), 1e-7, 0, "b") is None
    b = (a.astype(np.float32) * 1.01).astype(ml_dtypes.bfloat16)  # within two bf16 ULPs
    assert compare(a, b, 1e-7, 0, "b") is None
    assert compare(a, a * 2, 1e-7, 0, "b")[0] == "numeric mismatch"  # type: ignore[index]
    i4 = np.array([1, -2], dtype=ml_dtypes.int4)
    assert compare(i4, np.array([1, -1], dtype=ml_dtypes.int4), 0, 0, "i")[0] == "numeric mismatch"  # type: ignore[index]


@pytest.mark.parametrize(
    ("name", "op"),
    [
        ("test_abs", "Abs"),
        ("test_reduce_log_sum_exp_do_not_keepdims_example_expanded", "ReduceLogSumExp"),
        ("test_softmax_axis_0_expanded", "Softmax"),
        ("test_sce_mean_expanded", "SoftmaxCrossEntropyLoss"),
        ("test_less_equal_expanded", "LessOrEqual"),
        ("test_mvn_expanded", "MeanVarianceNormalization"),
        ("test_basic_conv_with_padding", "Conv"),
        ("test_ai_onnx_ml_label_encoder_string_int", "ai.onnx.ml.LabelEncoder"),
        ("test_adagrad", "ai.onnx.preview.training.Adagrad"),
        ("test_maxpool_2d_default", "MaxPool"),
    ],
)
def test_cases_are_attributed_to_the_op_they_test(name: str, op: str) -> None:
    assert main_op(name, node_cases()[name].model) == op  # type: ignore[attr-defined]


def test_every_case_gets_a_known_op() -> None:
    import onnx.defs

    known = {s.name for s in onnx.defs.get_all_schemas_with_history()}
    for name, case in node_cases().items():
        op = main_op(name, case.model)  # type: ignore[attr-defined]
        assert op.rsplit(".", 1)[-1] in known, (name, op)


def test_a_model_that_does_not_import_is_an_import_error() -> None:
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("NoSuchOp", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    case = Case("test_broken", "NoSuchOp", model.SerializeToString(), [], 1e-3, 1e-7)
    result = run_case(case, "onnx")
    assert result["status"] == "fail" and result["category"] == "import error"
    assert "NoSuchOp" in result["message"]


def test_a_crash_inside_rung_says_where() -> None:
    from rung.runtime.conformance import _crash

    with pytest.raises(AttributeError) as info:
        main_op("test_x", None)
    message = _crash(info.value)["message"]
    assert message.startswith("AttributeError: ")
    assert message.endswith(" (in rung.runtime.conformance, main_op)")


# ---- dynamic shapes ------------------------------------------------------------------------


def dims(value_info: object) -> list[tuple[str, int]]:
    """(dim_param, dim_value) of each dim of a tensor type, through sequences and optionals."""
    tp = value_info.type  # type: ignore[attr-defined]
    while tp.WhichOneof("value") in ("sequence_type", "optional_type"):
        tp = getattr(tp, tp.WhichOneof("value")).elem_type
    return [(d.dim_param, d.dim_value) for d in tp.tensor_type.shape.dim]


def test_symbolic_dims_name_every_input_dim() -> None:
    original = node_cases()["test_matmul_2d"].model  # type: ignore[attr-defined]
    before = original.SerializeToString()
    model = with_symbolic_dims(original)
    assert original.SerializeToString() == before  # a copy: the case keeps its own model
    assert [(vi.name, dims(vi)) for vi in model.graph.input] == [
        ("a", [("a_d0", 0), ("a_d1", 0)]),
        ("b", [("b_d0", 0), ("b_d1", 0)]),
    ]
    assert [(vi.name, dims(vi)) for vi in model.graph.output] == [("c", [("c_d0", 0), ("c_d1", 0)])]
    for a, b in zip(original.graph.input, model.graph.input, strict=True):
        assert a.type.tensor_type.elem_type == b.type.tensor_type.elem_type


@pytest.mark.parametrize(
    ("name", "ranks"),
    [
        ("test_adagrad", [0, 0, 1, 1, 1]),  # rank-0 inputs stay rank 0
        ("test_optional_get_element_optional_sequence", [1]),  # optional of sequence of tensor
        ("test_loop13_seq", [0, 0, 0]),
        ("test_if", [0]),
    ],
)
def test_symbolic_dims_keep_rank_and_reach_inner_types(name: str, ranks: list[int]) -> None:
    original = node_cases()[name].model  # type: ignore[attr-defined]
    model = with_symbolic_dims(original)
    for vi, rank in zip(model.graph.input, ranks, strict=True):
        assert dims(vi) == [(f"{vi.name}_d{axis}", 0) for axis in range(rank)]
    # subgraphs are the op's own signature, not the caller's sizes
    assert [n.attribute for n in model.graph.node] == [n.attribute for n in original.graph.node]


def test_symbolic_dims_leave_initializers_and_drop_intermediate_shapes() -> None:
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["t"]), helper.make_node("Relu", ["t"], ["y"])],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
            helper.make_tensor_value_info("w", TensorProto.FLOAT, [2, 3]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(np.ones((2, 3), np.float32), "w")],
        value_info=[helper.make_tensor_value_info("t", TensorProto.FLOAT, [2, 3])],
    )
    model = with_symbolic_dims(helper.make_model(graph))
    x, w = model.graph.input
    assert dims(x) == [("x_d0", 0), ("x_d1", 0)]
    assert dims(w) == [("", 2), ("", 3)]  # an initializer: its sizes are data, not input
    (t,) = model.graph.value_info
    assert t.type.tensor_type.elem_type == TensorProto.FLOAT
    assert not t.type.tensor_type.HasField("shape")
    assert dims(model.graph.output[0]) == [("y_d0", 0), ("y_d1", 0)]


# ---- the command -------------------------------------------------------------------------


def run_rung(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rung.tools.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )


TWENTY = (
    r"^test_(abs|acos|add|and2d|argmax_default_axis_example|cast_FLOAT_to_DOUBLE|ceil|concat_1d_axis_0"
    r"|conv_with_strides_padding|cos|div|equal|exp|gather_0|if|loop11|matmul_2d|relu|scan9_sum"
    r"|softmax_axis_0_expanded)$"
)


def test_conformance_subset_writes_markdown_and_json(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    result = run_rung(
        "conformance",
        "--level",
        "onnx",
        "--filter",
        TWENTY,
        "--jobs",
        "2",
        "--output",
        "docs/conformance.md",
        "--floor",
        "20",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "level onnx: 20/20 passed (100.0%)" in result.stdout
    md = (tmp_path / "docs" / "conformance.md").read_text()
    assert md.startswith("<!-- Generated by `rung conformance --level onnx --filter")
    assert "Regenerate with `rung conformance --level onnx" in md
    assert "| onnx | 20 | 20 | 100.0% |" in md
    rows = [line for line in md.splitlines() if line.startswith("| ") and "/" in line]
    ops = [row.split(" | ")[0][2:] for row in rows]
    assert ops == sorted(ops, key=str.lower)
    assert "| Softmax | 1/1 |  |" in md and "| Loop | 1/1 |  |" in md
    data = json.loads((tmp_path / "docs" / "conformance.json").read_text())
    assert data["summary"]["onnx"] == {"passed": 20, "total": 20, "failures": {}}
    assert len(data["cases"]) == 20
    assert data["cases"]["test_softmax_axis_0_expanded"] == {
        "op": "Softmax",
        "results": {"onnx": {"status": "pass"}},
    }


def test_broken_levels_are_reported_and_do_not_stop_the_run(tmp_path: Path) -> None:
    start = time.monotonic()
    result = run_rung(
        "conformance",
        "--load-level",
        THIS_FILE,
        "--level",
        "onnx",
        "--level",
        "fake-wrong",
        "--level",
        "fake-raise",
        "--level",
        "fake-sleep",
        "--level",
        "fake-exit",
        "--level",
        "fake-unsupported",
        "--filter",
        "^test_(abs|relu)$",
        "--timeout",
        "2",
        "--jobs",
        "2",
        "--output",
        "out.md",
        "--floor",
        "1",
        cwd=tmp_path,
    )
    elapsed = time.monotonic() - start
    # --floor 1: the broken levels pass nothing, so the command fails, after reporting.
    assert result.returncode == 1
    assert "rung: error: level 'fake-wrong' passed 0" in result.stderr
    assert "Traceback" not in result.stderr
    assert "level onnx: 2/2 passed" in result.stdout
    data = json.loads((tmp_path / "out.json").read_text())
    for name in ("test_abs", "test_relu"):
        results = data["cases"][name]["results"]
        assert results["onnx"] == {"status": "pass"}
        assert results["fake-wrong"]["category"] == "numeric mismatch"
        assert "max abs error 1" in results["fake-wrong"]["message"]
        assert results["fake-raise"]["category"] == "crash"
        assert (
            results["fake-raise"]["message"] == "ZeroDivisionError: deliberately broken evaluator"
        )
        assert results["fake-sleep"] == {
            "status": "fail",
            "category": "timeout",
            "message": "no result within 2 s",
        }
        assert results["fake-exit"] == {
            "status": "fail",
            "category": "crash",
            "message": "the worker process exited with code 3",
        }
        assert results["fake-unsupported"]["category"] == "unsupported op"
    md = (tmp_path / "out.md").read_text()
    assert "| Abs | 1/1 | 0/1 | 0/1 | 0/1 | 0/1 | 0/1 |" in md
    assert "`test_abs` (fake-wrong: numeric mismatch: output 'y'" in md
    assert elapsed < 300  # the sleeping evaluator was stopped, not waited for


def test_cli_errors(tmp_path: Path) -> None:
    result = run_rung("conformance", "--level", "nope", "--filter", "abs", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("rung: error: unknown level 'nope'; known levels: onnx")
    result = run_rung("conformance", "--filter", "(unclosed", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("rung: error: bad --filter regular expression '(unclosed'")
    result = run_rung("conformance", "--filter", "^no_such_case$", cwd=tmp_path)
    assert result.returncode == 1
    assert "no ONNX node test case matches" in result.stderr
    assert "Traceback" not in result.stderr
    result = run_rung("conformance", "--filter", "abs", "--compare", "none.json", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("rung: error: cannot read the scoreboard 'none.json'")
    result = run_rung("conformance", "--filter", "abs", "--shapes", "symbolic", cwd=tmp_path)
    assert result.returncode == 1 and "invalid choice: 'symbolic'" in result.stderr


def test_dynamic_shapes_run_marks_the_variant_and_compares(tmp_path: Path) -> None:
    # A hand-written earlier scoreboard: test_add passed, test_relu failed there.
    baseline = {
        "shapes": "static",
        "levels": ["core", "fake-static-only"],
        "cases": {
            "test_add": {"results": {"core": {"status": "pass"}}},
            "test_relu": {"results": {"core": {"status": "fail"}}},
        },
    }
    (tmp_path / "static.json").write_text(json.dumps(baseline))
    result = run_rung(
        "conformance",
        "--load-level",
        THIS_FILE,
        "--shapes",
        "dynamic",
        "--level",
        "core",
        "--level",
        "kernel",
        "--level",
        "fake-static-only",
        "--filter",
        "^test_add$|^test_relu$",
        "--jobs",
        "2",
        "--output",
        "dyn.md",
        "--compare",
        "static.json",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "level core, dynamic shapes: 2/2 passed (100.0%)" in result.stdout
    assert "level kernel, dynamic shapes: 2/2 passed (100.0%)" in result.stdout
    assert "level fake-static-only, dynamic shapes: 0/2 passed" in result.stdout
    assert "against static.json (static shapes): 1 passed there; 0 lost, 1 gained" in result.stdout
    data = json.loads((tmp_path / "dyn.json").read_text())
    assert data["shapes"] == "dynamic"
    assert data["generated_by"].startswith(
        "rung conformance --level core --level kernel --level fake-static-only --shapes dynamic"
    )
    for name in ("test_add", "test_relu"):
        results = data["cases"][name]["results"]
        assert results["core"] == results["kernel"] == {"status": "pass"}
        # The lowering saw only symbolic dims: the failure stays, with its reason.
        assert results["fake-static-only"]["category"] == "unsupported op"
        assert "dynamic dims in tensor<?x?x?x" in results["fake-static-only"]["message"]
    assert data["comparison"]["levels"] == {
        "core": {"passed": 1, "lost": [], "gained": ["test_relu"]},
        "fake-static-only": {"passed": 0, "lost": [], "gained": []},
    }
    md = (tmp_path / "dyn.md").read_text()
    assert "\n# ONNX conformance, dynamic shapes\n" in md
    assert "**Dynamic shapes.** Every case is run on a rewritten model" in md
    assert "| core | 1 | 2 | 0 | 1 |" in md
    assert "`test_relu` (fake-static-only: unsupported op: " in md


def test_static_runs_see_static_sizes(tmp_path: Path) -> None:
    result = run_rung(
        "conformance",
        "--load-level",
        THIS_FILE,
        "--level",
        "fake-static-only",
        "--filter",
        "^test_add$",
        "--jobs",
        "1",
        "--output",
        "static.md",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "level fake-static-only: 1/1 passed (100.0%)" in result.stdout
    data = json.loads((tmp_path / "static.json").read_text())
    assert data["shapes"] == "static"
    assert "dynamic shapes" not in (tmp_path / "static.md").read_text()
