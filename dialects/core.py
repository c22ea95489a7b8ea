"""The core dialect: a small, framework-neutral set of tensor ops with exact semantics.

Every framework dialect lowers to core, and the kernel level lowers from it,
so its ops say everything explicitly:

- no implicit broadcasting: operands of elementwise ops have the same type,
  and `core.broadcast` expands a tensor, naming the result dims it maps to;
- explicit padding (`pad_low`/`pad_high` per spatial dim) and layout (`NCHW`
  style: batch, channels, spatial dims) for conv and pooling; ceil-mode and
  include-pad are resolved into pads and divisors before core;
- an explicit accumulation type for matmul and conv (`acc`);
- indices are already non-negative and in range where an op takes them; a
  value that arrives at run time and must be in range first passes through
  `core.check`, which fails the run otherwise;
- shapes are static where known and `?` otherwise; shape computations are
  ordinary ops on `tensor<Nxi64>` values (`core.shape_of`, slicing,
  arithmetic), and ops whose result shape depends on data take it as an
  operand.

Syntax of every op (the keyword is the op's `fn`/`kind`/`pred` where it has one):

    %y = core.binary add(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t = core.transpose(%x) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>

The executable specification of every op is the numpy interpreter in
`rung.dialects.core_eval`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    Float32Type,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnrankedTensorType,
    i64,
)
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, Region, SSAValue, TypeAttribute
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import IsTerminator, Pure, RecursiveMemoryEffect
from xdsl.utils.exceptions import VerifyException

from rung.dialects.onnx.base import print_location
from rung.dialects.wrapper_type import WrapperType

I1 = IntegerType(1)


def _shape(t: Attribute) -> tuple[int, ...] | None:
    if isinstance(t, TensorType):
        return tuple(t.get_shape())
    return None


def _element(t: Attribute) -> Attribute | None:
    if isinstance(t, TensorType | UnrankedTensorType):
        return t.element_type
    return None


def ranked_tensor(element: Attribute, shape: Sequence[int]) -> TensorType[Attribute]:
    """`tensor<shape x element>` (`?` dims as DYNAMIC_INDEX), made once per distinct type:
    xDSL checks the shape's type on every `TensorType(...)`, and importing or lowering a
    large model makes tens of thousands of types of a few hundred kinds."""
    return _ranked_tensor(element, tuple(shape))


@functools.lru_cache(maxsize=1 << 14)
def _ranked_tensor(element: Attribute, shape: tuple[int, ...]) -> TensorType[Attribute]:
    return TensorType(element, shape)


def ints_of(attr: Attribute | None) -> tuple[int, ...]:
    """The numbers of an `array<i64: ...>` property (none when it is absent)."""
    if attr is None:
        return ()
    hit = _DECODED.get(id(attr))
    if hit is not None and hit[0] is attr:
        return hit[1]
    assert isinstance(attr, DenseArrayBase)
    value = tuple(int(v) for v in attr.get_values())
    if len(_DECODED) >= 1 << 16:
        _DECODED.clear()
    _DECODED[id(attr)] = (attr, value)
    return value


_DECODED: dict[int, tuple[Attribute, tuple[int, ...]]] = {}
"""The numbers of the `array<i64>` attributes decoded so far, by identity: attributes are
immutable, `ints` makes one per distinct list, and the passes ask a loop's bounds many
times, so each is decoded once. Keyed by `id` (an attribute's hash walks its bytes), with
the attribute kept, so that its id is not reused while it is in the table."""


def ints(values: Sequence[int]) -> DenseArrayBase:
    """An `array<i64: ...>` property value."""
    return _ints(tuple(int(v) for v in values))


@functools.lru_cache(maxsize=1 << 14)
def _ints(values: tuple[int, ...]) -> DenseArrayBase:
    """Made once per distinct tuple (see `_ints_of`)."""
    return DenseArrayBase.from_list(i64, list(values))


def _dims_compatible(a: int, b: int) -> bool:
    return a < 0 or b < 0 or a == b


class CoreOp(IRDLOperation):
    """Base of core ops: one uniform syntax, `core.op kw(%a, %b) {attrs} : (...) -> ...`."""

    KEYWORD: ClassVar[str | None] = None
    """The property printed as a bare keyword after the op name (e.g. `fn`)."""
    KEYWORDS: ClassVar[tuple[str, ...]] = ()
    """The values that keyword may take."""
    REGIONS: ClassVar[tuple[str, ...]] = ()

    def print(self, printer: Printer) -> None:
        props = dict(self.properties)
        if self.KEYWORD is not None:
            printer.print_string(" ")
            printer.print_string(props.pop(self.KEYWORD).data)  # type: ignore[attr-defined]
        printer.print_string("(")
        printer.print_list(self.operands, printer.print_ssa_value)
        printer.print_string(")")
        merged = {**props, **self.attributes}
        if merged:
            printer.print_string(" ")
            printer.print_attr_dict(merged)
        printer.print_string(" : ")
        printer.print_function_type(self.operand_types, self.result_types)
        for name, region in zip(self.REGIONS, self.regions, strict=True):
            printer.print_string(f" {name} ")
            printer.print_region(region)
        print_location(printer, self)

    @classmethod
    def parse(cls, parser: Parser) -> CoreOp:
        props: dict[str, Attribute] = {}
        if cls.KEYWORD is not None:
            pos = parser.pos
            word = parser.parse_identifier(f" ({cls.KEYWORD} of {cls.name})")
            if word not in cls.KEYWORDS:
                parser.raise_error(
                    f"{cls.name}: unknown {cls.KEYWORD} '{word}'; expected one of "
                    f"{', '.join(cls.KEYWORDS)}",
                    pos,
                    parser.pos,
                )
            props[cls.KEYWORD] = StringAttr(word)
        names = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_unresolved_operand
        )
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        ftype = parser.parse_function_type()
        if len(ftype.inputs.data) != len(names):
            parser.raise_error(
                f"{cls.name}: {len(names)} operands but {len(ftype.inputs.data)} types", pos
            )
        operands = parser.resolve_operands(names, list(ftype.inputs.data), pos)
        regions: list[Region] = []
        for name in cls.REGIONS:
            parser.parse_keyword(name)
            regions.append(parser.parse_region())
        prop_names = set(cls.get_irdl_definition().properties)
        for key in list(attrs):
            if key in prop_names:
                props[key] = attrs.pop(key)
        return cls.create(
            operands=operands,
            result_types=list(ftype.outputs.data),
            properties=props,
            attributes=attrs,
            regions=regions,
        )


def _same_types(op: IRDLOperation, values: Sequence[SSAValue], what: str) -> None:
    first = values[0].type
    for v in values[1:]:
        if v.type != first:
            raise VerifyException(
                f"{op.name}: {what} must have the same type (core never broadcasts "
                f"implicitly; use core.broadcast), got {first} and {v.type}"
            )


def _same_shape(op: IRDLOperation, a: Attribute, b: Attribute, what: str) -> None:
    sa, sb = _shape(a), _shape(b)
    if sa is None or sb is None:
        return
    if len(sa) != len(sb) or not all(_dims_compatible(x, y) for x, y in zip(sa, sb, strict=True)):
        raise VerifyException(f"{op.name}: {what}: shapes {a} and {b} differ")


# ---- constants and shapes ---------------------------------------------------------


@irdl_op_definition
class ConstantOp(CoreOp):
    """A constant tensor: `value` is a dense, resource or string-tensor attribute."""

    name = "core.constant"

    value = prop_def(AnyAttr())
    result = result_def()
    traits = traits_def(Pure())

    @staticmethod
    def from_array(array: np.ndarray, module: ModuleOp, hint: str = "cst") -> ConstantOp:
        """A constant holding `array`: inline when small, else a resource blob of `module`."""
        from .constants import constant_attr

        attr = constant_attr(np.asarray(array), module, hint)
        return ConstantOp.create(properties={"value": attr}, result_types=[attr.type])

    def array(self, module: ModuleOp | None = None) -> np.ndarray:
        """The constant's data (resource blobs are looked up in `module`, by default the
        module that holds this op)."""
        from .constants import constant_value
        from .resources import owning_module

        return constant_value(self.value, module or owning_module(self))

    def verify_(self) -> None:
        value_type = getattr(self.value, "type", None)
        if not isinstance(self.value, DenseIntOrFPElementsAttr | DenseResourceAttr) and not (
            value_type is not None and hasattr(self.value, "values")
        ):
            raise VerifyException(f"core.constant: unsupported value {self.value}")
        if value_type != self.result.type:
            raise VerifyException(
                f"core.constant: value has type {value_type} but the result is {self.result.type}"
            )


@irdl_op_definition
class IotaOp(CoreOp):
    """`result[i0, …] = i_dim`: index values along `dim`. Dynamic dims come as operands."""

    name = "core.iota"

    dynamic_dims = var_operand_def()
    dim = prop_def(IntegerAttr)
    result = result_def()
    traits = traits_def(Pure())


@irdl_op_definition
class ShapeOfOp(CoreOp):
    """The shape of a tensor as a 1-D `tensor<rank x i64>`."""

    name = "core.shape_of"

    input = operand_def()
    result = result_def()
    traits = traits_def(Pure())

    def verify_(self) -> None:
        shape = _shape(self.input.type)
        out = _shape(self.result.type)
        if out is None or len(out) != 1 or _element(self.result.type) != i64:
            raise VerifyException("core.shape_of: the result must be a 1-D tensor of i64")
        if shape is not None and not _dims_compatible(out[0], len(shape)):
            raise VerifyException(
                f"core.shape_of: input has rank {len(shape)} but result has {out[0]} elements"
            )


# ---- elementwise --------------------------------------------------------------------

UNARY_FNS = (
    "neg",
    "abs",
    "exp",
    "log",
    "sqrt",
    "rsqrt",
    "reciprocal",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "erf",
    "sigmoid",
    "floor",
    "ceil",
    "round",
    "sign",
    "not",
    "bitwise_not",
    "isnan",
    "isinf",
    "isposinf",
    "isneginf",
    "lower",
    "upper",
)
PREDICATE_FNS = ("isnan", "isinf", "isposinf", "isneginf")


@irdl_op_definition
class UnaryOp(CoreOp):
    """An elementwise function of one tensor.

    `round` rounds half to even; `not` is logical (i1); `bitwise_not` is on
    integers; the `is*` predicates return i1 tensors of the input's shape;
    `lower` and `upper` change the case of the ASCII letters of strings (other
    characters stay as they are).
    """

    name = "core.unary"
    KEYWORD: ClassVar[str | None] = "fn"
    KEYWORDS: ClassVar[tuple[str, ...]] = UNARY_FNS

    fn = prop_def(StringAttr)
    input = operand_def()
    result = result_def()
    traits = traits_def(Pure())

    def verify_(self) -> None:
        if self.fn.data in PREDICATE_FNS:
            _same_shape(self, self.input.type, self.result.type, "result")
            if _element(self.result.type) != I1:
                raise VerifyException(f"core.unary {self.fn.data}: the result must be of i1")
        elif self.input.type != self.result.type:
            raise VerifyException(
                f"core.unary {self.fn.data}: result type {self.result.type} differs from "
                f"input type {self.input.type}"
            )


BINARY_FNS = (
    "add",
    "sub",
    "mul",
    "div",
    "rem",
    "mod",
    "pow",
    "max",
    "min",
    "atan2",
    "and",
    "or",
    "xor",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "shift_left",
    "shift_right",
)


@irdl_op_definition
class BinaryOp(CoreOp):
    """An elementwise function of two tensors of the same type.

    Integer `div` truncates toward zero; `rem` has the dividend's sign (C's
    fmod); `mod` has the divisor's sign (floor modulo). `and`/`or`/`xor` are
    logical on i1. `pow` may take an exponent of another type: then only the
    shapes must agree.
    """

    name = "core.binary"
    KEYWORD: ClassVar[str | None] = "fn"
    KEYWORDS: ClassVar[tuple[str, ...]] = BINARY_FNS

    fn = prop_def(StringAttr)
    lhs = operand_def()
    rhs = operand_def()
    result = result_def()
    traits = traits_def(Pure())

    def verify_(self) -> None:
        if self.fn.data == "pow":
            _same_shape(self, self.lhs.type, self.rhs.type, "operands")
        else:
            _same_types(self, [self.lhs, self.rhs], "operands")
        if self.result.type != self.lhs.type:
            raise VerifyException(
                f"core.binary {self.fn.data}: result type {self.result.type} differs from "
                f"operand type {self.lhs.type}"
            )


COMPARE_PREDS = ("eq", "ne", "lt", "le", "gt", "ge")


@irdl_op_definition
class CompareOp(CoreOp):
    """Elementwise comparison of two tensors of the same type, giving i1."""

    name = "core.compare"
    KEYWORD: ClassVar[str | None] = "pred"
    KEYWORDS: ClassVar[tuple[str, ...]] = COMPARE_PREDS

    pred = prop_def(StringAttr)
    lhs = operand_def()
    rhs = operand_def()
    result = result_def()
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _same_types(self, [self.lhs, self.rhs], "operands")
        _same_shape(self, self.lhs.type, self.result.type, "result")
        if _element(self.result.type) != I1:
            raise VerifyException("core.compare: the result must be of i1")


@irdl_op_definition
class SelectOp(CoreOp):
    """`cond ? on_true : on_false`, elementwise; all three have the same shape."""

    name = "core.select"

    cond = operand_def()
    on_true = operand_def()
    on_false = operand_def()
    result = result_def()
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _same_types(self, [self.on_true, self.on_false], "the two choices")
        _same_shape(self, self.cond.type, self.on_true.type, "condition")
        if _element(self.cond.type) != I1:
            raise VerifyException("core.select: the condition must be of i1")
        if self.result.type != self.on_true.type:
            raise VerifyException("core.select: the result must have the choices' type")


@irdl_op_definition
class CastOp(CoreOp):
    """Converts elements to the result's element type.

    Float to integer truncates toward zero; to i1 is `!= 0`; `saturate`
    clamps to the range of 8-bit float types instead of producing inf/NaN.
    """

    name = "core.cast"

    input = operand_def()
    result = result_def()
    saturate = opt_prop_def(IntegerAttr)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _same_shape(self, self.input.type, self.result.type, "result")


def _bit_width(element: Attribute) -> int | None:
    """The bits an element occupies (an i1 a byte, as ONNX stores a bool); None if unknown."""
    if isinstance(element, IntegerType):
        return 8 if element.width.data == 1 else element.width.data
    width = getattr(element, "bitwidth", None)
    return width if isinstance(width, int) else None


@irdl_op_definition
class BitcastOp(CoreOp):
    """The same bits read as the result's element type (ONNX BitCast), shape unchanged.

    Both element types have the same width; an i1 counts as the byte 0 or 1, and
    a byte read as i1 is true when it is not 0.
    """

    name = "core.bitcast"

    input = operand_def()
    result = result_def()
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _same_shape(self, self.input.type, self.result.type, "result")
        a, b = _element(self.input.type), _element(self.result.type)
        width = None if a is None else _bit_width(a)
        if width is None or b is None or width != _bit_width(b):
            raise VerifyException(
                f"core.bitcast: {self.input.type} and {self.result.type} need element types "
                "of one bit width"
            )


# ---- data movement -------------------------------------------------------------------


@irdl_op_definition
class BroadcastOp(CoreOp):
    """Expands `input` to the result shape; `dims[i]` is the result dim of input dim i.

    An input dim is either equal to its result dim or 1 (then repeated). The
    target shape comes as an operand when the result has dynamic dims.
    """

    name = "core.broadcast"

    input = operand_def()
    shape = var_operand_def()
    dims = prop_def(DenseArrayBase)
    result = result_def()
    traits = traits_def(Pure())

    def verify_(self) -> None:
        dims = ints_of(self.dims)
        ins, out = _shape(self.input.type), _shape(self.result.type)
        if len(self.shape) > 1:
            raise VerifyException("core.broadcast: at most one shape operand")
        if ins is None or out is None:
            return
        if len(dims) != len(ins):
            raise VerifyException(
                f"core.broadcast: dims has {len(dims)} entries for an input of rank {len(ins)}"
            )
        if sorted(set(dims)) != list(dims) or any(not 0 <= d < len(out) for d in dims):
            raise VerifyException(
                f"core.broadcast: dims {list(dims)} must increase within the result rank {len(out)}"
            )
        for i, d in enumerate(dims):
            if ins[i] not in (1, -1) and not _dims_compatible(ins[i], out[d]):
                raise VerifyException(
                    f"core.broadcast: input dim {i} ({ins[i]}) cannot expand to result dim "
                    f"{d} ({out[d]})"
                )
        if any(x < 0 for x in out) and not self.shape:
            raise VerifyException("core.broadcast: a dynamic result needs a shape operand")


@irdl_op_definition
class ReshapeOp(CoreOp):
    """Same elements in row-major order, another shape (given as an operand if dynamic)."""

    name = "core.reshape"

    input = operand_def()
    shape = var_operand_def()
    result = result_def()
    traits = traits_def(Pure())

    def verify_(self) -> None:
        ins, out = _shape(self.input.type), _shape(self.result.type)
        if _element(self.input.type) != _element(self.result.type):
            raise VerifyException("core.reshape: element types differ")
        if len(self.shape) > 1:
            raise VerifyException("core.reshape: at most one shape operand")
        if ins is None or out is None:
            return
        if all(d >= 0 for d in ins + out):
            n_in = 1
            for d in ins:
                n_in *= d
            n_out = 1
            for d in out:
                n_out *= d
            if n_in != n_out:
                raise VerifyException(
                    f"core.reshape: {self.input.type} has {n_in} elements, "
                    f"{self.result.type} has {n_out}"
                )
        elif any(d < 0 for d in out) and not self.shape:
            raise VerifyException("core.reshape: a dynamic result needs a shape operand")


@irdl_op_definition
class TransposeOp(CoreOp):
    """`result.dim[i] = input.dim[perm[i]]`."""

    name = "core.transpose"

    input = operand_def()
    perm = prop_def(DenseArrayBase)
    result = result_def()
    traits = traits_def(Pure())

    def verify_(self) -> None:
        perm = ints_of(self.perm)
        ins, out = _shape(self.input.type), _shape(self.result.type)
        if sorted(perm) != list(range(len(perm))):
            raise VerifyException(f"core.transpose: {list(perm)} is not a permutation")
        if ins is None or out is None:
            return
        if len(perm) != len(ins) or len(out) != len(ins):
            raise VerifyException("core.transpose: perm, input and result ranks differ")
        for i, p in enumerate(perm):
            if not _dims_compatible(out[i], ins[p]):
                raise VerifyException(
                    f"core.transpose: result dim {i} is {out[i]} but input dim {p} is {ins[p]}"
                )


@irdl_op_definition
class SliceOp(CoreOp):
    """Strided window: `result[i…] = input[start + i * stride …]`, sizes from the result.

    Static form: `start` and `stride` properties. Dynamic form: three 1-D i64
    operands `start, size, stride` (already clamped, non-negative starts).
    Strides may be negative (a reversed window).
    """

    name = "core.slice"

    input = operand_def()
    dynamic = var_operand_def()
    start = opt_prop_def(DenseArrayBase)
    stride = opt_prop_def(DenseArrayBase)
    result = result_def()
    traits = traits_def(Pure())

    def verify_(self) -> None:
        if len(self.dynamic) not in (0, 3):
            raise VerifyException("core.slice: dynamic form takes start, size and stride")
        if not self.dynamic and (self.start is None or self.stride is None):
            raise VerifyException("core.slice: static form needs start and stride")
        ins, out = _shape(self.input.type), _shape(self.result.type)
        if ins is not None and out is not None and len(ins) != len(out):
            raise VerifyException("core.slice: input and result ranks differ")
        if not self.dynamic and ins is not None and out is not None:
            start, stride = ints_of(self.start), ints_of(self.stride)
            if len(start) != len(ins) or len(stride) != len(ins):
                raise VerifyException("core.slice: start and stride need one entry per dim")
            for d, (s, st, n, size) in enumerate(zip(start, stride, ins, out, strict=True)):
                if st == 0:
                    raise VerifyException(f"core.slice: stride of dim {d} is 0")
                if n >= 0 and size > 0:
                    last = s + (size - 1) * st
                    if not (0 <= s < n and 0 <= last < n):
                        raise VerifyException(
                            f"core.slice: dim {d} reads {s}..{last} of a dim of size {n}"
                        )


@irdl_op_definition
class ConcatOp(CoreOp):
    """Joins tensors along `axis` (non-negative); other dims agree."""

    name = "core.concat"

    inputs = var_operand_def()
    axis = prop_def(IntegerAttr)
    result = result_def()
    traits = traits_def(Pure())

    def verify_(self) -> None:
        if not self.inputs:
            raise VerifyException("core.concat: needs at least one input")
        axis = self.axis.value.data
        out = _shape(self.result.type)
        if out is None:
            return
        if not 0 <= axis < len(out):
            raise VerifyException(f"core.concat: axis {axis} is out of range")
        total = 0
        for v in self.inputs:
            s = _shape(v.type)
            if s is None:
                return
            if len(s) != len(out):
                raise VerifyException("core.concat: inputs and result ranks differ")
            if s[axis] < 0:
                total = -1
            elif total >= 0:
                total += s[axis]
        if total >= 0 and out[axis] >= 0 and total != out[axis]:
            raise VerifyException(
                f"core.concat: inputs add up to {total} along axis {axis}, result has {out[axis]}"
            )


PAD_MODES = ("constant", "reflect", "edge", "wrap")


@irdl_op_definition
class PadOp(CoreOp):
    """Pads with `pad_low`/`pad_high` elements per dim (negative crops).

    `constant` fills with the scalar `value` operand; `reflect` mirrors
    without the edge; `edge` repeats the edge; `wrap` is periodic.

    Pads known only at run time (CenterCropPad, exporters computing pads from
    shapes) come instead as a third operand, a `tensor<2*rank x i64>` of all
    low pads then all high pads; the result dims are then usually `?`.
    """

    name = "core.pad"
    KEYWORD: ClassVar[str | None] = "mode"
    KEYWORDS: ClassVar[tuple[str, ...]] = PAD_MODES

    mode = prop_def(StringAttr)
    input = operand_def()
    value = operand_def()
    pads = var_operand_def()
    pad_low = opt_prop_def(DenseArrayBase)
    pad_high = opt_prop_def(DenseArrayBase)
    result = result_def()
    traits = traits_def(Pure())

    def verify_(self) -> None:
        ins, out = _shape(self.input.type), _shape(self.result.type)
        static = self.pad_low is not None and self.pad_high is not None
        if len(self.pads) > 1 or static == bool(self.pads):
            raise VerifyException("core.pad: give either pad_low and pad_high, or one pads operand")
        if self.pads:
            pads = _shape(self.pads[0].type)
            if pads is None or len(pads) != 1 or _element(self.pads[0].type) != i64:
                raise VerifyException("core.pad: the pads operand must be a 1-D tensor of i64")
            if ins is not None and not _dims_compatible(pads[0], 2 * len(ins)):
                raise VerifyException("core.pad: the pads operand needs 2 entries per dim")
            return
        lo, hi = ints_of(self.pad_low), ints_of(self.pad_high)
        if ins is None or out is None:
            return
        if not len(lo) == len(hi) == len(ins) == len(out):
            raise VerifyException("core.pad: pads need one entry per dim")
        for d, (n, a, b, m) in enumerate(zip(ins, lo, hi, out, strict=True)):
            if n >= 0 and m >= 0 and n + a + b != m:
                raise VerifyException(f"core.pad: dim {d}: {n} + {a} + {b} != {m}")


@irdl_op_definition
class GatherOp(CoreOp):
    """Takes slices of `input` along `axis` at `indices` (non-negative, in range).

    result shape = input[:axis] + indices + input[axis+1:].
    """

    name = "core.gather"

    input = operand_def()
    indices = operand_def()
    axis = prop_def(IntegerAttr)
    result = result_def()
    traits = traits_def(Pure())


@irdl_op_definition
class GatherElementsOp(CoreOp):
    """`result[i…] = input[i… with dim axis replaced by indices[i…]]`."""

    name = "core.gather_elements"

    input = operand_def()
    indices = operand_def()
    axis = prop_def(IntegerAttr)
    result = result_def()
    traits = traits_def(Pure())


@irdl_op_definition
class GatherNDOp(CoreOp):
    """ONNX GatherND semantics with `batch_dims`; index tuples are non-negative."""

    name = "core.gather_nd"

    input = operand_def()
    indices = operand_def()
    batch_dims = prop_def(IntegerAttr)
    result = result_def()
    traits = traits_def(Pure())


SCATTER_REDUCTIONS = ("none", "add", "mul", "max", "min")


@irdl_op_definition
class ScatterElementsOp(CoreOp):
    """Copy of `input` with `updates` written at `indices` along `axis`, combined by `reduction`."""

    name = "core.scatter_elements"
    KEYWORD: ClassVar[str | None] = "reduction"
    KEYWORDS: ClassVar[tuple[str, ...]] = SCATTER_REDUCTIONS

    reduction = prop_def(StringAttr)
    input = operand_def()
    indices = operand_def()
    updates = operand_def()
    axis = prop_def(IntegerAttr)
    result = result_def()
    traits = traits_def(Pure())


@irdl_op_definition
class ScatterNDOp(CoreOp):
    """Copy of `input` with `updates` written at index tuples, combined by `reduction`."""

    name = "core.scatter_nd"
    KEYWORD: ClassVar[str | None] = "reduction"
    KEYWORDS: ClassVar[tuple[str, ...]] = SCATTER_REDUCTIONS

    reduction = prop_def(StringAttr)
    input = operand_def()
    indices = operand_def()
    updates = operand_def()
    result = result_def()
    traits = traits_def(Pure())


# ---- compute ----------------------------------------------------------------------------


@irdl_op_definition
class MatmulOp(CoreOp):
    """Batched matrix product: `[B…, M, K] × [B…, K, N] → [B…, M, N]`, batch dims equal.

    Products are summed in the `acc` type, then converted to the result type.
    """

    name = "core.matmul"

    lhs = operand_def()
    rhs = operand_def()
    acc = prop_def(AnyAttr())
    result = result_def()
    traits = traits_def(Pure())

    def verify_(self) -> None:
        a, b, c = _shape(self.lhs.type), _shape(self.rhs.type), _shape(self.result.type)
        if not isinstance(self.acc, TypeAttribute):
            raise VerifyException("core.matmul: acc must be a type")
        if a is None or b is None or c is None:
            return
        if not (len(a) == len(b) == len(c) >= 2):
            raise VerifyException("core.matmul: operands and result need the same rank >= 2")
        for d in range(len(a) - 2):
            if not (_dims_compatible(a[d], b[d]) and _dims_compatible(a[d], c[d])):
                raise VerifyException(f"core.matmul: batch dim {d} differs")
        if not _dims_compatible(a[-1], b[-2]):
            raise VerifyException(f"core.matmul: contraction sizes differ ({a[-1]} vs {b[-2]})")
        if not (_dims_compatible(c[-2], a[-2]) and _dims_compatible(c[-1], b[-1])):
            raise VerifyException("core.matmul: result shape does not match M and N")


def _spatial_props_ok(op: IRDLOperation, spatial: int, **props: tuple[int, ...]) -> None:
    for key, values in props.items():
        if len(values) != spatial:
            raise VerifyException(
                f"{op.name}: {key} needs {spatial} entries (one per spatial dim), got {len(values)}"
            )


@irdl_op_definition
class ConvOp(CoreOp):
    """Grouped, dilated, strided convolution in layout `NC…` (input) and `OI…` (weights).

    input [N, C, D…], weights [O, C/groups, K…], result [N, O, E…] with
    E = (D + pad_low + pad_high - dilation*(K-1) - 1) / stride + 1. No bias.
    """

    name = "core.conv"

    input = operand_def()
    weight = operand_def()
    strides = prop_def(DenseArrayBase)
    dilations = prop_def(DenseArrayBase)
    pad_low = prop_def(DenseArrayBase)
    pad_high = prop_def(DenseArrayBase)
    groups = prop_def(IntegerAttr)
    layout = prop_def(StringAttr)
    acc = prop_def(AnyAttr())
    result = result_def()
    traits = traits_def(Pure())

    def verify_(self) -> None:
        if self.layout.data != "NCHW":
            raise VerifyException(f"core.conv: unsupported layout '{self.layout.data}'")
        x, w, y = _shape(self.input.type), _shape(self.weight.type), _shape(self.result.type)
        if x is None or w is None or y is None:
            return
        spatial = len(x) - 2
        _spatial_props_ok(
            self,
            spatial,
            strides=ints_of(self.strides),
            dilations=ints_of(self.dilations),
            pad_low=ints_of(self.pad_low),
            pad_high=ints_of(self.pad_high),
        )
        groups = self.groups.value.data
        if x[1] >= 0 and w[1] >= 0 and x[1] != w[1] * groups:
            raise VerifyException(
                f"core.conv: input has {x[1]} channels; weights expect {w[1]} x {groups} groups"
            )
        for i in range(spatial):
            d, k, e = x[2 + i], w[2 + i], y[2 + i]
            if d < 0 or k < 0 or e < 0:
                continue
            s, dil = ints_of(self.strides)[i], ints_of(self.dilations)[i]
            lo, hi = ints_of(self.pad_low)[i], ints_of(self.pad_high)[i]
            expect = (d + lo + hi - dil * (k - 1) - 1) // s + 1
            if expect != e:
                raise VerifyException(
                    f"core.conv: spatial dim {i} should be {expect}, result has {e}"
                )


@irdl_op_definition
class ConvTransposeOp(CoreOp):
    """Transposed convolution (the gradient of core.conv), layouts `NC…` and `IO…`.

    weights [C, O/groups, K…]; result dim E = (D-1)*stride + dilation*(K-1) + 1
    - pad_low - pad_high (output padding is folded into a negative pad_high).
    """

    name = "core.conv_transpose"

    input = operand_def()
    weight = operand_def()
    strides = prop_def(DenseArrayBase)
    dilations = prop_def(DenseArrayBase)
    pad_low = prop_def(DenseArrayBase)
    pad_high = prop_def(DenseArrayBase)
    groups = prop_def(IntegerAttr)
    acc = prop_def(AnyAttr())
    result = result_def()
    traits = traits_def(Pure())


POOL_KINDS = ("max", "sum")


@irdl_op_definition
class PoolOp(CoreOp):
    """Window reduction over the spatial dims of an `NC…` tensor.

    Padding uses the identity of the reduction (-inf for max, 0 for sum);
    averages are sums divided by a count tensor computed before core.
    """

    name = "core.pool"
    KEYWORD: ClassVar[str | None] = "kind"
    KEYWORDS: ClassVar[tuple[str, ...]] = POOL_KINDS

    kind = prop_def(StringAttr)
    input = operand_def()
    window = prop_def(DenseArrayBase)
    strides = prop_def(DenseArrayBase)
    dilations = prop_def(DenseArrayBase)
    pad_low = prop_def(DenseArrayBase)
    pad_high = prop_def(DenseArrayBase)
    result = result_def()
    traits = traits_def(Pure())


REDUCE_FNS = ("sum", "prod", "max", "min", "and", "or")


@irdl_op_definition
class ReduceOp(CoreOp):
    """Reduces `axes` (sorted, non-negative) away; the result drops those dims."""

    name = "core.reduce"
    KEYWORD: ClassVar[str | None] = "fn"
    KEYWORDS: ClassVar[tuple[str, ...]] = REDUCE_FNS

    fn = prop_def(StringAttr)
    input = operand_def()
    axes = prop_def(DenseArrayBase)
    result = result_def()
    traits = traits_def(Pure())

    def verify_(self) -> None:
        axes = ints_of(self.axes)
        ins, out = _shape(self.input.type), _shape(self.result.type)
        if list(axes) != sorted(set(axes)):
            raise VerifyException("core.reduce: axes must be sorted and unique")
        if ins is None or out is None:
            return
        if any(not 0 <= a < len(ins) for a in axes):
            raise VerifyException(f"core.reduce: axes {list(axes)} out of range")
        kept = [d for i, d in enumerate(ins) if i not in axes]
        if len(kept) != len(out) or not all(map(_dims_compatible, kept, out)):
            raise VerifyException(
                f"core.reduce: reducing {list(axes)} of {self.input.type} cannot give "
                f"{self.result.type}"
            )


@irdl_op_definition
class MaskedReduceOp(CoreOp):
    """Reduces the dims whose flag in `mask` (`tensor<rank x i1>`) is set, keeping them as
    size 1: result dim i is `mask[i] ? 1 : input dim i`.

    For axes known only at run time (ONNX Reduce* with an `axes` input): the
    result's rank is fixed, its sizes are not. An empty reduction (a flagged dim
    of size 0) gives the identity, as core.reduce does.
    """

    name = "core.masked_reduce"
    KEYWORD: ClassVar[str | None] = "fn"
    KEYWORDS: ClassVar[tuple[str, ...]] = REDUCE_FNS

    fn = prop_def(StringAttr)
    input = operand_def()
    mask = operand_def()
    result = result_def()
    traits = traits_def(Pure())

    def verify_(self) -> None:
        ins, out, mask = _shape(self.input.type), _shape(self.result.type), _shape(self.mask.type)
        if mask is None or len(mask) != 1 or _element(self.mask.type) != I1:
            raise VerifyException("core.masked_reduce: mask must be a 1-D tensor of i1")
        if ins is None or out is None:
            return
        if not _dims_compatible(mask[0], len(ins)) or len(out) != len(ins):
            raise VerifyException(
                f"core.masked_reduce: input {self.input.type}, mask {self.mask.type} and "
                f"result {self.result.type} must have one rank"
            )
        for i, (d, o) in enumerate(zip(ins, out, strict=True)):
            if o >= 0 and o != 1 and not _dims_compatible(d, o):
                raise VerifyException(
                    f"core.masked_reduce: result dim {i} ({o}) is neither 1 nor the input's ({d})"
                )


@irdl_op_definition
class ArgReduceOp(CoreOp):
    """Index (i64) of the max/min along `axis`, which the result drops; ties pick the
    first index, or the last when `last` is 1."""

    name = "core.arg_reduce"
    KEYWORD: ClassVar[str | None] = "fn"
    KEYWORDS: ClassVar[tuple[str, ...]] = ("max", "min")

    fn = prop_def(StringAttr)
    input = operand_def()
    axis = prop_def(IntegerAttr)
    last = prop_def(IntegerAttr)
    result = result_def()
    traits = traits_def(Pure())


@irdl_op_definition
class CumulativeOp(CoreOp):
    """Running sum/product along `axis`, optionally exclusive and/or from the end."""

    name = "core.cumulative"
    KEYWORD: ClassVar[str | None] = "fn"
    KEYWORDS: ClassVar[tuple[str, ...]] = ("sum", "prod")

    fn = prop_def(StringAttr)
    input = operand_def()
    axis = prop_def(IntegerAttr)
    exclusive = prop_def(IntegerAttr)
    reverse = prop_def(IntegerAttr)
    result = result_def()
    traits = traits_def(Pure())


@irdl_op_definition
class SortOp(CoreOp):
    """Sorts along `axis`, stably; gives the sorted values and their i64 indices."""

    name = "core.sort"

    input = operand_def()
    axis = prop_def(IntegerAttr)
    descending = prop_def(IntegerAttr)
    values = result_def()
    indices = result_def()
    traits = traits_def(Pure())


@irdl_op_definition
class NonZeroOp(CoreOp):
    """Indices of the non-zero elements, `[rank, count]` i64, in row-major order."""

    name = "core.nonzero"

    input = operand_def()
    result = result_def()
    traits = traits_def(Pure())


@irdl_op_definition
class NonMaxSuppressionOp(CoreOp):
    """ONNX NonMaxSuppression as onnxruntime computes it: `[count, 3]` i64 rows of
    (batch, class, box).

    `boxes` is `[batches, n, 4]` f32 (corners `y1, x1, y2, x2` in any order, or
    `x, y, w, h` with `center_point_box` 1), `scores` `[batches, classes, n]`
    f32; `max_output` (i64), `iou_threshold` and the optional `score_threshold`
    (f32) are rank-0. Per batch, then per class, boxes scoring strictly above
    the threshold (all of them without one) are visited in onnxruntime's
    priority-queue order (higher score first, then lower index; NaN scores
    where its heap leaves them), each kept unless its IoU (onnxruntime's float32
    arithmetic and degenerate-box rules) with an already kept box of the class
    is above `iou_threshold`, up to `max_output` kept (none when it is 0 or
    less). The count is known only after the run, so the result's first dim is `?`.
    """

    name = "core.non_max_suppression"

    boxes = operand_def()
    scores = operand_def()
    max_output = operand_def()
    iou_threshold = operand_def()
    score_threshold = opt_operand_def()
    center_point_box = prop_def(IntegerAttr)
    result = result_def()
    traits = traits_def(Pure())

    def verify_(self) -> None:
        f32 = Float32Type()
        boxes, scores = _shape(self.boxes.type), _shape(self.scores.type)
        if boxes is None or len(boxes) != 3 or _element(self.boxes.type) != f32:
            raise VerifyException("core.non_max_suppression: boxes must be a rank-3 f32 tensor")
        if scores is None or len(scores) != 3 or _element(self.scores.type) != f32:
            raise VerifyException("core.non_max_suppression: scores must be a rank-3 f32 tensor")
        if not _dims_compatible(boxes[2], 4):
            raise VerifyException("core.non_max_suppression: boxes must have 4 numbers per box")
        if not _dims_compatible(boxes[0], scores[0]) or not _dims_compatible(boxes[1], scores[2]):
            raise VerifyException(
                f"core.non_max_suppression: boxes {self.boxes.type} and scores "
                f"{self.scores.type} differ in their batches or boxes"
            )
        scalars = [(self.max_output, i64, "max_output"), (self.iou_threshold, f32, "iou_threshold")]
        if self.score_threshold is not None:
            scalars.append((self.score_threshold, f32, "score_threshold"))
        for value, element, what in scalars:
            if _shape(value.type) != () or _element(value.type) != element:
                raise VerifyException(
                    f"core.non_max_suppression: {what} must be a rank-0 tensor<{element}>"
                )
        if self.center_point_box.value.data not in (0, 1):
            raise VerifyException("core.non_max_suppression: center_point_box must be 0 or 1")
        if self.result.type != TensorType(i64, [DYNAMIC_INDEX, 3]):
            raise VerifyException("core.non_max_suppression: the result must be tensor<?x3xi64>")


# ---- run-time checks -----------------------------------------------------------------------


@irdl_op_definition
class CheckOp(CoreOp):
    """`input`, unchanged, once every element of `cond` (i1) is true; else the run fails.

    For a value that arrives at run time and must be in range before it is
    used (TopK's K against the size of its axis): the checked value is the
    result, so its users run after the check, and a check whose value nobody
    uses goes away with it. `message` says what was wrong; the run's error
    names the node too, and the first failing element of `culprit` (shaped like
    `cond`, or one element), so the user sees the value that was out of range.
    """

    name = "core.check"

    input = operand_def()
    cond = operand_def()
    culprit = opt_operand_def()
    message = prop_def(StringAttr)
    result = result_def()
    traits = traits_def(Pure())

    def verify_(self) -> None:
        if self.result.type != self.input.type:
            raise VerifyException(
                f"core.check: the result type {self.result.type} is not the input's "
                f"({self.input.type})"
            )
        if _element(self.cond.type) != I1:
            raise VerifyException(f"core.check: cond must be a tensor of i1, got {self.cond.type}")
        if self.culprit is not None:
            self._verify_culprit(self.culprit.type)

    def _verify_culprit(self, t: Attribute) -> None:
        """The culprit names a number per element of `cond`, or one for all of them."""
        element = _element(t)
        if not isinstance(element, IntegerType | AnyFloat):
            raise VerifyException(f"core.check: the culprit must hold numbers, got {t}")
        cond, got = _shape(self.cond.type), _shape(t)
        if cond is None or got is None or -1 in cond or -1 in got:
            return
        if got != cond and math.prod(got) != 1:
            raise VerifyException(
                f"core.check: the culprit's shape {got} is neither cond's {cond} nor one element"
            )


# ---- control flow ------------------------------------------------------------------------


@irdl_op_definition
class YieldOp(CoreOp):
    """Ends a region of core.if / core.loop, returning its values."""

    name = "core.yield"

    values = var_operand_def()
    traits = traits_def(IsTerminator(), Pure())


@irdl_op_definition
class IfOp(CoreOp):
    """Runs `then` or `else` on a scalar i1 condition and returns what it yields."""

    name = "core.if"
    REGIONS: ClassVar[tuple[str, ...]] = ("then", "else")

    cond = operand_def()
    results_ = var_result_def()
    then_region = region_def()
    else_region = region_def()
    traits = traits_def(RecursiveMemoryEffect())


@irdl_op_definition
class LoopOp(CoreOp):
    """A counted, conditional loop carrying values (ONNX Loop's semantics).

    Operands: max trip count (i64 scalar), initial condition (i1 scalar), then
    the carried values. The body's arguments are (iteration i64, condition,
    carried…); it yields (condition, carried…, per-iteration outputs…). The
    results are the final carried values, then each per-iteration output
    stacked along a new first dim.
    """

    name = "core.loop"
    REGIONS: ClassVar[tuple[str, ...]] = ("body",)

    max_trips = operand_def()
    cond = operand_def()
    carried = var_operand_def()
    results_ = var_result_def()
    body = region_def()
    traits = traits_def(RecursiveMemoryEffect())


# ---- lists ---------------------------------------------------------------------------------


@irdl_attr_definition
class ListType(WrapperType):
    """`!core.list<tensor<...>>`: an ordered list of tensors of one element type.

    Frameworks have lists of tensors (ONNX sequences) whose elements may differ
    in shape, so the parameter is a bound on every element: the same element
    type, and a compatible shape where both are ranked (typically `?` dims or
    unranked).
    """

    name = "core.list"

    element_type: Attribute

    def verify(self) -> None:
        if not isinstance(self.element_type, TensorType | UnrankedTensorType):
            raise VerifyException(
                f"!core.list holds tensors: its parameter must be a tensor type, "
                f"got {self.element_type}"
            )


def _tensors_compatible(a: Attribute, b: Attribute) -> bool:
    """Same element type, and the same rank with compatible dims where both are ranked."""
    if _element(a) is None or _element(a) != _element(b):
        return False
    sa, sb = _shape(a), _shape(b)
    if sa is None or sb is None:
        return True
    return len(sa) == len(sb) and all(map(_dims_compatible, sa, sb))


def _check_element(op: IRDLOperation, value: Attribute, lst: Attribute, what: str) -> None:
    bound = lst.element_type if isinstance(lst, ListType) else None
    if bound is None or not _tensors_compatible(value, bound):
        raise VerifyException(f"{op.name}: {what} {value} does not fit the list type {lst}")


def _lists_compatible(a: Attribute, b: Attribute) -> bool:
    return (
        isinstance(a, ListType)
        and isinstance(b, ListType)
        and _tensors_compatible(a.element_type, b.element_type)
    )


def _check_same_elements(op: IRDLOperation, a: Attribute, b: Attribute) -> None:
    if not _lists_compatible(a, b):
        raise VerifyException(f"{op.name}: list types {a} and {b} are not compatible")


def _check_index(op: IRDLOperation, index: Attribute) -> None:
    if _element(index) != i64 or _shape(index) != ():
        raise VerifyException(f"{op.name}: the index must be a rank-0 tensor<i64>, got {index}")


@irdl_op_definition
class ListOp(CoreOp):
    """A list of the operand tensors, in order; no operands make an empty list.

    One op builds every list (ONNX SequenceConstruct and SequenceEmpty); the
    result type bounds the operands, which may differ in shape.
    """

    name = "core.list"

    elements = var_operand_def()
    result = result_def(ListType)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        for i, v in enumerate(self.elements):
            _check_element(self, v.type, self.result.type, f"element {i}")


@irdl_op_definition
class ListLengthOp(CoreOp):
    """The number of elements of a list, as a rank-0 `tensor<i64>`."""

    name = "core.list_length"

    input = operand_def(ListType)
    result = result_def()
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _check_index(self, self.result.type)


@irdl_op_definition
class ListGetOp(CoreOp):
    """The element at `index` (rank-0 i64, in `[0, length)`).

    Indices are non-negative and in range as everywhere in core: ONNX's
    negative positions are normalized before, with the list's length.
    """

    name = "core.list_get"

    input = operand_def(ListType)
    index = operand_def()
    result = result_def()
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _check_index(self, self.index.type)
        _check_element(self, self.result.type, self.input.type, "result")


@irdl_op_definition
class ListInsertOp(CoreOp):
    """A new list with `element` inserted before `index` (in `[0, length]`; length appends).

    Lists are values: the operand list is unchanged. The result type may be
    more general than the operand's, since the new element may differ in shape.
    """

    name = "core.list_insert"

    input = operand_def(ListType)
    element = operand_def()
    index = operand_def()
    result = result_def(ListType)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _check_index(self, self.index.type)
        _check_same_elements(self, self.input.type, self.result.type)
        _check_element(self, self.element.type, self.result.type, "element")


@irdl_op_definition
class ListEraseOp(CoreOp):
    """A new list without the element at `index` (in `[0, length)`)."""

    name = "core.list_erase"

    input = operand_def(ListType)
    index = operand_def()
    result = result_def(ListType)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _check_index(self, self.index.type)
        _check_same_elements(self, self.input.type, self.result.type)


def _check_joined_rank(op: IRDLOperation, lst: Attribute, result: Attribute, extra: int) -> None:
    """Elements of rank r joined into a result of rank r + extra, along a valid `axis`."""
    assert isinstance(lst, ListType)
    axis = op.axis.value.data  # type: ignore[attr-defined]
    out = _shape(result)
    if _element(result) is None or _element(result) != _element(lst.element_type):
        raise VerifyException(f"{op.name}: result {result} and list {lst} element types differ")
    if out is None:
        return
    if not 0 <= axis < len(out):
        raise VerifyException(f"{op.name}: axis {axis} is out of range for the result {result}")
    ins = _shape(lst.element_type)
    if ins is not None and len(ins) + extra != len(out):
        raise VerifyException(
            f"{op.name}: elements of rank {len(ins)} cannot give a result of rank {len(out)}"
        )


@irdl_op_definition
class ListConcatOp(CoreOp):
    """Joins the elements along the existing dim `axis` (non-negative).

    The list must not be empty at run time; elements agree on all other dims.
    """

    name = "core.list_concat"

    input = operand_def(ListType)
    axis = prop_def(IntegerAttr)
    result = result_def()
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _check_joined_rank(self, self.input.type, self.result.type, 0)


@irdl_op_definition
class ListStackOp(CoreOp):
    """Stacks the elements along a new dim `axis` (in `[0, rank]` of an element).

    The list must not be empty at run time; all elements have the same shape.
    Kept apart from core.list_concat: concat joins along an existing dim.
    """

    name = "core.list_stack"

    input = operand_def(ListType)
    axis = prop_def(IntegerAttr)
    result = result_def()
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _check_joined_rank(self, self.input.type, self.result.type, 1)


# ---- optionals ----------------------------------------------------------------------------


@irdl_attr_definition
class OptionalType(WrapperType):
    """`!core.optional<T>`: a value of type T (a tensor or a `!core.list`), or none.

    Frameworks pass values that may be absent (ONNX optionals); a type of its
    own keeps "absent" apart from an empty list or a 0-sized tensor.
    """

    name = "core.optional"

    element_type: Attribute

    def verify(self) -> None:
        if not isinstance(self.element_type, TensorType | UnrankedTensorType | ListType):
            raise VerifyException(
                f"!core.optional holds a tensor or a !core.list, got {self.element_type}"
            )


def _check_optional_value(op: IRDLOperation, value: Attribute, opt: Attribute) -> None:
    assert isinstance(opt, OptionalType)
    inner = opt.element_type
    fits = (
        _lists_compatible(value, inner)
        if isinstance(inner, ListType)
        else _tensors_compatible(value, inner)
    )
    if not fits:
        raise VerifyException(f"{op.name}: {value} does not fit the optional type {opt}")


@irdl_op_definition
class OptionalOp(CoreOp):
    """An optional holding the operand, or none without an operand."""

    name = "core.optional"

    value = opt_operand_def()
    result = result_def(OptionalType)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        if self.value is not None:
            _check_optional_value(self, self.value.type, self.result.type)


@irdl_op_definition
class OptionalHasOp(CoreOp):
    """Whether an optional holds a value, as a rank-0 `tensor<i1>`."""

    name = "core.optional_has"

    input = operand_def(OptionalType)
    result = result_def()
    traits = traits_def(Pure())

    def verify_(self) -> None:
        if _element(self.result.type) != I1 or _shape(self.result.type) != ():
            raise VerifyException("core.optional_has: the result must be a rank-0 tensor<i1>")


@irdl_op_definition
class OptionalGetOp(CoreOp):
    """The value an optional holds; it must hold one (test with core.optional_has)."""

    name = "core.optional_get"

    input = operand_def(OptionalType)
    result = result_def()
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _check_optional_value(self, self.result.type, self.input.type)


# ---- maps ---------------------------------------------------------------------------------


@irdl_op_definition
class ZipMapOp(CoreOp):
    """One map per row of `values` [N, C], from `keys` [C] to that row's values (ONNX
    ZipMap): a `!onnx.seq<!onnx.map<K, V>>`.

    A sequence of maps is what classifiers give their callers, and no op reads
    one, so it keeps the framework's type rather than a core type of its own.
    """

    name = "core.zip_map"

    keys = operand_def()
    values = operand_def()
    result = result_def()
    traits = traits_def(Pure())

    def verify_(self) -> None:
        from rung.dialects.onnx.types import MapType, SeqType

        out = self.result.type
        inner = out.element_type if isinstance(out, SeqType) else None
        if not isinstance(inner, MapType):
            raise VerifyException(f"core.zip_map: the result must be a sequence of maps, got {out}")
        keys, values = self.keys.type, self.values.type
        shape_k, shape_v = _shape(keys) or (), _shape(values) or ()
        value_type = _element(inner.value_type) or inner.value_type
        if (
            len(shape_k) != 1
            or len(shape_v) != 2
            or not _dims_compatible(shape_k[0], shape_v[1])
            or _element(keys) != inner.key_type
            or _element(values) != value_type
        ):
            raise VerifyException(
                f"core.zip_map: keys {keys} (a vector) and values {values} (a matrix with "
                f"a column per key) do not give maps of {inner}"
            )


CORE_OPS: tuple[type[IRDLOperation], ...] = (
    ConstantOp, IotaOp, ShapeOfOp,
    UnaryOp, BinaryOp, CompareOp, SelectOp, CastOp, BitcastOp,
    BroadcastOp, ReshapeOp, TransposeOp, SliceOp, ConcatOp, PadOp,
    GatherOp, GatherElementsOp, GatherNDOp, ScatterElementsOp, ScatterNDOp,
    MatmulOp, ConvOp, ConvTransposeOp, PoolOp, ReduceOp, MaskedReduceOp, ArgReduceOp,
    CumulativeOp,
    SortOp, NonZeroOp, NonMaxSuppressionOp, CheckOp,
    YieldOp, IfOp, LoopOp,
    ListOp, ListLengthOp, ListGetOp, ListInsertOp, ListEraseOp, ListConcatOp, ListStackOp,
    OptionalOp, OptionalHasOp, OptionalGetOp,
    ZipMapOp,
)  # fmt: skip

CORE_TYPES: tuple[type[ParametrizedAttribute], ...] = (ListType, OptionalType)

Core = Dialect("core", list(CORE_OPS), list(CORE_TYPES))

__all__ = [
    "CORE_OPS",
    "CORE_TYPES",
    "Core",
    "ListType",
    "OptionalType",
    "ints",
    "ranked_tensor",
] + [op.__name__ for op in CORE_OPS]
