"""The ONNX model test cases (`rung conformance --cases models`): loading and running them.

The cases are read from the installed onnx package at test time; expected
outputs are the `output_*.pb` files onnx ships with them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from rung.runtime import conformance
from rung.runtime.conformance import MODEL_SUITES, Case, collect_model_cases, run_case

# Small models that compile quickly at kernel level, one or more per suite.
FAST_CASES = (
    "test_single_relu_model",
    "test_sign_model",
    "test_shrink",
    "test_expand_shape_model1",
    "test_Conv1d_groups",
    "test_Embedding",
    "test_PReLU_2d_multiparam",
    "test_operator_add_broadcast",
    "test_operator_maxpool",
    "test_operator_reduced_mean_keepdim",
)


@pytest.fixture(scope="module")
def cases() -> dict[str, Case]:
    return {c.name: c for c in collect_model_cases()}


# ---- loading -------------------------------------------------------------------------


def test_every_suite_is_collected(cases: dict[str, Case]) -> None:
    assert Counter(c.op for c in cases.values()) == {
        "simple": 23,
        "pytorch-converted": 82,
        "pytorch-operator": 35,
    }
    assert set(MODEL_SUITES) == {c.op for c in cases.values()}


def test_every_case_has_data_for_each_fed_input_and_output(cases: dict[str, Case]) -> None:
    for case in cases.values():
        model = onnx.ModelProto.FromString(case.model)
        initialized = {t.name for t in model.graph.initializer}
        fed = [vi for vi in model.graph.input if vi.name not in initialized]
        assert case.data_sets, case.name
        for inputs, outputs in case.data_sets:
            assert len(inputs) == len(fed), case.name
            assert len(outputs) == len(model.graph.output), case.name
        assert (case.rtol, case.atol) == (1e-3, 1e-7)


def test_initializers_listed_as_inputs_are_not_fed(cases: dict[str, Case]) -> None:
    """Old models list weights among the graph inputs; the data files skip them."""
    conv = cases["test_Conv1d"]
    (inputs, _), *_ = conv.data_sets
    graph = onnx.ModelProto.FromString(conv.model).graph
    assert [vi.name for vi in graph.input] == ["0", "1", "2"]
    dims = [d.dim_value for d in graph.input[0].type.tensor_type.shape.dim]
    assert [x.shape for x in inputs] == [tuple(dims)]  # the activation, not the weight
    seq = cases["test_sequence_model1"]
    assert len(seq.data_sets[0][0]) == 3  # X, Y, Z; pos and pos_at have initializers


def test_string_outputs_load_as_object_arrays(cases: dict[str, Case]) -> None:
    (_, (expected,)), *_ = cases["test_strnorm_model_monday_casesensintive_upper"].data_sets
    assert expected.dtype == object
    assert list(expected) == ["TUESDAY", "WEDNESDAY", "THURSDAY"]


def _write(path: Path, proto: object) -> None:
    path.write_bytes(proto.SerializeToString())  # type: ignore[attr-defined]


def test_sequence_and_optional_files_follow_the_declared_type(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SequenceProto file becomes a list of arrays, an OptionalProto its value."""
    seq_type = helper.make_sequence_type_proto(
        helper.make_tensor_type_proto(TensorProto.FLOAT, None)
    )
    opt_type = helper.make_optional_type_proto(
        helper.make_tensor_type_proto(TensorProto.INT64, [2])
    )
    graph = helper.make_graph(
        [
            helper.make_node("SequenceLength", ["s"], ["n"]),
            helper.make_node("OptionalGetElement", ["o"], ["v"]),
        ],
        "g",
        [helper.make_value_info("s", seq_type), helper.make_value_info("o", opt_type)],
        [
            helper.make_tensor_value_info("n", TensorProto.INT64, []),
            helper.make_tensor_value_info("v", TensorProto.INT64, [2]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    for suite in MODEL_SUITES:
        (tmp_path / suite).mkdir()
    case_dir = tmp_path / "simple" / "test_seq_and_optional"
    data = case_dir / "test_data_set_0"
    data.mkdir(parents=True)
    onnx.save(model, case_dir / "model.onnx")
    items = [np.ones((2, 3), np.float32), np.zeros((1,), np.float32)]
    _write(data / "input_0.pb", numpy_helper.from_list(items))
    value = np.array([4, 5], np.int64)
    _write(data / "input_1.pb", numpy_helper.from_optional(value))
    _write(data / "output_0.pb", numpy_helper.from_array(np.array(2, np.int64)))
    _write(data / "output_1.pb", numpy_helper.from_array(value))
    (case_dir / "data.json").write_text(json.dumps({"rtol": 0.5, "atol": 0.25}))
    monkeypatch.setattr(conformance, "model_data_dir", lambda: str(tmp_path))

    (case,) = collect_model_cases()
    ((seq, opt), (n, v)), *_ = case.data_sets
    assert isinstance(seq, list) and [s.shape for s in seq] == [(2, 3), (1,)]
    np.testing.assert_array_equal(opt, value)
    assert n == 2 and list(v) == [4, 5]
    assert (case.op, case.rtol, case.atol) == ("simple", 0.5, 0.25)
    assert run_case(case, "onnx") == {"status": "pass"}


# ---- running -------------------------------------------------------------------------


@pytest.mark.parametrize("name", FAST_CASES)
def test_fast_model_cases_match_their_stored_outputs_at_kernel(
    cases: dict[str, Case], name: str
) -> None:
    assert run_case(cases[name], "kernel") == {"status": "pass"}


def _with_outputs(case: Case, change: object) -> Case:
    data_sets = [(ins, [change(o) for o in outs]) for ins, outs in case.data_sets]  # type: ignore[operator]
    return Case(case.name, case.op, case.model, data_sets, case.rtol, case.atol)


def test_a_wrong_stored_output_fails_the_case(cases: dict[str, Case]) -> None:
    """The stored outputs are what a run is checked against: change them and it fails."""
    case = cases["test_operator_add_broadcast"]
    off = run_case(_with_outputs(case, lambda o: o + 0.5), "kernel")
    assert off["status"] == "fail" and off["category"] == "numeric mismatch"
    reshaped = run_case(_with_outputs(case, lambda o: o.reshape(-1)), "kernel")
    assert reshaped["category"] == "shape mismatch"


def test_cli_writes_the_model_scoreboard(tmp_path: Path) -> None:
    out = tmp_path / "models.md"
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "rung.tools.cli",
            "conformance",
            "--cases",
            "models",
            "--level",
            "core",
            "--filter",
            "single_relu|gradient_of_add$",
            "--jobs",
            "1",
            "--output",
            str(out),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert "level core: 1/2 passed" in proc.stdout
    text = out.read_text()
    assert "# ONNX conformance, model cases" in text
    assert "--cases models" in text
    assert "## By suite" in text and "| simple | 1/2 |" in text
    data = json.loads(out.with_suffix(".json").read_text())
    assert data["kind"] == "models"
    results = {name: c["results"]["core"] for name, c in data["cases"].items()}
    assert results["test_single_relu_model"] == {"status": "pass"}
    assert results["test_gradient_of_add"]["category"] == "unsupported op"
