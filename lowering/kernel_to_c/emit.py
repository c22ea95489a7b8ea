"""Kernel dialect → C: one readable C11 file per model, a header, and a side file of weights.

The C follows the IR closely, so that a reader can map one onto the other:
every buffer is a pointer variable (plus one `int64_t` per run-time dim),
every `kernel.loop` a `for` nest, every scalar op one assignment. Index
constants are written inline. Buffers are contiguous and row-major, so a
load is `x[(i0 * 4 + i1)]`.

Scalars of half types (f16, bf16) are computed as `float` and rounded back
after each op, which is what the IR's f16 arithmetic means; their buffers
hold `_Float16` and `uint16_t` bits respectively. The 8-, 6- and 4-bit floats
work the same way, one byte per element, encoded and decoded by the runtime
header; 2- and 4-bit integers are held one per byte (the low bits, as
ml_dtypes lays them out), sign-extended on load and wrapped to their width
after each op.

The ABI (see `HEADER`) is: `<prefix>_init(weights_path)` once, then
`<prefix>_run(inputs, outputs, arena)` any number of times. Inputs and outputs
are `rung_tensor`s (data, ONNX dtype code, rank, shape); outputs are
allocated by the library and released with `<prefix>_free`. The arena is
scratch memory of `<prefix>_arena_bytes()` bytes, 64-byte aligned, that the
memory plan has laid the intermediate buffers of static size out in; buffers
of run-time size come from the heap and are released before `_run` returns.
"""

from __future__ import annotations

import keyword
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    Signedness,
    StringAttr,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, SSAValue

from rung.dialects import kernel
from rung.dialects.constants import constant_value
from rung.dialects.onnx.dtypes import NARROW_FLOAT_TYPES, ONNX_FROM_MLIR
from rung.errors import RungError

RUNTIME_HEADER = Path(__file__).with_name("rung_runtime.h")
"""The C runtime every generated file includes: ABI types, helpers, microkernels."""

INLINE_LIMIT = 4096
"""Constants up to this many bytes are written into the C source; larger ones go
to the side file of weights, so a 500 MB model compiles as fast as a 5 MB one."""

ALIGN = 64


class CodegenError(RungError):
    """The kernel IR has something C code generation does not handle."""


# ---- types ------------------------------------------------------------------------------------


def narrow_float(t: Attribute) -> str | None:
    """The codec name of an 8/6/4-bit float type in the runtime header (its MLIR spelling,
    lower case: `f8e4m3fn`), or None for any other type."""
    return str(t).lower() if isinstance(t, NARROW_FLOAT_TYPES) else None


def sub_byte(t: Attribute) -> int | None:
    """The width of a 2- or 4-bit integer type (held one per byte), else None."""
    if isinstance(t, IntegerType) and 1 < t.width.data < 8:
        return t.width.data
    return None


def storage_type(t: Attribute) -> str:
    """The C type of a buffer element."""
    if isinstance(t, Float32Type):
        return "float"
    if isinstance(t, Float64Type):
        return "double"
    if isinstance(t, Float16Type):
        return "_Float16"
    if isinstance(t, BFloat16Type):
        return "uint16_t"
    if narrow_float(t) is not None:
        return "uint8_t"
    if isinstance(t, IndexType):
        return "int64_t"
    if isinstance(t, IntegerType):
        w = t.width.data
        if w == 1:
            return "bool"
        if w < 8:
            w = 8
        if w in (8, 16, 32, 64):
            unsigned = t.signedness.data == Signedness.UNSIGNED
            return f"{'u' if unsigned else ''}int{w}_t"
    raise CodegenError(f"no C type for element type {t}")


def scalar_type(t: Attribute) -> str:
    """The C type of a scalar value (half and narrower floats compute as float)."""
    if _is_half(t):
        return "float"
    return storage_type(t)


def _is_unsigned(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.signedness.data == Signedness.UNSIGNED


def _is_half(t: Attribute) -> bool:
    """Whether scalars of `t` compute as float and round back (f16, bf16 and narrower)."""
    return isinstance(t, Float16Type | BFloat16Type) or narrow_float(t) is not None


def _is_float(t: Attribute) -> bool:
    return isinstance(t, Float32Type | Float64Type) or _is_half(t)


def _unsigned_of(t: Attribute) -> str:
    """The unsigned C type of the same width (for wrapping integer arithmetic)."""
    if isinstance(t, IndexType):
        return "uint64_t"
    assert isinstance(t, IntegerType)
    w = t.width.data
    return "bool" if w == 1 else f"uint{max(w, 8)}_t"


def _round(t: Attribute, expr: str) -> str:
    """Round a float expression to the precision of a half or narrower type; wrap a 2/4-bit
    integer to its width."""
    if isinstance(t, Float16Type):
        return f"rung_round_f16({expr})"
    if isinstance(t, BFloat16Type):
        return f"rung_round_bf16({expr})"
    if (codec := narrow_float(t)) is not None:
        return f"rung_round_{codec}({expr})"
    if (width := sub_byte(t)) is not None:
        assert isinstance(t, IntegerType)
        if t.signedness.data == Signedness.UNSIGNED:
            return f"rung_wrap_unsigned((uint64_t)({expr}), {width})"
        return f"rung_wrap_signed((int64_t)({expr}), {width})"
    return expr


def _fn(name: str, t: Attribute) -> str:
    """The libm function for a scalar type: `expf` for float, `exp` for double."""
    return name if isinstance(t, Float64Type) else name + "f"


def _float_literal(value: float, t: Attribute) -> str:
    if math.isnan(value):
        return "NAN"
    if math.isinf(value):
        return "INFINITY" if value > 0 else "(-INFINITY)"
    if isinstance(t, Float64Type):
        return repr(float(value))
    text = f"{float(np.float32(value)):.9g}"
    if not re.search(r"[.eE]", text):
        text += ".0"
    return text + "f"


def _int_literal(value: int, t: Attribute) -> str:
    if isinstance(t, IntegerType) and t.width.data == 1:
        return "true" if value else "false"
    if isinstance(t, IntegerType) and t.signedness.data == Signedness.UNSIGNED:
        return f"{value}u" if t.width.data < 64 else f"UINT64_C({value})"
    if isinstance(t, IntegerType) and t.width.data == 64 or isinstance(t, IndexType):
        if value == -(1 << 63):
            return "INT64_MIN"
        return f"INT64_C({value})" if abs(value) >= 1 << 31 else str(value)
    if value == -(1 << 31):
        return "INT32_MIN"
    return str(value)


# ---- values -----------------------------------------------------------------------------------

_C_WORDS = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
    "union", "unsigned", "void", "volatile", "while", "bool", "true", "false", "arena",
    "inputs", "outputs", "heap", "rc", "done", "main", "errno", "NAN", "INFINITY",
}  # fmt: skip


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
            expr = f"{_paren(expr)} * {d} + {i}" if expr != "0" else i
        return expr

    def count(self) -> str:
        return " * ".join(_paren(d) for d in self.dims) if self.dims else "1"


def _paren(expr: str) -> str:
    return expr if re.fullmatch(r"[\w.]+", expr) else f"({expr})"


@dataclass
class Weight:
    name: str
    element: Attribute
    array: np.ndarray
    offset: int | None = None
    """Byte offset in the side file; None when written into the source."""


@dataclass
class Signature:
    """What the host needs to call the entry function."""

    inputs: list[tuple[str, Attribute, list[int]]]
    outputs: list[tuple[str, Attribute, list[int]]]
    """(name, element type, shape with -1 for run-time dims)."""


@dataclass
class CProgram:
    """The generated files of one model."""

    prefix: str
    source: str
    header: str
    weights: bytes
    signature: Signature
    arena_bytes: int
    uses_openmp: bool = False


@dataclass
class _Emitter:
    module: ModuleOp
    prefix: str
    lines: list[str] = field(default_factory=list)
    names: dict[SSAValue, str] = field(default_factory=dict)
    buffers: dict[SSAValue, Buffer] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)
    weights: list[Weight] = field(default_factory=list)
    weight_bytes: int = 0
    depth: int = 1
    counter: int = 0
    uses_openmp: bool = False

    # -- naming ------------------------------------------------------------------------------

    def fresh(self, hint: str | None, default: str = "t") -> str:
        base = re.sub(r"\W", "_", hint or "") or default
        if base[0].isdigit():
            base = f"{default}{base}"
        if base in _C_WORDS or keyword.iskeyword(base) or base.startswith("rung_"):
            base = f"{base}_"
        name = base
        while name in self.used or (hint is None and name == default):
            self.counter += 1
            name = f"{base}{self.counter}"
        self.used.add(name)
        return name

    def emit(self, line: str) -> None:
        self.lines.append("  " * self.depth + line)

    def value(self, v: SSAValue) -> str:
        """The C expression of a scalar value (constants inline)."""
        owner = v.owner
        if isinstance(owner, arith.ConstantOp):
            attr = owner.value
            if isinstance(attr, FloatAttr):
                return _float_literal(attr.value.data, v.type)
            if isinstance(attr, IntegerAttr):
                return _int_literal(attr.value.data, v.type)
        try:
            return self.names[v]
        except KeyError:
            raise CodegenError(f"value {v} used before it is defined") from None

    def define(self, v: SSAValue, expr: str) -> None:
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

    def load_expr(self, buf: Buffer, indices: Sequence[str]) -> str:
        ref = f"{buf.ptr}[{buf.index(indices)}]"
        if isinstance(buf.element, Float16Type):
            return f"(float){ref}"
        if isinstance(buf.element, BFloat16Type):
            return f"rung_bf16_to_f32({ref})"
        if (codec := narrow_float(buf.element)) is not None:
            return f"rung_{codec}_to_f32({ref})"
        if (width := sub_byte(buf.element)) is not None and not _is_unsigned(buf.element):
            return f"rung_wrap_signed({ref}, {width})"  # stored as the low bits only
        return ref

    def store_expr(self, buf: Buffer, value: str) -> str:
        if isinstance(buf.element, Float16Type):
            return f"(_Float16){value}"
        if isinstance(buf.element, BFloat16Type):
            return f"rung_f32_to_bf16({value})"
        if (codec := narrow_float(buf.element)) is not None:
            return f"rung_f32_to_{codec}({value})"
        if (width := sub_byte(buf.element)) is not None and not _is_unsigned(buf.element):
            return f"(int8_t)({value} & {(1 << width) - 1})"  # the layout of ml_dtypes
        return value

    # -- functions ---------------------------------------------------------------------------

    def entry(self, func: FuncOp) -> Signature:
        block = func.body.block
        inputs = []
        for i, arg in enumerate(block.args):
            t = arg.type
            if not isinstance(t, MemRefType):
                raise CodegenError(f"argument #{i} of the entry function is not a buffer ({t})")
            ptr = self.fresh(_arg_name(func, i, "arg_attrs") or arg.name_hint, "in")
            ctype = storage_type(t.element_type)
            dims = []
            self.emit(f"{ctype} *const {ptr} = ({ctype} *)inputs[{i}].data;")
            for d, size in enumerate(t.get_shape()):
                if size >= 0:
                    dims.append(str(size))
                else:
                    name = f"{ptr}_d{d}"
                    self.used.add(name)
                    self.emit(f"const int64_t {name} = inputs[{i}].shape[{d}];")
                    dims.append(name)
            self.bind_buffer(arg, ptr, dims)
            inputs.append(
                (
                    _arg_name(func, i, "arg_attrs") or arg.name_hint or f"input{i}",
                    t.element_type,
                    [d if d >= 0 else -1 for d in t.get_shape()],
                )
            )
        ret = block.last_op
        assert isinstance(ret, ReturnOp)
        self.block(block, skip_last=True)
        outputs = []
        for i, v in enumerate(ret.arguments):
            buf = self.buffer(v)
            t = v.type
            assert isinstance(t, MemRefType)
            ctype = storage_type(t.element_type)
            count = buf.count()
            self.emit(f"outputs[{i}].dtype = {ONNX_FROM_MLIR[t.element_type]};")
            self.emit(f"outputs[{i}].rank = {len(buf.dims)};")
            for d, size in enumerate(buf.dims):
                self.emit(f"outputs[{i}].shape[{d}] = {size};")
            self.emit(
                f"outputs[{i}].data = rung_copy_out({buf.ptr}, (size_t)({count}) * "
                f"sizeof({ctype}));"
            )
            self.emit(f'if (!outputs[{i}].data) RUNG_FAIL("out of memory");')
            outputs.append(
                (
                    _arg_name(func, i, "res_attrs") or f"output{i}",
                    t.element_type,
                    [d if d >= 0 else -1 for d in t.get_shape()],
                )
            )
        return Signature(inputs, outputs)

    def block(self, block: Block, skip_last: bool = False) -> None:
        ops = list(block.ops)
        if skip_last:
            ops = ops[:-1]
        for op in ops:
            self.op(op)

    # -- ops ---------------------------------------------------------------------------------

    def op(self, op: Operation) -> None:
        method = getattr(self, "op_" + op.name.replace(".", "_"), None)
        if method is not None:
            method(op)
            return
        expr = self.scalar(op)
        if expr is None:
            raise CodegenError(f"C code generation does not handle '{op.name}'")
        if isinstance(op, arith.ConstantOp):
            return
        self.define(op.results[0], expr)

    def op_arith_constant(self, op: arith.ConstantOp) -> None:
        if not isinstance(op.value, FloatAttr | IntegerAttr):
            raise CodegenError(f"unsupported constant {op.value}")

    def op_kernel_alloc(self, op: kernel.AllocOp) -> None:
        t = op.result.type
        ptr, dims = self.new_buffer(op.result, [self.value(v) for v in op.dynamic_sizes])
        ctype = storage_type(t.element_type)
        if op.offset is not None:
            self.emit(f"{ctype} *const {ptr} = ({ctype} *)(arena + {op.offset.value.data});")
            return
        count = self.buffers[op.result].count()
        self.emit(
            f"{ctype} *const {ptr} = ({ctype} *)rung_heap_alloc(&heap, "
            f"(size_t)({count}) * sizeof({ctype}));"
        )
        self.emit(f'if (!{ptr}) RUNG_FAIL("out of memory");')

    def op_kernel_dealloc(self, op: kernel.DeallocOp) -> None:
        self.emit(f"rung_heap_free(&heap, {self.buffer(op.buffer).ptr});")

    def op_kernel_constant(self, op: kernel.ConstantOp) -> None:
        t = op.result.type
        array = constant_value(op.value, self.module)
        name = self.fresh(op.result.name_hint, "w")
        weight = Weight(name, t.element_type, array)
        nbytes = array.size * array.dtype.itemsize
        if nbytes > INLINE_LIMIT:
            self.weight_bytes = (self.weight_bytes + ALIGN - 1) // ALIGN * ALIGN
            weight.offset = self.weight_bytes
            self.weight_bytes += nbytes
        self.weights.append(weight)
        self.bind_buffer(op.result, name, [str(d) for d in t.get_shape()])

    def op_kernel_dim(self, op: kernel.DimOp) -> None:
        self.names[op.result] = self.buffer(op.buffer).dims[op.dim.value.data]

    def op_kernel_view(self, op: kernel.ViewOp) -> None:
        src = self.buffer(op.source)
        ptr, _ = self.new_buffer(op.result, [self.value(v) for v in op.dynamic_sizes])
        ctype = storage_type(op.result.type.element_type)
        self.emit(f"{ctype} *const {ptr} = ({ctype} *){src.ptr};")

    def op_kernel_subview(self, op: kernel.SubviewOp) -> None:
        """`T *const row = buf + i * stride`: the slab at the leading indices."""
        src = self.buffer(op.source)
        n = len(op.indices)
        shape = op.result.type.get_shape()
        sizes = [src.dims[n + i] for i, d in enumerate(shape) if d < 0]
        ptr, dims = self.new_buffer(op.result, sizes)
        index = [self.value(v) for v in op.indices]
        lead = index[0] if index else "0"
        for d, i in zip(src.dims[1:n], index[1:], strict=True):
            lead = f"{_paren(lead)} * {d} + {i}"
        static = math.prod(int(d) for d in dims if d.isdigit())
        names = [d for d in dims if not d.isdigit()]
        stride = " * ".join(names + ([str(static)] if static != 1 or not names else []))
        if lead == "0" or static == 0:
            offset = ""
        elif stride == "1":
            offset = f" + {lead}"
        else:
            offset = f" + {_paren(lead)} * {_paren(stride)}"
        ctype = storage_type(op.result.type.element_type)
        base = self._parts(op.source, op.source.type)[0]
        self.emit(f"{ctype} *const {ptr} = {base}{offset};")

    def op_kernel_copy(self, op: kernel.CopyOp) -> None:
        src, dst = self.buffer(op.source), self.buffer(op.target)
        ctype = storage_type(src.element)
        self.emit(f"memmove({dst.ptr}, {src.ptr}, (size_t)({src.count()}) * sizeof({ctype}));")

    def op_kernel_load(self, op: kernel.LoadOp) -> None:
        buf = self.buffer(op.buffer)
        self.define(op.result, self.load_expr(buf, [self.value(i) for i in op.indices]))

    def op_kernel_store(self, op: kernel.StoreOp) -> None:
        buf = self.buffer(op.buffer)
        ref = f"{buf.ptr}[{buf.index([self.value(i) for i in op.indices])}]"
        self.emit(f"{ref} = {self.store_expr(buf, self.value(op.value))};")

    def op_kernel_loop(self, op: kernel.LoopOp) -> None:
        carried = []
        for init, arg, result in zip(op.inits, op.iter_args, op.results, strict=True):
            name = self.fresh(arg.name_hint or result.name_hint, "acc")
            self.emit(f"{scalar_type(init.type)} {name} = {self.value(init)};")
            self.names[arg] = name
            self.names[result] = name
            carried.append(name)
        if op.omp is not None:
            self.uses_openmp = True
            self.emit("#pragma omp parallel for schedule(static)")
        opened = 0
        for iv, bound, step in zip(op.ivs, op.bounds(), op.step_sizes, strict=True):
            name = self.fresh(iv.name_hint, "i")
            self.names[iv] = name
            limit = str(bound) if isinstance(bound, int) else self.value(bound)
            inc = f"{name}++" if step == 1 else f"{name} += {step}"
            self.emit(f"for (int64_t {name} = 0; {name} < {limit}; {inc}) {{")
            self.depth += 1
            opened += 1
        body = op.body.block
        self.block(body, skip_last=True)
        term = body.last_op
        assert isinstance(term, kernel.YieldOp)
        for name, v in zip(carried, term.values, strict=True):
            self.emit(f"{name} = {self.value(v)};")
        for _ in range(opened):
            self.depth -= 1
            self.emit("}")

    def op_kernel_matmul(self, op: kernel.MatmulOp) -> None:
        """`rung_matmul_float[_bt](lhs, rhs, out, batches, m, n, k, accumulate)`."""
        a, b, c = self.buffer(op.lhs), self.buffer(op.rhs), self.buffer(op.out)
        fn = "rung_matmul_float_bt" if op.transpose_rhs is not None else "rung_matmul_float"
        acc = "1" if op.accumulate is not None else "0"
        self.emit(
            f"{fn}({a.ptr}, {b.ptr}, {c.ptr}, {a.dims[0]}, {b.dims[0]}, {c.dims[0]}, "
            f"{c.dims[1]}, {c.dims[2]}, {a.dims[2]}, {acc});"
        )

    def op_kernel_call(self, op: kernel.CallOp) -> None:
        parts = []
        for v in op.buffers:
            buf = self.buffer(v)
            t = v.type
            assert isinstance(t, MemRefType)
            dims = ", ".join(buf.dims) or "0"
            parts.append(
                f"{{(void *){buf.ptr}, {ONNX_FROM_MLIR[t.element_type]}, {len(buf.dims)}, "
                f"{{{dims}}}}}"
            )
        args = ", ".join(str(a) for a in kernel._ints(op.args)) or "0"  # noqa: SLF001
        self.emit(
            f"rung_{op.callee.data}((rung_tensor[]){{{', '.join(parts)}}}, "
            f"(const int64_t[]){{{args}}});"
        )

    # -- structured control flow: values that change are mutable variables ------------------

    def _mutable(self, v: SSAValue, init: SSAValue | None = None) -> None:
        """Declare non-const variables for `v` (pointer and `?` dims, or a scalar) and bind it.

        Results of scf.if and the values an scf.while carries are assigned in
        several places, so they cannot be the `const` variables other values get.
        """
        t = v.type
        values = self._parts(init, t) if init is not None else None
        if isinstance(t, MemRefType):
            ptr = self.fresh(v.name_hint, "b")
            ctype = storage_type(t.element_type)
            self.emit(f"{ctype} *{ptr} = {values[0] if values else '0'};")
            dims, k = [], 1
            for i, d in enumerate(t.get_shape()):
                if d >= 0:
                    dims.append(str(d))
                    continue
                name = f"{ptr}_d{i}"
                self.used.add(name)
                self.emit(f"int64_t {name} = {values[k] if values else '0'};")
                dims.append(name)
                k += 1
            self.bind_buffer(v, ptr, dims)
            return
        name = self.fresh(v.name_hint)
        self.emit(f"{scalar_type(t)} {name} = {values[0] if values else '0'};")
        self.names[v] = name

    def _alias(self, v: SSAValue, like: SSAValue) -> None:
        """Bind `v` to the variables of `like` (a block argument or result sharing them)."""
        if isinstance(v.type, MemRefType):
            buf = self.buffer(like)
            self.bind_buffer(v, buf.ptr, list(buf.dims))
        else:
            self.names[v] = self.names[like]

    def _vars(self, v: SSAValue) -> list[tuple[str, str]]:
        """The (name, C type) of each mutable variable bound to `v`."""
        t = v.type
        if not isinstance(t, MemRefType):
            return [(self.names[v], scalar_type(t))]
        buf = self.buffer(v)
        out = [(buf.ptr, f"{storage_type(t.element_type)} *")]
        out += [(buf.dims[i], "int64_t") for i, d in enumerate(t.get_shape()) if d < 0]
        return out

    def _parts(self, v: SSAValue, t: Attribute) -> list[str]:
        """The C expressions of `v` laid out as the variables of a value of type `t`."""
        if not isinstance(t, MemRefType):
            return [self.value(v)]
        buf = self.buffer(v)
        ptr = buf.ptr
        if any(w.name == ptr for w in self.weights):  # a `static const` array
            ptr = f"({storage_type(t.element_type)} *){ptr}"
        return [ptr] + [buf.dims[i] for i, d in enumerate(t.get_shape()) if d < 0]

    def _assign(self, targets: Sequence[SSAValue], values: Sequence[SSAValue]) -> None:
        """Assign `values` to the variables of `targets` as if all at once.

        An assignment whose expression reads a variable that another one
        writes (carried buffers swapped each iteration) goes through a
        temporary, computed before any variable is written.
        """
        pairs: list[tuple[str, str, str]] = []
        for target, value in zip(targets, values, strict=True):
            exprs = self._parts(value, target.type)
            for (name, ctype), expr in zip(self._vars(target), exprs, strict=True):
                if name != expr:
                    pairs.append((name, ctype, expr))
        written = {name for name, _, _ in pairs}
        final = []
        for name, ctype, expr in pairs:
            if set(re.findall(r"[A-Za-z_]\w*", expr)) & (written - {name}):
                tmp = self.fresh(f"{name}_next")
                sep = "" if ctype.endswith("*") else " "
                self.emit(f"{ctype}{sep}{tmp} = {expr};")
                expr = tmp
            final.append((name, expr))
        for name, expr in final:
            self.emit(f"{name} = {expr};")

    def _branch(self, block: Block, results: Sequence[SSAValue]) -> None:
        self.depth += 1
        self.block(block, skip_last=True)
        term = block.last_op
        if results:
            assert isinstance(term, scf.YieldOp)
            self._assign(results, list(term.arguments))
        self.depth -= 1

    def op_scf_if(self, op: scf.IfOp) -> None:
        """`if`/`else`; results are variables declared before and assigned in each branch."""
        for r in op.results:
            self._mutable(r)
        self.emit(f"if ({self.value(op.cond)}) {{")
        self._branch(op.true_region.block, op.results)
        if op.false_region.blocks and (op.results or len(op.false_region.block.ops) > 1):
            self.emit("} else {")
            self._branch(op.false_region.block, op.results)
        self.emit("}")

    def op_scf_while(self, op: scf.WhileOp) -> None:
        """`for (;;)`: the before-region, `break` on a false condition, then the after-region.

        The carried values are variables initialized from the operands; the
        after-region's yield assigns them all at once. When `scf.condition`
        forwards the before-region's arguments, the after-region's arguments
        and the results are those same variables.
        """
        before, after = op.before_region.block, op.after_region.block
        cond, term = before.last_op, after.last_op
        assert isinstance(cond, scf.ConditionOp) and isinstance(term, scf.YieldOp)
        for arg, init in zip(before.args, op.arguments, strict=True):
            self._mutable(arg, init)
        forwards = list(cond.args) == list(before.args)
        if forwards:
            for result, after_arg, arg in zip(op.res, after.args, before.args, strict=True):
                self._alias(result, arg)
                self._alias(after_arg, arg)
        else:
            for result, after_arg in zip(op.res, after.args, strict=True):
                self._mutable(result)
                self._alias(after_arg, result)
        self.emit("for (;;) {")
        self.depth += 1
        self.block(before, skip_last=True)
        if not forwards:
            self._assign(list(op.res), list(cond.args))
        self.emit(f"if (!{_paren(self.value(cond.condition))}) break;")
        self.block(after, skip_last=True)
        self._assign(list(before.args), list(term.arguments))
        self.depth -= 1
        self.emit("}")

    # -- scalar arithmetic -------------------------------------------------------------------

    def scalar(self, op: Operation) -> str | None:
        """The C expression of an arith/math op, or None if it is not one."""
        if isinstance(op, arith.ConstantOp):
            return ""
        expr = self._scalar(op)
        t = op.results[0].type if op.results else None
        if expr is not None and t is not None and sub_byte(t) is not None:
            return _round(t, expr)  # 2/4-bit integers compute in a byte, then wrap
        return expr

    def _scalar(self, op: Operation) -> str | None:
        args = [self.value(v) for v in op.operands]
        t = op.results[0].type if op.results else None
        src = op.operands[0].type if op.operands else None
        name = op.name
        f = _is_float(t) if t is not None else False
        binops = {
            "arith.addf": "+", "arith.subf": "-", "arith.mulf": "*", "arith.divf": "/",
        }  # fmt: skip
        if name in binops:
            return _round(t, f"{args[0]} {binops[name]} {args[1]}")
        wrapping = {"arith.addi": "+", "arith.subi": "-", "arith.muli": "*"}
        if name in wrapping:
            sym = wrapping[name]
            if isinstance(t, IndexType):
                return f"{args[0]} {sym} {args[1]}"
            ut, ct = _unsigned_of(t), scalar_type(t)
            return f"({ct})(({ut}){args[0]} {sym} ({ut}){args[1]})"
        bitops = {"arith.andi": "&", "arith.ori": "|", "arith.xori": "^"}
        if name in bitops:
            return f"({scalar_type(t)})({args[0]} {bitops[name]} {args[1]})"
        if name in ("arith.divsi", "arith.remsi"):
            sym = "/" if name == "arith.divsi" else "%"
            return f"{args[0]} {sym} {args[1]}"
        if name in ("arith.divui", "arith.remui"):
            sym = "/" if name == "arith.divui" else "%"
            ut = _unsigned_of(t)
            return f"({scalar_type(t)})(({ut}){args[0]} {sym} ({ut}){args[1]})"
        if name == "arith.floordivsi":
            return f"rung_floordiv({args[0]}, {args[1]})"
        if name == "arith.ceildivsi":
            return f"rung_ceildiv({args[0]}, {args[1]})"
        if name in ("arith.maxsi", "arith.maxui", "arith.maxnumf"):
            if name == "arith.maxnumf":
                return f"{_fn('fmax', t)}({args[0]}, {args[1]})"
            return f"({args[0]} > {args[1]} ? {args[0]} : {args[1]})"
        if name in ("arith.minsi", "arith.minui", "arith.minnumf"):
            if name == "arith.minnumf":
                return f"{_fn('fmin', t)}({args[0]}, {args[1]})"
            return f"({args[0]} < {args[1]} ? {args[0]} : {args[1]})"
        if name == "arith.maximumf":
            a, b = args
            return f"(({a} != {a} || {a} > {b}) ? {a} : {b})"
        if name == "arith.minimumf":
            a, b = args
            return f"(({a} != {a} || {a} < {b}) ? {a} : {b})"
        if name == "arith.negf":
            return f"-{args[0]}"
        if name == "arith.select":
            return f"{args[0]} ? {args[1]} : {args[2]}"
        if name in ("arith.shli", "arith.shrui", "arith.shrsi"):
            # Shifts by a negative amount or by the width or more are 0 (the sign for an
            # arithmetic right shift), as numpy and ONNX define them; C leaves them undefined.
            ct, ut = scalar_type(t), _unsigned_of(t)
            width = 64 if isinstance(t, IndexType) else t.width.data  # type: ignore[union-attr]
            a, b = args
            inside = f"(uint64_t){b} < {width}"
            if name == "arith.shli":
                return f"({inside} ? ({ct})(({ut}){a} << {b}) : ({ct})0)"
            if name == "arith.shrui":
                return f"({inside} ? ({ct})(({ut}){a} >> {b}) : ({ct})0)"
            return f"({inside} ? ({ct})({a} >> {b}) : ({ct})({a} < 0 ? -1 : 0))"
        if name == "arith.cmpi":
            return self._cmpi(op, args)  # type: ignore[arg-type]
        if name == "arith.cmpf":
            return self._cmpf(op, args)  # type: ignore[arg-type]
        if name in (
            "arith.index_cast", "arith.sitofp", "arith.extsi", "arith.trunci",
            "arith.extf", "arith.fptosi", "arith.fptoui", "arith.bitcast",
        ):  # fmt: skip
            if sub_byte(t) is not None and name in ("arith.fptosi", "arith.fptoui"):
                return f"(int64_t){args[0]}"  # truncated in range; the caller wraps it
            return _round(t, f"({scalar_type(t)}){args[0]}")
        if name in ("arith.uitofp", "arith.extui"):
            return _round(t, f"({scalar_type(t)})({_unsigned_of(src)}){args[0]}")
        if name == "arith.truncf":
            return _round(t, f"({scalar_type(t)}){args[0]}")
        if name == "kernel.remf":
            return _round(t, f"{_fn('fmod', t)}({args[0]}, {args[1]})")
        if name.startswith("math."):
            return self._math(op, args, t, f)
        return None

    def _cmpi(self, op: arith.CmpiOp, args: list[str]) -> str:
        pred = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"][
            op.predicate.value.data
        ]
        sym = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}[
            pred[1:] if pred[0] in "su" else pred
        ]
        a, b = args
        if pred[0] == "u":
            ut = _unsigned_of(op.lhs.type)
            a, b = f"({ut}){a}", f"({ut}){b}"
        return f"{a} {sym} {b}"

    def _cmpf(self, op: arith.CmpfOp, args: list[str]) -> str:
        names = [
            "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
            "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true",
        ]  # fmt: skip
        pred = names[op.predicate.value.data]
        a, b = args
        nan = f"({a} != {a} || {b} != {b})"
        ordered = {"oeq": "==", "ogt": ">", "oge": ">=", "olt": "<", "ole": "<="}
        if pred in ordered:
            return f"{a} {ordered[pred]} {b}"
        if pred == "une":
            return f"{a} != {b}"
        if pred == "one":
            return f"({a} < {b} || {a} > {b})"
        if pred == "uno":
            return nan
        if pred == "ord":
            return f"!{nan}"
        if pred in ("ueq", "ugt", "uge", "ult", "ule"):
            sym = {"ueq": "==", "ugt": ">", "uge": ">=", "ult": "<", "ule": "<="}[pred]
            return f"({nan} || {a} {sym} {b})"
        return "true" if pred == "true" else "false"

    def _math(self, op: Operation, args: list[str], t: Attribute, f: bool) -> str:
        name = op.name[len("math.") :]
        libm = {
            "exp": "exp", "log": "log", "sqrt": "sqrt", "sin": "sin", "cos": "cos",
            "tan": "tan", "asin": "asin", "acos": "acos", "atan": "atan", "sinh": "sinh",
            "cosh": "cosh", "tanh": "tanh", "asinh": "asinh", "acosh": "acosh",
            "atanh": "atanh", "erf": "erf", "floor": "floor", "ceil": "ceil",
            "absf": "fabs", "roundeven": "nearbyint", "round": "round", "trunc": "trunc",
            "powf": "pow", "atan2": "atan2", "log2": "log2", "log10": "log10",
            "log1p": "log1p", "expm1": "expm1", "exp2": "exp2", "cbrt": "cbrt",
            "fma": "fma", "copysign": "copysign",
        }  # fmt: skip
        if name in libm:
            return _round(t, f"{_fn(libm[name], t)}({', '.join(args)})")
        if name == "rsqrt":
            one = "1.0" if isinstance(t, Float64Type) else "1.0f"
            return _round(t, f"{one} / {_fn('sqrt', t)}({args[0]})")
        if name == "absi":
            return f"({scalar_type(t)})({args[0]} < 0 ? -{args[0]} : {args[0]})"
        if name == "ipowi":
            return f"({scalar_type(t)})rung_ipow((int64_t){args[0]}, (int64_t){args[1]})"
        if name == "fpowi":
            return _round(t, f"{_fn('pow', t)}({args[0]}, {args[1]})")
        raise CodegenError(f"C code generation does not handle '{op.name}'")


def _arg_name(func: FuncOp, i: int, key: str) -> str | None:
    attrs = getattr(func, key)
    if attrs is None or i >= len(attrs.data):
        return None
    name = attrs.data[i].data.get("onnx.name")
    return name.data if isinstance(name, StringAttr) else None


def _c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _array_literal(weight: Weight) -> str:
    flat = weight.array.reshape(-1)
    t = weight.element
    if isinstance(t, BFloat16Type):
        values = [str(int(v)) for v in flat.view(np.uint16)]
    elif narrow_float(t) is not None:
        values = [str(int(v)) for v in flat.view(np.uint8)]
    elif _is_float(t):
        values = [_float_literal(float(v), Float32Type() if _is_half(t) else t) for v in flat]
    elif isinstance(t, IntegerType) and t.width.data == 1:
        values = ["true" if v else "false" for v in flat]
    elif (width := sub_byte(t)) is not None:
        values = [str(int(v) & ((1 << width) - 1)) for v in flat]  # the low bits, as stored
    else:
        values = [_int_literal(int(v), t) for v in flat]
    lines = []
    for i in range(0, len(values), 12):
        lines.append("  " + ", ".join(values[i : i + 12]) + ",")
    return "\n".join(lines)


def _check_inputs(sig: Signature, prefix: str) -> list[str]:
    out = []
    for i, (name, element, shape) in enumerate(sig.inputs):
        label = _c_string(f"input {i} ('{name}')")
        out.append(
            f"  if (inputs[{i}].dtype != {ONNX_FROM_MLIR[element]} || inputs[{i}].rank != "
            f'{len(shape)}) return rung_error({label}, "has the wrong type or rank");'
        )
        for d, size in enumerate(shape):
            if size >= 0:
                out.append(
                    f"  if (inputs[{i}].shape[{d}] != {size}) return rung_error({label}, "
                    f'"dim {d} must be {size}");'
                )
    return out


def generate_c(module: ModuleOp, prefix: str = "model", entry: str | None = None) -> CProgram:
    """The C program of a kernel-level module (its first function, or `entry`)."""
    if not re.fullmatch(r"[A-Za-z_]\w*", prefix):
        raise CodegenError(f"'{prefix}' is not a valid C identifier prefix")
    funcs = [f for f in module.body.block.ops if isinstance(f, FuncOp)]
    if entry is not None:
        funcs = [f for f in funcs if f.sym_name.data == entry]
    if not funcs:
        raise CodegenError("the module has no function to generate C for")
    func = funcs[0]
    emitter = _Emitter(module, prefix)
    sig = emitter.entry(func)
    arena = (
        int(func.attributes["kernel.arena_bytes"].value.data)
        if ("kernel.arena_bytes" in func.attributes)
        else 0
    )  # type: ignore[attr-defined]

    weights_bytes = bytearray()
    decls = []
    setup = []
    for w in emitter.weights:
        ctype = storage_type(w.element)
        if w.offset is None:
            decls.append(f"static const {ctype} {w.name}[{max(w.array.size, 1)}] = {{")
            decls.append(_array_literal(w) if w.array.size else "  0,")
            decls.append("};")
        else:
            decls.append(f"static const {ctype} *{w.name};  /* weights file @ {w.offset} */")
            setup.append(f"  {w.name} = (const {ctype} *)(rung_weights_base + {w.offset});")
            weights_bytes.extend(b"\0" * (w.offset - len(weights_bytes)))
            weights_bytes.extend(np.ascontiguousarray(w.array).tobytes())

    p = prefix
    openmp_flag = " -fopenmp" if emitter.uses_openmp else ""
    body = "\n".join(emitter.lines)
    source = f"""/* Generated by rung from a kernel-dialect module. Do not edit.
 *
 * Build:  cc -O3 -march=native -shared -fPIC{openmp_flag} {p}.c -o lib{p}.so -lm
 * Use:    see {p}.h for the interface.
 */
#include "{p}.h"
#include "rung_runtime.h"

{chr(10).join(decls)}

static const char *rung_weights_base;
static size_t rung_weights_size;

#ifdef _OPENMP
#include <omp.h>
#endif

void {p}_set_num_threads(int threads) {{
#ifdef _OPENMP
  if (threads > 0) omp_set_num_threads(threads);
#else
  (void)threads;
#endif
}}

size_t {p}_arena_bytes(void) {{ return {arena}; }}
int {p}_num_inputs(void) {{ return {len(sig.inputs)}; }}
int {p}_num_outputs(void) {{ return {len(sig.outputs)}; }}
const char *{p}_last_error(void) {{ return rung_last_error; }}
void {p}_free(void *data) {{ free(data); }}

int {p}_init(const char *weights_path) {{
  if ({len(weights_bytes)} > 0) {{
    if (rung_map_weights(weights_path, {len(weights_bytes)}, &rung_weights_base, &rung_weights_size))
      return 1;
  }}
{chr(10).join(setup)}
  return 0;
}}

void {p}_release(void) {{
  rung_unmap_weights(rung_weights_base, rung_weights_size);
  rung_weights_base = 0;
  rung_weights_size = 0;
}}

int {p}_run(const rung_tensor *inputs, rung_tensor *outputs, void *arena_memory) {{
  char *const arena = (char *)arena_memory;
  rung_heap heap = {{0}};
  int rc = 0;
  (void)arena;
  if ({len(weights_bytes)} > 0 && !rung_weights_base) return rung_error("{p}_run", "called before {p}_init");
{chr(10).join(_check_inputs(sig, p))}
  for (int i = 0; i < {len(sig.outputs)}; ++i) outputs[i].data = 0;
{body}
done:
  rung_heap_release(&heap);
  if (rc) for (int i = 0; i < {len(sig.outputs)}; ++i) {{ free(outputs[i].data); outputs[i].data = 0; }}
  return rc;
}}
"""
    header = _header(p, sig, arena)
    return CProgram(
        p, source, header, bytes(weights_bytes), sig, arena, uses_openmp=emitter.uses_openmp
    )


def _header(p: str, sig: Signature, arena: int) -> str:
    def describe(items: list[tuple[str, Attribute, list[int]]]) -> str:
        lines = []
        for i, (name, element, shape) in enumerate(items):
            dims = "x".join("?" if d < 0 else str(d) for d in shape) or "scalar"
            lines.append(
                f" *   [{i}] {name}: {storage_type(element)} [{dims}] (dtype {ONNX_FROM_MLIR[element]})"
            )
        return "\n".join(lines)

    guard = f"RUNG_{p.upper()}_H"
    return f"""/* Generated by rung. Do not edit.
 *
 * The interface of the compiled model `{p}`.
 *
 * Inputs:
{describe(sig.inputs)}
 * Outputs:
{describe(sig.outputs)}
 *
 * Call {p}_init(weights_path) once (the path of {p}.weights; NULL if the model
 * has none), then {p}_run(inputs, outputs, arena) as often as needed, from one
 * thread at a time per arena. `arena` is scratch memory of {p}_arena_bytes()
 * bytes, 64-byte aligned, owned by the caller. Outputs are allocated by
 * {p}_run; release each outputs[i].data with {p}_free. A non-zero return is
 * an error, described by {p}_last_error().
 */
#ifndef {guard}
#define {guard}

#include <stddef.h>
#include <stdint.h>

#ifndef RUNG_TENSOR_DEFINED
#define RUNG_TENSOR_DEFINED
#define RUNG_MAX_RANK 8
typedef struct rung_tensor {{
  void *data;                     /* contiguous, row-major */
  int32_t dtype;                  /* ONNX TensorProto.DataType code */
  int32_t rank;
  int64_t shape[RUNG_MAX_RANK];
}} rung_tensor;
#endif

#ifdef __cplusplus
extern "C" {{
#endif

int {p}_init(const char *weights_path);
void {p}_release(void);
int {p}_run(const rung_tensor *inputs, rung_tensor *outputs, void *arena);
size_t {p}_arena_bytes(void);  /* {arena} */
void {p}_set_num_threads(int threads);  /* OpenMP threads of later runs (0: unchanged) */
int {p}_num_inputs(void);
int {p}_num_outputs(void);
void {p}_free(void *data);
const char *{p}_last_error(void);

#ifdef __cplusplus
}}
#endif

#endif
"""


__all__ = ["CProgram", "CodegenError", "RUNTIME_HEADER", "Signature", "generate_c"]
