"""8-, 6- and 4-bit floats and 2/4-bit integers compiled to C, against ml_dtypes.

ONNX's reference (and rung's core interpreter) converts with ml_dtypes, so
its `astype` is the specification: every code of each format is decoded, and
every representable value, every midpoint between neighbours (the ties of
round-half-to-even), values just off the midpoints, overflow, infinities and
NaN are encoded, natively, and must give exactly ml_dtypes' bytes.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from rung.dialects import parse_module
from rung.runtime import InferenceSession

FLOAT_TYPES = {
    "f8E4M3FN": ml_dtypes.float8_e4m3fn,
    "f8E4M3FNUZ": ml_dtypes.float8_e4m3fnuz,
    "f8E5M2": ml_dtypes.float8_e5m2,
    "f8E5M2FNUZ": ml_dtypes.float8_e5m2fnuz,
    "f8E8M0FNU": ml_dtypes.float8_e8m0fnu,
    "f6E2M3FN": ml_dtypes.float6_e2m3fn,
    "f6E3M2FN": ml_dtypes.float6_e3m2fn,
    "f4E2M1FN": ml_dtypes.float4_e2m1fn,
}
INT_TYPES = {
    "i4": ml_dtypes.int4,
    "ui4": ml_dtypes.uint4,
    "i2": ml_dtypes.int2,
    "ui2": ml_dtypes.uint2,
}
BITS = {"f6E2M3FN": 6, "f6E3M2FN": 6, "f4E2M1FN": 4}


def cast_module(src: str, dst: str, n: int, saturate: bool = False) -> str:
    props = " {saturate = 1 : i64}" if saturate else ""
    return f"""
func.func @f(%a0: tensor<{n}x{src}>) -> tensor<{n}x{dst}> {{
  %y = core.cast(%a0){props} : (tensor<{n}x{src}>) -> tensor<{n}x{dst}>
  func.return %y : tensor<{n}x{dst}>
}}"""


def run(text: str, x: np.ndarray, level: str = "kernel") -> np.ndarray:
    (out,) = InferenceSession(parse_module(text), level=level).run(None, {"input_0": x})
    return out


def all_codes(name: str) -> np.ndarray:
    """Every value of a format, decoded to float32 by ml_dtypes."""
    codes = np.arange(1 << BITS.get(name, 8), dtype=np.uint8)
    return codes.view(FLOAT_TYPES[name]).astype(np.float32)


def encode_probes(name: str) -> np.ndarray:
    """Representable values, the midpoints between neighbours and values just off them."""
    values = np.unique(all_codes(name)[~np.isnan(all_codes(name))].astype(np.float64))
    mids = (values[:-1] + values[1:]) / 2
    top = float(ml_dtypes.finfo(FLOAT_TYPES[name]).max)
    tiny = float(ml_dtypes.finfo(FLOAT_TYPES[name]).smallest_subnormal)
    probes = np.concatenate([
        values, mids, mids * (1 + 2**-20), mids * (1 - 2**-20),
        [top * 1.03, top * 1.1, top * 4, 1e30, tiny / 2, tiny * 0.51, tiny / 4, 1e-30],
        np.random.default_rng(0).lognormal(0.0, 8.0, 2000),
    ])  # fmt: skip
    with np.errstate(over="ignore"):  # float8e8m0's range exceeds float32's
        probes = np.concatenate([probes, -probes]).astype(np.float32)
    specials = np.array([np.inf, -np.inf, np.nan, -np.nan, 0.0, -0.0], np.float32)
    return np.concatenate([probes, specials])


def assert_same_bytes(got: np.ndarray, want: np.ndarray, probes: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    g, w = got.view(np.uint8), want.view(np.uint8)
    bad = np.flatnonzero(g != w)
    assert bad.size == 0, [(float(probes[i]), int(g[i]), int(w[i])) for i in bad[:8]]


@pytest.mark.parametrize("name", FLOAT_TYPES)
def test_decode_every_code(name: str) -> None:
    dtype = FLOAT_TYPES[name]
    codes = np.arange(1 << BITS.get(name, 8), dtype=np.uint8).view(dtype)
    got = run(cast_module(name, "f32", codes.size), codes)
    want = codes.astype(np.float32)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(got[ok].view(np.uint32), want[ok].view(np.uint32))


@pytest.mark.parametrize("name", FLOAT_TYPES)
def test_encode_rounds_like_ml_dtypes(name: str) -> None:
    probes = encode_probes(name)
    with np.errstate(all="ignore"):
        want = probes.astype(FLOAT_TYPES[name])
    assert_same_bytes(run(cast_module("f32", name, probes.size), probes), want, probes)


@pytest.mark.parametrize("name", ["f8E4M3FN", "f8E4M3FNUZ", "f8E5M2", "f8E5M2FNUZ", "f4E2M1FN"])
def test_saturating_cast_clamps_to_the_largest_finite_value(name: str) -> None:
    probes = encode_probes(name)
    core = run(cast_module("f32", name, probes.size, saturate=True), probes, level="core")
    got = run(cast_module("f32", name, probes.size, saturate=True), probes)
    assert_same_bytes(got, core, probes)
    top = float(ml_dtypes.finfo(FLOAT_TYPES[name]).max)
    finite = ~np.isnan(probes)
    assert np.all(np.abs(got.astype(np.float32)[finite]) <= top)


@pytest.mark.parametrize("name", ["f8E4M3FN", "f8E5M2"])
def test_f16_converts_directly(name: str) -> None:
    probes = encode_probes(name)
    with np.errstate(all="ignore"):
        halves = probes.astype(np.float16)
        want = halves.astype(FLOAT_TYPES[name])
    assert_same_bytes(run(cast_module("f16", name, halves.size), halves), want, probes)
    back = run(cast_module(name, "f16", want.size), want)
    np.testing.assert_array_equal(back, want.astype(np.float16))


def test_narrow_float_arithmetic_rounds_after_each_op() -> None:
    x = encode_probes("f8E4M3FN")[:400].astype(ml_dtypes.float8_e4m3fn)
    text = """
func.func @f(%a0: tensor<400xf8E4M3FN>) -> tensor<400xf8E4M3FN> {
  %s = core.binary mul(%a0, %a0) : (tensor<400xf8E4M3FN>, tensor<400xf8E4M3FN>) -> tensor<400xf8E4M3FN>
  %y = core.binary add(%s, %a0) : (tensor<400xf8E4M3FN>, tensor<400xf8E4M3FN>) -> tensor<400xf8E4M3FN>
  func.return %y : tensor<400xf8E4M3FN>
}"""
    assert_same_bytes(run(text, x), run(text, x, level="core"), x.astype(np.float32))


@pytest.mark.parametrize("name", INT_TYPES)
def test_sub_byte_integers_truncate_and_wrap(name: str) -> None:
    dtype = INT_TYPES[name]
    floats = np.array(
        [-9.6, -8.5, -7.5, -2.5, -1.5, -0.7, 0.0, 0.5, 1.5, 2.5, 3.9, 7.5, 8.4, 17.0, 100.0],
        np.float32,
    )
    assert_same_bytes(
        run(cast_module("f32", name, floats.size), floats), floats.astype(dtype), floats
    )
    ints = np.arange(-40, 40, dtype=np.int32)
    assert_same_bytes(run(cast_module("i32", name, ints.size), ints), ints.astype(dtype), ints)
    codes = np.arange(1 << (4 if "4" in name else 2), dtype=np.uint8).view(dtype)
    np.testing.assert_array_equal(
        run(cast_module(name, "i32", codes.size), codes), codes.astype(np.int32)
    )
    np.testing.assert_array_equal(
        run(cast_module(name, "f32", codes.size), codes), codes.astype(np.float32)
    )


def test_sub_byte_arithmetic_wraps() -> None:
    x = np.arange(-8, 8, dtype=np.int8).astype(ml_dtypes.int4)
    text = """
func.func @f(%a0: tensor<16xi4>) -> tensor<16xi4> {
  %s = core.binary add(%a0, %a0) : (tensor<16xi4>, tensor<16xi4>) -> tensor<16xi4>
  %y = core.binary mul(%s, %a0) : (tensor<16xi4>, tensor<16xi4>) -> tensor<16xi4>
  func.return %y : tensor<16xi4>
}"""
    want = (2 * x.astype(np.int64) * x.astype(np.int64)).astype(ml_dtypes.int4)
    assert_same_bytes(run(text, x), want, x.astype(np.float32))


def test_sub_byte_and_narrow_constants() -> None:
    text = """
func.func @f(%a0: tensor<4xi4>) -> (tensor<4xi4>, tensor<4xf8E4M3FN>) {
  %c = core.constant() {value = dense<[-8, 7, -1, 3]> : tensor<4xi4>} : () -> tensor<4xi4>
  %y = core.binary add(%a0, %c) : (tensor<4xi4>, tensor<4xi4>) -> tensor<4xi4>
  %f = core.constant() {value = dense<[-448.0, 0.5, 3.0, 448.0]> : tensor<4xf8E4M3FN>} : () -> tensor<4xf8E4M3FN>
  func.return %y, %f : tensor<4xi4>, tensor<4xf8E4M3FN>
}"""
    x = np.array([1, -1, 2, 5], np.int8).astype(ml_dtypes.int4)
    (y, f) = InferenceSession(parse_module(text), level="kernel").run(None, {"input_0": x})
    want = (x.astype(np.int64) + np.array([-8, 7, -1, 3])).astype(ml_dtypes.int4)
    assert_same_bytes(y, want, x.astype(np.float32))
    np.testing.assert_array_equal(f.astype(np.float32), [-448.0, 0.5, 3.0, 448.0])
