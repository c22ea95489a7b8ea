"""Declarative lowering rules: a source op that is one core elementwise op, as a table entry.

Most framework ops map one-to-one onto a core elementwise op: ONNX's `Add`
and ATen's `add.Tensor` are both `core.binary add` of their two operands,
broadcast numpy-style. Such a mapping is data, not code:

    Elementwise(aten.AtenAtan2Op, "binary", "atan2", ("self", "other"))
    Elementwise(aten.AtenAddTensorOp, "binary", "add", ("self", "other"),
                requires={"alpha": 1})
    Elementwise(onnx.LessOp, "compare", "lt", ("A", "B"))

Operands are named, never positional: each name is read from the source op
by the frontend's `Reader` (the onnx dialect's generated accessors, the
torch dialect's `op.arg(name)`). A name may give a tensor or a number (a
Scalar argument); a number becomes a constant of the operands' element type.
`requires` lists scalar arguments that must hold a value for the rule to
apply (ATen's `alpha=1`); any other value is reported as unsupported.

`install(table, rules, reader)` registers one handler per rule in a
frontend's `HandlerTable`. The handler:

1. reads the named operands;
2. brings them to one element type: the result's for arithmetic (`unary`,
   `binary`), for `compare` the widest of the tensor operands (a float wins
   over an integer), as torch's type promotion does (ONNX's operands already
   agree, so nothing is cast there);
3. broadcasts them to the result's shape (run-time dims included);
4. builds the core op.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects.builtin import AnyFloat, IntegerType
from xdsl.ir import Attribute, Operation, SSAValue

from .core_builder import CoreBuilder
from .errors import LoweringError
from .shapes import element_of, ranked_shape, tensor
from .table import HandlerTable

Reader = Callable[[Operation, str], object]
"""How a frontend reads a named argument of one of its ops: a value, a number, or None."""

KINDS = ("unary", "binary", "compare")


@dataclass(frozen=True)
class Elementwise:
    """A source op that is one core elementwise op (`kind` `fn`) of its named `operands`."""

    source: type[Operation]
    kind: str
    fn: str
    operands: tuple[str, ...]
    requires: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        arity = {"unary": 1, "binary": 2, "compare": 2}.get(self.kind)
        if arity is None:
            raise ValueError(f"rule kind must be one of {', '.join(KINDS)}, not {self.kind!r}")
        if len(self.operands) != arity:
            raise ValueError(
                f"a {self.kind} rule takes {arity} operand(s), got {list(self.operands)}"
            )

    def handler(self, read: Reader) -> Callable[[CoreBuilder, Any], list[SSAValue]]:
        """The handler that applies this rule, reading arguments with `read`."""

        def apply(b: CoreBuilder, op: Operation) -> list[SSAValue]:
            for name, want in self.requires.items():
                got = read(op, name)
                if got != want:
                    raise LoweringError(f"{name} = {got!r} is not supported (only {want!r})")
            result = op.results[0].type
            values = [read(op, name) for name in self.operands]
            element = (
                element_of(result)
                if self.kind != "compare"
                else promoted([v for v in values if isinstance(v, SSAValue)])
            )
            operands = [
                _as_tensor(b, v, element, name)
                for v, name in zip(values, self.operands, strict=True)
            ]
            like = (
                result if element == element_of(result) else tensor(element, ranked_shape(result))
            )
            operands = b.broadcast_all(operands, like)
            if self.kind == "unary":
                return [b.unary(self.fn, operands[0], result)]
            if self.kind == "binary":
                return [b.binary(self.fn, *operands)]
            return [b.compare(self.fn, *operands)]

        apply.__name__ = f"{self.kind}_{self.fn}"
        apply.__doc__ = f"{self.source.name} → core.{self.kind} {self.fn} (a rule)"
        return apply


def promoted(values: Sequence[SSAValue]) -> Attribute:
    """The element type operands of mixed types meet in: the widest float, else the widest int."""
    elements = [element_of(v.type) for v in values]
    if not elements:
        raise LoweringError("a comparison needs a tensor operand")
    floats = [e for e in elements if isinstance(e, AnyFloat)]
    pool = floats or elements

    def width(e: Attribute) -> int:
        if isinstance(e, IntegerType):
            return e.width.data
        return getattr(e, "bitwidth", 32)

    return max(pool, key=width)


def _as_tensor(b: CoreBuilder, value: object, element: Attribute, name: str) -> SSAValue:
    if isinstance(value, SSAValue):
        return value if element_of(value.type) == element else b.cast(value, element)
    if isinstance(value, bool | int | float):
        return b.scalar(value, element)
    raise LoweringError(f"operand '{name}' is {value!r}, not a tensor or a number")


def install(table: HandlerTable, rules: Sequence[Elementwise], read: Reader) -> None:
    """Register the handler of every rule in `table` (one per source op)."""
    for rule in rules:
        table.add(rule.source, rule.handler(read))


__all__ = ["KINDS", "Elementwise", "Reader", "install", "promoted"]
