"""Types and attributes of the onnx dialect that builtin MLIR does not have.

ONNX values are not only tensors: sequences, optionals and maps flow through
graphs too, and tensors may hold strings. Each gets a small parametrized type
here so that the importer never has to approximate a value's type.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    ArrayAttr,
    IntAttr,
    StringAttr,
    TensorType,
    UnrankedTensorType,
)
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from rung.dialects.wrapper_type import WrapperType


@irdl_attr_definition
class StringType(ParametrizedAttribute, TypeAttribute):
    """The element type of ONNX string tensors (`tensor(string)`)."""

    name = "onnx.string"


@irdl_attr_definition
class UnknownType(ParametrizedAttribute, TypeAttribute):
    """A value whose type shape inference could not determine.

    Only ops from unknown domains produce it: their schemas are not known, so
    nothing can be said about their outputs until a user pattern lowers them.
    """

    name = "onnx.unknown"


@irdl_attr_definition
class SeqType(WrapperType):
    """An ONNX sequence, `seq(T)`: an ordered list of values of type T."""

    name = "onnx.seq"

    element_type: Attribute


@irdl_attr_definition
class OptType(WrapperType):
    """An ONNX optional, `optional(T)`: either a value of type T or nothing."""

    name = "onnx.opt"

    element_type: Attribute


@irdl_attr_definition
class MapType(ParametrizedAttribute, TypeAttribute):
    """An ONNX map, `map(K, V)`, with a scalar key type and a value type."""

    name = "onnx.map"

    key_type: Attribute
    value_type: Attribute

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_attribute(self.key_type)
            printer.print_string(", ")
            printer.print_attribute(self.value_type)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            key = parser.parse_type()
            parser.parse_punctuation(",")
            value = parser.parse_type()
        return (key, value)


@irdl_attr_definition
class StringTensorAttr(ParametrizedAttribute):
    """A constant tensor of strings, in row-major order.

    Builtin MLIR has no dense string elements attribute, and ONNX string
    constants (Constant, LabelEncoder keys, CategoryMapper vocabularies) need one.
    """

    name = "onnx.strings"

    values: ArrayAttr[StringAttr]
    type: TensorType | UnrankedTensorType

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string("[")
            printer.print_list(self.values.data, printer.print_attribute)
            printer.print_string("] : ")
            printer.print_attribute(self.type)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            values = parser.parse_comma_separated_list(
                parser.Delimiter.SQUARE, lambda: StringAttr(parser.parse_str_literal())
            )
            parser.parse_punctuation(":")
            type = parser.parse_type()
        return (ArrayAttr(values), type)

    def verify(self) -> None:
        if not isinstance(self.type, TensorType) or not isinstance(
            self.type.element_type, StringType
        ):
            raise VerifyException(
                f"onnx.strings must have a tensor of !onnx.string type, got {self.type}"
            )
        shape = self.type.get_shape()
        if any(dim < 0 for dim in shape):
            raise VerifyException(f"onnx.strings must have a static shape, got {self.type}")
        count = 1
        for dim in shape:
            count *= dim
        if count != len(self.values.data):
            raise VerifyException(
                f"onnx.strings holds {len(self.values.data)} values "
                f"but its type {self.type} has {count} elements"
            )


@irdl_attr_definition
class SparseTensorAttr(ParametrizedAttribute):
    """A constant sparse tensor, as ONNX's `SparseTensorProto` (COO format).

    `indices` holds either linearized indices (shape [NNZ]) or coordinates
    (shape [NNZ, rank]); `dims` is the dense shape.
    """

    name = "onnx.sparse"

    values: Attribute
    indices: Attribute
    dims: ArrayAttr[IntAttr]

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_attribute(self.values)
            printer.print_string(", ")
            printer.print_attribute(self.indices)
            printer.print_string(", [")
            printer.print_list(self.dims.data, lambda d: printer.print_int(d.data))
            printer.print_string("]")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            values = parser.parse_attribute()
            parser.parse_punctuation(",")
            indices = parser.parse_attribute()
            parser.parse_punctuation(",")
            dims = parser.parse_comma_separated_list(
                parser.Delimiter.SQUARE, lambda: IntAttr(parser.parse_integer())
            )
        return (values, indices, ArrayAttr(dims))


ONNX_TYPES: tuple[type[Attribute], ...] = (
    StringType,
    UnknownType,
    SeqType,
    OptType,
    MapType,
    StringTensorAttr,
    SparseTensorAttr,
)
