/* rung's library routines for kernel.call: non-maximum suppression (included by rung_runtime.h).
 *
 * kernel.call @nms(%boxes, %scores, %max_output, %iou, %score_threshold, %selected, %count,
 *                  %corners, %heap) [center_point_box, has_score_threshold]
 *   is ONNX NonMaxSuppression as onnxruntime computes it. `boxes` is float
 *   [batches, n, 4], `scores` float [batches, classes, n]; `max_output` (int64),
 *   `iou` and `score_threshold` (float) hold one value each, the last read only
 *   when `has_score_threshold`. The kept boxes go to `selected` (int64 [cap, 3],
 *   rows of batch, class, box) and their number to `count` (int64 [1]);
 *   `corners` (float, >= 5n) and `heap` (int64, >= n) are scratch, so the
 *   routine never allocates. It writes at most `cap` rows: the caller sizes
 *   `selected` for batches * classes * min(n, max(max_output, 0)), all there can be.
 *   Tensors of other types or too small select nothing (count 0) rather than be
 *   read or written out of bounds.
 *
 * Per batch, then per class, the boxes whose score is above the threshold
 * leave a binary heap best first (libstdc++'s std::priority_queue, replayed
 * move for move: a higher score first, then a lower index, and with NaN scores
 * whatever order its moves give), each kept unless its IoU with a box already
 * kept for the class is above `iou` (see rung_nms_suppresses). Every float
 * operation is onnxruntime's, in float, uncontracted, so results agree bit
 * for bit even on ties with the threshold.
 */
#ifndef RUNG_NMS_INCLUDED /* not RUNG_NMS_H: a model's own header may guard with that */
#define RUNG_NMS_INCLUDED

#include <stdbool.h>
#include <stdint.h>

#include "rung_tensor.h"

/* GCC contracts a * b + c into one fused operation, rounded once, by default: not here,
 * and rung_nms stays a call, so that the caller's options do not apply to it inlined. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#define RUNG_NMS_UNCONTRACTED __attribute__((noinline))
#else
#define RUNG_NMS_UNCONTRACTED
#endif

enum { RUNG_NMS_Y_MIN, RUNG_NMS_X_MIN, RUNG_NMS_Y_MAX, RUNG_NMS_X_MAX, RUNG_NMS_AREA, RUNG_NMS_WIDTH };

/* onnxruntime's MaxMin: `b` is the minimum when a >= b (so a NaN stays in place). */
static inline RUNG_UNUSED void rung_nms_min_max(float a, float b, float *lo, float *hi) {
  bool first = a >= b;
  *lo = first ? b : a;
  *hi = first ? a : b;
}

/* Each box of one batch as y_min, x_min, y_max, x_max, area. */
static RUNG_UNUSED void rung_nms_corners(const float *box, int64_t n, bool center, float *out) {
  for (int64_t i = 0; i < n; ++i, box += 4, out += RUNG_NMS_WIDTH) {
    float x_lo, x_hi, y_lo, y_hi;
    if (center) { /* x_center, y_center, width, height */
      float half_w = box[2] / 2, half_h = box[3] / 2;
      x_lo = box[0] - half_w;
      x_hi = box[0] + half_w;
      y_lo = box[1] - half_h;
      y_hi = box[1] + half_h;
    } else { /* y1, x1, y2, x2: any two opposite corners */
      rung_nms_min_max(box[1], box[3], &x_lo, &x_hi);
      rung_nms_min_max(box[0], box[2], &y_lo, &y_hi);
    }
    float width = x_hi - x_lo, height = y_hi - y_lo;
    out[RUNG_NMS_Y_MIN] = y_lo;
    out[RUNG_NMS_X_MIN] = x_lo;
    out[RUNG_NMS_Y_MAX] = y_hi;
    out[RUNG_NMS_X_MAX] = x_hi;
    out[RUNG_NMS_AREA] = width * height;
  }
}

/* std::max(a, b) and std::min(a, b), whose choice on NaN the results depend on. */
static inline RUNG_UNUSED float rung_nms_max(float a, float b) { return a < b ? b : a; }
static inline RUNG_UNUSED float rung_nms_min(float a, float b) { return b < a ? b : a; }

/* Whether the kept box `k` suppresses the candidate `c` (rows of rung_nms_corners): their
 * intersection has positive extent and area, both areas and the union are positive, and
 * the IoU is above `iou`. A NaN anywhere makes some comparison false: no suppression. */
static RUNG_UNUSED bool rung_nms_suppresses(const float *c, const float *k, float iou) {
  float x_lo = rung_nms_max(c[RUNG_NMS_X_MIN], k[RUNG_NMS_X_MIN]);
  float x_hi = rung_nms_min(c[RUNG_NMS_X_MAX], k[RUNG_NMS_X_MAX]);
  if (x_hi <= x_lo) return false;
  float y_lo = rung_nms_max(c[RUNG_NMS_Y_MIN], k[RUNG_NMS_Y_MIN]);
  float y_hi = rung_nms_min(c[RUNG_NMS_Y_MAX], k[RUNG_NMS_Y_MAX]);
  if (y_hi <= y_lo) return false;
  float dx = x_hi - x_lo, dy = y_hi - y_lo;
  float inter = dx * dy;
  if (inter <= 0.0f) return false;
  float both = c[RUNG_NMS_AREA] + k[RUNG_NMS_AREA];
  float uni = both - inter;
  if (c[RUNG_NMS_AREA] <= 0.0f || k[RUNG_NMS_AREA] <= 0.0f || uni <= 0.0f) return false;
  return inter / uni > iou; /* uni > 0 here: no division by zero */
}

/* Whether box `a` ranks below box `b`: onnxruntime's BoxInfo operator<. */
static inline RUNG_UNUSED bool rung_nms_below(const float *score, int64_t a, int64_t b) {
  return score[a] < score[b] || (score[a] == score[b] && a > b);
}

/* libstdc++'s __adjust_heap: the hole at `hole` sinks to a leaf along the larger child,
 * then `value` rises from there, no higher than `hole`. */
static RUNG_UNUSED void rung_nms_adjust(int64_t *heap, int64_t hole, int64_t len, int64_t value,
                                        const float *score) {
  const int64_t top = hole;
  int64_t child = hole;
  while (child < (len - 1) / 2) {
    child = 2 * (child + 1);
    if (rung_nms_below(score, heap[child], heap[child - 1])) --child;
    heap[hole] = heap[child];
    hole = child;
  }
  if ((len & 1) == 0 && child == (len - 2) / 2) {
    child = 2 * (child + 1);
    heap[hole] = heap[child - 1];
    hole = child - 1;
  }
  int64_t parent = (hole - 1) / 2;
  while (hole > top && rung_nms_below(score, heap[parent], value)) {
    heap[hole] = heap[parent];
    hole = parent;
    parent = (hole - 1) / 2;
  }
  heap[hole] = value;
}

/* std::make_heap. */
static RUNG_UNUSED void rung_nms_make_heap(int64_t *heap, int64_t len, const float *score) {
  if (len < 2) return;
  for (int64_t parent = (len - 2) / 2;; --parent) {
    rung_nms_adjust(heap, parent, len, heap[parent], score);
    if (parent == 0) return;
  }
}

/* std::pop_heap then pop_back: the best box leaves; gives the new length. */
static RUNG_UNUSED int64_t rung_nms_pop(int64_t *heap, int64_t len, const float *score) {
  if (len > 1) {
    int64_t last = heap[len - 1];
    heap[len - 1] = heap[0];
    rung_nms_adjust(heap, 0, len - 1, last, score);
  }
  return len - 1;
}

/* One class of one batch: appends its kept boxes to `out` from row `total`; gives the new
 * number of rows, at most `cap`. */
static RUNG_UNUSED int64_t rung_nms_class(const float *score, const float *corners, int64_t n,
                                          const float *threshold, float iou, int64_t limit,
                                          int64_t *heap, int64_t batch, int64_t cls,
                                          int64_t *out, int64_t total, int64_t cap) {
  int64_t len = 0;
  for (int64_t i = 0; i < n; ++i)
    if (!threshold || score[i] > *threshold) heap[len++] = i;
  rung_nms_make_heap(heap, len, score);
  const int64_t first = total;
  while (len > 0 && total - first < limit && total < cap) {
    int64_t box = heap[0];
    bool keep = true;
    for (int64_t k = first; k < total && keep; ++k)
      keep = !rung_nms_suppresses(corners + RUNG_NMS_WIDTH * box,
                                  corners + RUNG_NMS_WIDTH * out[3 * k + 2], iou);
    if (keep) {
      out[3 * total] = batch;
      out[3 * total + 1] = cls;
      out[3 * total + 2] = box;
      ++total;
    }
    len = rung_nms_pop(heap, len, score);
  }
  return total;
}

/* The number of elements of `t` if it holds `dtype` with the given rank (-1: any), else -1. */
static RUNG_UNUSED int64_t rung_nms_elements(const rung_tensor *t, int32_t dtype, int32_t rank) {
  if (t->dtype != dtype || t->rank < 0 || t->rank > RUNG_MAX_RANK || (rank >= 0 && t->rank != rank))
    return -1;
  int64_t count = 1;
  for (int32_t d = 0; d < t->rank; ++d) {
    if (t->shape[d] < 0) return -1;
    count = t->shape[d] == 0 || count <= INT64_MAX / t->shape[d] ? count * t->shape[d] : INT64_MAX;
  }
  return count;
}

/* Whether the call's tensors have the types and sizes rung_nms reads and writes. */
static RUNG_UNUSED bool rung_nms_fits(const rung_tensor *t, bool has_threshold) {
  const rung_tensor *boxes = &t[0], *scores = &t[1];
  if (rung_nms_elements(boxes, 1, 3) < 0 || rung_nms_elements(scores, 1, 3) < 0) return false;
  int64_t n = scores->shape[2], corners = rung_nms_elements(&t[7], 1, -1);
  return boxes->shape[0] == scores->shape[0] && boxes->shape[1] == n && boxes->shape[2] == 4 &&
         rung_nms_elements(&t[2], 7, -1) >= 1 && rung_nms_elements(&t[3], 1, -1) >= 1 &&
         (!has_threshold || rung_nms_elements(&t[4], 1, -1) >= 1) &&
         rung_nms_elements(&t[5], 7, 2) >= 0 && t[5].shape[1] == 3 &&
         rung_nms_elements(&t[6], 7, -1) >= 1 && corners >= 0 && corners / RUNG_NMS_WIDTH >= n &&
         rung_nms_elements(&t[8], 7, -1) >= n;
}

/* t = {boxes, scores, max_output, iou, score_threshold, selected, count, corners, heap};
 * args = {center_point_box, has_score_threshold}. Tensors that do not fit (which the
 * lowering and the checks before the call rule out) select nothing rather than read or
 * write out of bounds. */
static RUNG_UNUSED RUNG_NMS_UNCONTRACTED void rung_nms(const rung_tensor *t,
                                                         const int64_t *args) {
  const bool has_threshold = args[1] != 0;
  int64_t total = 0;
  if (rung_nms_fits(t, has_threshold)) {
    int64_t batches = t[1].shape[0], classes = t[1].shape[1], n = t[1].shape[2];
    int64_t cap = t[5].shape[0];
    int64_t limit = *(const int64_t *)t[2].data;
    if (limit > n) limit = n;
    const float iou = *(const float *)t[3].data;
    const float *threshold = has_threshold ? (const float *)t[4].data : 0;
    const float *box = (const float *)t[0].data, *score = (const float *)t[1].data;
    float *corners = (float *)t[7].data;
    int64_t *heap = (int64_t *)t[8].data, *out = (int64_t *)t[5].data;
    for (int64_t b = 0; b < batches && limit > 0; ++b) {
      rung_nms_corners(box + 4 * n * b, n, args[0] != 0, corners);
      for (int64_t c = 0; c < classes; ++c)
        total = rung_nms_class(score + n * (classes * b + c), corners, n, threshold, iou, limit,
                               heap, b, c, out, total, cap);
    }
  }
  if (rung_nms_elements(&t[6], 7, -1) >= 1) *(int64_t *)t[6].data = total;
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif
#undef RUNG_NMS_UNCONTRACTED

#endif
