/* rung's matmul microkernel (included by rung_runtime.h). */
#ifndef RUNG_GEMM_H
#define RUNG_GEMM_H

/* ---- matmul: out[b] (+)= lhs[b] x rhs[b], row-major [B,M,K] x [B,K,N] --------------------- */

static RUNG_UNUSED void rung_matmul_float(const float *a, const float *b, float *c, int64_t ba,
                                          int64_t bb, int64_t batch, int64_t m, int64_t n,
                                          int64_t k, int accumulate) {
  for (int64_t p = 0; p < batch; ++p) {
    const float *A = a + (ba == 1 ? 0 : p) * m * k;
    const float *B = b + (bb == 1 ? 0 : p) * k * n;
    float *C = c + p * m * n;
    for (int64_t i = 0; i < m; ++i) {
      float *row = C + i * n;
      if (!accumulate)
        for (int64_t j = 0; j < n; ++j) row[j] = 0.0f;
      for (int64_t q = 0; q < k; ++q) {
        const float av = A[i * k + q];
        const float *brow = B + q * n;
        for (int64_t j = 0; j < n; ++j) row[j] += av * brow[j];
      }
    }
  }
}

#endif
