"""The ONNX importer: what it builds, and how it refuses bad input."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import DenseResourceAttr, ModuleOp

from rung.dialects import parse_module, print_module
from rung.dialects.onnx import CustomOp
from rung.dialects.resources import resource_array
from rung.errors import RungError
from rung.importers.onnx import import_model


def make_model(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: list[onnx.ValueInfoProto],
    initializers: list[TensorProto] = (),  # type: ignore[assignment]
    opset: int = 21,
    extra_opsets: list[onnx.OperatorSetIdProto] = (),  # type: ignore[assignment]
) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", opset), *extra_opsets], ir_version=10
    )


def vi(name: str, shape: list | None, elem: int = TensorProto.FLOAT) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def ops_of(module: ModuleOp) -> list:
    func = module.body.block.first_op
    return list(func.body.block.ops)  # type: ignore[union-attr]


def relu_model() -> onnx.ModelProto:
    return make_model(
        [helper.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", [2])], [vi("y", [2])]
    )


# ---- what the importer builds ---------------------------------------------------


def test_large_initializer_becomes_a_resource_with_exact_bytes() -> None:
    weights = np.random.default_rng(0).standard_normal((8, 8)).astype(np.float32)
    model = make_model(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        [vi("x", [2, 8])],
        [vi("y", [2, 8])],
        [numpy_helper.from_array(weights, "w")],
    )
    module = import_model(model)
    const = ops_of(module)[0]
    value = const.properties["value"]
    assert isinstance(value, DenseResourceAttr)
    np.testing.assert_array_equal(resource_array(value, module, np.float32), weights)
    # The blob survives printing and parsing.
    text = print_module(module)
    assert "dialect_resources" in text
    again = parse_module(text)
    value2 = ops_of(again)[0].properties["value"]
    np.testing.assert_array_equal(resource_array(value2, again, np.float32), weights)


def test_small_initializer_is_inline_and_exact() -> None:
    shape = np.array([3, -1], dtype=np.int64)
    model = make_model(
        [helper.make_node("Reshape", ["x", "s"], ["y"])],
        [vi("x", [2, 3])],
        [vi("y", [3, 2])],
        [numpy_helper.from_array(shape, "s")],
    )
    text = print_module(import_model(model))
    assert "dense<[3, -1]> : tensor<2xi64>" in text
    assert "tensor<3x2xf32>" in text  # shape inference used the constant


def test_node_names_become_locations_and_value_names_ssa_names() -> None:
    text = print_module(import_model(relu_model()))
    assert '%y = onnx.Relu(%x) : (tensor<2xf32>) -> tensor<2xf32> loc("r")' in text
    assert '{onnx.name = "x"}' in text


def test_symbolic_dims_are_dynamic_and_named() -> None:
    model = make_model(
        [helper.make_node("Relu", ["x"], ["y"])], [vi("x", ["N", 3])], [vi("y", ["N", 3])]
    )
    text = print_module(import_model(model))
    assert 'tensor<?x3xf32> {onnx.name = "x", onnx.dim_params = ["N", ""]}' in text


def test_opsets_are_recorded() -> None:
    module = import_model(
        make_model(relu_model().graph.node, [vi("x", [2])], [vi("y", [2])], opset=13)
    )
    text = print_module(module)
    assert "onnx.original_opset_import = {ai.onnx = 13 : i64}" in text
    assert f"onnx.opset_import = {{ai.onnx = {onnx.defs.onnx_opset_version()} : i64}}" in text


def test_unknown_domains_become_custom_ops() -> None:
    model = make_model(
        [helper.make_node("Frob", ["x", "", "x"], ["y"], domain="com.example", alpha=2.0)],
        [vi("x", [2])],
        [vi("y", [2])],
        extra_opsets=[helper.make_opsetid("com.example", 1)],
    )
    (op, _) = ops_of(import_model(model))
    assert isinstance(op, CustomOp)
    assert op.op_type.data == "Frob" and op.domain.data == "com.example"
    assert [v is None for v in op.onnx_inputs()] == [False, True, False]
    assert op.attributes["alpha"].value.data == 2.0  # type: ignore[attr-defined]


def test_model_local_functions_are_inlined() -> None:
    fn = helper.make_function(
        "local",
        "Twice",
        ["a"],
        ["b"],
        [helper.make_node("Add", ["a", "a"], ["b"])],
        [helper.make_opsetid("", 21)],
    )
    model = make_model(
        [helper.make_node("Twice", ["x"], ["y"], domain="local")],
        [vi("x", [2])],
        [vi("y", [2])],
        extra_opsets=[helper.make_opsetid("local", 1)],
    )
    model.functions.append(fn)
    text = print_module(import_model(model))
    assert "onnx.Add" in text and "Twice" not in text


def test_subgraphs_become_regions_that_see_outer_values() -> None:
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["t"])], "then", [], [vi("t", [2])])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [], [vi("e", [2])])
    model = make_model(
        [helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
        [vi("c", [], TensorProto.BOOL), vi("x", [2])],
        [vi("y", [2])],
    )
    text = print_module(import_model(model))
    assert "then_branch {" in text and "else_branch {" in text
    assert "onnx.Yield %t : tensor<2xf32>" in text


# ---- bad input --------------------------------------------------------------------


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(RungError, match="no such file"):
        import_model(tmp_path / "nope.onnx")


def test_corrupt_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07garbage that is not protobuf\xff\xff\xff")
    with pytest.raises(RungError, match="not a valid ONNX model"):
        import_model(bad)


def test_truncated_file(tmp_path: Path) -> None:
    data = relu_model().SerializeToString()
    cut = tmp_path / "cut.onnx"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(RungError, match="not a valid ONNX model"):
        import_model(cut)


def test_empty_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.onnx"
    empty.write_bytes(b"")
    with pytest.raises(RungError, match="is empty"):
        import_model(empty)


def test_text_syntax_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.onnxtxt"
    bad.write_text(
        '<ir_version: 8, opset_import: ["" : 21]>\ng (float[2] x) => (float[2] y) {\n y = Relu(x\n}'
    )
    with pytest.raises(RungError, match="cannot parse textual ONNX"):
        import_model(bad)


def test_unknown_op_in_default_domain() -> None:
    model = make_model(
        [helper.make_node("Frobnicate", ["x"], ["y"], name="f1")], [vi("x", [2])], [vi("y", [2])]
    )
    with pytest.raises(RungError, match="Frobnicate"):
        import_model(model)


def test_inconsistent_shapes() -> None:
    model = make_model(
        [helper.make_node("Add", ["a", "b"], ["y"])],
        [vi("a", [2, 3]), vi("b", [4, 5])],
        [vi("y", None)],
    )
    with pytest.raises(RungError, match="inconsistent graph|not a valid ONNX model"):
        import_model(model)


def test_undefined_value() -> None:
    model = make_model([helper.make_node("Relu", ["ghost"], ["y"])], [vi("x", [2])], [vi("y", [2])])
    with pytest.raises(RungError):
        import_model(model)


def _external_model(folder: Path, location: str) -> Path:
    w = numpy_helper.from_array(np.arange(32, dtype=np.float32), "w")
    w.data_location = TensorProto.EXTERNAL
    w.ClearField("raw_data")
    for key, value in (("location", location), ("offset", "0"), ("length", "128")):
        entry = w.external_data.add()
        entry.key, entry.value = key, value
    model = make_model(
        [helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", [32])], [vi("y", [32])], [w]
    )
    path = folder / "model.onnx"
    path.write_bytes(model.SerializeToString())
    return path


def test_external_data_inside_the_folder_is_read(tmp_path: Path) -> None:
    (tmp_path / "w.bin").write_bytes(np.arange(32, dtype=np.float32).tobytes())
    module = import_model(_external_model(tmp_path, "w.bin"))
    value = ops_of(module)[0].properties["value"]
    np.testing.assert_array_equal(
        resource_array(value, module, np.float32), np.arange(32, dtype=np.float32)
    )


@pytest.mark.parametrize("location", ["../secret.bin", "/etc/passwd", "sub/../../secret.bin"])
def test_external_data_outside_the_folder_is_refused(tmp_path: Path, location: str) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    (tmp_path / "secret.bin").write_bytes(b"\0" * 128)
    with pytest.raises(RungError, match="outside the model's folder"):
        import_model(_external_model(folder, location))


def test_external_data_symlink_leaving_the_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    (tmp_path / "secret.bin").write_bytes(b"\0" * 128)
    os.symlink(tmp_path / "secret.bin", folder / "w.bin")
    with pytest.raises(RungError, match="outside the model's folder"):
        import_model(_external_model(folder, "w.bin"))


def test_external_data_past_end_of_file(tmp_path: Path) -> None:
    (tmp_path / "w.bin").write_bytes(b"\0" * 16)
    with pytest.raises(RungError, match="beyond the end"):
        import_model(_external_model(tmp_path, "w.bin"))


# ---- the command line ---------------------------------------------------------------


def run_rung(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rung.tools.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )


def test_cli_import_writes_the_output(tmp_path: Path) -> None:
    model = tmp_path / "m.onnx"
    model.write_bytes(relu_model().SerializeToString())
    out = tmp_path / "m.mlir"
    result = run_rung("import", str(model), "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert "onnx.Relu" in out.read_text()
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask  # not the temp file's 0600


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"garbage\xff\xfe", "not a valid ONNX model"),
        (None, "no such file"),
    ],
    ids=["corrupt", "missing"],
)
def test_cli_bad_input_is_one_line_exit_1_and_no_output(
    tmp_path: Path, content: bytes | None, message: str
) -> None:
    model = tmp_path / "m.onnx"
    if content is not None:
        model.write_bytes(content)
    out = tmp_path / "m.mlir"
    result = run_rung("import", str(model), "-o", str(out))
    assert result.returncode == 1
    assert result.stderr.startswith("rung: error: ")
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_cli_refuses_to_overwrite_its_input(tmp_path: Path) -> None:
    model = tmp_path / "m.onnx"
    data = relu_model().SerializeToString()
    model.write_bytes(data)
    result = run_rung("import", str(model), "-o", str(model))
    assert result.returncode == 1 and "input file" in result.stderr
    assert model.read_bytes() == data


def test_weights_are_checked_and_inferred_without_their_data(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ONNX's checker and shape inference see the weights as typed graph inputs: they
    serialize what they get (seconds for a transformer, impossible past 2 GB). Lower the
    size limit so these 64 weights count as large."""
    from rung.importers.onnx import loader

    monkeypatch.setattr(loader, "_KEEP_ELEMENTS", 16)
    seen: list[list[str]] = []
    check_model = loader.onnx.checker.check_model

    def spy(model: onnx.ModelProto, *args: object, **kwargs: object) -> None:
        seen.append([t.name for t in model.graph.initializer])
        check_model(model, *args, **kwargs)

    monkeypatch.setattr(loader.onnx.checker, "check_model", spy)
    weights = np.linspace(0, 1, 64, dtype=np.float32)
    model = make_model(
        [helper.make_node("Add", ["x", "w"], ["y"]), helper.make_node("Relu", ["y"], ["z"])],
        [vi("x", [64])],
        [vi("z", [None])],
        [numpy_helper.from_array(weights, "w")],
    )
    module = import_model(model)
    text = print_module(module)
    assert "func.return %z : tensor<64xf32>" in text  # inferred through the weightless copy
    value = ops_of(module)[0].properties["value"]
    np.testing.assert_array_equal(resource_array(value, module, np.float32), weights)
    assert seen == [[]]  # the checker got no weight data
