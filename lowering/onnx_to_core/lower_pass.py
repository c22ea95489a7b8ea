"""The `convert-onnx-to-core` pass: apply every handler, then check nothing is left.

xDSL has no conversion target, so legality is checked here: after the
rewrite, every onnx-dialect op still present is reported with its op name,
opset, node name and the reason its handler gave, and the pass fails, unless
`allow-partial` asks to see how far it got.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import FunctionType, ModuleOp, NameLoc, StringAttr
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.utils.exceptions import PassFailedException

from rung.dialects.onnx import CustomOp, OnnxOp
from rung.errors import RungError
from rung.lowering.kit import CoreBuilder, LoweringError
from rung.lowering.kit.progress import OpCounter

from .onnx_node import inline_expansion, needs_refinement, refine_result_types
from .registry import lowering_for
from .sequence import retype_function


@dataclass
class LowerOnnxOps(RewritePattern):
    """Replace each onnx op that has a handler by the core ops the handler builds.

    Handlers are found in the registry's table by op class; `onnx.Custom` ops by
    their (domain, op_type).
    """

    failures: dict[Operation, str] = field(default_factory=dict)
    counter: OpCounter | None = None

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op in self.failures or not isinstance(op, OnnxOp | CustomOp):
            return
        if self.counter is not None:
            self.counter.tick()
        handler = lowering_for(op)
        if handler is None:
            if isinstance(op, OnnxOp):
                self.expand(op, rewriter)
            return
        if isinstance(op, OnnxOp) and needs_refinement(op):
            refine_result_types(op)
        builder = CoreBuilder(rewriter, op)
        try:
            results = handler(builder, op)
        except LoweringError as err:
            self.failures[op] = err.message
            return
        builder.replace(results)

    def expand(self, op: OnnxOp, rewriter: PatternRewriter) -> None:
        """Lower an op without a handler through ONNX's function body for it, if any.

        The body's ops are inserted before `op` (where the walk has already
        been), so they are lowered here, in order, nested ops included.
        """
        if needs_refinement(op):
            refine_result_types(op)
        try:
            inserted = inline_expansion(op, rewriter)
        except RungError as err:
            self.failures[op] = f"cannot expand its ONNX function body: {err.message}"
            return
        if inserted is None:
            return
        root = inserted[0].get_toplevel_object() if inserted else None
        for new in inserted:
            for inner in list(new.walk()):
                # An If folded on a constant condition drops its other branch unlowered.
                if inner.get_toplevel_object() is root:
                    self.match_and_rewrite(inner, rewriter)


def _results_as_returned(func: FuncOp) -> None:
    """Give `func` the types of the values it returns as its result types.

    A declared output type is a claim: where a lowering computed another type
    for the value (a function body's run-time dim where ONNX inferred a
    static one), the computed one is the function's result.
    """
    ret = func.body.block.last_op if func.body.blocks else None
    if not isinstance(ret, ReturnOp):
        return
    returned = [v.type for v in ret.arguments]
    if returned != list(func.function_type.outputs.data):
        func.function_type = FunctionType.from_lists(list(func.function_type.inputs.data), returned)


def describe(op: Operation, module: ModuleOp) -> str:
    """`'onnx.Foo' (opset 28) at model.onnx:node 'conv_3'` for diagnostics."""
    if isinstance(op, OnnxOp):
        what = f"'{op.name}' (opset {op.SCHEMA.version})"
    elif isinstance(op, CustomOp):
        what = f"'{op.domain.data}::{op.op_type.data}' (onnx.Custom)"
    else:
        what = f"'{op.name}'"
    source = module.attributes.get("onnx.source")
    file = source.data if isinstance(source, StringAttr) else "<module>"
    loc = op.location
    node = f"node '{loc.desc.data}'" if isinstance(loc, NameLoc) else "an unnamed node"
    return f"{what} at {file}:{node}"


@dataclass(frozen=True)
class OnnxToCorePass(ModulePass):
    """Lower the onnx dialect to the core dialect."""

    name = "convert-onnx-to-core"

    allow_partial: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func in op.body.block.ops:
            if isinstance(func, FuncOp):
                retype_function(func)  # sequences and optionals: one core type at every use
        count = sum(isinstance(o, OnnxOp | CustomOp) for o in op.walk())
        pattern = LowerOnnxOps(counter=OpCounter(self.name, count))
        PatternRewriteWalker(pattern, apply_recursively=False).rewrite_module(op)
        for func in op.body.block.ops:
            if isinstance(func, FuncOp):
                _results_as_returned(func)
        left = [o for o in op.walk() if isinstance(o, OnnxOp | CustomOp)]
        if not left or self.allow_partial:
            return
        lines = []
        for o in left:
            reason = pattern.failures.get(o) or (
                "no lowering to core" if lowering_for(o) is None else "not lowered"
            )
            lines.append(f"failed to lower {describe(o, op)}: {reason}")
        more = f" (and {len(lines) - 20} more)" if len(lines) > 20 else ""
        raise PassFailedException("\n".join(lines[:20]) + more)


__all__ = ["LowerOnnxOps", "OnnxToCorePass", "describe", "LoweringError"]
