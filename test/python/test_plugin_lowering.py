"""Lowerings added by plugins: where they go, what they refuse, and that they run.

The sample plugin (test/lit/plugins/Inputs/lowering_plugin.py) lowers the
custom-domain op `com.example::Twice` to core; a model using it then compiles
and runs at level `kernel`. Plugin lowerings are global to the process, so
every test takes away what it added.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
import pytest
from xdsl.ir import SSAValue

from rung.dialects import core
from rung.dialects.onnx import generated_ops as onnx_ops
from rung.errors import RungError
from rung.lowering.core_to_kernel import registry as kernel_registry
from rung.lowering.kit import CoreBuilder
from rung.lowering.onnx_to_core import registry as core_registry
from rung.lowering.pipelines import Registry
from rung.runtime import InferenceSession
from rung.tools import plugins

PLUGIN = Path(__file__).resolve().parents[1] / "lit" / "plugins" / "Inputs" / "lowering_plugin.py"
TWICE = ("com.example", "Twice")

MODEL_TEXT = """
<ir_version: 8, opset_import: ["" : 21, "com.example" : 1]>
g (float[N, 3] x) => (float[N, 3] y) {
   [twice] t = com.example.Twice(x)
   [relu] y = Relu(t)
}
"""


@pytest.fixture
def plugin_lowerings() -> Iterator[None]:
    """Whatever a test adds through plugins is taken away afterwards."""
    before = dict(plugins._PLUGIN_LOWERINGS)  # pyright: ignore[reportPrivateUsage]
    yield
    added = [key for key in plugins._PLUGIN_LOWERINGS if key not in before]  # pyright: ignore[reportPrivateUsage]
    for _, op in added:
        plugins.remove_lowering(op)


def _registry(origin: str = "plugin 'test'", key: str = "test") -> plugins.PluginRegistry:
    return plugins.PluginRegistry(Registry(), origin, key)


def test_plugin_lowering_runs_at_kernel_level(plugin_lowerings: None) -> None:
    plugins.load_plugin_file(Registry(), str(PLUGIN))
    assert TWICE in core_registry.TABLE
    session = InferenceSession(onnx.parser.parse_model(MODEL_TEXT), level="kernel")
    x = np.array([[-1.5, 0.0, 2.0], [3.0, -4.0, 0.25]], dtype=np.float32)
    (y,) = session.run(None, {"x": x})
    np.testing.assert_array_equal(y, np.maximum(x * 2, 0))


def test_without_the_plugin_the_op_is_reported() -> None:
    assert TWICE not in core_registry.TABLE
    with pytest.raises(RungError, match=r"'com\.example::Twice' \(onnx\.Custom\)"):
        InferenceSession(onnx.parser.parse_model(MODEL_TEXT), level="core")


def test_loading_a_plugin_again_replaces_its_lowering(plugin_lowerings: None) -> None:
    plugins.load_plugin_file(Registry(), str(PLUGIN))
    plugins.load_plugin_file(Registry(), str(PLUGIN))  # a later run in the same process
    assert TWICE in core_registry.TABLE


def test_another_plugin_cannot_take_the_same_op(plugin_lowerings: None) -> None:
    plugins.load_plugin_file(Registry(), str(PLUGIN))
    with pytest.raises(RungError, match=r"com\.example::Twice: plugin '.*' already added one"):
        _registry().add_lowering(TWICE, _double)


def _double(b: CoreBuilder, op: onnx_ops.ReluOp) -> list[SSAValue]:
    return [b.binary("add", op.X, op.X)]


def test_onnx_op_classes_go_to_the_core_lowering(plugin_lowerings: None) -> None:
    builtin = core_registry.TABLE.get(onnx_ops.ReluOp)
    with pytest.raises(RungError, match=r"onnx\.Relu already has a ONNX → core lowering"):
        _registry().add_lowering(onnx_ops.ReluOp, _double)
    _registry().add_lowering(onnx_ops.ReluOp, _double, replace=True)
    assert core_registry.TABLE.get(onnx_ops.ReluOp) is _double
    plugins.remove_lowering(onnx_ops.ReluOp)
    assert core_registry.TABLE.get(onnx_ops.ReluOp) is builtin  # rung's own comes back


def _unary(b: object, op: core.UnaryOp) -> list[SSAValue]:
    raise AssertionError("never called")


def test_core_op_classes_go_to_the_kernel_lowering(plugin_lowerings: None) -> None:
    _registry().add_lowering(core.UnaryOp, _unary, replace=True)
    assert kernel_registry.TABLE.get(core.UnaryOp) is _unary
    assert core.UnaryOp not in core_registry.TABLE


@pytest.mark.parametrize(
    ("op", "message"),
    [
        (core.UnaryOp.name, "not 'core.unary'"),
        (int, "not class int"),
        (plugins.PluginRegistry, "not class PluginRegistry"),
        (("com.example",), r"a custom op key is \(domain, op_type\)"),
    ],
)
def test_anything_else_is_refused(op: object, message: str) -> None:
    with pytest.raises(RungError, match=message):
        _registry().add_lowering(op, _double)  # type: ignore[arg-type]


def test_a_handler_must_be_callable() -> None:
    with pytest.raises(RungError, match="must be callable"):
        _registry().add_lowering(("com.example", "Nothing"), "twice")  # type: ignore[arg-type]
