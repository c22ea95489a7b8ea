"""The level driver: which level a module is at, which stages lower it, their timings and errors."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from onnx import TensorProto, helper
from xdsl.dialects.builtin import ModuleOp

from rung.dialects import context, parse_module, print_module
from rung.errors import RungError, UnsupportedOpError
from rung.importers.onnx import import_model
from rung.lowering.pipelines import default_registry
from rung.runtime.levels import (
    chain,
    get_level,
    level_of,
    lower,
    register_level,
    stages,
    unregister_level,
)


def onnx_module(op: str = "Relu", domain: str = "") -> ModuleOp:
    graph = helper.make_graph(
        [helper.make_node(op, ["x"], ["y"], domain=domain)],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
    )
    opsets = [helper.make_opsetid("", 21)]
    if domain:
        opsets.append(helper.make_opsetid(domain, 1))
    return import_model(helper.make_model(graph, opset_imports=opsets, ir_version=10))


def module_at(level: str) -> ModuleOp:
    return lower(onnx_module(), level)


def ops_of(module: ModuleOp) -> set[str]:
    return {op.name.split(".", 1)[0] for op in module.walk()} - {"builtin", "func", "arith"}


@pytest.fixture
def levels() -> Iterator[list[str]]:
    """Names of levels a test registers, unregistered afterwards."""
    names: list[str] = []
    yield names
    for name in names:
        unregister_level(name)


# ---- where a module is ------------------------------------------------------------------


@pytest.mark.parametrize("level", ["onnx", "core", "kernel"])
def test_level_of_each_rung(level: str) -> None:
    assert level_of(module_at(level)).name == level


def test_a_module_without_level_ops_is_at_the_top() -> None:
    empty = parse_module(
        "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n  func.return %x : tensor<2xf32>\n}\n"
    )
    assert level_of(empty).name == "onnx"


def test_a_mixed_module_is_refused() -> None:
    onnx_text = print_module(module_at("onnx")).rstrip()
    kernel_text = print_module(module_at("kernel")).rstrip()
    kernel_func = kernel_text[kernel_text.index("\n  func.func") : kernel_text.rindex("}")]
    mixed = parse_module(onnx_text[:-1] + kernel_func.replace("@g(", "@k(") + "}\n")
    with pytest.raises(
        RungError, match=r"^'m.mlir' mixes onnx and kernel ops; .*onnx, core, kernel or torch"
    ):
        level_of(mixed, "'m.mlir'")
    with pytest.raises(RungError, match="mixes onnx and kernel ops"):
        lower(mixed, "kernel")


# ---- which stages run -------------------------------------------------------------------


def test_the_ladder_is_onnx_core_kernel() -> None:
    assert [lv.name for lv in chain("kernel")] == ["onnx", "core", "kernel"]


@pytest.mark.parametrize(
    ("start", "to", "expected"),
    [
        (
            "onnx",
            "kernel",
            [("lower-to-core", "lower-to-core"), ("lower-to-kernel", "core-to-kernel")],
        ),
        ("core", "kernel", [("lower-to-kernel", "core-to-kernel")]),
        ("kernel", "kernel", []),
        ("onnx", "core", [("lower-to-core", "lower-to-core")]),
        ("onnx", "onnx", []),
    ],
)
def test_stages_are_named_pipelines(start: str, to: str, expected: list[tuple[str, str]]) -> None:
    assert [(s.name, s.pipeline) for s in stages(start, to)] == expected


def test_stages_run_what_lower_to_kernel_runs() -> None:
    """Stage by stage, the result is that of the `lower-to-kernel` pipeline in one go."""
    by_pipeline = onnx_module()
    default_registry().build("lower-to-kernel").apply(context(), by_pipeline)
    assert print_module(lower(onnx_module(), "kernel")) == print_module(by_pipeline)


@pytest.mark.parametrize(
    ("start", "zero"),
    [("onnx", []), ("core", ["lower-to-core"]), ("kernel", ["lower-to-core", "lower-to-kernel"])],
)
def test_timings_name_every_stage_of_the_ladder(start: str, zero: list[str]) -> None:
    timings: dict[str, float] = {"import": 1.0}
    lowered = lower(module_at(start), "kernel", timings=timings)
    assert list(timings) == ["import", "lower-to-core", "lower-to-kernel"]
    assert [name for name, t in timings.items() if t == 0.0] == zero
    assert ops_of(lowered) == {"kernel"}


def test_a_level_above_cannot_be_reached() -> None:
    with pytest.raises(
        RungError,
        match=r"^the model is kernel-dialect IR; level 'core' needs onnx-, core- or torch-",
    ):
        lower(module_at("kernel"), "core")
    with pytest.raises(RungError, match="level 'onnx' needs onnx-dialect IR"):
        stages("core", "onnx")


def test_ops_of_no_level_are_refused() -> None:
    arith = parse_module(
        "func.func @f(%a: i32) -> i32 {\n  %b = arith.addi %a, %a : i32\n  func.return %b : i32\n}\n"
    )
    with pytest.raises(
        RungError,
        match=r"is not onnx-dialect IR: it has 'arith.addi'; level 'kernel' needs onnx-, core-, torch- or",
    ):
        lower(arith, "kernel")


def test_a_pass_failure_names_the_op_and_the_level() -> None:
    module = onnx_module("Foo", domain="com.example")
    with pytest.raises(UnsupportedOpError) as info:
        lower(module, "kernel", where="'m.onnx'")
    message = str(info.value)
    assert message.startswith("cannot lower 'm.onnx' to level 'kernel': failed to lower ")
    assert "'com.example::Foo'" in message


def test_copy_leaves_the_given_module_alone() -> None:
    module = onnx_module()
    before = print_module(module)
    lowered = lower(module, "kernel", copy=True)
    assert lowered is not module and print_module(module) == before
    kernel = module_at("kernel")
    assert lower(kernel, "kernel", copy=True) is kernel  # nothing to do: no copy


def test_the_lowering_of_a_level_goes_all_the_way() -> None:
    kernel = get_level("kernel").lowering(onnx_module())  # type: ignore[misc]
    assert ops_of(kernel) == {"kernel"}


# ---- levels from plugins ----------------------------------------------------------------


def test_a_plugin_level_below_core(levels: list[str]) -> None:
    seen: list[set[str]] = []

    def mark(module: ModuleOp) -> ModuleOp:
        seen.append(ops_of(module))
        return module

    register_level("core-marked", from_level="core", lowering=mark, evaluator=lambda m, i: [])
    levels.append("core-marked")
    timings: dict[str, float] = {}
    lower(onnx_module(), "core-marked", timings=timings)
    assert seen == [{"core"}]  # it got the module once core had lowered it
    assert list(timings) == ["lower-to-core", "lower-to-core-marked"]
    assert [s.name for s in stages("core", "core-marked")] == ["lower-to-core-marked"]


def test_a_plugin_level_with_a_shortcut_from_core(levels: list[str]) -> None:
    calls: list[str] = []

    def from_onnx(module: ModuleOp) -> ModuleOp:
        calls.append("onnx")
        return module

    def from_core(module: ModuleOp) -> ModuleOp:
        calls.append("core")
        return module

    register_level(
        "fast",
        lowering=from_onnx,
        from_dialects={"core": from_core},
        evaluator=lambda m, i: [],
    )
    levels.append("fast")
    lower(onnx_module(), "fast")
    lower(module_at("core"), "fast")
    assert calls == ["onnx", "core"]
    assert get_level("fast").lowering is from_onnx
    with pytest.raises(RungError, match="level 'fast' needs onnx- or core-dialect IR"):
        lower(module_at("kernel"), "fast")


def test_a_plugin_level_that_fails_keeps_its_error(levels: list[str]) -> None:
    def refuse(module: ModuleOp) -> ModuleOp:
        raise UnsupportedOpError("failed to lower 'onnx.Relu' (deliberately)")

    register_level("refusing", lowering=refuse, evaluator=lambda m, i: [])
    levels.append("refusing")
    with pytest.raises(UnsupportedOpError, match=r"^failed to lower 'onnx.Relu' \(deliberately\)$"):
        lower(onnx_module(), "refusing")


def test_levels_lowered_from_each_other_in_a_loop(levels: list[str]) -> None:
    register_level("loop-a", from_level="loop-b", lowering=None, evaluator=lambda m, i: [])
    register_level("loop-b", from_level="loop-a", lowering=None, evaluator=lambda m, i: [])
    levels += ["loop-a", "loop-b"]
    with pytest.raises(RungError, match="in a loop: loop-a → loop-b → loop-a"):
        chain("loop-a")


def test_a_level_cannot_be_lowered_from_itself() -> None:
    with pytest.raises(RungError, match="must be lowered from another level"):
        register_level("self", from_level="self", lowering=None, evaluator=lambda m, i: [])
