"""ONNX control flow → core.if / core.loop.

The graph regions move into the core op unchanged; the walker then lowers
the onnx ops inside them like any others. Each region's `onnx.Yield` becomes
`core.yield` here, together with its op, so an If or Loop that cannot be
lowered keeps a valid onnx form. An If on a constant condition is replaced
by the branch it takes (the other is never lowered). Sequences and optionals
flowing through a region (as block arguments, carried values or results) take
their core types first, as everywhere in their function (see
`sequence.retype_containers`).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import TensorType, UnrankedTensorType, i64
from xdsl.ir import Attribute, Region, SSAValue
from xdsl.rewriter import InsertPoint

from rung.dialects import core
from rung.dialects.onnx import OnnxOp, YieldOp
from rung.dialects.onnx import generated_ops as onnx
from rung.lowering.kit import CoreBuilder, constant_array, one_value

from .registry import Results, lowers
from .sequence import retype_containers


def _take_region(b: CoreBuilder, region: Region) -> Region:
    """Move a graph region out of its onnx op, its terminator turned into core.yield."""
    moved = b.rewriter.move_region_contents_to_new_regions(region)
    for block in moved.blocks:
        last = block.last_op
        if isinstance(last, YieldOp):
            new = core.YieldOp.create(operands=list(last.values))
            new.location = last.location
            b.rewriter.replace(last, new, [])
    return moved


@lowers(onnx.IfOp)
def if_(b: CoreBuilder, op: onnx.IfOp) -> Results:
    retype_containers(op)
    taken = _taken_branch(op)
    if taken is not None:
        return _inline_branch(b, op, taken)
    cond = op.cond
    if isinstance(cond.type, TensorType):  # ONNX: a tensor of exactly one element
        cond = one_value(b, cond, "If's condition")
    new = core.IfOp.create(
        operands=[cond],
        result_types=[r.type for r in op.outputs],
        regions=[_take_region(b, op.then_branch), _take_region(b, op.else_branch)],
    )
    return list(b.insert(new).results)


def _taken_branch(op: onnx.IfOp) -> Region | None:
    """The branch a constant condition takes, when its results can stand for the If's.

    Only that branch is then lowered, and its types reach the If's users: a
    function body that picks its code by a static fact (AffineGrid's 2-D or
    3-D case, from the size operand's length) is typed as that case alone.
    """
    cond = constant_array(op.cond)
    if cond is None or cond.size != 1:
        return None
    region = op.then_branch if bool(cond.reshape(-1)[0]) else op.else_branch
    if len(region.blocks) != 1 or not isinstance(region.block.last_op, YieldOp):
        return None
    values = list(region.block.last_op.values)
    if len(values) != len(op.outputs) or not all(
        _fits(v.type, r.type) for v, r in zip(values, op.outputs, strict=True)
    ):
        return None
    return region


def _fits(computed: Attribute, declared: Attribute) -> bool:
    """Whether a value of type `computed` can be given the `declared` type (`retype`);
    an unranked one is judged by its element type (its lowering gives it a shape)."""
    tensors = (TensorType, UnrankedTensorType)
    if not isinstance(computed, tensors) or not isinstance(declared, tensors):
        return computed == declared
    if computed.element_type != declared.element_type:
        return False
    if not isinstance(computed, TensorType) or not isinstance(declared, TensorType):
        return True
    a, b = computed.get_shape(), declared.get_shape()
    return len(a) == len(b) and all(x < 0 or y < 0 or x == y for x, y in zip(a, b, strict=True))


def _inline_branch(b: CoreBuilder, op: onnx.IfOp, region: Region) -> Results:
    """Move the taken branch's ops before the If; its yielded values replace the If's.

    The onnx users take the branch's (more precise) types; other users (a
    function's return, an enclosing region's yield) keep the declared ones.
    """
    block = region.block
    terminator = block.last_op
    assert isinstance(terminator, YieldOp)
    values = list(terminator.values)
    b.rewriter.erase(terminator)
    b.rewriter.inline_block(block, InsertPoint.before(op))
    for old, new in zip(op.outputs, values, strict=True):
        typed = [u for u in old.uses if not isinstance(u.operation, OnnxOp)]
        if typed and new.type != old.type and isinstance(old.type, TensorType):
            declared = _retyped(b, new, old.type)
            for use in typed:
                use.operation.operands[use.index] = declared
    return values


def _retyped(b: CoreBuilder, v: SSAValue, target: TensorType) -> SSAValue:
    """`v` with the declared type `target`; a `v` still unranked (its producer is not
    lowered yet) gets the reshape `retype` would build once it is."""
    if isinstance(v.type, TensorType):
        return b.retype(v, target)
    shape: list[SSAValue] = []
    if any(d < 0 for d in target.get_shape()):
        rank = len(target.get_shape())
        of = core.ShapeOfOp.create(operands=[v], result_types=[TensorType(i64, [rank])])
        shape.append(b.insert(of).results[0])
    new = core.ReshapeOp.create(operands=[v, *shape], result_types=[target])
    return b.insert(new).results[0]


@lowers(onnx.LoopOp)
def loop(b: CoreBuilder, op: onnx.LoopOp) -> Results:
    """ONNX Loop and core.loop share their semantics; absent M and cond become constants."""
    retype_containers(op)
    max_trips, cond = op.M, op.cond
    if max_trips is None:
        max_trips = b.constant(np.array(np.iinfo(np.int64).max, dtype=np.int64))
    if cond is None:
        cond = b.constant(np.array(True))
    body = _take_region(b, op.body_)
    new = core.LoopOp.create(
        operands=[max_trips, cond, *op.v_initial],
        result_types=[r.type for r in op.v_final_and_scan_outputs],
        regions=[body],
    )
    return list(b.insert(new).results)
