/* rung's f32 matmul microkernel, and the conv routines around it: im2col and the depthwise
 * conv (included by rung_runtime.h).
 *
 * rung_matmul_float computes out[b] (+)= lhs[b] x rhs[b] on row-major [B,M,K] x [B,K,N]
 * buffers (rung_matmul_float_bt: rhs stored transposed, [B,N,K]); a batch of 1 on either
 * operand is shared by every batch, and a shared rhs makes one taller product.
 *
 * Large products are a register-blocked GEMM in the style of BLIS and MLAS:
 *   for each K block of RUNG_KC (equal blocks):
 *     for each N block of RUNG_NC columns:  B in NR-column panels, zero-padded, in L2
 *       for each MR-row panel of A:         read in place; it stays in L1 while it
 *         for each panel of B:              sweeps the panels: an MR x NR tile of C
 * The tile is 8 x 48 with AVX-512 (24 zmm accumulators, 99% of peak from L1), 6 x 16 with
 * AVX/AVX2, 4 x 8 otherwise, written with GCC vector extensions (a compiler without them,
 * or RUNG_GEMM_SCALAR, gets plain C loops). Where few row panels share a panel of B
 * (M <= RUNG_DIRECT_B, 48), whole panels are read from B in place instead of packed. Tiles cut
 * by the edge of C are computed with narrower vectors and copied out through a buffer; the
 * last columns of a block, when fewer than half a vector, are dot products instead, so
 * N = 49 (a 7x7 feature map) wastes no lanes. The first tile of each row panel prefetches
 * the next panel's rows of A (a layer's weights, coming from memory); each tile prefetches
 * its block of C. With OpenMP, one parallel region covers the whole product: each thread
 * computes its own block of rows or columns of C (or its own matrices of a batch) with the
 * serial algorithm above, packing its own panels, with no barrier but the region's end
 * (rung_gemm_split chooses the blocks).
 *
 * Thin products skip packing: M <= 4 (a matrix-vector product with the weights on the
 * right) streams B once, four rows at a time; N <= 4, or a transposed B with M <= 4, is
 * dot products along K. Every size works, including 0 and 1; scratch comes from
 * aligned_alloc per call (with none, the direct forms are used).
 *
 * A loop over whole vectors (or groups of 4) is followed by a scalar loop over the rest,
 * which starts at a bound computed from the sizes (`pv`, `jv`, `k4`), never at wherever
 * the first loop stopped: gcc cannot bound that value below, and then assumes that the
 * tail's index arithmetic overflows in some iteration (-Waggressive-loop-optimizations
 * warns, once generated code makes a size constant).
 */
#ifndef RUNG_GEMM_INCLUDED /* not RUNG_GEMM_H: a model's own header may guard with that */
#define RUNG_GEMM_INCLUDED

#include "rung_math.h" /* the epilogue's max and min */

#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__GNUC__) && !defined(RUNG_GEMM_SCALAR)
#define RUNG_GEMM_VECTOR 1
#else
#define RUNG_GEMM_VECTOR 0
#endif
#if RUNG_GEMM_VECTOR && defined(__AVX512F__)
#define RUNG_VW 16
#elif RUNG_GEMM_VECTOR && defined(__AVX__)
#define RUNG_VW 8
#else
#define RUNG_VW 4
#endif
#ifndef RUNG_MR /* rows of the register tile */
#define RUNG_MR (RUNG_VW == 16 ? 8 : RUNG_VW == 8 ? 6 : 4)
#endif
#ifndef RUNG_NV /* vectors per row of the register tile */
#define RUNG_NV (RUNG_VW == 16 ? 3 : 2)
#endif
#if RUNG_GEMM_VECTOR
typedef float rung_vf __attribute__((vector_size(RUNG_VW * 4)));
typedef float rung_vfu __attribute__((vector_size(RUNG_VW * 4), aligned(4)));
#endif

#define RUNG_NR (RUNG_NV * RUNG_VW)
#ifndef RUNG_KC
#define RUNG_KC 256
#endif
#ifndef RUNG_NC
#define RUNG_NC 512
#endif
#define RUNG_NCB (RUNG_NC / RUNG_NR * RUNG_NR) /* whole panels per N block */
/* Up to this many rows of A, whole panels of B are read in place. Packing them pays once
 * 8 or more row panels share them: at 256 rows, reading B in place (a conv's columns, rows
 * 12 KB apart) ran 256x3136x576 at 153 GFLOP/s against 175 packed, 256x196x2304 at 151
 * against 177; at 32 rows in place is faster (172 against 150). */
#ifndef RUNG_DIRECT_B
#define RUNG_DIRECT_B 48
#endif

/* ---- entry points ------------------------------------------------------------------------ */

RUNG_API void rung_matmul_float(const float *a, const float *b, float *c, int64_t ba, int64_t bb,
                                int64_t batch, int64_t m, int64_t n, int64_t k, int accumulate);
/* The same with the right operand stored transposed: [B,N,K]. */
RUNG_API void rung_matmul_float_bt(const float *a, const float *b, float *c, int64_t ba,
                                   int64_t bb, int64_t batch, int64_t m, int64_t n, int64_t k,
                                   int accumulate);
/* A constant right operand packed once (see "constant right operands" below). */
RUNG_API float *rung_gemm_prepack_b(const float *b, int64_t n, int64_t k, int tb);
RUNG_API void rung_matmul_float_packed(const float *a, const float *b, const float *packed,
                                       float *c, int64_t ba, int64_t batch, int64_t m, int64_t n,
                                       int64_t k, int accumulate, int tb);/* A product of at most 4 rows and fewer columns than a vector, with a constant B: B
 * transposed once (0 where that gains nothing), then dot products along K. */
RUNG_API float *rung_gemm_prepack_thin(const float *b, int64_t n, int64_t k, int tb);
RUNG_API void rung_matmul_float_thin(const float *a, const float *b, const float *bt, float *c,
                                     int64_t ba, int64_t batch, int64_t m, int64_t n, int64_t k,
                                     int accumulate, int tb);

/* An epilogue: steps applied in order to each element x of C once its product is complete,
 * while its tile is in L1, x = op(x, v) (or op(v, x) for the r- ops), v read per row of C,
 * per column, per element (C's own layout) or once; see "epilogue" below. */
enum { RUNG_EP_ADD, RUNG_EP_MUL, RUNG_EP_SUB, RUNG_EP_RSUB, RUNG_EP_DIV, RUNG_EP_RDIV,
       RUNG_EP_MAX, RUNG_EP_RMAX, RUNG_EP_MIN, RUNG_EP_RMIN };
enum { RUNG_EP_SCALAR, RUNG_EP_ROW, RUNG_EP_COL, RUNG_EP_FULL };
/* An activation after the steps, x = f(x), in this order of operations: SiLU
 * x * (1 / (1 + exp(-x))); GELU x * (erf(x / sqrt(2)) + 1) * 0.5; HardSwish
 * x * max(min(x * (1/6) + 0.5, 1), 0). */
enum { RUNG_ACT_NONE, RUNG_ACT_SILU, RUNG_ACT_GELU, RUNG_ACT_HARDSWISH };
#define RUNG_EP_STEPS 8
typedef struct {
  int op, index;
  const float *v;
} rung_gemm_step;
typedef struct {
  int count;
  rung_gemm_step step[RUNG_EP_STEPS];
  int act; /* RUNG_ACT_*, after the steps */
} rung_gemm_epilogue;
/* Whether an epilogue does anything. */
static inline RUNG_UNUSED int rung_ep_any(const rung_gemm_epilogue *ep) {
  return ep && (ep->count > 0 || ep->act != RUNG_ACT_NONE);
}
/* rung_matmul_float[_bt|_packed] (packed may be 0) with an epilogue on its one product
 * (batch 1); ep may be 0. */
RUNG_API void rung_matmul_float_ep(const float *a, const float *b, const float *packed, float *c,
                                   int64_t ba, int64_t bb, int64_t batch, int64_t m, int64_t n,
                                   int64_t k, int accumulate, int tb, const rung_gemm_epilogue *ep);
/* The epilogue on all of an m x n C (after rung_matmul_float_thin). */
RUNG_API void rung_gemm_epilogue_apply(const rung_gemm_epilogue *ep, float *c, int64_t m,
                                       int64_t n);

/* The columns of a conv as GEMM (see "im2col" below). */
RUNG_API void rung_im2col_float(const rung_tensor *t, const int64_t *args);
/* A depthwise conv of 2 spatial dims (see "depthwise conv" below); ep may be 0. */
RUNG_API void rung_depthwise_float(const rung_tensor *t, const int64_t *args,
                                   const rung_gemm_epilogue *ep);
/* A conv of 2 spatial dims as GEMMs on blocks of output rows (see "conv by row blocks");
 * ep may be 0. */
RUNG_API void rung_conv_rows_float(const rung_tensor *t, const int64_t *args,
                                   const rung_gemm_epilogue *ep);
/* A stride-1 conv of 2 spatial dims as a GEMM that reads its input's rows in place (see
 * "conv by shifted rows"); ep may be 0. */
RUNG_API void rung_conv_shift_float(const rung_tensor *t, const int64_t *args,
                                    const rung_gemm_epilogue *ep);
/* The weights [O, C/G, KH, KW] packed once for rung_conv_shift_packed_float, which then
 * skips packing them on every call (malloc'd; 0 without memory or for a bad shape). */
RUNG_API float *rung_conv_prepack_w(const float *w, int64_t o, int64_t ck, int64_t groups);
RUNG_API void rung_conv_shift_packed_float(const rung_tensor *t, const int64_t *args,
                                           const rung_gemm_epilogue *ep, const float *packed);

#ifndef RUNG_PREBUILT_RUNTIME /* then the definitions come from the runtime object */

/* ---- packing ----------------------------------------------------------------------------- */

/* Rows [0, kc) x cols [0, nc) of B into ceil(nc/NR) zero-padded panels of kc x NR. B is
 * row-major with row stride ldb, or, with `tb`, stored transposed (element (p, j) at
 * b[j * ldb + p]). */
static void rung_gemm_pack_b(const float *b, int64_t ldb, int64_t kc, int64_t nc, int tb,
                             float *out) {
  for (int64_t j = 0; j < nc; j += RUNG_NR) {
    const int64_t cols = nc - j < RUNG_NR ? nc - j : RUNG_NR;
    if (tb) {
      const float *src = b + j * ldb;
      for (int64_t p0 = 0; p0 < kc; p0 += 16) {
        const int64_t p1 = kc - p0 < 16 ? kc : p0 + 16;
        for (int64_t q = 0; q < cols; ++q)
          for (int64_t p = p0; p < p1; ++p) out[p * RUNG_NR + q] = src[q * ldb + p];
      }
      if (cols < RUNG_NR)
        for (int64_t p = 0; p < kc; ++p)
          memset(out + p * RUNG_NR + cols, 0, sizeof(float) * (size_t)(RUNG_NR - cols));
    } else if (cols == RUNG_NR) {
      const float *src = b + j;
      for (int64_t p = 0; p < kc; ++p)
#if RUNG_GEMM_VECTOR
        for (int v = 0; v < RUNG_NV; ++v)
          ((rung_vf *)(out + p * RUNG_NR))[v] = ((const rung_vfu *)(src + p * ldb))[v];
#else
        memcpy(out + p * RUNG_NR, src + p * ldb, sizeof(float) * RUNG_NR);
#endif
    } else {
      const float *src = b + j;
      for (int64_t p = 0; p < kc; ++p) {
        for (int64_t q = 0; q < cols; ++q) out[p * RUNG_NR + q] = src[p * ldb + q];
        for (int64_t q = cols; q < RUNG_NR; ++q) out[p * RUNG_NR + q] = 0.0f;
      }
    }
    out += kc * RUNG_NR;
  }
}

/* ---- epilogue ------------------------------------------------------------------------------ */

/* The elementwise work that follows a product (a conv's bias, BatchNorm and ReLU, a
 * residual add, a Linear layer's bias) done on each tile of C after its last K block,
 * rather than by a pass that reads and writes all of C again. A whole MR x NR tile applies
 * the steps to its accumulators, in registers, before its one store (RUNG_EP_KINDS); the
 * tiles at the edges of C, and the scalar build, apply them here, after the store, a loop
 * over the tile per step. Each step is its own loop over the tile, so the order of operations, and
 * so the rounding, is that of the ops it replaces, one at a time (no multiply-add is
 * contracted across steps). `ldc` is C's row stride, also that of a FULL operand; r0 and
 * c0 are the tile's row and column in all of C. */
/* The activation on n floats at x: one vectorized pass over a tile's row, in L1. The ops
 * are those of the nest it replaces, in its order, so the results are the same. Bound by
 * its arithmetic (the division, the exponential's polynomial), it takes whole AVX-512
 * vectors, which gcc would not choose here: at 8 lanes, SiLU after a 96 x 16 x 12544
 * product cost more than its own pass over memory. */
#if defined(__GNUC__) /* the pragma is the compiler's only with -fopenmp(-simd) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunknown-pragmas"
#endif
#if RUNG_VW == 16
#define RUNG_ACT_LOOP(EXPR)                                                                     \
  _Pragma("omp simd simdlen(16)") for (int64_t j = 0; j < n; ++j) {                             \
    const float v = x[j];                                                                       \
    x[j] = (EXPR);                                                                              \
  }
#else
#define RUNG_ACT_LOOP(EXPR)                                                                     \
  _Pragma("omp simd") for (int64_t j = 0; j < n; ++j) {                                         \
    const float v = x[j];                                                                       \
    x[j] = (EXPR);                                                                              \
  }
#endif
static inline void rung_gemm_act_run(int act, float *x, int64_t n) {
  switch (act) {
  case RUNG_ACT_SILU: RUNG_ACT_LOOP(v * (1.0f / (1.0f + rung_expf(-v)))) break;
  case RUNG_ACT_GELU: RUNG_ACT_LOOP(v * (rung_erff(v / 1.41421354f) + 1.0f) * 0.5f) break;
  case RUNG_ACT_HARDSWISH:
    RUNG_ACT_LOOP(v * rung_maximumf(rung_minimumf(v * 0.166666672f + 0.5f, 1.0f), 0.0f)) break;
  default: break;
  }
}
#undef RUNG_ACT_LOOP
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

static void rung_gemm_ep_tile(const rung_gemm_epilogue *ep, float *c, int64_t ldc, int64_t r0,
                              int64_t c0, int64_t rows, int64_t cols) {
  for (int s = 0; s < ep->count; ++s) {
    const int op = ep->step[s].op, index = ep->step[s].index;
    const float *v = ep->step[s].v;
    for (int64_t r = 0; r < rows; ++r) {
      float *x = c + r * ldc;
      const float *w = index == RUNG_EP_ROW    ? v + r0 + r
                       : index == RUNG_EP_COL  ? v + c0
                       : index == RUNG_EP_FULL ? v + (r0 + r) * ldc + c0
                                               : v;
      const int64_t dw = index == RUNG_EP_COL || index == RUNG_EP_FULL; /* steps along w */
#define RUNG_EP_LOOP(EXPR)                                                                      \
  if (dw)                                                                                       \
    for (int64_t j = 0; j < cols; ++j) {                                                        \
      const float a = x[j], b = w[j];                                                           \
      x[j] = (EXPR);                                                                            \
    }                                                                                           \
  else                                                                                          \
    for (int64_t j = 0; j < cols; ++j) {                                                        \
      const float a = x[j], b = w[0];                                                           \
      x[j] = (EXPR);                                                                            \
    }
      switch (op) {
      case RUNG_EP_ADD: RUNG_EP_LOOP(a + b) break;
      case RUNG_EP_MUL: RUNG_EP_LOOP(a * b) break;
      case RUNG_EP_SUB: RUNG_EP_LOOP(a - b) break;
      case RUNG_EP_RSUB: RUNG_EP_LOOP(b - a) break;
      case RUNG_EP_DIV: RUNG_EP_LOOP(a / b) break;
      case RUNG_EP_RDIV: RUNG_EP_LOOP(b / a) break;
      case RUNG_EP_MAX: RUNG_EP_LOOP(rung_maximumf(a, b)) break;
      case RUNG_EP_RMAX: RUNG_EP_LOOP(rung_maximumf(b, a)) break;
      case RUNG_EP_MIN: RUNG_EP_LOOP(rung_minimumf(a, b)) break;
      default: RUNG_EP_LOOP(rung_minimumf(b, a)) break;
      }
#undef RUNG_EP_LOOP
    }
  }
  if (ep->act != RUNG_ACT_NONE)
    for (int64_t r = 0; r < rows; ++r) rung_gemm_act_run(ep->act, c + r * ldc, cols);
}

RUNG_API void rung_gemm_epilogue_apply(const rung_gemm_epilogue *ep, float *c, int64_t m,
                                       int64_t n) {
  if (rung_ep_any(ep) && m > 0 && n > 0) rung_gemm_ep_tile(ep, c, n, 0, 0, m, n);
}

/* ---- tiles ------------------------------------------------------------------------------- */

/* c[0:MR, 0:NV*lanes] (row stride ldc) = (add ? c : 0) + a[0:MR, 0:kc] x b[0:kc, 0:NV*lanes],
 * A and B row-major with row strides lda and ldb (B a packed panel, or B itself). `pf`, if
 * not null, is the next row panel of A, fetched into L2 a line every other step. */
#if RUNG_GEMM_VECTOR
/* An epilogue step on the tile's accumulators, with w the step's operand as a vector: one
 * value for the tile (scalar), one per row (row), the tile's columns (col) or its elements
 * (full). Max and min keep NaN as rung_maximumf and rung_minimumf do. */
#define RUNG_EPV_ADD(x, w) ((x) + (w))
#define RUNG_EPV_MUL(x, w) ((x) * (w))
#define RUNG_EPV_SUB(x, w) ((x) - (w))
#define RUNG_EPV_RSUB(x, w) ((w) - (x))
#define RUNG_EPV_DIV(x, w) ((x) / (w))
#define RUNG_EPV_RDIV(x, w) ((w) / (x))
#define RUNG_EPV_PICK(x, w, keep) /* keep ? x : w, lane by lane */                             \
  ((__typeof__(x))(((__typeof__((x) != (x)))(x) & (keep)) | ((__typeof__((x) != (x)))(w) & ~(keep))))
#define RUNG_EPV_MAX(x, w) RUNG_EPV_PICK(x, w, ((x) != (x)) | ((x) > (w)))
#define RUNG_EPV_RMAX(x, w) RUNG_EPV_PICK(w, x, ((w) != (w)) | ((w) > (x)))
#define RUNG_EPV_MIN(x, w) RUNG_EPV_PICK(x, w, ((x) != (x)) | ((x) < (w)))
#define RUNG_EPV_RMIN(x, w) RUNG_EPV_PICK(w, x, ((w) != (w)) | ((w) < (x)))
#define RUNG_EP_EACH(VT, NV, W, EXPR)                                                           \
  _Pragma("GCC unroll 16") for (int r = 0; r < RUNG_MR; ++r)                                    \
    _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v) {                                      \
      const VT w = (W);                                                                         \
      acc[r][v] = EXPR(acc[r][v], w);                                                           \
    }
#define RUNG_EP_KINDS(VT, VTU, NV, EXPR, CSTEP)                                                 \
  switch (ep->step[s].index) {                                                                  \
  case RUNG_EP_SCALAR: RUNG_EP_EACH(VT, NV, (VT){0} + ev[0], EXPR) break;                       \
  case RUNG_EP_ROW: RUNG_EP_EACH(VT, NV, (VT){0} + ev[r0 + r], EXPR) break;                     \
  case RUNG_EP_COL: RUNG_EP_EACH(VT, NV, *(const VTU *)(ev + c0 + v * CSTEP), EXPR) break;      \
  default:                                                                                      \
    RUNG_EP_EACH(VT, NV, *(const VTU *)(ev + (r0 + r) * ldc + c0 + v * CSTEP), EXPR) break;     \
  }
/* One step p of the tile's product: B's row p against A's column p, into acc. */
#define RUNG_GEMM_STEP(VT, VTU, NV, AEL, BROW, BSTEP)                                           \
  VT bv[NV];                                                                                    \
  _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v) bv[v] = *(const VTU *)(BROW + BSTEP(v)); \
  _Pragma("GCC unroll 16") for (int r = 0; r < RUNG_MR; ++r) {                                  \
    const float av = AEL(r);                                                                    \
    _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v) acc[r][v] += av * bv[v];               \
  }
#define RUNG_GEMM_TILE(NAME, VT, NV, AEL, BROW, BSTEP, CSTEP, OFF)                              \
  static inline void NAME(int64_t kc, const float *restrict a, int64_t lda,                     \
                          const float *restrict b, int64_t ldb, float *restrict c, int64_t ldc, \
                          int add, const float *pf, const rung_gemm_epilogue *ep, int64_t r0,   \
                          int64_t c0 OFF()) {                                                   \
    enum { lanes = sizeof(VT) / sizeof(float) };                                                \
    (void)lda; /* unused by a packed A */                                                       \
    (void)ldb;                                                                                  \
    typedef float VTU __attribute__((vector_size(sizeof(VT)), aligned(4)));                     \
    VT acc[RUNG_MR][NV];                                                                        \
    _Pragma("GCC unroll 16") for (int r = 0; r < RUNG_MR; ++r)                                  \
      _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v)                                      \
        __builtin_prefetch(c + r * ldc + v * CSTEP, 1);                                         \
    _Pragma("GCC unroll 16") for (int r = 0; r < RUNG_MR; ++r)                                  \
      _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v) acc[r][v] = (VT){0};                 \
    int64_t p = 0;                                                                              \
    if (pf) /* a loop of its own, so that the other has no test per step */                     \
      for (; p < kc; ++p) {                                                                     \
        __builtin_prefetch(pf + ((p >> 1) & (RUNG_MR - 1)) * lda + ((p >> 4) << 4), 0, 2);      \
        RUNG_GEMM_STEP(VT, VTU, NV, AEL, BROW, BSTEP)                                           \
      }                                                                                         \
    else                                                                                        \
      _Pragma("GCC unroll 2") for (; p < kc; ++p) {                                             \
        RUNG_GEMM_STEP(VT, VTU, NV, AEL, BROW, BSTEP)                                           \
      }                                                                                         \
    if (ep) {                                                                                   \
      if (add)                                                                                  \
        _Pragma("GCC unroll 16") for (int r = 0; r < RUNG_MR; ++r)                              \
          _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v)                                  \
            acc[r][v] += *(const VTU *)(c + r * ldc + v * CSTEP);                               \
      for (int s = 0; s < ep->count; ++s) {                                                     \
        const float *ev = ep->step[s].v;                                                        \
        switch (ep->step[s].op) {                                                               \
        case RUNG_EP_ADD: RUNG_EP_KINDS(VT, VTU, NV, RUNG_EPV_ADD, CSTEP) break;                \
        case RUNG_EP_MUL: RUNG_EP_KINDS(VT, VTU, NV, RUNG_EPV_MUL, CSTEP) break;                \
        case RUNG_EP_SUB: RUNG_EP_KINDS(VT, VTU, NV, RUNG_EPV_SUB, CSTEP) break;                \
        case RUNG_EP_RSUB: RUNG_EP_KINDS(VT, VTU, NV, RUNG_EPV_RSUB, CSTEP) break;              \
        case RUNG_EP_DIV: RUNG_EP_KINDS(VT, VTU, NV, RUNG_EPV_DIV, CSTEP) break;                \
        case RUNG_EP_RDIV: RUNG_EP_KINDS(VT, VTU, NV, RUNG_EPV_RDIV, CSTEP) break;              \
        case RUNG_EP_MAX: RUNG_EP_KINDS(VT, VTU, NV, RUNG_EPV_MAX, CSTEP) break;                \
        case RUNG_EP_RMAX: RUNG_EP_KINDS(VT, VTU, NV, RUNG_EPV_RMAX, CSTEP) break;              \
        case RUNG_EP_MIN: RUNG_EP_KINDS(VT, VTU, NV, RUNG_EPV_MIN, CSTEP) break;                \
        default: RUNG_EP_KINDS(VT, VTU, NV, RUNG_EPV_RMIN, CSTEP) break;                        \
        }                                                                                       \
      }                                                                                         \
    }                                                                                           \
    _Pragma("GCC unroll 16") for (int r = 0; r < RUNG_MR; ++r) {                                \
      _Pragma("GCC unroll 4") for (int v = 0; v < NV; ++v) {                                    \
        VTU *out = (VTU *)(c + r * ldc + v * CSTEP);                                            \
        if (add && !ep)                                                                         \
          *out += acc[r][v];                                                                    \
        else                                                                                    \
          *out = acc[r][v];                                                                     \
      }                                                                                         \
    }                                                                                           \
    if (ep && ep->act != RUNG_ACT_NONE) /* on the stored tile, in L1 */                         \
      for (int r = 0; r < RUNG_MR; ++r) {                                                       \
        if (CSTEP == lanes)                                                                     \
          rung_gemm_act_run(ep->act, c + r * ldc, NV * lanes);                                  \
        else                                                                                    \
          for (int v = 0; v < NV; ++v) rung_gemm_act_run(ep->act, c + r * ldc + v * CSTEP, lanes); \
      }                                                                                         \
  }
#else
#define RUNG_GEMM_TILE(NAME, VT, NV, AEL, BROW, BSTEP, CSTEP, OFF)                              \
  static inline void NAME(int64_t kc, const float *restrict a, int64_t lda,                     \
                          const float *restrict b, int64_t ldb, float *restrict c, int64_t ldc, \
                          int add, const float *pf, const rung_gemm_epilogue *ep, int64_t r0,   \
                          int64_t c0 OFF()) {                                                   \
    enum { lanes = (int)sizeof(VT) / (int)sizeof(float), width = NV * lanes };                  \
    (void)pf;                                                                                   \
    (void)lda; /* unused by a packed A */                                                       \
    (void)ldb;                                                                                  \
    float acc[RUNG_MR][width] = {{0}};                                                          \
    for (int64_t p = 0; p < kc; ++p)                                                            \
      for (int r = 0; r < RUNG_MR; ++r)                                                         \
        for (int v = 0; v < NV; ++v)                                                            \
          for (int l = 0; l < lanes; ++l)                                                       \
            acc[r][v * lanes + l] += AEL(r) * (BROW)[BSTEP(v) + l];                             \
    for (int r = 0; r < RUNG_MR; ++r)                                                           \
      for (int v = 0; v < NV; ++v)                                                              \
        for (int l = 0; l < lanes; ++l) {                                                       \
          float *out = c + r * ldc + v * (CSTEP) + l;                                           \
          *out = (add ? *out : 0.0f) + acc[r][v * lanes + l];                                   \
        }                                                                                       \
    if (ep)                                                                                     \
      for (int v = 0; v < NV; ++v)                                                              \
        rung_gemm_ep_tile(ep, c + v * (CSTEP), ldc, r0, c0 + v * (CSTEP), RUNG_MR, lanes);      \
  }
typedef struct { float x[RUNG_VW]; } rung_vf;
#endif
#if RUNG_GEMM_VECTOR
typedef float rung_vh __attribute__((vector_size(RUNG_VW * 2)));
#else
typedef struct { float x[RUNG_VW / 2]; } rung_vh;
#endif

/* B's row p: at a stride (a matrix or a packed panel), or at an offset of its own (the
 * shifted rows of a conv's input, "conv by shifted rows" below). */
#define RUNG_B_STRIDED (b + p * ldb)
#define RUNG_B_SHIFTED (b + off[p])
/* A's element (r, p): from its rows at stride lda, or from a packed panel that holds each
 * step's MR values together (one pointer, where MR row pointers crowd out B's). */
#define RUNG_A_ROWS(r) (a[(r) * lda + p])
#define RUNG_A_PACKED(r) (a[p * RUNG_MR + (r)])
/* Where vector v of B's row starts, from the row's start: the next vector along the row, or
 * at an offset of its own (the vectors of a shifted tile may lie on different rows). */
#define RUNG_B_ALONG(v) ((v) * lanes)
#define RUNG_B_LISTED(v) ((v) == 0 ? bo0 : (v) == 1 ? bo1 : bo2)
/* The extra parameters of each addressing, as function-like macros so that they pass
 * through RUNG_GEMM_TILES unexpanded. */
#define RUNG_NO_OFF()
#define RUNG_WITH_OFF()                                                                         \
  , const int64_t *restrict off, int64_t bo0, int64_t bo1, int64_t bo2, int64_t cstep
/* The tiles of one addressing: PREFIX_full (NV vectors), _2 and _1 (whole vectors, where
 * narrower than full) and _half (half a vector). */
#if RUNG_NV > 2
#define RUNG_GEMM_TILE_2(P, AEL, BROW, BSTEP, CSTEP, OFF)                                       \
  RUNG_GEMM_TILE(P##_2, rung_vf, 2, AEL, BROW, BSTEP, CSTEP, OFF)
#else
#define RUNG_GEMM_TILE_2(P, AEL, BROW, BSTEP, CSTEP, OFF)
#endif
#if RUNG_NV > 1
#define RUNG_GEMM_TILE_1(P, AEL, BROW, BSTEP, CSTEP, OFF)                                       \
  RUNG_GEMM_TILE(P##_1, rung_vf, 1, AEL, BROW, BSTEP, CSTEP, OFF)
#else
#define RUNG_GEMM_TILE_1(P, AEL, BROW, BSTEP, CSTEP, OFF)
#endif
#define RUNG_GEMM_TILES(P, AEL, BROW, BSTEP, CSTEP, OFF)                                        \
  RUNG_GEMM_TILE(P##_full, rung_vf, RUNG_NV, AEL, BROW, BSTEP, CSTEP, OFF)                      \
  RUNG_GEMM_TILE_2(P, AEL, BROW, BSTEP, CSTEP, OFF)                                             \
  RUNG_GEMM_TILE_1(P, AEL, BROW, BSTEP, CSTEP, OFF)                                             \
  RUNG_GEMM_TILE(P##_half, rung_vh, 1, AEL, BROW, BSTEP, CSTEP, OFF)
RUNG_GEMM_TILES(rung_gemm_tile, RUNG_A_ROWS, RUNG_B_STRIDED, RUNG_B_ALONG, lanes, RUNG_NO_OFF)
RUNG_GEMM_TILES(rung_shift_tile, RUNG_A_PACKED, RUNG_B_SHIFTED, RUNG_B_LISTED, cstep,
                RUNG_WITH_OFF)

/* A tile `lanes` wide (a multiple of VW/2 up to NR) at row panel a, column offset b. */
static inline void rung_gemm_tile(int64_t kc, const float *a, int64_t lda, const float *b,
                                  int64_t ldb, float *c, int64_t ldc, int add, int lanes) {
  if (lanes == RUNG_NR) rung_gemm_tile_full(kc, a, lda, b, ldb, c, ldc, add, 0, 0, 0, 0);
#if RUNG_NV > 2
  else if (lanes == 2 * RUNG_VW) rung_gemm_tile_2(kc, a, lda, b, ldb, c, ldc, add, 0, 0, 0, 0);
#endif
#if RUNG_NV > 1
  else if (lanes == RUNG_VW) rung_gemm_tile_1(kc, a, lda, b, ldb, c, ldc, add, 0, 0, 0, 0);
#endif
  else rung_gemm_tile_half(kc, a, lda, b, ldb, c, ldc, add, 0, 0, 0, 0);
}

/* One MR-row panel against one B panel (row stride ldb) whose first `cols` columns are
 * valid: whole vectors where they fit, the last columns through a buffer (reading lanes
 * past `cols`, so B must be a zero-padded packed panel then); rows past `rows` are dropped. */
static void rung_gemm_panel(int64_t kc, const float *a, int64_t lda, const float *b,
                            int64_t ldb, float *c, int64_t ldc, int add, int64_t rows,
                            int64_t cols) {
  int64_t off = 0;
  while (off < cols) {
    const int64_t rem = cols - off;
    int lanes = RUNG_NR;
    while (lanes > RUNG_VW && lanes > rem) lanes -= RUNG_VW;
    if (lanes > rem) lanes = rem <= RUNG_VW / 2 ? RUNG_VW / 2 : RUNG_VW;
    if (rows == RUNG_MR && lanes <= rem) {
      rung_gemm_tile(kc, a, lda, b + off, ldb, c + off, ldc, add, lanes);
    } else {
      float tile[RUNG_MR * RUNG_NR];
      const int64_t w = lanes < rem ? lanes : rem;
      rung_gemm_tile(kc, a, lda, b + off, ldb, tile, RUNG_NR, 0, lanes);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < w; ++j)
          c[r * ldc + off + j] = (add ? c[r * ldc + off + j] : 0.0f) + tile[r * RUNG_NR + j];
    }
    off += lanes;
  }
}

/* The last few columns of a block (fewer than half a vector), whose B columns are stored
 * transposed in bt (tail rows of kc floats): dot products along K against the MR rows of
 * the A panel, two columns at a time, so no lanes are wasted on absent columns. */
static void rung_gemm_dot_tile(int64_t kc, const float *a, int64_t lda, const float *bt,
                               int64_t tail, float *c, int64_t ldc, int add, int64_t rows) {
  for (int64_t q = 0; q < tail; q += 2) {
    const float *b0 = bt + q * kc, *b1 = q + 1 < tail ? b0 + kc : b0;
    float s0[RUNG_MR], s1[RUNG_MR];
    const int64_t pv = RUNG_GEMM_VECTOR ? kc - kc % RUNG_VW : 0; /* whole vectors end */
#if RUNG_GEMM_VECTOR
    rung_vf acc0[RUNG_MR], acc1[RUNG_MR];
    for (int r = 0; r < RUNG_MR; ++r) acc0[r] = acc1[r] = (rung_vf){0};
    for (int64_t p = 0; p < pv; p += RUNG_VW) {
      const rung_vf bv0 = *(const rung_vfu *)(b0 + p), bv1 = *(const rung_vfu *)(b1 + p);
#pragma GCC unroll 16
      for (int r = 0; r < RUNG_MR; ++r) {
        const rung_vf av = *(const rung_vfu *)(a + r * lda + p);
        acc0[r] += av * bv0;
        acc1[r] += av * bv1;
      }
    }
    for (int r = 0; r < RUNG_MR; ++r) {
      s0[r] = s1[r] = 0.0f;
      for (int v = 0; v < RUNG_VW; ++v) {
        s0[r] += acc0[r][v];
        s1[r] += acc1[r][v];
      }
    }
#else
    for (int r = 0; r < RUNG_MR; ++r) s0[r] = s1[r] = 0.0f;
#endif
    for (int64_t p = pv; p < kc; ++p)
      for (int r = 0; r < RUNG_MR; ++r) {
        s0[r] += a[r * lda + p] * b0[p];
        s1[r] += a[r * lda + p] * b1[p];
      }
    for (int64_t r = 0; r < rows; ++r) {
      c[r * ldc + q] = (add ? c[r * ldc + q] : 0.0f) + s0[r];
      if (q + 1 < tail) c[r * ldc + q + 1] = (add ? c[r * ldc + q + 1] : 0.0f) + s1[r];
    }
  }
}

/* ---- direct paths for thin shapes ---------------------------------------------------------- */

/* M <= 4: each row of C accumulates rows of B scaled by A, four rows of B at a time, so B
 * streams through once, row after row, and each vector of C is loaded and stored once per
 * four rows of B. Columns go in blocks whose rows of C stay in L1. Row strides lda, ldb and
 * ldc, so that a thread can take a slice of the columns. */
static void rung_gemm_few_rows(const float *a, int64_t lda, const float *b, int64_t ldb,
                               float *c, int64_t ldc, int64_t m, int64_t n, int64_t k,
                               int accumulate) {
  if (!accumulate)
    for (int64_t i = 0; i < m; ++i) memset(c + i * ldc, 0, sizeof(float) * (size_t)n);
  for (int64_t jb = 0; jb < n; jb += 2048) {
    const int64_t je = n - jb < 2048 ? n : jb + 2048;
    const int64_t k4 = k - k % 4, jv = RUNG_GEMM_VECTOR ? je - (je - jb) % RUNG_VW : jb;
    for (int64_t p = 0; p < k4; p += 4) {
      const float *b0 = b + p * ldb, *b1 = b0 + ldb, *b2 = b1 + ldb, *b3 = b2 + ldb;
#if RUNG_GEMM_VECTOR
      for (int64_t j = jb; j < jv; j += RUNG_VW) {
        const rung_vf v0 = *(const rung_vfu *)(b0 + j), v1 = *(const rung_vfu *)(b1 + j);
        const rung_vf v2 = *(const rung_vfu *)(b2 + j), v3 = *(const rung_vfu *)(b3 + j);
        for (int64_t i = 0; i < m; ++i) {
          const float *ar = a + i * lda + p;
          *(rung_vfu *)(c + i * ldc + j) += ar[0] * v0 + ar[1] * v1 + ar[2] * v2 + ar[3] * v3;
        }
      }
#endif
      for (int64_t j = jv; j < je; ++j)
        for (int64_t i = 0; i < m; ++i) {
          const float *ar = a + i * lda + p;
          c[i * ldc + j] += ar[0] * b0[j] + ar[1] * b1[j] + ar[2] * b2[j] + ar[3] * b3[j];
        }
    }
    for (int64_t p = k4; p < k; ++p)
      for (int64_t i = 0; i < m; ++i) {
        const float av = a[i * lda + p];
        for (int64_t j = jb; j < je; ++j) c[i * ldc + j] += av * b[p * ldb + j];
      }
  }
}

/* Dot products of rows x[0..count) (row stride ldx) with one row y, all of length k. */
static inline void rung_gemm_dots(const float *x, int64_t ldx, int64_t count, const float *y,
                                  int64_t k, float *out) {
  const int64_t pv = RUNG_GEMM_VECTOR ? k - k % RUNG_VW : 0; /* whole vectors end */
  float total[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#if RUNG_GEMM_VECTOR
  rung_vf s[4] = {{0}, {0}, {0}, {0}};
  for (int64_t p = 0; p < pv; p += RUNG_VW) {
    const rung_vf yv = *(const rung_vfu *)(y + p);
    for (int64_t i = 0; i < count; ++i) s[i] += *(const rung_vfu *)(x + i * ldx + p) * yv;
  }
  for (int64_t i = 0; i < count; ++i)
    for (int v = 0; v < RUNG_VW; ++v) total[i] += s[i][v];
#endif
  for (int64_t p = pv; p < k; ++p)
    for (int64_t i = 0; i < count; ++i) total[i] += x[i * ldx + p] * y[p];
  for (int64_t i = 0; i < count; ++i) out[i] = total[i];
}

/* Dot-product form for transposed B or N <= 4: c[i, j] = A[i, :] . Bt[j, :]. `bt` holds
 * B's columns as rows (n x k, row stride ldb). Four rows of A share each load of a column;
 * with fewer rows, four columns share each load of a row of A. */
static void rung_gemm_dot_form(const float *a, int64_t lda, const float *bt, int64_t ldb,
                               float *c, int64_t ldc, int64_t m, int64_t n, int64_t k,
                               int accumulate) {
  float d[4];
  if (m < 4) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; j += 4) {
        const int64_t cols = n - j < 4 ? n - j : 4;
        rung_gemm_dots(bt + j * ldb, ldb, cols, a + i * lda, k, d);
        for (int64_t q = 0; q < cols; ++q)
          c[i * ldc + j + q] = accumulate ? c[i * ldc + j + q] + d[q] : d[q];
      }
    return;
  }
  for (int64_t i = 0; i < m; i += 4) {
    const int64_t rows = m - i < 4 ? m - i : 4;
    for (int64_t j = 0; j < n; ++j) {
      rung_gemm_dots(a + i * lda, lda, rows, bt + j * ldb, k, d);
      for (int64_t r = 0; r < rows; ++r)
        c[(i + r) * ldc + j] = accumulate ? c[(i + r) * ldc + j] + d[r] : d[r];
    }
  }
}

/* ---- one matrix product -------------------------------------------------------------------- */

static inline int64_t rung_gemm_ceil(int64_t x, int64_t y) { return (x + y - 1) / y; }

/* K blocks of equal size (a multiple of 8), so the last one is not a sliver. */
static inline int64_t rung_gemm_kstep(int64_t k) {
  const int64_t kblocks = rung_gemm_ceil(k, RUNG_KC);
  return (rung_gemm_ceil(k, kblocks) + 7) / 8 * 8;
}

/* Whether a product has fewer columns than a vector (a classifier of 10 classes) and K long
 * enough that dot products along K, over B transposed, beat walking its columns one scalar
 * at a time; a single row does not repay the transposition. Short K keeps the tiles, whose
 * sums run in K order: a half-precision attention of head size 8 rounds as it always did. */
static inline int rung_gemm_narrow(int64_t m, int64_t n, int64_t k) {
  return n < RUNG_VW && m > 1 && k >= 64;
}

/* Scratch floats rung_gemm_2d needs for an m x n x k product (B prepacked or not, its row
 * stride ldb). */
static int64_t rung_gemm_scratch(int64_t m, int64_t n, int64_t k, int tb, int packed,
                                 int64_t ldb) {
  if (m <= 4 && !tb && !rung_gemm_narrow(m, n, k)) return 0;
  if (m <= 4 || n <= 4 || rung_gemm_narrow(m, n, k)) return tb || (n == 1 && ldb == 1) ? 0 : n * k;
  const int64_t kc = k < RUNG_KC ? k : RUNG_KC;
  if (packed) return (RUNG_MR + RUNG_VW / 2) * kc;
  const int64_t nc = n < RUNG_NCB ? n : RUNG_NCB;
  return rung_gemm_ceil(nc, RUNG_NR) * RUNG_NR * kc + (RUNG_MR + RUNG_VW / 2) * kc;
}

/* One 2-D product as one thread computes it: its slice of A (rows), B (columns) and C, each
 * with its row stride (B's, when stored transposed, is the stride of its rows of K). A
 * prepacked B (`packed`, all of B in the panels of rung_gemm_prepack_b, `npad` columns wide
 * with padding) is read from column `pcol` on, a multiple of NR. */
typedef struct {
  const float *a, *b;
  float *c;
  int64_t lda, ldb, ldc, m, n, k;
  int tb;
  const float *packed;
  int64_t npad, pcol;
  const rung_gemm_epilogue *ep; /* 0, or applied to each tile after its last K block */
  int64_t row0, col0;           /* this problem's first row and column in all of C */
} rung_gemm_problem;

/* One block of the product: K range [pc, pc + kc) into columns [jc, jc + nc) of C. */
static void rung_gemm_block(const rung_gemm_problem *g, int64_t pc, int64_t kc, int64_t jc,
                            int64_t nc, int add, float *bpack, float *edge, float *tpack) {
  const float *a = g->a, *b = g->b, *packed = g->packed;
  float *c = g->c;
  const int64_t m = g->m, lda = g->lda, ldb = g->ldb, ldc = g->ldc;
  const int tb = g->tb;
  const int64_t mfull = m / RUNG_MR * RUNG_MR;
  if (mfull < m) { /* the last rows, zero-padded to a whole panel */
    memset(edge, 0, sizeof(float) * (size_t)(RUNG_MR * kc));
    for (int64_t r = 0; r < m - mfull; ++r)
      memcpy(edge + r * kc, a + (mfull + r) * lda + pc, sizeof(float) * (size_t)kc);
  }
  /* Whole panels are read in place when few row panels share them; else packed. The last
   * nc % VW columns, when fewer than half a vector, take the dot-product tile. */
  const int last = rung_ep_any(g->ep) && pc + kc == g->k; /* C's tiles are final */
  const int direct = !packed && !tb && m <= RUNG_DIRECT_B;
  const int64_t tail = !packed && nc % RUNG_VW <= RUNG_VW / 2 ? nc % RUNG_VW : 0;
  const int64_t nv = nc - tail;
  const int64_t nfull = direct ? nv / RUNG_NR * RUNG_NR : 0;
  const float *block = packed ? packed + pc * g->npad + g->pcol * kc : 0;
  if (packed)
    ;
  else if (tb)
    rung_gemm_pack_b(b + jc * ldb + pc, ldb, kc, nv, 1, bpack);
  else if (nfull < nv)
    rung_gemm_pack_b(b + pc * ldb + jc + nfull, ldb, kc, nv - nfull, 0, bpack);
  for (int64_t q = 0; q < tail; ++q)
    for (int64_t p = 0; p < kc; ++p)
      tpack[q * kc + p] = tb ? b[(jc + nv + q) * ldb + pc + p] : b[(pc + p) * ldb + jc + nv + q];
  /* Row panel by row panel, so that each keeps its rows of A in L1 while it sweeps the
   * panels of B. The last column item of a row panel is its dot-product tail, when there is
   * one. */
  const int64_t panels = rung_gemm_ceil(m, RUNG_MR);
  const int64_t col_items = rung_gemm_ceil(nv, RUNG_NR) + (tail ? 1 : 0);
  for (int64_t item = 0; item < panels * col_items; ++item) {
    const int64_t ir = item / col_items * RUNG_MR, jr = item % col_items * RUNG_NR;
    const int64_t rows = m - ir < RUNG_MR ? m - ir : RUNG_MR;
    const float *ap = rows == RUNG_MR ? a + ir * lda + pc : edge;
    const int64_t lda_p = rows == RUNG_MR ? lda : kc;
    float *crow = c + ir * ldc + jc;
    if (jr >= nv) { /* the tail */
      rung_gemm_dot_tile(kc, ap, lda_p, tpack, tail, crow + nv, ldc, add, rows);
      if (last)
        rung_gemm_ep_tile(g->ep, crow + nv, ldc, g->row0 + ir, g->col0 + jc + nv, rows, tail);
      continue;
    }
    /* The first tile of a row panel fetches the next panel's rows of A (they come from
     * memory when A is a layer's weights). */
    const int fetch = jr == 0 && rows == RUNG_MR && ir + 2 * RUNG_MR <= m;
    const float *next = fetch ? ap + RUNG_MR * lda : 0;
    const int64_t cols = nv - jr < RUNG_NR ? nv - jr : RUNG_NR;
    const float *bp = block        ? block + (jc + jr) * kc
                      : jr < nfull ? b + pc * ldb + jc + jr
                                   : bpack + (jr - nfull) * kc;
    const int64_t ldb_p = jr < nfull ? ldb : RUNG_NR;
    if (rows == RUNG_MR && cols == RUNG_NR) {
      rung_gemm_tile_full(kc, ap, lda_p, bp, ldb_p, crow + jr, ldc, add, next,
                          last ? g->ep : 0, g->row0 + ir, g->col0 + jc + jr);
    } else {
      rung_gemm_panel(kc, ap, lda_p, bp, ldb_p, crow + jr, ldc, add, rows, cols);
      if (last)
        rung_gemm_ep_tile(g->ep, crow + jr, ldc, g->row0 + ir, g->col0 + jc + jr, rows, cols);
    }
  }
}

/* c (+)= a x b for one thread's problem `g`; k > 0. `scratch` is 64-byte aligned,
 * rung_gemm_scratch floats. A is read in place (its MR x KC block stays in L1 while it
 * sweeps the packed B block); the last rows, if fewer than MR, are copied into a
 * zero-padded block first. */
static void rung_gemm_2d(const rung_gemm_problem *g, int accumulate, float *scratch) {
  const int64_t m = g->m, n = g->n, k = g->k;
  const int ep = rung_ep_any(g->ep);
  if (m <= 4 && !g->tb && !rung_gemm_narrow(m, n, k)) {
    rung_gemm_few_rows(g->a, g->lda, g->b, g->ldb, g->c, g->ldc, m, n, k, accumulate);
    if (ep) rung_gemm_ep_tile(g->ep, g->c, g->ldc, g->row0, g->col0, m, n);
    return;
  }
  if (m <= 4 || n <= 4 || rung_gemm_narrow(m, n, k)) {
    const float *bt = g->b;
    int64_t ldt = g->ldb;
    if (!g->tb && (n > 1 || g->ldb != 1)) { /* B's columns as rows */
      for (int64_t p = 0; p < k; ++p)
        for (int64_t q = 0; q < n; ++q) scratch[q * k + p] = g->b[p * g->ldb + q];
      bt = scratch;
      ldt = k;
    }
    rung_gemm_dot_form(g->a, g->lda, bt, ldt, g->c, g->ldc, m, n, k, accumulate);
    if (ep) rung_gemm_ep_tile(g->ep, g->c, g->ldc, g->row0, g->col0, m, n);
    return;
  }
  const int64_t kblocks = rung_gemm_ceil(k, RUNG_KC);
  const int64_t kstep = rung_gemm_kstep(k);
  const int64_t kmax = k < RUNG_KC ? k : RUNG_KC;
  const int64_t nmax = n < RUNG_NCB ? n : RUNG_NCB;
  float *bpack = scratch;
  float *edge = g->packed ? scratch : scratch + rung_gemm_ceil(nmax, RUNG_NR) * RUNG_NR * kmax;
  float *tpack = edge + RUNG_MR * kmax;
  /* K blocks outside N blocks sweep C once per K block; N blocks outside read A once per
   * N block: whichever moves fewer extra floats goes outside. */
  const int64_t nblocks = rung_gemm_ceil(n, RUNG_NCB);
  const int n_outer = (nblocks - 1) * m * k < (kblocks - 1) * 2 * m * n;
  const int64_t outer = n_outer ? nblocks : kblocks, inner = n_outer ? kblocks : nblocks;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t pc = (n_outer ? i : o) * kstep, jc = (n_outer ? o : i) * RUNG_NCB;
      if (pc >= k) continue;
      const int64_t kc = k - pc < kstep ? k - pc : kstep;
      const int64_t nc = n - jc < RUNG_NCB ? n - jc : RUNG_NCB;
      rung_gemm_block(g, pc, kc, jc, nc, accumulate || pc > 0, bpack, edge, tpack);
    }
}

/* ---- threads ------------------------------------------------------------------------------- */

#ifndef RUNG_GEMM_MIN_FLOPS /* a smaller product runs on the calling thread alone */
#define RUNG_GEMM_MIN_FLOPS (1 << 20)
#endif
#ifndef RUNG_GEMM_MIN_STREAM /* floats a thin product streams that are worth a second thread */
#define RUNG_GEMM_MIN_STREAM (1 << 16)
#endif

/* Whether threads may share a product. A thin one (N <= 4: a squeeze-and-excite block's
 * 1x1 convs on a 1x1 map; M <= 4: a classifier on one image) runs at the speed its weights
 * come from memory, not at the FPU's: two cores reading half each gain, however few its
 * flops (MobileNetV3-Large's squeeze-and-excite layers, 9 MB of weights, were all below
 * RUNG_GEMM_MIN_FLOPS and ran on one thread). */
static inline int rung_gemm_worth_sharing(int64_t batch, int64_t m, int64_t n, int64_t k) {
  if (2 * batch * m * n * k >= RUNG_GEMM_MIN_FLOPS) return 1;
  const int64_t streamed = n <= 4 ? m * k : m <= 4 ? k * n : 0;
  return batch * streamed >= RUNG_GEMM_MIN_STREAM;
}
#ifndef RUNG_GEMM_READ_COST /* multiply-adds that reading one float of an operand costs */
#define RUNG_GEMM_READ_COST 8
#endif
#ifndef RUNG_GEMM_MOVE_COST /* multiply-adds that moving one float of C to another core costs */
#define RUNG_GEMM_MOVE_COST 16
#endif

/* How `threads` threads share a product: the whole batch, split evenly (by_batch), or a grid
 * of tm x tn threads over the row panels and column panels of each 2-D product, each thread
 * computing its block of C from its rows of A and its columns of B, independently of the
 * others, in one parallel region with no barrier but its end. Among the grids, the one whose
 * largest block costs least, counting its multiply-adds and the operands it reads: a product
 * of few rows (a 1x1 conv of 24 channels over a 56x56 map) splits its columns, one of few
 * columns (1152 channels of a 7x7 map) its rows, and rows are preferred where the loops that
 * read C next, which share out its rows, would otherwise read blocks another core wrote. Splitting the tiles of each block among the
 * threads instead had every thread read all of B, and fork and join once per block: slower on
 * two threads than on one for the thin products of MobileNets and EfficientNets. */
static void rung_gemm_split(int64_t batch, int64_t m, int64_t n, int64_t k, int threads,
                            int *tm, int *tn, int *by_batch) {
  *tm = *tn = 1;
  *by_batch = 0;
  if (threads < 2 || !rung_gemm_worth_sharing(batch, m, n, k)) return;
  if (batch >= threads && (batch % threads == 0 || batch >= 4 * threads)) {
    *by_batch = 1;
    return;
  }
  const int64_t um = rung_gemm_ceil(m, RUNG_MR), un = rung_gemm_ceil(n, RUNG_NR);
  double best = 0.0;
  for (int i = 1; i <= threads; ++i) {
    const int j = threads / i;
    if (i > um || j > un) continue;
    int64_t rows = rung_gemm_ceil(um, i) * RUNG_MR, cols = rung_gemm_ceil(un, j) * RUNG_NR;
    rows = rows < m ? rows : m;
    cols = cols < n ? cols : n;
    /* The loops that read C next share its rows (a conv's channels) among the threads:
     * splitting the columns leaves (j - 1) / j of each thread's block to another core. */
    const double moved = j > 1 ? (double)rows * (double)cols * (j - 1) / j / (double)k : 0.0;
    const double cost = (double)rows * (double)cols + RUNG_GEMM_READ_COST * (double)(rows + cols) +
                        RUNG_GEMM_MOVE_COST * moved;
    if ((*tm) * (*tn) == 1 || cost < best) {
      best = cost;
      *tm = i;
      *tn = j;
    }
  }
}

/* ---- matmul: out[b] (+)= lhs[b] x rhs[b], row-major [B,M,K] x [B,K,N] --------------------- */

/* Thread `me` of `threads`' share of a (batched) product: its batches, or its block of rows
 * and columns of each 2-D product, as rung_gemm_split deals them. */
static void rung_gemm_share(const float *a, const float *b, float *c, int64_t ba, int64_t bb,
                            int64_t batch, int64_t m, int64_t n, int64_t k, int accumulate,
                            int tb, const float *packed, const rung_gemm_epilogue *ep,
                            int threads, int me) {
  int tm, tn, by_batch;
  rung_gemm_split(batch, m, n, k, threads, &tm, &tn, &by_batch);
  int64_t b0 = 0, b1 = batch, r0 = 0, r1 = m, c0 = 0, c1 = n;
  if (by_batch) {
    b0 = batch * me / threads;
    b1 = batch * (me + 1) / threads;
  } else {
    if (me >= tm * tn) return; /* past the grid */
    const int64_t um = rung_gemm_ceil(m, RUNG_MR), un = rung_gemm_ceil(n, RUNG_NR);
    const int64_t im = me / tn, in = me % tn;
    r0 = um * im / tm * RUNG_MR;
    r1 = um * (im + 1) / tm * RUNG_MR;
    c0 = un * in / tn * RUNG_NR;
    c1 = un * (in + 1) / tn * RUNG_NR;
    r1 = r1 < m ? r1 : m;
    c1 = c1 < n ? c1 : n;
  }
  if (b0 >= b1 || r0 >= r1 || c0 >= c1) return;
  const int64_t ms = r1 - r0, ns = c1 - c0, ldb = tb ? k : n;
  const int64_t need = rung_gemm_scratch(ms, ns, k, tb, packed != 0, ldb);
  float *scratch = need > 0 ? (float *)aligned_alloc(64, (size_t)((need * 4 + 63) / 64 * 64)) : 0;
  for (int64_t p = b0; p < b1; ++p) {
    const rung_gemm_problem g = {
        .a = a + (ba == 1 ? 0 : p) * m * k + r0 * k,
        .b = b + (bb == 1 ? 0 : p) * k * n + (tb ? c0 * k : c0),
        .c = c + p * m * n + r0 * n + c0,
        .lda = k,
        .ldb = ldb,
        .ldc = n,
        .m = ms,
        .n = ns,
        .k = k,
        .tb = tb,
        .packed = packed,
        .npad = rung_gemm_ceil(n, RUNG_NR) * RUNG_NR,
        .pcol = c0,
        .ep = ep,
        .row0 = r0,
        .col0 = c0,
    };
    if (need > 0 && !scratch) { /* no memory for packing: the direct forms need none */
      if (tb)
        rung_gemm_dot_form(g.a, g.lda, g.b, g.ldb, g.c, g.ldc, ms, ns, k, accumulate);
      else
        rung_gemm_few_rows(g.a, g.lda, g.b, g.ldb, g.c, g.ldc, ms, ns, k, accumulate);
      if (rung_ep_any(ep)) rung_gemm_ep_tile(ep, g.c, g.ldc, r0, c0, ms, ns);
    } else {
      rung_gemm_2d(&g, accumulate, scratch);
    }
  }
  free(scratch);
}

static void rung_matmul_float_any(const float *a, const float *b, float *c, int64_t ba,
                                  int64_t bb, int64_t batch, int64_t m, int64_t n, int64_t k,
                                  int accumulate, int tb, const float *packed,
                                  const rung_gemm_epilogue *ep) {
  if (batch <= 0 || m <= 0 || n <= 0) return;
  if (k <= 0) {
    if (!accumulate) memset(c, 0, sizeof(float) * (size_t)(batch * m * n));
    rung_gemm_epilogue_apply(ep, c, batch * m, n);
    return;
  }
  /* A shared right operand with a batch of left ones is one taller product. */
  if (bb == 1 && ba == batch && batch > 1) {
    m *= batch;
    batch = ba = 1;
  }
  if (bb != 1) packed = 0; /* a prepacked B is one matrix shared by every batch */
#ifdef _OPENMP
  int team = 1;
  if (!omp_in_parallel()) {
    int tm, tn, by_batch;
    const int most = omp_get_max_threads();
    rung_gemm_split(batch, m, n, k, most, &tm, &tn, &by_batch);
    team = by_batch ? most : tm * tn;
  }
  if (team > 1) {
    /* The team OpenMP gives may be smaller than asked: the split follows its size. */
#pragma omp parallel num_threads(team)
    rung_gemm_share(a, b, c, ba, bb, batch, m, n, k, accumulate, tb, packed, ep,
                    omp_get_num_threads(), omp_get_thread_num());
    return;
  }
#endif
  rung_gemm_share(a, b, c, ba, bb, batch, m, n, k, accumulate, tb, packed, ep, 1, 0);
}

RUNG_API void rung_matmul_float(const float *a, const float *b, float *c, int64_t ba, int64_t bb,
                                int64_t batch, int64_t m, int64_t n, int64_t k, int accumulate) {
  rung_matmul_float_any(a, b, c, ba, bb, batch, m, n, k, accumulate, 0, 0, 0);
}

RUNG_API void rung_matmul_float_bt(const float *a, const float *b, float *c, int64_t ba,
                                   int64_t bb, int64_t batch, int64_t m, int64_t n, int64_t k,
                                   int accumulate) {
  rung_matmul_float_any(a, b, c, ba, bb, batch, m, n, k, accumulate, 1, 0, 0);
}

/* ---- constant right operands, packed once --------------------------------------------------- */

/* A layer's weights on the right of a product are the same on every run: rung packs them
 * into the microkernel's panels once, when the model is initialized (rung_gemm_prepack_b),
 * rather than reading them in place with a row stride (or packing them) on every call.
 * Each K block (the steps of rung_gemm_kstep) holds ceil(n / NR) panels of kc x NR floats,
 * zero-padded, in column order, so any N block is a run of whole panels. Returns 0 when
 * out of memory; the product then reads B itself. */
/* Memory for a constant B's panels, which a product streams from L3 or memory once per
 * run: on 2 MiB pages where the block spans them, so that the sweep of a 9 MiB panel set
 * (a ViT MLP layer) does not take a TLB miss every 4 KiB (ViT-B/16: 3% faster). Freed
 * with free(). */
static void *rung_gemm_alloc_panels(size_t bytes) {
  const size_t huge = (size_t)1 << 21;
  void *p = 0;
  bytes = bytes ? (bytes + 63) / 64 * 64 : 64;
  if (posix_memalign(&p, bytes < huge ? 64 : huge, bytes) != 0) return 0;
#ifdef MADV_HUGEPAGE
  if (bytes >= huge) madvise(p, bytes / huge * huge, MADV_HUGEPAGE); /* advice only */
#endif
  return p;
}

RUNG_API float *rung_gemm_prepack_b(const float *b, int64_t n, int64_t k, int tb) {
  if (n <= 0 || k <= 0) return 0;
  const int64_t npad = rung_gemm_ceil(n, RUNG_NR) * RUNG_NR;
  float *out = (float *)rung_gemm_alloc_panels((size_t)(npad * k * 4));
  if (!out) return 0;
  const int64_t kstep = rung_gemm_kstep(k);
  for (int64_t pc = 0; pc < k; pc += kstep) {
    const int64_t kc = k - pc < kstep ? k - pc : kstep;
    rung_gemm_pack_b(tb ? b + pc : b + pc * n, tb ? k : n, kc, n, tb, out + pc * npad);
  }
  return out;
}

/* rung_matmul_float[_bt] with B (one matrix for every batch) also given packed; `packed` may
 * be 0. Products of at most 4 rows keep their direct forms, which stream B itself. */
RUNG_API void rung_matmul_float_packed(const float *a, const float *b, const float *packed,
                                       float *c, int64_t ba, int64_t batch, int64_t m, int64_t n,
                                       int64_t k, int accumulate, int tb) {
  rung_matmul_float_any(a, b, c, ba, 1, batch, m, n, k, accumulate, tb, packed, 0);
}

/* The epilogue needs one product (batch 1, or a shared B making one taller product, whose
 * rows then index ROW operands across the batch); other products apply it after. */
RUNG_API void rung_matmul_float_ep(const float *a, const float *b, const float *packed, float *c,
                                   int64_t ba, int64_t bb, int64_t batch, int64_t m, int64_t n,
                                   int64_t k, int accumulate, int tb,
                                   const rung_gemm_epilogue *ep) {
  if (batch == 1) {
    rung_matmul_float_any(a, b, c, ba, bb, batch, m, n, k, accumulate, tb, bb == 1 ? packed : 0,
                          ep);
    return;
  }
  rung_matmul_float_any(a, b, c, ba, bb, batch, m, n, k, accumulate, tb, bb == 1 ? packed : 0,
                        0);
  rung_gemm_epilogue_apply(ep, c, batch * m, n);
}

/* ---- thin products of few columns -------------------------------------------------------- */

/* M <= 4 and N < RUNG_VW (a classifier's last layer, one image at a time): streaming B a
 * row at a time fills a fraction of each vector, and its scalar tail is all of the work.
 * With B transposed (once, at init: B is a layer's weights), each output is a dot product
 * along K in whole vectors. Small K gains nothing. */
RUNG_API float *rung_gemm_prepack_thin(const float *b, int64_t n, int64_t k, int tb) {
  if (tb || n <= 0 || n >= RUNG_VW || k < 64) return 0;
  float *bt = (float *)malloc(sizeof(float) * (size_t)(n * k));
  if (!bt) return 0;
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j) bt[j * k + p] = b[p * n + j];
  return bt;
}

RUNG_API void rung_matmul_float_thin(const float *a, const float *b, const float *bt, float *c,
                                     int64_t ba, int64_t batch, int64_t m, int64_t n, int64_t k,
                                     int accumulate, int tb) {
  if (bt)
    rung_matmul_float_any(a, bt, c, ba, 1, batch, m, n, k, accumulate, 1, 0, 0);
  else
    rung_matmul_float_any(a, b, c, ba, 1, batch, m, n, k, accumulate, tb, 0, 0);
}

/* ---- im2col --------------------------------------------------------------------------------- */

/* A conv with more than one input channel per group runs as a GEMM whose right operand
 * holds, for each input channel and kernel offset, the input positions that offset reads
 * for every output position: t = {x [N,C,I...], cols [N,C,K...,E...]} (C = G x C/G, so the
 * groups need no index of their own), args = {strides[r], dilations[r], pad_low[r]} for r
 * spatial dims. Padding reads as 0. Along the last dim each row of cols is three runs:
 * zeros, the input read with the stride and zeros, whose bounds come from the sizes once
 * per kernel offset, so no element is tested. One function for every conv: generated as
 * loops, these nests were half of the C compiler's time on ResNet-50. */

/* What one kernel offset reads, the same for every channel: its index along each spatial
 * dim, and the output range [lo, hi) of the last dim that reads inside the input, output
 * element j reading input element j * stride - t0. */
typedef struct {
  int64_t k[RUNG_MAX_RANK];
  int64_t lo, hi, t0;
} rung_im2col_tap;

static void rung_im2col_geometry(const rung_tensor *x, const rung_tensor *cols, int r,
                                 const int64_t *args, int64_t tap, rung_im2col_tap *g) {
  const int64_t *stride = args, *dil = args + r, *pad = args + 2 * r;
  for (int d = r - 1; d >= 0; --d) {
    g->k[d] = tap % cols->shape[2 + d];
    tap /= cols->shape[2 + d];
  }
  const int64_t s = stride[r - 1], in = x->shape[1 + r], out = cols->shape[1 + 2 * r];
  g->t0 = pad[r - 1] - g->k[r - 1] * dil[r - 1];
  int64_t lo = rung_ceildiv(g->t0, s), hi = rung_ceildiv(in + g->t0, s);
  g->lo = lo < 0 ? 0 : lo > out ? out : lo;
  g->hi = hi < g->lo ? g->lo : hi > out ? out : hi;
}

/* Rows of a feature map are short (7 to 112 floats): gcc would make calls of memset and
 * memcpy of these loops, and each row would pay for a call. */
#if defined(__GNUC__) && !defined(__clang__)
#define RUNG_INLINE_COPIES __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define RUNG_INLINE_COPIES
#endif

/* The zeros where a row reads padding: few (the pad), so stored one by one. As a loop,
 * gcc vectorizes them, and the vector loop's set-up costs more than the stores. */
static inline void rung_im2col_zeros(float *p, int64_t n) {
  if (n > 0) p[0] = 0.0f;
  if (n > 1) p[1] = 0.0f;
  if (n > 2) p[2] = 0.0f;
  for (int64_t j = 3; j < n; ++j) p[j] = 0.0f;
}

/* The rows of cols of `count` channels under kernel offset `g`: channel c's plane of x at
 * plane + c * insize, its row at out + c * taps * e. The bounds are the same for every
 * channel, worked out once. */
static RUNG_INLINE_COPIES void rung_im2col_rows(const rung_tensor *x, const rung_tensor *cols,
                                                int r, const int64_t *args,
                                                const rung_im2col_tap *g, const float *plane,
                                                float *out, int64_t count, int64_t insize,
                                                int64_t outstep) {
  const int64_t *stride = args, *dil = args + r, *pad = args + 2 * r;
  const int64_t last_in = x->shape[1 + r], last_out = cols->shape[1 + 2 * r];
  const int64_t s = stride[r - 1], lo = g->lo, hi = g->hi, t0 = g->t0;
  if (r == 2 && s == 1 && stride[0] == 1 && last_out == last_in) {
    /* Stride 1 and rows as long as the input's (a "same" conv): output element i reads
     * input element i - shift, so the valid rows are one contiguous copy whose few
     * elements in the padding columns are then zeroed. */
    const int64_t out_rows = cols->shape[2 + r], t0h = pad[0] - g->k[0] * dil[0];
    const int64_t size = out_rows * last_out;
    int64_t top = t0h < 0 ? 0 : t0h > out_rows ? out_rows : t0h;
    int64_t end = x->shape[2] + t0h;
    end = end < top ? top : end > out_rows ? out_rows : end;
    if (lo == hi) top = end = 0;
    const int64_t first = top * last_out + lo, last = (end - 1) * last_out + hi;
    const int64_t shift = t0h * last_in + t0;
    for (int64_t c = 0; c < count; ++c, plane += insize, out += outstep) {
      if (top == end) {
        for (int64_t j = 0; j < size; ++j) out[j] = 0.0f;
        continue;
      }
      for (int64_t j = 0; j < first; ++j) out[j] = 0.0f;
      for (int64_t j = first; j < last; ++j) out[j] = plane[j - shift];
      if (lo <= 1 && last_out - hi <= 1) { /* a pad of at most 1: single stores */
        for (int64_t row = top; row < end; ++row) {
          if (lo) out[row * last_out] = 0.0f;
          if (hi < last_out) out[row * last_out + hi] = 0.0f;
        }
      } else {
        for (int64_t row = top; row < end; ++row) {
          rung_im2col_zeros(out + row * last_out, lo);
          rung_im2col_zeros(out + row * last_out + hi, last_out - hi);
        }
      }
      for (int64_t j = last; j < size; ++j) out[j] = 0.0f;
    }
    return;
  }
  int64_t lines = 1;
  for (int d = 0; d < r - 1; ++d) lines *= cols->shape[2 + r + d];
  /* The leading output dims, counted like an odometer. */
  int64_t o[RUNG_MAX_RANK] = {0};
  for (int64_t line = 0; line < lines; ++line) {
    int64_t offset = 0;
    int inside = 1;
    for (int d = 0; d < r - 1; ++d) {
      const int64_t i = o[d] * stride[d] + g->k[d] * dil[d] - pad[d];
      inside &= i >= 0 && i < x->shape[2 + d];
      offset = offset * x->shape[2 + d] + i;
    }
    for (int64_t c = 0; c < count; ++c) {
      float *row = out + c * outstep + line * last_out;
      if (!inside || lo == hi) {
        for (int64_t j = 0; j < last_out; ++j) row[j] = 0.0f;
        continue;
      }
      const float *in = plane + c * insize + offset * last_in; /* in[j * s - t0] for row[j] */
      rung_im2col_zeros(row, lo);
      if (s == 1)
        for (int64_t j = lo; j < hi; ++j) row[j] = in[j - t0];
      else
        for (int64_t j = lo; j < hi; ++j) row[j] = in[j * s - t0];
      rung_im2col_zeros(row + hi, last_out - hi);
    }
    for (int d = r - 2; d >= 0 && ++o[d] == cols->shape[2 + r + d]; --d) o[d] = 0;
  }
}

#ifndef RUNG_IM2COL_TABLE /* kernel offsets whose geometry is computed once, on the stack */
#define RUNG_IM2COL_TABLE 1024
#endif

RUNG_API void rung_im2col_float(const rung_tensor *t, const int64_t *args) {
  const rung_tensor *x = &t[0], *cols = &t[1];
  const int r = (int)x->rank - 2;
  int64_t insize = 1, taps = 1, e = 1;
  for (int d = 0; d < r; ++d) {
    insize *= x->shape[2 + d];
    taps *= cols->shape[2 + d];
    e *= cols->shape[2 + r + d];
  }
  const int64_t n = x->shape[0], c = x->shape[1];
  if (n <= 0 || c <= 0 || taps <= 0 || e <= 0) return;
  /* Channels per task: a few thousand elements each, so a small map's task is not all
   * overhead, yet a large map still gives every thread work. */
  const int64_t block = e >= 4096 ? 1 : 4096 / e < c ? 4096 / e : c;
  const int64_t blocks = (c + block - 1) / block;
  const float *src = (const float *)x->data;
  float *dst = (float *)cols->data;
  /* Each offset's geometry takes a dozen integer divisions: computed once per offset, not
   * once per channel (DenseNet's 7x7 maps spent more time on them than on copying). */
  rung_im2col_tap table[taps <= RUNG_IM2COL_TABLE ? taps : 1];
  const int tabled = taps <= RUNG_IM2COL_TABLE;
  if (tabled)
    for (int64_t tap = 0; tap < taps; ++tap) rung_im2col_geometry(x, cols, r, args, tap, &table[tap]);
#ifdef _OPENMP
#pragma omp parallel for collapse(3) schedule(static) \
    if (n * c * taps * e >= (1 << 14) && !omp_in_parallel())
#endif
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t b = 0; b < blocks; ++b) {
      for (int64_t tap = 0; tap < taps; ++tap) {
        rung_im2col_tap own;
        if (!tabled) rung_im2col_geometry(x, cols, r, args, tap, &own);
        const int64_t c0 = b * block, count = c - c0 < block ? c - c0 : block;
        rung_im2col_rows(x, cols, r, args, tabled ? &table[tap] : &own,
                         src + (i * c + c0) * insize, dst + ((i * c + c0) * taps + tap) * e,
                         count, insize, taps * e);
      }
    }
  }
}

/* ---- depthwise conv ---------------------------------------------------------------------- */

/* A conv with one input channel per group: t = {x [N,C,H,W], w [O,1,KH,KW], out [N,O,OH,OW]}
 * (O = C x the depth multiplier), args = {strides[2], dilations[2], pad_low[2]}; padding
 * reads as 0.
 *
 * Each output channel is 9 to 49 multiply-adds per point over a small plane (7x7 to
 * 112x112). Vectorized along an output row, a 7- or 14-wide row fills a fraction of a
 * vector, and the taps summed one after another in one register wait on each other. Here
 * the plane is read as one flat row instead: the input channel is copied, with its padding
 * made zeros, into a plane of pitch P, so that output (y, x), at flat position q = y * P + x,
 * reads input q + (tap offset) for every tap. The whole plane is then one run of (OH - 1) *
 * P + OW outputs in whole vectors, several accumulated at once, and the P - OW positions
 * past each row's end, computed for nothing, are dropped when the rows are copied out.
 * A stride s splits the padded plane into s x s phase planes (rows and columns taken every
 * s-th from each start), so that every tap reads one phase plane at stride 1. Each thread
 * fills its planes in its own scratch (L2-sized for a 112x112 map); without memory for it,
 * the points sum their taps one by one. Measured on EfficientNet-B0, one thread: 18%
 * faster than per-point sums generated as loops, on ConvNeXt-T 5%. */

#ifndef RUNG_DW_UNROLL /* vectors of outputs accumulated at once */
#define RUNG_DW_UNROLL 8
#endif

/* What one (image, channel) needs besides the output: its phase planes and the flat result. */
typedef struct {
  int64_t sh, sw, dh, dw, ph, pw;
  int64_t hq, wq;    /* rows and pitch of each phase plane */
  int64_t phase;     /* floats from one phase plane to the next, zero-padded past hq x wq */
  int64_t flat;      /* outputs of the flat run, (OH - 1) x pitch + OW */
  int64_t flat_pad;  /* the run rounded up to whole vectors */
} rung_dw_shape;

static rung_dw_shape rung_dw_geometry(const rung_tensor *w, const rung_tensor *out,
                                      const int64_t *args) {
  rung_dw_shape g;
  g.sh = args[0], g.sw = args[1], g.dh = args[2], g.dw = args[3], g.ph = args[4], g.pw = args[5];
  const int64_t oh = out->shape[2], ow = out->shape[3];
  /* The padded plane spans every row and column a tap reads. */
  const int64_t hp = (oh - 1) * g.sh + (w->shape[2] - 1) * g.dh + 1;
  const int64_t wp = (ow - 1) * g.sw + (w->shape[3] - 1) * g.dw + 1;
  g.hq = rung_ceildiv(hp, g.sh);
  g.wq = rung_ceildiv(wp, g.sw);
  g.flat = (oh - 1) * g.wq + ow;
  g.flat_pad = rung_ceildiv(g.flat, RUNG_VW) * RUNG_VW;
  /* The run reads up to flat_pad past the largest tap offset, which lies inside hq x wq:
   * that much zero padding keeps every read inside. */
  g.phase = g.hq * g.wq + g.flat_pad + RUNG_VW;
  return g;
}

/* n floats from src to dst in whole vectors, the last one overlapping the one before (a
 * row of 56 is 4 vectors, not 3 and 8 scalar copies); rows shorter than a vector in half
 * vectors, or one by one. */
static inline void rung_dw_copy(float *dst, const float *src, int64_t n) {
#if RUNG_GEMM_VECTOR
  if (n >= RUNG_VW) {
    int64_t j = 0;
    for (; j + RUNG_VW <= n; j += RUNG_VW) *(rung_vfu *)(dst + j) = *(const rung_vfu *)(src + j);
    if (j < n) *(rung_vfu *)(dst + n - RUNG_VW) = *(const rung_vfu *)(src + n - RUNG_VW);
    return;
  }
#if RUNG_VW >= 8
  typedef float rung_vh __attribute__((vector_size(RUNG_VW * 2), aligned(4)));
  if (2 * n >= RUNG_VW) {
    *(rung_vh *)dst = *(const rung_vh *)src;
    *(rung_vh *)(dst + n - RUNG_VW / 2) = *(const rung_vh *)(src + n - RUNG_VW / 2);
    return;
  }
#endif
#endif
  for (int64_t j = 0; j < n; ++j) dst[j] = src[j];
}

/* The columns [lo, hi) of phase plane b's row: what a stride of s_w takes from the
 * padded row, whose column 0 is at src. */
static inline void rung_dw_columns(float *row, const float *src, int64_t sw, int64_t b,
                                   int64_t lo, int64_t hi) {
  if (sw == 1)
    rung_dw_copy(row + lo, src + lo + b, hi - lo);
  else
    for (int64_t j = lo; j < hi; ++j) row[j] = src[sw * j + b];
}

/* The phase planes of one input channel: plane (a, b) holds padded row s_h * i + a, column
 * s_w * j + b, at i * wq + j. Only the positions inside the input are written: the others
 * (the padding, and what lies past the input) are the same for every channel, zeroed once
 * with the scratch. */
static void rung_dw_planes(const rung_dw_shape *g, const float *in, int64_t h, int64_t wd,
                           float *planes) {
  /* Phase b's columns j, whose source column s_w * j + b - pw lies in [0, wd). */
  int64_t lo[2] = {0, 0}, hi[2] = {0, 0};
  for (int64_t b = 0; b < g->sw && b < 2; ++b) {
    const int64_t first = rung_ceildiv(g->pw - b, g->sw);
    lo[b] = first < 0 ? 0 : first > g->wq ? g->wq : first;
    hi[b] = rung_ceildiv(wd + g->pw - b, g->sw);
    hi[b] = hi[b] < lo[b] ? lo[b] : hi[b] > g->wq ? g->wq : hi[b];
  }
  for (int64_t a = 0; a < g->sh; ++a) {
    /* Rows i whose source row s_h * i + a - ph lies in [0, h). */
    const int64_t top = rung_ceildiv(g->ph - a, g->sh);
    const int64_t i0 = top < 0 ? 0 : top > g->hq ? g->hq : top;
    int64_t i1 = rung_ceildiv(h + g->ph - a, g->sh);
    i1 = i1 < i0 ? i0 : i1 > g->hq ? g->hq : i1;
    float *first = planes + a * g->sw * g->phase;
    for (int64_t i = i0; i < i1; ++i) {
      const float *src = in + (g->sh * i + a - g->ph) * wd - g->pw; /* padded column 0 */
      float *row = first + i * g->wq;
      if (g->sw == 2) {
        /* Both phases in one pass, where both are inside the input (a stride-2 load that
         * gcc splits into even and odd lanes); their ends one by one. */
        float *odd = row + g->phase;
        const int64_t from = lo[0] > lo[1] ? lo[0] : lo[1], to = hi[0] < hi[1] ? hi[0] : hi[1];
        for (int64_t j = lo[0]; j < from; ++j) row[j] = src[2 * j];
        for (int64_t j = lo[1]; j < from; ++j) odd[j] = src[2 * j + 1];
        for (int64_t j = from; j < to; ++j) {
          row[j] = src[2 * j];
          odd[j] = src[2 * j + 1];
        }
        for (int64_t j = to > lo[0] ? to : lo[0]; j < hi[0]; ++j) row[j] = src[2 * j];
        for (int64_t j = to > lo[1] ? to : lo[1]; j < hi[1]; ++j) odd[j] = src[2 * j + 1];
        continue;
      }
      for (int64_t b = 0; b < g->sw; ++b) {
        int64_t l = lo[0], u = hi[0];
        if (b > 0) { /* phases past the second (strides above 2) work theirs out here */
          const int64_t f = rung_ceildiv(g->pw - b, g->sw);
          l = f < 0 ? 0 : f > g->wq ? g->wq : f;
          u = rung_ceildiv(wd + g->pw - b, g->sw);
          u = u < l ? l : u > g->wq ? g->wq : u;
        }
        rung_dw_columns(row + b * g->phase, src, g->sw, b, l, u);
      }
    }
  }
}

/* The flat run of one output channel: res[q] = sum over taps of w[tap] x planes[off[tap] + q]
 * for q < flat, in whole vectors (so up to flat_pad); `off[tap]` is the start of the tap's
 * phase plane plus its offset there. Several vectors are accumulated at once, each tap's
 * weight and offset loaded once for all of them. */
#if RUNG_GEMM_VECTOR
#define RUNG_DW_BLOCK(U)                                                                      \
  for (; q + (U) * RUNG_VW <= limit; q += (U) * RUNG_VW) {                                   \
    rung_vf acc[U];                                                                           \
    for (int u = 0; u < (U); ++u) acc[u] = (rung_vf){0};                                      \
    for (int64_t t = 0; t < taps; ++t) {                                                      \
      const rung_vf wv = (rung_vf){0} + wt[t];                                                \
      const float *p = planes + off[t] + q;                                                   \
      for (int u = 0; u < (U); ++u) acc[u] += wv * *(const rung_vfu *)(p + u * RUNG_VW);     \
    }                                                                                         \
    for (int u = 0; u < (U); ++u) *(rung_vfu *)(res + q + u * RUNG_VW) = acc[u];             \
  }
#endif
static void rung_dw_run(const rung_dw_shape *g, const float *planes, const int64_t *off,
                        const float *wt, int64_t taps, float *res) {
#if RUNG_GEMM_VECTOR
  int64_t q = 0, limit = g->flat_pad;
  RUNG_DW_BLOCK(RUNG_DW_UNROLL)
  RUNG_DW_BLOCK(2)
  RUNG_DW_BLOCK(1)
#else
  for (int64_t q = 0; q < g->flat; ++q) res[q] = 0.0f;
  for (int64_t t = 0; t < taps; ++t) {
    const float *p = planes + off[t];
    const float wv = wt[t];
    for (int64_t q = 0; q < g->flat; ++q) res[q] += wv * p[q];
  }
#endif
}

/* One output channel without scratch (when none could be allocated): every point sums its
 * taps, skipping those in the padding. */
static void rung_dw_direct(const rung_dw_shape *g, const float *in, int64_t h, int64_t wd,
                           const float *wt, int64_t kh, int64_t kw, float *o, int64_t oh,
                           int64_t ow) {
  for (int64_t y = 0; y < oh; ++y)
    for (int64_t xo = 0; xo < ow; ++xo) {
      float acc = 0.0f;
      for (int64_t i = 0; i < kh; ++i) {
        const int64_t r = y * g->sh + i * g->dh - g->ph;
        if (r < 0 || r >= h) continue;
        for (int64_t j = 0; j < kw; ++j) {
          const int64_t c = xo * g->sw + j * g->dw - g->pw;
          if (c >= 0 && c < wd) acc += wt[i * kw + j] * in[r * wd + c];
        }
      }
      o[y * ow + xo] = acc;
    }
}

RUNG_API void rung_depthwise_float(const rung_tensor *t, const int64_t *args,
                                   const rung_gemm_epilogue *ep) {
  const rung_tensor *x = &t[0], *w = &t[1], *out = &t[2];
  const int64_t n = out->shape[0], oc = out->shape[1], oh = out->shape[2], ow = out->shape[3];
  const int64_t c = x->shape[1], h = x->shape[2], wd = x->shape[3];
  const int64_t kh = w->shape[2], kw = w->shape[3], taps = kh * kw;
  if (n <= 0 || oc <= 0 || oh <= 0 || ow <= 0) return;
  const float *src = (const float *)x->data, *wts = (const float *)w->data;
  float *dst = (float *)out->data;
  const int64_t mult = c > 0 ? oc / c : 1; /* output channels per input channel */
  if (!rung_ep_any(ep)) ep = 0;
  if (taps <= 0 || c <= 0) {
    for (int64_t i = 0; i < n * oc * oh * ow; ++i) dst[i] = 0.0f;
    for (int64_t img = 0; ep && img < n; ++img)
      rung_gemm_ep_tile(ep, dst + img * oc * oh * ow, oh * ow, 0, 0, oc, oh * ow);
    return;
  }
  const rung_dw_shape g = rung_dw_geometry(w, out, args);
  const int64_t planes = g.sh * g.sw * g.phase;
  const size_t floats = (size_t)(planes + g.flat_pad + RUNG_VW);
  const size_t bytes = (floats * sizeof(float) + 63) / 64 * 64;
  const int64_t jobs = n * oc;
#ifdef _OPENMP
#pragma omp parallel if (jobs > 1 && jobs * oh * ow * taps >= (1 << 15) && !omp_in_parallel())
#endif
  {
    /* Zeroed once: the plane fill never writes the padding past each phase plane. */
    float *scratch = (float *)aligned_alloc(64, bytes);
    int64_t *off = (int64_t *)malloc(sizeof(int64_t) * (size_t)taps);
    if (scratch) memset(scratch, 0, bytes);
    float *res = scratch ? scratch + planes : 0;
    /* Where each tap reads: the same for every channel. */
    if (off)
      for (int64_t i = 0; i < kh; ++i)
        for (int64_t j = 0; j < kw; ++j) {
          const int64_t r = i * g.dh, s = j * g.dw;
          off[i * kw + j] = ((r % g.sh) * g.sw + s % g.sw) * g.phase + (r / g.sh) * g.wq + s / g.sw;
        }
    int64_t filled = -1; /* the input plane in scratch (image x channel), reused by the
                            channels of a depth multiplier */
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
    for (int64_t job = 0; job < jobs; ++job) {
      const int64_t img = job / oc, o = job % oc, ch = o / mult;
      const float *in = src + (img * c + ch) * h * wd;
      const float *wt = wts + o * taps;
      float *dsto = dst + job * oh * ow;
      if (!scratch || !off) {
        rung_dw_direct(&g, in, h, wd, wt, kh, kw, dsto, oh, ow);
      } else {
        if (filled != img * c + ch) {
          rung_dw_planes(&g, in, h, wd, scratch);
          filled = img * c + ch;
        }
        rung_dw_run(&g, scratch, off, wt, taps, res);
        for (int64_t y = 0; y < oh; ++y) rung_dw_copy(dsto + y * ow, res + y * g.wq, ow);
      }
      /* The epilogue on this channel's plane, row o of the output seen as [O, OH*OW],
       * while the plane is in cache (applied row by row as each is copied, it measured
       * the same). */
      if (ep) rung_gemm_ep_tile(ep, dsto, oh * ow, o, 0, 1, oh * ow);
    }
    free(scratch);
    free(off);
  }
}

/* ---- conv by row blocks ------------------------------------------------------------------ */

/* A conv of 2 spatial dims whose im2col columns would be much larger than the L2 cache: a
 * 224x224 map of 64 channels under a 3x3 kernel is 115 MB of columns, written by the
 * im2col and read back by the GEMM from memory, at 75 GFLOP/s where the same GEMM on
 * cached columns runs at 145. Here the output is cut into blocks of whole rows, and each
 * block's columns (about 1 MB) are made and multiplied while they are in the cache: per
 * image, group and block, out[o, rows] = W_g [O/G x C/G*KH*KW] @ cols [C/G*KH*KW x rows*OW].
 * t = {x [N,C,H,W], w [O,C/G,KH,KW], out [N,O,OH,OW]}, args = {strides[2], dilations[2],
 * pad_low[2], groups, rows per block}. Threads share out the blocks; each makes its own
 * columns. The weights are read again for every block, which is why rung chooses this
 * form only where a layer has few output channels for the size of a block. */

/* Block `rows` rows from output row y0 of the columns of `count` channels: row
 * (c, ky, kx) of the block holds, for each output point, the input it reads, 0 in the
 * padding. */
static void rung_conv_rows_cols(const float *in, int64_t h, int64_t wd, int64_t count,
                                int64_t kh, int64_t kw, int64_t ow, const int64_t *args,
                                int64_t y0, int64_t rows, float *cols) {
  const int64_t sh = args[0], sw = args[1], dh = args[2], dw = args[3], ph = args[4],
                pw = args[5];
  const int64_t width = rows * ow;
  for (int64_t kx = 0; kx < kw; ++kx) {
    /* Output columns [lo, hi) read inside the input at this kernel column. */
    const int64_t t0 = pw - kx * dw;
    int64_t lo = rung_ceildiv(t0, sw), hi = rung_ceildiv(wd + t0, sw);
    lo = lo < 0 ? 0 : lo > ow ? ow : lo;
    hi = hi < lo ? lo : hi > ow ? ow : hi;
    for (int64_t c = 0; c < count; ++c)
      for (int64_t ky = 0; ky < kh; ++ky) {
        float *row = cols + ((c * kh + ky) * kw + kx) * width;
        for (int64_t y = 0; y < rows; ++y, row += ow) {
          const int64_t iy = (y0 + y) * sh + ky * dh - ph;
          if (iy < 0 || iy >= h || lo == hi) {
            for (int64_t j = 0; j < ow; ++j) row[j] = 0.0f;
            continue;
          }
          const float *src = in + (c * h + iy) * wd - t0; /* src[j * sw] for row[j] */
          rung_im2col_zeros(row, lo);
          if (sw == 1)
            for (int64_t j = lo; j < hi; ++j) row[j] = src[j];
          else
            for (int64_t j = lo; j < hi; ++j) row[j] = src[j * sw];
          rung_im2col_zeros(row + hi, ow - hi);
        }
      }
  }
}

RUNG_API void rung_conv_rows_float(const rung_tensor *t, const int64_t *args,
                                   const rung_gemm_epilogue *ep) {
  const rung_tensor *x = &t[0], *w = &t[1], *out = &t[2];
  const int64_t n = out->shape[0], o = out->shape[1], oh = out->shape[2], ow = out->shape[3];
  const int64_t c = x->shape[1], h = x->shape[2], wd = x->shape[3];
  const int64_t kh = w->shape[2], kw = w->shape[3];
  const int64_t groups = args[6] > 0 ? args[6] : 1;
  const int64_t per_block = args[7] > 0 ? args[7] : 1;
  const int64_t og = o / groups, cg = c / groups, ck = cg * kh * kw, e = oh * ow;
  if (n <= 0 || o <= 0 || e <= 0) return;
  const float *src = (const float *)x->data, *wts = (const float *)w->data;
  float *dst = (float *)out->data;
  if (!rung_ep_any(ep)) ep = 0;
  if (ck <= 0) {
    for (int64_t i = 0; i < n * o * e; ++i) dst[i] = 0.0f;
    for (int64_t img = 0; ep && img < n; ++img) rung_gemm_ep_tile(ep, dst + img * o * e, e, 0, 0, o, e);
    return;
  }
  const int64_t blocks = rung_ceildiv(oh, per_block), jobs = n * groups * blocks;
  const int64_t width = per_block * ow;
  const size_t cols_bytes = ((size_t)(ck * width) * sizeof(float) + 63) / 64 * 64;
  const int64_t need = rung_gemm_scratch(og, width, ck, 0, 0, width);
  const size_t scratch_bytes = ((size_t)(need > 0 ? need : 1) * sizeof(float) + 63) / 64 * 64;
#ifdef _OPENMP
#pragma omp parallel if (jobs > 1 && !omp_in_parallel())
#endif
  {
    float *cols = (float *)aligned_alloc(64, cols_bytes);
    float *scratch = (float *)aligned_alloc(64, scratch_bytes);
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
    for (int64_t job = 0; job < jobs; ++job) {
      const int64_t img = job / (groups * blocks), g = job / blocks % groups, blk = job % blocks;
      const int64_t y0 = blk * per_block, rows = oh - y0 < per_block ? oh - y0 : per_block;
      const float *in = src + (img * c + g * cg) * h * wd;
      float *c0 = dst + (img * o + g * og) * e + y0 * ow;
      const float *a = wts + g * og * ck;
      if (!cols || !scratch) { /* no memory for columns: each point sums its taps */
        for (int64_t oc = 0; oc < og; ++oc)
          for (int64_t y = y0; y < y0 + rows; ++y)
            for (int64_t xo = 0; xo < ow; ++xo) {
              float acc = 0.0f;
              for (int64_t ci = 0; ci < cg; ++ci)
                for (int64_t ky = 0; ky < kh; ++ky) {
                  const int64_t iy = y * args[0] + ky * args[2] - args[4];
                  if (iy < 0 || iy >= h) continue;
                  for (int64_t kx = 0; kx < kw; ++kx) {
                    const int64_t ix = xo * args[1] + kx * args[3] - args[5];
                    if (ix >= 0 && ix < wd)
                      acc += a[(oc * cg + ci) * kh * kw + ky * kw + kx] *
                             in[(ci * h + iy) * wd + ix];
                  }
                }
              c0[oc * e + (y - y0) * ow + xo] = acc;
            }
        if (ep) rung_gemm_ep_tile(ep, c0, e, g * og, y0 * ow, og, rows * ow);
        continue;
      }
      rung_conv_rows_cols(in, h, wd, cg, kh, kw, ow, args, y0, rows, cols);
      const rung_gemm_problem p = {
          .a = a, .b = cols, .c = c0, .lda = ck, .ldb = rows * ow, .ldc = e,
          .m = og, .n = rows * ow, .k = ck, .tb = 0, .packed = 0, .npad = 0, .pcol = 0,
          .ep = ep, .row0 = g * og, .col0 = y0 * ow,
      };
      rung_gemm_2d(&p, 0, scratch);
    }
    free(cols);
    free(scratch);
  }
}

/* ---- conv by shifted rows ------------------------------------------------------------------ */

/* A stride-1 conv as the GEMM out[o, y*OW + x] = sum_k W[o, k] * B[k, y*OW + x] whose B, the
 * im2col columns, is never built: row k = (c, ky, kx) of B, along one output row y, is a
 * run of the input's row y + ky at column offset kx. So the input is copied once into a
 * zero-bordered buffer P [C, HP, WP] (HP = OH + (KH-1)*dh, WP = OW + (KW-1)*dw), and the
 * microkernel's tile, MR output channels by up to NR points of one output row, reads its
 * row k of B at P + off[k] + y*WP + x with off[k] = (c*HP + ky*dh)*WP + kx*dw. The im2col
 * writes and reads back KH*KW times the input; this copies it once (the small CNN's three
 * 3x3 convs spent 42 of 234 us in im2col).
 *
 * The weights are packed in panels of MR output channels, each step's MR values together
 * (rung_conv_prepack_w, once per model for constant weights), so a tile reads A through one
 * pointer and keeps its registers for B's vectors, which may lie on different rows. Tiles
 * are computed per K block of at most RUNG_KC (A's block stays in L1 across a row of tiles)
 * and the epilogue, if any, is applied to each tile after its last block, in registers for
 * whole tiles. Threads split the output rows; each does every
 * channel of its rows. Tiles cut by the end of a row read lanes past it (P has NR floats of
 * slack), computed into a buffer and dropped.
 *
 * A strided conv is one too, over the input split into phases: with strides SH x SW, tap
 * (ky, kx) of output (y, x) reads bordered point (y*SH + ky*dh, x*SW + kx*dw), which is
 * point (y + ky*dh / SH, x + kx*dw / SW) of the plane of the rows ky*dh % SH (mod SH) and
 * columns kx*dw % SW (mod SW). So P holds SH*SW phase planes per channel, and each tap is
 * again a shift: a 7x7 stride-2 stem conv needs no im2col either. t = {x [N,C,H,W],
 * w [O,C/G,KH,KW], out [N,O,OH,OW]}, args = {dilations[2], pad_low[2], groups, strides[2]}. */
/* A tile `lanes` wide (as rung_gemm_tile) whose vector v reads B at b + off[p] + bo[v]
 * and writes C at c + v * cstep. */
static inline void rung_shift_tile(int64_t kc, const float *a, int64_t lda, const float *b,
                                   const int64_t *off, const int64_t *bo, float *c, int64_t ldc,
                                   int64_t cstep, int add, const rung_gemm_epilogue *ep,
                                   int64_t r0, int64_t c0, int lanes) {
  if (lanes == RUNG_NR)
    rung_shift_tile_full(kc, a, lda, b, 0, c, ldc, add, 0, ep, r0, c0, off, bo[0], bo[1],
                         bo[RUNG_NV > 2 ? 2 : 0], cstep);
#if RUNG_NV > 2
  else if (lanes == 2 * RUNG_VW)
    rung_shift_tile_2(kc, a, lda, b, 0, c, ldc, add, 0, ep, r0, c0, off, bo[0], bo[1],
                         bo[RUNG_NV > 2 ? 2 : 0], cstep);
#endif
#if RUNG_NV > 1
  else if (lanes == RUNG_VW)
    rung_shift_tile_1(kc, a, lda, b, 0, c, ldc, add, 0, ep, r0, c0, off, bo[0], bo[1],
                         bo[RUNG_NV > 2 ? 2 : 0], cstep);
#endif
  else
    rung_shift_tile_half(kc, a, lda, b, 0, c, ldc, add, 0, ep, r0, c0, off, bo[0], bo[1],
                         bo[RUNG_NV > 2 ? 2 : 0], cstep);
}

/* Output rows [y0, y1) of channels [r0, r0 + rows) for one K block, where OW is a whole
 * number of vectors. The rows' vectors, taken in order, are C's points q*VW.. of the rows
 * (C's rows are contiguous), so a tile takes the next NV of them wherever they lie in P: a
 * row of 64 is one full tile and a third of the next, not a full tile and a one-vector
 * tile, whose FMAs wait on its loads. Only the last tile of the range may be narrower. */
static void rung_shift_rows(int64_t kc, const float *a, int64_t lda, const float *p,
                            const int64_t *off, int64_t wp, float *c, int64_t ldc, int64_t ow,
                            int64_t y0, int64_t y1, int add, const rung_gemm_epilogue *ep,
                            int64_t r0, int64_t rows) {
  const int64_t per_row = ow / RUNG_VW, q1 = y1 * per_row;
  for (int64_t q = y0 * per_row; q < q1; q += RUNG_NV) {
    const int64_t nv = q1 - q < RUNG_NV ? q1 - q : RUNG_NV;
    int64_t bo[RUNG_NV] = {0};
    for (int64_t v = 0; v < nv; ++v)
      bo[v] = (q + v) / per_row * wp + (q + v) % per_row * RUNG_VW;
    const int lanes = (int)(nv * RUNG_VW);
    if (rows == RUNG_MR) {
      rung_shift_tile(kc, a, lda, p, off, bo, c + q * RUNG_VW, ldc, RUNG_VW, add, ep, r0,
                      q * RUNG_VW, lanes);
      continue;
    }
    float tile[RUNG_MR * RUNG_NR];
    rung_shift_tile(kc, a, lda, p, off, bo, tile, RUNG_NR, RUNG_VW, 0, 0, 0, 0, lanes);
    float *cq = c + q * RUNG_VW;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < lanes; ++j)
        cq[r * ldc + j] = (add ? cq[r * ldc + j] : 0.0f) + tile[r * RUNG_NR + j];
    if (ep) rung_gemm_ep_tile(ep, cq, ldc, r0, q * RUNG_VW, rows, lanes);
  }
}

/* Whether an epilogue reads only per-row or single values, which a tile applies to its
 * accumulators wherever its columns lie in C. */
static inline int rung_ep_rowwise(const rung_gemm_epilogue *ep) {
  for (int s = 0; ep && s < ep->count; ++s)
    if (ep->step[s].index != RUNG_EP_ROW && ep->step[s].index != RUNG_EP_SCALAR) return 0;
  return 1;
}

/* Flat points [f0, f1) (point f = y * WP + x of the wide output, x < WP) of channels
 * [r0, r0 + rows) for one K block, into `wide` (row stride ldw); with `last`, each tile's
 * points with x < OW are then copied to C and finished there. Rows whose width is not a
 * whole number of vectors (56, 28, 14, 7) waste only the WP - OW columns of each row this
 * way, where tiles along each row would waste most of a vector at its end. */
static void rung_shift_flat(int64_t kc, const float *a, int64_t lda, const float *p,
                            const int64_t *off, int64_t wp, float *wide, int64_t ldw, float *c,
                            int64_t ldc, int64_t ow, int64_t f0, int64_t f1, int add, int last,
                            const rung_gemm_epilogue *ep, int64_t r0, int64_t rows) {
  const rung_gemm_epilogue *tep = last && rung_ep_rowwise(ep) ? ep : 0; /* in registers */
  int64_t along[RUNG_NV];
  for (int v = 0; v < RUNG_NV; ++v) along[v] = v * RUNG_VW;
  for (int64_t f = f0; f < f1;) {
    const int64_t rem = f1 - f;
    int lanes = RUNG_NR;
    while (lanes > RUNG_VW && lanes > rem) lanes -= RUNG_VW;
    if (lanes > rem) lanes = rem <= RUNG_VW / 2 ? RUNG_VW / 2 : RUNG_VW;
    const int64_t w = lanes < rem ? lanes : rem;
    if (rows == RUNG_MR && lanes <= rem) {
      rung_shift_tile(kc, a, lda, p + f, off, along, wide + f, ldw, RUNG_VW, add, tep, r0, 0,
                      lanes);
    } else {
      float tile[RUNG_MR * RUNG_NR];
      rung_shift_tile(kc, a, lda, p + f, off, along, tile, RUNG_NR, RUNG_VW, 0, 0, 0, 0, lanes);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < w; ++j)
          wide[r * ldw + f + j] = (add ? wide[r * ldw + f + j] : 0.0f) + tile[r * RUNG_NR + j];
      if (tep) rung_gemm_ep_tile(tep, wide + f, ldw, r0, 0, rows, w);
    }
    if (last) /* the tile's points inside the output, row segment by row segment */
      for (int64_t g = f; g < f + w;) {
        const int64_t y = g / wp, x = g % wp;
        const int64_t end = f + w - y * wp < wp ? f + w - y * wp : wp; /* x range [x, end) */
        if (x < ow) {
          const int64_t x1 = end < ow ? end : ow;
          for (int64_t r = 0; r < rows; ++r)
            memcpy(c + r * ldc + y * ow + x, wide + r * ldw + g, sizeof(float) * (size_t)(x1 - x));
          if (ep && !tep) rung_gemm_ep_tile(ep, c + y * ow + x, ldc, r0, y * ow + x, rows, x1 - x);
        }
        g = y * wp + end;
      }
    f += lanes;
  }
}

/* A conv's weights [G * OG, CK] in the panels rung_conv_shift reads: per group, panels of
 * MR output channels, each step k's MR values together (rows past a group's last channel
 * are zeros). `dst` holds G * ceil(OG / MR) * MR * CK floats. */
static void rung_conv_pack_w(const float *w, int64_t o, int64_t ck, int64_t groups, float *dst) {
  const int64_t og = o / groups, panels = (og + RUNG_MR - 1) / RUNG_MR;
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t pn = 0; pn < panels; ++pn) {
      float *d = dst + (g * panels + pn) * RUNG_MR * ck;
      const int64_t rows = og - pn * RUNG_MR < RUNG_MR ? og - pn * RUNG_MR : RUNG_MR;
      const float *wr = w + (g * og + pn * RUNG_MR) * ck;
      for (int64_t k = 0; k < ck; ++k) {
        for (int64_t r = 0; r < rows; ++r) d[k * RUNG_MR + r] = wr[r * ck + k];
        for (int64_t r = rows; r < RUNG_MR; ++r) d[k * RUNG_MR + r] = 0.0f;
      }
    }
}

static size_t rung_conv_packed_bytes(int64_t o, int64_t ck, int64_t groups) {
  const int64_t panels = (o / groups + RUNG_MR - 1) / RUNG_MR;
  return ((size_t)(groups * panels * RUNG_MR * ck) * sizeof(float) + 63) / 64 * 64;
}

RUNG_API float *rung_conv_prepack_w(const float *w, int64_t o, int64_t ck, int64_t groups) {
  if (o <= 0 || ck <= 0 || groups <= 0 || o % groups) return 0;
  float *dst = (float *)aligned_alloc(64, rung_conv_packed_bytes(o, ck, groups));
  if (dst) rung_conv_pack_w(w, o, ck, groups, dst);
  return dst;
}

RUNG_API void rung_conv_shift_float(const rung_tensor *t, const int64_t *args,
                                    const rung_gemm_epilogue *ep) {
  rung_conv_shift_packed_float(t, args, ep, 0);
}

RUNG_API void rung_conv_shift_packed_float(const rung_tensor *t, const int64_t *args,
                                           const rung_gemm_epilogue *ep, const float *packed) {
  const rung_tensor *x = &t[0], *w = &t[1], *out = &t[2];
  const int64_t n = out->shape[0], o = out->shape[1], oh = out->shape[2], ow = out->shape[3];
  const int64_t c = x->shape[1], h = x->shape[2], wd = x->shape[3];
  const int64_t kh = w->shape[2], kw = w->shape[3];
  const int64_t dh = args[0], dw = args[1], pt = args[2], pl = args[3];
  const int64_t groups = args[4] > 0 ? args[4] : 1;
  const int64_t sh = args[5] > 0 ? args[5] : 1, sw = args[6] > 0 ? args[6] : 1;
  const int64_t og = o / groups, cg = c / groups, ck = cg * kh * kw, e = oh * ow;
  if (n <= 0 || o <= 0 || e <= 0) return;
  if (!rung_ep_any(ep)) ep = 0;
  const float *src = (const float *)x->data, *wts = (const float *)w->data;
  float *dst = (float *)out->data;
  /* Per channel, SH * SW phase planes of HP x WP; a channel's share of P is `plane`. */
  const int64_t phases = sh * sw, hp = oh + (kh - 1) * dh / sh, wp = ow + (kw - 1) * dw / sw;
  const int64_t plane = phases * hp * wp;
  /* Rows of whole vectors go by rows; others as one flat run through `wide`. */
  const int flat = ow % RUNG_VW != 0, ldw = oh * wp + RUNG_NR;
  const size_t slack = (size_t)(RUNG_NR + wp); /* read past the last plane by the last tiles */
  float *pad = ck > 0 ? (float *)aligned_alloc(64, ((c * plane + slack) * 4 + 63) / 64 * 64) : 0;
  float *wide = ck > 0 && flat ? (float *)aligned_alloc(64, ((size_t)(o * ldw) * 4 + 63) / 64 * 64) : 0;
  int64_t *off = ck > 0 ? (int64_t *)malloc(sizeof(int64_t) * (size_t)ck) : 0;
  const int64_t panels = (og + RUNG_MR - 1) / RUNG_MR;
  float *own = ck > 0 && !packed
                   ? (float *)aligned_alloc(64, rung_conv_packed_bytes(o, ck, groups))
                   : 0;
  const float *apk = packed ? packed : own;
  if (ck > 0 && (!pad || !off || !apk || (flat && !wide))) {
    /* no memory: point by point */
    for (int64_t img = 0; img < n; ++img)
      for (int64_t oc = 0; oc < o; ++oc) {
        const int64_t g = oc / og;
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t xo = 0; xo < ow; ++xo) {
            float acc = 0.0f;
            for (int64_t ci = 0; ci < cg; ++ci)
              for (int64_t ky = 0; ky < kh; ++ky) {
                const int64_t iy = y * sh + ky * dh - pt;
                if (iy < 0 || iy >= h) continue;
                for (int64_t kx = 0; kx < kw; ++kx) {
                  const int64_t ix = xo * sw + kx * dw - pl;
                  if (ix >= 0 && ix < wd)
                    acc += wts[(oc * cg + ci) * kh * kw + ky * kw + kx] *
                           src[((img * c + g * cg + ci) * h + iy) * wd + ix];
                }
              }
            dst[(img * o + oc) * e + y * ow + xo] = acc;
          }
      }
    if (ep)
      for (int64_t img = 0; img < n; ++img) rung_gemm_ep_tile(ep, dst + img * o * e, e, 0, 0, o, e);
    free(pad);
    free(wide);
    free(off);
    free(own);
    return;
  }
  for (int64_t ci = 0; ci < cg; ++ci)
    for (int64_t ky = 0; ky < kh; ++ky)
      for (int64_t kx = 0; kx < kw; ++kx)
        off[(ci * kh + ky) * kw + kx] =
            (((ci * sh + ky * dh % sh) * sw + kx * dw % sw) * hp + ky * dh / sh) * wp + kx * dw / sw;
  const int64_t kstep = ck > 0 ? rung_gemm_kstep(ck) : 1;
  if (own) rung_conv_pack_w(wts, o, ck, groups, own);
  for (int64_t img = 0; img < n; ++img) {
    const float *in = src + img * c * h * wd;
#ifdef _OPENMP
#pragma omp parallel if (oh > 1 && 2 * o * e * ck >= RUNG_GEMM_MIN_FLOPS && !omp_in_parallel())
#endif
    {
      if (ck > 0) {
        /* P: the input, bordered with zeros; with strides, phase (qy, qx)'s plane holds
         * the bordered input's rows qy, qy + SH, ... and columns qx, qx + SW, ... */
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (int64_t row = 0; row < c * phases * hp; ++row) {
          const int64_t ci = row / (phases * hp), ph = row / hp % phases, r = row % hp;
          const int64_t qx = ph % sw, iy = r * sh + ph / sw - pt;
          float *prow = pad + row * wp;
          if (iy < 0 || iy >= h) {
            memset(prow, 0, sizeof(float) * (size_t)wp);
            continue;
          }
          const float *irow = in + (ci * h + iy) * wd;
          if (sw == 1)
            for (int64_t px = 0; px < wp; ++px) {
              const int64_t ix = px - pl;
              prow[px] = ix >= 0 && ix < wd ? irow[ix] : 0.0f;
            }
          else
            for (int64_t px = 0; px < wp; ++px) {
              const int64_t ix = px * sw + qx - pl;
              prow[px] = ix >= 0 && ix < wd ? irow[ix] : 0.0f;
            }
        }
#ifdef _OPENMP
#pragma omp single
#endif
        memset(pad + c * plane, 0, sizeof(float) * slack);
      }
      int64_t y0 = 0, y1 = oh;
#ifdef _OPENMP
      if (omp_get_num_threads() > 1) {
        const int64_t nt = omp_get_num_threads(), id = omp_get_thread_num();
        y0 = oh * id / nt;
        y1 = oh * (id + 1) / nt;
      }
#endif
      for (int64_t g = 0; g < groups; ++g) {
        const float *pg = pad + g * cg * plane;
        float *cg0 = dst + (img * o + g * og) * e;
        if (ck <= 0) {
          for (int64_t r = 0; r < og; ++r)
            for (int64_t j = y0 * ow; j < y1 * ow; ++j) cg0[r * e + j] = 0.0f;
          if (ep)
            for (int64_t y = y0; y < y1; ++y)
              rung_gemm_ep_tile(ep, cg0 + y * ow, e, g * og, y * ow, og, ow);
          continue;
        }
        for (int64_t pc = 0; pc < ck; pc += kstep) {
          const int64_t kc = ck - pc < kstep ? ck - pc : kstep;
          const rung_gemm_epilogue *tep = pc + kc == ck ? ep : 0;
          for (int64_t ir = 0; ir < og; ir += RUNG_MR) {
            const int64_t rows = og - ir < RUNG_MR ? og - ir : RUNG_MR;
            const float *ap = apk + ((g * panels + ir / RUNG_MR) * ck + pc) * RUNG_MR;
            if (flat)
              rung_shift_flat(kc, ap, ck, pg, off + pc, wp, wide + (g * og + ir) * ldw, ldw,
                              cg0 + ir * e, e, ow, y0 * wp, (y1 - 1) * wp + ow, pc > 0,
                              pc + kc == ck, ep, g * og + ir, rows);
            else
              rung_shift_rows(kc, ap, ck, pg, off + pc, wp, cg0 + ir * e, e, ow, y0, y1, pc > 0,
                              tep, g * og + ir, rows);
          }
        }
      }
    }
  }
  free(pad);
  free(wide);
  free(off);
  free(own);
}

#endif /* RUNG_PREBUILT_RUNTIME */

#endif
