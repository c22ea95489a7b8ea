"""The kernel dialect: buffers, loop nests over them, loads and stores.

This is the last level before C. Tensors have become buffers (builtin
`memref` types, always contiguous and row-major), every buffer is allocated
explicitly, and every computation is a loop nest whose body loads scalars,
computes with xDSL's `arith` and `math` ops and stores them.

    %y = kernel.alloc(%n) : memref<?x64xf32>
    kernel.loop (%i, %j) in (%n, 64) [parallel, parallel] {
      %a = kernel.load %x[%i, %j] : memref<?x64xf32>
      %r = arith.maximumf %a, %zero : f32
      kernel.store %r, %y[%i, %j] : memref<?x64xf32>
    }
    %s = kernel.loop (%k) in (64) [reduction] iter_args(%acc = %zero : f32) -> f32 {
      %a = kernel.load %x[%c0, %k] : memref<?x64xf32>
      %t = arith.addf %acc, %a : f32
      kernel.yield %t : f32
    }

Why these choices:
- One `kernel.loop` op holds a whole nest, each dim marked `parallel` or
  `reduction`, so tiling, interchange and OpenMP decisions look at one op
  rather than rediscovering a nest from nested single loops. Bounds are static
  numbers or index values (run-time sizes); loops count from 0 with a static
  step.
- Scalars carry their element type unchanged (`ui8` stays `ui8`), so C code
  generation picks the C type, and signedness, from the value's type.
- Buffers are contiguous, so a reshape is a `kernel.view` of the same storage
  and costs nothing; the memory plan treats a view as a use of its source.
- `kernel.alloc` has an `offset` once the memory plan has placed it in the
  scratch arena; buffers of run-time size are heap allocations instead.
- Hot ops may stay whole as microkernel ops (`kernel.matmul`) or library
  calls (`kernel.call`), implemented in the C runtime header.
- A run-time check is xDSL's `cf.assert`: a false condition ends the run
  with its message; `kernel.check` does the same and quotes the bad value.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    TensorType,
    UnitAttr,
    i32,
    i64,
)
from xdsl.ir import Attribute, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    AnyAttr,
    AttrSizedOperandSegments,
    BaseAttr,
    EqAttrConstraint,
    IRDLOperation,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import (
    IsTerminator,
    MemoryAllocEffect,
    MemoryFreeEffect,
    MemoryReadEffect,
    MemoryWriteEffect,
    Pure,
    RecursiveMemoryEffect,
)
from xdsl.utils.exceptions import VerifyException

from rung.dialects.core import ints, ints_of  # one spelling of array<i64> properties
from rung.dialects.kernel_values import VALUE_OPS, VALUE_TYPES  # lists, optionals, strings
from rung.dialects.onnx.types import StringTensorAttr


def memref_type(element: Attribute, shape: Sequence[int]) -> MemRefType[Attribute]:
    """`memref<shape x element>`, made once per distinct type: xDSL checks the shape's
    type on every `MemRefType(...)`, a tenth of lowering a large model to kernel."""
    return _memref_type(element, tuple(shape))


@functools.lru_cache(maxsize=1 << 14)
def _memref_type(element: Attribute, shape: tuple[int, ...]) -> MemRefType[Attribute]:
    return MemRefType(element, shape)


def _build(
    op: Operation,
    operands: Sequence[SSAValue],
    result_types: Sequence[Attribute],
    properties: dict[str, Attribute] | None = None,
    regions: Sequence[Region] = (),
) -> None:
    """Initialize one of the hot ops of this dialect (loads, stores, loops, buffers) from
    its flat operand list: what IRDL's generic builder does for them, without matching the
    arguments against the definition, which took half the time of lowering to kernel.
    The verifier still checks every op the lowering builds."""
    Operation.__init__(
        op,
        operands=operands,
        result_types=result_types,
        properties=properties or {},
        regions=regions,
    )


@functools.lru_cache(maxsize=1024)
def _segments(*sizes: int) -> DenseArrayBase:
    return DenseArrayBase.from_list(i32, list(sizes))


def _kinds(iterators: ArrayAttr[StringAttr]) -> tuple[str, ...]:
    """A loop's dim kinds, read once per distinct attribute (loops ask for them often; see
    `core.ints_of` for why by identity)."""
    hit = _KINDS.get(id(iterators))
    if hit is not None and hit[0] is iterators:
        return hit[1]
    kinds = tuple(k.data for k in iterators.data)
    if len(_KINDS) >= 1 << 12:
        _KINDS.clear()
    _KINDS[id(iterators)] = (iterators, kinds)
    return kinds


_KINDS: dict[int, tuple[ArrayAttr[StringAttr], tuple[str, ...]]] = {}


@functools.lru_cache(maxsize=256)
def _iterators(kinds: tuple[str, ...]) -> ArrayAttr[StringAttr]:
    return ArrayAttr([StringAttr(k) for k in kinds])


DYNAMIC = -1
"""A loop bound known only at run time (in `static_bounds`). Buffer dims use
the builtin `?` (any negative number from `get_shape()`)."""

ITERATORS = ("parallel", "reduction")


def _memref(op: Operation, value: SSAValue, what: str) -> MemRefType:
    if not isinstance(value.type, MemRefType):
        raise VerifyException(f"{op.name}: {what} must be a memref, got {value.type}")
    return value.type


def _check_indices(op: Operation, buffer: MemRefType, indices: Sequence[SSAValue]) -> None:
    rank = len(buffer.get_shape())
    if len(indices) != rank:
        raise VerifyException(
            f"{op.name}: {len(indices)} indices for a buffer of rank {rank} ({buffer})"
        )
    for i, v in enumerate(indices):
        if not isinstance(v.type, IndexType):
            raise VerifyException(f"{op.name}: index {i} has type {v.type}, expected index")


def _print_memref_suffix(printer: Printer, op: Operation, types: Sequence[Attribute]) -> None:
    printer.print_string(" : ")
    printer.print_list(types, printer.print_attribute)


def _parse_index_list(parser: Parser, delim: Parser.Delimiter) -> list[UnresolvedOperand]:
    return parser.parse_comma_separated_list(delim, parser.parse_unresolved_operand)


# ---- buffers -------------------------------------------------------------------------------


@irdl_op_definition
class AllocOp(IRDLOperation):
    """A new buffer; one index operand per `?` dim, in order.

    `offset` (bytes into the scratch arena) is set by the memory plan; an
    alloc without one is a heap allocation, released by `kernel.dealloc` or
    at the end of the run.
    """

    name = "kernel.alloc"

    dynamic_sizes = var_operand_def(IndexType)
    result = result_def(MemRefType)
    offset = opt_prop_def(IntegerAttr)
    traits = traits_def(MemoryAllocEffect())

    def __init__(self, type: MemRefType, dynamic_sizes: Sequence[SSAValue] = ()) -> None:
        _build(self, [*dynamic_sizes], [type])

    def verify_(self) -> None:
        dynamic = sum(1 for d in self.result.type.get_shape() if d < 0)
        if dynamic != len(self.dynamic_sizes):
            raise VerifyException(
                f"kernel.alloc: {self.result.type} has {dynamic} dynamic dims but "
                f"{len(self.dynamic_sizes)} sizes are given"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string("(")
        printer.print_list(self.dynamic_sizes, printer.print_ssa_value)
        printer.print_string(")")
        if self.offset is not None or self.attributes:
            printer.print_string(" ")
            printer.print_attr_dict({**self.properties, **self.attributes})
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> AllocOp:
        sizes = _parse_index_list(parser, parser.Delimiter.PAREN)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        type = parser.parse_type()
        operands = parser.resolve_operands(sizes, [IndexType()] * len(sizes), parser.pos)
        op = cls.create(operands=operands, result_types=[type])
        if "offset" in attrs:
            op.properties["offset"] = attrs.pop("offset")
        op.attributes.update(attrs)
        return op


@irdl_op_definition
class DeallocOp(IRDLOperation):
    """Releases a heap buffer after its last use."""

    name = "kernel.dealloc"

    buffer = operand_def(MemRefType)
    traits = traits_def(MemoryFreeEffect())
    assembly_format = "$buffer attr-dict `:` type($buffer)"

    def __init__(self, buffer: SSAValue) -> None:
        super().__init__(operands=[buffer])


@irdl_op_definition
class ConstantOp(IRDLOperation):
    """A read-only buffer holding a constant (weights): dense or resource data.

    Code generation keeps small constants in the C source and puts large ones
    in the side file of weights.
    """

    name = "kernel.constant"

    value = prop_def(AnyAttr())
    result = result_def(MemRefType)
    traits = traits_def(Pure())

    def __init__(self, value: Attribute, type: MemRefType) -> None:
        super().__init__(properties={"value": value}, result_types=[type])

    def verify_(self) -> None:
        if not isinstance(
            self.value, DenseIntOrFPElementsAttr | DenseResourceAttr | StringTensorAttr
        ):
            raise VerifyException(f"kernel.constant: unsupported value {self.value}")
        vt = self.value.type
        rt = self.result.type
        if tuple(vt.get_shape()) != tuple(rt.get_shape()) or vt.element_type != rt.element_type:  # type: ignore[attr-defined]
            raise VerifyException(f"kernel.constant: value of type {vt} for a buffer {rt}")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.value)

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        pos = parser.pos
        value = parser.parse_attribute()
        vt = getattr(value, "type", None)
        if not isinstance(vt, TensorType):
            parser.raise_error("kernel.constant: expected a dense or dense_resource value", pos)
        return cls(value, memref_type(vt.element_type, vt.get_shape()))


@irdl_op_definition
class DimOp(IRDLOperation):
    """The run-time size of one dim of a buffer."""

    name = "kernel.dim"

    buffer = operand_def(MemRefType)
    dim = prop_def(IntegerAttr)
    result = result_def(IndexType)
    traits = traits_def(Pure())

    def __init__(self, buffer: SSAValue, dim: int) -> None:
        super().__init__(
            operands=[buffer], properties={"dim": IntegerAttr(dim, i64)}, result_types=[IndexType()]
        )

    def verify_(self) -> None:
        rank = len(_memref(self, self.buffer, "the operand").get_shape())
        if not 0 <= self.dim.value.data < rank:
            raise VerifyException(f"kernel.dim: dim {self.dim.value.data} of a rank-{rank} buffer")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.buffer)
        printer.print_string(f"[{self.dim.value.data}] : ")
        printer.print_attribute(self.buffer.type)

    @classmethod
    def parse(cls, parser: Parser) -> DimOp:
        buffer = parser.parse_unresolved_operand()
        parser.parse_punctuation("[")
        dim = parser.parse_integer()
        parser.parse_punctuation("]")
        parser.parse_punctuation(":")
        type = parser.parse_type()
        return cls(parser.resolve_operand(buffer, type), dim)


@irdl_op_definition
class ViewOp(IRDLOperation):
    """The same storage seen with another shape (a free reshape); `?` dims as operands."""

    name = "kernel.view"

    source = operand_def(MemRefType)
    dynamic_sizes = var_operand_def(IndexType)
    result = result_def(MemRefType)
    traits = traits_def(Pure())

    def __init__(
        self, source: SSAValue, type: MemRefType, dynamic_sizes: Sequence[SSAValue] = ()
    ) -> None:
        _build(self, [source, *dynamic_sizes], [type])

    def verify_(self) -> None:
        src = _memref(self, self.source, "the source")
        out = self.result.type
        if src.element_type != out.element_type:
            raise VerifyException("kernel.view: element types differ")
        dynamic = sum(1 for d in out.get_shape() if d < 0)
        if dynamic != len(self.dynamic_sizes):
            raise VerifyException(
                f"kernel.view: {out} has {dynamic} dynamic dims but "
                f"{len(self.dynamic_sizes)} sizes are given"
            )
        a, b = src.get_shape(), out.get_shape()
        if all(d >= 0 for d in (*a, *b)):
            na = nb = 1
            for d in a:
                na *= d
            for d in b:
                nb *= d
            if na != nb:
                raise VerifyException(f"kernel.view: {src} has {na} elements, {out} has {nb}")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.source)
        printer.print_string("(")
        printer.print_list(self.dynamic_sizes, printer.print_ssa_value)
        printer.print_string(") : ")
        printer.print_attribute(self.source.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> ViewOp:
        source = parser.parse_unresolved_operand()
        sizes = _parse_index_list(parser, parser.Delimiter.PAREN)
        parser.parse_punctuation(":")
        src_type = parser.parse_type()
        parser.parse_punctuation("->")
        type = parser.parse_type()
        return cls(
            parser.resolve_operand(source, src_type),
            type,  # type: ignore[arg-type]
            parser.resolve_operands(sizes, [IndexType()] * len(sizes), parser.pos),
        )


@irdl_op_definition
class SubviewOp(IRDLOperation):
    """The slab of a buffer at fixed leading indices, sharing its storage.

    `%row = kernel.subview %buf[%i] : memref<5x3x4xf32> -> memref<3x4xf32>` is
    row `i` of `buf`: writing it writes `buf` (a loop fills the rows of its
    stacked outputs this way). The result's dims are the source's trailing
    dims, static or `?` alike, so the op needs no sizes of its own.
    """

    name = "kernel.subview"

    source = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    result = result_def(MemRefType)
    traits = traits_def(Pure())

    def __init__(
        self, source: SSAValue, indices: Sequence[SSAValue], type: MemRefType | None = None
    ) -> None:
        if type is None:
            src = source.type
            assert isinstance(src, MemRefType)
            type = memref_type(src.element_type, src.get_shape()[len(indices) :])
        super().__init__(operands=[source, list(indices)], result_types=[type])

    def verify_(self) -> None:
        src = _memref(self, self.source, "the source")
        out = self.result.type
        if src.element_type != out.element_type:
            raise VerifyException("kernel.subview: element types differ")
        shape, n = src.get_shape(), len(self.indices)
        if n > len(shape):
            raise VerifyException(f"kernel.subview: {n} indices for a buffer of rank {len(shape)}")
        for i, v in enumerate(self.indices):
            if not isinstance(v.type, IndexType):
                raise VerifyException(
                    f"kernel.subview: index {i} has type {v.type}, expected index"
                )
        if tuple(out.get_shape()) != tuple(shape[n:]):
            raise VerifyException(
                f"kernel.subview: the slab of {src} at {n} leading "
                f"{'index' if n == 1 else 'indices'} is "
                f"{MemRefType(src.element_type, shape[n:])}, not {out}"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.source)
        printer.print_string("[")
        printer.print_list(self.indices, printer.print_ssa_value)
        printer.print_string("] : ")
        printer.print_attribute(self.source.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> SubviewOp:
        source = parser.parse_unresolved_operand()
        indices = _parse_index_list(parser, parser.Delimiter.SQUARE)
        parser.parse_punctuation(":")
        src_type = parser.parse_type()
        parser.parse_punctuation("->")
        type = parser.parse_type()
        return cls(
            parser.resolve_operand(source, src_type),
            parser.resolve_operands(indices, [IndexType()] * len(indices), parser.pos),
            type,  # type: ignore[arg-type]
        )


@irdl_op_definition
class CopyOp(IRDLOperation):
    """Copies every element of `source` into `target` (same element type and count)."""

    name = "kernel.copy"

    source = operand_def(MemRefType)
    target = operand_def(MemRefType)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = "$source `,` $target attr-dict `:` type($source) `,` type($target)"

    def __init__(self, source: SSAValue, target: SSAValue) -> None:
        super().__init__(operands=[source, target])

    def verify_(self) -> None:
        a = _memref(self, self.source, "the source")
        b = _memref(self, self.target, "the target")
        if a.element_type != b.element_type:
            raise VerifyException("kernel.copy: element types differ")


# ---- loads, stores and loops -----------------------------------------------------------------


@irdl_op_definition
class LoadOp(IRDLOperation):
    """One element of a buffer; indices must be in range."""

    name = "kernel.load"

    buffer = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    result = result_def()
    traits = traits_def(MemoryReadEffect())

    def __init__(self, buffer: SSAValue, indices: Sequence[SSAValue]) -> None:
        assert isinstance(buffer.type, MemRefType)
        _build(self, [buffer, *indices], [buffer.type.element_type])

    def verify_(self) -> None:
        t = _memref(self, self.buffer, "the buffer")
        _check_indices(self, t, self.indices)
        if self.result.type != t.element_type:
            raise VerifyException(
                f"kernel.load: result type {self.result.type} is not the element type of {t}"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.buffer)
        printer.print_string("[")
        printer.print_list(self.indices, printer.print_ssa_value)
        printer.print_string("] : ")
        printer.print_attribute(self.buffer.type)

    @classmethod
    def parse(cls, parser: Parser) -> LoadOp:
        buffer = parser.parse_unresolved_operand()
        indices = _parse_index_list(parser, parser.Delimiter.SQUARE)
        parser.parse_punctuation(":")
        type = parser.parse_type()
        return cls(
            parser.resolve_operand(buffer, type),
            parser.resolve_operands(indices, [IndexType()] * len(indices), parser.pos),
        )


@irdl_op_definition
class StoreOp(IRDLOperation):
    """Writes one element of a buffer."""

    name = "kernel.store"

    value = operand_def()
    buffer = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    traits = traits_def(MemoryWriteEffect())

    def __init__(self, value: SSAValue, buffer: SSAValue, indices: Sequence[SSAValue]) -> None:
        _build(self, [value, buffer, *indices], [])

    def verify_(self) -> None:
        t = _memref(self, self.buffer, "the buffer")
        _check_indices(self, t, self.indices)
        if self.value.type != t.element_type:
            raise VerifyException(
                f"kernel.store: value of type {self.value.type} into a buffer of {t.element_type}"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.value)
        printer.print_string(", ")
        printer.print_ssa_value(self.buffer)
        printer.print_string("[")
        printer.print_list(self.indices, printer.print_ssa_value)
        printer.print_string("] : ")
        printer.print_attribute(self.buffer.type)

    @classmethod
    def parse(cls, parser: Parser) -> StoreOp:
        value = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        buffer = parser.parse_unresolved_operand()
        indices = _parse_index_list(parser, parser.Delimiter.SQUARE)
        parser.parse_punctuation(":")
        type = parser.parse_type()
        assert isinstance(type, MemRefType)
        return cls(
            parser.resolve_operand(value, type.element_type),
            parser.resolve_operand(buffer, type),
            parser.resolve_operands(indices, [IndexType()] * len(indices), parser.pos),
        )


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends a loop body: the next values of the loop's `iter_args`."""

    name = "kernel.yield"

    values = var_operand_def()
    traits = traits_def(IsTerminator(), Pure())

    def __init__(self, values: Sequence[SSAValue] = ()) -> None:
        _build(self, [*values], [])

    def print(self, printer: Printer) -> None:
        if self.values:
            printer.print_string(" ")
            printer.print_list(self.values, printer.print_ssa_value)
            printer.print_string(" : ")
            printer.print_list([v.type for v in self.values], printer.print_attribute)

    @classmethod
    def parse(cls, parser: Parser) -> YieldOp:
        names = parser.parse_optional_undelimited_comma_separated_list(
            parser.parse_optional_unresolved_operand, parser.parse_unresolved_operand
        )
        if not names:
            return cls()
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        return cls(parser.resolve_operands(names, types, parser.pos))


@irdl_op_definition
class LoopOp(IRDLOperation):
    """A loop nest: dim d runs its index from 0 below `bound[d]` by `step[d]`.

    Bounds are static (`static_bounds[d] >= 0`) or taken in order from the
    `dynamic_bounds` operands (`static_bounds[d] == -1`). Each dim is marked
    `parallel` (iterations independent) or `reduction`. The body's arguments
    are the dims' indices, then the `iter_args`, which the body's
    `kernel.yield` updates and the op returns; a nest with `iter_args` has
    only reduction dims. Iterations run in row-major order of the dims. `omp` asks code generation for a parallel loop over the
    outermost dim.
    """

    name = "kernel.loop"

    dynamic_bounds = var_operand_def(IndexType)
    inits = var_operand_def()
    static_bounds = prop_def(DenseArrayBase)
    steps = prop_def(DenseArrayBase)
    iterators = prop_def(ArrayAttr[StringAttr])
    omp = opt_prop_def(UnitAttr)
    results_ = var_result_def()
    body = region_def("single_block")
    traits = traits_def(RecursiveMemoryEffect())

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        bounds: Sequence[int | SSAValue],
        iterators: Sequence[str],
        body: Region,
        inits: Sequence[SSAValue] = (),
        steps: Sequence[int] | None = None,
    ) -> None:
        static = [b if isinstance(b, int) else DYNAMIC for b in bounds]
        dynamic = [b for b in bounds if not isinstance(b, int)]
        _build(
            self,
            [*dynamic, *inits],
            [v.type for v in inits],
            {
                "static_bounds": ints(static),
                "steps": ints(steps if steps is not None else [1] * len(bounds)),
                "iterators": _iterators(tuple(iterators)),
                "operandSegmentSizes": _segments(len(dynamic), len(inits)),
            },
            [body],
        )

    @property
    def rank(self) -> int:
        return len(_kinds(self.properties["iterators"]))  # type: ignore[arg-type]

    @property
    def kinds(self) -> tuple[str, ...]:
        return _kinds(self.properties["iterators"])  # type: ignore[arg-type]

    def bounds(self) -> list[int | SSAValue]:
        """Each dim's bound: a number, or the index value giving it at run time."""
        static = ints_of(self.properties["static_bounds"])
        if DYNAMIC not in static:
            return list(static)
        dynamic = iter(self.operands)  # the dynamic bounds are the first operands
        return [next(dynamic) if b == DYNAMIC else b for b in static]

    @property
    def step_sizes(self) -> tuple[int, ...]:
        return ints_of(self.properties["steps"])

    @property
    def ivs(self) -> tuple[SSAValue, ...]:
        return tuple(self.regions[0].blocks[0].args[: self.rank])

    @property
    def iter_args(self) -> tuple[SSAValue, ...]:
        return tuple(self.regions[0].blocks[0].args[self.rank :])

    def verify_(self) -> None:
        static = ints_of(self.static_bounds)
        rank = len(self.iterators.data)
        if len(static) != rank or len(ints_of(self.steps)) != rank:
            raise VerifyException(
                f"kernel.loop: {rank} iterators but {len(static)} bounds and "
                f"{len(ints_of(self.steps))} steps"
            )
        if rank == 0:
            raise VerifyException("kernel.loop: needs at least one dim")
        if sum(1 for b in static if b == DYNAMIC) != len(self.dynamic_bounds):
            raise VerifyException("kernel.loop: dynamic bounds do not match the `?` bounds")
        if any(b < DYNAMIC for b in static) or any(s <= 0 for s in ints_of(self.steps)):
            raise VerifyException("kernel.loop: bounds must be >= 0 and steps > 0")
        for k in self.kinds:
            if k not in ITERATORS:
                raise VerifyException(f"kernel.loop: unknown iterator '{k}'")
        block = self.body.block
        expect = [IndexType()] * rank + [v.type for v in self.inits]
        if [a.type for a in block.args] != expect:
            raise VerifyException(
                f"kernel.loop: body arguments must be {rank} indices then the iter_args' types"
            )
        if [r.type for r in self.results] != [v.type for v in self.inits]:
            raise VerifyException("kernel.loop: results must have the iter_args' types")
        term = block.last_op
        if not isinstance(term, YieldOp):
            raise VerifyException("kernel.loop: the body must end with kernel.yield")
        if [v.type for v in term.values] != [v.type for v in self.inits]:
            raise VerifyException("kernel.loop: kernel.yield must give the iter_args' types")
        if self.inits and any(k != "reduction" for k in self.kinds):
            raise VerifyException(
                "kernel.loop: a nest with iter_args must have only reduction dims (nest a "
                "reduction loop inside a parallel one)"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" (")
        printer.print_list(self.ivs, printer.print_ssa_value)
        printer.print_string(") in (")
        printer.print_list(
            self.bounds(),
            lambda b: (
                printer.print_string(str(b)) if isinstance(b, int) else printer.print_ssa_value(b)
            ),
        )
        printer.print_string(")")
        if any(s != 1 for s in self.step_sizes):
            printer.print_string(" step (" + ", ".join(map(str, self.step_sizes)) + ")")
        printer.print_string(" [" + ", ".join(self.kinds) + "]")
        if self.inits:
            printer.print_string(" iter_args(")
            for i, (arg, init) in enumerate(zip(self.iter_args, self.inits, strict=True)):
                if i:
                    printer.print_string(", ")
                printer.print_ssa_value(arg)
                printer.print_string(" = ")
                printer.print_ssa_value(init)
                printer.print_string(" : ")
                printer.print_attribute(init.type)
            printer.print_string(") -> ")
            printer.print_list([r.type for r in self.results], printer.print_attribute)
        if self.omp is not None or self.attributes:
            extra: dict[str, Attribute] = dict(self.attributes)
            if self.omp is not None:
                extra["omp"] = self.omp
            printer.print_string(" attributes ")
            printer.print_attr_dict(extra)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    @classmethod
    def parse(cls, parser: Parser) -> LoopOp:
        ivs = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, lambda: parser.parse_argument(expect_type=False)
        )
        parser.parse_keyword("in")

        def bound() -> int | SSAValue:
            number = parser.parse_optional_integer()
            if number is not None:
                return number
            return parser.resolve_operand(parser.parse_unresolved_operand(), IndexType())

        bounds = parser.parse_comma_separated_list(parser.Delimiter.PAREN, bound)
        steps = None
        if parser.parse_optional_keyword("step") is not None:
            steps = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_integer)
        kinds = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, lambda: parser.parse_identifier("(parallel or reduction)")
        )
        iter_args = []
        inits: list[SSAValue] = []
        if parser.parse_optional_keyword("iter_args") is not None:

            def one() -> None:
                arg = parser.parse_argument(expect_type=False)
                parser.parse_punctuation("=")
                init = parser.parse_unresolved_operand()
                parser.parse_punctuation(":")
                t = parser.parse_type()
                iter_args.append(arg.resolve(t))
                inits.append(parser.resolve_operand(init, t))

            parser.parse_comma_separated_list(parser.Delimiter.PAREN, one)
            parser.parse_punctuation("->")
            parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        extra = {}
        if parser.parse_optional_keyword("attributes") is not None:
            extra = parser.parse_optional_attr_dict()
        args = [iv.resolve(IndexType()) for iv in ivs] + iter_args
        body = parser.parse_region(args)
        op = cls(bounds, kinds, body, inits, steps)
        if "omp" in extra:
            op.properties["omp"] = extra.pop("omp")
        op.attributes.update(extra)
        return op


@irdl_op_definition
class RemFOp(IRDLOperation):
    """Float remainder with the dividend's sign (C's `fmod`); xDSL's arith has no `remf`."""

    name = "kernel.remf"

    T: ClassVar = VarConstraint("T", AnyAttr())
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($result)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue) -> None:
        super().__init__(operands=[lhs, rhs], result_types=[lhs.type])


# ---- microkernels and library calls ---------------------------------------------------------


def print_epilogue(
    printer: Printer, epilogue: ArrayAttr[StringAttr] | None, args: Sequence[SSAValue]
) -> None:
    """` epilogue ["mul:row" %s, "max:scalar" %z]`, or nothing without steps: the syntax
    `kernel.matmul` and `kernel.call` share."""
    if epilogue is None or not epilogue.data:
        return
    printer.print_string(" epilogue [")
    for i, (step, v) in enumerate(zip(epilogue.data, args, strict=True)):
        printer.print_string(", " if i else "")
        printer.print_string(f'"{step.data}" ')
        printer.print_ssa_value(v)
    printer.print_string("]")


def parse_epilogue(parser: Parser) -> list[tuple[str, UnresolvedOperand]]:
    """The steps after an optional `epilogue` keyword, each with its buffer."""
    if parser.parse_optional_keyword("epilogue") is None:
        return []

    def step() -> tuple[str, UnresolvedOperand]:
        return parser.parse_str_literal(), parser.parse_unresolved_operand()

    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, step)


@irdl_op_definition
class MatmulOp(IRDLOperation):
    """`out[b] (+)= lhs[b] @ rhs[b]` on rank-3 f32 buffers `[B, M, K] x [B, K, N] -> [B, M, N]`.

    A batch dim of 1 on `lhs` or `rhs` is shared by every batch. With
    `accumulate` the product is added to what `out` holds. With
    `transpose_rhs` the right operand is stored transposed, `[B, N, K]` (a
    Gemm's transB, or K^T in attention), and read that way rather than being
    transposed into a buffer first. It is implemented by a packed,
    register-blocked microkernel in the C runtime (`rung_gemm.h`).

    An `epilogue` (batch 1 only) then updates each element `x = out[0, i, j]`,
    one step after another, each with its own f32 buffer of `epilogue_args`:
    `x = x <op> v` (`add`, `mul`, `sub`, `div`, `max`, `min`: `arith.addf` ...
    `arith.maximumf`, `arith.minimumf`) or, for `rsub`, `rdiv`, `rmax`, `rmin`,
    `v <op> x`, with `v` read per row (`:row`, M elements, `v[i]`), per column
    (`:col`, N elements), per element (`:full`, M x N elements, `out`'s own
    layout) or once (`:scalar`, one element). The microkernel applies it to each
    tile of `out` while the tile is in cache (`kernel-fuse-matmul-epilogue`):

        kernel.matmul %a, %b, %c epilogue ["mul:row" %s, "max:scalar" %zero]
            : memref<1x64x32xf32>, memref<1x32x784xf32>, memref<1x64x784xf32>,
              memref<64xf32>, memref<f32>

    An `activation` (one of `ACTIVATIONS`, batch 1 only) follows the steps on
    each element, in the order of operations of the nest it replaces: `silu` is
    `x * (1 / (1 + exp(-x)))`, `gelu` `x * (erf(x / sqrt(2)) + 1) * 0.5` (sqrt(2)
    as a float), `hardswish` `x * max(min(x * (1/6) + 0.5, 1), 0)` (NaN-propagating
    min and max). It prints in the attribute dictionary, `{activation = "silu"}`.
    """

    name = "kernel.matmul"

    lhs = operand_def(MemRefType)
    rhs = operand_def(MemRefType)
    out = operand_def(MemRefType)
    epilogue_args = var_operand_def(MemRefType)
    accumulate = opt_prop_def(UnitAttr)
    transpose_rhs = opt_prop_def(UnitAttr)
    epilogue = opt_prop_def(ArrayAttr[StringAttr])
    activation = opt_prop_def(StringAttr)

    ACTIVATIONS: ClassVar[tuple[str, ...]] = ("silu", "gelu", "hardswish")
    """In the order of the C runtime's `RUNG_ACT_*` codes, after `RUNG_ACT_NONE`."""
    EPILOGUE_OPS: ClassVar[tuple[str, ...]] = (
        "add", "mul", "sub", "rsub", "div", "rdiv", "max", "rmax", "min", "rmin",
    )  # fmt: skip
    """In the order of the C runtime's `RUNG_EP_*` step codes."""
    EPILOGUE_INDEX: ClassVar[tuple[str, ...]] = ("scalar", "row", "col", "full")
    EPILOGUE_STEPS: ClassVar[int] = 8
    """`RUNG_EP_STEPS` of `rung_gemm.h`."""

    def __init__(
        self,
        lhs: SSAValue,
        rhs: SSAValue,
        out: SSAValue,
        accumulate: bool = False,
        transpose_rhs: bool = False,
        epilogue: Sequence[tuple[str, SSAValue]] = (),
        activation: str | None = None,
    ) -> None:
        props: dict[str, Attribute] = {}
        if accumulate:
            props["accumulate"] = UnitAttr()
        if transpose_rhs:
            props["transpose_rhs"] = UnitAttr()
        if epilogue:
            props["epilogue"] = ArrayAttr([StringAttr(step) for step, _ in epilogue])
        if activation is not None:
            props["activation"] = StringAttr(activation)
        super().__init__(operands=[lhs, rhs, out, [v for _, v in epilogue]], properties=props)

    def steps(self) -> list[tuple[str, str]]:
        """The epilogue's steps as (op, index kind) pairs."""
        if self.epilogue is None:
            return []
        return [tuple(s.data.split(":", 1)) for s in self.epilogue.data]  # type: ignore[misc]

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list([self.lhs, self.rhs, self.out], printer.print_ssa_value)
        print_epilogue(printer, self.epilogue, self.epilogue_args)
        flags = {k: v for k, v in self.properties.items() if k in MATMUL_FLAGS}
        if flags or self.attributes:
            printer.print_string(" ")
            printer.print_attr_dict({**flags, **self.attributes})
        printer.print_string(" : ")
        printer.print_list([v.type for v in self.operands], printer.print_attribute)

    @classmethod
    def parse(cls, parser: Parser) -> MatmulOp:
        names = parser.parse_comma_separated_list(
            parser.Delimiter.NONE, parser.parse_unresolved_operand
        )
        steps = parse_epilogue(parser)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        if len(names) != 3 or len(types) != 3 + len(steps):
            parser.raise_error(
                "kernel.matmul takes lhs, rhs and out, a type for each, and one for each "
                "epilogue buffer"
            )
        values = parser.resolve_operands([*names, *(v for _, v in steps)], types, parser.pos)
        op = cls(
            values[0],
            values[1],
            values[2],
            accumulate="accumulate" in attrs,
            transpose_rhs="transpose_rhs" in attrs,
            epilogue=[(name, v) for (name, _), v in zip(steps, values[3:], strict=True)],
            activation=_activation(parser, attrs),
        )
        op.attributes.update({k: v for k, v in attrs.items() if k not in MATMUL_FLAGS})
        return op

    def verify_(self) -> None:
        types = [
            _memref(self, v, what)
            for v, what in ((self.lhs, "lhs"), (self.rhs, "rhs"), (self.out, "out"))
        ]
        a, b, c = (t.get_shape() for t in types)
        if not len(a) == len(b) == len(c) == 3:
            raise VerifyException("kernel.matmul: operands must be rank-3 buffers [B, M, K]")
        if any(t.element_type != Float32Type() for t in types):
            raise VerifyException("kernel.matmul: operands must be f32 buffers")
        k, n = (b[2], b[1]) if self.transpose_rhs is not None else (b[1], b[2])

        def ok(x: int, y: int) -> bool:
            return x < 0 or y < 0 or x == y

        if not (ok(a[2], k) and ok(a[1], c[1]) and ok(n, c[2])):
            raise VerifyException(f"kernel.matmul: shapes {a} x {b} -> {c} do not agree")
        for x in (a[0], b[0]):
            if x != 1 and not ok(x, c[0]):
                raise VerifyException(f"kernel.matmul: batch {x} for a result batch {c[0]}")
        self._verify_epilogue(c)

    def _verify_epilogue(self, c: Sequence[int]) -> None:
        steps = [s.data for s in self.epilogue.data] if self.epilogue is not None else []
        verify_epilogue(self, steps, list(self.epilogue_args), c)
        verify_activation(self, self.activation, c)


MATMUL_FLAGS = ("accumulate", "transpose_rhs", "activation")
"""The properties `kernel.matmul` prints in its attribute dictionary."""


def _activation(parser: Parser, attrs: dict[str, Attribute]) -> str | None:
    """The `activation` of a parsed attribute dictionary, a string if there is one."""
    value = attrs.get("activation")
    if value is None:
        return None
    if not isinstance(value, StringAttr):
        parser.raise_error("activation must be a string, one of " + ", ".join(MatmulOp.ACTIVATIONS))
    return value.data


def verify_activation(op: Operation, activation: StringAttr | None, product: Sequence[int]) -> None:
    """An activation is one of `MatmulOp.ACTIVATIONS`, on a product of batch 1."""
    if activation is None:
        return
    if activation.data not in MatmulOp.ACTIVATIONS:
        raise VerifyException(
            f"{op.name}: activation '{activation.data}' is not one of "
            f"{', '.join(MatmulOp.ACTIVATIONS)}"
        )
    if product[0] != 1:
        raise VerifyException(f"{op.name}: an activation needs a batch of 1")


def verify_epilogue(
    op: Operation, steps: Sequence[str], args: Sequence[SSAValue], product: Sequence[int]
) -> None:
    """The checks of an epilogue on a product of sizes `product`, [batch, M, N]: one f32
    buffer per step, each step `<op>:<index>`, at most `MatmulOp.EPILOGUE_STEPS` steps, a
    batch of 1, and each buffer as large as its index kind says."""
    if len(steps) != len(args):
        raise VerifyException(f"{op.name}: one epilogue buffer per epilogue step")
    if not steps:
        return
    if len(steps) > MatmulOp.EPILOGUE_STEPS:
        raise VerifyException(f"{op.name}: at most {MatmulOp.EPILOGUE_STEPS} epilogue steps")
    if product[0] != 1:
        raise VerifyException(f"{op.name}: an epilogue needs a batch of 1")
    m, n = product[1], product[2]
    for step, v in zip(steps, args, strict=True):
        kind, _, index = step.partition(":")
        if kind not in MatmulOp.EPILOGUE_OPS or index not in MatmulOp.EPILOGUE_INDEX:
            raise VerifyException(
                f"{op.name}: epilogue step '{step}' is not <op>:<index> with op one of "
                f"{', '.join(MatmulOp.EPILOGUE_OPS)} and index one of "
                f"{', '.join(MatmulOp.EPILOGUE_INDEX)}"
            )
        t = _memref(op, v, "an epilogue buffer")
        if t.element_type != Float32Type():
            raise VerifyException(f"{op.name}: epilogue buffers must be f32")
        shape = t.get_shape()
        want = {"scalar": 1, "row": m, "col": n, "full": m * n if m >= 0 and n >= 0 else -1}
        if all(d >= 0 for d in shape) and want[index] >= 0:
            if math.prod(shape) != want[index]:
                raise VerifyException(
                    f"{op.name}: a '{index}' epilogue buffer of {math.prod(shape)} "
                    f"elements for a {m}x{n} result"
                )


@irdl_op_definition
class CheckOp(IRDLOperation):
    """A run-time check that quotes the bad value: a false `cond` ends the run with
    `message`, then `, got <value>`.

    `cf.assert` covers checks with nothing to quote; this one exists because a
    user fed an index of 7 for a dim of 5 wants to read the 7. `value` is an
    `i64` or an `f64` scalar, so the C code has one format for each.
    """

    name = "kernel.check"

    cond = operand_def(IntegerType(1))
    value = operand_def(EqAttrConstraint(IntegerType(64)) | BaseAttr(Float64Type))
    message = prop_def(StringAttr)

    assembly_format = "$cond `,` $value $message attr-dict `:` type($value)"

    def __init__(self, cond: SSAValue, value: SSAValue, message: str) -> None:
        super().__init__(operands=[cond, value], properties={"message": StringAttr(message)})


@irdl_op_definition
class CallOp(IRDLOperation):
    """A call of a routine of the C runtime (`rung_<callee>`) on buffers.

    For ops whose loops would be long and gain nothing from being generated
    (stable sorts, for example). `args` holds integer parameters; the callee
    receives each buffer as data pointer, rank and sizes.

    A callee of `EPILOGUE_OUT` (the runtime's 2-D convs) also takes an
    `epilogue`, as `kernel.matmul` does, on its output buffer seen as the
    product `[N, O, spatial…]` = `[batch, M, N]`; its buffers come last, after
    the callee's own:

        kernel.call @conv_shift_float(%x, %w, %y) [1, 1, 1, 1, 1, 1, 1]
            epilogue ["add:row" %bias, "max:scalar" %zero] : ...

    and an `activation` after it, as `kernel.matmul` does (`{activation = "silu"}`).
    """

    name = "kernel.call"

    callee = prop_def(StringAttr)
    buffers = var_operand_def(MemRefType)
    args = prop_def(DenseArrayBase)
    epilogue = opt_prop_def(ArrayAttr[StringAttr])
    activation = opt_prop_def(StringAttr)

    EPILOGUE_OUT: ClassVar[dict[str, int]] = {
        "conv_shift_float": 2,
        "conv_rows_float": 2,
        "depthwise_float": 2,
    }
    """The callees that take an epilogue, and the index of the buffer it applies to."""

    SIGNATURES: ClassVar[dict[str, tuple[int, int]]] = {
        "conv_shift_float": (3, 7),
        "conv_rows_float": (3, 8),
        "depthwise_float": (3, 6),
        "nms": (9, 2),
        "sort": (5, 2),
    }
    """The runtime's routines of fixed arity: their own buffers and integer arguments, which
    the C routine reads without counting (`rung_conv_shift_float`'s 7: dilations, low pads,
    groups, strides)."""

    def __init__(
        self,
        callee: str,
        buffers: Sequence[SSAValue],
        args: Sequence[int] = (),
        epilogue: Sequence[tuple[str, SSAValue]] = (),
        activation: str | None = None,
    ) -> None:
        props: dict[str, Attribute] = {"callee": StringAttr(callee), "args": ints(args)}
        if epilogue:
            props["epilogue"] = ArrayAttr([StringAttr(step) for step, _ in epilogue])
        if activation is not None:
            props["activation"] = StringAttr(activation)
        super().__init__(operands=[[*buffers, *(v for _, v in epilogue)]], properties=props)

    def steps(self) -> list[tuple[str, str]]:
        """The epilogue's steps as (op, index kind) pairs."""
        if self.epilogue is None:
            return []
        return [tuple(s.data.split(":", 1)) for s in self.epilogue.data]  # type: ignore[misc]

    @property
    def data_buffers(self) -> Sequence[SSAValue]:
        """The callee's own buffers, without the epilogue's."""
        count = len(self.epilogue.data) if self.epilogue is not None else 0
        return self.buffers[: len(self.buffers) - count]

    @property
    def epilogue_args(self) -> Sequence[SSAValue]:
        """The epilogue's buffers, one per step."""
        count = len(self.epilogue.data) if self.epilogue is not None else 0
        return self.buffers[len(self.buffers) - count :] if count else ()

    def print(self, printer: Printer) -> None:
        printer.print_string(f" @{self.callee.data}(")
        printer.print_list(self.data_buffers, printer.print_ssa_value)
        printer.print_string(")")
        printer.print_string(" [" + ", ".join(map(str, ints_of(self.args))) + "]")
        print_epilogue(printer, self.epilogue, self.epilogue_args)
        shown = dict(self.attributes)
        if self.activation is not None:
            shown = {"activation": self.activation, **shown}
        if shown:
            printer.print_string(" ")
            printer.print_attr_dict(shown)
        printer.print_string(" : ")
        printer.print_list([b.type for b in self.buffers], printer.print_attribute)

    @classmethod
    def parse(cls, parser: Parser) -> CallOp:
        callee = parser.parse_symbol_name().data
        names = _parse_index_list(parser, parser.Delimiter.PAREN)
        args = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)
        steps = parse_epilogue(parser)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        if len(types) != len(names) + len(steps):
            parser.raise_error(
                "kernel.call takes a type for each buffer and one for each epilogue buffer"
            )
        values = parser.resolve_operands([*names, *(v for _, v in steps)], types, parser.pos)
        own = values[: len(names)]
        op = cls(
            callee,
            own,
            args,
            [(name, v) for (name, _), v in zip(steps, values[len(names) :], strict=True)],
            _activation(parser, attrs),
        )
        op.attributes.update({k: v for k, v in attrs.items() if k != "activation"})
        return op

    def verify_(self) -> None:
        arity = self.SIGNATURES.get(self.callee.data)
        if arity is not None:
            buffers, args = arity
            if len(self.data_buffers) != buffers or len(ints_of(self.args)) != args:
                raise VerifyException(
                    f"kernel.call: @{self.callee.data} takes {buffers} buffers and {args} "
                    f"integer arguments, not {len(self.data_buffers)} and "
                    f"{len(ints_of(self.args))}"
                )
        if self.epilogue is None and self.activation is None:
            return
        out = self.EPILOGUE_OUT.get(self.callee.data)
        if out is None:
            raise VerifyException(f"kernel.call: @{self.callee.data} takes no epilogue")
        own = self.data_buffers
        if out >= len(own):
            raise VerifyException(f"kernel.call: @{self.callee.data} needs an output buffer")
        shape = _memref(self, own[out], "the output").get_shape()
        if len(shape) < 2:
            raise VerifyException("kernel.call: an epilogue's output needs a batch and a row dim")
        rest = shape[2:]
        n = -1 if any(d < 0 for d in rest) else math.prod(rest)
        steps = [s.data for s in self.epilogue.data] if self.epilogue is not None else []
        verify_epilogue(self, steps, list(self.epilogue_args), [shape[0], shape[1], n])
        verify_activation(self, self.activation, [shape[0], shape[1], n])


Kernel = Dialect(
    "kernel",
    [
        AllocOp,
        DeallocOp,
        ConstantOp,
        DimOp,
        ViewOp,
        SubviewOp,
        CopyOp,
        LoadOp,
        StoreOp,
        YieldOp,
        LoopOp,
        RemFOp,
        MatmulOp,
        CallOp,
        CheckOp,
        *VALUE_OPS,
    ],
    list(VALUE_TYPES),
)


def _operand_views() -> None:
    """Read the operands of the hot ops by position.

    IRDL's generic accessors (`op.indices`, `op.buffer`, ...) work out each operand
    group's place from the op definition at every call; the kernel passes ask them
    hundreds of thousands of times on a large model. These ops have at most one
    variadic group (a loop's two groups are sized by its static bounds), so each
    accessor is a slice of `operands`. The op definitions, built when the classes
    were, still verify every op.
    """
    views: dict[type[IRDLOperation], dict[str, Callable[[Any], Any]]] = {
        LoadOp: {
            "buffer": lambda op: op.operands[0],
            "indices": lambda op: op.operands[1:],
            "result": lambda op: op.results[0],
        },
        StoreOp: {
            "value": lambda op: op.operands[0],
            "buffer": lambda op: op.operands[1],
            "indices": lambda op: op.operands[2:],
        },
        ViewOp: {
            "source": lambda op: op.operands[0],
            "dynamic_sizes": lambda op: op.operands[1:],
            "result": lambda op: op.results[0],
        },
        AllocOp: {"dynamic_sizes": lambda op: op.operands[0:], "result": lambda op: op.results[0]},
        LoopOp: {
            "dynamic_bounds": lambda op: op.operands[: _dynamic_count(op)],
            "inits": lambda op: op.operands[_dynamic_count(op) :],
            "results_": lambda op: op.results[0:],
            "body": lambda op: op.regions[0],
        },
    }
    for cls, accessors in views.items():
        for name, get in accessors.items():
            assert name in vars(cls), f"{cls.__name__} has no {name}"
            setattr(cls, name, property(get))


def _dynamic_count(loop: LoopOp) -> int:
    return ints_of(loop.properties["static_bounds"]).count(DYNAMIC)


_operand_views()


__all__ = [
    "memref_type",
    "DYNAMIC",
    "ITERATORS",
    "AllocOp",
    "CallOp",
    "CheckOp",
    "ConstantOp",
    "CopyOp",
    "DeallocOp",
    "DimOp",
    "Kernel",
    "LoadOp",
    "LoopOp",
    "MatmulOp",
    "RemFOp",
    "StoreOp",
    "SubviewOp",
    "ViewOp",
    "YieldOp",
    "ints",
]
