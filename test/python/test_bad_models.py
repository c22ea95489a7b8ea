"""Corrupt and malformed models end in one clean error, never a traceback or a hang.

Each reproducer goes through the command line (`rung import`, `rung run`,
`opt`: exit code 1, one `error:` line, no traceback) and through the Python
API (`InferenceSession` raises a `RungError` subclass). Models whose text
fields are not UTF-8 cannot be built with onnx.helper, which only takes
`str`: they are serialized with a marker string whose bytes are then swapped
for invalid UTF-8 of the same length.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from rung.errors import InvalidModelError, RungError
from rung.runtime import InferenceSession
from rung.tools import cli, opt
from rung.tools.common import run_tool

F = TensorProto.FLOAT
MARK = "QQ7"
"""A marker for text to corrupt: its first byte becomes 0xFE (never valid UTF-8)."""


def vi(name: str, dims: list[int | str] | None = None, elem: int = F) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, [2] if dims is None else dims)


def model(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: list[onnx.ValueInfoProto],
    initializers: list[onnx.TensorProto] | None = None,
    name: str = "g",
    opset: int = 17,
) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=initializers or [])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def relu(**kw: object) -> onnx.ModelProto:
    """x -> Relu -> y; keywords go to the node."""
    node = helper.make_node("Relu", ["x"], ["y"], name=str(kw.pop("node_name", "n0")), **kw)
    return model([node], [vi("x")], [vi("y")])


def corrupt(m: onnx.ModelProto) -> bytes:
    """`m` serialized, every `MARK` made invalid UTF-8."""
    data = m.SerializeToString()
    assert MARK.encode() in data
    return data.replace(MARK.encode(), b"\xfe" + MARK[1:].encode())


def save(tmp_path: Path, data: onnx.ModelProto | bytes, name: str = "bad.onnx") -> Path:
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.SerializeToString())
    return path


def proto(data: onnx.ModelProto | bytes) -> onnx.ModelProto:
    return data if isinstance(data, onnx.ModelProto) else onnx.ModelProto.FromString(data)


def one_error(
    capsys: pytest.CaptureFixture[str],
    main: Callable[[list[str]], int],
    argv: list[str],
    tool: str = "rung",
) -> str:
    """Run a tool in-process; check it failed with exactly one error line, and return it."""
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1, err
    assert errors[0].startswith(f"{tool}: error: ")
    assert "internal error" not in errors[0], errors[0]
    return errors[0]


def cli_rejects(
    capsys: pytest.CaptureFixture[str], path: Path, *, run: bool = True, level: str = "kernel"
) -> str:
    """`rung import` (and `rung run`) both refuse `path` with one line; return import's."""
    out = path.with_suffix(".mlir")
    message = one_error(capsys, cli.main, ["import", str(path), "-o", str(out)])
    assert not out.exists()
    if run:
        one_error(capsys, cli.main, ["run", str(path), "--level", level, "--random-inputs"])
    return message


# ---- 1. text that is not UTF-8 ---------------------------------------------------------


def _function_model(**fn_kw: object) -> onnx.ModelProto:
    name = str(fn_kw.pop("fn_name", "F"))
    body_name = str(fn_kw.pop("body_name", "b0"))
    body = [helper.make_node("Relu", ["a"], ["b"], name=body_name)]
    fn = helper.make_function(
        "local", name, ["a"], ["b"], body, [helper.make_opsetid("", 17)], **fn_kw
    )
    m = model([helper.make_node(name, ["x"], ["y"], domain="local")], [vi("x")], [vi("y")])
    m.opset_import.append(helper.make_opsetid("local", 1))
    m.functions.append(fn)
    return m


def _if_model(then_node_name: str = "t0", then_graph_name: str = "then") -> onnx.ModelProto:
    then = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["t"], name=then_node_name)],
        then_graph_name,
        [],
        [vi("t")],
    )
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [], [vi("e")])
    node = helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)
    return model([node], [vi("c", [], TensorProto.BOOL), vi("x")], [vi("y")])


def _with(m: onnx.ModelProto, edit: Callable[[onnx.ModelProto], object]) -> onnx.ModelProto:
    edit(m)
    return m


def _initializer_model() -> onnx.ModelProto:
    weight = numpy_helper.from_array(np.ones(2, np.float32), MARK)
    return model([helper.make_node("Add", ["x", MARK], ["y"])], [vi("x")], [vi("y")], [weight])


NOT_UTF8 = {
    "graph name": (lambda: model([helper.make_node("Relu", ["x"], ["y"])], [vi("x")], [vi("y")], name=MARK), "the graph's name"),
    "node name": (lambda: relu(node_name=MARK), "node 0's name"),
    "node input": (
        lambda: model([helper.make_node("Relu", [MARK], ["y"])], [vi(MARK)], [vi("y")]),
        "node 0's input 0",
    ),
    "graph output": (
        lambda: model([helper.make_node("Relu", ["x"], [MARK])], [vi("x")], [vi(MARK)]),
        "node 0's output 0",
    ),
    "node doc string": (lambda: relu(doc_string=MARK), "node 0 ('n0')'s doc string"),
    "model doc string": (lambda: _with(relu(), lambda m: setattr(m, "doc_string", MARK)), "the model's doc string"),
    "producer": (lambda: _with(relu(), lambda m: setattr(m, "producer_name", MARK)), "the model's producer name"),
    "metadata key": (lambda: _with(relu(), lambda m: helper.set_model_props(m, {MARK: "v"})), "metadata entry 0's key"),
    "metadata value": (lambda: _with(relu(), lambda m: helper.set_model_props(m, {"k": MARK})), "metadata entry 0's value"),
    "value_info name": (lambda: _with(relu(), lambda m: m.graph.value_info.append(vi(MARK))), "value_info 0's name"),
    "initializer name": (_initializer_model, "node 0's input 1"),
    "dim name": (
        lambda: model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", [MARK])], [vi("y", [MARK])]),
        "graph input 0 ('x')'s dim 0's name",
    ),
    "attribute string": (
        lambda: model(
            [helper.make_node("Gelu", ["x"], ["y"], approximate=MARK)], [vi("x")], [vi("y")], opset=20
        ),
        "node 0's attribute 'approximate'",
    ),
    "Einsum equation": (
        lambda: model([helper.make_node("Einsum", ["x"], ["y"], equation=f"i{MARK}")], [vi("x")], [vi("y")]),
        "node 0's attribute 'equation'",
    ),
    "function doc string": (lambda: _function_model(doc_string=MARK), "function 0 ('F')'s doc string"),
    "function node name": (lambda: _function_model(body_name=MARK), "function 0 ('F')'s node 0's name"),
    "subgraph node name": (lambda: _if_model(then_node_name=MARK), "node 0's attribute 'then_branch': node 0's name"),
    "subgraph name": (lambda: _if_model(then_graph_name=MARK), "node 0's attribute 'then_branch': the graph's name"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(NOT_UTF8))
def test_text_that_is_not_utf8_is_named(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    build, place = NOT_UTF8[case]
    data = corrupt(build())
    message = cli_rejects(capsys, save(tmp_path, data), run=case == "graph name")
    assert f"{place} is not valid UTF-8" in message
    with pytest.raises(InvalidModelError, match=re.escape(f"{place} is not valid UTF-8")):
        InferenceSession(proto(data), level="core")


# ---- 2. element types that name no type --------------------------------------------------


def _cast(to: int) -> onnx.ModelProto:
    node = helper.make_node("Cast", ["x"], ["y"], to=to)
    return model([node], [vi("x")], [vi("y", ["n"])])


def _constant_of_shape() -> onnx.ModelProto:
    value = helper.make_tensor("v", F, [1], [1.0])
    value.data_type = 40
    node = helper.make_node("ConstantOfShape", ["s"], ["y"], value=value)
    return model([node], [vi("s", [1], TensorProto.INT64)], [vi("y", ["n"])])


def _initializer_type(code: int) -> onnx.ModelProto:
    weight = numpy_helper.from_array(np.ones(2, np.float32), "w")
    weight.data_type = code
    return model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x")], [vi("y")], [weight])


def _sparse_initializer() -> onnx.ModelProto:
    values = helper.make_tensor("w", F, [1], [1.0])
    values.data_type = 40
    sparse = helper.make_sparse_tensor(
        values, helper.make_tensor("i", TensorProto.INT64, [1], [0]), [2]
    )
    m = model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x")], [vi("y")])
    m.graph.sparse_initializer.append(sparse)
    return m


def _sequence_input() -> onnx.ModelProto:
    seq = helper.make_sequence_type_proto(helper.make_tensor_type_proto(40, [2]))
    node = helper.make_node("SequenceLength", ["s"], ["y"])
    return model([node], [helper.make_value_info("s", seq)], [vi("y", [], TensorProto.INT64)])


def _optional_input() -> onnx.ModelProto:
    opt_type = helper.make_optional_type_proto(helper.make_tensor_type_proto(40, [2]))
    node = helper.make_node("OptionalHasElement", ["s"], ["y"])
    return model(
        [node], [helper.make_value_info("s", opt_type)], [vi("y", [], TensorProto.BOOL)], opset=18
    )


def _map_output() -> onnx.ModelProto:
    value = helper.make_tensor_type_proto(F, [])
    out = helper.make_sequence_type_proto(helper.make_map_type_proto(40, value))
    node = helper.make_node("ZipMap", ["x"], ["y"], domain="ai.onnx.ml", classlabels_int64s=[1, 2])
    m = model([node], [vi("x", [1, 2])], [helper.make_value_info("y", out)])
    m.opset_import.append(helper.make_opsetid("ai.onnx.ml", 3))
    return m


def _graph_input_type() -> onnx.ModelProto:
    m = relu()
    m.graph.input[0].type.tensor_type.elem_type = 40
    return m


BAD_TYPES = {
    "graph input": (_graph_input_type, "graph input 0 ('x')'s element type is 40"),
    "initializer": (lambda: _initializer_type(40), "initializer 0 ('w')'s data type is 40"),
    "initializer UNDEFINED": (lambda: _initializer_type(0), "data type is UNDEFINED"),
    "initializer negative": (lambda: _initializer_type(-3), "data type is -3"),
    "Cast to": (lambda: _cast(40), "node 0 (Cast)'s attribute 'to' is 40"),
    "Cast to UNDEFINED": (lambda: _cast(0), "node 0 (Cast)'s attribute 'to' is UNDEFINED"),
    "ConstantOfShape value": (_constant_of_shape, "node 0's attribute 'value': tensor's data type is 40"),
    "sparse initializer": (_sparse_initializer, "sparse initializer 0's values tensor's data type is 40"),
    "sequence element": (_sequence_input, "graph input 0 ('s')'s element type is 40"),
    "optional element": (_optional_input, "graph input 0 ('s')'s element type is 40"),
    "map key": (_map_output, "graph output 0 ('y')'s key type is 40"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(BAD_TYPES))
def test_undefined_element_types_are_named(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    build, text = BAD_TYPES[case]
    m = build()
    message = cli_rejects(capsys, save(tmp_path, m), run=case in ("graph input", "initializer"))
    assert text in message
    with pytest.raises(InvalidModelError, match=re.escape(text)):
        InferenceSession(m, level="core")


# ---- 3. external data locations -------------------------------------------------------------


def _external(location: str, *, constant: bool = False) -> onnx.ModelProto:
    tensor = numpy_helper.from_array(np.ones(2, np.float32), "w")
    tensor.ClearField("raw_data")
    tensor.data_location = TensorProto.EXTERNAL
    entry = tensor.external_data.add()
    entry.key, entry.value = "location", location
    if constant:
        return model([helper.make_node("Constant", [], ["y"], value=tensor)], [], [vi("y")])
    return model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x")], [vi("y")], [tensor])


@pytest.mark.parametrize("constant", [False, True])
def test_nul_byte_in_an_external_data_location(
    constant: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    m = _external("a\x00b.bin", constant=constant)
    message = cli_rejects(capsys, save(tmp_path, m))
    assert "external data location 'a\\x00b.bin' holds a NUL byte" in message
    with pytest.raises(InvalidModelError, match="NUL byte"):
        InferenceSession(m, level="core")


def test_external_data_stays_inside_the_model_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "secret.bin").write_bytes(np.ones(2, np.float32).tobytes())
    folder = tmp_path / "model"
    folder.mkdir()
    message = cli_rejects(capsys, save(folder, _external("../secret.bin")))
    assert "outside the model's folder" in message
    too_long = cli_rejects(capsys, save(folder, _external("x" * 5000)), run=False)
    assert "unusable external data location" in too_long


# ---- 4. recurrent ops with inputs of the wrong rank or shape -------------------------------


def _lstm_mlir(tmp_path: Path, **changes: str) -> Path:
    """A one-LSTM module (X [2,1,3], hidden 4) with operand types or attributes replaced."""
    types = {
        "x": "tensor<2x1x3xf32>",
        "w": "tensor<1x16x3xf32>",
        "r": "tensor<1x16x4xf32>",
        "b": "tensor<1x32xf32>",
        "sl": "tensor<1xi32>",
        "h0": "tensor<1x1x4xf32>",
        "c0": "tensor<1x1x4xf32>",
    }
    attrs = changes.pop("attrs", "{hidden_size = 4 : i64}")
    types.update(changes)
    args = ", ".join(f"%{k}: {t}" for k, t in types.items())
    names = ", ".join(f"%{k}" for k in types)
    text = (
        f"func.func @g({args}) -> tensor<2x1x1x4xf32> {{\n"
        f"  %y = onnx.LSTM({names}) {attrs} : ({', '.join(types.values())}) -> "
        'tensor<2x1x1x4xf32> loc("lstm0")\n'
        "  func.return %y : tensor<2x1x1x4xf32>\n}\n"
    )
    path = tmp_path / "lstm.mlir"
    path.write_text(text)
    return path


RNN_SHAPES = {
    "X of rank 2": ({"x": "tensor<2x3xf32>"}, "X must have rank 3"),
    "W of rank 2": ({"w": "tensor<16x3xf32>"}, "W has shape [16, 3], expected [1, 16, 3]"),
    "R of another size": ({"r": "tensor<1x16x3xf32>"}, "R has shape [1, 16, 3], expected [1, 16, 4]"),
    "R of rank 0, no hidden_size": ({"r": "tensor<f32>", "attrs": ""}, "hidden_size needs the attribute or a static R of rank 3"),
    "B of rank 3": ({"b": "tensor<1x32x1xf32>"}, "B has shape [1, 32, 1], expected [1, 32]"),
    "sequence_lens of rank 2": ({"sl": "tensor<3x2xi32>"}, "sequence_lens has shape [3, 2], expected [1]"),
    "sequence_lens of rank 0": ({"sl": "tensor<i32>"}, "sequence_lens has shape [], expected [1]"),
    "initial_h of rank 1": ({"h0": "tensor<4xf32>"}, "initial_h has shape [4], expected [1, 1, 4]"),
    "initial_c of rank 0": ({"c0": "tensor<f32>"}, "initial_c has shape [], expected [1, 1, 4]"),
    "negative hidden_size": ({"attrs": "{hidden_size = -4 : i64}"}, "hidden_size must be positive, got -4"),
    "layout 5": ({"attrs": "{hidden_size = 4 : i64, layout = 5 : i64}"}, "layout must be 0 or 1, got 5"),
}  # fmt: skip


@pytest.mark.parametrize("level", ["core", "kernel"])
@pytest.mark.parametrize("case", sorted(RNN_SHAPES))
def test_recurrent_inputs_of_wrong_shape_name_the_node(
    case: str, level: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    changes, text = RNN_SHAPES[case]
    path = _lstm_mlir(tmp_path, **changes)
    message = one_error(capsys, cli.main, ["run", str(path), "--level", level, "--random-inputs"])
    assert "node 'lstm0'" in message and text in message
    with pytest.raises(RungError, match="node 'lstm0'.*" + re.escape(text)):
        InferenceSession(str(path), level=level)


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
def test_recurrent_x_of_rank_2_in_an_onnx_model(
    op: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[op] * 4
    weights = [
        numpy_helper.from_array(np.ones((1, gates, 3), np.float32), "W"),
        numpy_helper.from_array(np.ones((1, gates, 4), np.float32), "R"),
    ]
    node = helper.make_node(op, ["x", "W", "R"], ["y"], hidden_size=4)
    m = model([node], [vi("x", [2, 3])], [vi("y", ["a", "b", "c", "d"])], weights)
    message = cli_rejects(capsys, save(tmp_path, m), level="core")
    assert "expected to have rank 3 but has rank 2" in message
    with pytest.raises(InvalidModelError, match="rank 3"):
        InferenceSession(m, level="core")


# ---- 5. Einsum equations -------------------------------------------------------------------


MALFORMED_EQUATIONS = {
    "i.->i": "'.' is not a letter",  # sent ONNX's shape inference into an endless loop
    "i-j": "'-' is not a letter",
    "i>j": "'>' is not a letter",
    "1->1": "'1' is not a letter",
    "i->ii": "output term 'ii' repeats a letter",
    "->->": "more than one '->'",
    "i...j...->i": "more than one '...'",
    "".join(chr(0x100 + k) for k in range(200)) + "->": "is not a letter",
    "".join(chr(65 + k % 58) for k in range(200)) + "->": "'[' is not a letter",
}


@pytest.mark.parametrize("equation", sorted(MALFORMED_EQUATIONS))
def test_malformed_einsum_equations_are_refused_at_import(
    equation: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    node = helper.make_node("Einsum", ["x"], ["y"], equation=equation)
    m = model([node], [vi("x")], [vi("y", ["n"])])
    message = cli_rejects(capsys, save(tmp_path, m), run=equation == "i.->i")
    assert "node 0 (Einsum)'s attribute 'equation'" in message
    assert MALFORMED_EQUATIONS[equation] in message
    assert len(message) < 400
    with pytest.raises(InvalidModelError, match="malformed"):
        InferenceSession(m, level="core")


@pytest.mark.parametrize("equation", ["->", "i->", "ii...->", "a,b->c", "abc" * 5000 + "->", "i,i"])
def test_wrong_einsum_equations_fail_quickly_and_clearly(
    equation: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    node = helper.make_node("Einsum", ["x"], ["y"], equation=equation)
    m = model([node], [vi("x")], [vi("y", [] if equation.endswith("->") else ["n"])])
    if equation == "i->":  # a valid one: the sum of all elements
        assert cli.main(["run", str(save(tmp_path, m)), "--level", "core", "--random-inputs"]) == 0
        return
    message = cli_rejects(capsys, save(tmp_path, m), run=False)
    assert "Einsum" in message and len(message) < 400
    with pytest.raises(InvalidModelError):
        InferenceSession(m, level="core")


EINSUM_MLIR = (
    "func.func @g(%x: tensor<2x3xf32>) -> tensor<*xf32> {{\n"
    '  %y = onnx.Einsum(%x) {{equation = "{}"}} : (tensor<2x3xf32>) -> tensor<*xf32> '
    'loc("e0")\n'
    "  func.return %y : tensor<*xf32>\n}}\n"
)


@pytest.mark.parametrize(
    ("equation", "text"),
    [
        ("i\ufffd->\ufffdi", "is not a letter"),  # what a non-UTF-8 equation decodes to
        ("i.->i", "'.' is not a letter"),
        ("ij->ji->ij", "more than one '->'"),
        ("ij" * 20000 + "->", "does not match rank 2"),
    ],
)
def test_malformed_einsum_in_mlir_fails_the_lowering_quickly(
    equation: str, text: str, tmp_path: Path
) -> None:
    path = tmp_path / "einsum.mlir"
    path.write_text(EINSUM_MLIR.format(equation))
    done = subprocess.run(
        [sys.executable, "-m", "rung.tools.opt", str(path), "--lower-to-kernel"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    first = done.stderr.splitlines()[0]
    assert first.startswith("opt: error: ") and text in first and "node 'e0'" in first
    assert len(first) < 400


# ---- 6. MLIR text cut short inside its resources ---------------------------------------------


def _module_with_resources(tmp_path: Path) -> str:
    weights = numpy_helper.from_array(np.arange(64, dtype=np.float32), "w")
    m = model(
        [helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", [64])], [vi("y", [64])], [weights]
    )
    out = tmp_path / "res.mlir"
    assert cli.main(["import", str(save(tmp_path, m, "res.onnx")), "-o", str(out)]) == 0
    return out.read_text()


@pytest.mark.parametrize("size", [25, 26, 64, 200])
@pytest.mark.parametrize("end", ["\n", "", "  \n \n", "0"])
def test_unterminated_resource_blob_fails_quickly(size: int, end: str, tmp_path: Path) -> None:
    head = _module_with_resources(tmp_path).split("{-#")[0]
    blob = ("04000000" + "01020304" * size)[: 8 + 2 * size]
    path = tmp_path / "cut.mlir"
    path.write_text(head + '{-# dialect_resources: { builtin: { r: "0x' + blob + end)
    done = subprocess.run(
        [sys.executable, "-m", "rung.tools.opt", str(path)],
        capture_output=True,
        text=True,
        timeout=10,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("opt: error: ") and "Traceback" not in done.stderr
    assert "closing string literal" in done.stderr


def test_every_truncation_of_the_resource_section_fails_cleanly(tmp_path: Path) -> None:
    text = _module_with_resources(tmp_path)
    start = text.index("{-#") + 1  # cut before: a module without its blobs, which parses
    script = (
        "import sys\n"
        "from xdsl.utils.exceptions import ParseError\n"
        "from rung.dialects import parse_module\n"
        "from rung.errors import RungError\n"
        "text = open(sys.argv[1]).read()\n"
        "for k in range(int(sys.argv[2]), len(text) - 1):\n"
        "    try:\n"
        "        parse_module(text[:k])\n"
        "    except (ParseError, RungError):\n"
        "        continue\n"
        "    raise SystemExit(f'parsed at {k}')\n"
        "print('ok')\n"
    )
    path = tmp_path / "res.mlir"
    done = subprocess.run(
        [sys.executable, "-c", script, str(path), str(start)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


@pytest.mark.parametrize(
    ("blob", "run_text"),
    [
        ('"0x"', "too short"),
        ('"0xZZ000000"', "not a hex blob"),
        ('"0x0800000001"', "holds 1 bytes, but its type tensor<64xf32> needs 256"),
    ],
)
def test_resource_blobs_that_do_not_fit_their_type(
    blob: str, run_text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _module_with_resources(tmp_path)
    start = text.index('w: "0x')
    end = text.index('"', start + 4) + 1
    path = tmp_path / "bad.mlir"
    path.write_text(text[:start] + "w: " + blob + text[end:])
    message = one_error(capsys, cli.main, ["run", str(path), "--level", "core", "--random-inputs"])
    assert run_text in message


def test_a_resource_the_module_lacks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bare.mlir"
    path.write_text(_module_with_resources(tmp_path).split("{-#")[0])
    message = one_error(capsys, cli.main, ["run", str(path), "--level", "core", "--random-inputs"])
    assert "dense_resource<w> has no data" in message


# ---- 7. the net under everything --------------------------------------------------------------


def test_an_unexpected_exception_is_one_line_naming_a_bug(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RUNG_TRACEBACK", raising=False)

    def body() -> int:
        raise ValueError("boom\nsecond line")

    assert run_tool("tool", body) == 1
    err = capsys.readouterr().err
    assert err == (
        "tool: error: internal error: ValueError: boom (this is a bug in rung; please report it)\n"
    )
    monkeypatch.setenv("RUNG_TRACEBACK", "1")
    with pytest.raises(ValueError, match="boom"):
        run_tool("tool", body)


def test_opt_reports_a_bug_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RUNG_TRACEBACK", raising=False)
    monkeypatch.setattr(opt.RungOptMain, "_read_mlir", _explode)
    path = tmp_path / "m.mlir"
    path.write_text("builtin.module {\n}\n")
    assert opt.main([str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("opt: error: internal error: KeyError: ") and err.count("\n") == 1


def _explode(*args: object, **kwargs: object) -> object:
    raise KeyError("unexpected")


# ---- what a fuzzer finds first at the loading boundary ----------------------------------------


def test_every_truncation_of_a_model_fails_cleanly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _initializer_model().SerializeToString().replace(MARK.encode(), b"wgt")
    path = tmp_path / "cut.onnx"
    for k in range(len(data)):
        path.write_bytes(data[:k])
        one_error(capsys, cli.main, ["import", str(path), "-o", "-"])


def _recursive_function() -> onnx.ModelProto:
    m = _function_model()
    m.functions[0].node[0].CopyFrom(helper.make_node("F", ["a"], ["b"], domain="local"))
    m.functions[0].opset_import.append(helper.make_opsetid("local", 1))
    return m


FUZZ = {
    "two versions of one opset": (
        lambda: _with(relu(), lambda m: m.opset_import.append(helper.make_opsetid("ai.onnx", 13))),
        "the opset of domain 'ai.onnx' is imported twice, as versions 17 and 13",
    ),
    "raw data too long": (
        lambda: _with(_initializer_type(F), lambda m: setattr(m.graph.initializer[0], "raw_data", b"\0" * 16)),
        "initializer 0 ('w')'s raw data is 16 bytes, but 2 elements of FLOAT (dims [2]) take 8",
    ),
    "raw data too short": (
        lambda: _with(_initializer_type(F), lambda m: setattr(m.graph.initializer[0], "raw_data", b"\0" * 7)),
        "initializer 0 ('w')'s raw data is 7 bytes",
    ),
    "typed data too long": (
        lambda: model(
            [helper.make_node("Add", ["x", "w"], ["y"])], [vi("x")], [vi("y")],
            [_with(helper.make_tensor("w", F, [3], [1.0, 2.0, 3.0]), lambda t: t.dims.__setitem__(0, 2))],
        ),
        "initializer 0 ('w') holds 3 values in float_data, but 2 elements of FLOAT",
    ),
    "a cycle": (
        lambda: model(
            [helper.make_node("Relu", ["b"], ["a"]), helper.make_node("Relu", ["a"], ["b"]),
             helper.make_node("Relu", ["a"], ["y"])], [vi("x")], [vi("y")],
        ),
        "topologically sorted",
    ),
    "an input listed twice": (
        lambda: model([helper.make_node("Relu", ["x"], ["y"])], [vi("x"), vi("x")], [vi("y")]),
        "single static assignment",
    ),
    "an attribute of the wrong type": (
        lambda: model([helper.make_node("Cast", ["x"], ["y"], to=1.5)], [vi("x")], [vi("y")]),
        "Mismatched attribute type",
    ),
    "opset 0": (lambda: _with(relu(), lambda m: setattr(m.opset_import[0], "version", 0)), "domain_version of 0"),
    "opset 10**9": (lambda: _with(relu(), lambda m: setattr(m.opset_import[0], "version", 10**9)), "ai.onnx opset 1000000000, newer than"),
    "a recursive local function": (
        _recursive_function,
        "Model-local functions must not be recursive",
    ),
    "too many inputs": (
        lambda: model([helper.make_node("Relu", ["x", "x"], ["y"])], [vi("x")], [vi("y")]),
        "input size 2 not in range",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(FUZZ))
def test_malformed_graphs_are_refused(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    build, text = FUZZ[case]
    m = build()
    message = cli_rejects(capsys, save(tmp_path, m), run=False)
    assert text in message
    # A newer opset than onnx knows may be a valid model: only a RungError.
    error = RungError if case == "opset 10**9" else InvalidModelError
    with pytest.raises(error):
        InferenceSession(m, level="core")


@pytest.mark.parametrize("dim", [3 * 10**9, 2**63 - 1])
def test_random_inputs_of_a_shape_no_memory_holds(
    dim: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    node = helper.make_node("Relu", ["x"], ["y"])
    path = save(tmp_path, model([node], [vi("x", [dim])], [vi("y", [dim])]))
    message = one_error(capsys, cli.main, ["run", str(path), "--level", "core", "--random-inputs"])
    assert f"has {dim} elements, too many to make up random values for" in message


def test_function_attribute_references_are_not_element_types() -> None:
    """A function body's `Cast(to = @dtype)` holds 0 in `i` and names the caller's attribute:
    it is valid (ONNX's own window ops are written so), and the model runs."""
    from rung.runtime import InferenceSession

    cast = helper.make_node("Cast", ["a"], ["b"])
    cast.attribute.append(
        onnx.AttributeProto(name="to", type=onnx.AttributeProto.INT, ref_attr_name="dtype")
    )
    fn = helper.make_function(
        "local", "F", ["a"], ["b"], [cast], [helper.make_opsetid("", 18)], attributes=["dtype"]
    )
    node = helper.make_node("F", ["x"], ["y"], domain="local", dtype=TensorProto.INT64)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [3])],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("local", 1)]
    )
    model.functions.append(fn)
    x = np.array([1.5, -2.0, 3.0], np.float32)
    (y,) = InferenceSession(model, level="core").run(None, {"x": x})
    np.testing.assert_array_equal(y, x.astype(np.int64))


@pytest.mark.parametrize("op", ["BlackmanWindow", "HannWindow", "HammingWindow"])
def test_window_ops_expand_through_their_function_bodies(op: str) -> None:
    """ONNX defines the window ops by bodies whose Cast names the caller's output_datatype."""
    from rung.runtime import InferenceSession

    graph = helper.make_graph(
        [helper.make_node(op, ["n"], ["y"], name="w")],
        "g",
        [helper.make_tensor_value_info("n", TensorProto.INT32, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["k"])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    feed = {"n": np.array(8, np.int32)}
    from onnx.reference import ReferenceEvaluator

    want = ReferenceEvaluator(model).run(None, feed)[0]
    np.testing.assert_allclose(
        InferenceSession(model, level="core").run(None, feed)[0], want, atol=1e-6
    )
