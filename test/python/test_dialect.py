"""The onnx dialect's syntax, verifiers and accessors, on hand-written IR."""

from __future__ import annotations

import pytest
from xdsl.utils.exceptions import ParseError, VerifyException

from rung.dialects import parse_module, print_module
from rung.dialects.onnx import CustomOp, OnnxOp


def module(body: str, args: str = "%x: tensor<2x3xf32>", results: str = "") -> str:
    return f"func.func @f({args}){results} {{\n{body}\n}}\n"


def parse_func_ops(text: str) -> list:
    mod = parse_module(text)
    func = mod.body.block.first_op
    return list(func.body.block.ops)  # type: ignore[union-attr]


def test_custom_syntax_round_trips_absent_inputs_and_outputs() -> None:
    text = module(
        "  %y = onnx.Clip(%x, none, %m) : (tensor<2x3xf32>, none, tensor<f32>) -> tensor<2x3xf32>\n"
        "  %h = onnx.LSTM(%s, %w, %r) {hidden_size = 4 : i64} : (tensor<5x1x3xf32>, "
        "tensor<1x16x3xf32>, tensor<1x16x4xf32>) -> (none, tensor<1x1x4xf32>)\n"
        "  func.return",
        args="%x: tensor<2x3xf32>, %m: tensor<f32>, %s: tensor<5x1x3xf32>, "
        "%w: tensor<1x16x3xf32>, %r: tensor<1x16x4xf32>",
    )
    mod = parse_module(text)
    printed = print_module(mod)
    assert "onnx.Clip(%x, none, %m)" in printed
    assert "-> (none, tensor<1x1x4xf32>)" in printed
    assert print_module(parse_module(printed)) == printed
    clip, lstm, _ = parse_func_ops(text)
    assert [v is None for v in clip.onnx_inputs()] == [False, True, False]
    assert clip.min is None and clip.max is not None
    assert [v is None for v in lstm.onnx_outputs()] == [True, False, True]
    assert lstm.Y is None and lstm.Y_h is not None and lstm.Y_c is None


def test_attribute_defaults_come_from_the_schema() -> None:
    (conv, _) = parse_func_ops(
        module(
            "  %y = onnx.Conv(%x, %w) {strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, "
            "tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32>\n  func.return",
            args="%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>",
        )
    )
    assert isinstance(conv, OnnxOp)
    assert conv.attr("strides") == (2, 2)
    assert conv.attr("auto_pad") == "NOTSET"
    assert conv.attr("group") == 1
    assert conv.attr("pads") is None
    assert "auto_pad" not in conv.onnx_attributes()
    with pytest.raises(KeyError):
        conv.attr("no_such_attribute")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "  %y = onnx.Relu(%b) : (tensor<2xi1>) -> tensor<2xi1>",
            "input 'X' has type tensor<2xi1> (tensor(bool)), but 'T' allows only",
        ),
        (
            "  %y = onnx.Add(%x, %d) : (tensor<2x3xf32>, tensor<2x3xf64>) -> tensor<2x3xf32>",
            "input 'B' is tensor(double) but input 'A' is tensor(float)",
        ),
        (
            "  %y = onnx.Concat(%x, %x) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>",
            "axis",
        ),
        (
            "  %y = onnx.Softmax(%x) {axis = 1.0 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>",
            "attribute 'axis' must be an ONNX INT",
        ),
        (
            "  %y = onnx.Shape(%x) : (tensor<2x3xf32>) -> tensor<2xi32>",
            "output 'shape' has type tensor<2xi32> (tensor(int32)), but 'T1' allows only tensor(int64)",
        ),
    ],
    ids=["disallowed-type", "mismatched-binding", "missing-attr", "wrong-attr-kind", "fixed-type"],
)
def test_verifier_rejects(body: str, message: str) -> None:
    text = module(
        body + "\n  func.return",
        args="%x: tensor<2x3xf32>, %b: tensor<2xi1>, %d: tensor<2x3xf64>",
    )
    with pytest.raises(VerifyException, match=None) as info:
        parse_module(text)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("  %y = onnx.Relu(none) : (none) -> tensor<2x3xf32>", "input 'X' is not optional"),
        (
            "  %y = onnx.Relu(%x, %x) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>",
            "too many inputs",
        ),
        ("  %y = onnx.Relu(%x) : (tensor<2x3xf32>, none) -> tensor<2x3xf32>", "1 inputs but 2"),
        ("  %y = onnx.Relu(%x) : (none) -> tensor<2x3xf32>", "operand is used with type none"),
    ],
    ids=["absent-required", "too-many", "type-count", "none-type-mismatch"],
)
def test_parser_rejects(body: str, message: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_module(module(body + "\n  func.return"))
    assert message in str(info.value)


def test_graph_region_must_end_in_yield() -> None:
    text = module(
        "  %y = onnx.If(%c) : (tensor<i1>) -> tensor<2x3xf32> then_branch {\n"
        "    onnx.Yield %x : tensor<2x3xf32>\n  } else_branch {\n"
        "    %z = onnx.Relu(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>\n  }\n  func.return",
        args="%x: tensor<2x3xf32>, %c: tensor<i1>",
    )
    with pytest.raises(VerifyException, match="is not a terminator"):
        parse_module(text)


def test_custom_op_keeps_domain_attributes_and_absent_inputs() -> None:
    text = module(
        '  %y = onnx.Custom "com.example" "Frob"(%x, none, %x) {alpha = 2.0 : f32} : '
        "(tensor<2x3xf32>, none, tensor<2x3xf32>) -> (none, tensor<2x3xf32>)\n  func.return",
    )
    (op, _) = parse_func_ops(text)
    assert isinstance(op, CustomOp)
    assert (op.domain.data, op.op_type.data) == ("com.example", "Frob")
    assert [v is None for v in op.onnx_inputs()] == [False, True, False]
    assert [v is None for v in op.onnx_outputs()] == [True, False]
    assert "alpha" in op.attributes
    printed = print_module(parse_module(text))
    assert '"com.example" "Frob"(%x, none, %x)' in printed


def test_non_tensor_types_round_trip() -> None:
    text = module(
        "  func.return",
        args="%s: !onnx.seq<tensor<?xf32>>, %o: !onnx.opt<tensor<2xi64>>, "
        "%m: !onnx.map<!onnx.string, f32>, %t: tensor<3x!onnx.string>",
    )
    printed = print_module(parse_module(text))
    for spelled in (
        "!onnx.seq<tensor<?xf32>>",
        "!onnx.opt<tensor<2xi64>>",
        "!onnx.map<!onnx.string, f32>",
        "tensor<3x!onnx.string>",
    ):
        assert spelled in printed


def test_string_tensor_attribute_checks_its_size() -> None:
    good = module(
        '  %c = onnx.Constant() {value = #onnx.strings<["a", "b"] : tensor<2x!onnx.string>>} '
        ": () -> tensor<2x!onnx.string>\n  func.return"
    )
    assert '#onnx.strings<["a", "b"]' in print_module(parse_module(good))
    bad = good.replace("tensor<2x!onnx.string>>", "tensor<3x!onnx.string>>")
    with pytest.raises((VerifyException, ParseError, ValueError)):
        parse_module(bad)


def test_misspelt_attribute_is_refused_with_a_suggestion() -> None:
    text = module(
        "  %y = onnx.Gemm(%x, %x) {transb = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>)"
        " -> tensor<2x2xf32>\n  func.return"
    )
    with pytest.raises(VerifyException, match="unknown attribute 'transb'; did you mean 'transB'"):
        parse_module(text)
    # Dialect-prefixed discardable attributes are fine.
    ok = text.replace("transb = 1 : i64", 'transB = 1 : i64, my.tag = "x"')
    assert 'my.tag = "x"' in print_module(parse_module(ok))


def test_output_bound_to_an_input_type_variable_must_match() -> None:
    text = module("  %y = onnx.Relu(%x) : (tensor<2x3xf32>) -> tensor<2x3xf64>\n  func.return")
    with pytest.raises(VerifyException, match="output 'Y' is tensor.double. but input 'X'"):
        parse_module(text)
