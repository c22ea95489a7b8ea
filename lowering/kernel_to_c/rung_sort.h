/* rung's library routines for kernel.call: sorting (included by rung_runtime.h).
 *
 * kernel.call @sort(%x, %values, %indices, %keys, %perm) [axis, descending]
 *   sorts every line of `x` along `axis`, stably, into `values` (same shape and
 *   type as x) and `indices` (int64, the position of each value in its line).
 *   `keys` (double, >= n elements) and `perm` (int64, >= 2n elements), n the
 *   size of the axis, are scratch, so the routine never allocates.
 *
 * The order is core.sort's (that of numpy's stable argsort of the key): each
 * element's key is its value as a double, negated when `descending`; keys go
 * in ascending order, NaNs last, equal keys (including -0.0 and 0.0) in their
 * original order. Integers compare as doubles, as the reference does.
 */
#ifndef RUNG_SORT_INCLUDED /* not RUNG_SORT_H: a model's own header may guard with that */
#define RUNG_SORT_INCLUDED

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "rung_tensor.h"

/* Whether key `a` goes strictly before key `b`: numpy's order, NaNs last. */
static inline RUNG_UNUSED bool rung_sort_before(double a, double b) {
  return a < b || (b != b && a == a);
}

/* Sorts the positions 0..n-1 by `key`, stably, into `perm`; `tmp` is n more. */
static RUNG_UNUSED void rung_sort_positions(const double *key, int64_t *perm, int64_t *tmp,
                                            int64_t n) {
  enum { RUN = 16 };
  for (int64_t i = 0; i < n; ++i) perm[i] = i;
  for (int64_t lo = 0; lo < n; lo += RUN) { /* insertion sort of short runs */
    int64_t hi = lo + RUN < n ? lo + RUN : n;
    for (int64_t i = lo + 1; i < hi; ++i) {
      int64_t v = perm[i];
      double k = key[v];
      int64_t j = i;
      while (j > lo && rung_sort_before(k, key[perm[j - 1]])) {
        perm[j] = perm[j - 1];
        --j;
      }
      perm[j] = v;
    }
  }
  int64_t *src = perm, *dst = tmp;
  for (int64_t width = RUN; width < n; width *= 2) { /* bottom-up merges */
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      int64_t mid = lo + width < n ? lo + width : n;
      int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
      int64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) dst[k++] = rung_sort_before(key[src[j]], key[src[i]]) ? src[j++] : src[i++];
      while (i < mid) dst[k++] = src[i++];
      while (j < hi) dst[k++] = src[j++];
    }
    int64_t *t = src;
    src = dst;
    dst = t;
  }
  if (src != perm) memcpy(perm, src, (size_t)n * sizeof *perm);
}

/* key[j] = (double)x[base + j * stride], for j < n. */
#define RUNG_SORT_KEYS(T, CONVERT)                                       \
  do {                                                                   \
    const T *p = (const T *)data;                                        \
    for (int64_t j = 0; j < n; ++j) key[j] = (double)CONVERT(p[base + j * stride]); \
  } while (0)

#define RUNG_SORT_AS_IS(v) (v)

static RUNG_UNUSED void rung_sort_keys(const void *data, int32_t dtype, int64_t base,
                                       int64_t stride, int64_t n, double *key) {
  switch (dtype) {
    case 1: RUNG_SORT_KEYS(float, RUNG_SORT_AS_IS); break;
    case 2: RUNG_SORT_KEYS(uint8_t, RUNG_SORT_AS_IS); break;
    case 3: RUNG_SORT_KEYS(int8_t, RUNG_SORT_AS_IS); break;
    case 4: RUNG_SORT_KEYS(uint16_t, RUNG_SORT_AS_IS); break;
    case 5: RUNG_SORT_KEYS(int16_t, RUNG_SORT_AS_IS); break;
    case 6: RUNG_SORT_KEYS(int32_t, RUNG_SORT_AS_IS); break;
    case 7: RUNG_SORT_KEYS(int64_t, RUNG_SORT_AS_IS); break;
    case 9: RUNG_SORT_KEYS(bool, RUNG_SORT_AS_IS); break;
    case 10: RUNG_SORT_KEYS(_Float16, RUNG_SORT_AS_IS); break;
    case 11: RUNG_SORT_KEYS(double, RUNG_SORT_AS_IS); break;
    case 12: RUNG_SORT_KEYS(uint32_t, RUNG_SORT_AS_IS); break;
    case 13: RUNG_SORT_KEYS(uint64_t, RUNG_SORT_AS_IS); break;
    case 16: RUNG_SORT_KEYS(uint16_t, rung_bf16_to_f32); break;
    default:
      for (int64_t j = 0; j < n; ++j) key[j] = 0.0;
  }
}

#undef RUNG_SORT_KEYS
#undef RUNG_SORT_AS_IS

/* The size in bytes of one element of an ONNX dtype (0 if unknown). */
static inline RUNG_UNUSED size_t rung_sort_element_size(int32_t dtype) {
  switch (dtype) {
    case 2: case 3: case 9: return 1;
    case 4: case 5: case 10: case 16: return 2;
    case 1: case 6: case 12: return 4;
    case 7: case 11: case 13: return 8;
    default: return 0;
  }
}

/* out[base + j * stride] = in[base + perm[j] * stride], for j < n. */
#define RUNG_SORT_GATHER(T)                                                       \
  do {                                                                            \
    const T *s = (const T *)in;                                                   \
    T *d = (T *)out;                                                              \
    for (int64_t j = 0; j < n; ++j) d[base + j * stride] = s[base + perm[j] * stride]; \
  } while (0)

static RUNG_UNUSED void rung_sort_gather(const void *in, void *out, size_t size, int64_t base,
                                         int64_t stride, int64_t n, const int64_t *perm) {
  switch (size) {
    case 1: RUNG_SORT_GATHER(uint8_t); break;
    case 2: RUNG_SORT_GATHER(uint16_t); break;
    case 4: RUNG_SORT_GATHER(uint32_t); break;
    default: RUNG_SORT_GATHER(uint64_t); break;
  }
}

#undef RUNG_SORT_GATHER

/* t = {x, values, indices, keys, perm}; args = {axis, descending}. */
static RUNG_UNUSED void rung_sort(const rung_tensor *t, const int64_t *args) {
  const rung_tensor *x = &t[0];
  int64_t axis = args[0];
  bool descending = args[1] != 0;
  int64_t outer = 1, inner = 1, n = x->shape[axis];
  for (int32_t d = 0; d < axis; ++d) outer *= x->shape[d];
  for (int32_t d = (int32_t)axis + 1; d < x->rank; ++d) inner *= x->shape[d];
  size_t size = rung_sort_element_size(x->dtype);
  int64_t *indices = (int64_t *)t[2].data;
  double *key = (double *)t[3].data;
  int64_t *perm = (int64_t *)t[4].data;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      int64_t base = o * n * inner + i;
      rung_sort_keys(x->data, x->dtype, base, inner, n, key);
      if (descending)
        for (int64_t j = 0; j < n; ++j) key[j] = -key[j];
      rung_sort_positions(key, perm, perm + n, n);
      for (int64_t j = 0; j < n; ++j) indices[base + j * inner] = perm[j];
      rung_sort_gather(x->data, t[1].data, size, base, inner, n, perm);
    }
  }
}

#endif
