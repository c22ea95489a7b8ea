"""Kernel-level values that are not plain buffers: lists, optionals, and strings.

ONNX sequences and optionals reach the kernel level as `!kernel.list<E>` and
`!kernel.optional<T>`; string tensors as buffers of `!onnx.string` elements;
ZipMap's sequence of maps as a `!kernel.list` of `!onnx.map<K, V>`.

    %l = kernel.list_new(%a, %b) : (memref<3xf32>, memref<?xf32>) -> !kernel.list<f32>
    %n = kernel.list_length %l : !kernel.list<f32>
    %e = kernel.list_get %l[%i] : !kernel.list<f32> -> memref<?xf32>
    %m = kernel.list_insert %l, %c, %i : !kernel.list<f32>, memref<2xf32>
    %o = kernel.optional_new(%a) : !kernel.optional<memref<3xf32>>
    %h = kernel.optional_has %o : !kernel.optional<memref<3xf32>>
    %c = kernel.str_cmp %s, %t
    %u = kernel.str_case upper %s
    %z = kernel.zip_map %k, %p : memref<3xi64>, memref<?x3xf32> -> !kernel.list<!onnx.map<i64, f32>>

Why these choices (the representation of onnx-mlir, `memref<?xmemref<T>>`
with copies in and out, kept, but spelled as a type of its own):
- A list is a value: its elements are never written after it is built, and
  every "update" (`list_insert`, `list_erase`) makes a new list. New lists
  share the elements of their source; only a buffer entering a list
  (`list_new`, `list_insert`) is copied, since buffers are reused by the
  memory plan and lists outlive them.
- Elements may differ in shape, so the list type bounds only their element
  type; each element carries its own run-time shape. `list_get` gives a view
  of an element's storage (no copy) whose type may say more (a rank, static
  dims): code generation checks those at run time.
- The storage of lists and optionals is the run's heap (released when the
  run ends); an output is copied out into one block the caller owns.
- A string element is a pointer to UTF-8 bytes ending in NUL; buffers of
  strings move pointers like any other element. `kernel.str_cmp` compares
  two of them as C's `strcmp` does (bytewise, by the sign of the result);
  `kernel.str_case` makes a new string on the run's heap.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import IndexType, IntegerType, MemRefType, StringAttr, TensorType, i32
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import MemoryAllocEffect, MemoryReadEffect, Pure
from xdsl.utils.exceptions import VerifyException

from rung.dialects.onnx.types import MapType, StringType
from rung.dialects.wrapper_type import WrapperType

I1 = IntegerType(1)


# ---- types ----------------------------------------------------------------------------------


@irdl_attr_definition
class ListType(WrapperType):
    """`!kernel.list<f32>`: a list of buffers of one element type, each with its own shape;
    `!kernel.list<!onnx.map<i64, f32>>`, a list of maps (see `kernel.zip_map`)."""

    name = "kernel.list"

    element_type: Attribute

    def verify(self) -> None:
        if isinstance(self.element_type, MemRefType | TensorType | ListType | OptionalType):
            raise VerifyException(
                f"!kernel.list's parameter is an element type (f32, i64, !onnx.string), "
                f"got {self.element_type}"
            )


@irdl_attr_definition
class OptionalType(WrapperType):
    """`!kernel.optional<T>`: a buffer (`memref<...>`) or a `!kernel.list`, or none."""

    name = "kernel.optional"

    element_type: Attribute

    def verify(self) -> None:
        if not isinstance(self.element_type, MemRefType | ListType):
            raise VerifyException(
                f"!kernel.optional holds a memref or a !kernel.list, got {self.element_type}"
            )


def _list(op: Operation, value: SSAValue) -> ListType:
    if not isinstance(value.type, ListType):
        raise VerifyException(f"{op.name}: expected a !kernel.list, got {value.type}")
    return value.type


def _fits_list(op: Operation, buffer: SSAValue, lst: ListType, what: str) -> None:
    t = buffer.type
    if not isinstance(t, MemRefType) or t.element_type != lst.element_type:
        raise VerifyException(f"{op.name}: {what} of type {t} does not fit {lst}")


def _check_index(op: Operation, index: SSAValue) -> None:
    if not isinstance(index.type, IndexType):
        raise VerifyException(f"{op.name}: the position must be an index, got {index.type}")


def _print_operands(printer: Printer, values: Sequence[SSAValue]) -> None:
    printer.print_string(" ")
    printer.print_list(values, printer.print_ssa_value)


def _print_types(printer: Printer, types: Sequence[Attribute]) -> None:
    printer.print_string(" : ")
    printer.print_list(types, printer.print_attribute)


# ---- lists ----------------------------------------------------------------------------------


@irdl_op_definition
class ListNewOp(IRDLOperation):
    """A new list holding copies of the operand buffers, in order (none: an empty list)."""

    name = "kernel.list_new"

    elements = var_operand_def(MemRefType)
    result = result_def(ListType)
    traits = traits_def(MemoryReadEffect())

    def __init__(self, elements: Sequence[SSAValue], type: ListType) -> None:
        super().__init__(operands=[list(elements)], result_types=[type])

    def verify_(self) -> None:
        for i, v in enumerate(self.elements):
            _fits_list(self, v, self.result.type, f"element {i}")

    def print(self, printer: Printer) -> None:
        printer.print_string("(")
        printer.print_list(self.elements, printer.print_ssa_value)
        printer.print_string(") : (")
        printer.print_list([v.type for v in self.elements], printer.print_attribute)
        printer.print_string(") -> ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> ListNewOp:
        names = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_unresolved_operand
        )
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
        parser.parse_punctuation("->")
        result = parser.parse_type()
        if not isinstance(result, ListType):
            parser.raise_error(f"kernel.list_new: expected a !kernel.list result, got {result}")
        return cls(parser.resolve_operands(names, types, parser.pos), result)


@irdl_op_definition
class ListLengthOp(IRDLOperation):
    """The number of elements of a list."""

    name = "kernel.list_length"

    list = operand_def(ListType)
    result = result_def(IndexType)
    traits = traits_def(Pure())

    def __init__(self, lst: SSAValue) -> None:
        super().__init__(operands=[lst], result_types=[IndexType()])

    def print(self, printer: Printer) -> None:
        _print_operands(printer, [self.list])
        _print_types(printer, [self.list.type])

    @classmethod
    def parse(cls, parser: Parser) -> ListLengthOp:
        name = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        return cls(parser.resolve_operand(name, parser.parse_type()))


@irdl_op_definition
class ListGetOp(IRDLOperation):
    """A view of element `index` (in `[0, length)`): its storage, seen as the result type.

    The result's rank and static dims are checked at run time against the
    element's own shape; `?` dims take the element's sizes.
    """

    name = "kernel.list_get"

    list = operand_def(ListType)
    index = operand_def(IndexType)
    result = result_def(MemRefType)
    traits = traits_def(Pure())

    def __init__(self, lst: SSAValue, index: SSAValue, type: MemRefType) -> None:
        super().__init__(operands=[lst, index], result_types=[type])

    def verify_(self) -> None:
        _check_index(self, self.index)
        _fits_list(self, self.result, _list(self, self.list), "the result")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.list)
        printer.print_string("[")
        printer.print_ssa_value(self.index)
        printer.print_string("]")
        _print_types(printer, [self.list.type])
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> ListGetOp:
        lst = parser.parse_unresolved_operand()
        parser.parse_punctuation("[")
        index = parser.parse_unresolved_operand()
        parser.parse_punctuation("]")
        parser.parse_punctuation(":")
        list_type = parser.parse_type()
        parser.parse_punctuation("->")
        type = parser.parse_type()
        return cls(
            parser.resolve_operand(lst, list_type),
            parser.resolve_operand(index, IndexType()),
            type,  # type: ignore[arg-type]
        )


@irdl_op_definition
class ListInsertOp(IRDLOperation):
    """A new list: the elements of `list` with a copy of `element` before `index`
    (in `[0, length]`; `length` appends)."""

    name = "kernel.list_insert"

    list = operand_def(ListType)
    element = operand_def(MemRefType)
    index = operand_def(IndexType)
    result = result_def(ListType)
    traits = traits_def(MemoryReadEffect())

    def __init__(self, lst: SSAValue, element: SSAValue, index: SSAValue) -> None:
        super().__init__(operands=[lst, element, index], result_types=[lst.type])

    def verify_(self) -> None:
        _check_index(self, self.index)
        _fits_list(self, self.element, _list(self, self.list), "the element")
        if self.result.type != self.list.type:
            raise VerifyException("kernel.list_insert: the result must have the list's type")

    def print(self, printer: Printer) -> None:
        _print_operands(printer, [self.list, self.element, self.index])
        _print_types(printer, [self.list.type, self.element.type])

    @classmethod
    def parse(cls, parser: Parser) -> ListInsertOp:
        lst = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        element = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        index = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        list_type = parser.parse_type()
        parser.parse_punctuation(",")
        element_type = parser.parse_type()
        return cls(
            parser.resolve_operand(lst, list_type),
            parser.resolve_operand(element, element_type),
            parser.resolve_operand(index, IndexType()),
        )


@irdl_op_definition
class ListEraseOp(IRDLOperation):
    """A new list: the elements of `list` without the one at `index` (in `[0, length)`)."""

    name = "kernel.list_erase"

    list = operand_def(ListType)
    index = operand_def(IndexType)
    result = result_def(ListType)
    traits = traits_def(Pure())

    def __init__(self, lst: SSAValue, index: SSAValue) -> None:
        super().__init__(operands=[lst, index], result_types=[lst.type])

    def verify_(self) -> None:
        _check_index(self, self.index)
        if self.result.type != _list(self, self.list):
            raise VerifyException("kernel.list_erase: the result must have the list's type")

    def print(self, printer: Printer) -> None:
        _print_operands(printer, [self.list, self.index])
        _print_types(printer, [self.list.type])

    @classmethod
    def parse(cls, parser: Parser) -> ListEraseOp:
        lst = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        index = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        return cls(
            parser.resolve_operand(lst, parser.parse_type()),
            parser.resolve_operand(index, IndexType()),
        )


# ---- optionals ------------------------------------------------------------------------------


@irdl_op_definition
class OptionalNewOp(IRDLOperation):
    """An optional holding the operand (a buffer is copied), or none without one."""

    name = "kernel.optional_new"

    value = opt_operand_def()
    result = result_def(OptionalType)
    traits = traits_def(MemoryReadEffect())

    def __init__(self, value: SSAValue | None, type: OptionalType) -> None:
        super().__init__(operands=[[] if value is None else [value]], result_types=[type])

    def verify_(self) -> None:
        if self.value is not None and self.value.type != self.result.type.element_type:
            raise VerifyException(
                f"kernel.optional_new: a value of type {self.value.type} in {self.result.type}"
            )

    def print(self, printer: Printer) -> None:
        values = [] if self.value is None else [self.value]
        printer.print_string("(")
        printer.print_list(values, printer.print_ssa_value)
        printer.print_string(") : ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> OptionalNewOp:
        names = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_unresolved_operand
        )
        parser.parse_punctuation(":")
        type = parser.parse_type()
        if not isinstance(type, OptionalType) or len(names) > 1:
            parser.raise_error("kernel.optional_new: expected (value?) : !kernel.optional<T>")
        value = parser.resolve_operand(names[0], type.element_type) if names else None
        return cls(value, type)


@irdl_op_definition
class OptionalHasOp(IRDLOperation):
    """Whether an optional holds a value."""

    name = "kernel.optional_has"

    input = operand_def(OptionalType)
    result = result_def(I1)
    traits = traits_def(Pure())

    def __init__(self, value: SSAValue) -> None:
        super().__init__(operands=[value], result_types=[I1])

    def print(self, printer: Printer) -> None:
        _print_operands(printer, [self.input])
        _print_types(printer, [self.input.type])

    @classmethod
    def parse(cls, parser: Parser) -> OptionalHasOp:
        name = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        return cls(parser.resolve_operand(name, parser.parse_type()))


@irdl_op_definition
class OptionalGetOp(IRDLOperation):
    """The value an optional holds (a view of a held buffer); the run fails on none."""

    name = "kernel.optional_get"

    input = operand_def(OptionalType)
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, value: SSAValue) -> None:
        assert isinstance(value.type, OptionalType)
        super().__init__(operands=[value], result_types=[value.type.element_type])

    def verify_(self) -> None:
        if self.result.type != self.input.type.element_type:
            raise VerifyException(
                f"kernel.optional_get: result {self.result.type} for {self.input.type}"
            )

    def print(self, printer: Printer) -> None:
        _print_operands(printer, [self.input])
        _print_types(printer, [self.input.type])

    @classmethod
    def parse(cls, parser: Parser) -> OptionalGetOp:
        name = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        return cls(parser.resolve_operand(name, parser.parse_type()))


# ---- maps -----------------------------------------------------------------------------------


@irdl_op_definition
class ZipMapOp(IRDLOperation):
    """A list of maps, one per row of `values` [N, C], each from `keys` [C] to that row.

    The list's element type is the map type (`!onnx.map<K, V>`); each map holds
    a keys buffer and a values buffer (see `rung_seq.h`). Lists of maps are
    outputs only: no kernel op reads one.
    """

    name = "kernel.zip_map"

    keys = operand_def(MemRefType)
    values = operand_def(MemRefType)
    result = result_def(ListType)
    traits = traits_def(MemoryReadEffect())

    def __init__(self, keys: SSAValue, values: SSAValue, type: ListType) -> None:
        super().__init__(operands=[keys, values], result_types=[type])

    def verify_(self) -> None:
        keys, values, out = self.keys.type, self.values.type, self.result.type.element_type
        if not isinstance(out, MapType):
            raise VerifyException(f"kernel.zip_map: the result must be a list of maps, got {out}")
        value = out.value_type
        value = value.element_type if isinstance(value, TensorType) else value
        if (
            not isinstance(keys, MemRefType)
            or not isinstance(values, MemRefType)
            or len(keys.get_shape()) != 1
            or len(values.get_shape()) != 2
            or keys.element_type != out.key_type
            or values.element_type != value
        ):
            raise VerifyException(
                f"kernel.zip_map: keys {keys} (a vector) and values {values} (a matrix) "
                f"do not give maps of {out}"
            )

    def print(self, printer: Printer) -> None:
        _print_operands(printer, [self.keys, self.values])
        _print_types(printer, [self.keys.type, self.values.type])
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> ZipMapOp:
        keys = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        values = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        key_type = parser.parse_type()
        parser.parse_punctuation(",")
        value_type = parser.parse_type()
        parser.parse_punctuation("->")
        type = parser.parse_type()
        return cls(
            parser.resolve_operand(keys, key_type),
            parser.resolve_operand(values, value_type),
            type,  # type: ignore[arg-type]
        )


# ---- strings --------------------------------------------------------------------------------


@irdl_op_definition
class StrCmpOp(IRDLOperation):
    """Compares two strings bytewise: an i32 below, equal to or above 0 (C's `strcmp`)."""

    name = "kernel.str_cmp"

    lhs = operand_def()
    rhs = operand_def()
    result = result_def(i32)
    traits = traits_def(Pure())

    def __init__(self, lhs: SSAValue, rhs: SSAValue) -> None:
        super().__init__(operands=[lhs, rhs], result_types=[i32])

    def verify_(self) -> None:
        if not (isinstance(self.lhs.type, StringType) and self.rhs.type == self.lhs.type):
            raise VerifyException(
                f"kernel.str_cmp: operands must be strings, got {self.lhs.type}, {self.rhs.type}"
            )

    def print(self, printer: Printer) -> None:
        _print_operands(printer, [self.lhs, self.rhs])

    @classmethod
    def parse(cls, parser: Parser) -> StrCmpOp:
        lhs = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        rhs = parser.parse_unresolved_operand()
        string = StringType()
        return cls(parser.resolve_operand(lhs, string), parser.resolve_operand(rhs, string))


@irdl_op_definition
class StrCaseOp(IRDLOperation):
    """A new string: `input` with its ASCII letters made `lower` or `upper` case (other
    bytes unchanged), held by the run's heap."""

    name = "kernel.str_case"

    to = prop_def(StringAttr)
    input = operand_def()
    result = result_def()
    traits = traits_def(MemoryAllocEffect())

    def __init__(self, to: str, value: SSAValue) -> None:
        super().__init__(
            operands=[value], result_types=[value.type], properties={"to": StringAttr(to)}
        )

    def verify_(self) -> None:
        if self.to.data not in ("lower", "upper"):
            raise VerifyException(f"kernel.str_case: 'lower' or 'upper', not '{self.to.data}'")
        if not isinstance(self.input.type, StringType) or self.result.type != self.input.type:
            raise VerifyException(
                f"kernel.str_case: the operand must be a string, got {self.input.type}"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.to.data}")
        _print_operands(printer, [self.input])

    @classmethod
    def parse(cls, parser: Parser) -> StrCaseOp:
        to = parser.parse_identifier("'lower' or 'upper'")
        value = parser.parse_unresolved_operand()
        return cls(to, parser.resolve_operand(value, StringType()))


VALUE_OPS: tuple[type[IRDLOperation], ...] = (
    ListNewOp,
    ListLengthOp,
    ListGetOp,
    ListInsertOp,
    ListEraseOp,
    OptionalNewOp,
    OptionalHasOp,
    OptionalGetOp,
    ZipMapOp,
    StrCmpOp,
    StrCaseOp,
)
VALUE_TYPES = (ListType, OptionalType)

__all__ = [
    "VALUE_OPS",
    "VALUE_TYPES",
    "ListEraseOp",
    "ListGetOp",
    "ListInsertOp",
    "ListLengthOp",
    "ListNewOp",
    "ListType",
    "OptionalGetOp",
    "OptionalHasOp",
    "OptionalNewOp",
    "OptionalType",
    "StrCaseOp",
    "StrCmpOp",
    "ZipMapOp",
]
