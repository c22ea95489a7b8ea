"""The shared base of every torch-dialect op: schema tables, syntax and verifier.

Generated op classes (`generated_ops.py`) only declare their operands,
results and properties, and carry the ATen schema they mirror as a `SCHEMA`
table. Everything that follows from the table lives here once.

An ATen argument is either a tensor or a scalar. Tensor arguments
(`Tensor`, `Tensor?`, `Tensor[]`, `Tensor?[]`) are operands; scalar
arguments (`int`, `SymInt[]`, `Scalar`, `ScalarType?`, ...) are properties
named as in the schema, left out where the program passed the default. A
scalar that only the run knows (a `SymInt` such as a sequence length) is a
value of type `i64` (`f64` for a `SymFloat`, `i1` for a `SymBool`) in the
op's trailing `symbols` operands; the property holds `#torch.sym<k>` where the
k-th symbol goes. The printed form puts the symbol there instead:

    %y = torch.aten.convolution(%x, %w, none) {stride = [2, 2], padding = [3, 3],
           dilation = [1, 1], transposed = false, output_padding = [0, 0], groups = 1}
           : (tensor<1x3x8x8xf32>, tensor<4x3x7x7xf32>, none) -> tensor<1x4x4x4xf32>
    %v = torch.aten.view(%h) {size = [%s, 768]} : (tensor<?x768xf32>, i64) -> tensor<?x768xf32>

Tensor operands come first, by schema position (`none` for an absent
optional one, `[...]` for a list); the types after the colon are those of
the tensor operands, then of the symbols in the order they appear. The
op's location (the FX node and its Python source line) follows.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    Float16Type,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    NoneAttr,
    NoneType,
    Signedness,
    StringAttr,
    TensorType,
    UnknownLoc,
    f64,
    i1,
    i64,
)
from xdsl.ir import Attribute, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import IRDLOperation, irdl_attr_definition, param_def
from xdsl.parser import AttrParser, Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

TENSOR_KINDS = ("Tensor", "Tensor?", "Tensor[]", "Tensor?[]")
"""Argument types that are operands; every other argument type is a scalar property."""

SCALAR_BASES = (
    "int",
    "SymInt",
    "float",
    "SymFloat",
    "bool",
    "SymBool",
    "Scalar",
    "str",
    "ScalarType",
    "Layout",
    "Device",
    "MemoryFormat",
    "Generator",
)
"""The scalar argument types the dialect holds; each may be a list (`[]`) and optional (`?`)."""

ELEMENT_TYPES: dict[str, Attribute] = {
    "ui8": IntegerType(8, Signedness.UNSIGNED),
    "i8": IntegerType(8),
    "i16": IntegerType(16),
    "i32": IntegerType(32),
    "i64": i64,
    "f16": Float16Type(),
    "f32": Float32Type(),
    "f64": f64,
    "i1": i1,
    "bf16": BFloat16Type(),
}
"""Element types by name, as the generated schemas write a `ScalarType` default."""

SYMBOL_TYPES: dict[str, Attribute] = {"SymInt": i64, "SymFloat": f64, "SymBool": i1}
"""The value type of a symbolic scalar, by its ATen type."""


@dataclass(frozen=True)
class Arg:
    """One argument of an ATen schema.

    `type` is ATen's spelling (`Tensor?`, `SymInt[]`, `ScalarType?` ...);
    `field` the Python name of its accessor (the schema name, escaped where it
    would clash); `default` the schema default as a Python value, `REQUIRED`
    when there is none.
    """

    name: str
    field: str
    type: str
    default: object = None
    required: bool = True
    kwarg_only: bool = False

    @property
    def is_tensor(self) -> bool:
        return self.type in TENSOR_KINDS

    @property
    def optional(self) -> bool:
        return self.type.endswith("?")

    @property
    def is_list(self) -> bool:
        return self.type.rstrip("?").endswith("]")

    @property
    def base(self) -> str:
        """The element type: `SymInt` for `SymInt[]?`."""
        return self.type.rstrip("?").removesuffix("[]").rstrip("?")


@dataclass(frozen=True)
class Ret:
    """One return of an ATen schema: `Tensor`, `Tensor[]`, or a scalar (`SymInt`, `Scalar` ...)."""

    name: str
    field: str
    type: str


@dataclass(frozen=True)
class OpSchema:
    """What an ATen schema says of an op: `aten::add.Tensor(Tensor self, ...) -> Tensor`."""

    namespace: str
    op: str
    overload: str
    args: tuple[Arg, ...]
    returns: tuple[Ret, ...]

    @property
    def qualified_name(self) -> str:
        """`aten::add.Tensor`, as torch spells the overload."""
        overload = f".{self.overload}" if self.overload else ""
        return f"{self.namespace}::{self.op}{overload}"

    def arg(self, name: str) -> Arg | None:
        for arg in self.args:
            if arg.name == name:
                return arg
        return None

    @property
    def tensor_args(self) -> tuple[Arg, ...]:
        return tuple(a for a in self.args if a.is_tensor)

    @property
    def scalar_args(self) -> tuple[Arg, ...]:
        return tuple(a for a in self.args if not a.is_tensor)


@irdl_attr_definition
class SymAttr(ParametrizedAttribute):
    """Where a property holds a value only the run knows: the index of the op's symbol operand."""

    name = "torch.sym"

    index: IntegerAttr = param_def(IntegerAttr)

    def __init__(self, index: int) -> None:
        super().__init__(IntegerAttr(index, i64))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<")
        index = parser.parse_integer(allow_negative=False)
        parser.parse_punctuation(">")
        return (IntegerAttr(index, i64),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.index.value.data}>")


# ---- scalar values: Python <-> attribute ------------------------------------------------


def scalar_attribute(kind: str, value: object) -> Attribute:
    """How the dialect stores one scalar (not a list) of ATen type `kind` (its base type)."""
    if value is None:
        return NoneAttr()
    if isinstance(value, Attribute):  # a dtype given as its element type, or a SymAttr
        return value
    if kind in ("bool", "SymBool") or isinstance(value, bool):
        return IntegerAttr(int(bool(value)), i1)
    if kind in ("int", "SymInt"):
        if not isinstance(value, int):
            raise ValueError(f"expected an int, got {value!r}")
        return IntegerAttr(value, i64)
    if kind in ("float", "SymFloat"):
        if not isinstance(value, int | float):
            raise ValueError(f"expected a float, got {value!r}")
        return FloatAttr(float(value), f64)
    if kind == "Scalar":
        if isinstance(value, int):
            return IntegerAttr(value, i64)
        if isinstance(value, float):
            return FloatAttr(value, f64)
        raise ValueError(f"expected a number, got {value!r}")
    if isinstance(value, str):
        return StringAttr(value)
    raise ValueError(f"cannot store {value!r} as an ATen {kind}")


def attribute_value(attr: Attribute, symbols: Sequence[SSAValue] = ()) -> object:
    """The Python value of a stored scalar argument; `#torch.sym<k>` gives the k-th symbol."""
    if isinstance(attr, NoneAttr):
        return None
    if isinstance(attr, SymAttr):
        return symbols[attr.index.value.data]
    if isinstance(attr, IntegerAttr):
        if isinstance(attr.type, IntegerType) and attr.type.width.data == 1:
            return bool(attr.value.data)
        return attr.value.data
    if isinstance(attr, FloatAttr):
        return attr.value.data
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, ArrayAttr):
        return [attribute_value(a, symbols) for a in attr.data]
    return attr  # a ScalarType: the element type itself


def _kind_matches(arg: Arg, attr: Attribute, symbols: int) -> str | None:
    """Why `attr` cannot hold `arg`, or None when it can."""
    if isinstance(attr, NoneAttr):
        return None if arg.optional else "is not optional"
    if arg.is_list:
        if not isinstance(attr, ArrayAttr):
            return "must be a list"
        for item in attr.data:
            why = _scalar_matches(arg, item, symbols)
            if why:
                return why
        return None
    return _scalar_matches(arg, attr, symbols)


def _scalar_matches(arg: Arg, attr: Attribute, symbols: int) -> str | None:
    base = arg.base
    if isinstance(attr, SymAttr):
        if base not in ("SymInt", "SymFloat", "SymBool", "Scalar"):
            return f"cannot be a run-time value (it is an ATen {arg.type})"
        if attr.index.value.data >= symbols:
            return f"refers to symbol {attr.index.value.data}, but the op has {symbols}"
        return None
    if isinstance(attr, NoneAttr):
        return None if arg.type.rstrip("[]").endswith("?") or arg.optional else "is not optional"
    ok = {
        "int": lambda a: isinstance(a, IntegerAttr),
        "SymInt": lambda a: isinstance(a, IntegerAttr),
        "bool": lambda a: isinstance(a, IntegerAttr),
        "SymBool": lambda a: isinstance(a, IntegerAttr),
        "float": lambda a: isinstance(a, FloatAttr),
        "SymFloat": lambda a: isinstance(a, FloatAttr),
        "Scalar": lambda a: isinstance(a, IntegerAttr | FloatAttr),
        "ScalarType": lambda a: isinstance(a, TypeAttribute),
    }.get(base, lambda a: isinstance(a, StringAttr))
    return None if ok(attr) else f"must be an ATen {arg.type}, got {attr}"


# ---- the op base class --------------------------------------------------------------------


class TorchOp(IRDLOperation):
    """Base class of all generated torch ops."""

    SCHEMA: ClassVar[OpSchema]

    # ---- accessors ------------------------------------------------------

    def arg(self, name: str) -> object:
        """The value of argument `name`: its operand(s) for a tensor, else a Python value.

        A scalar argument the op does not carry gives its schema default; one
        only the run knows gives its symbol (an SSA value); a `ScalarType`
        gives the element type (`f32`, `i64` ...).
        """
        info = self.SCHEMA.arg(name)
        if info is None:
            raise KeyError(f"{self.name} has no argument '{name}'")
        if info.is_tensor:
            return _tensor_arg(self, info)  # a Tensor?[] keeps None where an entry is absent
        attr = self.properties.get(name)
        if attr is None:
            if info.base == "ScalarType" and isinstance(info.default, str):
                return ELEMENT_TYPES[info.default]
            return info.default
        return attribute_value(attr, tuple(self.symbols))  # type: ignore[attr-defined]

    def tensor_args(self) -> list[SSAValue | None | list[SSAValue | None]]:
        """The tensor arguments by schema position: a value, None, or a list of them."""
        return [_tensor_arg(self, a) for a in self.SCHEMA.tensor_args]

    def scalar_properties(self) -> dict[str, Attribute]:
        """The scalar arguments the op carries (not the defaults), by name."""
        names = {a.name for a in self.SCHEMA.scalar_args}
        return {k: v for k, v in self.properties.items() if k in names}

    # ---- building ---------------------------------------------------------

    @classmethod
    def from_args(
        cls,
        values: dict[str, object],
        result_types: Sequence[Attribute],
        attributes: dict[str, Attribute] | None = None,
    ) -> TorchOp:
        """Build the op from its arguments by name, as Python values or SSA values.

        Tensor arguments take a value (None where an optional one is absent)
        or a list of them; scalar arguments take Python values, where an SSA
        value marks a symbol (`SymInt` ...) only the run knows. Absent scalar
        arguments take their defaults. Raises ValueError when they do not fit.
        """
        schema = cls.SCHEMA
        names = [a.name for a in schema.args]
        unknown = sorted(set(values) - set(names))
        if unknown:
            close = difflib.get_close_matches(unknown[0], names, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise ValueError(f"unknown argument '{unknown[0]}'{hint}")
        operands: list[object] = []
        symbols: list[SSAValue] = []
        properties: dict[str, Attribute] = {}
        for arg in schema.args:
            present = arg.name in values
            value = values.get(arg.name)
            if arg.is_tensor:
                if arg.type == "Tensor":
                    if not isinstance(value, SSAValue):
                        raise ValueError(f"argument '{arg.name}' needs a tensor")
                    operands.append(value)
                elif arg.type == "Tensor?":
                    operands.append([] if value is None else [value])
                else:
                    items = list(value or ())  # type: ignore[call-overload]
                    if arg.type == "Tensor[]" and any(v is None for v in items):
                        raise ValueError(f"argument '{arg.name}' cannot hold none")
                    operands.append(items)
                continue
            if not present:
                continue  # a missing required argument is the verifier's to report
            properties[arg.name] = _store(arg, value, symbols)
        # A Tensor?[] list keeps its absent entries as positions in a property.
        for arg in schema.tensor_args:
            if arg.type == "Tensor?[]":
                items = list(values.get(arg.name) or ())  # type: ignore[call-overload]
                properties[f"{arg.name}_present"] = ArrayAttr(
                    [IntegerAttr(int(v is not None), i1) for v in items]
                )
        flat = [
            [v for v in group if v is not None] if isinstance(group, list) else group
            for group in operands
        ]
        results: list[object] = list(result_types)
        if len(schema.returns) == 1 and schema.returns[0].type == "Tensor[]":
            results = [list(result_types)]  # one variadic group
        return cls.build(
            operands=[*flat, symbols],
            result_types=results,
            properties=properties,
            attributes=attributes or {},
        )

    # ---- syntax ---------------------------------------------------------

    def print(self, printer: Printer) -> None:
        types: list[Attribute] = []

        def print_tensor(v: SSAValue | None) -> None:
            if v is None:
                printer.print_string("none")
                types.append(NoneType())
            else:
                printer.print_ssa_value(v)
                types.append(v.type)

        printer.print_string("(")
        for i, group in enumerate(self.tensor_args()):
            if i:
                printer.print_string(", ")
            if isinstance(group, list):
                printer.print_string("[")
                printer.print_list(group, print_tensor)
                printer.print_string("]")
            else:
                print_tensor(group)
        printer.print_string(")")
        symbols = tuple(self.symbols)  # type: ignore[attr-defined]
        props = self.scalar_properties()
        order = [a.name for a in self.SCHEMA.scalar_args if a.name in props]
        if order:
            printer.print_string(" {")
            for i, name in enumerate(order):
                if i:
                    printer.print_string(", ")
                printer.print_string(f"{name} = ")
                _print_value(printer, props[name], symbols)
            printer.print_string("}")
        others = {k: v for k, v in self.attributes.items()}
        if others:
            printer.print_op_attributes(others, print_keyword=True)
        printer.print_string(" : ")
        printer.print_function_type(
            [*types, *(s.type for s in symbols)], [r.type for r in self.results]
        )
        if not printer.print_debuginfo and not isinstance(self.location, UnknownLoc):
            printer.print_string(" ")
            printer.print_attribute(self.location)

    @classmethod
    def parse(cls, parser: Parser) -> TorchOp:
        schema = cls.SCHEMA
        start = parser.pos
        tensor_items: list[UnresolvedOperand | None | list[UnresolvedOperand | None]] = []

        def parse_tensor() -> UnresolvedOperand | None:
            if parser.parse_optional_keyword("none"):
                return None
            return parser.parse_unresolved_operand()

        def parse_group() -> UnresolvedOperand | None | list[UnresolvedOperand | None]:
            if parser.parse_optional_punctuation("["):
                if parser.parse_optional_punctuation("]"):
                    return []
                items = [parse_tensor()]
                while parser.parse_optional_punctuation(","):
                    items.append(parse_tensor())
                parser.parse_punctuation("]")
                return items
            return parse_tensor()

        tensor_items = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parse_group)
        raw: dict[str, object] = {}
        symbol_refs: list[UnresolvedOperand] = []
        if parser.parse_optional_punctuation("{"):
            while True:
                name_pos = parser.pos
                name = parser.parse_identifier()
                if name in raw:
                    parser.raise_error(f"{cls.name}: argument '{name}' given twice", name_pos)
                parser.parse_punctuation("=")
                raw[name] = _parse_value(parser, symbol_refs)
                if not parser.parse_optional_punctuation(","):
                    break
            parser.parse_punctuation("}")
        attributes = parser.parse_optional_attr_dict_with_keyword()
        parser.parse_punctuation(":")
        pos = parser.pos
        ftype = parser.parse_function_type()
        flat: list[UnresolvedOperand | None] = []
        for group in tensor_items:
            flat.extend(group if isinstance(group, list) else [group])
        in_types = list(ftype.inputs.data)
        if len(in_types) != len(flat) + len(symbol_refs):
            parser.raise_error(
                f"{cls.name}: {len(flat) + len(symbol_refs)} operands "
                f"but {len(in_types)} operand types",
                pos,
                parser.pos,
            )
        resolved: list[SSAValue | None] = []
        for item, type in zip(flat, in_types, strict=False):
            if item is None:
                if not isinstance(type, NoneType):
                    parser.raise_error(f"{cls.name}: an absent tensor must have type 'none'", pos)
                resolved.append(None)
            else:
                resolved.append(parser.resolve_operand(item, type))
        symbols = [
            parser.resolve_operand(ref, type)
            for ref, type in zip(symbol_refs, in_types[len(flat) :], strict=True)
        ]
        tensor_args = schema.tensor_args
        if len(tensor_items) != len(tensor_args):
            parser.raise_error(
                f"{cls.name}: {len(tensor_items)} tensor arguments, "
                f"expected {len(tensor_args)} ({', '.join(a.name for a in tensor_args)})",
                start,
                parser.pos,
            )
        values: dict[str, object] = {}
        it = iter(resolved)
        for arg, group in zip(tensor_args, tensor_items, strict=True):
            if isinstance(group, list):
                values[arg.name] = [next(it) for _ in group]
            else:
                values[arg.name] = next(it)
        for name, value in raw.items():
            values[name] = _bind_symbols(value, symbols)
        try:
            op = cls.from_args(values, list(ftype.outputs.data), _plain(attributes))
        except ValueError as err:
            parser.raise_error(f"{cls.name}: {err}", start, parser.pos)
        return op

    # ---- verification ---------------------------------------------------

    def verify_(self) -> None:
        schema = self.SCHEMA
        symbols = len(self.symbols)  # type: ignore[attr-defined]
        for value in self.symbols:  # type: ignore[attr-defined]
            if value.type not in (i64, f64, i1):
                raise VerifyException(
                    f"{self.name}: a symbol must be i64, f64 or i1, got {value.type}"
                )
        known = {a.name for a in schema.scalar_args} | {
            f"{a.name}_present" for a in schema.tensor_args if a.type == "Tensor?[]"
        }
        for name in self.properties:
            if name == "operandSegmentSizes" or name in known:
                continue
            close = difflib.get_close_matches(name, sorted(known), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise VerifyException(f"{self.name}: unknown argument '{name}'{hint}")
        for arg in schema.scalar_args:
            attr = self.properties.get(arg.name)
            if attr is None:
                if arg.required:
                    raise VerifyException(f"{self.name}: missing required argument '{arg.name}'")
                continue
            why = _kind_matches(arg, attr, symbols)
            if why:
                raise VerifyException(f"{self.name}: argument '{arg.name}' {why}")
        for arg in schema.tensor_args:
            group = getattr(self, arg.field)
            values = list(group) if arg.type.endswith("[]") else [group]
            for value in values:
                if value is not None and not isinstance(value.type, TensorType):
                    raise VerifyException(
                        f"{self.name}: argument '{arg.name}' must be a ranked tensor, "
                        f"got {value.type}"
                    )
            if arg.type == "Tensor?[]":
                present = self.properties.get(f"{arg.name}_present")
                count = (
                    sum(attribute_value(a) for a in present.data)  # type: ignore[misc]
                    if isinstance(present, ArrayAttr)
                    else len(values)
                )
                if count != len(values):
                    raise VerifyException(
                        f"{self.name}: argument '{arg.name}' marks {count} entries present "
                        f"but has {len(values)}"
                    )


def _tensor_arg(op: TorchOp, arg: Arg) -> SSAValue | None | list[SSAValue | None]:
    group = getattr(op, arg.field)
    if arg.type == "Tensor":
        return group
    if arg.type == "Tensor?":
        return group
    values = list(group)
    if arg.type == "Tensor[]":
        return values
    present = op.properties.get(f"{arg.name}_present")
    if not isinstance(present, ArrayAttr):
        return values  # type: ignore[return-value]
    it = iter(values)
    return [next(it) if attribute_value(p) else None for p in present.data]


def _store(arg: Arg, value: object, symbols: list[SSAValue]) -> Attribute:
    """The property for scalar argument `arg`; SSA values become symbols."""

    def one(v: object) -> Attribute:
        if isinstance(v, SSAValue):
            symbols.append(v)
            return SymAttr(len(symbols) - 1)
        try:
            return scalar_attribute(arg.base, v)
        except ValueError:
            # Held as it was written: the verifier names the argument and its kind.
            return scalar_attribute("str" if isinstance(v, str) else "Scalar", v)

    if value is None:
        return NoneAttr()
    if arg.is_list:
        if not isinstance(value, list | tuple):
            raise ValueError(f"argument '{arg.name}' needs a list, got {value!r}")
        return ArrayAttr([one(v) for v in value])
    return one(value)


# ---- the printed values -----------------------------------------------------------------


def _print_value(printer: Printer, attr: Attribute, symbols: Sequence[SSAValue]) -> None:
    if isinstance(attr, ArrayAttr):
        printer.print_string("[")
        printer.print_list(attr.data, lambda a: _print_value(printer, a, symbols))
        printer.print_string("]")
    elif isinstance(attr, SymAttr):
        index = attr.index.value.data
        if index < len(symbols):
            printer.print_ssa_value(symbols[index])
        else:
            printer.print_attribute(attr)
    elif isinstance(attr, NoneAttr):
        printer.print_string("none")
    elif isinstance(attr, IntegerAttr) and isinstance(attr.type, IntegerType):
        if attr.type.width.data == 1:
            printer.print_string("true" if attr.value.data else "false")
        else:
            printer.print_string(str(attr.value.data))
    elif isinstance(attr, FloatAttr):
        printer.print_string(float_text(attr.value.data))
    else:
        printer.print_attribute(attr)


def float_text(value: float) -> str:
    """A float as the parser reads it back exactly: always with a point; `inf`, `nan` by name."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    text = repr(value)
    if "." not in text:
        mantissa, _, exponent = text.partition("e")
        text = f"{mantissa}.0" + (f"e{exponent}" if exponent else "")
    return text


@dataclass(frozen=True)
class _SymRef:
    index: int


def _parse_value(parser: Parser, refs: list[UnresolvedOperand]) -> object:
    """One printed argument value: a number, bool, string, type, none, symbol or list."""
    if parser.parse_optional_punctuation("["):
        items: list[object] = []
        if not parser.parse_optional_punctuation("]"):
            items.append(_parse_value(parser, refs))
            while parser.parse_optional_punctuation(","):
                items.append(_parse_value(parser, refs))
            parser.parse_punctuation("]")
        return items
    if parser.parse_optional_keyword("none"):
        return None
    if parser.parse_optional_keyword("true"):
        return True
    if parser.parse_optional_keyword("false"):
        return False
    if parser.parse_optional_keyword("nan"):
        return math.nan
    if parser.parse_optional_keyword("inf"):
        return math.inf
    ref = parser.parse_optional_unresolved_operand()
    if ref is not None:
        refs.append(ref)
        return _SymRef(len(refs) - 1)
    if parser.parse_optional_punctuation("-"):
        if parser.parse_optional_keyword("inf"):
            return -math.inf
        number = parser.parse_number()
        return -number
    number = parser.parse_optional_number()
    if number is not None:
        return number
    text = parser.parse_optional_str_literal()
    if text is not None:
        return text
    return parser.parse_attribute()  # a ScalarType, as its element type


def _bind_symbols(value: object, symbols: Sequence[SSAValue]) -> object:
    if isinstance(value, _SymRef):
        return symbols[value.index]
    if isinstance(value, list):
        return [_bind_symbols(v, symbols) for v in value]
    return value


def _plain(attrs: object) -> dict[str, Attribute]:
    if attrs is None:
        return {}
    return dict(attrs.data)  # type: ignore[attr-defined]


__all__ = [
    "SCALAR_BASES",
    "SYMBOL_TYPES",
    "TENSOR_KINDS",
    "Arg",
    "OpSchema",
    "Ret",
    "SymAttr",
    "TorchOp",
    "attribute_value",
    "float_text",
    "scalar_attribute",
]
