"""The C program of a kernel-level module: its source, header and side file of weights.

The ABI (see `_header`) is: `<prefix>_init(weights_path)` once, then
`<prefix>_run(inputs, outputs, arena)` any number of times. Inputs and outputs
are `rung_tensor`s (data, ONNX dtype code, rank, shape); outputs are
allocated by the library and released with `<prefix>_free`. The arena is
scratch memory of `<prefix>_arena_bytes()` bytes, 64-byte aligned, that the
memory plan has laid the intermediate buffers of static size out in; buffers
of run-time size come from the heap and are released before `_run` returns.

`generate_c` wraps the body that the emitters write (see `emitter`) in that
ABI: checks of the inputs, copies of the outputs, and the weights. The body
of a large model is split into static functions that `_run` calls (see
`outline`), so that the C compiler's time stays linear in the model's size.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float32Type,
    IntegerType,
    MemRefType,
    ModuleOp,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, SSAValue

from rung.dialects.onnx.dtypes import ONNX_FROM_MLIR
from rung.dialects.onnx.types import StringType
from rung.dialects.signature import io_dim_params, io_name

from .c_types import (
    CodegenError,
    c_string_literal,
    float_literals,
    int_literal,
    is_float,
    is_half,
    narrow_float,
    storage_type,
    sub_byte,
)
from .emitter import Emitter, Weight
from .outline import DEFAULT_OUTLINING, Body, Outlining, Piece, split
from .values import ABI_RULES, ABI_TYPES, is_value_port, port_element
from .values import bind_input as bind_value_input
from .values import check_input as check_value_input
from .values import copy_output as copy_value_output
from .values import describe as describe_value

RUNTIME_HEADER = Path(__file__).with_name("rung_runtime.h")
"""The C runtime every generated file includes: ABI types, helpers, microkernels."""

TENSOR_HEADER = Path(__file__).with_name("rung_tensor.h")
"""The ABI's tensor type, whose definition each model header carries as well."""


def _tensor_definition() -> str:
    """`rung_tensor.h`'s definition, for a model header that must stand alone."""
    text = TENSOR_HEADER.read_text()
    return text[text.index("#ifndef RUNG_TENSOR_DEFINED") :]


Port = tuple[str, Attribute, list[int]]
"""An input or output: (name, element type, shape with -1 for run-time dims)."""


@dataclass
class Signature:
    """What the host needs to call the entry function."""

    inputs: list[Port]
    outputs: list[Port]
    dim_names: list[list[str]] = field(default_factory=list)
    """Per input, the model's symbolic name of each dim ('' where it has none)."""


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
    parts: int = 0
    """How many functions `_run` is split into (`outline`); 0 if it is one."""
    cold_parts: int = 0
    """How many of those are cold (built for size, not speed)."""


def _entry(e: Emitter, func: FuncOp) -> tuple[Signature, list[Piece]]:
    """Emit the body of `_run` for `func`: bind the inputs, emit the ops, copy out the
    outputs. The lines come in pieces, one per top-level op, for `outline.split`."""
    block = func.body.block
    inputs = [_bind_input(e, func, i, arg) for i, arg in enumerate(block.args)]
    pieces = [Piece(None, list(e.lines))]
    ret = block.last_op
    assert isinstance(ret, ReturnOp)
    for op in list(block.ops)[:-1]:
        start = len(e.lines)
        e.op(op)
        pieces.append(Piece(op, e.lines[start:]))
    start = len(e.lines)
    outputs = [_copy_output(e, func, i, v) for i, v in enumerate(ret.arguments)]
    pieces.append(Piece(ret, e.lines[start:]))
    names = [_dim_names(func, i) for i in range(len(block.args))]
    return Signature(inputs, outputs, names), pieces


def _dim_names(func: FuncOp, i: int) -> list[str]:
    """The symbolic dim names of argument `i` ('' for a dim without a name)."""
    return io_dim_params(func.arg_attrs, i)


def _bind_input(e: Emitter, func: FuncOp, i: int, arg: SSAValue) -> Port:
    """Bind argument `i` to the data and run-time dims of `inputs[i]`."""
    t = arg.type
    if is_value_port(port_element(t)):  # a list, an optional, strings: see `values`
        name = _arg_name(func, i, "arg_attrs") or arg.name_hint or f"input{i}"
        bind_value_input(e, arg, i, name)
        return name, port_element(t), _shape(t) if isinstance(t, MemRefType) else []
    if not isinstance(t, MemRefType):
        raise CodegenError(f"argument #{i} of the entry function is not a buffer ({t})")
    ptr = e.fresh(_arg_name(func, i, "arg_attrs") or arg.name_hint, "in")
    ctype = storage_type(t.element_type)
    dims = []
    e.emit(f"{ctype} *const {ptr} = ({ctype} *)inputs[{i}].data;")
    for d, size in enumerate(t.get_shape()):
        if size >= 0:
            dims.append(str(size))
        else:
            name = f"{ptr}_d{d}"
            e.used.add(name)
            e.emit(f"const int64_t {name} = inputs[{i}].shape[{d}];")
            dims.append(name)
    e.bind_buffer(arg, ptr, dims)
    name = _arg_name(func, i, "arg_attrs") or arg.name_hint or f"input{i}"
    return name, t.element_type, _shape(t)


def _copy_output(e: Emitter, func: FuncOp, i: int, v: SSAValue) -> Port:
    """Fill `outputs[i]` with a copy of the returned buffer `v` (the arena is the caller's)."""
    t = v.type
    if is_value_port(port_element(t)):  # a list, an optional, strings: see `values`
        copy_value_output(e, v, i)
        name = _arg_name(func, i, "res_attrs") or f"output{i}"
        return name, port_element(t), _shape(t) if isinstance(t, MemRefType) else []
    buf = e.buffer(v)
    assert isinstance(t, MemRefType)
    ctype = storage_type(t.element_type)
    count = buf.count()
    e.emit(f"outputs[{i}].dtype = {ONNX_FROM_MLIR[t.element_type]};")
    e.emit(f"outputs[{i}].rank = {len(buf.dims)};")
    for d, size in enumerate(buf.dims):
        e.emit(f"outputs[{i}].shape[{d}] = {size};")
    e.emit(f"outputs[{i}].data = rung_copy_out({buf.ptr}, (size_t)({count}) * sizeof({ctype}));")
    e.emit(f'if (!outputs[{i}].data) RUNG_FAIL("out of memory");')
    return _arg_name(func, i, "res_attrs") or f"output{i}", t.element_type, _shape(t)


def _shape(t: MemRefType) -> list[int]:
    """The shape with -1 for each run-time dim."""
    return [d if d >= 0 else -1 for d in t.get_shape()]


def _arg_name(func: FuncOp, i: int, key: str) -> str | None:
    return io_name(getattr(func, key), i)


def _array_literal(weight: Weight) -> str:
    flat = weight.array.reshape(-1)
    t = weight.element
    if isinstance(t, StringType):
        values = [c_string_literal(str(v)) for v in flat]
    elif isinstance(t, BFloat16Type):
        values = [str(int(v)) for v in flat.view(np.uint16)]
    elif narrow_float(t) is not None:
        values = [str(int(v)) for v in flat.view(np.uint8)]
    elif is_float(t):
        values = float_literals(flat, Float32Type() if is_half(t) else t)
    elif isinstance(t, IntegerType) and t.width.data == 1:
        values = ["true" if v else "false" for v in flat]
    elif (width := sub_byte(t)) is not None:
        values = [str(int(v) & ((1 << width) - 1)) for v in flat]  # the low bits, as stored
    else:
        values = [int_literal(int(v), t) for v in flat]
    lines = []
    for i in range(0, len(values), 12):
        lines.append("  " + ", ".join(values[i : i + 12]) + ",")
    return "\n".join(lines)


def _check_inputs(sig: Signature, prefix: str) -> list[str]:
    out = []
    for i, (name, element, shape) in enumerate(sig.inputs):
        label = c_string_literal(f"input {i} ('{name}')")
        if is_value_port(element):
            out += check_value_input(i, label, element, shape)
            continue
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
    return out + _check_named_dims(sig)


def _check_named_dims(sig: Signature) -> list[str]:
    """Dims that the model gives one symbolic name (`batch`) must agree at run time: the
    code is generated for one size, and two would read past the smaller input."""
    first: dict[str, tuple[int, int]] = {}
    out = []
    for i, names in enumerate(sig.dim_names):
        for d, dim in enumerate(names[: len(sig.inputs[i][2])]):
            if not dim or sig.inputs[i][2][d] >= 0:
                continue
            if dim not in first:
                first[dim] = (i, d)
                continue
            j, e = first[dim]
            label = c_string_literal(f"input {i} ('{sig.inputs[i][0]}')")
            text = c_string_literal(
                f"dim {d} ('{dim}') differs from dim {e} of input {j} ('{sig.inputs[j][0]}'), "
                f"which has the same name"
            )
            out.append(
                f"  if (inputs[{i}].shape[{d}] != inputs[{j}].shape[{e}]) "
                f"return rung_error({label}, {text});"
            )
    return out


def generate_c(
    module: ModuleOp,
    prefix: str = "model",
    entry: str | None = None,
    outlining: Outlining = DEFAULT_OUTLINING,
) -> CProgram:
    """The C program of a kernel-level module (its first function, or `entry`);
    `outlining` says when `_run` is split into functions."""
    if not re.fullmatch(r"[A-Za-z_]\w*", prefix):
        raise CodegenError(f"'{prefix}' is not a valid C identifier prefix")
    if prefix.lower().startswith("rung_"):
        raise CodegenError(f"prefix '{prefix}': names that start with 'rung_' are the runtime's")
    funcs = [f for f in module.body.block.ops if isinstance(f, FuncOp)]
    if entry is not None:
        funcs = [f for f in funcs if f.sym_name.data == entry]
    if not funcs:
        raise CodegenError("the module has no function to generate C for")
    func = funcs[0]
    emitter = Emitter(module, prefix)
    sig, pieces = _entry(emitter, func)
    body = split(emitter, pieces, outlining)
    arena = (
        int(func.attributes["kernel.arena_bytes"].value.data)
        if ("kernel.arena_bytes" in func.attributes)
        else 0
    )  # type: ignore[attr-defined]

    decls, setup, weights = _weights(emitter.weights)
    source = _source(prefix, emitter, body, sig, arena, decls, setup, len(weights))
    header = _header(prefix, sig, arena)
    return CProgram(
        prefix,
        source,
        header,
        weights,
        sig,
        arena,
        uses_openmp=emitter.uses_openmp,
        parts=len(body.functions),
        cold_parts=body.cold,
    )


def _weights(weights: list[Weight]) -> tuple[list[str], list[str], bytes]:
    """The file-scope declarations of the weights, the lines of `_init` that point the large
    ones into the mapped side file, and the contents of that file."""
    chunks: list[bytes | memoryview] = []  # joined once: the weights are copied once
    size = 0
    decls = []
    setup = []
    for w in weights:
        ctype = storage_type(w.element)
        if isinstance(w.element, StringType):  # `const char *const`: the strings and pointers
            decls.append(f"static {ctype}const {w.name}[{max(w.array.size, 1)}] = {{")
            decls.append(_array_literal(w) if w.array.size else '  "",')
            decls.append("};")
        elif w.offset is None:
            decls.append(f"static const {ctype} {w.name}[{max(w.array.size, 1)}] = {{")
            decls.append(_array_literal(w) if w.array.size else "  0,")
            decls.append("};")
        else:
            decls.append(f"static const {ctype} *{w.name};  /* weights file @ {w.offset} */")
            setup.append(f"  {w.name} = (const {ctype} *)(rung_weights_base + {w.offset});")
            chunks.append(bytes(w.offset - size))
            data = memoryview(np.ascontiguousarray(w.array).reshape(-1).view(np.uint8))
            chunks.append(data)
            size = w.offset + data.nbytes
    return decls, setup, b"".join(chunks)


def _pack_lines(emitter: Emitter) -> list[str]:
    """`_init` packs each constant right operand of the GEMM (freeing a previous packing)."""
    lines = []
    for w in emitter.packed:
        lines.append(f"  free({w.name});")
        if w.conv_groups:
            lines.append(
                f"  {w.name} = rung_conv_prepack_w((const float *){w.weight}, {w.n}, {w.k}, "
                f"{w.conv_groups});"
            )
            continue
        pack = "rung_gemm_prepack_thin" if w.thin else "rung_gemm_prepack_b"
        lines.append(
            f"  {w.name} = {pack}((const float *){w.weight}, {w.n}, {w.k}, {int(w.transposed)});"
        )
    return [line + "\n" for line in lines]


def _unpack_lines(emitter: Emitter) -> list[str]:
    lines = []
    for w in emitter.packed:
        lines.append(f"  free({w.name});")
        lines.append(f"  {w.name} = 0;")
    return [line + "\n" for line in lines]


def _source(
    p: str,
    emitter: Emitter,
    body: Body,
    sig: Signature,
    arena: int,
    decls: list[str],
    setup: list[str],
    nweights: int,
) -> str:
    """The C file: weights, the ABI's small functions, the parts of a split body, and
    `_run` around the emitted body."""
    openmp_flag = " -fopenmp" if emitter.uses_openmp else ""
    parts = "".join(f"{function}\n\n" for function in body.functions)
    return f"""/* Generated by rung from a kernel-dialect module. Do not edit.
 *
 * Build:  cc -O3 -march=native -shared -fPIC{openmp_flag} {p}.c -o lib{p}.so -lm
 * Use:    see {p}.h for the interface.
 */
#include "{p}.h"
#include "rung_runtime.h"

{chr(10).join(decls)}
{"".join(f"static float *{w.name};{chr(10)}" for w in emitter.packed)}
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
  if ({nweights} > 0) {{
    if (rung_map_weights(weights_path, {nweights}, &rung_weights_base, &rung_weights_size))
      return 1;
  }}
{chr(10).join(setup)}
{"".join(_pack_lines(emitter))}  return 0;
}}

void {p}_release(void) {{
{"".join(_unpack_lines(emitter))}  rung_unmap_weights(rung_weights_base, rung_weights_size);
  rung_weights_base = 0;
  rung_weights_size = 0;
}}

{parts}int {p}_run(const rung_tensor *inputs, rung_tensor *outputs, void *arena_memory) {{
  char *const arena = (char *)arena_memory;
  rung_heap heap = {{0}};
  int rc = 0;
  (void)arena;
  if ({nweights} > 0 && !rung_weights_base) return rung_error("{p}_run", "called before {p}_init");
{chr(10).join(_check_inputs(sig, p))}
  for (int i = 0; i < {len(sig.outputs)}; ++i) outputs[i].data = 0;
{chr(10).join(body.lines)}
done:
  rung_heap_release(&heap);
  if (rc) for (int i = 0; i < {len(sig.outputs)}; ++i) {{ free(outputs[i].data); outputs[i].data = 0; }}
  return rc;
}}
"""


def _header(p: str, sig: Signature, arena: int) -> str:
    def describe(items: list[Port]) -> str:
        lines = []
        for i, (name, element, shape) in enumerate(items):
            if is_value_port(element):
                lines.append(f" *   [{i}] {name}: {describe_value(element, shape)}")
                continue
            dims = "x".join("?" if d < 0 else str(d) for d in shape) or "scalar"
            lines.append(
                f" *   [{i}] {name}: {storage_type(element)} [{dims}] (dtype {ONNX_FROM_MLIR[element]})"
            )
        return "\n".join(lines)

    guard = f"RUNG_{p.upper()}_H"
    values = any(is_value_port(element) for _, element, _ in sig.inputs + sig.outputs)
    rules = ABI_RULES if values else ""
    types = ABI_TYPES if values else ""
    tensor = _tensor_definition()
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
{rules} */
#ifndef {guard}
#define {guard}

#include <stddef.h>
#include <stdint.h>

{tensor}{types}
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
