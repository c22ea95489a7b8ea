"""`core-hoist-loop-invariants`: shape arithmetic that a loop repeats moves before it.

An ONNX Scan or Loop body reshapes the slices it takes with sizes it computes
from their shapes (`Shape → Slice → Concat → Reshape`, as an exporter or an
expanded function writes it). When the graph's inputs have run-time dims,
those sizes are only known at run time, and the kernel level must size each
per-iteration output's stacked buffer before the loop starts: it can only do
so when the row's sizes are computed from values defined outside the loop.

So, inside each `core.loop` body:

* a `core.shape_of` of a value made in the body is rewritten in terms of the
  shapes of what the value is made from (a gather's input and indices, a
  reshape's or broadcast's target sizes, a transpose's input, …), when that
  reaches values defined before the loop; a slice of a tensor taken at the
  iteration number has the shape of the tensor's other dims, whatever the
  iteration;
* then each pure op whose operands are all defined before the loop and whose
  results are small integer tensors (shape arithmetic) moves before the loop,
  inner loops first, so that it can leave every loop it does not depend on;
* and again, until nothing changes: a size moved out makes more shapes
  computable before the loop.

Only shape-sized integer results move: hoisting them costs next to nothing
when the loop runs zero times, and integer division, remainder and power,
which could fault on values the loop would never have used, stay where they
are.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerType, ModuleOp, TensorType
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.traits import Pure

from rung.dialects import core
from rung.lowering.kit import CoreBuilder, is_static, ranked_shape, shape_of_type

MAX_HOISTED_ELEMENTS = 64
"""The largest integer tensor counted as shape arithmetic."""

_TRAPPING = ("div", "rem", "mod", "pow")
"""Binary functions that could fail or be undefined on integers outside the loop."""

_SAME_SHAPE = (core.UnaryOp, core.CastOp, core.CheckOp, core.BinaryOp, core.SelectOp)
"""Ops whose result has the shape of their first operand."""


def _inside(v: SSAValue | Operation, loop: core.LoopOp) -> bool:
    """Whether `v` (a value or an op) is defined in `loop`'s body."""
    if isinstance(v, Operation):
        op: Operation | None = v
    elif isinstance(v, BlockArgument):
        op = v.block.parent_op()
    else:
        assert isinstance(v.owner, Operation)
        op = v.owner
    return op is not None and loop.is_ancestor(op)


def _forwardable(v: SSAValue, loop: core.LoopOp) -> bool:
    """Whether the shape of `v` can be computed from values defined before `loop`."""
    if not _inside(v, loop) or is_static(v.type):
        return True
    owner = v.owner
    if isinstance(owner, core.GatherOp):
        return _forwardable(owner.input, loop) and _forwardable(owner.indices, loop)
    if isinstance(owner, core.ReshapeOp | core.BroadcastOp):
        return all(not _inside(s, loop) for s in owner.shape) and len(owner.shape) == 1
    if isinstance(owner, (core.TransposeOp, *_SAME_SHAPE)):
        return _forwardable(owner.operands[0], loop)
    if isinstance(owner, core.MatmulOp):
        return _forwardable(owner.lhs, loop) and _forwardable(owner.rhs, loop)
    return False


def _shape(b: CoreBuilder, v: SSAValue, loop: core.LoopOp) -> SSAValue:
    """The shape of `v` (a 1-D i64 tensor), from values outside `loop` where it can be."""
    if is_static(v.type):
        return b.constant(np.array(ranked_shape(v), np.int64))
    owner = v.owner
    if not _inside(v, loop) or not _forwardable(v, loop):
        return b.shape_of(v)
    if isinstance(owner, core.GatherOp):
        axis = owner.axis.value.data
        source = _shape(b, owner.input, loop)
        rank = len(ranked_shape(owner.input))
        parts = [b.slice(source, [0], [axis])] if axis else []
        if ranked_shape(owner.indices):
            parts.append(_shape(b, owner.indices, loop))
        if axis + 1 < rank:
            parts.append(b.slice(source, [axis + 1], [rank - axis - 1]))
        if not parts:
            return b.constant(np.zeros(0, np.int64))
        return b.concat(parts, 0)
    if isinstance(owner, core.ReshapeOp | core.BroadcastOp):
        return owner.shape[0]
    if isinstance(owner, core.TransposeOp):
        perm = np.array(owner.perm.get_values(), np.int64)
        return b.gather(_shape(b, owner.input, loop), b.constant(perm), 0)
    if isinstance(owner, core.MatmulOp):  # [B…, M] of the lhs, then N of the rhs
        rank = len(ranked_shape(owner.lhs))
        lead = b.slice(_shape(b, owner.lhs, loop), [0], [rank - 1])
        return b.concat([lead, b.slice(_shape(b, owner.rhs, loop), [rank - 1], [1])], 0)
    return _shape(b, owner.operands[0], loop)


def _positive(v: SSAValue) -> bool:
    """Whether `v` is sure to hold no zero or negative element: a constant such, or the
    max of anything and one (as a Reshape's inferred dim divides by)."""
    owner = v.owner
    if isinstance(owner, core.ConstantOp):
        return bool((owner.array() > 0).all())
    if isinstance(owner, core.BinaryOp) and owner.fn.data == "max":
        return _positive(owner.lhs) or _positive(owner.rhs)
    return False


def _is_shape_arithmetic(op: Operation) -> bool:
    """A pure op on small integer tensors: cheap to run before a loop, even one that runs
    zero times. (A `core.check` of shapes moves too: the shapes it compares are the
    loop's operands', which must agree whether or not the loop runs.)"""
    if op.regions or not op.has_trait(Pure) or isinstance(op, core.LoopOp):
        return False
    if isinstance(op, core.BinaryOp) and op.fn.data in _TRAPPING and not _positive(op.rhs):
        return False
    for r in op.results:
        t = r.type
        if not isinstance(t, TensorType) or not isinstance(t.element_type, IntegerType):
            return False
        shape = shape_of_type(t)
        if shape is None or len(shape) > 1 or any(d < 0 for d in shape):
            return False
        if int(np.prod(shape, dtype=np.int64)) > MAX_HOISTED_ELEMENTS:
            return False
    return True


def _forward_shapes(loop: core.LoopOp) -> bool:
    """Rewrite each `shape_of` in the body that can be computed before the loop;
    whether any was."""
    changed = False
    for op in list(loop.body.walk()):
        if not isinstance(op, core.ShapeOfOp) or not _inside(op.input, loop):
            continue
        if is_static(op.input.type) or not _forwardable(op.input, loop):
            continue
        b = CoreBuilder(PatternRewriter(op), op)
        shape = _shape(b, op.input, loop)
        if shape.type != op.result.type:
            continue
        op.result.replace_all_uses_with(shape)
        op.detach()
        op.erase()
        changed = True
    return changed


def _hoist(loop: core.LoopOp) -> bool:
    """Move the body's invariant shape arithmetic before the loop, in order; whether
    any moved."""
    parent = loop.parent_block()
    assert parent is not None
    body: Block = loop.body.block
    moved = False
    for op in list(body.ops):
        if not _is_shape_arithmetic(op) or any(_inside(v, loop) for v in op.operands):
            continue
        op.detach()
        parent.insert_op_before(op, loop)
        moved = True
    return moved


@dataclass(frozen=True)
class HoistLoopInvariantsPass(ModulePass):
    """Move the shape arithmetic a loop repeats before it (see the module's docstring)."""

    name = "core-hoist-loop-invariants"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        loops = [o for o in op.walk() if isinstance(o, core.LoopOp)]
        for loop in reversed(loops):  # inner loops first
            # A hoisted size makes more shapes computable before the loop, and so on.
            while _forward_shapes(loop) | _hoist(loop):
                pass
