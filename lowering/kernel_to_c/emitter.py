"""The state of C generation for one function, and the table of emitters by op.

`Emitter` holds what is known so far: the C name of each scalar value, the
`Buffer` (pointer and dims) of each memref value, the names in use, the
weights met, and the lines of the body. An emitter is a function that writes
the C of one op through it:

    @emits(kernel.DeallocOp)
    def dealloc(e: Emitter, op: kernel.DeallocOp) -> None:
        e.emit(f"rung_heap_free(&heap, {e.buffer(op.buffer).ptr});")

`Emitter.op` looks an op up in `EMITTERS` by name; ops without an emitter
stop code generation with a `CodegenError` naming the op.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    FloatAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from .c_names import is_reserved
from .c_types import (
    CodegenError,
    float_literal,
    int_literal,
    is_unsigned,
    narrow_float,
    paren,
    scalar_type,
    storage_type,
    sub_byte,
)


@dataclass
class Buffer:
    """How a memref value is spelled in C: a pointer and one size per dim."""

    ptr: str
    element: Attribute
    dims: list[str]

    def index(self, indices: Sequence[str]) -> str:
        if not indices:
            return "0"
        expr = indices[0]
        for d, i in zip(self.dims[1:], indices[1:], strict=True):
            expr = f"{paren(expr)} * {d} + {i}" if expr != "0" else i
        return expr

    def count(self) -> str:
        return " * ".join(paren(d) for d in self.dims) if self.dims else "1"


@dataclass
class Weight:
    name: str
    element: Attribute
    array: np.ndarray
    offset: int | None = None
    """Byte offset in the side file; None when written into the source."""


@dataclass(frozen=True)
class PackedWeight:
    """A constant right operand of the GEMM, packed into its panels once by `_init`."""

    name: str
    weight: str
    n: int
    k: int
    transposed: bool
    thin: bool = False
    """For a product of at most 4 rows and few columns: B transposed, for dot products
    (`rung_gemm_prepack_thin`), instead of panels."""
    conv_groups: int = 0
    """Not 0: a conv's weights `[n, k]` (output channels by C/G * KH * KW) in this many
    groups, packed for `rung_conv_shift_packed_float` (`rung_conv_prepack_w`)."""

    @property
    def key(self) -> tuple[str, int, int, bool, bool, int]:
        return (self.weight, self.n, self.k, self.transposed, self.thin, self.conv_groups)


@dataclass
class Emitter:
    module: ModuleOp
    prefix: str
    lines: list[str] = field(default_factory=list)
    names: dict[SSAValue, str] = field(default_factory=dict)
    buffers: dict[SSAValue, Buffer] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)
    weights: list[Weight] = field(default_factory=list)
    weight_bytes: int = 0
    packed: list[PackedWeight] = field(default_factory=list)
    depth: int = 1
    counter: int = 0
    uses_openmp: bool = False

    # -- naming ------------------------------------------------------------------------------

    def fresh(self, hint: str | None, default: str = "t") -> str:
        """A new C name from an IR name hint, clear of C keywords and the runtime's names."""
        base = re.sub(r"\W", "_", hint or "") or default
        if base[0].isdigit():
            base = f"{default}{base}"
        if is_reserved(base):
            base = f"v{base}" if base.startswith("_") else f"{base}_"
        name = base
        while name in self.used or (hint is None and name == default):
            self.counter += 1
            name = f"{base}{self.counter}"
        self.used.add(name)
        return name

    def emit(self, line: str) -> None:
        self.lines.append("  " * self.depth + line)

    @contextmanager
    def indented(self) -> Iterator[None]:
        """Lines emitted inside are one level deeper (the body of a `{ }`)."""
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    # -- scalars -----------------------------------------------------------------------------

    def value(self, v: SSAValue) -> str:
        """The C expression of a scalar value (constants inline)."""
        owner = v.owner
        if isinstance(owner, arith.ConstantOp):
            attr = owner.value
            if isinstance(attr, FloatAttr):
                return float_literal(attr.value.data, v.type)
            if isinstance(attr, IntegerAttr):
                return int_literal(attr.value.data, v.type)
        try:
            return self.names[v]
        except KeyError:
            raise CodegenError(f"value {v} used before it is defined") from None

    def define(self, v: SSAValue, expr: str) -> None:
        """Declare a local variable holding `expr` and bind `v` to it."""
        name = self.fresh(v.name_hint)
        self.names[v] = name
        self.emit(f"{scalar_type(v.type)} {name} = {expr};")

    # -- buffers -----------------------------------------------------------------------------

    def bind_buffer(self, v: SSAValue, ptr: str, dims: list[str]) -> Buffer:
        t = v.type
        assert isinstance(t, MemRefType)
        buf = Buffer(ptr, t.element_type, dims)
        self.buffers[v] = buf
        return buf

    def new_buffer(self, v: SSAValue, sizes: Sequence[str]) -> tuple[str, list[str]]:
        """Declare the pointer and dynamic-dim variables of a new buffer value."""
        t = v.type
        assert isinstance(t, MemRefType)
        ptr = self.fresh(v.name_hint, "b")
        dims: list[str] = []
        dynamic = iter(sizes)
        for i, d in enumerate(t.get_shape()):
            if d >= 0:
                dims.append(str(d))
            else:
                name = f"{ptr}_d{i}"
                self.used.add(name)
                self.emit(f"const int64_t {name} = {next(dynamic)};")
                dims.append(name)
        self.bind_buffer(v, ptr, dims)
        return ptr, dims

    def buffer(self, v: SSAValue) -> Buffer:
        try:
            return self.buffers[v]
        except KeyError:
            raise CodegenError(f"buffer {v} used before it is defined") from None

    def parts(self, v: SSAValue, t: Attribute) -> list[str]:
        """The C expressions of `v` laid out as the variables of a value of type `t`:
        the scalar, or the pointer (writable) and the run-time dims of a buffer."""
        if not isinstance(t, MemRefType):
            return [self.value(v)]
        buf = self.buffer(v)
        ptr = buf.ptr
        if any(w.name == ptr for w in self.weights):  # a `static const` array
            ptr = f"({storage_type(t.element_type)} *){ptr}"
        return [ptr] + [buf.dims[i] for i, d in enumerate(t.get_shape()) if d < 0]

    def load_expr(self, buf: Buffer, indices: Sequence[str]) -> str:
        """An element of `buf` as a scalar: half and narrow types decoded, sub-byte sign-extended."""
        ref = f"{buf.ptr}[{buf.index(indices)}]"
        if isinstance(buf.element, Float16Type):
            return f"(float){ref}"
        if isinstance(buf.element, BFloat16Type):
            return f"rung_bf16_to_f32({ref})"
        if (codec := narrow_float(buf.element)) is not None:
            return f"rung_{codec}_to_f32({ref})"
        if (width := sub_byte(buf.element)) is not None and not is_unsigned(buf.element):
            return f"rung_wrap_signed({ref}, {width})"  # stored as the low bits only
        return ref

    def store_expr(self, buf: Buffer, value: str) -> str:
        """A scalar encoded as an element of `buf` (the inverse of `load_expr`)."""
        if isinstance(buf.element, Float16Type):
            return f"(_Float16){value}"
        if isinstance(buf.element, BFloat16Type):
            return f"rung_f32_to_bf16({value})"
        if (codec := narrow_float(buf.element)) is not None:
            return f"rung_f32_to_{codec}({value})"
        if (width := sub_byte(buf.element)) is not None and not is_unsigned(buf.element):
            return f"(int8_t)({value} & {(1 << width) - 1})"  # the layout of ml_dtypes
        return value

    # -- ops ---------------------------------------------------------------------------------

    def block(self, block: Block, skip_last: bool = False) -> None:
        """Emit the ops of `block`; `skip_last` leaves its terminator to the caller."""
        ops = list(block.ops)
        if skip_last:
            ops = ops[:-1]
        for op in ops:
            self.op(op)

    def op(self, op: Operation) -> None:
        emitter = EMITTERS.get(op.name)
        if emitter is None:
            raise CodegenError(f"C code generation does not handle '{op.name}'")
        emitter(self, op)


EmitFn = Callable[[Emitter, Any], None]
"""An emitter: writes the C of one op (of the class it is registered for)."""

EMITTERS: dict[str, EmitFn] = {}
"""Emitters by op name (`kernel.loop`, `arith.addf`)."""


def add_emitter(op_type: type[Operation], fn: EmitFn) -> None:
    """Register `fn` as the emitter of `op_type`'s ops (one emitter per op)."""
    if op_type.name in EMITTERS:
        raise ValueError(f"two C emitters for {op_type.name}")
    EMITTERS[op_type.name] = fn


def emits(*op_types: type[Operation]) -> Callable[[EmitFn], EmitFn]:
    """Register the decorated function as the emitter of ops of these classes."""

    def register(fn: EmitFn) -> EmitFn:
        for op_type in op_types:
            add_emitter(op_type, fn)
        return fn

    return register
