"""InferenceSession at level onnx, against onnxruntime and the ONNX node tests' expected outputs."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_cases import node_cases

from rung.dialects import print_module
from rung.errors import RungError
from rung.importers.onnx import import_model
from rung.runtime import InferenceSession
from rung.runtime.levels import (
    UnsupportedOpError,
    get_level,
    level_names,
    register_level,
    unregister_level,
)

RNG = np.random.default_rng(3)
F = TensorProto.FLOAT


def make_model(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: list[onnx.ValueInfoProto],
    initializers: list[TensorProto] = (),  # type: ignore[assignment]
    opset: int = 21,
) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


def vi(name: str, shape: list | None, elem: int = F) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def ort_run(model: onnx.ModelProto, feed: dict[str, object]) -> list[object]:
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feed)


def assert_same(got: object, want: object, atol: float = 1e-6) -> None:
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert_same(g, w, atol)
        return
    if want is None:
        assert got is None
        return
    assert isinstance(got, np.ndarray)
    assert got.dtype == want.dtype  # type: ignore[union-attr]
    assert got.shape == want.shape  # type: ignore[union-attr]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=atol)


def check_against_ort(model: onnx.ModelProto, feed: dict[str, object]) -> list[object]:
    got = InferenceSession(model, level="onnx").run(None, feed)
    want = ort_run(model, feed)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert_same(g, w)
    return got


# ---- models run like onnxruntime ---------------------------------------------------


def test_small_network_matches_onnxruntime() -> None:
    w = numpy_helper.from_array(RNG.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(RNG.standard_normal(4).astype(np.float32), "b")
    model = make_model(
        [
            helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c"], ["r"]),
            helper.make_node("GlobalAveragePool", ["r"], ["p"]),
            helper.make_node("Flatten", ["p"], ["f"]),
            helper.make_node("Softmax", ["f"], ["y"], axis=1),
        ],
        [vi("x", ["N", 3, 8, 8])],
        [vi("y", ["N", 4])],
        [w, b],
    )
    x = RNG.standard_normal((2, 3, 8, 8)).astype(np.float32)
    check_against_ort(model, {"x": x})


def test_per_op_callback_and_whole_model_fast_path() -> None:
    from rung.runtime.onnx_eval import OnnxEvaluator, evaluate_whole_model

    model = make_model(
        [
            helper.make_node("MatMul", ["x", "w"], ["m"]),
            helper.make_node("Sigmoid", ["m"], ["s"]),
            helper.make_node("ReduceMax", ["s"], ["y"], keepdims=0),
        ],
        [vi("x", [3, 4])],
        [vi("y", [])],
        [numpy_helper.from_array(RNG.standard_normal((4, 5)).astype(np.float32), "w")],
    )
    module = import_model(model)
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    seen: list[tuple[str, list[object]]] = []
    out = OnnxEvaluator(module).run([x], on_op=lambda op, ins, outs: seen.append((op.name, outs)))
    assert [name for name, _ in seen] == [
        "onnx.Constant",
        "onnx.MatMul",
        "onnx.Sigmoid",
        "onnx.ReduceMax",
    ]
    # Each step's output is what onnxruntime computes for that intermediate value.
    w = seen[0][1][0]
    np.testing.assert_allclose(seen[1][1][0], x @ w, rtol=1e-5)  # type: ignore[operator]
    np.testing.assert_array_equal(out[0], seen[-1][1][0])  # type: ignore[arg-type]
    assert_same(out[0], ort_run(model, {"x": x})[0])
    assert_same(evaluate_whole_model(module, [x])[0], out[0])


def test_absent_optional_inputs_and_optional_typed_input() -> None:
    opt_type = helper.make_optional_type_proto(helper.make_tensor_type_proto(F, [3]))
    model = make_model(
        [
            # Clip with its `min` left out (an absent optional input).
            helper.make_node("Clip", ["x", "", "hi"], ["clipped"]),
            helper.make_node("OptionalHasElement", ["maybe"], ["has"]),
        ],
        [vi("x", [3]), vi("hi", []), helper.make_value_info("maybe", opt_type)],
        [vi("clipped", [3]), vi("has", [], TensorProto.BOOL)],
    )
    x = np.array([-5.0, 0.5, 7.0], np.float32)
    hi = np.array(1.0, np.float32)
    got = check_against_ort(model, {"x": x, "hi": hi, "maybe": np.ones(3, np.float32)})
    assert got[1].item() is True  # type: ignore[union-attr]
    # Leaving an optional-typed input out means an empty optional.
    got = check_against_ort(model, {"x": x, "hi": hi})
    assert got[1].item() is False  # type: ignore[union-attr]


def test_if_and_loop_with_outer_scope_values_match_onnxruntime() -> None:
    # If: each branch uses `x` from the enclosing graph.
    then_g = helper.make_graph(
        [helper.make_node("Add", ["x", "x"], ["t"])], "then", [], [vi("t", [2, 3])]
    )
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["e"])], "else", [], [vi("e", [2, 3])]
    )
    # Loop: carries a sum, and scans out a rank-2 tensor per iteration (stacked
    # along a new axis, which onnx.reference's own Loop gets wrong).
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Add", ["acc_in", "x"], ["acc_out"]),
            helper.make_node("Mul", ["acc_out", "scale"], ["scan_out"]),
        ],
        "body",
        [vi("i", [], TensorProto.INT64), vi("cond_in", [], TensorProto.BOOL), vi("acc_in", [2, 3])],
        [vi("cond_out", [], TensorProto.BOOL), vi("acc_out", [2, 3]), vi("scan_out", [2, 3])],
    )
    model = make_model(
        [
            helper.make_node("If", ["c"], ["branch"], then_branch=then_g, else_branch=else_g),
            helper.make_node("Loop", ["n", "", "x"], ["acc", "scans"], body=body),
        ],
        [
            vi("c", [], TensorProto.BOOL),
            vi("x", [2, 3]),
            vi("n", [], TensorProto.INT64),
            vi("scale", []),
        ],
        [vi("branch", [2, 3]), vi("acc", [2, 3]), vi("scans", [None, 2, 3])],
    )
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    for cond in (True, False):
        got = check_against_ort(
            model,
            {
                "c": np.array(cond),
                "x": x,
                "n": np.array(4, np.int64),
                "scale": np.array(0.5, np.float32),
            },
        )
        assert got[2].shape == (4, 2, 3)  # type: ignore[union-attr]


def test_sequence_outputs_match_onnxruntime() -> None:
    seq_type = helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, None))
    model = make_model(
        [
            helper.make_node("SplitToSequence", ["x"], ["parts"], axis=0),
            helper.make_node("SequenceLength", ["parts"], ["count"]),
            helper.make_node("SequenceAt", ["parts", "at"], ["one"]),
        ],
        [vi("x", [4, 2]), vi("at", [], TensorProto.INT64)],
        [
            helper.make_value_info("parts", seq_type),
            vi("count", [], TensorProto.INT64),
            vi("one", [1, 2]),
        ],
    )
    x = RNG.standard_normal((4, 2)).astype(np.float32)
    got = check_against_ort(model, {"x": x, "at": np.array(-1, np.int64)})
    assert isinstance(got[0], list) and len(got[0]) == 4


def test_large_initializer_held_as_a_resource() -> None:
    w = RNG.standard_normal((64, 32)).astype(np.float32)
    model = make_model(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        [vi("x", [5, 64])],
        [vi("y", [5, 32])],
        [numpy_helper.from_array(w, "w")],
    )
    sess = InferenceSession(model, level="onnx")
    assert "dense_resource<w>" in print_module(sess.module)
    x = RNG.standard_normal((5, 64)).astype(np.float32)
    got = sess.run(None, {"x": x})
    # 64-term f32 dot products: numpy and onnxruntime sum in different orders.
    assert_same(got[0], ort_run(model, {"x": x})[0], atol=1e-5)


def test_output_names_select_outputs() -> None:
    model = make_model(
        [helper.make_node("Neg", ["x"], ["a"]), helper.make_node("Abs", ["x"], ["b"])],
        [vi("x", [2])],
        [vi("a", [2]), vi("b", [2])],
    )
    x = np.array([-1.0, 2.0], np.float32)
    sess = InferenceSession(model, level="onnx")
    assert_same(sess.run(["b"], {"x": x})[0], np.abs(x))
    assert_same(sess.run(["b", "a"], {"x": x})[1], -x)
    with pytest.raises(RungError, match="unknown output 'c'"):
        sess.run(["c"], {"x": x})


# ---- against the ONNX node tests ------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "test_if_opt",  # onnx.reference's Optional wraps values in a list
        "test_range_float_type_positive_delta_expanded",  # its Loop vstacks scalars
        "test_loop13_seq",
        "test_scan9_sum",
        "test_sequence_map_add_2_sequences",
        "test_optional_has_element_empty_optional_input",
        "test_adagrad",  # ai.onnx.preview.training, an onnx.Custom op
        "test_ai_onnx_ml_label_encoder_string_int",
        "test_cast_FLOAT_to_FLOAT8E4M3FN",
        "test_dequantizelinear_int4",
    ],
)
def test_node_case_matches_expected_outputs(name: str) -> None:
    from rung.runtime.conformance import _normalize, compare

    case = node_cases()[name]
    sess = InferenceSession(case.model, level="onnx")  # type: ignore[attr-defined]
    names = [i.name for i in case.model.graph.input]  # type: ignore[attr-defined]
    for inputs, expected in case.data_sets:  # type: ignore[attr-defined]
        feed = {n: _normalize(v) for n, v in zip(names, inputs, strict=True)}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = sess.run(None, feed)
        for e, g in zip(expected, got, strict=True):
            verdict = compare(_normalize(e), g, case.rtol, case.atol, name)  # type: ignore[attr-defined]
            assert verdict is None, verdict


def test_unknown_custom_domain_is_unsupported() -> None:
    model = make_model(
        [helper.make_node("Frob", ["x"], ["y"], domain="com.example")],
        [vi("x", [2])],
        [vi("y", [2])],
    )
    model.opset_import.append(helper.make_opsetid("com.example", 1))
    sess = InferenceSession(model, level="onnx")
    with pytest.raises(
        UnsupportedOpError, match="no reference implementation for com.example::Frob"
    ):
        sess.run(None, {"x": np.zeros(2, np.float32)})


# ---- describing inputs and outputs -----------------------------------------------------


def io_model() -> onnx.ModelProto:
    seq_type = helper.make_sequence_type_proto(
        helper.make_tensor_type_proto(TensorProto.INT64, None)
    )
    return make_model(
        [
            helper.make_node("Add", ["x", "b"], ["y"]),
            helper.make_node("SequenceLength", ["s"], ["n"]),
            helper.make_node("Identity", ["names"], ["names_out"]),
        ],
        [
            vi("x", ["batch", None, 3]),
            vi("b", [3]),
            helper.make_value_info("s", seq_type),
            vi("names", [2], TensorProto.STRING),
        ],
        [
            vi("y", ["batch", None, 3]),
            vi("n", [], TensorProto.INT64),
            vi("names_out", [2], TensorProto.STRING),
        ],
    )


def test_get_inputs_and_outputs_describe_like_onnxruntime() -> None:
    model = io_model()
    ours = InferenceSession(model, level="onnx")
    theirs = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for mine, ref in [
        *zip(ours.get_inputs(), theirs.get_inputs(), strict=True),
        *zip(ours.get_outputs(), theirs.get_outputs(), strict=True),
    ]:
        assert (mine.name, mine.shape, mine.type) == (ref.name, ref.shape, ref.type)


def feed_ok() -> dict[str, object]:
    return {
        "x": np.zeros((2, 5, 3), np.float32),
        "b": np.ones(3, np.float32),
        "s": [np.zeros(2, np.int64)],
        "names": np.array(["a", "b"], dtype=object),
    }


def test_valid_feed_runs_and_strings_pass_through() -> None:
    feed = feed_ok()
    got = InferenceSession(io_model(), level="onnx").run(None, feed)
    want = ort_run(io_model(), feed)
    assert_same(got[0], want[0])
    assert got[1] == want[1]
    assert list(got[2]) == list(want[2])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"z": np.zeros(1, np.float32)},
            r"unknown input 'z'; the model's inputs are 'x', 'b', 's', 'names'",
        ),
        ({"b": None}, r"missing input 'b' \(tensor\(float\) \[3\]\)"),
        (
            {"b": np.ones(3, np.float64)},
            r"input 'b': expected dtype float32 \(tensor\(float\)\), got float64",
        ),
        (
            {"x": np.zeros((2, 3), np.float32)},
            r"input 'x': expected rank 3 \(shape \[batch, \?, 3\]\), got rank 2",
        ),
        (
            {"x": np.zeros((2, 5, 4), np.float32)},
            r"input 'x': dimension 2 must be 3 .*got shape \[2, 5, 4\]",
        ),
        (
            {"b": [1.0, 2.0, 3.0]},
            r"input 'b': expected a numpy array of tensor\(float\), got a sequence",
        ),
        (
            {"names": np.zeros(2, np.float32)},
            r"input 'names': expected tensor\(string\) \(strings\), got dtype float32",
        ),
    ],
    ids=["unknown", "missing", "dtype", "rank", "static-dim", "not-an-array", "strings"],
)
def test_input_checking_errors(change: dict[str, object], message: str) -> None:
    feed = feed_ok()
    for key, value in change.items():
        if value is None:
            del feed[key]
        else:
            feed[key] = value
    with pytest.raises(RungError, match=message):
        InferenceSession(io_model(), level="onnx").run(None, feed)


# ---- model sources and levels ------------------------------------------------------------


def test_mlir_file_round_trip_gives_identical_results(tmp_path: Path) -> None:
    w = numpy_helper.from_array(RNG.standard_normal((16, 4)).astype(np.float32), "w")
    model = make_model(
        [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Tanh", ["m"], ["y"])],
        [vi("x", [3, 16])],
        [vi("y", [3, 4])],
        [w],
    )
    path = tmp_path / "m.mlir"
    path.write_text(print_module(import_model(model)))
    x = RNG.standard_normal((3, 16)).astype(np.float32)
    from_mlir = InferenceSession(str(path), level="onnx").run(None, {"x": x})
    from_onnx = InferenceSession(model, level="onnx").run(None, {"x": x})
    assert from_mlir[0].tobytes() == from_onnx[0].tobytes()  # type: ignore[union-attr]
    onnx_path = tmp_path / "m.onnx"
    onnx_path.write_bytes(model.SerializeToString())
    from_path = InferenceSession(onnx_path, level="onnx").run(None, {"x": x})
    assert from_path[0].tobytes() == from_onnx[0].tobytes()  # type: ignore[union-attr]


def test_mlir_that_is_not_onnx_dialect_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "arith.mlir"
    path.write_text(
        "func.func @f(%a: i32) -> i32 {\n  %b = arith.addi %a, %a : i32\n  func.return %b : i32\n}\n"
    )
    with pytest.raises(RungError, match="is not onnx-dialect IR: it has 'arith.addi'"):
        InferenceSession(str(path), level="onnx")


def test_unknown_level_lists_the_known_levels() -> None:
    with pytest.raises(RungError, match=r"unknown level 'nope'; known levels: onnx"):
        InferenceSession(io_model(), level="nope")


def test_registered_level_lowers_then_evaluates() -> None:
    calls: list[str] = []

    def lower(module: object) -> object:
        calls.append("lower")
        return module

    def evaluate(module: object, inputs: list[object]) -> list[object]:
        calls.append("evaluate")
        return [np.asarray(inputs[0]) * 2]

    register_level("twice", lowering=lower, evaluator=evaluate)
    try:
        assert "twice" in level_names() and get_level("twice").lowering is lower
        model = make_model(
            [helper.make_node("Identity", ["x"], ["y"])], [vi("x", [2])], [vi("y", [2])]
        )
        out = InferenceSession(model, level="twice").run(None, {"x": np.ones(2, np.float32)})
        assert calls == ["lower", "evaluate"]
        np.testing.assert_array_equal(out[0], [2.0, 2.0])  # type: ignore[arg-type]
    finally:
        unregister_level("twice")


def test_level_modules_in_the_runtime_package_register_themselves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # How `core` and `kernel` plug in: a module `rung.runtime.<name>_level`.
    import rung.runtime
    from rung.runtime import levels

    (tmp_path / "demo_level.py").write_text(
        "from rung.runtime.levels import register_level\n"
        "register_level('demo', lowering=None, dialect='onnx',\n"
        "               evaluator='rung.runtime.onnx_eval:evaluate', description='demo')\n"
    )
    monkeypatch.setattr(rung.runtime, "__path__", [*rung.runtime.__path__, str(tmp_path)])
    monkeypatch.setattr(levels, "_discovered", False)
    monkeypatch.delitem(sys.modules, "rung.runtime.demo_level", raising=False)
    try:
        assert "demo" in level_names()
        model = make_model([helper.make_node("Neg", ["x"], ["y"])], [vi("x", [2])], [vi("y", [2])])
        out = InferenceSession(model, level="demo").run(None, {"x": np.ones(2, np.float32)})
        np.testing.assert_array_equal(out[0], [-1.0, -1.0])  # type: ignore[arg-type]
    finally:
        unregister_level("demo")
        sys.modules.pop("rung.runtime.demo_level", None)


# ---- `rung run` -----------------------------------------------------------------------------


def run_rung(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rung.tools.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )


def cli_model(tmp_path: Path) -> Path:
    model = make_model(
        [
            helper.make_node("Mul", ["x", "y"], ["z"]),
            helper.make_node("ReduceSum", ["z"], ["s"], keepdims=0),
        ],
        [vi("x", ["N", 3]), vi("y", [3])],
        [vi("z", ["N", 3]), vi("s", [])],
    )
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    return path


def test_cli_run_prints_and_saves_outputs(tmp_path: Path) -> None:
    path = cli_model(tmp_path)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.array([1.0, -1.0, 2.0], np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    result = run_rung("run", "m.onnx", "--input", "x=x.npy", "--input", "y=y.npy", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "z: tensor(float) shape (2, 3) dtype float32" in result.stdout
    assert "s: tensor(float) shape () dtype float32" in result.stdout
    result = run_rung(
        "run", "m.onnx", "--input", "x=x.npy", "--input", "y=y.npy", "-o", "out.npz", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    saved = np.load(tmp_path / "out.npz")
    want = ort_run(onnx.load(path), {"x": x, "y": y})
    assert_same(saved["z"], want[0])
    assert_same(saved["s"], want[1])


def test_cli_run_random_inputs_use_dims(tmp_path: Path) -> None:
    cli_model(tmp_path)
    result = run_rung(
        "run", "m.onnx", "--random-inputs", "--dim", "N=4", "--output-dir", "o", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert np.load(tmp_path / "o" / "z.npy").shape == (4, 3)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--input", "x=x.npy"],
            "rung: error: missing input 'y'; the model's inputs are:\n  x: tensor(float) [N, 3]\n  y: tensor(float) [3]",
        ),
        (
            ["--input", "x=bad.npy", "--input", "y=x.npy"],
            "rung: error: cannot read input 'x' from 'bad.npy': not a .npy file",
        ),
        (["--input", "x=x.npy", "--input", "y=x.npy"], "rung: error: input 'y': expected rank 1"),
        (["--random-inputs", "--level", "nope"], "rung: error: unknown level 'nope'"),
    ],
    ids=["missing-input", "bad-npy", "wrong-rank", "unknown-level"],
)
def test_cli_run_errors_are_one_line_without_output(
    tmp_path: Path, args: list[str], message: str
) -> None:
    cli_model(tmp_path)
    np.save(tmp_path / "x.npy", np.zeros((2, 3), np.float32))
    (tmp_path / "bad.npy").write_bytes(b"not numpy at all")
    result = run_rung("run", "m.onnx", *args, "-o", "out.npz", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith(message)
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out.npz").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_default_level_is_kernel() -> None:
    """Without a level, a session compiles the model natively (onnxruntime's default is native too)."""
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    sess = InferenceSession(model)
    assert sess.level.name == "kernel"
    x = np.array([-1.0, 0.5, 2.0], dtype=np.float32)
    np.testing.assert_array_equal(sess.run(None, {"x": x})[0], np.maximum(x, 0))
