"""What every core → ONNX handler shares: building onnx-dialect nodes in front of a core op.

A handler gets an `Emitter` positioned before the core op it replaces and
returns the op's replacement values. The emitter spells ONNX attributes from
plain Python values (int, float, str, lists of them), makes small constants,
and names its nodes after the core op's location, so that the exported graph
still says which source node each ONNX node came from.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DenseArrayBase,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    NameLoc,
    NoneAttr,
    StringAttr,
    TensorType,
    UnrankedTensorType,
    i64,
)
from xdsl.ir import Attribute, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from rung.dialects import core
from rung.dialects.constants import constant_attr
from rung.dialects.onnx import OPS_BY_TYPE, OnnxOp, OptType, SeqType
from rung.dialects.onnx.dtypes import NARROW_FLOAT_TYPES
from rung.errors import RungError

I1 = IntegerType(1)
INT64_MIN = -(2**63)


class ExportError(RungError):
    """A core op that has no ONNX equivalent (yet): the export stops rather than guess."""


def onnx_type(t: Attribute) -> Attribute:
    """The onnx-dialect type of a core type: lists are sequences, optionals are optionals."""
    if isinstance(t, core.ListType):
        return SeqType(onnx_type(t.element_type))
    if isinstance(t, core.OptionalType):
        return OptType(onnx_type(t.element_type))
    return t


def element(value: SSAValue | Attribute) -> Attribute:
    t = value.type if isinstance(value, SSAValue) else value
    if not isinstance(t, TensorType | UnrankedTensorType):
        raise ExportError(f"expected a tensor, got {t}")
    return t.element_type


def shape(value: SSAValue | Attribute) -> tuple[int, ...] | None:
    """The static shape of a ranked tensor value or type (-1 for `?` dims), None if
    unranked."""
    t = value.type if isinstance(value, SSAValue) else value
    return tuple(t.get_shape()) if isinstance(t, TensorType) else None


def tensor(elem: Attribute, dims: Sequence[int] | None) -> Attribute:
    """A tensor type; None dims give an unranked one."""
    if dims is None:
        return UnrankedTensorType(elem)
    return TensorType(elem, [DYNAMIC_INDEX if d < 0 else d for d in dims])


def _attribute(value: object) -> Attribute:
    """An ONNX attribute as the onnx dialect stores it, from a plain Python value."""
    if isinstance(value, Attribute):
        return value
    if isinstance(value, bool | int | np.integer):
        return IntegerAttr(int(value), i64)
    if isinstance(value, float | np.floating):
        return FloatAttr(float(value), Float32Type())
    if isinstance(value, str):
        return StringAttr(value)
    if isinstance(value, list | tuple):
        if all(isinstance(v, int | np.integer) for v in value):
            return DenseArrayBase.from_list(i64, [int(v) for v in value])
        if all(isinstance(v, float | int) for v in value):
            return DenseArrayBase.from_list(Float32Type(), [float(v) for v in value])
        if all(isinstance(v, str) for v in value):
            return ArrayAttr([StringAttr(v) for v in value])
    raise ExportError(f"cannot spell {value!r} as an ONNX attribute")


def describe(op: Operation) -> str:
    """`'core.pool' at node 'n3'` for diagnostics."""
    loc = op.location
    where = f"node '{loc.desc.data}'" if isinstance(loc, NameLoc) else "an unnamed location"
    kind = ""
    for key in ("fn", "kind", "mode", "pred", "reduction"):
        prop = op.properties.get(key)
        if isinstance(prop, StringAttr):
            kind = f" {prop.data}"
            break
    return f"'{op.name}{kind}' at {where}"


class Emitter:
    """Builds onnx-dialect ops before `op`, named after its location.

    `names` is shared by the whole conversion so that node names stay unique
    (several core ops often come from one source node). `convert_region`
    converts the ops of a region moved into a new onnx op (If, Loop bodies).
    """

    def __init__(
        self,
        op: Operation,
        module: ModuleOp,
        names: set[str],
        convert_region: Callable[[Region], None],
    ) -> None:
        self.op = op
        self.module = module
        self.names = names
        self.convert_region = convert_region
        loc = op.location
        self.base = loc.desc.data if isinstance(loc, NameLoc) else op.name.split(".")[-1]

    def fail(self, why: str) -> ExportError:
        """The error for a form of the op that ONNX cannot express (or is not handled yet)."""
        return ExportError(f"cannot export {describe(self.op)} to ONNX: {why}")

    def _name(self) -> str:
        name, k = self.base, 0
        while name in self.names:
            k += 1
            name = f"{self.base}_{k}"
        self.names.add(name)
        return name

    def build(
        self,
        op_type: str,
        inputs: Sequence[SSAValue | None],
        out_types: Sequence[Attribute | None],
        attrs: dict[str, Any] | None = None,
        regions: Sequence[Region] = (),
        domain: str = "",
    ) -> OnnxOp:
        """Insert one ONNX node; `attrs` values may be plain Python values."""
        cls = OPS_BY_TYPE.get((domain, op_type))
        if cls is None:
            raise self.fail(f"the onnx dialect has no op {op_type}")
        props = {k: _attribute(v) for k, v in (attrs or {}).items() if v is not None}
        try:
            types = [None if t is None else onnx_type(t) for t in out_types]
            new = cls.from_positions(inputs, types, props, {}, list(regions))
        except ValueError as err:
            raise self.fail(f"{op_type}: {err}") from None
        new.location = NameLoc(StringAttr(self._name()), NoneAttr())
        Rewriter.insert_op(new, InsertPoint.before(self.op))
        return new

    def node(
        self,
        op_type: str,
        inputs: Sequence[SSAValue | None],
        out_type: Attribute,
        **attrs: Any,
    ) -> SSAValue:
        """Insert a node with one output and return it."""
        return self.build(op_type, inputs, [out_type], attrs).results[0]

    def const(self, array: np.ndarray, hint: str = "cst") -> SSAValue:
        """An onnx.Constant holding `array` (large data as a resource of the module)."""
        array = np.asarray(array)
        value = constant_attr(array, self.module, hint)
        return self.node("Constant", [], value.type, value=value)  # type: ignore[attr-defined]

    def i64s(self, values: Sequence[int]) -> SSAValue:
        """A 1-D int64 constant (shapes, axes, starts)."""
        return self.const(np.array([int(v) for v in values], dtype=np.int64), "ints")

    def scalar_like(self, value: float, elem: Attribute) -> SSAValue:
        """A rank-0 constant of element type `elem`."""
        from rung.dialects.dtypes import numpy_dtype

        return self.const(np.array(value, dtype=numpy_dtype(elem)), "scalar")

    def shape_tensor(self, dims: Sequence[int], operand: SSAValue | None) -> SSAValue:
        """The shape `dims` as a 1-D i64 value: a constant when static, else `operand`."""
        if all(d >= 0 for d in dims):
            return self.i64s(dims)
        if operand is None:
            raise self.fail("a dynamic shape without a shape operand")
        return operand

    def elementwise_operands(self, values: Sequence[SSAValue]) -> list[SSAValue]:
        """Operands of an ONNX elementwise op, with core's explicit expansions undone where
        ONNX's implicit broadcasting gives the same: an operand made by Expand is replaced by
        what was expanded, as long as one operand keeps the full shape. The Expand nodes
        left without users go away with the dead-code sweep after the conversion."""
        out: list[SSAValue] = list(values)
        expanded = [i for i, v in enumerate(values) if _expand_input(v) is not None]
        if len(expanded) == len(values):
            expanded = expanded[1:]  # the first one keeps the full shape
        for i in expanded:
            source = _expand_input(values[i])
            assert source is not None
            out[i] = source
        return out

    def cast(self, value: SSAValue, elem: Attribute) -> SSAValue:
        """`value` converted to element type `elem` (itself when it already is)."""
        from rung.importers.onnx.export import onnx_element_type

        if element(value) == elem:
            return value
        # ONNX saturates casts to 8-bit floats by default; core's casts never do.
        saturate = 0 if isinstance(elem, NARROW_FLOAT_TYPES) else None
        out = tensor(elem, shape(value))
        return self.node("Cast", [value], out, to=onnx_element_type(elem), saturate=saturate)


def _expand_input(value: SSAValue) -> SSAValue | None:
    """The input of the onnx.Expand that made `value` (None if something else did)."""
    owner = value.owner
    if isinstance(owner, OnnxOp) and owner.SCHEMA.op_type == "Expand":
        return owner.operands[0]
    return None


Handler = Callable[[Emitter, Any], Sequence[SSAValue]]
"""`handler(e, op)` returns the replacement of each of the core op's results."""

TABLE: dict[type[Operation], Handler] = {}


def exports(*classes: type[Operation]) -> Callable[[Handler], Handler]:
    """Register a handler for core op classes."""

    def register(handler: Handler) -> Handler:
        for cls in classes:
            TABLE[cls] = handler
        return handler

    return register


__all__ = [
    "INT64_MIN",
    "TABLE",
    "Emitter",
    "ExportError",
    "describe",
    "element",
    "exports",
    "onnx_type",
    "shape",
    "tensor",
]
