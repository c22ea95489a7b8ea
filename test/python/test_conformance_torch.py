"""The torch conformance scoreboard (`rung conformance --cases torch`): collection of OpInfo
samples, attribution to aten ops, scoring, isolation of failures, and a small run."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")  # torch's OpInfo database needs it

from rung.dialects.torch import generated_ops as aten  # noqa: E402
from rung.lowering.kit import CoreBuilder  # noqa: E402
from rung.lowering.kit.errors import LoweringError  # noqa: E402
from rung.lowering.torch_to_core import registry  # noqa: E402
from rung.runtime import conformance_torch as ct  # noqa: E402
from rung.tools.cli import main  # noqa: E402


@pytest.fixture(scope="module")
def opinfos() -> None:
    ct.load_opinfos()


@pytest.fixture
def replaced_abs() -> Iterator[Callable[[object], None]]:
    """Swap the lowering of aten.abs for a test's own, and put the original back."""
    import rung.lowering.torch_to_core  # noqa: F401  (register the handlers)

    original = registry.TABLE.get(aten.AtenAbsOp)

    def install(handler: object) -> None:
        registry.add_lowering(aten.AtenAbsOp, handler, replace=True)  # type: ignore[arg-type]

    yield install
    if original is None:
        registry.remove_lowering(aten.AtenAbsOp)
    else:
        registry.add_lowering(aten.AtenAbsOp, original, replace=True)


def test_collects_capped_float32_samples_of_a_named_op(opinfos: None) -> None:
    assert "add" in ct.core_op_names()
    assert "aten::add.Tensor" in ct.core_op_names()["add"]
    [info] = ct.float32_opinfos(r"^add$")
    assert info.aten_name == "add"
    samples = ct._samples_of("add", None)
    assert 1 < len(samples) <= ct.SAMPLES_PER_OPINFO
    assert all(t.dtype == torch.float32 for s in samples for t in s.tensors)
    # Seeded: another task makes the same tensors.
    again = ct._samples_of("add", 2)
    assert len(again) == 1 and again[0].index == 2
    assert all(torch.equal(a, b) for a, b in zip(samples[2].tensors, again[0].tensors, strict=True))


def test_probe_attributes_a_composite_name_to_its_core_op(opinfos: None) -> None:
    """conv2d is not an op of the dialect by name; its export holds aten::convolution."""
    assert "conv2d" not in ct.core_op_names()
    [record] = ct.run_batch(["nn.functional.conv2d"], ct.PROBE, probe=True)
    assert record["status"] == "probe"
    assert record["ops"] == ["aten::convolution"]
    assert ct.attribute(record) == "aten::convolution"
    # A composite that decomposes into several ops is not kept.
    [record] = ct.run_batch(["nn.functional.mish"], ct.PROBE, probe=True)
    assert len(record["ops"]) > 1
    assert ct.attribute(record).startswith("decomposes to ")


def test_a_perturbed_lowering_is_a_numeric_mismatch(
    opinfos: None, replaced_abs: Callable[[object], None]
) -> None:
    def negate(b: CoreBuilder, op: aten.AtenAbsOp) -> list[object]:
        return [b.unary("neg", op.self_)]

    replaced_abs(negate)
    records = ct.run_batch(["abs"], "core")
    assert records and all(r["status"] == "fail" for r in records)
    assert records[0]["category"] == "numeric mismatch"
    assert "max abs error" in records[0]["reason"]


def test_a_failing_lowering_fails_only_its_samples(
    opinfos: None, replaced_abs: Callable[[object], None]
) -> None:
    """In one batch with `add`, abs's lowering failure is abs's alone, reported in one line
    without the batch's FX node and source line."""

    def refuse(b: CoreBuilder, op: aten.AtenAbsOp) -> list[object]:
        raise LoweringError("deliberately not lowered")

    replaced_abs(refuse)
    records = ct.run_batch(["abs", "add"], "core")
    by_op: dict[str, list[dict[str, object]]] = {}
    for r in records:
        by_op.setdefault(str(r["opinfo"]), []).append(r)
    assert {r["status"] for r in by_op["abs"]} == {"fail"}
    assert by_op["abs"][0]["category"] == "unsupported op"
    assert by_op["abs"][0]["reason"] == (
        "failed to lower 'torch.aten.abs' (aten::abs): deliberately not lowered"
    )
    assert {r["status"] for r in by_op["add"]} == {"pass"}


def test_select_outputs_keeps_what_the_chosen_outputs_need() -> None:
    from rung.dialects.signature import io_names, main_function
    from rung.importers.torch import import_program

    class Two(torch.nn.Module):
        def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, ...]:
            return torch.relu(x), torch.exp(y)

    args = (torch.randn(2, 3), torch.randn(4))
    module = import_program(torch.export.export(Two(), args))
    part = ct.select_outputs(module, [1])
    func = main_function(part)
    names = [op.name for op in func.body.block.ops]
    assert "torch.aten.exp" in names and "torch.aten.relu" not in names
    assert len(func.function_type.outputs.data) == 1 and len(func.args) == 2
    assert io_names(func)[1] == [io_names(main_function(module))[1][1]]
    # The module it came from is untouched.
    assert len(main_function(module).function_type.outputs.data) == 2


def test_a_crashed_batch_is_split_down_to_single_samples() -> None:
    batch = ct.TorchCase("b", ["abs", "add"])
    per_opinfo = ct._split(batch)
    assert [c.opinfos for c in per_opinfo] == [["abs"], ["add"]]
    per_sample = ct._split(per_opinfo[1])
    assert [c.sample for c in per_sample] == list(range(ct.SAMPLES_PER_OPINFO))
    assert ct._split(per_sample[0]) == []


class _CrashingPool:
    """A pool whose worker dies on any task of more than one OpInfo, and on `add`'s sample 1."""

    def __init__(self) -> None:
        self.runs: list[list[str]] = []

    def run(self, tasks: list[tuple[ct.TorchCase, str]], **_: object) -> dict:
        self.runs.append([case.name for case, _ in tasks])
        results = {}
        for case, level in tasks:
            if len(case.opinfos) > 1 or (case.opinfos == ["add"] and case.sample in (None, 1)):
                result = {"status": "fail", "category": "crash", "message": "killed by SIGSEGV"}
            else:
                index = case.sample or 0
                record = {"opinfo": case.opinfos[0], "index": index, "status": "pass"}
                result = {"status": "done", "samples": json.dumps([record])}
            results[(case.name, level)] = result
        return results


def test_crashes_are_isolated_by_running_smaller_tasks() -> None:
    pool = _CrashingPool()
    tasks = [(ct.TorchCase("b0", ["abs", "add"]), "kernel")]
    records = ct.run_tasks_isolating(pool, tasks, timeout=1.0)["kernel"]  # type: ignore[arg-type]
    assert len(pool.runs) == 3  # the batch, its OpInfos, add's samples
    by_sample = {(r["opinfo"], r["index"]): r for r in records}
    assert by_sample[("abs", 0)]["status"] == "pass"
    assert by_sample[("add", 1)]["status"] == "fail"
    assert by_sample[("add", 1)]["category"] == "crash"
    assert by_sample[("add", 1)]["reason"] == "killed by SIGSEGV"
    assert all(by_sample[("add", i)]["status"] == "pass" for i in (0, 2, 3))


def test_reasons_lose_their_location_and_group_into_families() -> None:
    message = (
        "cannot lower the model to level 'core': failed to lower 'torch.aten.sort' "
        "(aten::sort) at node 'sort_3' (conformance_torch.py:470): no lowering to core"
    )
    reason = ct.short_reason(message)
    assert reason == "failed to lower 'torch.aten.sort' (aten::sort): no lowering to core"
    imported = "<program>: node 'to_3' (f.py:4): element type torch.complex64 is not supported"
    assert ct.short_reason(imported) == "element type torch.complex64 is not supported"
    record = {"status": "fail", "category": "unsupported op", "reason": reason}
    assert ct.family(record, "aten::sort") == f"unsupported op: {reason}"
    mismatch = {"status": "fail", "category": "numeric mismatch", "reason": "output 0: 3 of 4"}
    assert ct.family(mismatch, "aten::sort") == "numeric mismatch (aten::sort)"
    # Sizes and shapes vary by sample, names of ops do not.
    shaped = {
        "status": "fail",
        "category": "unsupported op",
        "reason": "'aten::max_pool2d': a window of 3 over tensor<1x4x5xf32>",
    }
    assert ct.family(shaped, "aten::max_pool2d") == (
        "unsupported op: 'aten::max_pool2d': a window of N over tensor<...>"
    )


def test_compare_outputs_scales_atol_and_is_exact_for_integers() -> None:
    import numpy as np

    big = np.array([1000.0, 1.0], dtype=np.float32)
    assert ct.compare_outputs([big], [big + np.float32(0.05)]) is None  # within 1e-4 * 1000
    assert ct.compare_outputs([big], [big + np.float32(0.5)]) is not None
    nan = np.array([np.nan, 2.0], dtype=np.float32)
    assert ct.compare_outputs([nan], [nan.copy()]) is None
    ints = np.array([3, 4], dtype=np.int64)
    verdict = ct.compare_outputs([ints], [ints + 1])
    assert verdict is not None and verdict[0] == "numeric mismatch"
    verdict = ct.compare_outputs([ints], [ints.astype(np.int32)])
    assert verdict is not None and verdict[0] == "dtype mismatch"


def test_a_small_run_at_kernel_writes_the_scoreboard(tmp_path: Path) -> None:
    """abs (by name), conv2d (by export) and bernoulli (random, decomposes to several ops:
    not kept), through the command, its worker pool and a compile; the floor fails it."""
    out = tmp_path / "torch.md"
    code = main(
        [
            "conformance",
            "--cases",
            "torch",
            "--level",
            "kernel",
            "--jobs",
            "1",
            "--filter",
            r"^(abs|nn\.functional\.conv2d|bernoulli)$",
            "--output",
            str(out),
            "--floor",
            "1000",
        ]
    )
    assert code == 1  # below the floor
    data = json.loads(out.with_suffix(".json").read_text())
    infos = data["opinfos"]
    assert set(infos) == {"abs", "nn.functional.conv2d"}
    assert infos["nn.functional.conv2d"]["aten_op"] == "aten::convolution"
    assert infos["nn.functional.conv2d"]["matched_by"] == "export"
    assert infos["abs"]["matched_by"] == "name"
    assert "bernoulli" in data["not_kept"]
    summary = data["summary"]["kernel"]
    assert summary["total"] >= 2
    for key in ("abs", "nn.functional.conv2d"):
        samples = infos[key]["samples"]["kernel"]
        assert samples and all(s["status"] == "pass" for s in samples), samples
    text = out.read_text()
    assert "| `nn.functional.conv2d` | aten::convolution (export) |" in text
    assert f"| kernel | {summary['passed']} | {summary['total']} |" in text
