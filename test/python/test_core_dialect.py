"""The core dialect's syntax and verifiers."""

from __future__ import annotations

import pytest
from xdsl.utils.exceptions import ParseError, VerifyException

from rung.dialects import parse_module, print_module


def func(body: str, args: str) -> str:
    return f"func.func @f({args}) {{\n{body}\n  func.return\n}}\n"


ROUND_TRIP = func(
    "  %s = core.binary add(%a, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>\n"
    "  %c = core.compare lt(%a, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>\n"
    "  %m = core.select(%c, %a, %s) : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>\n"
    "  %e = core.unary exp(%m) : (tensor<2x3xf32>) -> tensor<2x3xf32>\n"
    "  %t = core.transpose(%e) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>\n"
    "  %r = core.reduce sum(%t) {axes = array<i64: 1>} : (tensor<3x2xf32>) -> tensor<3xf32>\n"
    "  %w = core.broadcast(%r) {dims = array<i64: 1>} : (tensor<3xf32>) -> tensor<4x3xf32>\n"
    "  %k = core.slice(%w) {start = array<i64: 3, 2>, stride = array<i64: -1, -1>} : (tensor<4x3xf32>) -> tensor<4x3xf32>\n"
    "  %z = core.matmul(%w, %t) {acc = f32} : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>\n"
    "  %sh = core.shape_of(%z) : (tensor<4x2xf32>) -> tensor<2xi64>\n"
    "  %y = core.conv(%x, %f) {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, "
    "pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, groups = 1 : i64, "
    'layout = "NCHW", acc = f32} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>',
    "%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %x: tensor<1x3x8x8xf32>, %f: tensor<4x3x3x3xf32>",
)


def test_core_ops_round_trip() -> None:
    printed = print_module(parse_module(ROUND_TRIP))
    assert print_module(parse_module(printed)) == printed
    assert "core.binary add(%a, %b)" in printed
    assert "core.reduce sum(%t)" in printed


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "  %s = core.binary add(%a, %c) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>",
            "core never broadcasts implicitly",
        ),
        (
            "  %s = core.reduce sum(%a) {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<3xf32>",
            "cannot give",
        ),
        (
            "  %s = core.transpose(%a) {perm = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>",
            "is not a permutation",
        ),
        (
            "  %s = core.matmul(%a, %a) {acc = f32} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>",
            "contraction sizes differ",
        ),
        (
            "  %s = core.reshape(%a) : (tensor<2x3xf32>) -> tensor<5xf32>",
            "has 6 elements",
        ),
        (
            "  %s = core.slice(%a) {start = array<i64: 0, 2>, stride = array<i64: 1, 1>} : "
            "(tensor<2x3xf32>) -> tensor<2x2xf32>",
            "reads 2..3 of a dim of size 3",
        ),
        (
            "  %s = core.broadcast(%c) {dims = array<i64: 1>} : (tensor<3xf32>) -> tensor<3x2xf32>",
            "cannot expand",
        ),
    ],
    ids=["implicit-broadcast", "reduce-shape", "perm", "matmul", "reshape", "slice", "broadcast"],
)
def test_verifier_rejects(body: str, message: str) -> None:
    with pytest.raises(VerifyException) as info:
        parse_module(func(body, "%a: tensor<2x3xf32>, %c: tensor<3xf32>"))
    assert message in str(info.value)


def test_unknown_function_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="unknown fn 'frobnicate'"):
        parse_module(
            func(
                "  %s = core.unary frobnicate(%a) : (tensor<3xf32>) -> tensor<3xf32>",
                "%a: tensor<3xf32>",
            )
        )
