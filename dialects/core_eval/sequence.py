"""Lists and optionals: ONNX's sequences and optional values, as core states them.

A list value is a Python list of arrays, never changed in place: every
update builds a new list. An optional is its value, or None when empty. List
indices are already normalized by the lowering, so an index out of range is
an error here rather than counted from the end.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import Operation

from rung.dialects import core
from rung.errors import RungError

from .interpreter import Args, Scope, Value, evaluates


def _list_index(op: Operation, index: Value, bound: int) -> int:
    """A list index, checked against `[0, bound)`."""
    at = int(np.asarray(index))
    if not 0 <= at < bound:
        raise RungError(f"{op.name}: index {at} is out of range [0, {bound})")
    return at


def _non_empty(op: Operation, items: list[np.ndarray]) -> list[np.ndarray]:
    if not items:
        raise RungError(f"{op.name}: the list is empty")
    return items


# ---- lists --------------------------------------------------------------------------------


@evaluates(core.ListOp)
def list_(ev: Scope, op: core.ListOp, args: Args) -> list[Value]:
    return [[np.asarray(a) for a in args]]


@evaluates(core.ListLengthOp)
def list_length(ev: Scope, op: core.ListLengthOp, args: Args) -> list[Value]:
    return [np.array(len(args[0]), dtype=np.int64)]


@evaluates(core.ListGetOp)
def list_get(ev: Scope, op: core.ListGetOp, args: Args) -> list[Value]:
    items = args[0]
    return [items[_list_index(op, args[1], len(items))]]


@evaluates(core.ListInsertOp)
def list_insert(ev: Scope, op: core.ListInsertOp, args: Args) -> list[Value]:
    """Inserts before `index`; an index equal to the length appends."""
    items, element, index = args
    at = _list_index(op, index, len(items) + 1)
    return [[*items[:at], np.asarray(element), *items[at:]]]


@evaluates(core.ListEraseOp)
def list_erase(ev: Scope, op: core.ListEraseOp, args: Args) -> list[Value]:
    items = args[0]
    at = _list_index(op, args[1], len(items))
    return [[*items[:at], *items[at + 1 :]]]


@evaluates(core.ListConcatOp)
def list_concat(ev: Scope, op: core.ListConcatOp, args: Args) -> list[Value]:
    return [np.concatenate(_non_empty(op, args[0]), axis=op.axis.value.data)]


@evaluates(core.ListStackOp)
def list_stack(ev: Scope, op: core.ListStackOp, args: Args) -> list[Value]:
    return [np.stack(_non_empty(op, args[0]), axis=op.axis.value.data)]


# ---- optionals ----------------------------------------------------------------------------


@evaluates(core.OptionalOp)
def optional(ev: Scope, op: core.OptionalOp, args: Args) -> list[Value]:
    """The held value, or None for an empty optional (no operand)."""
    return [args[0] if args else None]


@evaluates(core.OptionalHasOp)
def optional_has(ev: Scope, op: core.OptionalHasOp, args: Args) -> list[Value]:
    return [np.array(args[0] is not None)]


@evaluates(core.OptionalGetOp)
def optional_get(ev: Scope, op: core.OptionalGetOp, args: Args) -> list[Value]:
    if args[0] is None:
        raise RungError("core.optional_get: the optional holds no value")
    return [args[0]]


# ---- maps ---------------------------------------------------------------------------------


@evaluates(core.ZipMapOp)
def zip_map(ev: Scope, op: core.ZipMapOp, args: Args) -> list[Value]:
    """A list of dicts, key to value, one per row, keys in order: what onnxruntime returns
    for ZipMap (its maps are std::maps)."""
    keys = np.asarray(args[0]).tolist()
    rows = np.asarray(args[1]).tolist()
    return [[dict(sorted(dict(zip(keys, row, strict=True)).items())) for row in rows]]


__all__: list[str] = []
