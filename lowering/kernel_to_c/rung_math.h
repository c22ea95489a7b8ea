/* rung's float transcendental functions (included by rung_runtime.h).
 *
 * Generated code calls these instead of libm's expf, tanhf, erff and logf. A loop
 * that calls a libm function stays scalar; these are static inline, branch-free
 * and free of calls and table lookups, so that gcc -O3 vectorizes the loops that
 * call them (Sigmoid, SiLU, Softmax, GELU, Tanh, ...). Double precision stays on libm.
 *
 * Largest errors over every float input, against the exact value, in units in the
 * last place of the result, with the project's flags (-O3 -march=native: fused
 * multiply-adds where the CPU has them; without, in parentheses). The bounds that
 * test/python/test_rung_math.py checks: 1 ulp (1.2) for exp, 2 for tanh and erf,
 * 1 for log.
 *   rung_expf   0.90 ulp (1.17). Results below FLT_MIN are subnormals, to within
 *               one of their ulps (gradual underflow, as libm); x < -103.97 gives
 *               +0, x > 88.72 gives +inf.
 *   rung_tanhf  1.50 ulp (1.56), absolute 9e-8; exactly +-1 from |x| = 9.0109139 on,
 *               where the rounded tanh is 1.
 *   rung_erff   1.16 ulp (1.29), absolute 8e-8; exactly +-1 from |x| = 3.9192059 on.
 *   rung_logf   0.84 ulp (0.84), subnormal inputs included; log(+-0) = -inf,
 *               log(x < 0) = NaN, log(+inf) = +inf.
 * Each propagates NaN, maps infinities to their limits and keeps the sign of zero
 * (tanh(-0) = erf(-0) = -0). The polynomial coefficients are weighted minimax fits
 * (Remez exchange), rounded to float.
 */
#ifndef RUNG_MATH_INCLUDED /* not RUNG_MATH_H: a model's own header may guard with that */
#define RUNG_MATH_INCLUDED

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Bit casts that gcc turns into plain vector moves. */
static inline RUNG_UNUSED uint32_t rung_math_bits(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

static inline RUNG_UNUSED float rung_math_float(uint32_t u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* `c ? a : b` as bit masks. gcc does not if-convert a `?:` whose arm is a float
 * operation (it might trap, so it is kept under its branch), which leaves the
 * loop scalar; with masks both arms are computed and the choice is a blend. */
static inline RUNG_UNUSED float rung_math_select(int c, float a, float b) {
  uint32_t mask = 0u - (uint32_t)(c != 0);
  return rung_math_float((rung_math_bits(a) & mask) | (rung_math_bits(b) & ~mask));
}

/* maximumf / minimumf (NaN if either operand is NaN) as a blend, for the row loop of an
 * unrolled window, where gcc leaves a `?:` as a branch and the row scalar. */
static inline RUNG_UNUSED float rung_maximumf(float a, float b) {
  return rung_math_select((a != a) | (a > b), a, b);
}

static inline RUNG_UNUSED float rung_minimumf(float a, float b) {
  return rung_math_select((a != a) | (a < b), a, b);
}

/* x with the sign bit of `sign`; `x` has none. */
static inline RUNG_UNUSED float rung_math_signed(float x, float sign) {
  return rung_math_float(rung_math_bits(x) | (rung_math_bits(sign) & 0x80000000u));
}

/* e^x = 2^n e^r, n = round(x / ln2), |r| <= ln2/2 (Cody-Waite: ln2 in two parts,
 * the first short enough that n * part is exact). The 1.5 * 2^23 shifter rounds
 * x / ln2 to an integer that sits in the low bits of its float, so no float-to-int
 * conversion is needed (a NaN would make that undefined). 2^n is applied as two
 * factors 2^(n/2) and 2^(n - n/2), each a normal float for n in [-150, 128]: one
 * rounding into the subnormals below FLT_MIN, a correct infinity above FLT_MAX.
 * Clamping x to [-104, 89] keeps n in that range and sends +-inf to their
 * limits; a NaN passes the clamps and propagates through r. */
static inline RUNG_UNUSED float rung_expf(float x) {
  const float shifter = 0x1.8p23f;
  x = rung_math_select(x > 89.0f, 89.0f, x);
  x = rung_math_select(x < -104.0f, -104.0f, x);
  float z = x * 0x1.715476p+0f + shifter;
  int32_t n = (int32_t)(rung_math_bits(z) - rung_math_bits(shifter));
  float nf = z - shifter;
  float r = x - nf * 0x1.62e4p-1f;
  r = r - nf * 0x1.7f7d1cp-20f;
  /* e^r = 1 + r + r^2 (c2 + c3 r + ... + c6 r^4), relative error 3.5e-9 */
  float q = 0x1.6a1080p-10f;
  q = q * r + 0x1.1245c8p-7f;
  q = q * r + 0x1.55593cp-5f;
  q = q * r + 0x1.555482p-3f;
  q = q * r + 0x1.fffffcp-2f;
  q = q * r + 1.0f;
  float p = q * r + 1.0f;
  int32_t n1 = n >> 1;
  int32_t n2 = n - n1;
  float s1 = rung_math_float((uint32_t)(n1 + 127) << 23);
  float s2 = rung_math_float((uint32_t)(n2 + 127) << 23);
  return p * s1 * s2;
}

/* tanh(x) = x + x^3 P(x^2) for |x| < 0.5625 (relative error 7.7e-9), else
 * sign(x) (1 - e) / (1 + e) with e = e^(-2|x|), which has no cancellation there:
 * tanh(x) >= 0.5. e underflows to 0 for large |x|, giving exactly +-1. */
static inline RUNG_UNUSED float rung_tanhf(float x) {
  float a = rung_math_float(rung_math_bits(x) & 0x7fffffffu);
  float x2 = x * x;
  float p = -0x1.b2836cp-8f;
  p = p * x2 + 0x1.5dac48p-6f;
  p = p * x2 - 0x1.b9b6e2p-5f;
  p = p * x2 + 0x1.111068p-3f;
  p = p * x2 - 0x1.555556p-2f;
  float small = rung_math_signed(a + a * x2 * p, x);
  float e = rung_expf(-2.0f * a);
  float large = rung_math_signed(1.0f - 2.0f * e / (1.0f + e), x);
  return rung_math_select(a < 0.5625f, small, large);
}

/* erf(x) = x + x P(x^2) for |x| < 0.921875 (relative error 4.1e-10; P is small,
 * so its rounding errors are too), else
 * sign(x) (1 - e^Q(|x|)), Q a fit of log(erfc) on [0.921875, 4] (absolute error of
 * the result 1.1e-8). erfc(4) < 2^-25, so |x| is clamped to 4: 1 - e^Q(4) rounds
 * to exactly 1; a NaN passes the clamp. */
static inline RUNG_UNUSED float rung_erff(float x) {
  float a = rung_math_float(rung_math_bits(x) & 0x7fffffffu);
  float x2 = x * x;
  float p = 0x1.5f1146p-14f;
  p = p * x2 - 0x1.aae988p-11f;
  p = p * x2 + 0x1.54dad8p-8f;
  p = p * x2 - 0x1.b8107cp-6f;
  p = p * x2 + 0x1.ce2e20p-4f;
  p = p * x2 - 0x1.812744p-2f;
  p = p * x2 + 0x1.06eba8p-3f;
  float small = x + x * p;
  float t = rung_math_select(a > 4.0f, 4.0f, a);
  float q = -0x1.10097ap-16f;
  q = q * t + 0x1.803eb6p-12f;
  q = q * t - 0x1.ef3c98p-9f;
  q = q * t + 0x1.87a2f2p-6f;
  q = q * t - 0x1.b298a4p-4f;
  q = q * t - 0x1.456d8cp-1f;
  q = q * t - 0x1.20d5fep+0f;
  q = q * t - 0x1.d47212p-14f;
  float large = rung_math_signed(1.0f - rung_expf(q), x);
  return rung_math_select(a < 0.921875f, small, large);
}

/* log(x) = k ln2 + log(1 + f), x = 2^k (1 + f) with 1 + f in [2/3, 4/3). With
 * s = f / (2 + f), log(1 + f) = f - f^2/2 + s (f^2/2 + R(s^2)), R(z) a fit of
 * 2 atanh(s)/s - 2 (absolute error 5.7e-9): s's rounding only touches the small
 * terms. Subnormal inputs are scaled by 2^23 first; zero, negative numbers,
 * infinity and NaN are selected at the end. */
static inline RUNG_UNUSED float rung_logf(float x) {
  int tiny = x < 0x1p-126f;
  uint32_t ix = rung_math_bits(rung_math_select(tiny, x * 0x1p23f, x));
  int32_t k = (int32_t)(ix - 0x3f2aaaabu) >> 23;
  float m = rung_math_float(ix - ((uint32_t)k << 23));
  float kf = (float)(k - (tiny ? 23 : 0));
  float f = m - 1.0f;
  float s = f / (2.0f + f);
  float z = s * s;
  float r = z * (0x1.5555b4p-1f + z * (0x1.992a96p-2f + z * 0x1.36ee3ap-2f));
  float hfsq = 0.5f * f * f;
  float y = kf * 0x1.62e4p-1f - ((hfsq - (s * (hfsq + r) + kf * 0x1.7f7d1cp-20f)) - f);
  float special = rung_math_select(x == 0.0f, -INFINITY, rung_math_select(x < 0.0f, NAN, x));
  return rung_math_select((x > 0.0f) & (x < INFINITY), y, special);
}

#endif
