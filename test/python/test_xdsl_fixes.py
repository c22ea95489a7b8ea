"""The xDSL 0.74 parser fixes rung installs keep xDSL's behaviour, minus the bugs."""

from __future__ import annotations

import subprocess
import sys

import pytest
from xdsl.utils.exceptions import ParseError

from rung.dialects import parse_module, print_module


def test_dense_literals_still_parse_and_still_reject_dynamic_shapes() -> None:
    text = (
        "builtin.module attributes {a = dense<[1, 2]> : tensor<2xi64>, "
        "b = dense<1.500000e+00> : tensor<2x2xf32>} {\n}\n"
    )
    assert print_module(parse_module(text)) == text
    with pytest.raises(ParseError, match="static shape"):
        parse_module("builtin.module attributes {a = dense<1> : tensor<?xi64>} {\n}\n")
    with pytest.raises(ParseError, match="Expected memref, vector or tensor type"):
        parse_module("builtin.module attributes {a = dense<1> : i64} {\n}\n")


def test_utf8_escapes_read_back_as_strings_and_raw_bytes_stay_bytes() -> None:
    text = (
        "func.func @f(%x: tensor<2xf32>) {\n"
        '  %y = onnx.Relu(%x) : (tensor<2xf32>) -> tensor<2xf32> loc("r\\C3\\A9seau")\n'
        "  func.return\n}\n"
    )
    printed = print_module(parse_module(text))
    assert print_module(parse_module(printed)) == printed
    relu = next(op for op in parse_module(printed).walk() if op.name == "onnx.Relu")
    assert relu.location.desc.data == "réseau"  # type: ignore[attr-defined]
    # An escape that is not valid UTF-8 is still a bytes literal, as before.
    with pytest.raises(ParseError):
        parse_module(text.replace("\\C3\\A9", "\\FF"))


def test_cached_tensor_types_are_the_same_types() -> None:
    text = (
        "func.func @f(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {\n"
        "  %y = onnx.Relu(%x) : (tensor<2x?xf32>) -> tensor<2x?xf32>\n"
        "  %z = onnx.Relu(%y) : (tensor<2x?xf32>) -> tensor<2x?xf32>\n"
        "  func.return %z : tensor<2x?xf32>\n}\n"
    )
    module = parse_module(text)
    types = {str(v.type) for op in module.walk() for v in op.results}
    assert types == {"tensor<2x?xf32>"}
    # A type followed directly by other syntax still parses (no whitespace needed).
    again = parse_module(text.replace(") -> tensor<2x?xf32>\n  %z", ")->tensor<2x?xf32>\n  %z"))
    assert print_module(again) == print_module(module)


def test_string_literals_lex_as_before() -> None:
    text = (
        'builtin.module attributes {a = "plain", b = "tab\\09 quote\\22 \\\\ \\n", c = ""} {\n}\n'
    )
    printed = print_module(parse_module(text))
    assert print_module(parse_module(printed)) == printed
    module = parse_module(text)
    assert module.attributes["b"].data == 'tab\t quote" \\ \n'  # type: ignore[attr-defined]
    with pytest.raises(ParseError, match="closing string literal"):
        parse_module('builtin.module attributes {a = "line\nbreak"} {\n}\n')


def test_an_unterminated_string_fails_in_linear_time() -> None:
    """xDSL's pattern took exponential time on a string that never closes; a hex blob
    of 25 bytes cut short used to take minutes, 200 bytes forever."""
    script = (
        "from xdsl.utils.exceptions import ParseError\n"
        "from rung.dialects import parse_module\n"
        "for n in (25, 200, 100000):\n"
        "    for end in ('', '\\n', ' \\n\\n'):\n"
        "        text = '{-# dialect_resources: { builtin: { r: \"0x04000000' + '0A' * n + end\n"
        "        try:\n"
        "            parse_module('builtin.module {\\n}\\n' + text)\n"
        "        except ParseError as err:\n"
        "            assert 'closing string literal' in str(err)\n"
        "        else:\n"
        "            raise SystemExit('parsed')\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
