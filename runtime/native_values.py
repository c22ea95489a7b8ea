"""Sequences, optionals, maps and string tensors through the C ABI of a compiled model.

The layout is `rung_seq.h`'s: a string tensor's data is an array of `char *`
(UTF-8, NUL-terminated); a sequence is a `rung_tensor` of dtype
`SEQUENCE` whose data points to a `rung_sequence` (a count and that many
`rung_tensor`s); a map is one of dtype `MAP` holding a two-item sequence,
its keys and its values; an empty optional has dtype `NONE`.

`put` fills an input slot from Python values (numpy arrays, lists, None),
keeping what the C side points into alive in a list the caller holds for the
duration of the run. `take` reads an output back into Python values the way
onnxruntime returns them (an object array of `str` for strings, a list for a
sequence, a dict for a map, None for an empty optional).
"""

from __future__ import annotations

import ctypes

import numpy as np
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Attribute

from rung.dialects.kernel_values import ListType, OptionalType
from rung.dialects.onnx.dtypes import ONNX_FROM_MLIR
from rung.dialects.onnx.types import StringType
from rung.errors import EvaluationError

NONE, STRING, SEQUENCE, MAP = 0, 8, 1000, 1001
"""The dtype codes of `rung_seq.h`."""


MAX_RANK = 8
"""`RUNG_MAX_RANK` of the generated header."""


class RungTensor(ctypes.Structure):
    """`rung_tensor` of the generated header."""

    _fields_ = [
        ("data", ctypes.c_void_p),
        ("dtype", ctypes.c_int32),
        ("rank", ctypes.c_int32),
        ("shape", ctypes.c_int64 * MAX_RANK),
    ]


class RungSequence(ctypes.Structure):
    """`rung_sequence` of the generated header: a count and an array of `rung_tensor`."""

    _fields_ = [("count", ctypes.c_int64), ("items", ctypes.c_void_p)]


def is_value(element: Attribute) -> bool:
    """Whether a port of this element type (a list or optional type itself for those) goes
    through this module rather than as a plain array."""
    return isinstance(element, ListType | OptionalType | StringType)


def _numpy(code: int) -> np.dtype:
    from onnx import helper

    return np.dtype(helper.tensor_dtype_to_np_dtype(code))


# ---- checking inputs ------------------------------------------------------------------------


def _array(value: object, element: Attribute, what: str) -> np.ndarray:
    """`value` as an array of the element type (strings: an object array of `str`)."""
    if isinstance(value, np.generic):
        value = np.asarray(value)
    if not isinstance(value, np.ndarray):
        raise EvaluationError(f"{what} must be a numpy array, got {type(value).__name__}")
    if isinstance(element, StringType):
        if value.dtype.kind not in "OUS":
            raise EvaluationError(f"{what} must hold strings, got dtype {value.dtype}")
        flat = [v.decode() if isinstance(v, bytes) else v for v in value.reshape(-1)]
        if not all(isinstance(v, str) for v in flat):
            raise EvaluationError(f"{what} must hold only strings (str or bytes)")
        return np.array(flat, dtype=object).reshape(value.shape)
    want = _numpy(ONNX_FROM_MLIR[element])
    if value.dtype != want:
        raise EvaluationError(f"{what} must be of {want}, got {value.dtype}")
    return np.asarray(value, order="C")


def check(element: Attribute, shape: list[int], value: object, what: str) -> object:
    """`value` checked against a port's type, normalized for `put`."""
    if isinstance(element, OptionalType):
        if value is None:
            return None
        inner = element.element_type
        if isinstance(inner, ListType):
            return check(inner, [], value, what)
        assert isinstance(inner, MemRefType)
        return check(inner.element_type, list(inner.get_shape()), value, what)
    if isinstance(element, ListType):
        if not isinstance(value, list | tuple):
            raise EvaluationError(
                f"{what} must be a sequence (a list of arrays), got {type(value).__name__}"
            )
        return [_array(v, element.element_type, f"{what} element {k}") for k, v in enumerate(value)]
    a = _array(value, element, what)
    if a.ndim != len(shape) or any(d >= 0 and d != n for d, n in zip(shape, a.shape, strict=True)):
        want = "x".join("?" if d < 0 else str(d) for d in shape) or "a scalar"
        raise EvaluationError(f"{what} must have shape {want}, got {list(a.shape)}")
    return a


# ---- inputs ---------------------------------------------------------------------------------


def _put_array(slot: RungTensor, a: np.ndarray, code: int, keep: list[object]) -> None:
    if a.ndim > len(slot.shape):
        raise EvaluationError(f"a tensor of rank {a.ndim} is above the ABI's limit")
    if a.dtype == object:
        strings = (ctypes.c_char_p * max(a.size, 1))(*[s.encode() for s in a.reshape(-1)])
        keep.append(strings)
        slot.data = ctypes.addressof(strings)
        slot.dtype = STRING
    else:
        a = np.ascontiguousarray(a) if a.ndim else a
        keep.append(a)
        slot.data = a.ctypes.data
        slot.dtype = code
    slot.rank = a.ndim
    for d, n in enumerate(a.shape):
        slot.shape[d] = n


def put(slot: RungTensor, element: Attribute, value: object, keep: list[object]) -> None:
    """Fill an input slot with `value` (as `check` returned it)."""
    if isinstance(element, OptionalType):
        if value is None:
            slot.data, slot.dtype, slot.rank = None, NONE, 0
            return
        inner = element.element_type
        put(slot, inner if isinstance(inner, ListType) else inner.element_type, value, keep)  # type: ignore[attr-defined]
        return
    if isinstance(element, ListType):
        assert isinstance(value, list)
        code = ONNX_FROM_MLIR[element.element_type]
        items = (RungTensor * max(len(value), 1))()
        for k, a in enumerate(value):
            _put_array(items[k], a, code, keep)
        seq = RungSequence(len(value), ctypes.addressof(items))
        keep += [items, seq]
        slot.data, slot.dtype, slot.rank = ctypes.addressof(seq), SEQUENCE, 0
        return
    assert isinstance(value, np.ndarray)
    _put_array(slot, value, ONNX_FROM_MLIR[element], keep)


# ---- outputs --------------------------------------------------------------------------------


def _read(t: RungTensor) -> object:
    """The value a descriptor describes (which the caller frees afterwards)."""
    if t.dtype == NONE:
        return None
    if t.dtype in (SEQUENCE, MAP):
        seq = RungSequence.from_address(t.data)
        items = (RungTensor * seq.count).from_address(seq.items) if seq.count else []
        values = [_read(item) for item in items]
        if t.dtype == MAP:  # keys in order, as onnxruntime's std::map gives them
            keys, vals = values
            pairs = dict(zip(keys.tolist(), vals.tolist(), strict=True))  # type: ignore[union-attr]
            return dict(sorted(pairs.items()))
        return values
    shape = tuple(int(t.shape[d]) for d in range(t.rank))
    count = int(np.prod(shape)) if shape else 1
    if t.dtype == STRING:
        ptrs = (ctypes.c_char_p * count).from_address(t.data) if count else []
        return np.array([p.decode() for p in ptrs], dtype=object).reshape(shape)
    dtype = _numpy(t.dtype)
    nbytes = count * dtype.itemsize
    raw = ctypes.string_at(t.data, nbytes) if nbytes else b""
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()


def take(t: RungTensor, free: object) -> object:
    """The output in slot `t`, read and then released with the model's `_free`."""
    try:
        return _read(t)
    finally:
        if t.data:
            free(t.data)  # type: ignore[operator]


__all__ = [
    "MAP",
    "MAX_RANK",
    "NONE",
    "SEQUENCE",
    "STRING",
    "RungSequence",
    "RungTensor",
    "check",
    "is_value",
    "put",
    "take",
]
