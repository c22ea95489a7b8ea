"""The runtime's float exp, tanh, erf and log (`rung_math.h`): accuracy and vectorization.

The functions are compiled with the project's flags into a small library and
compared with float64 references (numpy, `math.erf`) over every 64th float bit
pattern of the ranges where they are not trivial, a coarse sweep of all floats,
and special values, against the error bounds the header documents. gcc must
vectorize a plain loop calling them: that is why they exist, libm's `expf` kept
every SiLU/Sigmoid/Softmax loop scalar.
"""

from __future__ import annotations

import ctypes
import math
import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from rung.runtime import native

SOURCE = """\
#include "rung_runtime.h"
#define RUNG_MATH_LOOP(name, fn) \\
  void name(const float *restrict x, float *restrict y, int64_t n) { \\
    for (int64_t i = 0; i < n; ++i) y[i] = fn(x[i]); \\
  }
RUNG_MATH_LOOP(test_exp, rung_expf)
RUNG_MATH_LOOP(test_tanh, rung_tanhf)
RUNG_MATH_LOOP(test_erf, rung_erff)
RUNG_MATH_LOOP(test_log, rung_logf)
int test_has_fma(void) {
#ifdef __FP_FAST_FMAF
  return 1;
#else
  return 0;
#endif
}
"""

SILU = """\
#include "rung_runtime.h"
void silu(const float *restrict x, float *restrict y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] / (1.0f + rung_expf(-x[i]));
}
void gelu(const float *restrict x, float *restrict y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] * (1.0f + rung_erff(x[i] * 0.70710678f));
}
void tanh_loop(const float *restrict x, float *restrict y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = rung_tanhf(x[i]);
}
void softplus(const float *restrict x, float *restrict y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = rung_logf(1.0f + rung_expf(x[i]));
}
"""
SILU_LOOPS = [3, 6, 9, 12]
"""The source lines of SILU's loops."""

MAX = float(np.finfo(np.float32).max)
TINY = float(np.finfo(np.float32).tiny)
SUBNORMAL = float(np.float32(2.0**-149))


def copy_headers(folder: Path) -> None:
    for header in native.runtime_headers():
        (folder / header.name).write_bytes(header.read_bytes())


def gcc() -> list[str]:
    """The compiler, if it is gcc (the vectorizer report is gcc's)."""
    cc = native.compiler()
    version = subprocess.run([*cc, "--version"], capture_output=True, text=True).stdout
    if "Free Software Foundation" not in version:
        pytest.skip("the C compiler is not gcc: -fopt-info-vec-optimized is gcc's")
    return cc


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory) -> ctypes.CDLL:
    """The four functions, each in a loop, built with the flags of a model's library."""
    folder = tmp_path_factory.mktemp("rung_math")
    copy_headers(folder)
    (folder / "math.c").write_text(SOURCE)
    cmd = [*native.compiler(), *native.build_flags(False), "math.c", "-o", "libmath.so", "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=folder, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return ctypes.CDLL(str(folder / "libmath.so"))


def run(lib: ctypes.CDLL, name: str, x: np.ndarray) -> np.ndarray:
    x = np.ascontiguousarray(x, dtype=np.float32)
    y = np.empty_like(x)
    fn = getattr(lib, f"test_{name}")
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    fn(x.ctypes.data, y.ctypes.data, x.size)
    return y


def erf64(x: np.ndarray) -> np.ndarray:
    return np.array([math.erf(v) for v in x.astype(np.float64).tolist()], dtype=np.float64)


REFERENCES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "exp": lambda x: np.exp(x.astype(np.float64)),
    "tanh": lambda x: np.tanh(x.astype(np.float64)),
    "erf": erf64,
    "log": lambda x: np.log(x.astype(np.float64)),
}


def ulp_bounds(lib: ctypes.CDLL) -> dict[str, float]:
    """The header's bounds: rung_expf is within 1 ulp with fused multiply-adds
    (-march=native on a CPU that has them), 1.2 without."""
    return {"exp": 1.0 if lib.test_has_fma() else 1.2, "tanh": 2.0, "erf": 2.0, "log": 1.0}


ABS_BOUNDS = {"tanh": 1e-7, "erf": 1e-7}


def bit_range(lo: float, hi: float, step: int) -> np.ndarray:
    """Every `step`-th float32 bit pattern from `lo` to `hi` (same sign, |lo| <= |hi|)."""
    a, b = (np.array([v], dtype=np.float32).view(np.uint32)[0] for v in (lo, hi))
    return np.arange(int(a), int(b) + 1, step, dtype=np.uint32).view(np.float32)


def chunks(x: np.ndarray, size: int = 1 << 21) -> Iterator[np.ndarray]:
    for i in range(0, x.size, size):
        yield x[i : i + size]


def ulp_of(ref: np.ndarray) -> np.ndarray:
    """The spacing of floats at `ref` (the subnormals' below FLT_MIN)."""
    _, e = np.frexp(ref)
    return np.ldexp(1.0, np.maximum(e, -125) - 24)


def check(lib: ctypes.CDLL, name: str, x: np.ndarray) -> tuple[float, float]:
    """Compare `name` over `x` with its reference; the largest ulp and absolute errors."""
    worst_ulp = worst_abs = 0.0
    for part in chunks(x):
        got = run(lib, name, part)
        with np.errstate(all="ignore"):  # NaN and infinite inputs, overflowing results
            ref = REFERENCES[name](part)
            ref32 = ref.astype(np.float32)
        nan = np.isnan(ref)
        assert np.array_equal(np.isnan(got), nan), part[np.isnan(got) != nan][:5]
        inf = np.isinf(ref32)
        assert np.array_equal(got[inf], ref32[inf]), part[inf][got[inf] != ref32[inf]][:5]
        finite = ~(nan | inf)
        g, r = got[finite].astype(np.float64), ref[finite]
        assert np.isfinite(g).all(), part[finite][~np.isfinite(g)][:5]
        ulps = np.abs(g - r) / ulp_of(r)
        worst_ulp = max(worst_ulp, float(ulps.max(initial=0.0)))
        worst_abs = max(worst_abs, float(np.abs(g - r).max(initial=0.0)))
        zero = r == 0
        assert np.array_equal(np.signbit(g[zero]), np.signbit(r[zero])), part[finite][zero][:5]
    return worst_ulp, worst_abs


def both_signs(x: np.ndarray) -> np.ndarray:
    return np.concatenate([x, -x])


SWEEPS = {
    "exp": np.concatenate([bit_range(2.0**-26, 89.0, 64), bit_range(-(2.0**-26), -104.0, 64)]),
    "tanh": both_signs(bit_range(2.0**-20, 9.1, 64)),
    "erf": both_signs(bit_range(2.0**-20, 4.0, 64)),
    "log": np.concatenate(
        [
            bit_range(2.0**-10, 2.0**10, 64),
            bit_range(SUBNORMAL, TINY, 64),
            bit_range(TINY, MAX, 4096),
        ]
    ),
}
"""Where each function is not trivially 1, x, or its limit: every 64th float."""

SPECIALS = np.array(
    [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, 0.5625, 0.921875, 2.0 / 3, 4.0 / 3]
    + [88.72283, 88.722839, 89.0, 100.0, -87.33654, -87.33655, -103.97207, -103.97208, -104.0]
    + [-150.0, 9.010913, 9.0109129, 9.02, 3.9192057, 3.92, SUBNORMAL, -SUBNORMAL, TINY, -TINY]
    + [MAX, -MAX, 1e-30, -1e-30, 2.0**-26, 2.0**-13],
    dtype=np.float32,
)


@pytest.mark.parametrize("name", ["exp", "tanh", "erf", "log"])
def test_error_bounds(lib: ctypes.CDLL, name: str) -> None:
    worst_ulp, worst_abs = check(lib, name, SWEEPS[name])
    bounds = ulp_bounds(lib)
    assert worst_ulp <= bounds[name], f"{name}: {worst_ulp:.3f} ulp"
    assert worst_abs <= ABS_BOUNDS.get(name, math.inf), f"{name}: {worst_abs:.3g}"


@pytest.mark.parametrize("name", ["exp", "tanh", "erf", "log"])
def test_every_4099th_float_and_special_values(lib: ctypes.CDLL, name: str) -> None:
    """All magnitudes, the signs, NaN, the infinities, the over/underflow thresholds,
    subnormals and the saturation points."""
    every = np.arange(0, 1 << 32, 4099, dtype=np.uint64).astype(np.uint32).view(np.float32)
    worst_ulp, _ = check(lib, name, np.concatenate([every, SPECIALS]))
    assert worst_ulp <= ulp_bounds(lib)[name], f"{name}: {worst_ulp:.3f} ulp"


def test_limits(lib: ctypes.CDLL) -> None:
    """The exact values at the ends: overflow, underflow, saturation, signed zeros."""
    nan, inf = math.nan, math.inf
    cases = {
        "exp": [(inf, inf), (-inf, 0.0), (89.0, inf), (88.722839, inf), (-104.0, 0.0)],
        "tanh": [(inf, 1.0), (-inf, -1.0), (-0.0, -0.0), (0.0, 0.0), (1e30, 1.0)],
        "erf": [(inf, 1.0), (-inf, -1.0), (-0.0, -0.0), (0.0, 0.0), (-1e30, -1.0)],
        "log": [(0.0, -inf), (-0.0, -inf), (inf, inf), (-1.0, nan), (-inf, nan), (1.0, 0.0)],
    }
    for name, pairs in cases.items():
        x = np.array([a for a, _ in pairs], dtype=np.float32)
        want = np.array([b for _, b in pairs], dtype=np.float32)
        got = run(lib, name, x)
        np.testing.assert_array_equal(got, want, err_msg=name)
        assert np.array_equal(np.signbit(got), np.signbit(want)), name
        assert np.isnan(run(lib, name, np.array([nan, -nan], dtype=np.float32))).all(), name
    assert run(lib, "exp", np.array([88.72283], dtype=np.float32))[0] < inf
    smallest = run(lib, "exp", np.array([-103.97207], dtype=np.float32))[0]
    assert smallest == np.float32(SUBNORMAL)


def test_tanh_and_erf_saturate_exactly_where_the_rounded_value_is_one(lib: ctypes.CDLL) -> None:
    """tanh is exactly +-1 from 0x1.205968p+3 = 9.01091385 on (the first float whose
    tanh rounds to 1), erf from 0x1.f5a88ap+1 = 3.91920590; just below, both are the
    float under 1, as the reference."""
    for name, first_one in [("tanh", "0x1.205968p+3"), ("erf", "0x1.f5a88ap+1")]:
        one = np.float32(float.fromhex(first_one))
        ref = REFERENCES[name](np.array([one, np.nextafter(one, np.float32(0))]))
        assert list(ref.astype(np.float32)) == [1.0, np.nextafter(np.float32(1), np.float32(0))]
        x = bit_range(float(one), 1e6, 64)
        assert (run(lib, name, x) == 1.0).all(), name
        assert (run(lib, name, -x) == -1.0).all(), name
        below = np.nextafter(one, np.float32(0))
        assert run(lib, name, np.array([below]))[0] == np.nextafter(np.float32(1), np.float32(0))


def test_gcc_vectorizes_loops_calling_them(tmp_path: Path) -> None:
    """A loop `y[i] = x[i] / (1 + rung_expf(-x[i]))` (and GELU's, tanh's, Softplus's),
    built with the project's flags, is vectorized and calls nothing."""
    cc = gcc()
    copy_headers(tmp_path)
    (tmp_path / "silu.c").write_text(SILU)
    flags = [*native.build_flags(False, shared=False), "-fopt-info-vec-optimized"]
    cmd = [*cc, *flags, "-S", "silu.c", "-o", "silu.s"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    vectorized = {
        int(m) for m in re.findall(r"silu\.c:(\d+):\d+: optimized: loop vectorized", proc.stderr)
    }
    assert vectorized == set(SILU_LOOPS), proc.stderr
    calls = re.findall(r"^\s*call\w*\s+(\S+)", (tmp_path / "silu.s").read_text(), re.MULTILINE)
    assert calls == []


EXTREMA = """\
#include "rung_runtime.h"
void test_max(const float *restrict a, const float *restrict b, float *restrict y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = rung_maximumf(a[i], b[i]);
}
void test_min(const float *restrict a, const float *restrict b, float *restrict y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = rung_minimumf(a[i], b[i]);
}
"""

WINDOW = """\
#include "rung_runtime.h"
static const float lo[1] = {0.0f}, hi[1] = {6.0f};
void window(const float *w, const float *in, float *out) {
  for (int64_t c = 0; c < 64; c++)
    for (int64_t y = 0; y < 14; y++)
      for (int64_t x = 0; x < 14; x++) {
        float acc = 0.0f;
#pragma GCC unroll 64
        for (int64_t i = 0; i < 3; i++)
#pragma GCC unroll 64
          for (int64_t j = 0; j < 3; j++)
            acc = acc + w[(c * 3 + i) * 3 + j] * in[(c * 16 + y + i) * 16 + x + j];
        float t = acc + 3.0f;
        float u = CLAMP;
        out[(c * 14 + y) * 14 + x] = acc * u;
      }
}
"""
WINDOW_ROW = 6
"""The source line of WINDOW's row loop (over x)."""

BLEND = "rung_minimumf(rung_maximumf(t, lo[0]), hi[0])"


def test_maximumf_and_minimumf_propagate_nan_from_either_side(tmp_path: Path) -> None:
    """The blends choose as `(a != a || a > b) ? a : b` does: NaN from either operand,
    infinities and signed zeros as that expression picks them."""
    copy_headers(tmp_path)
    (tmp_path / "extrema.c").write_text(EXTREMA)
    cmd = [*native.compiler(), *native.build_flags(False), "extrema.c", "-o", "lib.so", "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lib = ctypes.CDLL(str(tmp_path / "lib.so"))
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 3.5, MAX, -MAX, TINY])
    a, b = (v.ravel().astype(np.float32) for v in np.meshgrid(special, special))
    for name, greater in (("max", True), ("min", False)):
        fn = getattr(lib, f"test_{name}")
        fn.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int64]
        y = np.empty_like(a)
        fn(a.ctypes.data, b.ctypes.data, y.ctypes.data, a.size)
        pick_a = np.isnan(a) | ((a > b) if greater else (a < b))
        want = np.where(pick_a, a, b)
        assert np.array_equal(np.isnan(y), np.isnan(a) | np.isnan(b)), name
        same = np.isnan(want) | (y.view(np.uint32) == want.view(np.uint32))
        assert same.all(), (name, a[~same], b[~same], y[~same])


def _window_vectorized(tmp_path: Path, clamp: str) -> set[int]:
    cc = gcc()
    copy_headers(tmp_path)
    (tmp_path / "window.c").write_text(WINDOW.replace("CLAMP", clamp))
    flags = [*native.build_flags(False, shared=False), "-fopt-info-vec-optimized"]
    cmd = [*cc, *flags, "-c", "window.c", "-o", "window.o"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return {
        int(m) for m in re.findall(r"window\.c:(\d+):\d+: optimized: loop vectorized", proc.stderr)
    }


def test_gcc_vectorizes_a_window_row_with_a_clamp(tmp_path: Path) -> None:
    """A depthwise window with a fused ReLU6 against constant bounds: with the blends, gcc
    vectorizes the row loop around the unrolled window."""
    assert WINDOW_ROW in _window_vectorized(tmp_path, BLEND)
