"""Object detection: `core.non_max_suppression`, restating onnxruntime's NonMaxSuppression.

onnxruntime is the reference, down to its float32 arithmetic and its
degenerate cases. Each box has x and y extents: its corners sorted by
`MaxMin` (`a >= b` makes `b` the minimum, so a NaN coordinate stays where it
is) or, for `center_point_box` 1, the centre minus and plus half the size;
its area is `(x_max - x_min) * (y_max - y_min)`. A kept box suppresses a
candidate when their intersection has positive extent along x, then y, and
positive area, both areas and the union `area1 + area2 - inter` are
positive, and `inter / union` is above the threshold; any NaN on the way
makes the comparison false, so it never suppresses.

Candidates leave a `std::priority_queue` (libstdc++'s binary heap), ordered by
score, then by lower index. Without NaN scores that order is total, and a
stable sort by descending score gives it; with NaN scores no order is total,
and the heap's own moves decide, so they are replayed here (`_heap_order`).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from rung.dialects import core
from rung.errors import EvaluationError

from .interpreter import Args, Scope, Value, evaluates

_CORNERS = 5
"""Per box: y_min, x_min, y_max, x_max, area."""


def _min_max(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """onnxruntime's `MaxMin(a, b)`: `(b, a)` when `a >= b`, else `(a, b)`."""
    first = a >= b
    return np.where(first, b, a), np.where(first, a, b)


def box_corners(boxes: np.ndarray, center_point_box: int) -> np.ndarray:
    """`[..., 5]` float32 (y_min, x_min, y_max, x_max, area) of `[..., 4]` boxes."""
    b = np.asarray(boxes, np.float32)
    with np.errstate(all="ignore"):
        if center_point_box:
            two = np.float32(2)
            half_w, half_h = b[..., 2] / two, b[..., 3] / two
            x_min, x_max = b[..., 0] - half_w, b[..., 0] + half_w
            y_min, y_max = b[..., 1] - half_h, b[..., 1] + half_h
        else:
            x_min, x_max = _min_max(b[..., 1], b[..., 3])
            y_min, y_max = _min_max(b[..., 0], b[..., 2])
        area = (x_max - x_min) * (y_max - y_min)
    return np.stack([y_min, x_min, y_max, x_max, area], axis=-1).astype(np.float32)


def suppressed_by(candidate: np.ndarray, kept: np.ndarray, iou_threshold: np.float32) -> bool:
    """Whether any kept box (rows of `[k, 5]`) suppresses `candidate` (`[5]`).

    `std::max(a, b)` is `a < b ? b : a` and `std::min(a, b)` is `b < a ? b : a`,
    with the candidate as `a`; both matter once a coordinate is NaN.
    """
    if len(kept) == 0:
        return False
    c = candidate
    x_lo = np.where(c[1] < kept[:, 1], kept[:, 1], c[1])
    x_hi = np.where(kept[:, 3] < c[3], kept[:, 3], c[3])
    y_lo = np.where(c[0] < kept[:, 0], kept[:, 0], c[0])
    y_hi = np.where(kept[:, 2] < c[2], kept[:, 2], c[2])
    with np.errstate(all="ignore"):
        inter = (x_hi - x_lo) * (y_hi - y_lo)
        union = (c[4] + kept[:, 4]) - inter
        iou = inter / union
    apart = (x_hi <= x_lo) | (y_hi <= y_lo) | (inter <= 0)
    degenerate = (c[4] <= 0) | (kept[:, 4] <= 0) | (union <= 0)
    return bool(np.any(~apart & ~degenerate & (iou > iou_threshold)))


def _before(scores: np.ndarray, a: int, b: int) -> bool:
    """onnxruntime's `BoxInfo` order: whether box `a` ranks below box `b` in the heap."""
    return bool(scores[a] < scores[b] or (scores[a] == scores[b] and a > b))


def _adjust_heap(heap: list[int], hole: int, length: int, value: int, scores: np.ndarray) -> None:
    """libstdc++'s `__adjust_heap`: sift the hole down to a leaf, then `value` up."""
    top, child = hole, hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if _before(scores, heap[child], heap[child - 1]):
            child -= 1
        heap[hole] = heap[child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        heap[hole] = heap[child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and _before(scores, heap[parent], value):
        heap[hole] = heap[parent]
        hole = parent
        parent = (hole - 1) // 2
    heap[hole] = value


def _heap_order(candidates: np.ndarray, scores: np.ndarray) -> Iterator[int]:
    """The boxes in the order a libstdc++ `std::priority_queue` built from `candidates`
    (`make_heap`, then `top` and `pop_heap`) gives them."""
    heap = [int(i) for i in candidates]
    length = len(heap)
    for parent in range((length - 2) // 2, -1, -1):
        _adjust_heap(heap, parent, length, heap[parent], scores)
    while length > 0:
        yield heap[0]
        if length > 1:
            last = heap[length - 1]
            heap[length - 1] = heap[0]
            _adjust_heap(heap, 0, length - 1, last, scores)
        length -= 1


def visiting_order(scores: np.ndarray, threshold: np.float32 | None) -> Iterator[int]:
    """The boxes of one class that pass the score threshold, best first."""
    candidates = np.arange(len(scores)) if threshold is None else np.flatnonzero(scores > threshold)
    chosen = scores[candidates]
    if np.isnan(chosen).any():
        return _heap_order(candidates, scores)
    return iter(candidates[np.argsort(-chosen, kind="stable")].tolist())


def non_max_suppression(
    boxes: np.ndarray,
    scores: np.ndarray,
    max_output: int,
    iou_threshold: np.float32,
    score_threshold: np.float32 | None,
    center_point_box: int,
) -> np.ndarray:
    """The `[count, 3]` int64 (batch, class, box) rows onnxruntime selects."""
    limit = max(int(max_output), 0)
    rows: list[tuple[int, int, int]] = []
    for batch in range(scores.shape[0] if limit else 0):
        corners = box_corners(boxes[batch], center_point_box)
        for cls in range(scores.shape[1]):
            kept: list[int] = []
            for box in visiting_order(scores[batch, cls], score_threshold):
                if len(kept) >= limit:
                    break
                if not suppressed_by(corners[box], corners[kept], iou_threshold):
                    kept.append(box)
                    rows.append((batch, cls, box))
    return np.array(rows, np.int64).reshape(len(rows), 3)


@evaluates(core.NonMaxSuppressionOp)
def nms(ev: Scope, op: core.NonMaxSuppressionOp, args: Args) -> list[Value]:
    boxes, scores = np.asarray(args[0], np.float32), np.asarray(args[1], np.float32)
    if boxes.shape[0] != scores.shape[0] or boxes.shape[1] != scores.shape[2]:
        raise EvaluationError(
            f"core.non_max_suppression: boxes {boxes.shape} and scores {scores.shape} "
            "differ in their batches or boxes"
        )
    threshold = np.float32(args[4]) if len(args) > 4 else None
    center = op.center_point_box.value.data
    result = non_max_suppression(
        boxes, scores, int(args[2]), np.float32(args[3]), threshold, center
    )
    return [result]


__all__ = ["box_corners", "non_max_suppression", "suppressed_by", "visiting_order"]
