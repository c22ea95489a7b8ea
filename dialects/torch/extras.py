"""The torch dialect's ops that are not ATen overloads.

* `torch.constant`: a parameter, buffer or lifted constant of the program,
  its data a resource (as ONNX initializers are).
* `torch.sym.binary` / `torch.sym.unary`: the arithmetic an FX graph does on
  symbolic sizes (`operator.mul`, `operator.floordiv`, `torch.sym_max` ...)
  between ATen ops, on `i64` (`f64`, `i1`) values.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    StringAttr,
    UnknownLoc,
    f64,
    i1,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

SYMBOL_TYPES = (i64, f64, i1)


def _print_location(printer: Printer, op: IRDLOperation) -> None:
    if not printer.print_debuginfo and not isinstance(op.location, UnknownLoc):
        printer.print_string(" ")
        printer.print_attribute(op.location)


@irdl_op_definition
class ConstantOp(IRDLOperation):
    """A tensor the program holds (parameter, buffer or constant); its data is `value`."""

    name = "torch.constant"

    value = prop_def(DenseIntOrFPElementsAttr | DenseResourceAttr)
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, value: DenseIntOrFPElementsAttr | DenseResourceAttr) -> None:
        super().__init__(properties={"value": value}, result_types=[value.get_type()])

    def verify_(self) -> None:
        if self.result.type != self.value.get_type():
            raise VerifyException(
                f"torch.constant: result type {self.result.type} is not the value's "
                f"{self.value.get_type()}"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.value)
        _print_location(printer, self)

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        pos = parser.pos
        value = parser.parse_attribute()
        if not isinstance(value, DenseIntOrFPElementsAttr | DenseResourceAttr):
            parser.raise_error("torch.constant takes a dense or dense_resource value", pos)
        return cls(value)


SYM_BINARY: dict[str, str] = {
    "add": "+",
    "sub": "-",
    "mul": "*",
    "floordiv": "//",
    "truediv": "/",
    "mod": "%",
    "pow": "**",
    "max": "max",
    "min": "min",
    "eq": "==",
    "ne": "!=",
    "lt": "<",
    "le": "<=",
    "gt": ">",
    "ge": ">=",
    "and": "and",
    "or": "or",
}
"""The binary functions of `torch.sym.binary`, with the Python operator each mirrors."""

SYM_UNARY: dict[str, str] = {
    "neg": "-",
    "not": "not",
    "float": "float",
    "int": "int",
    "ceil": "ceil",
    "floor": "floor",
}
"""The unary functions of `torch.sym.unary`."""

_COMPARES = {"eq", "ne", "lt", "le", "gt", "ge", "and", "or", "not"}


@irdl_op_definition
class SymBinaryOp(IRDLOperation):
    """`fn(lhs, rhs)` on symbolic sizes: `%n = torch.sym.binary "mul" %a, %b : i64, i64 -> i64`."""

    name = "torch.sym.binary"

    FUNCTIONS: ClassVar[dict[str, str]] = SYM_BINARY

    fn = prop_def(StringAttr)
    lhs = operand_def()
    rhs = operand_def()
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, fn: str, lhs: SSAValue, rhs: SSAValue, result: Attribute) -> None:
        super().__init__(
            properties={"fn": StringAttr(fn)}, operands=[lhs, rhs], result_types=[result]
        )

    def verify_(self) -> None:
        if self.fn.data not in SYM_BINARY:
            raise VerifyException(
                f"torch.sym.binary: unknown function '{self.fn.data}' "
                f"(one of {', '.join(SYM_BINARY)})"
            )
        for v in (self.lhs, self.rhs, self.result):
            if v.type not in SYMBOL_TYPES:
                raise VerifyException(f"torch.sym.binary: {v.type} is not i64, f64 or i1")
        if self.fn.data in _COMPARES and self.result.type != i1:
            raise VerifyException(f"torch.sym.binary: '{self.fn.data}' gives i1")

    def print(self, printer: Printer) -> None:
        printer.print_string(f' "{self.fn.data}" ')
        printer.print_operand(self.lhs)
        printer.print_string(", ")
        printer.print_operand(self.rhs)
        printer.print_string(f" : {self.lhs.type}, {self.rhs.type} -> {self.result.type}")
        _print_location(printer, self)

    @classmethod
    def parse(cls, parser: Parser) -> SymBinaryOp:
        fn = parser.parse_str_literal()
        lhs = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        rhs = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        lt = parser.parse_type()
        parser.parse_punctuation(",")
        rt = parser.parse_type()
        parser.parse_punctuation("->")
        result = parser.parse_type()
        return cls(fn, parser.resolve_operand(lhs, lt), parser.resolve_operand(rhs, rt), result)


@irdl_op_definition
class SymUnaryOp(IRDLOperation):
    """`fn(x)` on a symbolic size: `%n = torch.sym.unary "neg" %a : i64 -> i64`."""

    name = "torch.sym.unary"

    fn = prop_def(StringAttr)
    x = operand_def()
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, fn: str, x: SSAValue, result: Attribute) -> None:
        super().__init__(properties={"fn": StringAttr(fn)}, operands=[x], result_types=[result])

    def verify_(self) -> None:
        if self.fn.data not in SYM_UNARY:
            raise VerifyException(
                f"torch.sym.unary: unknown function '{self.fn.data}' "
                f"(one of {', '.join(SYM_UNARY)})"
            )
        for v in (self.x, self.result):
            if v.type not in SYMBOL_TYPES:
                raise VerifyException(f"torch.sym.unary: {v.type} is not i64, f64 or i1")

    def print(self, printer: Printer) -> None:
        printer.print_string(f' "{self.fn.data}" ')
        printer.print_operand(self.x)
        printer.print_string(f" : {self.x.type} -> {self.result.type}")
        _print_location(printer, self)

    @classmethod
    def parse(cls, parser: Parser) -> SymUnaryOp:
        fn = parser.parse_str_literal()
        x = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        xt = parser.parse_type()
        parser.parse_punctuation("->")
        result = parser.parse_type()
        return cls(fn, parser.resolve_operand(x, xt), result)


EXTRA_OPS = (ConstantOp, SymBinaryOp, SymUnaryOp)

__all__ = ["EXTRA_OPS", "SYM_BINARY", "SYM_UNARY", "ConstantOp", "SymBinaryOp", "SymUnaryOp"]
