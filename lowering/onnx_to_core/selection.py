"""ONNX ops that pick or reorder slices by data → core: Compress, ReverseSequence.

Compress keeps the slices whose condition is true: the indices of the true
entries (`core.nonzero`) feed a `core.gather`, so the result's size along the
axis is known only at run time. A condition longer than the axis may only be
false past its end (as numpy's `compress`); that is checked at run time unless
the types prove it.

    %nz  = core.nonzero(%cond) : (tensor<3xi1>) -> tensor<1x?xi64>
    %idx = core.reshape(%nz, %n) : (tensor<1x?xi64>, tensor<1xi64>) -> tensor<?xi64>
    %out = core.gather(%x, %idx) {axis = 0} : (tensor<3x2xf32>, tensor<?xi64>) -> tensor<?x2xf32>

ReverseSequence reverses the first `sequence_lens[b]` steps of each batch
entry: a `core.gather_elements` along the time axis at `len - 1 - t` for
`t < len`, at `t` after. Each length is checked at run time to lie in
`[0, time steps]`, since a longer one would read outside the input.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from rung.dialects import core
from rung.dialects.dtypes import i1, i64
from rung.dialects.onnx import generated_ops as onnx
from rung.lowering.kit import (
    CoreBuilder,
    DimOf,
    LoweringError,
    Size,
    declared,
    element_of,
    int_attr,
    iota,
    normalize_axis,
    ranked_shape,
    size_like,
    static_size,
    tensor,
)

from .registry import Results, lowers

# ---- Compress ------------------------------------------------------------------------


@lowers(onnx.CompressOp)
def compress(b: CoreBuilder, op: onnx.CompressOp) -> Results:
    x, cond = op.input, op.condition
    if len(ranked_shape(cond)) != 1:
        raise LoweringError(f"Compress needs a 1-D condition, got {cond.type}")
    axis_attr = op.attr("axis")
    if axis_attr is None:
        x = b.reshape_to(x, [_count(b, x)])
        axis = 0
    else:
        axis = normalize_axis(int(axis_attr), len(ranked_shape(x)))  # type: ignore[call-overload]
    if element_of(cond.type) != i1:
        cond = b.cast(cond, i1)
    found = core.NonZeroOp.create(operands=[cond], result_types=[tensor(i64, [1, -1])])
    hits = b.insert(found).results[0]
    indices = b.reshape_to(hits, [DimOf(hits, 1)])
    extent = b.dims(x)[axis]
    if not _fits(ranked_shape(cond)[0], static_size(extent)):
        inside = b.compare("lt", indices, size_like(b, extent, indices))
        message = "Compress: the condition is true past the end of the axis"
        indices = b.check(indices, inside, message, culprit=indices)
    return [declared(b, b.gather(x, indices, axis), op.output.type, "Compress")]


def _count(b: CoreBuilder, x: SSAValue) -> Size:
    """The number of elements of `x`: a number, or read at run time."""
    shape = ranked_shape(x)
    if all(d >= 0 for d in shape):
        return int(np.prod(shape, dtype=np.int64))
    total = b.reshape(b.reduce("prod", b.shape_of(x), [0]), tensor(i64, [1]))
    flat = b.reshape(x, tensor(element_of(x.type), [-1]), total)
    return DimOf(flat, 0)


def _fits(length: int, extent: int) -> bool:
    """Whether a condition of `length` entries provably ends within an axis of `extent`."""
    return length >= 0 and extent >= 0 and length <= extent


# ---- ReverseSequence -----------------------------------------------------------------


@lowers(onnx.ReverseSequenceOp)
def reverse_sequence(b: CoreBuilder, op: onnx.ReverseSequenceOp) -> Results:
    x, lens = op.input, op.sequence_lens
    rank = len(ranked_shape(x))
    time = int(op.attr("time_axis"))  # type: ignore[call-overload]
    batch = int(op.attr("batch_axis"))  # type: ignore[call-overload]
    if rank < 2 or sorted((time, batch)) != [0, 1]:
        raise LoweringError(
            f"ReverseSequence needs time and batch axes 0 and 1 of an input of rank >= 2, "
            f"got time_axis {time}, batch_axis {batch}"
        )
    if len(ranked_shape(lens)) != 1:
        raise LoweringError(f"ReverseSequence needs 1-D sequence_lens, got {lens.type}")
    lens = b.cast(lens, i64)
    sizes = b.dims(x)
    steps = sizes[time]
    count, entries = ranked_shape(lens)[0], static_size(sizes[batch])
    if count < 0 or entries < 0:
        same = b.compare("eq", b.shape_of(lens), b.shape_vector([sizes[batch]]))
        lens = b.check(
            lens, same, "ReverseSequence: sequence_lens needs one length per batch entry"
        )
    elif count != entries:
        raise LoweringError(f"ReverseSequence: {count} sequence lengths for a batch of {entries}")
    zero = b.splat(0, lens)
    in_range = b.binary(
        "and", b.compare("ge", lens, zero), b.compare("le", lens, size_like(b, steps, lens))
    )
    message = "ReverseSequence: a sequence length is outside [0, time steps]"
    lens = b.check(lens, in_range, message, culprit=lens)
    plane = sizes[:2]
    t = iota(b, plane, time)
    n = b.broadcast_in_dim(lens, [batch], t)
    one = b.splat(1, t)
    reversed_t = b.binary("sub", b.binary("sub", n, one), t)
    index = b.select(b.compare("lt", t, n), reversed_t, t)
    index = b.broadcast_in_dim(index, [0, 1], x)
    new = core.GatherElementsOp.create(
        operands=[x, index],
        result_types=[tensor(element_of(x.type), ranked_shape(x))],
        properties={"axis": int_attr(time)},
    )
    return [b.retype(b.insert(new).results[0], op.Y.type)]
