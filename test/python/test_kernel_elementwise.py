"""Elementwise core ops compiled to C against the core interpreter, the executable spec.

Each core function (`unary`, `binary`, `compare`, `select`, `cast`) runs on
values chosen to hit its edge cases (NaN, infinities, signed zeros, negative
integers for div/mod, integer extremes), once through the numpy interpreter
and once compiled natively; the results must agree exactly, or within a few
ulps for transcendental functions.
"""

from __future__ import annotations

import numpy as np
import pytest

from rung.dialects import parse_module
from rung.runtime import InferenceSession

FLOATS = np.array(
    [-np.inf, -3.5, -2.5, -1.0, -0.5, -0.0, 0.0, 0.25, 0.5, 1.5, 2.5, 3.0, np.inf, np.nan]
)
UNIT = np.array([-0.99, -0.5, -0.1, 0.0, 0.3, 0.75, 0.99])
INTS = np.array([-7, -3, -1, 0, 1, 2, 5, 9])

TYPES = {
    "f32": np.float32, "f64": np.float64, "f16": np.float16, "i8": np.int8, "i16": np.int16,
    "i32": np.int32, "i64": np.int64, "ui8": np.uint8, "ui16": np.uint16, "ui32": np.uint32,
    "ui64": np.uint64, "i1": np.bool_,
}  # fmt: skip


def run_both(text: str, *inputs: np.ndarray) -> tuple[list, list]:
    names = [f"input_{i}" for i in range(len(inputs))]
    feed = dict(zip(names, inputs, strict=True))
    core = InferenceSession(parse_module(text), level="core").run(None, feed)
    kernel = InferenceSession(parse_module(text), level="kernel").run(None, feed)
    return core, kernel


def check(core: list, kernel: list, ulps: int = 0) -> None:
    for c, k in zip(core, kernel, strict=True):
        assert c.dtype == k.dtype and c.shape == k.shape
        if ulps and np.issubdtype(c.dtype, np.floating):
            np.testing.assert_allclose(k, c, rtol=ulps * np.finfo(c.dtype).eps, atol=0)
        else:
            np.testing.assert_array_equal(k, c)


def unary_module(fn: str, t: str, n: int, out: str | None = None) -> str:
    out = out or t
    return f"""
func.func @f(%a0: tensor<{n}x{t}>) -> tensor<{n}x{out}> {{
  %y = core.unary {fn}(%a0) : (tensor<{n}x{t}>) -> tensor<{n}x{out}>
  func.return %y : tensor<{n}x{out}>
}}"""


EXACT_UNARY = ["neg", "abs", "floor", "ceil", "round", "sign", "sqrt", "reciprocal", "rsqrt"]
TRANSCENDENTAL = [
    "exp",
    "log",
    "sin",
    "cos",
    "tan",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "erf",
    "sigmoid",
    "atan",
]
UNIT_RANGE = ["asin", "acos", "atanh"]


@pytest.mark.parametrize("t", ["f32", "f64"])
@pytest.mark.parametrize("fn", EXACT_UNARY + TRANSCENDENTAL + UNIT_RANGE)
def test_float_unary(fn: str, t: str) -> None:
    x = (UNIT if fn in UNIT_RANGE else FLOATS).astype(TYPES[t])
    core, kernel = run_both(unary_module(fn, t, x.size), x)
    check(core, kernel, ulps=0 if fn in EXACT_UNARY else 8)


@pytest.mark.parametrize("fn", ["isnan", "isinf", "isposinf", "isneginf"])
def test_float_predicates(fn: str) -> None:
    x = FLOATS.astype(np.float32)
    check(*run_both(unary_module(fn, "f32", x.size, "i1"), x))


@pytest.mark.parametrize(
    ("fn", "t"),
    [(fn, t) for fn in ("neg", "abs", "sign", "bitwise_not") for t in ("i8", "i32", "i64")]
    + [(fn, t) for fn in ("abs", "sign", "bitwise_not") for t in ("ui8", "ui32")],
)
def test_integer_unary(fn: str, t: str) -> None:
    x = INTS.astype(TYPES[t]) if not t.startswith("ui") else np.arange(8).astype(TYPES[t])
    check(*run_both(unary_module(fn, t, x.size), x))


def test_f16_unary_rounds_like_numpy() -> None:
    x = np.linspace(-4, 4, 33).astype(np.float16)
    check(*run_both(unary_module("exp", "f16", x.size), x), ulps=2)


def binary_module(fn: str, t: str, n: int) -> str:
    return f"""
func.func @f(%a0: tensor<{n}x{t}>, %a1: tensor<{n}x{t}>) -> tensor<{n}x{t}> {{
  %y = core.binary {fn}(%a0, %a1) : (tensor<{n}x{t}>, tensor<{n}x{t}>) -> tensor<{n}x{t}>
  func.return %y : tensor<{n}x{t}>
}}"""


def pairs(values: np.ndarray, nonzero_rhs: bool = False) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.meshgrid(values, values)
    a, b = a.reshape(-1), b.reshape(-1)
    if nonzero_rhs:
        keep = b != 0
        a, b = a[keep], b[keep]
    return a, b


@pytest.mark.parametrize("t", ["f32", "f64"])
@pytest.mark.parametrize(
    "fn", ["add", "sub", "mul", "div", "max", "min", "rem", "mod", "pow", "atan2"]
)
def test_float_binary(fn: str, t: str) -> None:
    a, b = pairs(FLOATS.astype(TYPES[t]))
    check(*run_both(binary_module(fn, t, a.size), a, b), ulps=4 if fn in ("pow", "atan2") else 0)


@pytest.mark.parametrize("t", ["i8", "i16", "i32", "i64"])
@pytest.mark.parametrize(
    "fn",
    [
        "add",
        "sub",
        "mul",
        "div",
        "rem",
        "mod",
        "max",
        "min",
        "bitwise_and",
        "bitwise_or",
        "bitwise_xor",
    ],
)
def test_signed_binary(fn: str, t: str) -> None:
    a, b = pairs(INTS.astype(TYPES[t]), nonzero_rhs=fn in ("div", "rem", "mod"))
    check(*run_both(binary_module(fn, t, a.size), a, b))


@pytest.mark.parametrize("t", ["ui8", "ui16", "ui32", "ui64"])
@pytest.mark.parametrize(
    "fn", ["add", "sub", "mul", "div", "mod", "max", "min", "shift_left", "shift_right"]
)
def test_unsigned_binary(fn: str, t: str) -> None:
    a, b = pairs(np.array([0, 1, 2, 3, 7, 200]).astype(TYPES[t]), nonzero_rhs=fn in ("div", "mod"))
    if fn.startswith("shift"):
        b = b % 8
    check(*run_both(binary_module(fn, t, a.size), a, b))


def test_integer_wraparound_matches_numpy() -> None:
    a = np.array([2**31 - 1, -(2**31), 2**30], dtype=np.int32)
    b = np.array([1, -1, 4], dtype=np.int32)
    for fn in ("add", "sub", "mul"):
        check(*run_both(binary_module(fn, "i32", 3), a, b))


@pytest.mark.parametrize("fn", ["and", "or", "xor"])
def test_logical_binary(fn: str) -> None:
    a, b = pairs(np.array([False, True]))
    check(*run_both(binary_module(fn, "i1", a.size), a, b))


@pytest.mark.parametrize("t", ["f32", "i32", "ui8"])
@pytest.mark.parametrize("pred", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_compare(pred: str, t: str) -> None:
    values = FLOATS if t == "f32" else np.array([0, 1, 3, 100])
    a, b = pairs(values.astype(TYPES[t]))
    n = a.size
    text = f"""
func.func @f(%a0: tensor<{n}x{t}>, %a1: tensor<{n}x{t}>) -> tensor<{n}xi1> {{
  %y = core.compare {pred}(%a0, %a1) : (tensor<{n}x{t}>, tensor<{n}x{t}>) -> tensor<{n}xi1>
  func.return %y : tensor<{n}xi1>
}}"""
    check(*run_both(text, a, b))


def test_select() -> None:
    c = np.array([True, False, True, False])
    a = np.array([1.0, 2.0, np.nan, 4.0], dtype=np.float32)
    b = np.array([-1.0, -2.0, -3.0, np.inf], dtype=np.float32)
    text = """
func.func @f(%a0: tensor<4xi1>, %a1: tensor<4xf32>, %a2: tensor<4xf32>) -> tensor<4xf32> {
  %y = core.select(%a0, %a1, %a2) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}"""
    check(*run_both(text, c, a, b))


CAST_SOURCES = {
    "f32": np.array([-300.7, -2.5, -1.5, -0.5, 0.0, 0.5, 1.5, 2.7, 100.2, 65504.0, 1e-8]),
    "f64": np.array([-2.5, -0.5, 0.0, 3.75, 1e30, -1e-30]),
    "i32": np.array([-70000, -129, -1, 0, 1, 127, 255, 70000]),
    "i64": np.array([-(2**40), -1, 0, 1, 2**40]),
    "ui8": np.array([0, 1, 127, 128, 255]),
    "i1": np.array([False, True]),
    "f16": np.array([-2.5, -0.0, 0.5, 1000.0]),
}


@pytest.mark.parametrize("src", list(CAST_SOURCES))
@pytest.mark.parametrize("dst", ["f32", "f64", "f16", "i8", "i32", "i64", "ui8", "i1"])
def test_cast(src: str, dst: str) -> None:
    x = CAST_SOURCES[src].astype(TYPES[src])
    if dst != "i1" and not dst.startswith("f") and src.startswith("f"):
        # Float to integer is defined where the value fits; others are UB in C and numpy alike.
        info = np.iinfo(TYPES[dst])
        wide = x.astype(np.float64)
        x = x[(wide > info.min - 1) & (wide < info.max + 1)]
    if dst == "f16" and src in ("f64", "i64"):
        x = x[np.abs(x.astype(np.float64)) < 60000]
    n = x.size
    text = f"""
func.func @f(%a0: tensor<{n}x{src}>) -> tensor<{n}x{dst}> {{
  %y = core.cast(%a0) : (tensor<{n}x{src}>) -> tensor<{n}x{dst}>
  func.return %y : tensor<{n}x{dst}>
}}"""
    check(*run_both(text, x))


def test_broadcast_with_run_time_size_one() -> None:
    """A `?` input dim that is 1 at run time broadcasts; one that is not copies."""
    text = """
func.func @f(%a0: tensor<?x3xf32>, %a1: tensor<2xi64>) -> tensor<?x3xf32> {
  %y = core.broadcast(%a0, %a1) {dims = array<i64: 0, 1>} : (tensor<?x3xf32>, tensor<2xi64>) -> tensor<?x3xf32>
  func.return %y : tensor<?x3xf32>
}"""
    x = np.arange(3, dtype=np.float32).reshape(1, 3)
    check(*run_both(text, x, np.array([4, 3], dtype=np.int64)))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    check(*run_both(text, x, np.array([2, 3], dtype=np.int64)))
