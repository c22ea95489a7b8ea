"""Object detection ONNX ops → core: NonMaxSuppression.

NonMaxSuppression becomes one `core.non_max_suppression`, whose result size
is known only after the run. Its optional scalar inputs arrive as rank-0
tensors: an absent `max_output_boxes_per_class` is 0 (no box is kept) and an
absent `iou_threshold` 0, as onnxruntime reads them; an absent
`score_threshold` keeps every score, NaN included, which no threshold value
does, so it stays an absent operand. Values known only at run time are
checked before the op reads them: an `iou_threshold` outside [0, 1] fails
the run (onnxruntime refuses it too), and so do boxes and scores whose
batches or box counts differ, a scalar input that does not hold exactly one
value, or a count of kept boxes other than the one the model declares.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import Attribute, SSAValue

from rung.dialects import core
from rung.dialects.dtypes import f32, i64
from rung.dialects.onnx import generated_ops as onnx
from rung.lowering.kit import (
    CoreBuilder,
    DimOf,
    LoweringError,
    element_of,
    int_attr,
    one_value,
    ranked_shape,
    shape_of_type,
    tensor,
)

from .registry import Results, lowers

_NAME = "NonMaxSuppression"


@lowers(onnx.NonMaxSuppressionOp)
def non_max_suppression(b: CoreBuilder, op: onnx.NonMaxSuppressionOp) -> Results:
    center = int(op.attr("center_point_box"))  # type: ignore[call-overload]
    if center not in (0, 1):
        raise LoweringError(f"{_NAME}: center_point_box must be 0 or 1, got {center}")
    boxes, scores = _boxes_and_scores(b, op.boxes, op.scores)
    max_output = _scalar(b, op.max_output_boxes_per_class, i64, "max_output_boxes_per_class")
    iou = _scalar(b, op.iou_threshold, f32, "iou_threshold")
    if op.iou_threshold is not None:
        iou = _checked_iou(b, iou)
    operands = [boxes, scores, max_output, iou]
    if op.score_threshold is not None:
        operands.append(_scalar(b, op.score_threshold, f32, "score_threshold"))
    new = core.NonMaxSuppressionOp.create(
        operands=operands,
        result_types=[tensor(i64, [-1, 3])],
        properties={"center_point_box": int_attr(center)},
    )
    return [_declared(b, b.insert(new).results[0], op.selected_indices.type)]


def _declared(b: CoreBuilder, selected: SSAValue, declared: Attribute) -> SSAValue:
    """`selected` with the type the model declares; a count it declares is checked at run
    time, since only the run knows how many boxes are kept."""
    shape = shape_of_type(declared)
    if shape is not None and len(shape) == 2 and shape[0] >= 0:
        count = b.shape_vector([DimOf(selected, 0)])
        same = b.compare("eq", count, b.constant(np.array([shape[0]], np.int64)))
        message = f"{_NAME}: the count of kept boxes differs from {shape[0]}, the model's"
        selected = b.check(selected, same, message)
    return b.retype(selected, declared)


def _boxes_and_scores(
    b: CoreBuilder, boxes: SSAValue, scores: SSAValue
) -> tuple[SSAValue, SSAValue]:
    """`boxes` and `scores`, checked at run time to agree where a dim is only known then."""
    shapes = {"boxes": ranked_shape(boxes), "scores": ranked_shape(scores)}
    for what, value in (("boxes", boxes), ("scores", scores)):
        if len(shapes[what]) != 3 or element_of(value.type) != f32:
            raise LoweringError(f"{_NAME}: {what} must be a rank-3 float tensor, got {value.type}")
    (nb, n, four), (ns, _, ms) = shapes["boxes"], shapes["scores"]
    if four not in (-1, 4):
        raise LoweringError(f"{_NAME}: boxes must have 4 numbers per box, got {boxes.type}")
    pairs = [(0, 0, nb, ns), (1, 2, n, ms)]
    if any(x >= 0 and y >= 0 and x != y for _, _, x, y in pairs):
        raise LoweringError(
            f"{_NAME}: boxes {boxes.type} and scores {scores.type} differ in their batches or boxes"
        )
    if four < 0:
        boxes = b.check(
            boxes, _equal(b, [DimOf(boxes, 2)], [4]), f"{_NAME}: boxes must have 4 numbers per box"
        )
    unknown = [(i, j) for i, j, x, y in pairs if x < 0 or y < 0]
    if unknown:
        same = _equal(
            b, [DimOf(boxes, i) for i, _ in unknown], [DimOf(scores, j) for _, j in unknown]
        )
        message = f"{_NAME}: boxes and scores differ in their batches or boxes"
        scores = b.check(scores, same, message)  # the op uses it: the check comes first
    return boxes, scores


def _equal(b: CoreBuilder, a: list[DimOf], other: list[DimOf] | list[int]) -> SSAValue:
    """An i1 vector: whether each run-time dim of `a` equals the one of `other`."""
    return b.compare("eq", b.shape_vector(a), b.shape_vector(other))


def _scalar(b: CoreBuilder, value: SSAValue | None, element: Attribute, what: str) -> SSAValue:
    """An optional scalar input as a rank-0 tensor (0 when absent)."""
    if value is None:
        return b.scalar(0, element)
    if element_of(value.type) != element:
        raise LoweringError(f"{_NAME}: {what} must be a tensor of {element}, got {value.type}")
    return one_value(b, value, f"{_NAME}: {what}")


def _checked_iou(b: CoreBuilder, iou: SSAValue) -> SSAValue:
    """`iou` once the run has checked it is in [0, 1] (NaN is not)."""
    fits = b.binary(
        "and",
        b.compare("ge", iou, b.scalar(0, f32)),
        b.compare("le", iou, b.scalar(1, f32)),
    )
    return b.check(iou, fits, f"{_NAME}: iou_threshold must be in range [0, 1]", culprit=iou)
