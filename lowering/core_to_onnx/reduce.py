"""Reductions, arg-reductions, running sums and sorting back to ONNX.

Core's reduce drops its axes (ONNX keepdims=0); masked_reduce keeps them
(keepdims=1) and takes its axes from a mask (NonZero of it). Logical
and/or (and max/min of i1) are ReduceMin over int32, which keeps their
identities on an empty set. Sort is TopK of the whole axis.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Attribute, SSAValue

from rung.dialects import core
from rung.dialects.core import ints_of

from .emitter import I1, Emitter, element, exports, shape, tensor

I64 = core.i64
REDUCE = {"sum": "ReduceSum", "prod": "ReduceProd", "max": "ReduceMax", "min": "ReduceMin"}


def _reduce(
    e: Emitter, fn: str, x: SSAValue, axes: SSAValue, out: Attribute, keepdims: int
) -> SSAValue:
    attrs = {"keepdims": keepdims, "noop_with_empty_axes": 1}
    if fn in ("max", "min") and element(x) == I1:
        fn = "or" if fn == "max" else "and"
    if fn in REDUCE:
        return e.node(REDUCE[fn], [x, axes], out, **attrs)
    # Logical reductions as ReduceMin over int32, whose empty set gives INT32_MAX, i.e.
    # true: the identity of `and`. `or` is not(and(not x)), so its empty set is false.
    dims = shape(out)
    if fn == "or":
        x = e.node("Not", [x], x.type)
    least = e.node(
        "ReduceMin", [e.cast(x, IntegerType(32)), axes], tensor(IntegerType(32), dims), **attrs
    )
    result = e.cast(least, I1)
    return e.node("Not", [result], result.type) if fn == "or" else result


@exports(core.ReduceOp)
def reduce(e: Emitter, op: core.ReduceOp) -> Sequence[SSAValue]:
    axes = list(ints_of(op.axes))
    if not axes:
        return [e.node("Identity", [op.input], op.result.type)]
    return [_reduce(e, op.fn.data, op.input, e.i64s(axes), op.result.type, 0)]


@exports(core.MaskedReduceOp)
def masked_reduce(e: Emitter, op: core.MaskedReduceOp) -> Sequence[SSAValue]:
    found = e.node("NonZero", [op.mask], tensor(I64, [1, -1]))
    axes = e.node("Reshape", [found, e.i64s([-1])], tensor(I64, [-1]))
    return [_reduce(e, op.fn.data, op.input, axes, op.result.type, 1)]


@exports(core.ArgReduceOp)
def arg_reduce(e: Emitter, op: core.ArgReduceOp) -> Sequence[SSAValue]:
    op_type = "ArgMax" if op.fn.data == "max" else "ArgMin"
    return [
        e.node(
            op_type,
            [op.input],
            op.result.type,
            axis=op.axis.value.data,
            keepdims=0,
            select_last_index=op.last.value.data,
        )
    ]


@exports(core.CumulativeOp)
def cumulative(e: Emitter, op: core.CumulativeOp) -> Sequence[SSAValue]:
    op_type = "CumSum" if op.fn.data == "sum" else "CumProd"
    axis = e.const(np.array(op.axis.value.data, dtype=np.int64))
    return [
        e.node(
            op_type,
            [op.input, axis],
            op.result.type,
            exclusive=op.exclusive.value.data,
            reverse=op.reverse.value.data,
        )
    ]


@exports(core.SortOp)
def sort(e: Emitter, op: core.SortOp) -> Sequence[SSAValue]:
    """TopK of all of the axis, sorted; ties keep the lower index first, as a stable sort."""
    axis = op.axis.value.data
    dims = shape(op.input)
    if dims is not None and dims[axis] >= 0:
        k = e.i64s([dims[axis]])
    else:
        rank = len(dims) if dims is not None else -1
        full = e.node("Shape", [op.input], tensor(I64, [rank]))
        k = e.node("Slice", [full, e.i64s([axis]), e.i64s([axis + 1])], tensor(I64, [1]))
    new = e.build(
        "TopK",
        [op.input, k],
        [op.values.type, op.indices.type],
        {"axis": axis, "largest": op.descending.value.data, "sorted": 1},
    )
    return list(new.results)
