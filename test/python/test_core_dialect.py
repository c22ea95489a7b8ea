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


# ---- lists ------------------------------------------------------------------------------

LIST_ROUND_TRIP = func(
    "  %e = core.list() : () -> !core.list<tensor<*xf32>>\n"
    "  %l = core.list(%a, %b) : (tensor<2xf32>, tensor<3xf32>) -> !core.list<tensor<?xf32>>\n"
    "  %n = core.list_length(%l) : (!core.list<tensor<?xf32>>) -> tensor<i64>\n"
    "  %g = core.list_get(%l, %i) : (!core.list<tensor<?xf32>>, tensor<i64>) -> tensor<?xf32>\n"
    "  %l2 = core.list_insert(%l, %a, %n) : "
    "(!core.list<tensor<?xf32>>, tensor<2xf32>, tensor<i64>) -> !core.list<tensor<?xf32>>\n"
    "  %l3 = core.list_erase(%l2, %i) : "
    "(!core.list<tensor<?xf32>>, tensor<i64>) -> !core.list<tensor<?xf32>>\n"
    "  %c = core.list_concat(%l3) {axis = 0 : i64} : (!core.list<tensor<?xf32>>) -> tensor<?xf32>\n"
    "  %s = core.list_stack(%l3) {axis = 1 : i64} : "
    "(!core.list<tensor<?xf32>>) -> tensor<?x?xf32>",
    "%a: tensor<2xf32>, %b: tensor<3xf32>, %i: tensor<i64>",
)


def test_list_ops_round_trip() -> None:
    printed = print_module(parse_module(LIST_ROUND_TRIP))
    assert print_module(parse_module(printed)) == printed
    assert "core.list() : () -> !core.list<tensor<*xf32>>" in printed
    assert "core.list_insert(%l, %a, %n)" in printed
    assert "core.list_stack(%l3) {axis = 1 : i64}" in printed


def test_list_type_in_a_signature_round_trips() -> None:
    text = (
        "func.func @f(%l: !core.list<tensor<2x?xi64>>) -> !core.list<tensor<2x?xi64>> {\n"
        "  func.return %l : !core.list<tensor<2x?xi64>>\n}\n"
    )
    printed = print_module(parse_module(text))
    assert "(%l: !core.list<tensor<2x?xi64>>) -> !core.list<tensor<2x?xi64>>" in printed
    assert print_module(parse_module(printed)) == printed


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "  %k = core.list(%a) : (tensor<2xf32>) -> !core.list<tensor<?xi64>>",
            "element 0 tensor<2xf32> does not fit the list type",
        ),
        (
            "  %k = core.list(%a) : (tensor<2xf32>) -> !core.list<tensor<?x?xf32>>",
            "does not fit the list type",
        ),
        (
            "  %g = core.list_get(%l, %a) : (!core.list<tensor<?xf32>>, tensor<2xf32>) -> tensor<?xf32>",
            "the index must be a rank-0 tensor<i64>",
        ),
        (
            "  %g = core.list_get(%l, %i) : (!core.list<tensor<?xf32>>, tensor<i64>) -> tensor<?xi64>",
            "result tensor<?xi64> does not fit",
        ),
        (
            "  %m = core.list_insert(%l, %a, %i) : "
            "(!core.list<tensor<?xf32>>, tensor<2xf32>, tensor<i64>) -> !core.list<tensor<?xi64>>",
            "are not compatible",
        ),
        (
            "  %c = core.list_concat(%l) {axis = 0 : i64} : (!core.list<tensor<?xf32>>) -> tensor<?x?xf32>",
            "elements of rank 1 cannot give a result of rank 2",
        ),
        (
            "  %c = core.list_stack(%l) {axis = 2 : i64} : (!core.list<tensor<?xf32>>) -> tensor<?x?xf32>",
            "axis 2 is out of range",
        ),
        (
            "  %n = core.list_length(%a) : (tensor<2xf32>) -> tensor<i64>",
            "should be of base attribute core.list",
        ),
    ],
    ids=[
        "element-type",
        "element-rank",
        "index",
        "get-type",
        "insert",
        "concat",
        "stack",
        "length",
    ],  # fmt: skip
)
def test_list_verifier_rejects(body: str, message: str) -> None:
    with pytest.raises(VerifyException) as info:
        parse_module(
            func(body, "%a: tensor<2xf32>, %i: tensor<i64>, %l: !core.list<tensor<?xf32>>")
        )
    assert message in str(info.value)


def test_list_of_a_non_tensor_is_rejected() -> None:
    with pytest.raises((VerifyException, ParseError), match="!core.list holds tensors"):
        parse_module(func("", "%l: !core.list<f32>"))


# ---- optionals --------------------------------------------------------------------------

OPTIONAL_ROUND_TRIP = func(
    "  %o = core.optional(%a) : (tensor<2xf32>) -> !core.optional<tensor<2xf32>>\n"
    "  %e = core.optional() : () -> !core.optional<!core.list<tensor<?xf32>>>\n"
    "  %h = core.optional_has(%e) : (!core.optional<!core.list<tensor<?xf32>>>) -> tensor<i1>\n"
    "  %g = core.optional_get(%o) : (!core.optional<tensor<2xf32>>) -> tensor<2xf32>",
    "%a: tensor<2xf32>",
)


def test_optional_ops_round_trip() -> None:
    printed = print_module(parse_module(OPTIONAL_ROUND_TRIP))
    assert print_module(parse_module(printed)) == printed
    assert "core.optional() : () -> !core.optional<!core.list<tensor<?xf32>>>" in printed
    assert "core.optional_get(%o)" in printed


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "  %o = core.optional(%a) : (tensor<2xf32>) -> !core.optional<tensor<3xf32>>",
            "does not fit the optional type",
        ),
        (
            "  %o = core.optional(%a) : (tensor<2xf32>) -> !core.optional<tensor<2xf32>>\n"
            "  %h = core.optional_has(%o) : (!core.optional<tensor<2xf32>>) -> tensor<i64>",
            "must be a rank-0 tensor<i1>",
        ),
        (
            "  %o = core.optional(%a) : (tensor<2xf32>) -> !core.optional<!core.list<tensor<2xf32>>>",
            "does not fit the optional type",
        ),
        (
            "  %o = core.optional() : () -> !core.optional<f32>",
            "!core.optional holds a tensor or a !core.list",
        ),
    ],
    ids=["value", "has", "list", "parameter"],
)
def test_optional_verifier_rejects(body: str, message: str) -> None:
    with pytest.raises((VerifyException, ParseError)) as info:
        parse_module(func(body, "%a: tensor<2xf32>"))
    assert message in str(info.value)
