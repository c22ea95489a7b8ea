"""A sample rung plugin: a dialect, a pattern pass, a pass with an option, a pipeline.

Loaded by the lit tests in test/lit/plugins with `opt --load-plugin`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr
from xdsl.ir import Dialect
from xdsl.irdl import IRDLOperation, irdl_op_definition, prop_def
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

if TYPE_CHECKING:
    from rung.tools.plugins import PluginRegistry


@irdl_op_definition
class HelloOp(IRDLOperation):
    """`toy.hello "world"`: an op with a custom syntax, to show the dialect parses."""

    name = "toy.hello"
    greeting = prop_def(StringAttr)
    assembly_format = "$greeting attr-dict"


Toy = Dialect("toy", [HelloOp], [])


class AddiToSubi(RewritePattern):
    """Rewrites `arith.addi` into `arith.subi`: silly, but easy to see in the output."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.AddiOp, rewriter: PatternRewriter) -> None:
        rewriter.replace(op, arith.SubiOp(op.lhs, op.rhs))


@dataclass(frozen=True)
class AddiToSubiPass(ModulePass):
    """A pass made of one pattern."""

    name = "toy-addi-to-subi"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(GreedyRewritePatternApplier([AddiToSubi()])).rewrite_module(op)


@dataclass(frozen=True)
class ScaleConstantsPass(ModulePass):
    """Multiplies every integer `arith.constant` by `factor` (a pass option)."""

    name = "toy-scale-constants"

    factor: int = 2

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for constant in op.walk():
            if isinstance(constant, arith.ConstantOp) and isinstance(constant.value, IntegerAttr):
                value = constant.value
                constant.properties["value"] = IntegerAttr(
                    value.value.data * self.factor, value.type
                )


def register(registry: PluginRegistry) -> None:
    """The plugin's entry point: everything it adds to rung."""
    registry.add_dialect(Toy)
    registry.add_pass(AddiToSubiPass)
    registry.add_pass(ScaleConstantsPass)
    registry.add_pipeline(
        "toy-cleanup",
        "toy-addi-to-subi,canonicalize",
        "turn additions into subtractions, then fold",
    )
