"""Emitters of buffers: allocation, weights, views, copies, loads and stores.

A buffer is a `T *const` pointer plus one `const int64_t` per run-time dim.
Buffers the memory plan placed sit in the arena; the others come from the
run's heap. A weight is a `static const` array in the source or, past
`INLINE_LIMIT` bytes, a pointer into the mapped side file.
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import NameLoc

from rung.dialects import kernel
from rung.dialects.constants import constant_value

from .c_types import c_string_literal, paren, storage_type
from .emitter import Emitter, Weight, emits

INLINE_LIMIT = 4096
"""Constants up to this many bytes are written into the C source; larger ones go
to the side file of weights, so a 500 MB model compiles as fast as a 5 MB one."""

ALIGN = 64
"""The alignment of each weight in the side file."""


def _size_message(op: kernel.AllocOp) -> str:
    """The error of a run whose buffer size cannot be met, naming the op's node."""
    loc = op.location
    node = f"node '{loc.desc.data}'" if isinstance(loc, NameLoc) else "an unnamed node"
    return c_string_literal(
        f"{node}: a buffer's run-time size is negative or too large to allocate"
    )


@emits(kernel.AllocOp)
def alloc(e: Emitter, op: kernel.AllocOp) -> None:
    t = op.result.type
    ptr, _ = e.new_buffer(op.result, [e.value(v) for v in op.dynamic_sizes])
    ctype = storage_type(t.element_type)
    if op.offset is not None:
        e.emit(f"{ctype} *const {ptr} = ({ctype} *)(arena + {op.offset.value.data});")
        return
    dims = e.buffers[op.result].dims
    if not op.dynamic_sizes:
        e.emit(
            f"{ctype} *const {ptr} = ({ctype} *)rung_heap_alloc(&heap, "
            f"(size_t)({e.buffers[op.result].count()}) * sizeof({ctype}));"
        )
        e.emit(f'if (!{ptr}) RUNG_FAIL("out of memory");')
        return
    # Run-time sizes: a negative or overflowing one fails the run before any allocation.
    bytes_ = f"{ptr}_bytes"
    e.used.add(bytes_)
    e.emit(f"size_t {bytes_} = 0;")
    listed = ", ".join(dims)
    e.emit(
        f"if (!rung_buffer_bytes(&{bytes_}, sizeof({ctype}), {len(dims)}, "
        f"(const int64_t[]){{{listed}}}))"
    )
    e.emit(f"  RUNG_FAIL({_size_message(op)});")
    e.emit(f"{ctype} *const {ptr} = ({ctype} *)rung_heap_alloc(&heap, {bytes_});")
    e.emit(f'if (!{ptr}) RUNG_FAIL("out of memory");')


@emits(kernel.DeallocOp)
def dealloc(e: Emitter, op: kernel.DeallocOp) -> None:
    e.emit(f"rung_heap_free(&heap, {e.buffer(op.buffer).ptr});")


@emits(kernel.ConstantOp)
def constant(e: Emitter, op: kernel.ConstantOp) -> None:
    """Record a weight; `generate_c` declares it at file scope."""
    t = op.result.type
    array = constant_value(op.value, e.module, copy=False)
    name = e.fresh(op.result.name_hint, "w")
    weight = Weight(name, t.element_type, array)
    nbytes = array.size * array.dtype.itemsize
    if nbytes > INLINE_LIMIT and array.dtype != object:  # strings stay in the source
        e.weight_bytes = (e.weight_bytes + ALIGN - 1) // ALIGN * ALIGN
        weight.offset = e.weight_bytes
        e.weight_bytes += nbytes
    e.weights.append(weight)
    e.bind_buffer(op.result, name, [str(d) for d in t.get_shape()])


@emits(kernel.DimOp)
def dim(e: Emitter, op: kernel.DimOp) -> None:
    e.names[op.result] = e.buffer(op.buffer).dims[op.dim.value.data]


@emits(kernel.ViewOp)
def view(e: Emitter, op: kernel.ViewOp) -> None:
    """The same pointer under a new shape."""
    src = e.buffer(op.source)
    ptr, _ = e.new_buffer(op.result, [e.value(v) for v in op.dynamic_sizes])
    ctype = storage_type(op.result.type.element_type)
    e.emit(f"{ctype} *const {ptr} = ({ctype} *){src.ptr};")


@emits(kernel.SubviewOp)
def subview(e: Emitter, op: kernel.SubviewOp) -> None:
    """`T *const row = buf + i * stride`: the slab at the leading indices."""
    src = e.buffer(op.source)
    n = len(op.indices)
    shape = op.result.type.get_shape()
    sizes = [src.dims[n + i] for i, d in enumerate(shape) if d < 0]
    ptr, dims = e.new_buffer(op.result, sizes)
    index = [e.value(v) for v in op.indices]
    lead = index[0] if index else "0"
    for d, i in zip(src.dims[1:n], index[1:], strict=True):
        lead = f"{paren(lead)} * {d} + {i}"
    static = math.prod(int(d) for d in dims if d.isdigit())
    names = [d for d in dims if not d.isdigit()]
    stride = " * ".join(names + ([str(static)] if static != 1 or not names else []))
    if lead == "0" or static == 0:
        offset = ""
    elif stride == "1":
        offset = f" + {lead}"
    else:
        offset = f" + {paren(lead)} * {paren(stride)}"
    ctype = storage_type(op.result.type.element_type)
    base = e.parts(op.source, op.source.type)[0]
    e.emit(f"{ctype} *const {ptr} = {base}{offset};")


@emits(kernel.CopyOp)
def copy(e: Emitter, op: kernel.CopyOp) -> None:
    src, dst = e.buffer(op.source), e.buffer(op.target)
    ctype = storage_type(src.element)
    e.emit(f"memmove({dst.ptr}, {src.ptr}, (size_t)({src.count()}) * sizeof({ctype}));")


@emits(kernel.LoadOp)
def load(e: Emitter, op: kernel.LoadOp) -> None:
    buf = e.buffer(op.buffer)
    e.define(op.result, e.load_expr(buf, [e.value(i) for i in op.indices]))


@emits(kernel.StoreOp)
def store(e: Emitter, op: kernel.StoreOp) -> None:
    buf = e.buffer(op.buffer)
    ref = f"{buf.ptr}[{buf.index([e.value(i) for i in op.indices])}]"
    e.emit(f"{ref} = {e.store_expr(buf, e.value(op.value))};")
