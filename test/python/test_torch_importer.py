"""The torch.export importer: signature, weights, symbols, locations, errors; the torch dialect."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from rung.dialects import parse_module, print_module  # noqa: E402
from rung.dialects.resources import resource_bytes  # noqa: E402
from rung.dialects.signature import io_dim_params, io_names, main_function  # noqa: E402
from rung.dialects.torch import ConstantOp, SymBinaryOp, TorchOp  # noqa: E402
from rung.errors import RungError  # noqa: E402
from rung.importers.torch import import_program  # noqa: E402
from rung.runtime import InferenceSession  # noqa: E402

THIS_FILE = Path(__file__).name


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(8, 16)
        self.norm = torch.nn.BatchNorm1d(16)
        self.register_buffer("scale", torch.arange(16, dtype=torch.float32))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = self.norm(self.fc(x)) * self.scale
        return y.reshape(x.shape[0] * 2, -1), y.amax(dim=1)


def block_program() -> object:
    torch.manual_seed(0)
    batch = torch.export.Dim("batch", min=1, max=64)
    return torch.export.export(
        Block().eval(), (torch.randn(4, 8),), dynamic_shapes={"x": {0: batch}}
    )


def test_the_signature_keeps_names_symbols_and_ranges() -> None:
    module = import_program(block_program())
    func = main_function(module)
    ins, outs = io_names(func)
    assert ins == ["x"]
    assert len(outs) == 2
    symbol = io_dim_params(func.arg_attrs, 0)[0]
    assert symbol.startswith("s")
    assert io_dim_params(func.arg_attrs, 0) == [symbol, ""]
    assert io_dim_params(func.res_attrs, 0) == [f"2*{symbol}", ""]
    assert io_dim_params(func.res_attrs, 1) == [symbol]
    ranges = module.attributes["torch.ranges"]
    assert [a.value.data for a in ranges.data[symbol].data] == [1, 64]  # type: ignore[attr-defined]
    assert str(func.args[0].type) == "tensor<?x8xf32>"


def test_weights_are_resources_holding_the_exact_bytes() -> None:
    program = block_program()
    module = import_program(program)
    constants = {op.location.desc.data: op for op in module.walk() if isinstance(op, ConstantOp)}  # type: ignore[attr-defined]
    state = program.state_dict  # type: ignore[attr-defined]
    for name in ("fc.weight", "fc.bias", "scale", "norm.running_var"):
        data = resource_bytes(constants[name].value, module)  # type: ignore[arg-type]
        assert data == state[name].detach().numpy().tobytes(), name


def test_symbolic_sizes_are_values_and_ops_carry_the_users_line() -> None:
    module = import_program(block_program())
    views = [op for op in module.walk() if op.name == "torch.aten.view"]
    assert len(views) == 1
    (view,) = views
    size = view.arg("size")  # type: ignore[attr-defined]
    assert isinstance(size[0], object) and size[1] == -1
    assert isinstance(size[0].owner, SymBinaryOp)  # 2 * batch, computed at run time
    loc = str(view.location)
    assert THIS_FILE in loc and "view" in loc
    # Each ATen op is located at its node; the user's forward line, not torch's.
    for op in module.walk():
        if isinstance(op, TorchOp) and op.name != "torch.aten.sym_size.int":
            assert THIS_FILE in str(op.location), op.name


def test_the_printed_module_reads_back_identically() -> None:
    text = print_module(import_program(block_program()))
    assert print_module(parse_module(text)) == text


@pytest.mark.parametrize("batch", [1, 5])
def test_the_torch_level_runs_each_op_with_torch(batch: int) -> None:
    program = block_program()
    x = torch.randn(batch, 8)
    want = [t.detach().numpy() for t in program.module()(x)]  # type: ignore[attr-defined]
    got = InferenceSession(program, level="torch").run(None, {"x": x.numpy()})
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


def test_dict_and_nested_outputs_come_back_flat_in_program_order() -> None:
    class Heads(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> dict[str, object]:
            return {"logits": x * 2, "extra": (x + 1, x - 1)}

    program = torch.export.export(Heads(), (torch.ones(2, 3),))
    session = InferenceSession(program, level="torch")
    outs = session.run(None, {"x": np.ones((2, 3), np.float32)})
    np.testing.assert_array_equal(outs[0], np.full((2, 3), 2, np.float32))
    np.testing.assert_array_equal(outs[1], np.full((2, 3), 2, np.float32))
    np.testing.assert_array_equal(outs[2], np.zeros((2, 3), np.float32))
    assert len(session.get_outputs()) == 3


def _custom_op_program() -> object:
    lib = torch.library.Library("rungtest", "FRAGMENT")  # noqa: F841  (kept alive below)
    if not hasattr(torch.ops.rungtest, "twice"):
        torch.library.define("rungtest::twice", "(Tensor x) -> Tensor", lib=lib)

        @torch.library.impl("rungtest::twice", "CompositeExplicitAutograd", lib=lib)
        def twice(x: torch.Tensor) -> torch.Tensor:
            return x * 2

        @torch.library.register_fake("rungtest::twice", lib=lib)
        def twice_fake(x: torch.Tensor) -> torch.Tensor:
            return torch.empty_like(x)

        _custom_op_program.lib = lib  # type: ignore[attr-defined]

    class UsesCustom(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.ops.rungtest.twice(x) + 1

    return torch.export.export(UsesCustom(), (torch.ones(3),))


def test_an_op_the_dialect_does_not_hold_names_op_node_and_line() -> None:
    with pytest.raises(RungError) as info:
        import_program(_custom_op_program())
    message = info.value.message
    assert "unsupported op 'rungtest::twice'" in message
    assert "node 'twice'" in message
    assert f"({THIS_FILE}:" in message
    assert "\n" not in message


def test_a_non_tensor_input_is_refused_clearly() -> None:
    class TakesInt(torch.nn.Module):
        def forward(self, x: torch.Tensor, n: int) -> torch.Tensor:
            return x * n

    program = torch.export.export(TakesInt(), (torch.ones(2), 3))
    # torch specializes a Python int to a constant: the program has one tensor input.
    assert io_names(main_function(import_program(program)))[0] == ["x"]


def test_not_a_program_is_refused() -> None:
    with pytest.raises(RungError, match="expected a torch.export.ExportedProgram"):
        import_program(42)  # type: ignore[arg-type]


def test_pt2_files_import_and_corrupt_ones_fail_cleanly(tmp_path: Path) -> None:
    path = tmp_path / "block.pt2"
    torch.export.save(block_program(), str(path))
    module = import_program(path)
    assert module.attributes["torch.source"].data == "block.pt2"  # type: ignore[attr-defined]
    bad = tmp_path / "bad.pt2"
    bad.write_bytes(path.read_bytes()[:200])
    with pytest.raises(RungError, match="cannot load the exported program"):
        import_program(bad)
    with pytest.raises(RungError, match="no such file"):
        import_program(tmp_path / "missing.pt2")


def test_the_cli_imports_and_runs_pt2_and_fails_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "block.pt2"
    torch.export.save(block_program(), str(path))
    out = tmp_path / "block.mlir"
    done = subprocess.run(
        [sys.executable, "-m", "rung.tools.cli", "import", str(path), "-o", str(out)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "torch.aten.addmm" in out.read_text()
    bad = tmp_path / "bad.pt2"
    bad.write_bytes(b"not a zip")
    done = subprocess.run(
        [sys.executable, "-m", "rung.tools.cli", "import", str(bad)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("rung: error: ") and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_the_generated_dialect_is_in_sync_with_installed_torch() -> None:
    from rung.tools import gen_torch_dialect

    assert gen_torch_dialect.main(["--check"]) == 0, (
        "dialects/torch/generated_ops.py is stale: run python -m rung.tools.gen_torch_dialect"
    )


def test_the_dialect_covers_core_aten() -> None:
    from rung.dialects.torch import OPS_BY_NAME

    core = []
    for name in dir(torch.ops.aten):
        packet = getattr(torch.ops.aten, name, None)
        if not hasattr(packet, "overloads"):
            continue
        for overload in packet.overloads():
            op = getattr(packet, overload)
            if torch.Tag.core in op.tags and not op._schema.is_mutable:
                suffix = "" if overload == "default" else f".{overload}"
                core.append(f"aten::{name}{suffix}")
    missing = [n for n in core if n not in OPS_BY_NAME and not n.endswith(".out")]
    assert not missing, missing


def test_an_unbounded_dim_records_an_open_range() -> None:
    class Double(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * 2

    batch = torch.export.Dim("batch")  # no max: the range's upper bound is infinite
    program = torch.export.export(Double(), (torch.ones(3),), dynamic_shapes={"x": {0: batch}})
    module = import_program(program)
    ranges = module.attributes["torch.ranges"].data  # type: ignore[attr-defined]
    (bounds,) = ranges.values()
    assert [a.value.data for a in bounds.data][1] == -1  # no upper bound


def test_a_run_time_number_where_a_tensor_is_expected_becomes_a_0d_tensor() -> None:
    class ScaleBySum(torch.nn.Module):
        def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            return y * x.sum().item()

    program = torch.export.export(ScaleBySum(), (torch.ones(3), torch.ones(3)))
    x, y = np.arange(3, dtype=np.float32), np.full(3, 0.5, np.float32)
    for level in ("torch", "core", "kernel"):
        (got,) = InferenceSession(program, level=level).run(None, {"x": x, "y": y})
        np.testing.assert_allclose(got, y * 3.0, err_msg=level)
