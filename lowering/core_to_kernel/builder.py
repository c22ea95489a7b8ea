"""The shared toolkit of core → kernel patterns: buffers, loop nests and scalar semantics.

A `KernelBuilder` appends kernel ops to a block (the function body, or a loop
body while one is being built) and knows the buffer that holds each core
tensor. Sizes are `Dim`s: a Python int when static, an `index` value when
known only at run time; index arithmetic on `Dim`s folds static parts.

Scalar semantics of core's elementwise functions (`unary`, `binary`,
`compare`, `cast`) are the builder's methods of those names (written once, in
`scalar`, as arith/math ops), so that every pattern that needs "add" or
"max" in a loop body (reductions, pooling, scatter with a reduction...) gets
exactly the semantics of the core op. Element-type questions are in `elements`.

    def lower(b: KernelBuilder, op: core.UnaryOp) -> list[SSAValue]:
        x = b.buffer(op.input)
        out = b.alloc_for(op.result, b.dims(x))
        def body(b: KernelBuilder, ivs: list[SSAValue]) -> None:
            b.store(b.unary(op.fn.data, b.load(x, ivs)), out, ivs)
        b.parallel(b.dims(x), body)
        return [out]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from rung.dialects import kernel

from .constants import constant_array
from .elements import (
    FLOATS,
    INTEGER_WIDTHS,
    KernelLoweringError,
    check_element,
    is_float,
    is_unsigned,
    memref_of,
)
from .scalar import binary as scalar_binary
from .scalar import cast as scalar_cast
from .scalar import compare as scalar_compare
from .scalar import unary as scalar_unary

Dim = int | SSAValue
"""A size or index: a number when static, an `index` value when known at run time."""


def static_value(d: Dim) -> int | None:
    """The number a size or index stands for, if it is known at compile time."""
    return d if isinstance(d, int) else _constant_index(d)


def _constant_index(v: SSAValue) -> int | None:
    owner = v.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        if isinstance(owner.result.type, IndexType):
            return owner.value.value.data
    return None


class KernelBuilder:
    """Appends kernel ops to a block; maps core tensors to the buffers holding them."""

    def __init__(
        self, block: Block, buffers: dict[SSAValue, SSAValue], module: ModuleOp | None = None
    ) -> None:
        self.block = block
        self.buffers = buffers
        self.module = module
        self._dims: dict[tuple[SSAValue, int], Dim] = {}
        self.shape_values: dict[SSAValue, list[Dim]] = {}
        """Shape buffers (from core.shape_of) whose entries are known sizes: reading an
        entry back gives the size itself, not a load."""

    # -- insertion ---------------------------------------------------------------------------

    def insert(self, op: Operation) -> Operation:
        self.block.add_op(op)
        return op

    def nested(self, block: Block) -> KernelBuilder:
        """A builder appending to `block` (a loop body), sharing the buffer map."""
        inner = KernelBuilder(block, self.buffers, self.module)
        # Sizes known outside are known inside; a kernel.dim made inside stays inside.
        inner._dims = dict(self._dims)
        inner.shape_values = dict(self.shape_values)
        return inner

    # -- buffers -----------------------------------------------------------------------------

    def buffer(self, tensor: SSAValue) -> SSAValue:
        """The buffer holding a core tensor (operands are lowered before their users)."""
        try:
            return self.buffers[tensor]
        except KeyError:
            raise KernelLoweringError(
                f"no buffer for {tensor} (a value of {tensor.type})"
            ) from None

    def dims(self, buf: SSAValue) -> list[Dim]:
        """The sizes of a buffer: static ints, or `kernel.dim` values (made once each)."""
        t = buf.type
        assert isinstance(t, MemRefType)
        out: list[Dim] = []
        for i, d in enumerate(t.get_shape()):
            if d >= 0:
                out.append(d)
                continue
            key = (buf, i)
            if key not in self._dims:
                self._dims[key] = self.insert(kernel.DimOp(buf, i)).results[0]
            out.append(self._dims[key])
        return out

    def alloc(self, element: Attribute, dims: Sequence[Dim]) -> SSAValue:
        """A new buffer of the given sizes; static sizes make static dims."""
        check_element(element)
        shape: list[int] = []
        dynamic: list[SSAValue] = []
        for d in dims:
            s = static_value(d)
            if s is not None:
                shape.append(s)
            else:
                shape.append(DYNAMIC_INDEX)
                dynamic.append(d)  # type: ignore[arg-type]
        result = self.insert(kernel.AllocOp(kernel.memref_type(element, shape), dynamic)).results[0]
        self._remember_dims(result, dims)
        return result

    def _remember_dims(self, buf: SSAValue, dims: Sequence[Dim]) -> None:
        """A new buffer's run-time sizes are the values it was made with, not new dim ops."""
        for i, d in enumerate(dims):
            if static_value(d) is None:
                self._dims[(buf, i)] = d

    def alloc_for(self, tensor: SSAValue, dims: Sequence[Dim]) -> SSAValue:
        """A buffer for a core result: static dims of its type win over `dims`."""
        t = tensor.type
        assert isinstance(t, TensorType)
        sizes = [d if d >= 0 else dims[i] for i, d in enumerate(t.get_shape())]
        return self.alloc(t.element_type, sizes)

    def view(self, buf: SSAValue, dims: Sequence[Dim]) -> SSAValue:
        """The same storage with another shape."""
        t = buf.type
        assert isinstance(t, MemRefType)
        shape, dynamic = [], []
        for d in dims:
            s = static_value(d)
            shape.append(DYNAMIC_INDEX if s is None else s)
            if s is None:
                dynamic.append(d)
        result = kernel.memref_type(t.element_type, shape)
        # One type may stand for other run-time sizes: only the buffer's own sizes are no view.
        if result == t and all(
            static_value(d) is not None or self._dims.get((buf, i)) is d for i, d in enumerate(dims)
        ):
            return buf
        view = self.insert(kernel.ViewOp(buf, result, dynamic)).results[0]  # type: ignore[arg-type]
        self._remember_dims(view, dims)
        return view

    # -- loops -------------------------------------------------------------------------------

    def loop(
        self,
        bounds: Sequence[Dim],
        kinds: Sequence[str],
        body: Callable[[KernelBuilder, list[SSAValue], list[SSAValue]], Sequence[SSAValue] | None],
        inits: Sequence[SSAValue] = (),
    ) -> list[SSAValue]:
        """A loop nest; `body(b, ivs, iter_args)` fills it and returns the yielded values.

        A nest with a zero static bound is left out (it would do nothing), and
        its results are the initial values.
        """
        if any(static_value(d) == 0 for d in bounds):
            return list(inits)
        if not bounds:
            inner = Block()
            yielded = body(self.nested(inner), [], list(inits)) or []
            for op in list(inner.ops):
                op.detach()
                self.insert(op)
            return list(yielded)
        block = Block(arg_types=[IndexType()] * len(bounds) + [v.type for v in inits])
        inner_builder = self.nested(block)
        ivs = list(block.args[: len(bounds)])
        yielded = body(inner_builder, ivs, list(block.args[len(bounds) :])) or []
        inner_builder.insert(kernel.YieldOp(list(yielded)))
        static_bounds = [static_value(d) for d in bounds]
        op = kernel.LoopOp(
            [s if s is not None else d for s, d in zip(static_bounds, bounds, strict=True)],
            kinds,
            Region(block),
            inits,
        )
        self.insert(op)
        return list(op.results)

    def parallel(
        self, bounds: Sequence[Dim], body: Callable[[KernelBuilder, list[SSAValue]], None]
    ) -> None:
        """An all-parallel nest over `bounds` (a single pass when `bounds` is empty)."""

        def wrapped(b: KernelBuilder, ivs: list[SSAValue], _: list[SSAValue]) -> None:
            body(b, ivs)

        self.loop(bounds, ["parallel"] * len(bounds), wrapped)

    def reduce_loop(
        self,
        bounds: Sequence[Dim],
        inits: Sequence[SSAValue],
        body: Callable[[KernelBuilder, list[SSAValue], list[SSAValue]], Sequence[SSAValue]],
    ) -> list[SSAValue]:
        """A reduction nest carrying `inits`; gives the final values."""
        return self.loop(bounds, ["reduction"] * len(bounds), body, inits)

    def load(self, buf: SSAValue, indices: Sequence[Dim]) -> SSAValue:
        return self.insert(kernel.LoadOp(buf, [self.index(i) for i in indices])).results[0]

    def store(self, value: SSAValue, buf: SSAValue, indices: Sequence[Dim]) -> None:
        self.insert(kernel.StoreOp(value, buf, [self.index(i) for i in indices]))

    def copy(self, source: SSAValue, target: SSAValue) -> None:
        self.insert(kernel.CopyOp(source, target))

    # -- index arithmetic ------------------------------------------------------------------------

    def index(self, d: Dim) -> SSAValue:
        """An index value for a Dim."""
        if isinstance(d, int):
            return self.insert(arith.ConstantOp(IntegerAttr(d, IndexType()))).results[0]
        return d

    def _ifold(self, a: Dim, b: Dim, fn: Callable[[int, int], int], op: type) -> Dim:
        sa, sb = static_value(a), static_value(b)
        if sa is not None and sb is not None:
            return fn(sa, sb)
        return self.insert(op(self.index(a), self.index(b))).results[0]

    def iadd(self, a: Dim, b: Dim) -> Dim:
        if static_value(b) == 0:
            return a
        if static_value(a) == 0:
            return b
        return self._ifold(a, b, lambda x, y: x + y, arith.AddiOp)

    def isub(self, a: Dim, b: Dim) -> Dim:
        if static_value(b) == 0:
            return a
        return self._ifold(a, b, lambda x, y: x - y, arith.SubiOp)

    def imul(self, a: Dim, b: Dim) -> Dim:
        if static_value(a) == 1:
            return b
        if static_value(b) == 1:
            return a
        if static_value(a) == 0 or static_value(b) == 0:
            return 0
        return self._ifold(a, b, lambda x, y: x * y, arith.MuliOp)

    def idiv(self, a: Dim, b: Dim) -> Dim:
        """Floor division of non-negative index values."""
        if static_value(b) == 1:
            return a
        return self._ifold(a, b, lambda x, y: x // y, arith.DivUIOp)

    def irem(self, a: Dim, b: Dim) -> Dim:
        return self._ifold(a, b, lambda x, y: x % y, arith.RemUIOp)

    def imin(self, a: Dim, b: Dim) -> Dim:
        return self._ifold(a, b, min, arith.MinSIOp)

    def imax(self, a: Dim, b: Dim) -> Dim:
        return self._ifold(a, b, max, arith.MaxSIOp)

    def product(self, dims: Sequence[Dim]) -> Dim:
        total: Dim = 1
        for d in dims:
            total = self.imul(total, d)
        return total

    def to_index(self, value: SSAValue) -> SSAValue:
        """An integer scalar (e.g. a loaded i64) as an index."""
        if isinstance(value.type, IndexType):
            return value
        return self.insert(arith.IndexCastOp(value, IndexType())).results[0]

    def from_index(self, value: Dim, type: Attribute) -> SSAValue:
        """An index as an integer scalar of `type`."""
        v = self.index(value)
        return self.insert(arith.IndexCastOp(v, type)).results[0]

    def load_dim(self, shape_buf: SSAValue, i: int) -> Dim:
        """Entry `i` of a 1-D i64 shape buffer, as an index (a static int if constant)."""
        if shape_buf in self.shape_values:
            return self.shape_values[shape_buf][i]
        values = constant_array(shape_buf)
        if values is not None:
            return int(values.reshape(-1)[i])
        return self.to_index(self.load(shape_buf, [i]))

    def select_index(self, cond: SSAValue, a: Dim, b: Dim) -> SSAValue:
        return self.insert(arith.SelectOp(cond, self.index(a), self.index(b))).results[0]

    def icmp(self, pred: str, a: Dim, b: Dim) -> SSAValue:
        return self.insert(arith.CmpiOp(self.index(a), self.index(b), pred)).results[0]

    # -- scalars -------------------------------------------------------------------------------

    def const(self, value: float | int | bool, type: Attribute) -> SSAValue:
        """A scalar constant of an element type."""
        if is_float(type):
            attr: Attribute = FloatAttr(float(value), type)  # type: ignore[arg-type]
        elif isinstance(type, IntegerType):
            v = int(value)
            width = type.width.data
            if width == 1:
                v = 1 if v else 0
            else:
                v = (v + (1 << (width - 1))) % (1 << width) - (1 << (width - 1))
            if is_unsigned(type) and width > 1:
                # arith.constant is signless: build the bits, then reinterpret them.
                raw = self.insert(arith.ConstantOp(IntegerAttr(v, IntegerType(width))))
                return self.op1(arith.BitcastOp, raw.results[0], type)
            attr = IntegerAttr(v, type)
        elif isinstance(type, IndexType):
            attr = IntegerAttr(int(value), type)
        else:
            raise KernelLoweringError(f"no scalar constant of type {type}")
        return self.insert(arith.ConstantOp(attr)).results[0]

    def lowest(self, type: Attribute) -> SSAValue:
        """The identity of max: -inf, or the smallest integer."""
        if is_float(type):
            return self.const(-math.inf, type)
        assert isinstance(type, IntegerType)
        w = type.width.data
        return self.const(0 if is_unsigned(type) else -(1 << (w - 1)), type)

    def highest(self, type: Attribute) -> SSAValue:
        """The identity of min: +inf, or the largest integer."""
        if is_float(type):
            return self.const(math.inf, type)
        assert isinstance(type, IntegerType)
        w = type.width.data
        return self.const((1 << w) - 1 if is_unsigned(type) else (1 << (w - 1)) - 1, type)

    def op1(self, cls: type, *args: object, **kw: object) -> SSAValue:
        return self.insert(cls(*args, **kw)).results[0]

    def unary(self, fn: str, x: SSAValue) -> SSAValue:
        """core.unary's `fn` on one scalar."""
        return scalar_unary(self, fn, x)

    def binary(self, fn: str, a: SSAValue, b: SSAValue) -> SSAValue:
        """core.binary's `fn` on two scalars."""
        return scalar_binary(self, fn, a, b)

    def compare(self, pred: str, a: SSAValue, b: SSAValue) -> SSAValue:
        """core.compare's `pred`: an i1."""
        return scalar_compare(self, pred, a, b)

    def select(self, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.op1(arith.SelectOp, cond, a, b)

    def cast(self, x: SSAValue, to: Attribute) -> SSAValue:
        """core.cast's conversion of one scalar."""
        return scalar_cast(self, x, to)


__all__ = [
    "FLOATS",
    "INTEGER_WIDTHS",
    "Dim",
    "KernelBuilder",
    "KernelLoweringError",
    "check_element",
    "is_float",
    "is_unsigned",
    "memref_of",
]
