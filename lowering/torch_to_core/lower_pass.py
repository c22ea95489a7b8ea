"""The `convert-torch-to-core` pass: apply every handler, then check nothing is left.

As for ONNX, legality is checked after the rewrite: every torch-dialect op
still present is reported with its op, its overload, its FX node and the
user's source line, and the reason its handler gave; the pass then fails,
unless `allow-partial` asks to see how far it got. A module without torch
ops passes through unchanged, so `lower-to-core` serves both frontends.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.arith import ConstantOp as ArithConstantOp
from xdsl.dialects.builtin import (
    FileLineColLoc,
    FunctionType,
    IntegerAttr,
    ModuleOp,
    NameLoc,
    StringAttr,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern
from xdsl.utils.exceptions import PassFailedException

from rung.dialects.torch import TorchOp
from rung.dialects.torch.extras import EXTRA_OPS, SYMBOL_TYPES
from rung.lowering.kit import CoreBuilder, LoweringError
from rung.lowering.kit.progress import OpCounter

from .registry import lowering_for

_TORCH_OPS = (TorchOp, *EXTRA_OPS)


@dataclass
class LowerTorchOps(RewritePattern):
    """Replace each torch op that has a handler by the core ops the handler builds.

    Scalars of symbolic sizes (`i64` values of `torch.sym_size` and friends,
    and the `arith.constant`s they are computed with) become 0-d core tensors.
    """

    failures: dict[Operation, str] = field(default_factory=dict)
    counter: OpCounter | None = None

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op in self.failures:
            return
        if self.counter is not None and isinstance(op, _TORCH_OPS):
            self.counter.tick()
        if isinstance(op, ArithConstantOp) and op.result.type in SYMBOL_TYPES:
            if any(isinstance(u.operation, _TORCH_OPS) for u in op.result.uses):
                builder = CoreBuilder(rewriter, op)
                value = op.value
                assert isinstance(value, IntegerAttr) or hasattr(value, "value")
                number = value.value.data  # type: ignore[union-attr]
                builder.replace([builder.scalar(number, op.result.type)])
            return
        if not isinstance(op, _TORCH_OPS):
            return
        handler = lowering_for(op)
        if handler is None:
            return
        builder = CoreBuilder(rewriter, op)
        try:
            results = handler(builder, op)
        except LoweringError as err:
            self.failures[op] = err.message
            return
        builder.replace(results)


def _results_as_returned(func: FuncOp) -> None:
    """Give `func` the types of the values it returns (a lowering may know a dim better)."""
    ret = func.body.block.last_op if func.body.blocks else None
    if not isinstance(ret, ReturnOp):
        return
    returned = [v.type for v in ret.arguments]
    if returned != list(func.function_type.outputs.data):
        func.function_type = FunctionType.from_lists(list(func.function_type.inputs.data), returned)


def describe(op: Operation, module: ModuleOp) -> str:
    """`'torch.aten.foo' (aten::foo.bar) at model.pt2:node 'view' (model.py:7)`."""
    what = f"'{op.name}'"
    if isinstance(op, TorchOp):
        what += f" ({op.SCHEMA.qualified_name})"
    source = module.attributes.get("torch.source")
    file = f"{source.data}:" if isinstance(source, StringAttr) else ""
    loc = op.location
    if not isinstance(loc, NameLoc):
        return f"{what} at {file}an unnamed node"
    where = f"{what} at {file}node '{loc.desc.data}'"
    child = loc.location
    if isinstance(child, FileLineColLoc):
        where += f" ({os.path.basename(child.filename.data)}:{child.line.data})"
    return where


@dataclass(frozen=True)
class TorchToCorePass(ModulePass):
    """Lower the torch dialect to the core dialect."""

    name = "convert-torch-to-core"

    allow_partial: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not any(isinstance(o, _TORCH_OPS) for o in op.walk()):
            return
        count = sum(isinstance(o, _TORCH_OPS) for o in op.walk())
        pattern = LowerTorchOps(counter=OpCounter(self.name, count))
        PatternRewriteWalker(pattern, apply_recursively=False).rewrite_module(op)
        for func in op.body.block.ops:
            if isinstance(func, FuncOp):
                _results_as_returned(func)
        left = [o for o in op.walk() if isinstance(o, _TORCH_OPS)]
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


__all__ = ["LowerTorchOps", "TorchToCorePass", "describe"]
