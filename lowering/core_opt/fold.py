"""`core-fold-constants`: evaluate core ops whose operands are all constants.

(And the shape of a statically shaped tensor is a constant too.)

Exporters compute shapes, pads and masks with chains of small ops on
constants; the ONNX → core lowering already folds what a handler needs to
see, but whatever is left (and whatever later passes expose) is folded here
by running the op in the core interpreter, the dialect's executable spec.
Results larger than `FOLD_LIMIT` elements stay unfolded: a broadcast of a
scalar weight fill would otherwise become hundreds of megabytes of constant.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.traits import Pure

from rung.dialects import core
from rung.lowering.kit import FOLD_LIMIT, CoreBuilder, constant_array, is_static

UNFOLDED = (core.ConstantOp, core.BroadcastOp, core.IotaOp)
"""Ops already in their cheapest form: a broadcast of a constant (a splat) is
smaller and faster than the tensor it stands for, and so is an iota."""


def foldable(op: Operation) -> bool:
    """A pure, region-free core op with static, small results and constant operands."""
    if not op.name.startswith("core.") or isinstance(op, UNFOLDED) or op.regions:
        return False
    if not op.has_trait(Pure) or not op.results or not op.operands:
        return False
    for result in op.results:
        if not is_static(result.type):
            return False
        if int(np.prod(result.type.get_shape())) > FOLD_LIMIT:  # type: ignore[attr-defined]
            return False
    return all(_constant_like(v.owner) for v in op.operands)


def _constant_like(owner: object) -> bool:
    """A constant, or a splat or iota built from constants only."""
    if isinstance(owner, core.ConstantOp):
        return True
    return isinstance(owner, core.BroadcastOp | core.IotaOp) and all(
        isinstance(v.owner, core.ConstantOp) for v in owner.operands
    )


@dataclass
class FoldConstantOp(RewritePattern):
    """Replace a foldable op by `core.constant`s of its results."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, core.ShapeOfOp) and is_static(op.input.type):
            shape = op.input.type.get_shape()  # type: ignore[attr-defined]
            builder = CoreBuilder(rewriter, op)
            rewriter.replace(op, [], [builder.constant(np.array(shape, np.int64))])
            return
        if not foldable(op):
            return
        values = [constant_array(r) for r in op.results]
        if any(v is None for v in values):
            return
        builder = CoreBuilder(rewriter, op)
        new = [
            builder.constant(np.asarray(v), like=r.type)
            for v, r in zip(values, op.results, strict=True)
        ]
        rewriter.replace(op, [], new)


@dataclass
class SelectOnUniformCondition(RewritePattern):
    """`select(all-true, a, b)` is `a` and `select(all-false, a, b)` is `b`.

    Lowerings choose between a run-time value and a constant with masks that
    are often constant (Reshape's "0 copies the input dim" rule); picking the
    operand keeps the constant visible to later folds and to static shapes.
    """

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, core.SelectOp) or not _constant_like(op.cond.owner):
            return
        cond = constant_array(op.cond)
        if cond is None or cond.size == 0:
            return
        chosen = op.on_true if bool(cond.all()) else op.on_false if not cond.any() else None
        if chosen is not None and chosen.type == op.result.type:
            rewriter.replace(op, [], [chosen])


@dataclass(frozen=True)
class FoldConstantsPass(ModulePass):
    """Fold core ops on constants into constants (then `cse`/`dce` tidy up)."""

    name = "core-fold-constants"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier([SelectOnUniformCondition(), FoldConstantOp()])
        ).rewrite_module(op)
