/* rung's runtime for sequences, optionals and strings (included by rung_runtime.h).
 *
 * The C ABI (also written into each model's header when it uses them):
 *   - a string tensor is a rung_tensor of dtype 8 whose data is an array of
 *     `const char *`, one per element, each UTF-8 text ending in NUL;
 *   - a sequence is a rung_tensor of dtype RUNG_DTYPE_SEQUENCE (rank 0) whose
 *     data points to a rung_sequence: a count and that many rung_tensors;
 *   - a map (ZipMap's output) is a rung_tensor of dtype RUNG_DTYPE_MAP whose
 *     data points to a rung_sequence of two tensors, its keys and its values;
 *   - an optional is the value it holds, or a rung_tensor of dtype
 *     RUNG_DTYPE_NONE (data NULL) when it holds none.
 * Inputs are the caller's, read during the run only. Each output is one block
 * of memory allocated by the library: the descriptors, strings and data it
 * points to all lie inside its `data`, so `<prefix>_free(outputs[i].data)`
 * releases it whole.
 *
 * Inside a run, lists (`const rung_sequence *`, each one a rung_list) and
 * optionals (`const rung_tensor *`, NULL for none) are values that are never
 * written once built: a new list shares the elements of the one it is made
 * from (appends share its block of items too, see rung_list), and a buffer
 * entering a list or an optional is copied. Their storage comes from the
 * run's heap and is released when the run ends.
 */
#ifndef RUNG_SEQ_INCLUDED /* not RUNG_SEQ_H: a model's own header may guard with that */
#define RUNG_SEQ_INCLUDED

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rung_tensor.h"

#ifndef RUNG_SEQUENCE_DEFINED
#define RUNG_SEQUENCE_DEFINED
#define RUNG_DTYPE_NONE 0        /* an optional holding no value (data NULL) */
#define RUNG_DTYPE_STRING 8      /* data: const char *[count], UTF-8, NUL-terminated */
#define RUNG_DTYPE_SEQUENCE 1000 /* data: rung_sequence */
#define RUNG_DTYPE_MAP 1001      /* data: rung_sequence of {keys, values} */
typedef struct rung_sequence {
  int64_t count;
  rung_tensor *items;
} rung_sequence;
#endif

/* ---- values inside a run ------------------------------------------------------------------ */

/* A list inside a run is a rung_list: the rung_sequence the ABI describes, and the block
 * holding its items. A block may serve several lists, each seeing its first `count` items;
 * `used` is how many the longest of them sees. Appending to a list that sees all of them
 * writes where no other list looks, so it happens in place, and a loop that appends one
 * item per trip takes amortized constant time and space per item. */
typedef struct rung_seq_block {
  int64_t used, capacity;
  rung_tensor items[];
} rung_seq_block;

typedef struct rung_list {
  rung_sequence seq; /* first: a rung_list is read as a rung_sequence */
  rung_seq_block *block; /* NULL for the caller's sequences, which are never written */
} rung_list;

/* A new list of `count` (zeroed) items with room for `capacity`, on the run's heap. */
static RUNG_UNUSED rung_sequence *rung_seq_alloc(rung_heap *heap, int64_t count,
                                                 int64_t capacity) {
  rung_list *l = (rung_list *)rung_heap_alloc(heap, sizeof *l);
  rung_seq_block *b = (rung_seq_block *)rung_heap_alloc(
      heap, sizeof *b + (size_t)capacity * sizeof(rung_tensor));
  if (!l || !b) return 0;
  b->used = count;
  b->capacity = capacity;
  memset(b->items, 0, (size_t)count * sizeof(rung_tensor));
  l->seq.count = count;
  l->seq.items = b->items;
  l->block = b;
  return &l->seq;
}

/* A new list of `count` (zeroed) items, on the run's heap. */
static RUNG_UNUSED rung_sequence *rung_seq_new(rung_heap *heap, int64_t count) {
  return rung_seq_alloc(heap, count, count);
}

/* The caller's sequence `s` as a list of the run (its items read in place, never written). */
static RUNG_UNUSED const rung_sequence *rung_seq_of_input(rung_heap *heap,
                                                          const rung_sequence *s) {
  rung_list *l = (rung_list *)rung_heap_alloc(heap, sizeof *l);
  if (!l) return 0;
  l->seq = *s;
  l->block = 0;
  return &l->seq;
}

/* A new zeroed descriptor (an optional's value), on the run's heap. */
static RUNG_UNUSED rung_tensor *rung_value_new(rung_heap *heap) {
  rung_tensor *t = (rung_tensor *)rung_heap_alloc(heap, sizeof *t);
  if (t) memset(t, 0, sizeof *t);
  return t;
}

/* Makes `dst` a copy of a buffer (`bytes` bytes of `data`, of `dtype` and shape `dims`);
 * non-zero when out of memory. A string buffer's copy shares the strings. */
static RUNG_UNUSED int rung_value_put(rung_heap *heap, rung_tensor *dst, const void *data,
                                      int32_t dtype, int32_t rank, const int64_t *dims,
                                      size_t bytes) {
  void *copy = rung_heap_alloc(heap, bytes);
  if (!copy) return 1;
  if (bytes) memcpy(copy, data, bytes);
  dst->data = copy;
  dst->dtype = dtype;
  dst->rank = rank;
  for (int32_t d = 0; d < rank; ++d) dst->shape[d] = dims[d];
  return 0;
}

/* An optional input as a value of the run: NULL when empty (dtype RUNG_DTYPE_NONE), a
 * sequence wrapped as a list of the run; sets *oom when out of memory. */
static RUNG_UNUSED const rung_tensor *rung_optional_of_input(rung_heap *heap,
                                                             const rung_tensor *slot, bool *oom);

/* A descriptor holding the sequence `s` (an optional's value). */
static RUNG_UNUSED rung_tensor *rung_value_of_seq(rung_heap *heap, const rung_sequence *s) {
  rung_tensor *t = rung_value_new(heap);
  if (!t) return 0;
  t->data = (void *)s;
  t->dtype = RUNG_DTYPE_SEQUENCE;
  return t;
}

/* A new list: the items of list `s` with an empty (zeroed) slot at `at` (in [0, count]) for
 * the caller to fill; in place when it appends to a list that sees all of its block. */
static RUNG_UNUSED rung_sequence *rung_seq_insert(rung_heap *heap, const rung_sequence *s,
                                                  int64_t at) {
  rung_seq_block *block = ((const rung_list *)s)->block;
  if (block && at == s->count && block->used == s->count && block->used < block->capacity) {
    rung_list *l = (rung_list *)rung_heap_alloc(heap, sizeof *l);
    if (!l) return 0;
    memset(&block->items[at], 0, sizeof(rung_tensor));
    block->used += 1;
    l->seq.count = s->count + 1;
    l->seq.items = block->items;
    l->block = block;
    return &l->seq;
  }
  int64_t room = 2 * (s->count + 1) < 8 ? 8 : 2 * (s->count + 1);
  rung_sequence *r = rung_seq_alloc(heap, s->count + 1, room);
  if (!r) return 0;
  memcpy(r->items, s->items, (size_t)at * sizeof(rung_tensor));
  memcpy(r->items + at + 1, s->items + at, (size_t)(s->count - at) * sizeof(rung_tensor));
  return r;
}

static RUNG_UNUSED const rung_tensor *rung_optional_of_input(rung_heap *heap,
                                                             const rung_tensor *slot, bool *oom) {
  *oom = false;
  if (slot->dtype == RUNG_DTYPE_NONE) return 0;
  if (slot->dtype != RUNG_DTYPE_SEQUENCE) return slot;
  const rung_sequence *s = rung_seq_of_input(heap, (const rung_sequence *)slot->data);
  rung_tensor *t = s ? rung_value_of_seq(heap, s) : 0;
  *oom = !t;
  return t;
}

/* A new list: the items of `s` but the one at `at` (in [0, count)). */
static RUNG_UNUSED rung_sequence *rung_seq_erase(rung_heap *heap, const rung_sequence *s,
                                                 int64_t at) {
  rung_sequence *r = rung_seq_new(heap, s->count - 1);
  if (!r) return 0;
  memcpy(r->items, s->items, (size_t)at * sizeof(rung_tensor));
  memcpy(r->items + at, s->items + at + 1, (size_t)(s->count - at - 1) * sizeof(rung_tensor));
  return r;
}

/* A sequence of `values->shape[0]` maps, map i from the `keys` [C] to row i of `values`
 * [N, C] (ZipMap): one copy of each on the heap, which the maps share. */
static RUNG_UNUSED rung_sequence *rung_zip_map(rung_heap *heap, const rung_tensor *keys,
                                               const rung_tensor *values);

/* A copy of the string `s` on the run's heap, its ASCII letters made upper case if `upper`,
 * else lower case (other bytes, UTF-8 sequences included, unchanged); NULL when out of memory. */
static RUNG_UNUSED const char *rung_str_case(rung_heap *heap, const char *s, int upper) {
  size_t n = strlen(s);
  char *r = (char *)rung_heap_alloc(heap, n + 1);
  if (!r) return 0;
  for (size_t i = 0; i <= n; ++i) {
    char c = s[i];
    if (upper && c >= 'a' && c <= 'z') c = (char)(c - 'a' + 'A');
    if (!upper && c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
    r[i] = c;
  }
  return r;
}

/* ---- checks of inputs --------------------------------------------------------------------- */

/* Whether a string tensor has its array of strings, and none of them is NULL. */
static RUNG_UNUSED bool rung_strings_present(const rung_tensor *t) {
  size_t n = 1;
  for (int32_t d = 0; d < t->rank; ++d) n *= (size_t)t->shape[d];
  const char *const *p = (const char *const *)t->data;
  if (!p) return n == 0;
  for (size_t i = 0; i < n; ++i)
    if (!p[i]) return false;
  return true;
}

/* Whether `t` is a tensor of `dtype` and `rank` whose dims match `dims` (-1: any). */
static RUNG_UNUSED bool rung_tensor_fits(const rung_tensor *t, int32_t dtype, int32_t rank,
                                         const int64_t *dims) {
  if (t->dtype != dtype || t->rank != rank) return false;
  for (int32_t d = 0; d < rank; ++d)
    if (t->shape[d] < 0 || (dims[d] >= 0 && t->shape[d] != dims[d])) return false;
  return dtype != RUNG_DTYPE_STRING || rung_strings_present(t);
}

/* Whether `t` is a sequence of tensors of `dtype` (of any shapes). */
static RUNG_UNUSED bool rung_seq_fits(const rung_tensor *t, int32_t dtype) {
  if (t->dtype != RUNG_DTYPE_SEQUENCE || !t->data) return false;
  const rung_sequence *s = (const rung_sequence *)t->data;
  if (s->count < 0 || (s->count > 0 && !s->items)) return false;
  for (int64_t i = 0; i < s->count; ++i) {
    const rung_tensor *x = &s->items[i];
    if (x->dtype != dtype || x->rank < 0 || x->rank > RUNG_MAX_RANK) return false;
    for (int32_t d = 0; d < x->rank; ++d)
      if (x->shape[d] < 0) return false;
    if (dtype == RUNG_DTYPE_STRING && !rung_strings_present(x)) return false;
  }
  return true;
}

/* ---- outputs: one block each ------------------------------------------------------------- */

#define RUNG_PACK_ALIGN(n) (((n) + 15) / 16 * 16)

/* Bytes per element of a tensor of an ONNX dtype as buffers hold it. */
static RUNG_UNUSED size_t rung_dtype_size(int32_t dtype) {
  switch (dtype) {
    case 1: case 6: case 12: return 4;
    case 7: case 11: case 13: return 8;
    case 4: case 5: case 10: case 16: return 2;
    case RUNG_DTYPE_STRING: return sizeof(const char *);
    case 14: return 8;
    case 15: return 16;
    default: return 1; /* 8-bit types, bool, and the 2/4/6/8-bit types held one per byte */
  }
}

static RUNG_UNUSED size_t rung_elements(const rung_tensor *t) {
  size_t n = 1;
  for (int32_t d = 0; d < t->rank; ++d) n *= (size_t)t->shape[d];
  return n;
}

/* The bytes of a deep copy of what `v` points to (its descriptor excluded). */
static RUNG_UNUSED size_t rung_packed_bytes(const rung_tensor *v) {
  if (v->dtype == RUNG_DTYPE_NONE) return 0;
  if (v->dtype == RUNG_DTYPE_SEQUENCE || v->dtype == RUNG_DTYPE_MAP) {
    const rung_sequence *s = (const rung_sequence *)v->data;
    size_t n = RUNG_PACK_ALIGN(sizeof *s + (size_t)s->count * sizeof(rung_tensor));
    for (int64_t i = 0; i < s->count; ++i) n += RUNG_PACK_ALIGN(rung_packed_bytes(&s->items[i]));
    return n;
  }
  size_t count = rung_elements(v);
  if (v->dtype == RUNG_DTYPE_STRING) {
    const char *const *p = (const char *const *)v->data;
    size_t n = count * sizeof(char *);
    for (size_t i = 0; i < count; ++i) n += strlen(p[i]) + 1;
    return n;
  }
  return count * rung_dtype_size(v->dtype);
}

/* Copies what `v` points to into `block` (rung_packed_bytes(v) bytes); `out` describes it. */
static RUNG_UNUSED void rung_pack_at(const rung_tensor *v, rung_tensor *out, char *block) {
  *out = *v;
  out->data = v->dtype == RUNG_DTYPE_NONE ? 0 : block;
  if (v->dtype == RUNG_DTYPE_NONE) return;
  if (v->dtype == RUNG_DTYPE_SEQUENCE || v->dtype == RUNG_DTYPE_MAP) {
    const rung_sequence *s = (const rung_sequence *)v->data;
    rung_sequence *r = (rung_sequence *)block;
    r->count = s->count;
    r->items = (rung_tensor *)(r + 1);
    size_t at = RUNG_PACK_ALIGN(sizeof *s + (size_t)s->count * sizeof(rung_tensor));
    for (int64_t i = 0; i < s->count; ++i) {
      rung_pack_at(&s->items[i], &r->items[i], block + at);
      at += RUNG_PACK_ALIGN(rung_packed_bytes(&s->items[i]));
    }
    return;
  }
  size_t count = rung_elements(v);
  if (v->dtype == RUNG_DTYPE_STRING) {
    const char *const *p = (const char *const *)v->data;
    char **q = (char **)block;
    char *text = block + count * sizeof(char *);
    for (size_t i = 0; i < count; ++i) {
      size_t len = strlen(p[i]) + 1;
      memcpy(text, p[i], len);
      q[i] = text;
      text += len;
    }
    return;
  }
  size_t bytes = count * rung_dtype_size(v->dtype);
  if (bytes) memcpy(block, v->data, bytes);
}

/* Fills the output `out` with a deep copy of `v` in one malloc'd block (none for an empty
 * optional); non-zero when out of memory. */
static RUNG_UNUSED int rung_pack_value(const rung_tensor *v, rung_tensor *out) {
  if (v->dtype == RUNG_DTYPE_NONE) {
    *out = *v;
    out->data = 0;
    return 0;
  }
  size_t bytes = rung_packed_bytes(v);
  char *block = (char *)malloc(bytes ? bytes : 1);
  if (!block) return 1;
  rung_pack_at(v, out, block);
  return 0;
}

/* ---- maps --------------------------------------------------------------------------------- */

static RUNG_UNUSED rung_sequence *rung_zip_map(rung_heap *heap, const rung_tensor *keys,
                                               const rung_tensor *values) {
  const int64_t n = values->shape[0], c = values->shape[1];
  const size_t key_bytes = (size_t)c * rung_dtype_size(keys->dtype);
  const size_t row_bytes = (size_t)c * rung_dtype_size(values->dtype);
  rung_sequence *s = rung_seq_new(heap, n);
  char *k = (char *)rung_heap_alloc(heap, key_bytes);
  char *v = (char *)rung_heap_alloc(heap, (size_t)n * row_bytes);
  rung_sequence *maps =
      (rung_sequence *)rung_heap_alloc(heap, (size_t)n * (sizeof *maps + 2 * sizeof(rung_tensor)));
  if (!s || !k || !v || !maps) return 0;
  if (key_bytes) memcpy(k, keys->data, key_bytes);
  if (n > 0 && row_bytes > 0) memcpy(v, values->data, (size_t)n * row_bytes);
  rung_tensor *pairs = (rung_tensor *)(maps + n);
  for (int64_t i = 0; i < n; ++i) {
    rung_tensor *pair = pairs + 2 * i;
    pair[0] = (rung_tensor){k, keys->dtype, 1, {c}};
    pair[1] = (rung_tensor){v + (size_t)i * row_bytes, values->dtype, 1, {c}};
    maps[i].count = 2;
    maps[i].items = pair;
    s->items[i] = (rung_tensor){&maps[i], RUNG_DTYPE_MAP, 0, {0}};
  }
  return s;
}

#endif
