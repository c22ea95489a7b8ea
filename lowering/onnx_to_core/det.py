"""ONNX Det → core: Gaussian elimination with partial pivoting, unrolled over the rows.

Core has no linear-algebra solver, and a determinant of the small matrices
models carry is a handful of steps, so each of the M steps is spelled out in
core ops on the stack of matrices `[P, M, M]` (P the product of the batch
dims, known at run time if need be):

- the pivot is the entry of largest magnitude in column k at or below row k
  (`core.arg_reduce`, first on ties: LAPACK's choice, which numpy uses);
- rows k and p are swapped by a `core.gather_elements` of the row indices,
  each swap flipping the sign;
- the rows below k subtract their multiple of row k.

The determinant is the sign times the product of the diagonal. Arithmetic is
in f64 (cast back at the end), so that the result agrees with LAPACK's to the
element type's precision. A zero pivot means a zero column: its multipliers
become 0 rather than NaN, and the product is 0. M must be static.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import SSAValue

from rung.dialects import core
from rung.dialects.dtypes import f64, i64
from rung.dialects.onnx import generated_ops as onnx
from rung.lowering.kit import (
    CoreBuilder,
    LoweringError,
    element_of,
    int_attr,
    iota,
    ranked_shape,
    stacked,
    tensor,
)

from .registry import Results, lowers

MAX_ROWS = 64
"""The largest matrix unrolled (each row costs about twenty core ops)."""


@lowers(onnx.DetOp)
def det(b: CoreBuilder, op: onnx.DetOp) -> Results:
    x = op.X
    shape = ranked_shape(x)
    if len(shape) < 2 or shape[-1] != shape[-2] or shape[-1] < 0:
        raise LoweringError(f"Det needs square matrices of a static size, got {x.type}")
    m = shape[-1]
    if not 1 <= m <= MAX_ROWS:
        raise LoweringError(f"Det of {m}x{m} matrices: only 1 to {MAX_ROWS} rows are unrolled")
    batch = b.dims(x)[:-2]
    stack = stacked(b, b.cast(x, f64), 2)
    first = b.reshape_to(b.slice(stack, [0, 0, 0], [-1, 1, 1]), [b.dims(stack)[0]])
    sign = b.splat(1.0, first)
    for k in range(m - 1):
        stack, sign = _eliminate(b, stack, sign, k)
    eye = b.broadcast_in_dim(b.constant(np.eye(m)), [1, 2], stack)
    diagonal = b.reduce("sum", b.binary("mul", stack, eye), [2])
    value = b.binary("mul", b.reduce("prod", diagonal, [1]), sign)
    value = b.cast(value, element_of(x.type))
    return [b.retype(b.reshape_to(value, batch), op.Y.type)]


def _column(b: CoreBuilder, stack: SSAValue, k: int, row: int) -> SSAValue:
    """Column k from `row` down, `[P, M - row]`."""
    m = ranked_shape(stack)[-1]
    part = b.slice(stack, [0, row, k], [-1, m - row, 1])
    return b.reshape_to(part, [b.dims(stack)[0], m - row])


def _eliminate(
    b: CoreBuilder, stack: SSAValue, sign: SSAValue, k: int
) -> tuple[SSAValue, SSAValue]:
    """Step k: pick the pivot, swap it into row k, clear column k below it."""
    m = ranked_shape(stack)[-1]
    magnitude = b.unary("abs", _column(b, stack, k, k))
    found = core.ArgReduceOp.create(
        operands=[magnitude],
        result_types=[tensor(i64, ranked_shape(magnitude)[:1])],
        properties={"fn": StringAttr("max"), "axis": int_attr(1), "last": int_attr(0)},
    )
    relative = b.insert(found).results[0]
    pivot_row = b.binary("add", relative, b.splat(k, relative))
    rows = iota(b, [b.dims(stack)[0], m], 1)
    p = b.broadcast_in_dim(pivot_row, [0], rows)
    at_k = b.compare("eq", rows, b.splat(k, rows))
    at_p = b.compare("eq", rows, p)
    order = b.select(at_k, p, b.select(at_p, b.splat(k, rows), rows))
    new = core.GatherElementsOp.create(
        operands=[stack, b.broadcast_in_dim(order, [0, 1], stack)],
        result_types=[stack.type],
        properties={"axis": int_attr(1)},
    )
    stack = b.insert(new).results[0]
    swapped = b.compare("ne", pivot_row, b.splat(k, pivot_row))
    sign = b.select(swapped, b.unary("neg", sign), sign)
    pivot = b.slice(stack, [0, k, k], [-1, 1, 1])
    safe = b.select(b.compare("eq", pivot, b.splat(0.0, pivot)), b.splat(1.0, pivot), pivot)
    column = b.slice(stack, [0, 0, k], [-1, m, 1])
    below = np.arange(m).reshape(1, m, 1) > k
    scale = b.binary("div", column, b.broadcast_in_dim(safe, [0, 1, 2], column))
    scale = b.binary("mul", scale, b.broadcast_in_dim(b.constant(below * 1.0), [0, 1, 2], column))
    row = b.slice(stack, [0, k, 0], [-1, 1, m])
    wide = b.binary(
        "mul",
        b.broadcast_in_dim(scale, [0, 1, 2], stack),
        b.broadcast_in_dim(row, [0, 1, 2], stack),
    )
    return b.binary("sub", stack, wide), sign
