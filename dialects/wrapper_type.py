"""A base for types that wrap one other type: `!dialect.name<T>`.

ONNX sequences and optionals, and core's lists and optionals, are all a
type around one type; they share how that prints and parses.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.parser import AttrParser
from xdsl.printer import Printer


class WrapperType(ParametrizedAttribute, TypeAttribute):
    """Prints as `<T>` and parses back; subclasses declare `element_type: Attribute`."""

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_attribute(self.parameters[0])

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return (parser.parse_type(),)
