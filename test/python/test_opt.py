"""Tests of the `opt` driver, the pass registry and plugin loading.

They pin down the promises opt makes to users: exit code 0 with the result on
stdout; exit code 1 and one `opt: error:` line (never a traceback) for every
kind of bad input; no output file left behind on failure; weights (resources)
that come through byte for byte; plugins from files and from entry points;
and a start-up that does not import onnx for MLIR input.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import DenseResourceAttr

import rung.dialects
from rung.dialects import parse_module, print_module
from rung.dialects.resources import resource_bytes
from rung.errors import RungError
from rung.importers.onnx import import_model
from rung.lowering.pipelines import Registry, default_registry
from rung.tools import plugins
from rung.tools.opt import main, make_tool

TOY_PLUGIN = Path(__file__).resolve().parents[1] / "lit" / "plugins" / "Inputs" / "toy_plugin.py"

ADD_MODULE = """\
func.func @f(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %0 = onnx.Add(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
"""

ARITH_MODULE = """\
func.func @f(%i: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %s = arith.addi %c1, %c2 : i32
  %t = arith.addi %i, %s : i32
  func.return %t : i32
}
"""

BAD_VERIFY = """\
func.func @f(%a: i32) -> i64 {
  func.return %a : i32
}
"""


@pytest.fixture(autouse=True)
def _isolated_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plugin dialects are process-global; keep each test's to itself.

    Installed entry points are replaced by none, so that the machine's own
    plugins cannot change what these tests see.
    """
    monkeypatch.setattr(rung.dialects, "_EXTRA_DIALECTS", dict(rung.dialects._EXTRA_DIALECTS))
    monkeypatch.setattr(plugins, "_PLUGIN_DIALECTS", {})
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda **_: [])


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def run_subprocess(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """opt in a fresh interpreter, as a user runs it (`python -m` avoids LLVM's `opt`)."""
    return subprocess.run(
        [sys.executable, "-m", "rung.tools.opt", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def model_with_weights(weights: np.ndarray) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add0")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(weights.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(weights.shape))],
        [numpy_helper.from_array(weights, "w")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def constant_bytes(module_text: str) -> bytes:
    """The bytes of the one dense_resource constant in `module_text`, read back."""
    module = parse_module(module_text)
    found = [
        attr
        for op in module.walk()
        for attr in [*op.attributes.values(), *op.properties.values()]
        if isinstance(attr, DenseResourceAttr)
    ]
    assert len(found) == 1, f"expected one resource constant, found {len(found)}"
    return resource_bytes(found[0], module)


# ---- success ------------------------------------------------------------------


def test_prints_module_and_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run([str(write(tmp_path / "a.mlir", ADD_MODULE))], capsys)
    assert code == 0, err
    assert err == ""
    assert "onnx.Add(%a, %b)" in out
    assert parse_module(out) is not None


def test_passes_change_the_ir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = write(tmp_path / "a.mlir", ARITH_MODULE)
    code, out, _ = run([str(src), "-p", "canonicalize,cse"], capsys)
    assert code == 0
    assert "arith.constant 3 : i32" in out
    assert "arith.constant 1 " not in out


def test_reads_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(ADD_MODULE.encode())))
    code, out, _ = run(["-"], capsys)
    assert code == 0
    assert "onnx.Add" in out


def test_output_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = write(tmp_path / "a.mlir", ADD_MODULE)
    target = tmp_path / "out.mlir"
    code, out, _ = run([str(src), "-o", str(target)], capsys)
    assert code == 0
    assert out == ""
    assert "onnx.Add" in target.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.mlir", "out.mlir"]


def test_verify_diagnostics_prints_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = write(tmp_path / "bad.mlir", BAD_VERIFY)
    code, out, err = run([str(src), "--verify-diagnostics"], capsys)
    assert code == 0
    assert "Expected arguments to have the same types" in out
    assert err == ""


def test_split_input_file_reports_whole_file_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (
        ADD_MODULE + "// -----\n" + 'func.func @g() {\n  "foo.bar"() : () -> ()\n  func.return\n}\n'
    )
    src = write(tmp_path / "split.mlir", text)
    code, _, err = run([str(src), "--split-input-file"], capsys)
    assert code == 1
    # The bad line is line 7 of the file (line 3 of its chunk).
    assert err.startswith(f"opt: error: {src}:7:")


def test_help_is_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["--help"], capsys)
    assert code == 0
    assert "--load-plugin" in out
    assert "--split-input-file" in out


# ---- bad input: exit 1, one line, no traceback, nothing written ----------------


def _bad_inputs(tmp: Path) -> dict[str, list[str]]:
    good = write(tmp / "good.mlir", ADD_MODULE)
    broken = write(tmp / "broken.py", "raise ValueError('boom')\n")
    return {
        "missing file": [str(tmp / "missing.mlir")],
        "invalid MLIR": [str(write(tmp / "syntax.mlir", "func.func @f( {\n"))],
        "verifier error": [str(write(tmp / "verify.mlir", BAD_VERIFY))],
        "unknown op": [str(write(tmp / "unknown.mlir", '"foo.bar"() : () -> ()\n'))],
        "unknown pass": [str(good), "-p", "no-such-pass"],
        "bad pass option": [str(good), "-p", "canonicalize{nope=1}"],
        "bad pipeline text": [str(good), "-p", "cse{"],
        "plugin that raises": [str(good), "--load-plugin", str(broken)],
        "plugin file missing": [str(good), "--load-plugin", str(tmp / "nope.py")],
        "unknown flag": [str(good), "--no-such-flag"],
        "corrupt onnx": [str(write(tmp / "model.onnx", "not a protobuf"))],
        "unknown suffix": [str(write(tmp / "model.txt", ADD_MODULE))],
    }


BAD_KINDS = [
    "missing file",
    "invalid MLIR",
    "verifier error",
    "unknown op",
    "unknown pass",
    "bad pass option",
    "bad pipeline text",
    "plugin that raises",
    "plugin file missing",
    "unknown flag",
    "corrupt onnx",
    "unknown suffix",
]


@pytest.mark.parametrize("kind", BAD_KINDS)
def test_bad_input_is_one_error_and_exit_1(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _bad_inputs(tmp_path)[kind]
    target = tmp_path / "out" / "result.mlir"
    target.parent.mkdir()
    code, out, err = run([*argv, "-o", str(target)], capsys)
    assert code == 1, f"{kind}: exit code {code}"
    assert err.startswith("opt: error: "), err
    assert "Traceback" not in err
    assert out == ""
    assert list(target.parent.iterdir()) == [], "a failed run left a file behind"


@pytest.mark.parametrize("kind", ["invalid MLIR", "verifier error", "plugin that raises"])
def test_bad_input_in_a_real_process(kind: str, tmp_path: Path) -> None:
    argv = _bad_inputs(tmp_path)[kind]
    done = run_subprocess(argv, tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith("opt: error: "), done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_failure_keeps_an_existing_output_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = write(tmp_path / "bad.mlir", BAD_VERIFY)
    target = write(tmp_path / "out.mlir", "previous contents\n")
    code, _, _ = run([str(src), "-o", str(target)], capsys)
    assert code == 1
    assert target.read_text() == "previous contents\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.mlir", "out.mlir"]


def test_parse_error_first_line_is_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = write(tmp_path / "p.mlir", "func.func @f(%a: i32) -> i32 {\n  func.return %a i32\n}\n")
    code, _, err = run([str(src)], capsys)
    assert code == 1
    first, *rest = err.splitlines()
    assert first.startswith(f"opt: error: {src}:2:")
    assert any("^" in line for line in rest), "no caret under the error"


# ---- resources --------------------------------------------------------------------


def test_resources_survive_opt(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    weights = np.arange(48, dtype=np.float32).reshape(6, 8) * 0.5
    module = import_model(model_with_weights(weights))
    src = write(tmp_path / "model.mlir", print_module(module))
    assert constant_bytes(src.read_text()) == weights.tobytes()

    target = tmp_path / "out.mlir"
    code, _, err = run([str(src), "-p", "canonicalize,cse", "-o", str(target)], capsys)
    assert code == 0, err
    text = target.read_text()
    assert "dialect_resources" in text
    assert "dense_resource<" in text
    assert constant_bytes(text) == weights.tobytes()

    # And once more, through the generic syntax.
    code, out, _ = run([str(target), "--print-op-generic"], capsys)
    assert code == 0
    assert constant_bytes(out) == weights.tobytes()


def test_onnx_input_is_imported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    weights = np.linspace(-1, 1, 20, dtype=np.float32).reshape(4, 5)
    path = tmp_path / "model.onnx"
    onnx.save(model_with_weights(weights), str(path))
    code, out, err = run([str(path)], capsys)
    assert code == 0, err
    assert "onnx.Add" in out
    assert constant_bytes(out) == weights.tobytes()


# ---- plugins ---------------------------------------------------------------------


def test_plugin_file_pass_and_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = write(tmp_path / "a.mlir", ARITH_MODULE)
    plugin = ["--load-plugin", str(TOY_PLUGIN)]
    code, out, err = run([str(src), *plugin, "-p", "toy-addi-to-subi"], capsys)
    assert code == 0, err
    assert "arith.subi" in out and "arith.addi" not in out
    code, out, err = run([str(src), *plugin, "-p", "toy-scale-constants{factor=7}"], capsys)
    assert code == 0, err
    assert "arith.constant 7 : i32" in out and "arith.constant 14 : i32" in out


def test_plugin_pipeline_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = write(tmp_path / "a.mlir", ARITH_MODULE)
    code, out, err = run([str(src), "--load-plugin", str(TOY_PLUGIN), "--toy-cleanup"], capsys)
    assert code == 0, err
    assert "arith.constant -1 : i32" in out
    assert "arith.subi %i" in out


def test_pipeline_flags_keep_their_place_around_p() -> None:
    names = ["toy-addi-to-subi", "canonicalize"]
    before = make_tool(["--load-plugin", str(TOY_PLUGIN), "--toy-cleanup", "-p", "cse"])
    assert [p.name for p in before.pipeline.passes] == [*names, "cse"]
    after = make_tool(["--load-plugin", str(TOY_PLUGIN), "-p", "cse", "--toy-cleanup"])
    assert [p.name for p in after.pipeline.passes] == ["cse", *names]


def test_plugin_dialect_is_in_every_rung_context(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = write(tmp_path / "t.mlir", 'toy.hello "there"\n')
    code, _, err = run([str(src)], capsys)
    assert code == 1 and "toy.hello is not registered" in err
    code, out, err = run([str(src), "--load-plugin", str(TOY_PLUGIN)], capsys)
    assert code == 0, err
    assert 'toy.hello "there"' in out
    assert "toy" in rung.dialects.context().registered_dialect_names


def test_plugin_without_register(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plugin = write(tmp_path / "empty.py", "X = 1\n")
    src = write(tmp_path / "a.mlir", ADD_MODULE)
    code, _, err = run([str(src), "--load-plugin", str(plugin)], capsys)
    assert code == 1
    assert err == (
        f"opt: error: cannot load plugin '{plugin}': it defines no function 'register(registry)'\n"
    )


def test_plugin_register_raising_names_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plugin = write(
        tmp_path / "bad_register.py",
        "def register(registry):\n    registry.add_pass(int)\n",
    )
    code, _, err = run(
        [str(write(tmp_path / "a.mlir", ADD_MODULE)), "--load-plugin", str(plugin)], capsys
    )
    assert code == 1
    assert "cannot load plugin" in err and "add_pass expects a ModulePass subclass" in err


def test_plugin_pass_name_clash_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plugin = write(
        tmp_path / "clash.py",
        textwrap.dedent(
            """\
            from dataclasses import dataclass
            from xdsl.passes import ModulePass

            @dataclass(frozen=True)
            class MyCse(ModulePass):
                name = "cse"
                def apply(self, ctx, op):
                    pass

            def register(registry):
                registry.add_pass(MyCse)
            """
        ),
    )
    code, _, err = run(
        [str(write(tmp_path / "a.mlir", ADD_MODULE)), "--load-plugin", str(plugin)], capsys
    )
    assert code == 1
    assert "cannot register pass 'cse'" in err and "already registered by rung" in err


def test_pipeline_clashing_with_a_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plugin = write(
        tmp_path / "flag.py",
        "def register(registry):\n    registry.add_pipeline('split-input-file', 'cse', '')\n",
    )
    code, _, err = run(
        [str(write(tmp_path / "a.mlir", ADD_MODULE)), "--load-plugin", str(plugin)], capsys
    )
    assert code == 1
    assert "opt already has an option --split-input-file" in err


def _entry_point_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> str:
    name = "rung_test_entry_point_plugin"
    write(tmp_path / f"{name}.py", body)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    return name


def test_entry_point_plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    module = _entry_point_module(
        tmp_path,
        monkeypatch,
        "def register(registry):\n"
        "    registry.add_pipeline('ep-tidy', 'canonicalize,cse', 'from an entry point')\n",
    )
    entry = importlib.metadata.EntryPoint(
        name="tidy", value=f"{module}:register", group=plugins.ENTRY_POINT_GROUP
    )
    seen: list[str | None] = []

    def fake_entry_points(group: str | None = None) -> list[importlib.metadata.EntryPoint]:
        seen.append(group)
        return [entry] if group == plugins.ENTRY_POINT_GROUP else []

    monkeypatch.setattr(importlib.metadata, "entry_points", fake_entry_points)
    src = write(tmp_path / "a.mlir", ARITH_MODULE)
    code, out, err = run([str(src), "--ep-tidy"], capsys)
    assert code == 0, err
    assert plugins.ENTRY_POINT_GROUP in seen
    assert "arith.constant 3 : i32" in out

    # --no-plugins leaves installed plugins out, so their flag is unknown.
    code, _, err = run([str(src), "--no-plugins", "--ep-tidy"], capsys)
    assert code == 1
    assert "unrecognized arguments: --ep-tidy" in err


def test_broken_entry_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    module = _entry_point_module(tmp_path, monkeypatch, "raise ImportError('missing dependency')\n")
    entry = importlib.metadata.EntryPoint(
        name="broken", value=f"{module}:register", group=plugins.ENTRY_POINT_GROUP
    )
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group=None: [entry])
    code, _, err = run([str(write(tmp_path / "a.mlir", ADD_MODULE))], capsys)
    assert code == 1
    assert err.startswith(
        f"opt: error: cannot load plugin 'broken' (entry point '{module}:register'): "
        "ImportError: missing dependency"
    )


# ---- the registry --------------------------------------------------------------------


def test_registry_expands_nested_pipelines() -> None:
    registry = default_registry()
    registry.add_pipeline("inner", "canonicalize,cse", "")
    registry.add_pipeline("outer", "inner,dce", "")
    specs = registry.expand("outer,cse")
    assert [s.name for s in specs] == ["canonicalize", "cse", "dce", "cse"]


def test_registry_refuses_cycles_and_pipeline_options() -> None:
    registry = default_registry()
    registry.add_pipeline("a", "b", "")
    registry.add_pipeline("b", "a", "")
    with pytest.raises(RungError, match="includes itself: a -> b -> a"):
        registry.expand("a")
    registry.add_pipeline("c", "cse", "")
    with pytest.raises(RungError, match="takes no options"):
        registry.expand("c{x=1}")


def test_registry_unknown_pass_inside_pipeline() -> None:
    registry = Registry()
    registry.add_pipeline("mine", "not-there", "")
    with pytest.raises(RungError, match="unknown pass or pipeline 'not-there'.*in pipeline 'mine'"):
        registry.expand("mine")


def test_registry_rejects_bad_names() -> None:
    registry = Registry()
    with pytest.raises(RungError, match="invalid pipeline name"):
        registry.add_pipeline("Bad Name", "cse", "")
    with pytest.raises(RungError, match="no passes"):
        registry.add_pipeline("empty", " ", "")


# ---- start-up ---------------------------------------------------------------------


def test_startup_does_not_import_onnx(tmp_path: Path) -> None:
    src = write(tmp_path / "a.mlir", ADD_MODULE)
    script = (
        "import sys\n"
        "from rung.tools.opt import main\n"
        "main(['--help'])\n"
        "assert 'rung.dialects.onnx' not in sys.modules, 'help loaded the onnx dialect'\n"
        f"assert main([{str(src)!r}]) == 0\n"
        "heavy = [m for m in ('onnx', 'torch', 'rung.importers.onnx') if m in sys.modules]\n"
        "print('HEAVY', heavy, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "HEAVY []" in done.stderr


def test_list_passes_describes_every_pass(capsys: pytest.CaptureFixture[str]) -> None:
    """Each pass has a line saying what it does and who registered it: its help, else its
    class's docstring; rung's own passes and the xDSL passes rung's pipelines run all
    have a real description."""
    assert main(["--list-passes", "--no-plugins"]) == 0
    out = capsys.readouterr().out
    passes = out.split("Passes:\n", 1)[1].splitlines()
    described = {line.split()[0]: line.split(None, 1)[1] for line in passes if line.strip()}
    for name, text in described.items():
        assert text.endswith(")"), f"{name}: {text}"
    for name in ("convert-onnx-to-core", "core-hoist-loop-invariants", "kernel-plan-memory"):
        assert described[name].endswith("(rung)") and "no description" not in described[name]
    for name in ("cse", "dce"):  # rung's versions, in linear time, take the place of xDSL's
        assert described[name].endswith("(rung)") and "no description" not in described[name]
    assert described["canonicalize"].endswith("(xDSL)")
    assert "no description" not in described["canonicalize"]


RISCV_MODULE = """\
riscv_func.func @main() {
  %0 = rv32.li 1 : !riscv.reg<a0>
  riscv_func.return
}
"""


def test_only_working_targets_are_offered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`wat` and `wgsl` printed nothing and exited 0, `mps` raised: they are not offered."""
    source = str(write(tmp_path / "a.mlir", ADD_MODULE))
    for target in ("wat", "wgsl", "mps"):
        code, _, err = run([source, "-t", target], capsys)
        assert code == 1 and f"invalid choice: '{target}'" in err
        assert "(choose from mlir, riscv-asm, x86-asm, arm-asm, llvm, c)" in err


def test_assembly_target_prints_its_dialect(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run([str(write(tmp_path / "rv.mlir", RISCV_MODULE)), "-t", "riscv-asm"], capsys)
    assert code == 0 and "li a0, 1" in out


@pytest.mark.parametrize("target", ["riscv-asm", "x86-asm", "arm-asm", "llvm"])
def test_target_of_another_dialect_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    """It used to end in a traceback (an op repr as the message)."""
    if target == "llvm" and importlib.util.find_spec("llvmlite") is None:
        pytest.skip("without llvmlite, -t llvm stops before reading (see the next test)")
    code, out, err = run([str(write(tmp_path / "a.mlir", ADD_MODULE)), "-t", target], capsys)
    assert code == 1 and out == ""
    assert f"opt: error: target '{target}' prints" in err and "'func.func'" in err
    assert "Traceback" not in err


def test_missing_optional_package_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`-t llvm` needs llvmlite: without it, one line that says so, not a traceback."""
    monkeypatch.setitem(sys.modules, "llvmlite", None)
    source = write(tmp_path / "f.mlir", "llvm.func @f() {\n  llvm.return\n}\n")
    code, _, err = run([str(source), "-t", "llvm"], capsys)
    assert code == 1
    assert err == (
        "opt: error: target 'llvm' needs the optional package llvmlite: pip install llvmlite\n"
    )


BAD_MODULES = {
    # xDSL parses a float of a width it cannot pack, then fails to verify or print it.
    "f80 float attribute": (
        "builtin.module attributes {onnx.ir_version = 13 : f80} {\n"
        "  func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
        "    func.return %x : tensor<2xf32>\n  }\n}\n",
        "a float value of type f80 is not supported",
    ),
    "f80 dense constant": (
        "func.func @f() -> tensor<2xf32> {\n"
        "  %c = arith.constant dense<[1.0, 2.0]> : tensor<2xf80>\n"
        "  %y = core.constant() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>\n"
        "  func.return %y : tensor<2xf32>\n}\n",
        "a float value of a type that is not supported",
    ),
    # xDSL's dense array of a zero-width integer divides by zero.
    "i0 dense array": (
        "func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %y = core.transpose(%x) {perm = array<i0: 0>} : (tensor<2xf32>) -> tensor<2xf32>\n"
        "  func.return %y : tensor<2xf32>\n}\n",
        "malformed input (ZeroDivisionError",
    ),
    # An op that uses its own result: lowering such a cycle ended in an internal error.
    "use before definition": (
        "func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %y = core.binary add(%x, %y) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
        "  func.return %y : tensor<2xf32>\n}\n",
        "'core.binary' uses %y where its definition does not come first",
    ),
    "use of a later value": (
        "func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %y = core.binary add(%x, %z) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
        "  %z = core.unary neg(%x) : (tensor<2xf32>) -> tensor<2xf32>\n"
        "  func.return %y : tensor<2xf32>\n}\n",
        "'core.binary' uses %z where its definition does not come first",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_MODULES))
def test_malformed_modules_get_one_line_errors(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, message = BAD_MODULES[case]
    code, out, err = run([str(write(tmp_path / "m.mlir", text)), "--lower-to-kernel"], capsys)
    assert code == 1
    assert out == ""
    assert message in err.splitlines()[0]
    assert "Traceback" not in err


def test_values_from_enclosing_blocks_are_still_in_scope() -> None:
    """The dominance check allows a value defined before a region to be used inside it."""
    text = (
        "func.func @f(%c: tensor<i1>, %x: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %n = core.unary neg(%x) : (tensor<2xf32>) -> tensor<2xf32>\n"
        "  %y = core.if(%c) : (tensor<i1>) -> tensor<2xf32> then {\n"
        "    core.yield(%n) : (tensor<2xf32>) -> ()\n  } else {\n"
        "    core.yield(%x) : (tensor<2xf32>) -> ()\n  }\n"
        "  func.return %y : tensor<2xf32>\n}\n"
    )
    parse_module(text)


@pytest.mark.parametrize("command", [["run", "--random-inputs"], ["compile", "--emit-only"]])
def test_rung_parse_errors_say_what_is_wrong_on_the_first_line(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As `opt` does: `file:line:col: message`, then the line and its marker."""
    from rung.tools.cli import main as rung_main

    bad = write(tmp_path / "bad.mlir", "func.func @f(%x: tensor<2xf32>) {\n  core.bogus(%x)\n}\n")
    argv = [command[0], str(bad), *command[1:]]
    if command[0] == "compile":
        argv += ["-o", str(tmp_path / "out")]
    assert rung_main(argv) == 1
    first = capsys.readouterr().err.splitlines()[0]
    assert first.startswith("rung: error: ") and first.endswith(
        "bad.mlir:2:13: Operation core.bogus is not registered"
    ), first
