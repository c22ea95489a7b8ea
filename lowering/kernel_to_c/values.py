"""Emitters of lists, optionals and strings, and their part of the C ABI (see `rung_seq.h`).

A `!kernel.list` is a `const rung_sequence *` and a `!kernel.optional` a
`const rung_tensor *` (NULL for none): both are scalars to the rest of code
generation, so control flow carries them as it carries numbers. Every list
of a run is a `rung_list` (`rung_seq.h`), the caller's sequences included,
wrapped as they are bound, so that appends can share a block of items. Elements
read from them are buffers bound to the fields of their descriptor:

    const rung_tensor *const e_item = &l->items[i];
    if (e_item->rank != 2 || e_item->shape[1] != 6) RUNG_FAIL("...");
    const int64_t e_d0 = e_item->shape[0];
    float *const e = (float *)e_item->data;

A string element is a `const char *`; buffers of strings move pointers, and
the bytes stay where they are (the caller's inputs, the model's constants)
until an output is copied out, strings included, into one block.

`bind_input`, `check_input`, `copy_output` and `describe` are the ABI's side
for ports that are lists, optionals or string tensors (`is_value_port`);
`abi_types` is the part of the model's header that declares their types.
"""

from __future__ import annotations

from pathlib import Path

from xdsl.dialects.builtin import MemRefType, TensorType
from xdsl.ir import Attribute, SSAValue

from rung.dialects.kernel_values import (
    ListEraseOp,
    ListGetOp,
    ListInsertOp,
    ListLengthOp,
    ListNewOp,
    ListType,
    OptionalGetOp,
    OptionalHasOp,
    OptionalNewOp,
    OptionalType,
    StrCaseOp,
    StrCmpOp,
    ZipMapOp,
)
from rung.dialects.onnx.dtypes import ONNX_FROM_MLIR
from rung.dialects.onnx.types import MapType, StringType

from .c_types import CodegenError, storage_type
from .emitter import Emitter, emits

SEQUENCE = "RUNG_DTYPE_SEQUENCE"
MAP = "RUNG_DTYPE_MAP"
NONE = "RUNG_DTYPE_NONE"


def _code(element: Attribute) -> str:
    try:
        return str(ONNX_FROM_MLIR[element])
    except KeyError:
        raise CodegenError(f"no ONNX dtype for element type {element}") from None


def _dims_literal(dims: list[str]) -> str:
    return f"(const int64_t[]){{{', '.join(dims) or '0'}}}"


def _put(e: Emitter, target: str, v: SSAValue) -> str:
    """A call copying buffer `v` into the descriptor `target` (non-zero when out of memory)."""
    buf = e.buffer(v)
    t = v.type
    assert isinstance(t, MemRefType)
    ctype = storage_type(t.element_type)
    return (
        f"rung_value_put(&heap, {target}, {buf.ptr}, {_code(t.element_type)}, {len(buf.dims)}, "
        f"{_dims_literal(buf.dims)}, (size_t)({buf.count()}) * sizeof({ctype}))"
    )


def _bind_element(e: Emitter, result: SSAValue, item: str, check: bool) -> None:
    """Bind buffer `result` to the descriptor `item` (an expression of `const rung_tensor *`),
    first checking its rank and static dims against the result's type if `check`."""
    t = result.type
    assert isinstance(t, MemRefType)
    shape = t.get_shape()
    name = e.fresh(f"{result.name_hint}_item" if result.name_hint else None, "item")
    e.emit(f"const rung_tensor *const {name} = {item};")
    if check:
        tests = [f"{name}->rank != {len(shape)}"]
        tests += [f"{name}->shape[{d}] != {size}" for d, size in enumerate(shape) if size >= 0]
        e.emit(
            f"if ({' || '.join(tests)}) "
            f'RUNG_FAIL("a sequence element does not have the shape of {t}");'
        )
    sizes = [f"{name}->shape[{d}]" for d, size in enumerate(shape) if size < 0]
    ptr, _ = e.new_buffer(result, sizes)
    ctype = storage_type(t.element_type)
    e.emit(f"{ctype} *const {ptr} = ({ctype} *){name}->data;")


# ---- lists --------------------------------------------------------------------------------


@emits(ListNewOp)
def list_new(e: Emitter, op: ListNewOp) -> None:
    name = e.fresh(op.result.name_hint, "seq")
    e.names[op.result] = name
    e.emit(f"rung_sequence *const {name} = rung_seq_new(&heap, {len(op.elements)});")
    e.emit(f'if (!{name}) RUNG_FAIL("out of memory");')
    for i, v in enumerate(op.elements):
        e.emit(f'if ({_put(e, f"&{name}->items[{i}]", v)}) RUNG_FAIL("out of memory");')


@emits(ListLengthOp)
def list_length(e: Emitter, op: ListLengthOp) -> None:
    e.define(op.result, f"{e.value(op.list)}->count")


@emits(ListGetOp)
def list_get(e: Emitter, op: ListGetOp) -> None:
    _bind_element(e, op.result, f"&{e.value(op.list)}->items[{e.value(op.index)}]", check=True)


@emits(ListInsertOp)
def list_insert(e: Emitter, op: ListInsertOp) -> None:
    name = e.fresh(op.result.name_hint, "seq")
    e.names[op.result] = name
    at = e.value(op.index)
    e.emit(f"rung_sequence *const {name} = rung_seq_insert(&heap, {e.value(op.list)}, {at});")
    put = _put(e, f"&{name}->items[{at}]", op.element)
    e.emit(f'if (!{name} || {put}) RUNG_FAIL("out of memory");')


@emits(ListEraseOp)
def list_erase(e: Emitter, op: ListEraseOp) -> None:
    name = e.fresh(op.result.name_hint, "seq")
    e.names[op.result] = name
    at = e.value(op.index)
    e.emit(f"rung_sequence *const {name} = rung_seq_erase(&heap, {e.value(op.list)}, {at});")
    e.emit(f'if (!{name}) RUNG_FAIL("out of memory");')


# ---- optionals ----------------------------------------------------------------------------


@emits(OptionalNewOp)
def optional_new(e: Emitter, op: OptionalNewOp) -> None:
    name = e.fresh(op.result.name_hint, "opt")
    e.names[op.result] = name
    value = op.value
    if value is None:
        e.emit(f"const rung_tensor *const {name} = 0;")
        return
    if isinstance(value.type, ListType):
        e.emit(f"rung_tensor *const {name} = rung_value_of_seq(&heap, {e.value(value)});")
        e.emit(f'if (!{name}) RUNG_FAIL("out of memory");')
        return
    e.emit(f"rung_tensor *const {name} = rung_value_new(&heap);")
    e.emit(f'if (!{name} || {_put(e, name, value)}) RUNG_FAIL("out of memory");')


@emits(OptionalHasOp)
def optional_has(e: Emitter, op: OptionalHasOp) -> None:
    e.define(op.result, f"{e.value(op.input)} != 0")


@emits(OptionalGetOp)
def optional_get(e: Emitter, op: OptionalGetOp) -> None:
    """The held value: a buffer bound to its descriptor, or the list it points to."""
    opt = e.value(op.input)
    if isinstance(op.result.type, ListType):
        e.define(op.result, f"(const rung_sequence *){opt}->data")
        return
    _bind_element(e, op.result, opt, check=False)


@emits(ZipMapOp)
def zip_map(e: Emitter, op: ZipMapOp) -> None:
    """`rung_zip_map` on the keys and values as descriptors: a list of maps sharing a copy of
    each."""
    name = e.fresh(op.result.name_hint, "maps")
    e.names[op.result] = name
    keys, values = (_descriptor(e, v) for v in (op.keys, op.values))
    e.emit(f"rung_sequence *const {name} = rung_zip_map(&heap, &{keys}, &{values});")
    e.emit(f'if (!{name}) RUNG_FAIL("out of memory");')


def _descriptor(e: Emitter, v: SSAValue) -> str:
    """A `rung_tensor` compound literal describing buffer `v`."""
    buf = e.buffer(v)
    t = v.type
    assert isinstance(t, MemRefType)
    dims = ", ".join(buf.dims) or "0"
    code = _code(t.element_type)
    return f"(rung_tensor){{(void *){buf.ptr}, {code}, {len(buf.dims)}, {{{dims}}}}}"


@emits(StrCaseOp)
def str_case(e: Emitter, op: StrCaseOp) -> None:
    upper = "1" if op.to.data == "upper" else "0"
    e.define(op.result, f"rung_str_case(&heap, {e.value(op.input)}, {upper})")
    e.emit(f'if (!{e.value(op.result)}) RUNG_FAIL("out of memory");')


@emits(StrCmpOp)
def str_cmp(e: Emitter, op: StrCmpOp) -> None:
    e.define(op.result, f"strcmp({e.value(op.lhs)}, {e.value(op.rhs)})")


# ---- the C ABI ----------------------------------------------------------------------------


def is_value_port(element: Attribute) -> bool:
    """Whether a port of this element type (a `Port`'s second field: the list or optional
    type itself for those) needs this module's side of the ABI."""
    return isinstance(element, ListType | OptionalType | StringType)


def _fits(t: Attribute, slot: str) -> str:
    """A C test that the descriptor `slot` (a `const rung_tensor *`) holds a value of `t`."""
    if isinstance(t, ListType):
        return f"rung_seq_fits({slot}, {_code(t.element_type)})"
    assert isinstance(t, MemRefType)
    shape = [d if d >= 0 else -1 for d in t.get_shape()]
    dims = _dims_literal([str(d) for d in shape])
    return f"rung_tensor_fits({slot}, {_code(t.element_type)}, {len(shape)}, {dims})"


def check_input(i: int, label: str, element: Attribute, shape: list[int]) -> list[str]:
    """The lines of `_run` that refuse a wrong input `i` (`label` a C string literal)."""
    slot = f"&inputs[{i}]"
    if isinstance(element, OptionalType):
        test = f"inputs[{i}].dtype != {NONE} && !{_fits(element.element_type, slot)}"
        what = "is neither an empty optional nor a value of the expected type"
    elif isinstance(element, ListType):
        test = f"!{_fits(element, slot)}"
        what = "must be a sequence of tensors of the expected type"
    else:
        test = f"!{_fits(MemRefType(element, shape), slot)}"
        what = "has the wrong type or shape (or no strings)"
    return [f'  if ({test}) return rung_error({label}, "{what}");']


def bind_input(e: Emitter, arg: SSAValue, i: int, name: str) -> None:
    """Bind argument `arg` to `inputs[i]`: a list, an optional, or a buffer of strings."""
    t = arg.type
    slot = f"inputs[{i}]"
    if isinstance(t, ListType):
        var = e.fresh(name, "in")
        seq = f"(const rung_sequence *){slot}.data"
        e.emit(f"const rung_sequence *const {var} = rung_seq_of_input(&heap, {seq});")
        e.emit(f'if (!{var}) RUNG_FAIL("out of memory");')
        e.names[arg] = var
    elif isinstance(t, OptionalType) and isinstance(t.element_type, ListType):
        var = e.fresh(name, "in")
        oom = e.fresh(f"{var}_oom")
        e.emit(f"bool {oom};")
        e.emit(f"const rung_tensor *const {var} = rung_optional_of_input(&heap, &{slot}, &{oom});")
        e.emit(f'if ({oom}) RUNG_FAIL("out of memory");')
        e.names[arg] = var
    elif isinstance(t, OptionalType):
        var = e.fresh(name, "in")
        e.emit(f"const rung_tensor *const {var} = {slot}.dtype == {NONE} ? 0 : &{slot};")
        e.names[arg] = var
    else:
        _bind_element(e, arg, f"&{slot}", check=False)


def port_element(t: Attribute) -> Attribute:
    """What a `Port` records as the element type of a value of kernel type `t`."""
    return t.element_type if isinstance(t, MemRefType) else t


def copy_output(e: Emitter, v: SSAValue, i: int) -> None:
    """Fill `outputs[i]` with a deep copy of `v` in one block the caller frees."""
    t = v.type
    slot = f"outputs[{i}]"
    if isinstance(t, OptionalType):
        opt = e.value(v)
        none = e.fresh(None, "empty")
        e.emit(f"const rung_tensor {none} = {{0, {NONE}, 0, {{0}}}};")
        e.emit(
            f'if (rung_pack_value({opt} ? {opt} : &{none}, &{slot})) RUNG_FAIL("out of memory");'
        )
        return
    if isinstance(t, ListType):
        value = f"(rung_tensor){{(void *){e.value(v)}, {SEQUENCE}, 0, {{0}}}}"
    else:
        value = _descriptor(e, v)
    e.emit(f'if (rung_pack_value(&{value}, &{slot})) RUNG_FAIL("out of memory");')


def describe(element: Attribute, shape: list[int]) -> str:
    """A port's type as the header's comment spells it."""
    if isinstance(element, ListType) and isinstance(element.element_type, MapType):
        m = element.element_type
        value = m.value_type.element_type if isinstance(m.value_type, TensorType) else m.value_type
        return (
            f"sequence (dtype {SEQUENCE}) of maps (dtype {MAP}) from "
            f"{storage_type(m.key_type)} keys to {storage_type(value)} values"
        )
    if isinstance(element, ListType):
        return f"sequence of {storage_type(element.element_type)} tensors (dtype {SEQUENCE})"
    if isinstance(element, OptionalType):
        inner = element.element_type
        held = describe(*((inner, []) if isinstance(inner, ListType) else _port_of(inner)))
        return f"optional {held}, or dtype {NONE} when empty"
    dims = "x".join("?" if d < 0 else str(d) for d in shape) or "scalar"
    return f"{storage_type(element)} [{dims}] (dtype {_code(element)})"


def _port_of(t: Attribute) -> tuple[Attribute, list[int]]:
    assert isinstance(t, MemRefType)
    return t.element_type, [d if d >= 0 else -1 for d in t.get_shape()]


def _abi_types() -> str:
    """`rung_seq.h`'s definitions of the ABI's value types, which a model header with
    such ports carries too, so that it stands alone."""
    text = Path(__file__).with_name("rung_seq.h").read_text()
    start = text.index("#ifndef RUNG_SEQUENCE_DEFINED")
    return text[start : text.index("#endif\n", start) + len("#endif\n")]


ABI_TYPES = _abi_types()
"""The header's declarations for models with sequence, optional or string ports."""

ABI_RULES = """ *
 * Sequences, optionals and strings: a string tensor's data is an array of
 * `const char *` (UTF-8, NUL-terminated); a sequence is a rung_tensor of dtype
 * RUNG_DTYPE_SEQUENCE whose data is a rung_sequence; an empty optional is a
 * rung_tensor of dtype RUNG_DTYPE_NONE with data NULL. Inputs stay the
 * caller's. Each output, whatever it holds (items, strings), is one block
 * allocated by the library at outputs[i].data: one call of the _free function
 * releases it, nested descriptors and strings included.
"""
"""The header's comment on the ownership of such values."""


__all__ = [
    "ABI_RULES",
    "ABI_TYPES",
    "bind_input",
    "check_input",
    "copy_output",
    "describe",
    "is_value_port",
    "port_element",
]
