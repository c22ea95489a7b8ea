"""core → kernel: object detection, `core.non_max_suppression`.

The op is a call of `rung_nms` of the C runtime (`rung_nms.h`): a priority
queue walk with early exits is long C and gains nothing from being
generated. How many boxes it keeps is known only after the call, so the call
writes them into a buffer sized for the most there can be (batches × classes
× min(boxes, max_output), with max_output read at run time and clamped at 0)
and their number into a one-element buffer; the result is then allocated
with that count as its run-time size, and the rows are copied into it. The
call's scratch (each box's corners and area, and the heap of candidates) is
allocated here too, so the routine never allocates.
"""

from __future__ import annotations

from xdsl.dialects.builtin import f32, i64
from xdsl.ir import SSAValue

from rung.dialects import core, kernel

from .builder import Dim, KernelBuilder
from .constants import constant_array
from .registry import lowers

_CORNERS = 5
"""Scratch floats per box: y_min, x_min, y_max, x_max, area."""


def _scalar_index(b: KernelBuilder, buf: SSAValue) -> Dim:
    """The value of a one-element i64 buffer as an index (static when it is a constant)."""
    values = constant_array(buf)
    if values is not None:
        return int(values.reshape(-1)[0])
    return b.to_index(b.load(buf, []))


@lowers(core.NonMaxSuppressionOp)
def non_max_suppression(b: KernelBuilder, op: core.NonMaxSuppressionOp) -> list[SSAValue]:
    boxes, scores = b.buffer(op.boxes), b.buffer(op.scores)
    max_output, iou = b.buffer(op.max_output), b.buffer(op.iou_threshold)
    has_threshold = op.score_threshold is not None
    threshold = b.buffer(op.score_threshold) if op.score_threshold is not None else iou
    batches, classes, n = b.dims(scores)
    limit = b.imin(b.imax(_scalar_index(b, max_output), 0), n)
    selected = b.alloc(i64, [b.product([batches, classes, limit]), 3])
    count = b.alloc(i64, [1])
    corners = b.alloc(f32, [n, _CORNERS])
    heap = b.alloc(i64, [n])
    operands = [boxes, scores, max_output, iou, threshold, selected, count, corners, heap]
    center = op.center_point_box.value.data
    b.insert(kernel.CallOp("nms", operands, [center, int(has_threshold)]))
    total = b.to_index(b.load(count, [0]))
    out = b.alloc_for(op.result, [total, 3])

    def copy(b: KernelBuilder, ivs: list[SSAValue]) -> None:
        b.store(b.load(selected, ivs), out, ivs)

    b.parallel([total, 3], copy)
    return [out]
