"""ONNX sequence ops → core lists, and ONNX optionals → core optionals.

An ONNX sequence `!onnx.seq<tensor<…>>` becomes a `!core.list<tensor<…>>`,
and each sequence op one or a few core ops: SequenceConstruct and
SequenceEmpty build a `core.list`, SequenceAt/Insert/Erase/Length map to
`core.list_get/insert/erase/length`, ConcatFromSequence to
`core.list_concat` or `core.list_stack`, and SplitToSequence to slices
gathered in a `core.list`. ONNX positions may be negative; core indices may
not, so positions are normalized with the list's length (a run-time select
unless they are constant). SequenceMap becomes the loop ONNX defines it by: a
`core.loop` reading each sequence's element and appending the body's outputs.
Optional, OptionalHasElement and OptionalGetElement map to `core.optional`,
`core.optional_has` and `core.optional_get`; on a value that is not an
optional, ONNX defines them as true and the identity.

Types change before ops do: the first op lowered that touches a sequence
or an optional retypes every such value of its function (signature, block
arguments, results), so that values keep one type whichever of their users
is lowered first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import (
    FunctionType,
    IntegerType,
    StringAttr,
    TensorType,
    UnrankedTensorType,
    i64,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from rung.dialects import core
from rung.dialects.core import ListType, OptionalType
from rung.dialects.onnx import OptType, SeqType, YieldOp
from rung.dialects.onnx import generated_ops as onnx
from rung.lowering.kit import (
    CoreBuilder,
    LoweringError,
    constant_ints,
    element_of,
    int_attr,
    normalize_axis,
    ranked_shape,
    shape_of_type,
    tensor,
)

from .registry import Results, lowers

# ---- types ----------------------------------------------------------------------------


def core_type_of(t: Attribute) -> Attribute:
    """The core type of an ONNX container type; any other type unchanged.

    `!onnx.seq<T>` of tensors becomes `!core.list<T>`, and `!onnx.opt<T>`
    of a tensor or such a sequence becomes `!core.optional<T'>`.
    """
    if isinstance(t, SeqType) and isinstance(t.element_type, TensorType | UnrankedTensorType):
        return ListType(t.element_type)
    if isinstance(t, OptType):
        inner = core_type_of(t.element_type)
        if isinstance(inner, TensorType | UnrankedTensorType | ListType):
            return OptionalType(inner)
    return t


def has_containers(op: Operation) -> bool:
    """Whether `op` has an operand, result or region argument of ONNX container type."""
    values: list[SSAValue] = [*op.operands, *op.results]
    for region in op.regions:
        for block in region.blocks:
            values.extend(block.args)
    return any(isinstance(v.type, SeqType | OptType) for v in values)


def _enclosing_function(op: Operation) -> Operation:
    """The function holding `op` (or its outermost ancestor, outside any function)."""
    top = op
    while not isinstance(top, FuncOp) and (parent := top.parent_op()) is not None:
        top = parent
    return top


def _retype(value: SSAValue) -> None:
    new = core_type_of(value.type)
    if new is not value.type:
        value._type = new  # pyright: ignore[reportPrivateUsage]


def retype_containers(op: Operation) -> None:
    """Give every sequence and optional of `op`'s function its core type, signature included.

    Retyping in place (rather than converting values one by one as their
    users are lowered) keeps each value's uses in agreement: a sequence that
    is both returned and read by SequenceAt has one type at every use.
    """
    if has_containers(op):
        retype_function(_enclosing_function(op))


def retype_function(root: Operation) -> None:
    """Give every sequence and optional inside `root` (a function) its core type."""
    for inner in root.walk():
        for region in inner.regions:
            for block in region.blocks:
                for arg in block.args:
                    _retype(arg)
        for result in inner.results:
            _retype(result)
    if isinstance(root, FuncOp):
        signature = root.function_type
        root.function_type = FunctionType.from_lists(
            [core_type_of(t) for t in signature.inputs.data],
            [core_type_of(t) for t in signature.outputs.data],
        )


def _list_type(v: SSAValue) -> ListType:
    """The list type of a (retyped) sequence value."""
    if not isinstance(v.type, ListType):
        raise LoweringError(f"expected a sequence of tensors, got {v.type}")
    return v.type


def _fits(value: Attribute, lst: ListType) -> bool:
    """Whether a tensor of type `value` may be an element of a list of type `lst`."""
    bound = lst.element_type
    if element_of(value) != element_of(bound):
        return False
    a, b = shape_of_type(value), shape_of_type(bound)
    if a is None or b is None:
        return True
    return len(a) == len(b) and all(x < 0 or y < 0 or x == y for x, y in zip(a, b, strict=True))


def _check_fits(value: SSAValue, lst: ListType, what: str) -> None:
    if not _fits(value.type, lst):
        raise LoweringError(f"{what} {value.type} does not fit the sequence type {lst}")


def _joined(a: Attribute, b: Attribute) -> Attribute:
    """The most precise tensor type of both `a` and `b` (of one element type)."""
    sa, sb = shape_of_type(a), shape_of_type(b)
    if sa is None or sb is None or len(sa) != len(sb):
        return UnrankedTensorType(element_of(a))
    return tensor(element_of(a), [x if x == y else -1 for x, y in zip(sa, sb, strict=True)])


def _result_list_type(out: SSAValue, elements: Sequence[SSAValue]) -> ListType:
    """`out`'s list type, widened where ONNX inferred it too narrow for `elements`.

    ONNX infers some sequence types from one branch only (an If whose
    then-branch builds a sequence of scalars, say); the elements decide
    then. `out` is retyped, with its function's result where it is returned,
    so that its uses stay in agreement.
    """
    declared = _list_type(out)
    bound = declared.element_type
    for v in elements:
        if element_of(v.type) != element_of(bound):
            raise LoweringError(f"element {v.type} does not fit the sequence type {declared}")
        if not _fits(v.type, ListType(bound)):
            bound = _joined(bound, v.type)
    if bound == declared.element_type:
        return declared
    widened = ListType(bound)
    _retype_returned(out, widened)
    return widened


def _retype_returned(value: SSAValue, new: Attribute) -> None:
    """Give `value` type `new`, and its function the same result type where it is returned."""
    value._type = new  # pyright: ignore[reportPrivateUsage]
    for use in list(value.uses):
        ret = use.operation
        func = ret.parent_op()
        if isinstance(ret, ReturnOp) and isinstance(func, FuncOp):
            outputs = list(func.function_type.outputs.data)
            outputs[use.index] = new
            func.function_type = FunctionType.from_lists(
                list(func.function_type.inputs.data), outputs
            )


# ---- building lists ------------------------------------------------------------------


def make_list(b: CoreBuilder, elements: Sequence[SSAValue], result: ListType) -> SSAValue:
    """A `core.list` of `elements`, each checked against the list type."""
    for i, v in enumerate(elements):
        _check_fits(v, result, f"element {i}")
    op = core.ListOp.create(operands=list(elements), result_types=[result])
    return b.insert(op).results[0]


def list_length(b: CoreBuilder, lst: SSAValue) -> SSAValue:
    """The length of a list as a rank-0 i64 (for normalizing positions)."""
    op = core.ListLengthOp.create(operands=[lst], result_types=[tensor(i64, [])])
    return b.insert(op).results[0]


def _index_scalar(b: CoreBuilder, position: SSAValue) -> SSAValue:
    """An ONNX position (int32/int64, a scalar or one element) as a rank-0 i64."""
    shape = shape_of_type(position.type)
    if shape is None or len(shape) > 1 or any(d not in (1, -1) for d in shape):
        raise LoweringError(f"a sequence position must be a scalar, got {position.type}")
    return b.reshape(b.cast(position, i64), tensor(i64, []))


def normalized_position(b: CoreBuilder, position: SSAValue, lst: SSAValue) -> SSAValue:
    """`position + length` where it is negative: core list indices are non-negative.

    A constant position needs no test: it stays as it is, or is added to
    the length read at run time; any other position is selected at run time.
    """
    known = constant_ints(position)
    if known is not None and len(known) == 1:
        index = b.constant(np.array(known[0], np.int64))
        return index if known[0] >= 0 else b.binary("add", list_length(b, lst), index)
    index = _index_scalar(b, position)
    zero = b.constant(np.array(0, np.int64))
    negative = b.compare("lt", index, zero)
    return b.select(negative, b.binary("add", index, list_length(b, lst)), index)


def _last_index(b: CoreBuilder, lst: SSAValue) -> SSAValue:
    one = b.constant(np.array(1, np.int64))
    return b.binary("sub", list_length(b, lst), one)


# ---- handlers --------------------------------------------------------------------------


@lowers(onnx.SequenceEmptyOp, onnx.SequenceConstructOp)
def sequence_construct(
    b: CoreBuilder, op: onnx.SequenceEmptyOp | onnx.SequenceConstructOp
) -> Results:
    """A `core.list` of the inputs (none for SequenceEmpty)."""
    retype_containers(op)
    elements, out = list(op.operands), op.results[0]
    return [make_list(b, elements, _result_list_type(out, elements))]


@lowers(onnx.SequenceLengthOp)
def sequence_length(b: CoreBuilder, op: onnx.SequenceLengthOp) -> Results:
    retype_containers(op)
    seq = op.input_sequence
    _list_type(seq)
    return [b.retype(list_length(b, seq), op.length.type)]


@lowers(onnx.SequenceAtOp)
def sequence_at(b: CoreBuilder, op: onnx.SequenceAtOp) -> Results:
    retype_containers(op)
    seq, position, out = op.input_sequence, op.position, op.tensor
    if not _fits(out.type, _list_type(seq)):
        raise LoweringError(f"the result {out.type} does not fit the sequence type {seq.type}")
    index = normalized_position(b, position, seq)
    new = core.ListGetOp.create(operands=[seq, index], result_types=[out.type])
    return [b.insert(new).results[0]]


@lowers(onnx.SequenceInsertOp)
def sequence_insert(b: CoreBuilder, op: onnx.SequenceInsertOp) -> Results:
    """Insert before `position` (normalized), or append when it is absent."""
    retype_containers(op)
    seq, element, position = op.input_sequence, op.tensor, op.position
    _list_type(seq)
    result = _result_list_type(op.output_sequence, [element])
    index = list_length(b, seq) if position is None else normalized_position(b, position, seq)
    new = core.ListInsertOp.create(operands=[seq, element, index], result_types=[result])
    return [b.insert(new).results[0]]


@lowers(onnx.SequenceEraseOp)
def sequence_erase(b: CoreBuilder, op: onnx.SequenceEraseOp) -> Results:
    """Erase at `position` (normalized), or the last element when it is absent."""
    retype_containers(op)
    seq, position = op.input_sequence, op.position
    _list_type(seq)
    index = _last_index(b, seq) if position is None else normalized_position(b, position, seq)
    result = _list_type(op.output_sequence)
    new = core.ListEraseOp.create(operands=[seq, index], result_types=[result])
    return [b.insert(new).results[0]]


@lowers(onnx.ConcatFromSequenceOp)
def concat_from_sequence(b: CoreBuilder, op: onnx.ConcatFromSequenceOp) -> Results:
    """`core.list_stack` with `new_axis`, else `core.list_concat`; the axis normalized."""
    retype_containers(op)
    seq, out = op.input_sequence, op.concat_result
    stack = bool(op.attr("new_axis"))
    axis = int(op.attr("axis"))  # type: ignore[call-overload]
    rank = _element_rank(_list_type(seq), out.type, stack)
    if rank is not None:
        axis = normalize_axis(axis, rank + 1 if stack else rank)
    elif axis < 0:
        raise LoweringError("ConcatFromSequence with a negative axis needs ranked elements")
    kind = core.ListStackOp if stack else core.ListConcatOp
    new = kind.create(operands=[seq], result_types=[out.type], properties={"axis": int_attr(axis)})
    return [b.insert(new).results[0]]


def _element_rank(lst: ListType, out: Attribute, stack: bool) -> int | None:
    """The rank of the elements: from the list type, else from the declared result."""
    element = shape_of_type(lst.element_type)
    if element is not None:
        return len(element)
    result = shape_of_type(out)
    if result is None:
        return None
    return len(result) - 1 if stack else len(result)


@lowers(onnx.SplitToSequenceOp)
def split_to_sequence(b: CoreBuilder, op: onnx.SplitToSequenceOp) -> Results:
    """Slices along `axis`, gathered in a `core.list`.

    Pieces are a constant `split`'s sizes (one size for all but a smaller
    last piece, or a list of sizes), or pieces of 1, squeezed unless
    `keepdims`. Where the sizes are known when lowering, the pieces are
    static slices; otherwise a `core.loop` appends one slice per trip.
    """
    retype_containers(op)
    x, split_v = op.input, op.split
    shape = ranked_shape(x)
    axis = normalize_axis(int(op.attr("axis")), len(shape))  # type: ignore[call-overload]
    squeeze = split_v is None and not op.attr("keepdims")
    result = _list_type(op.output_sequence)
    sizes = _constant_piece_sizes(split_v, shape[axis])
    if sizes is None:
        return [_split_at_run_time(b, x, axis, split_v, squeeze, result)]
    pieces = []
    offset = 0
    for size in sizes:
        start = [0] * len(shape)
        start[axis] = offset if size > 0 else 0
        extent = [-1] * len(shape)
        extent[axis] = size
        piece = b.slice(x, start, extent, [1] * len(shape))
        pieces.append(_squeezed(b, piece, axis) if squeeze else piece)
        offset += size
    return [make_list(b, pieces, result)]


def _constant_piece_sizes(split_v: SSAValue | None, dim: int) -> list[int] | None:
    """The sizes of the pieces along an axis of size `dim` (-1: dynamic), if known now."""
    split = None if split_v is None else constant_ints(split_v)
    if split_v is not None and split is None:
        return None
    if split is not None and shape_of_type(split_v.type) != ():  # type: ignore[union-attr]
        return split
    if dim < 0:
        return None
    if split is None:
        return [1] * dim
    chunk = split[0]
    if chunk <= 0:
        raise LoweringError(f"SplitToSequence's split must be positive, got {chunk}")
    return [min(chunk, dim - start) for start in range(0, dim, chunk)]


PieceAt = Callable[[CoreBuilder, SSAValue], tuple[SSAValue, SSAValue]]
"""Given a builder inside the loop and the trip number: the piece's start and size."""


def _split_at_run_time(
    b: CoreBuilder,
    x: SSAValue,
    axis: int,
    split_v: SSAValue | None,
    squeeze: bool,
    result: ListType,
) -> SSAValue:
    """SplitToSequence whose pieces are known at run time only: one slice per loop trip.

    Trip i slices [start_i, start_i + size_i) along `axis`: with a 1-D split,
    the sizes are `split` and the starts their exclusive running sum; with a
    scalar split s, start_i = i*s and size_i = min(s, n - i*s); without
    split, pieces of 1.
    """
    n = _dim_size(b, x, axis)
    count: SSAValue
    piece_at: PieceAt
    if split_v is None:
        count = n
        one = b.constant(np.array(1, np.int64))

        def piece_at(body: CoreBuilder, i: SSAValue) -> tuple[SSAValue, SSAValue]:
            return i, one

    elif shape_of_type(split_v.type) == ():
        chunk = b.cast(split_v, i64)
        one = b.constant(np.array(1, np.int64))
        count = b.binary("div", b.binary("sub", b.binary("add", n, chunk), one), chunk)

        def piece_at(body: CoreBuilder, i: SSAValue) -> tuple[SSAValue, SSAValue]:
            start = body.binary("mul", i, chunk)
            return start, body.binary("min", chunk, body.binary("sub", n, start))

    else:
        sizes = b.cast(split_v, i64)
        count = _element_at(b, b.shape_of(sizes), b.constant(np.array(0, np.int64)))
        starts = _exclusive_sum(b, sizes)

        def piece_at(body: CoreBuilder, i: SSAValue) -> tuple[SSAValue, SSAValue]:
            return _element_at(body, starts, i), _element_at(body, sizes, i)

    def slice_at(body: CoreBuilder, i: SSAValue) -> SSAValue:
        start, size = piece_at(body, i)
        piece = _dynamic_slice(body, x, axis, start, size)
        return _squeezed(body, piece, axis) if squeeze else piece

    return _list_by_loop(b, count, result, slice_at)


def _list_by_loop(
    b: CoreBuilder,
    count: SSAValue,
    result: ListType,
    element_at: Callable[[CoreBuilder, SSAValue], SSAValue],
) -> SSAValue:
    """A `core.loop` of `count` trips whose trip i appends `element_at(i)` to a list."""

    def elements_at(body: CoreBuilder, trip: SSAValue) -> list[SSAValue]:
        return [element_at(body, trip)]

    return _lists_by_loop(b, count, [result], elements_at)[0]


def _lists_by_loop(
    b: CoreBuilder,
    count: SSAValue,
    results: Sequence[ListType],
    elements_at: Callable[[CoreBuilder, SSAValue], Sequence[SSAValue]],
) -> list[SSAValue]:
    """A `core.loop` of `count` trips whose trip i appends `elements_at(i)[j]` to list j.

    The body is built by a second builder positioned at a placeholder
    terminator, so that every CoreBuilder helper works inside the loop.
    """
    empties = [make_list(b, [], result) for result in results]
    true = b.constant(np.array(True))
    block = Block(arg_types=[tensor(i64, []), tensor(IntegerType(1), []), *results])
    placeholder = core.YieldOp.create(operands=[])
    placeholder.location = b.op.location
    block.add_op(placeholder)
    loop = core.LoopOp.create(
        operands=[count, true, *empties], result_types=list(results), regions=[Region(block)]
    )
    b.insert(loop)
    body = CoreBuilder(b.rewriter, placeholder)
    trip, cond, *lists = block.args
    appended = []
    for items, element, result in zip(lists, elements_at(body, trip), results, strict=True):
        _check_fits(element, result, "a new element")
        new = core.ListInsertOp.create(operands=[items, element, trip], result_types=[result])
        appended.append(body.insert(new).results[0])
    body.insert(core.YieldOp.create(operands=[cond, *appended]))
    b.rewriter.erase(placeholder)
    return list(loop.results)


def _dim_size(b: CoreBuilder, x: SSAValue, axis: int) -> SSAValue:
    """The size of dim `axis` of `x` as a rank-0 i64: a constant where it is static."""
    n = ranked_shape(x)[axis]
    if n >= 0:
        return b.constant(np.array(n, np.int64))
    return _element_at(b, b.shape_of(x), b.constant(np.array(axis, np.int64)))


def _element_at(b: CoreBuilder, vector: SSAValue, index: SSAValue) -> SSAValue:
    """`vector[index]` of a 1-D tensor, as a rank-0 tensor."""
    new = core.GatherOp.create(
        operands=[vector, index],
        result_types=[tensor(element_of(vector.type), [])],
        properties={"axis": int_attr(0)},
    )
    return b.insert(new).results[0]


def _exclusive_sum(b: CoreBuilder, sizes: SSAValue) -> SSAValue:
    """Where each piece starts: the running sum of the sizes before it."""
    new = core.CumulativeOp.create(
        operands=[sizes],
        result_types=[sizes.type],
        properties={
            "fn": StringAttr("sum"),
            "axis": int_attr(0),
            "exclusive": int_attr(1),
            "reverse": int_attr(0),
        },
    )
    return b.insert(new).results[0]


def _dynamic_slice(
    b: CoreBuilder, x: SSAValue, axis: int, start: SSAValue, size: SSAValue
) -> SSAValue:
    """`x[..., start:start+size, ...]` along `axis` (rank-0 i64 start and size)."""
    shape = ranked_shape(x)
    rank = len(shape)
    vector = tensor(i64, [rank])
    at_axis = b.constant(np.arange(rank) == axis)
    zeros = b.constant(np.zeros(rank, np.int64))
    starts = b.select(at_axis, b.broadcast_to(start, vector), zeros)
    sizes = b.select(at_axis, b.broadcast_to(size, vector), b.shape_of(x))
    strides = b.constant(np.ones(rank, np.int64))
    piece = tensor(element_of(x.type), [-1 if d == axis else n for d, n in enumerate(shape)])
    new = core.SliceOp.create(operands=[x, starts, sizes, strides], result_types=[piece])
    return b.insert(new).results[0]


def _squeezed(b: CoreBuilder, piece: SSAValue, axis: int) -> SSAValue:
    """A piece of size 1 along `axis` without that dim (keepdims = 0)."""
    shape = list(ranked_shape(piece))
    del shape[axis]
    target = tensor(element_of(piece.type), shape)
    if all(d >= 0 for d in shape):
        return b.reshape(piece, target)
    return b.reshape(piece, target, _shape_without(b, piece, axis))


def _shape_without(b: CoreBuilder, x: SSAValue, axis: int) -> SSAValue:
    """The run-time shape of `x` without dim `axis`, for a dynamic reshape."""
    rank = len(ranked_shape(x))
    keep = [d for d in range(rank) if d != axis]
    new = core.GatherOp.create(
        operands=[b.shape_of(x), b.constant(np.array(keep, np.int64))],
        result_types=[tensor(i64, [rank - 1])],
        properties={"axis": int_attr(0)},
    )
    return b.insert(new).results[0]


# ---- SequenceMap ------------------------------------------------------------------------


@lowers(onnx.SequenceMapOp)
def sequence_map(b: CoreBuilder, op: onnx.SequenceMapOp) -> Results:
    """A `core.loop` over the first sequence, the body's ops moved into it.

    ONNX defines SequenceMap as a function of the same shape (a Loop of
    SequenceAt and SequenceInsert); building it here works on the values'
    core types, where expanding ONNX's function would need ONNX types. Trip
    i reads element i of each sequence input (tensor inputs are used as
    they are) and appends each body output to its list.
    """
    retype_containers(op)
    values = [op.input_sequence, *op.additional_inputs]
    block = op.body_.block
    results = [_list_type(out) for out in op.out_sequence]
    count = list_length(b, values[0])

    def elements_at(body: CoreBuilder, trip: SSAValue) -> list[SSAValue]:
        args = [
            _trip_value(body, v, arg.type, trip) for v, arg in zip(values, block.args, strict=True)
        ]
        return _inlined(body, block, args)

    return _lists_by_loop(b, count, results, elements_at)


def _trip_value(b: CoreBuilder, value: SSAValue, want: Attribute, trip: SSAValue) -> SSAValue:
    """What SequenceMap's body sees of an input on one trip: its element, or the tensor."""
    if not isinstance(value.type, ListType):
        return value
    if not _fits(want, value.type):
        raise LoweringError(f"SequenceMap's body takes {want}, the sequence holds {value.type}")
    new = core.ListGetOp.create(operands=[value, trip], result_types=[want])
    return b.insert(new).results[0]


def _inlined(b: CoreBuilder, block: Block, args: Sequence[SSAValue]) -> list[SSAValue]:
    """Move a graph's ops before the builder's op, its arguments bound to `args`.

    Returns what the graph yields; its `onnx.Yield` is dropped.
    """
    b.rewriter.inline_block(block, InsertPoint.before(b.op), args)
    terminator = b.op.prev_op
    assert isinstance(terminator, YieldOp)
    yielded = list(terminator.operands)
    b.rewriter.erase(terminator)
    return yielded


# ---- optionals ----------------------------------------------------------------------------


@lowers(onnx.OptionalOp)
def optional(b: CoreBuilder, op: onnx.OptionalOp) -> Results:
    """`core.optional` of the input, or an empty one without it."""
    retype_containers(op)
    value = op.input
    result = _optional_type(op.output)
    operands = [] if value is None else [value]
    new = core.OptionalOp.create(operands=operands, result_types=[result])
    return [b.insert(new).results[0]]


@lowers(onnx.OptionalHasElementOp)
def optional_has_element(b: CoreBuilder, op: onnx.OptionalHasElementOp) -> Results:
    """`core.optional_has`; an absent input holds nothing, a plain tensor or sequence does."""
    retype_containers(op)
    value, out = op.input, op.output
    if value is None or not isinstance(value.type, OptionalType):
        return [b.retype(b.constant(np.array(value is not None)), out.type)]
    new = core.OptionalHasOp.create(operands=[value], result_types=[tensor(IntegerType(1), [])])
    return [b.retype(b.insert(new).results[0], out.type)]


@lowers(onnx.OptionalGetElementOp)
def optional_get_element(b: CoreBuilder, op: onnx.OptionalGetElementOp) -> Results:
    """`core.optional_get`; the identity on a value that is not an optional."""
    retype_containers(op)
    value, out = op.input, op.output
    if not isinstance(value.type, OptionalType):
        return [value]
    new = core.OptionalGetOp.create(operands=[value], result_types=[out.type])
    return [b.insert(new).results[0]]


def _optional_type(v: SSAValue) -> OptionalType:
    """The optional type of a (retyped) ONNX optional value."""
    if not isinstance(v.type, OptionalType):
        raise LoweringError(f"expected an optional tensor or sequence, got {v.type}")
    return v.type


__all__ = ["core_type_of", "has_containers", "retype_containers"]
