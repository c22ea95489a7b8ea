r"""Fixes for xDSL 0.74 parser problems that every rung model can hit.

- Speed: xDSL rebuilds an IRDL constraint each time it parses a `dense<...>`
  literal, about 2 ms per attribute, a third of the time to read back a
  DenseNet-sized module. The constraint never changes, so it is built once.
- Speed: tensor types are most of the text of a model's IR and repeat
  constantly; each distinct `tensor<...>` spelling is parsed once and reused
  (types are immutable, so sharing them is safe).
- Non-ASCII text: xDSL prints `"é"` as `"\C3\A9"` but lexes such a literal
  as bytes, not as a string, so node names (locations) and string attributes
  with non-ASCII characters did not read back. MLIR treats it as a string when
  it is valid UTF-8, and so does the lexer here.
- Hang: xDSL's string-literal pattern nests a `+` inside a `*`, so on a
  string that never closes (a truncated `dialect_resources` hex blob) the
  regex engine tries every way to split the text: exponential time, from a
  few dozen characters on. Each run of plain characters is matched
  atomically here, so a match fails in linear time.

The replacements keep the originals' checks and messages. xDSL is pinned, so
they cannot drift silently; `test_xdsl_fixes` checks both behaviours.
"""

from __future__ import annotations

import re

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    ComplexType,
    IndexType,
    IntegerType,
    RankedStructure,
)
from xdsl.ir import TypeAttribute
from xdsl.irdl import base
from xdsl.parser.attribute_parser import AttrParser
from xdsl.utils.lexer import Position, Token
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRToken, MLIRTokenKind, StringLiteral

_DENSE_LITERAL_TYPE = base(RankedStructure[IntegerType | IndexType | AnyFloat | ComplexType])


def _parse_dense_literal_type(self: AttrParser) -> RankedStructure:
    type = self.expect(self.parse_optional_type, "Dense attribute must be typed!")
    if not _DENSE_LITERAL_TYPE.verifies(type):
        self.raise_error(
            "Expected memref, vector or tensor type of integer, index, float, or complex type"
        )
    if any(dim == DYNAMIC_INDEX for dim in type.get_shape()):  # type: ignore[attr-defined]
        self.raise_error("Dense literal attribute should have a static shape.")
    return type  # type: ignore[return-value]


_original_lex_string_literal = MLIRLexer._lex_string_literal

# xDSL's pattern with each run of plain characters made atomic: `(?=(X+))\1`
# is Python 3.10's spelling of the possessive `X++`.
_STRING_LITERAL = re.compile(r'"(?:(?=([^"\\\n\v\f]+))\1|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')


def _lex_string_literal(self: MLIRLexer, start_pos: Position) -> MLIRToken:
    token = _original_lex_string_literal(self, start_pos)
    if token.kind is MLIRTokenKind.BYTES_LIT:
        literal = StringLiteral(token.span.start, token.span.end, token.span.input)
        try:
            literal.bytes_contents.decode("utf-8")
        except UnicodeDecodeError:
            return token
        return Token(MLIRTokenKind.STRING_LIT, literal)
    return token


_TYPE_CACHE: dict[str, TypeAttribute] = {}
_TYPE_CACHE_LIMIT = 16384
_original_parse_optional_type = AttrParser.parse_optional_type


def _angle_end(text: str, start: int) -> int | None:
    """Index just past the `>` that closes the `<` at `start`, if the span is simple."""
    if start >= len(text) or text[start] != "<":
        return None
    depth = 0
    for i in range(start, min(len(text), start + 512)):
        c = text[i]
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
            if depth == 0:
                return i + 1
        elif c in '"\n{(':
            return None
    return None


def _parse_optional_type(self: AttrParser) -> TypeAttribute | None:
    token = self._current_token
    if token.kind is not MLIRTokenKind.BARE_IDENT or token.text != "tensor":
        return _original_parse_optional_type(self)
    text = token.span.input.content
    end = _angle_end(text, token.span.end)
    if end is None:
        return _original_parse_optional_type(self)
    key = text[token.span.start : end]
    cached = _TYPE_CACHE.get(key)
    if cached is not None:
        self._resume_from(end)
        return cached
    parsed = _original_parse_optional_type(self)
    if parsed is not None and text[end : self.pos].strip() == "":
        if len(_TYPE_CACHE) >= _TYPE_CACHE_LIMIT:
            _TYPE_CACHE.clear()
        _TYPE_CACHE[key] = parsed
    return parsed


def install() -> None:
    AttrParser._parse_dense_literal_type = _parse_dense_literal_type  # type: ignore[method-assign]
    MLIRLexer._lex_string_literal = _lex_string_literal  # type: ignore[method-assign]
    MLIRLexer._unescaped_characters_regex = _STRING_LITERAL
    AttrParser.parse_optional_type = _parse_optional_type  # type: ignore[method-assign]
