"""The shared base of every onnx-dialect op: schema tables, syntax and verifier.

Generated op classes only declare their operands, results, properties and a
`SCHEMA` table. Everything that follows from the table (the readable syntax,
type-constraint checks, attribute defaults) lives here once, so a fix applies
to all ops at the same time.

Syntax of every op (positions mirror ONNX; `none` marks an absent optional):

    %y = onnx.Conv(%x, %w, none) {strides = array<i64: 2, 2>}
           : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x3x3xf32>

Trailing absent inputs are left out. Absent outputs in the middle appear as
`none` in the result types and get no SSA name. Graph attributes follow the
type as named regions: `then_branch { ... } else_branch { ... }`. A node's
name is printed as its location, `loc("conv_3")`.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    NoneType,
    StringAttr,
    UnknownLoc,
)
from xdsl.ir import Attribute, Block, Region, SSAValue, TypeAttribute
from xdsl.irdl import IRDLOperation
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from .dtypes import is_checkable, type_string
from .regions import verify_graph_region
from .types import SparseTensorAttr, StringTensorAttr

SEGMENT_PROPERTIES = ("operandSegmentSizes", "resultSegmentSizes")


class Arity(Enum):
    """How many values an ONNX formal parameter takes."""

    SINGLE = "single"
    OPTIONAL = "optional"
    VARIADIC = "variadic"


@dataclass(frozen=True)
class Param:
    """One formal input or output of an ONNX schema."""

    name: str
    field: str
    arity: Arity
    type_param: str
    homogeneous: bool = True
    min_arity: int = 1


@dataclass(frozen=True)
class AttrInfo:
    """One attribute of an ONNX schema: its kind (`INT`, `FLOATS`, …) and default."""

    name: str
    field: str
    kind: str
    required: bool = False
    default: object = None


@dataclass(frozen=True)
class OpSchema:
    """What the ONNX schema says of an op, at the version the dialect holds."""

    domain: str
    op_type: str
    version: int
    inputs: tuple[Param, ...]
    outputs: tuple[Param, ...]
    attributes: tuple[AttrInfo, ...] = ()
    regions: tuple[str, ...] = ()
    type_constraints: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def attribute(self, name: str) -> AttrInfo | None:
        for info in self.attributes:
            if info.name == name:
                return info
        return None


def attribute_value(attr: Attribute) -> object:
    """The plain Python value of an ONNX attribute as the dialect stores it.

    INT → int, FLOAT → float, STRING → str, INTS/FLOATS → tuple, STRINGS →
    tuple of str. Tensors, types and graphs are returned as they are.
    """
    if isinstance(attr, IntegerAttr):
        return attr.value.data
    if isinstance(attr, FloatAttr):
        return attr.value.data
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, DenseArrayBase):
        return tuple(attr.get_values())
    if isinstance(attr, ArrayAttr) and all(isinstance(a, StringAttr) for a in attr.data):
        return tuple(a.data for a in attr.data)  # type: ignore[union-attr]
    return attr


_TENSOR_ATTRS = (DenseIntOrFPElementsAttr, DenseResourceAttr, StringTensorAttr)


def _is_i64(attr: IntegerAttr) -> bool:
    return isinstance(attr.type, IntegerType) and attr.type.width.data == 64


def attribute_kind_matches(kind: str, attr: Attribute) -> bool:
    """Whether `attr` is how the dialect stores an ONNX attribute of `kind`."""
    match kind:
        case "INT":
            return isinstance(attr, IntegerAttr) and _is_i64(attr)
        case "FLOAT":
            return isinstance(attr, FloatAttr) and isinstance(attr.type, Float32Type)
        case "STRING":
            return isinstance(attr, StringAttr)
        case "INTS":
            return isinstance(attr, DenseArrayBase) and attr.elt_type == IntegerType(64)
        case "FLOATS":
            return isinstance(attr, DenseArrayBase) and isinstance(attr.elt_type, Float32Type)
        case "STRINGS":
            return isinstance(attr, ArrayAttr) and all(isinstance(a, StringAttr) for a in attr)
        case "TENSOR":
            return isinstance(attr, _TENSOR_ATTRS)
        case "TENSORS":
            return isinstance(attr, ArrayAttr) and all(isinstance(a, _TENSOR_ATTRS) for a in attr)
        case "SPARSE_TENSOR":
            return isinstance(attr, SparseTensorAttr)
        case "SPARSE_TENSORS":
            return isinstance(attr, ArrayAttr) and all(
                isinstance(a, SparseTensorAttr) for a in attr
            )
        case "TYPE_PROTO":
            return isinstance(attr, TypeAttribute)
        case "TYPE_PROTOS":
            return isinstance(attr, ArrayAttr) and all(isinstance(a, TypeAttribute) for a in attr)
    return False


def _param_values(op: IRDLOperation, params: Sequence[Param], values: str) -> list[list[SSAValue]]:
    """The values bound to each formal parameter, in schema order."""
    out: list[list[SSAValue]] = []
    for param in params:
        bound = getattr(op, param.field)
        if param.arity is Arity.SINGLE:
            out.append([bound])
        elif param.arity is Arity.OPTIONAL:
            out.append([] if bound is None else [bound])
        else:
            out.append(list(bound))
    return out


def group_positions(params: Sequence[Param], present: Sequence[bool], what: str) -> list[list[int]]:
    """Map printed positions (ONNX positions) onto the op's parameter groups.

    Positions beyond the schema's parameters all go to the last group when it is
    variadic, which is the only place ONNX allows a variadic parameter.
    """
    groups: list[list[int]] = [[] for _ in params]
    for pos, here in enumerate(present):
        if pos < len(params):
            index = pos
        elif params and params[-1].arity is Arity.VARIADIC:
            index = len(params) - 1
        else:
            raise ValueError(f"too many {what}: expected at most {len(params)}, got {len(present)}")
        param = params[index]
        if not here:
            if param.arity is not Arity.OPTIONAL:
                raise ValueError(f"{what[:-1]} '{param.name}' is not optional")
            continue
        groups[index].append(pos)
    for param, group in zip(params, groups, strict=True):
        if param.arity is Arity.SINGLE and not group:
            raise ValueError(f"missing required {what[:-1]} '{param.name}'")
    return groups


class OnnxOp(IRDLOperation):
    """Base class of all generated ONNX ops."""

    SCHEMA: ClassVar[OpSchema]

    # ---- accessors ------------------------------------------------------

    def attr(self, name: str) -> object:
        """The value of ONNX attribute `name`, or its schema default when absent."""
        value = self.properties.get(name)
        if value is not None:
            return attribute_value(value)
        info = self.SCHEMA.attribute(name)
        if info is None:
            raise KeyError(f"{self.name} has no attribute '{name}'")
        return info.default

    def onnx_inputs(self) -> list[SSAValue | None]:
        """Inputs by ONNX position; None where an optional input is absent."""
        return _flatten(_param_values(self, self.SCHEMA.inputs, "operands"), self.SCHEMA.inputs)

    def onnx_outputs(self) -> list[SSAValue | None]:
        """Outputs by ONNX position; None where an optional output is absent."""
        return _flatten(_param_values(self, self.SCHEMA.outputs, "results"), self.SCHEMA.outputs)

    def onnx_attributes(self) -> dict[str, Attribute]:
        """The ONNX attributes the op carries (not the defaults)."""
        return {k: v for k, v in self.properties.items() if k not in SEGMENT_PROPERTIES}

    def graph_regions(self) -> dict[str, Region]:
        """Graph attributes by name."""
        return dict(zip(self.SCHEMA.regions, self.regions, strict=True))

    # ---- syntax ---------------------------------------------------------

    def print(self, printer: Printer) -> None:
        inputs = trim_absent(self.onnx_inputs())
        outputs = trim_absent(self.onnx_outputs())
        print_signature(printer, inputs, self.onnx_attributes(), self.attributes, outputs)
        for name, region in self.graph_regions().items():
            printer.print_string(f" {name} ")
            printer.print_region(region)
        print_location(printer, self)

    @classmethod
    def from_positions(
        cls,
        inputs: Sequence[SSAValue | None],
        output_types: Sequence[Attribute | None],
        properties: dict[str, Attribute],
        attributes: dict[str, Attribute] | None = None,
        regions: Sequence[Region] = (),
    ) -> OnnxOp:
        """Build the op from ONNX-positioned inputs and outputs (None where absent).

        Raises ValueError when the positions do not fit the schema's arities.
        """
        schema = cls.SCHEMA
        in_groups = group_positions(schema.inputs, [v is not None for v in inputs], "inputs")
        out_groups = group_positions(
            schema.outputs, [t is not None for t in output_types], "outputs"
        )
        return cls.build(
            operands=[
                pick(inputs, g, p.arity) for g, p in zip(in_groups, schema.inputs, strict=True)
            ],
            result_types=[
                pick(output_types, g, p.arity)
                for g, p in zip(out_groups, schema.outputs, strict=True)
            ],
            properties=properties,
            attributes=attributes or {},
            regions=list(regions),
        )

    @classmethod
    def parse(cls, parser: Parser) -> OnnxOp:
        schema = cls.SCHEMA
        start = parser.pos
        operands, attrs, result_types = parse_signature(parser, cls.name)
        regions = [_parse_named_region(parser, name) for name in schema.regions]
        known = {a.name for a in schema.attributes}
        try:
            return cls.from_positions(
                operands,
                [None if isinstance(t, NoneType) else t for t in result_types],
                {k: v for k, v in attrs.items() if k in known},
                {k: v for k, v in attrs.items() if k not in known},
                regions,
            )
        except ValueError as err:
            parser.raise_error(f"{cls.name}: {err}", start, parser.pos)

    # ---- verification ---------------------------------------------------

    def verify_(self) -> None:
        schema = self.SCHEMA
        # Inputs and outputs bound to one type variable must agree with each other.
        bound: dict[str, tuple[str, str]] = {}
        self._verify_params(
            schema.inputs, _param_values(self, schema.inputs, "operands"), "input", bound
        )
        self._verify_params(
            schema.outputs, _param_values(self, schema.outputs, "results"), "output", bound
        )
        self._verify_attributes()
        for name, region in self.graph_regions().items():
            verify_graph_region(self, name, region)

    def _verify_params(
        self,
        params: Sequence[Param],
        values: list[list[SSAValue]],
        what: str,
        bound: dict[str, tuple[str, str]],
    ) -> None:
        constraints = self.SCHEMA.type_constraints
        for param, group in zip(params, values, strict=True):
            if param.arity is Arity.VARIADIC and len(group) < param.min_arity:
                raise VerifyException(
                    f"{self.name}: variadic {what} '{param.name}' needs at least "
                    f"{param.min_arity} value(s), got {len(group)}"
                )
            allowed = constraints.get(param.type_param)
            for value in group:
                if not is_checkable(value.type):
                    continue
                spelled = type_string(value.type)
                assert spelled is not None
                if allowed is not None:
                    if spelled not in allowed:
                        raise VerifyException(
                            f"{self.name}: {what} '{param.name}' has type {value.type} "
                            f"({spelled}), but '{param.type_param}' allows only "
                            f"{', '.join(allowed)}"
                        )
                elif param.type_param != spelled:
                    raise VerifyException(
                        f"{self.name}: {what} '{param.name}' has type {value.type} "
                        f"({spelled}), expected {param.type_param}"
                    )
                if allowed is None or not param.homogeneous:
                    continue
                first = bound.get(param.type_param)
                if first is None:
                    bound[param.type_param] = (spelled, f"{what} '{param.name}'")
                elif first[0] != spelled:
                    raise VerifyException(
                        f"{self.name}: {what} '{param.name}' is {spelled} but "
                        f"{first[1]} is {first[0]}; both are bound to type "
                        f"'{param.type_param}'"
                    )

    def _verify_attributes(self) -> None:
        for name in self.attributes:
            # Discardable attributes belong to some dialect (`onnx.name`,
            # `my.tag`); a bare name is a misspelt ONNX attribute.
            if "." not in name:
                known = [a.name for a in self.SCHEMA.attributes]
                close = difflib.get_close_matches(name, known, n=1)
                hint = (
                    f"; did you mean '{close[0]}'?"
                    if close
                    else (f"; allowed: {', '.join(known)}" if known else "; it takes none")
                )
                raise VerifyException(f"{self.name}: unknown attribute '{name}'{hint}")
        for info in self.SCHEMA.attributes:
            attr = self.properties.get(info.name)
            if attr is None:
                if info.required:
                    raise VerifyException(f"{self.name}: missing required attribute '{info.name}'")
                continue
            if not attribute_kind_matches(info.kind, attr):
                raise VerifyException(
                    f"{self.name}: attribute '{info.name}' must be an ONNX {info.kind}, got {attr}"
                )


# ---- shared syntax helpers (also used by onnx.Custom) ----------------------


def trim_absent(values: list[SSAValue | None]) -> list[SSAValue | None]:
    end = len(values)
    while end and values[end - 1] is None:
        end -= 1
    return values[:end]


def _flatten(groups: list[list[SSAValue]], params: Sequence[Param]) -> list[SSAValue | None]:
    out: list[SSAValue | None] = []
    for param, group in zip(params, groups, strict=True):
        if param.arity is Arity.OPTIONAL and not group:
            out.append(None)
        else:
            out.extend(group)
    return out


def pick(items: Sequence, positions: list[int], arity: Arity) -> object:
    """The items at `positions`, shaped for `build`: one value, or a list."""
    chosen = [items[p] for p in positions]
    if arity is Arity.SINGLE:
        return chosen[0]
    return chosen


_NONE = NoneType()


def print_signature(
    printer: Printer,
    inputs: Sequence[SSAValue | None],
    properties: dict[str, Attribute],
    attributes: dict[str, Attribute],
    outputs: Sequence[SSAValue | None],
) -> None:
    """Print `(%a, none, %b) {attrs} : (ta, none, tb) -> (tc, none, td)`."""
    printer.print_string("(")
    printer.print_list(
        inputs, lambda v: printer.print_string("none") if v is None else printer.print_ssa_value(v)
    )
    printer.print_string(")")
    merged = {**properties, **attributes}
    if merged:
        printer.print_string(" ")
        printer.print_attr_dict(merged)
    printer.print_string(" : ")
    printer.print_function_type(
        [_NONE if v is None else v.type for v in inputs],
        [_NONE if v is None else v.type for v in outputs],
    )


def parse_signature(
    parser: Parser, op_name: str
) -> tuple[list[SSAValue | None], dict[str, Attribute], list[Attribute]]:
    """Parse what `print_signature` prints.

    Returns the operands by position (None for `none`), the attribute
    dictionary (the caller splits it into properties and other attributes),
    and the result types by position (`none` for absent outputs).
    """

    def parse_item() -> UnresolvedOperand | None:
        if parser.parse_optional_keyword("none"):
            return None
        return parser.parse_unresolved_operand()

    items = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parse_item)
    attrs = parser.parse_optional_attr_dict()
    parser.parse_punctuation(":")
    pos = parser.pos
    ftype = parser.parse_function_type()
    in_types = list(ftype.inputs.data)
    if len(in_types) != len(items):
        parser.raise_error(
            f"{op_name}: {len(items)} inputs but {len(in_types)} input types", pos, parser.pos
        )
    operands: list[SSAValue | None] = []
    for item, type in zip(items, in_types, strict=True):
        if item is None:
            if not isinstance(type, NoneType):
                parser.raise_error(f"{op_name}: an absent input must have type 'none'", pos)
            operands.append(None)
        else:
            operands.append(parser.resolve_operand(item, type))
    return operands, attrs, list(ftype.outputs.data)


def _parse_named_region(parser: Parser, name: str) -> Region:
    parser.parse_keyword(name, " (graph attribute of this op)")
    return parser.parse_region()


def print_location(printer: Printer, op: IRDLOperation) -> None:
    """Print the node's location unless the printer prints every location anyway."""
    if not printer.print_debuginfo and not isinstance(op.location, UnknownLoc):
        printer.print_string(" ")
        printer.print_attribute(op.location)


def make_graph_block(arg_types: Sequence[Attribute]) -> Block:
    """An empty block for a graph attribute, one argument per graph input."""
    return Block(arg_types=arg_types)
