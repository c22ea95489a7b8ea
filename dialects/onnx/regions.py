"""Graph attributes as regions: one block that ends in `onnx.Yield`.

Generated ops (If, Loop, Scan, …) and `onnx.Custom` both hold ONNX graphs
this way. The terminator and the check live apart from both, so that the
shared op base can verify graphs without depending on the hand-written ops.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Region, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, traits_def, var_operand_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Returns the outputs of a graph attribute's region, in ONNX order."""

    name = "onnx.Yield"

    values = var_operand_def()

    traits = traits_def(IsTerminator(), Pure())

    def __init__(self, values: Sequence[SSAValue]) -> None:
        super().__init__(operands=[values])

    def print(self, printer: Printer) -> None:
        if self.values:
            printer.print_string(" ")
            printer.print_list(self.values, printer.print_ssa_value)
            printer.print_string(" : ")
            printer.print_list([v.type for v in self.values], printer.print_attribute)
        if self.attributes:
            printer.print_string(" ")
            printer.print_attr_dict(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> YieldOp:
        names = parser.parse_optional_undelimited_comma_separated_list(
            parser.parse_optional_unresolved_operand, parser.parse_unresolved_operand
        )
        values: list[SSAValue] = []
        if names:
            parser.parse_punctuation(":")
            types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
            if len(types) != len(names):
                parser.raise_error(f"onnx.Yield: {len(names)} values but {len(types)} types")
            values = parser.resolve_operands(names, types, parser.pos)
        op = cls(values)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op


def verify_graph_region(op: IRDLOperation, name: str, region: Region) -> None:
    """A graph attribute is one block that ends in `onnx.Yield`."""
    if len(region.blocks) != 1:
        raise VerifyException(f"{op.name}: graph '{name}' must have exactly one block")
    last = region.block.last_op
    if not isinstance(last, YieldOp):
        raise VerifyException(f"{op.name}: graph '{name}' must end with onnx.Yield")


__all__ = ["YieldOp", "verify_graph_region"]
