"""A sample rung plugin that lowers an op of a custom domain: `com.example::Twice`.

`Twice(x)` doubles its input. The importer keeps it as
`onnx.Custom "com.example" "Twice"`; this plugin's handler lowers it to core
ops like any of rung's own, so the rest of the ladder (kernel, C) needs
nothing more. Loaded by test/lit/plugins/plugin_lowering.onnxtxt with
`opt --load-plugin`, and by test/python/test_plugin_lowering.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.ir import SSAValue

from rung.dialects.onnx import CustomOp
from rung.lowering.kit import CoreBuilder

if TYPE_CHECKING:
    from rung.tools.plugins import PluginRegistry

TWICE = ("com.example", "Twice")
"""The custom op's (domain, op_type)."""


def twice(b: CoreBuilder, op: CustomOp) -> list[SSAValue]:
    """`x * 2`, in the type of `x` (ONNX cannot infer a custom op's result type)."""
    (x,) = op.inputs
    return [b.binary("mul", x, b.splat(2, x))]


def register(registry: PluginRegistry) -> None:
    """The plugin's entry point: one lowering to core."""
    registry.add_lowering(TWICE, twice)
