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
from xdsl.ir import Region

from rung.dialects import core
from rung.dialects.onnx import YieldOp
from rung.dialects.onnx import generated_ops as onnx
from rung.lowering.kit import CoreBuilder

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


@lowers(onnx.IfOp)
def if_(b: CoreBuilder, op: onnx.IfOp) -> Results:
    retype_containers(op)
    new = core.IfOp.create(
        operands=[op.cond],
        result_types=[r.type for r in op.outputs],
        regions=[_take_region(b, op.then_branch), _take_region(b, op.else_branch)],
    )
    return list(b.insert(new).results)


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
