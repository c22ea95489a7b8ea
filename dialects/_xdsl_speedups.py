"""Speed fixes for xDSL 0.74 hot paths that rung hits on every model.

xDSL rebuilds an IRDL constraint each time it parses a `dense<...>` literal,
which costs about 2 ms per attribute: a third of the time to read back a
DenseNet-sized module. The constraint never changes, so it is built once here.
The replacement keeps the original's checks and messages. xDSL is pinned, so
this cannot drift silently; `test_xdsl_speedups` checks the behaviour.
"""

from __future__ import annotations

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    ComplexType,
    IndexType,
    IntegerType,
    RankedStructure,
)
from xdsl.irdl import base
from xdsl.parser.attribute_parser import AttrParser

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


def install() -> None:
    AttrParser._parse_dense_literal_type = _parse_dense_literal_type  # type: ignore[method-assign]
