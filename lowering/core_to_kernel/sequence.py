"""core lists and optionals → `!kernel.list` and `!kernel.optional` values.

Most list ops map one to one onto a kernel op (`core.list` → `kernel.list_new`,
`core.list_get` → `kernel.list_get`...). Positions arrive at run time as
rank-0 i64 buffers; each is checked against the list's length by a
`cf.assert` naming the node before it is used, as is the presence of a
value before `core.optional_get`. `core.list_concat` and `core.list_stack`
are loops over the elements, since each has its own run-time shape:

    %n = kernel.list_length %l : !kernel.list<f32>
    %total = kernel.loop (%i) in (%n) [reduction] iter_args(%acc = %c0 : index) -> index {
      %e = kernel.list_get %l[%i] : !kernel.list<f32> -> memref<?x?xf32>
      ... check the other dims against element 0's, add dim `axis` ...
    }
    %out = kernel.alloc(%total, %d1) : memref<?x?xf32>
    kernel.loop (%i) in (%n) [reduction] iter_args(%at = %c0 : index) -> index {
      ... copy element %i into %out at offset %at along `axis` ...
    }

Where a value of one kernel type must stand for another around control flow
(`join_types`, `cast_value`): a value where an optional of its type is
expected becomes a present optional, as ONNX's optional ops treat plain
values; an optional where its value is expected is read (the run fails if
it holds none).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import cf
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from rung.dialects import core, kernel
from rung.dialects.dtypes import i1, i64
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
    ZipMapOp,
)

from .builder import Dim, KernelBuilder, KernelLoweringError, static_value
from .elements import kernel_type_of
from .lower_pass import describe
from .registry import lowers


def _what(b: KernelBuilder, op: Operation) -> str:
    """The node, for run-time error messages."""
    return describe(op, b.module) if b.module is not None else f"'{op.name}'"


def _assert(b: KernelBuilder, cond: SSAValue, message: str) -> None:
    b.insert(cf.AssertOp(cond, message))


def _all(b: KernelBuilder, conds: Sequence[SSAValue]) -> SSAValue | None:
    """The conjunction of i1 values (None for none)."""
    result: SSAValue | None = None
    for c in conds:
        result = c if result is None else b.binary("and", result, c)
    return result


def _position(b: KernelBuilder, buf: SSAValue) -> SSAValue:
    """A rank-0 (or one-element) i64 position buffer, loaded as an index."""
    rank = len(buf.type.get_shape())  # type: ignore[attr-defined]
    return b.to_index(b.load(buf, [0] * rank))


def _checked_position(
    b: KernelBuilder, op: Operation, lst: SSAValue, buf: SSAValue, *, appends: bool = False
) -> SSAValue:
    """The position in `buf`, checked to be in `[0, length)` (`[0, length]` if `appends`)."""
    at = _position(b, buf)
    n = b.insert(ListLengthOp(lst)).results[0]
    ok = b.binary("and", b.icmp("sge", at, 0), b.icmp("sle" if appends else "slt", at, n))
    limit = "the length" if appends else "the length - 1"
    _assert(b, ok, f"{_what(b, op)}: the sequence position is out of range [0, {limit}]")
    return at


def _dims_equal(b: KernelBuilder, got: Sequence[Dim], want: Sequence[Dim]) -> SSAValue | None:
    """An i1 that holds when the dims agree (None when they agree statically)."""
    conds = []
    for g, w in zip(got, want, strict=True):
        sg, sw = static_value(g), static_value(w)
        if g is w or (sg is not None and sg == sw):
            continue
        conds.append(b.icmp("eq", g, w))
    return _all(b, conds)


def refine(b: KernelBuilder, buf: SSAValue, t: MemRefType, what: str) -> SSAValue:
    """`buf` seen as buffer type `t` (same element type and rank): `?` dims take `buf`'s
    sizes, and static dims of `t` that `buf` does not fix are checked at run time."""
    src = buf.type
    assert isinstance(src, MemRefType)
    if src == t:
        return buf
    shape, target = src.get_shape(), t.get_shape()
    if src.element_type != t.element_type or len(shape) != len(target):
        raise KernelLoweringError(f"a buffer of type {src} cannot stand for one of type {t}")
    dims = b.dims(buf)
    static = [d if d >= 0 else dims[i] for i, d in enumerate(target)]
    ok = _dims_equal(b, dims, static)
    if ok is not None:
        _assert(b, ok, f"{what}: a value has shape {src}, where {t} is expected")
    sizes = [b.index(dims[i]) for i, d in enumerate(target) if d < 0]
    return b.insert(kernel.ViewOp(buf, t, sizes)).results[0]


def _alloc_result(b: KernelBuilder, result: SSAValue, dims: Sequence[Dim], what: str) -> SSAValue:
    """A buffer for a core result of the computed `dims`; the type's static dims are checked
    against them at run time (a declared shape is a claim, not a fact)."""
    t = result.type
    assert isinstance(t, TensorType)
    static = [d if d >= 0 else dims[i] for i, d in enumerate(t.get_shape())]
    ok = _dims_equal(b, dims, static)
    if ok is not None:
        _assert(b, ok, f"{what}: the result does not have the declared shape {t}")
    return b.alloc_for(result, dims)


# ---- lists --------------------------------------------------------------------------------


def _list_type(v: SSAValue) -> ListType:
    t = kernel_type_of(v.type)
    assert isinstance(t, ListType)
    return t


def _element_buffer(b: KernelBuilder, v: SSAValue, lst: ListType) -> SSAValue:
    buf = b.buffer(v)
    if buf.type.element_type != lst.element_type:  # type: ignore[attr-defined]
        raise KernelLoweringError(f"an element of type {buf.type} does not fit {lst}")
    return buf


@lowers(core.ListOp)
def list_(b: KernelBuilder, op: core.ListOp) -> list[SSAValue]:
    t = _list_type(op.result)
    elements = [_element_buffer(b, v, t) for v in op.elements]
    return [b.insert(ListNewOp(elements, t)).results[0]]


@lowers(core.ListLengthOp)
def list_length(b: KernelBuilder, op: core.ListLengthOp) -> list[SSAValue]:
    n = b.insert(ListLengthOp(b.buffer(op.input))).results[0]
    out = b.alloc(i64, [])
    b.store(b.from_index(n, i64), out, [])
    return [out]


@lowers(core.ListGetOp)
def list_get(b: KernelBuilder, op: core.ListGetOp) -> list[SSAValue]:
    lst = b.buffer(op.input)
    at = _checked_position(b, op, lst, b.buffer(op.index))
    t = kernel_type_of(op.result.type)
    assert isinstance(t, MemRefType)
    return [b.insert(ListGetOp(lst, at, t)).results[0]]


@lowers(core.ListInsertOp)
def list_insert(b: KernelBuilder, op: core.ListInsertOp) -> list[SSAValue]:
    lst = b.buffer(op.input)
    element = _element_buffer(b, op.element, _list_type(op.result))
    at = _checked_position(b, op, lst, b.buffer(op.index), appends=True)
    return [b.insert(ListInsertOp(lst, element, at)).results[0]]


@lowers(core.ListEraseOp)
def list_erase(b: KernelBuilder, op: core.ListEraseOp) -> list[SSAValue]:
    lst = b.buffer(op.input)
    at = _checked_position(b, op, lst, b.buffer(op.index))
    return [b.insert(ListEraseOp(lst, at)).results[0]]


def _elements_of_rank(
    b: KernelBuilder, op: Operation, lst: SSAValue, rank: int
) -> tuple[SSAValue, MemRefType, list[Dim]]:
    """The length of a list that must not be empty, the buffer type its elements are read
    as (rank `rank`, all dims `?`), and the dims of element 0."""
    n = b.insert(ListLengthOp(lst)).results[0]
    _assert(b, b.icmp("sgt", n, 0), f"{_what(b, op)}: the sequence is empty")
    lt = lst.type
    assert isinstance(lt, ListType)
    etype = kernel.memref_type(lt.element_type, [DYNAMIC_INDEX] * rank)
    first = b.insert(ListGetOp(lst, b.index(0), etype)).results[0]
    return n, etype, b.dims(first)


def _result_rank(op: core.ListConcatOp | core.ListStackOp) -> int:
    t = op.result.type
    if not isinstance(t, TensorType):
        raise KernelLoweringError(f"the result type {t} must be ranked")
    return len(t.get_shape())


@lowers(core.ListConcatOp)
def list_concat(b: KernelBuilder, op: core.ListConcatOp) -> list[SSAValue]:
    """Two passes over the elements: the total size along `axis` (checking the other
    dims), then a copy of each element at its offset."""
    what = _what(b, op)
    axis = op.axis.value.data
    rank = _result_rank(op)
    lst = b.buffer(op.input)
    n, etype, first = _elements_of_rank(b, op, lst, rank)
    others = [d for i, d in enumerate(first) if i != axis]

    def count(b: KernelBuilder, ivs: list[SSAValue], acc: list[SSAValue]) -> list[SSAValue]:
        e = b.insert(ListGetOp(lst, ivs[0], etype)).results[0]
        dims = b.dims(e)
        ok = _dims_equal(b, [d for i, d in enumerate(dims) if i != axis], others)
        if ok is not None:
            _assert(b, ok, f"{what}: the sequence's tensors differ in a dim other than the axis")
        return [b.index(b.iadd(acc[0], dims[axis]))]

    (total,) = b.reduce_loop([n], [b.index(0)], count)
    out_dims = list(first)
    out_dims[axis] = total
    out = _alloc_result(b, op.result, out_dims, what)

    def fill(b: KernelBuilder, ivs: list[SSAValue], acc: list[SSAValue]) -> list[SSAValue]:
        e = b.insert(ListGetOp(lst, ivs[0], etype)).results[0]
        dims = b.dims(e)

        def copy(b: KernelBuilder, jvs: list[SSAValue]) -> None:
            at: list[Dim] = list(jvs)
            at[axis] = b.iadd(jvs[axis], acc[0])
            b.store(b.load(e, jvs), out, at)

        b.parallel(dims, copy)
        return [b.index(b.iadd(acc[0], dims[axis]))]

    b.reduce_loop([n], [b.index(0)], fill)
    return [out]


@lowers(core.ListStackOp)
def list_stack(b: KernelBuilder, op: core.ListStackOp) -> list[SSAValue]:
    """Each element (all of element 0's shape, checked) copied into its slab of a new dim."""
    what = _what(b, op)
    axis = op.axis.value.data
    lst = b.buffer(op.input)
    n, etype, first = _elements_of_rank(b, op, lst, _result_rank(op) - 1)
    out = _alloc_result(b, op.result, [*first[:axis], n, *first[axis:]], what)

    def fill(b: KernelBuilder, ivs: list[SSAValue], _: list[SSAValue]) -> list[SSAValue]:
        e = b.insert(ListGetOp(lst, ivs[0], etype)).results[0]
        dims = b.dims(e)
        ok = _dims_equal(b, dims, first)
        if ok is not None:
            _assert(b, ok, f"{what}: the sequence's tensors differ in shape")

        def copy(b: KernelBuilder, jvs: list[SSAValue]) -> None:
            b.store(b.load(e, jvs), out, [*jvs[:axis], ivs[0], *jvs[axis:]])

        b.parallel(dims, copy)
        return []

    b.reduce_loop([n], [], fill)
    return [out]


# ---- optionals ----------------------------------------------------------------------------


def _optional_type(v: SSAValue) -> OptionalType:
    t = kernel_type_of(v.type)
    assert isinstance(t, OptionalType)
    return t


@lowers(core.OptionalOp)
def optional(b: KernelBuilder, op: core.OptionalOp) -> list[SSAValue]:
    t = _optional_type(op.result)
    value = None
    if op.value is not None:
        value = cast_value(b, b.buffer(op.value), t.element_type, _what(b, op))
    return [b.insert(OptionalNewOp(value, t)).results[0]]


@lowers(core.OptionalHasOp)
def optional_has(b: KernelBuilder, op: core.OptionalHasOp) -> list[SSAValue]:
    has = b.insert(OptionalHasOp(b.buffer(op.input))).results[0]
    out = b.alloc(i1, [])
    b.store(has, out, [])
    return [out]


@lowers(core.OptionalGetOp)
def optional_get(b: KernelBuilder, op: core.OptionalGetOp) -> list[SSAValue]:
    what = _what(b, op)
    value = b.buffer(op.input)
    _assert(b, b.insert(OptionalHasOp(value)).results[0], f"{what}: the optional holds no value")
    got = b.insert(OptionalGetOp(value)).results[0]
    return [cast_value(b, got, kernel_type_of(op.result.type), what)]


# ---- maps -------------------------------------------------------------------------------


@lowers(core.ZipMapOp)
def zip_map(b: KernelBuilder, op: core.ZipMapOp) -> list[SSAValue]:
    """`kernel.zip_map`, after a check that there is a key per column."""
    keys, values = b.buffer(op.keys), b.buffer(op.values)
    ok = _dims_equal(b, b.dims(keys), b.dims(values)[1:])
    if ok is not None:
        _assert(b, ok, f"{_what(b, op)}: the input does not have a column per class label")
    t = kernel_type_of(op.result.type)
    assert isinstance(t, ListType)
    return [b.insert(ZipMapOp(keys, values, t)).results[0]]


# ---- values around control flow -----------------------------------------------------------


def join_types(types: Sequence[Attribute], what: str) -> Attribute:
    """The kernel type that values of all `types` (not all buffers) can stand for."""
    distinct = list(dict.fromkeys(types))
    if len(distinct) == 1:
        return distinct[0]
    optionals = [t for t in distinct if isinstance(t, OptionalType)]
    if len(optionals) == 1 and all(
        t is optionals[0] or t == optionals[0].element_type for t in distinct
    ):
        return optionals[0]
    raise KernelLoweringError(f"{what} changes type: {', '.join(map(str, distinct))}")


def cast_value(b: KernelBuilder, value: SSAValue, t: Attribute, what: str) -> SSAValue:
    """`value` as a value of kernel type `t`: a buffer viewed (static dims checked), a value
    wrapped in an optional, or an optional's value read (it must hold one)."""
    src = value.type
    if src == t:
        return value
    if isinstance(src, MemRefType) and isinstance(t, MemRefType):
        return refine(b, value, t, what)
    if isinstance(t, OptionalType) and not isinstance(src, OptionalType):
        return b.insert(OptionalNewOp(cast_value(b, value, t.element_type, what), t)).results[0]
    if isinstance(src, OptionalType) and not isinstance(t, OptionalType):
        has = b.insert(OptionalHasOp(value)).results[0]
        _assert(b, has, f"{what}: the optional holds no value")
        return cast_value(b, b.insert(OptionalGetOp(value)).results[0], t, what)
    raise KernelLoweringError(f"a value of type {src} cannot stand for one of type {t}")


__all__ = ["cast_value", "join_types", "refine"]
