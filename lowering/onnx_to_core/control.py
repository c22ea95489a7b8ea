"""ONNX control flow → core.if / core.loop.

The graph regions move into the core op unchanged; the walker then lowers
the onnx ops inside them like any others. Each region's `onnx.Yield` becomes
`core.yield` here, together with its op, so an If or Loop that cannot be
lowered keeps a valid onnx form. Sequences and optionals flowing through a
region (as block arguments, carried values or results) take their core
types first, as everywhere in their function (see `sequence.retype_containers`).
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import Operation, Region

from rung.dialects import core
from rung.dialects.onnx import OnnxOp, YieldOp

from .builder import CoreBuilder, LoweringError
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
            b.rewriter.replace_op(last, new, [])
    return moved


@lowers("If")
def if_(b: CoreBuilder, op: Operation) -> Results:
    assert isinstance(op, OnnxOp)
    retype_containers(op)
    (cond,) = [v for v in op.onnx_inputs() if v is not None]
    regions = op.graph_regions()
    new = core.IfOp.create(
        operands=[cond],
        result_types=[r.type for r in op.results],
        regions=[_take_region(b, regions["then_branch"]), _take_region(b, regions["else_branch"])],
    )
    return list(b.insert(new).results)


@lowers("Loop")
def loop(b: CoreBuilder, op: Operation) -> Results:
    """ONNX Loop and core.loop share their semantics; absent M and cond become constants."""
    assert isinstance(op, OnnxOp)
    retype_containers(op)
    max_trips, cond, *carried = op.onnx_inputs() + [None] * (2 - len(op.onnx_inputs()))
    if any(v is None for v in carried):
        raise LoweringError("a loop-carried value is absent")
    if max_trips is None:
        max_trips = b.constant(np.array(np.iinfo(np.int64).max, dtype=np.int64))
    if cond is None:
        cond = b.constant(np.array(True))
    body = _take_region(b, op.graph_regions()["body"])
    new = core.LoopOp.create(
        operands=[max_trips, cond, *carried],  # type: ignore[list-item]
        result_types=[r.type for r in op.results],
        regions=[body],
    )
    return list(b.insert(new).results)
