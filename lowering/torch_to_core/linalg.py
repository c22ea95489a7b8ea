"""Matrix products → core.matmul: mm, bmm, addmm, baddbmm, matmul, linear, _cdist_forward.

A decomposed program multiplies matrices with `mm` / `bmm` (a linear layer is
`addmm` of its bias, the input and the transposed weight; attention's
`q @ k.transpose(-1, -2)` is a `bmm` between views). `matmul` and `linear`
appear when a program is imported without decomposition; they follow numpy's
rules, and a stack of matrices times one matrix folds the stack into the rows
of a single matmul (as torch does) rather than copying the matrix per batch.
`_cdist_forward` (torch.cdist) is the p-norm of every pairwise difference.
"""

from __future__ import annotations

import math

from xdsl.ir import Attribute, SSAValue

from rung.dialects.dtypes import i64
from rung.dialects.torch import TorchOp
from rung.dialects.torch import generated_ops as aten
from rung.lowering.kit import (
    CoreBuilder,
    LoweringError,
    element_of,
    ranked_shape,
    shape_of_type,
    tensor,
)

from .registry import Results, lowers


def fitted(b: CoreBuilder, v: SSAValue, declared: Attribute) -> SSAValue:
    """`v`, given the op's declared type where that knows a dim `v`'s type does not.

    A value whose type is as static as the declared one (or more) is kept as
    it is: its users read their operands' types, and the pass gives the
    function the types it returns.
    """
    shape, out = ranked_shape(v), shape_of_type(declared)
    if v.type == declared or out is None or len(out) != len(shape):
        return v
    if any(o >= 0 and d < 0 for o, d in zip(out, shape, strict=True)):
        return b.retype(v, declared)
    return v


def _number(op: TorchOp, name: str) -> float:
    """A Scalar argument that must be known when lowering (alpha, beta, p)."""
    value = op.arg(name)
    if not isinstance(value, int | float):
        raise LoweringError(f"{name} must be a number known before the run, got {value!r}")
    return value


def _product(b: CoreBuilder, lhs: SSAValue, rhs: SSAValue, element: Attribute) -> SSAValue:
    """torch.matmul of `lhs` and `rhs`; a stack of matrices times a matrix is one matmul
    of the stack's rows, which keeps the matrix (a weight) from being broadcast."""
    lhs_shape, rhs_shape = ranked_shape(lhs), ranked_shape(rhs)
    if len(lhs_shape) <= 2 or len(rhs_shape) != 2:
        return b.matmul(lhs, rhs, element)
    out = b.matmul(_flat_rows(b, lhs), rhs, element)
    return b.reshape_to(out, [*b.dims(lhs)[:-1], b.dims(rhs)[-1]])


def _flat_rows(b: CoreBuilder, x: SSAValue) -> SSAValue:
    """`x` [..., K] as a matrix [prod(...), K]; a dynamic leading dim is read at run time."""
    shape = ranked_shape(x)
    el = element_of(x.type)
    lead = shape[:-1]
    if all(d >= 0 for d in shape):
        return b.reshape(x, tensor(el, [math.prod(lead), shape[-1]]))
    count = b.reduce("prod", b.slice(b.shape_of(x), [0], [len(lead)]), [0])
    rows = b.reshape(count, tensor(i64, [1]))
    sizes = b.concat([rows, b.shape_vector([b.dims(x)[-1]])], 0)
    static_rows = math.prod(lead) if all(d >= 0 for d in lead) else -1
    return b.reshape(x, tensor(el, [static_rows, shape[-1]]), sizes)


@lowers(aten.AtenMmOp, aten.AtenBmmOp)
def mm(b: CoreBuilder, op: aten.AtenMmOp | aten.AtenBmmOp) -> Results:
    y = b.matmul(op.self_, op.mat2, element_of(op.result.type))
    return [fitted(b, y, op.result.type)]


@lowers(aten.AtenMatmulOp)
def matmul(b: CoreBuilder, op: aten.AtenMatmulOp) -> Results:
    y = _product(b, op.self_, op.other, element_of(op.result.type))
    return [fitted(b, y, op.result.type)]


def _scaled_sum(
    b: CoreBuilder, product: SSAValue, addend: SSAValue | None, alpha: float, beta: float
) -> SSAValue:
    """`beta * addend + alpha * product`, the addend broadcast to the product's shape.

    With beta = 0 the addend is ignored, NaNs included, as torch does.
    """
    y = product
    if alpha != 1:
        y = b.binary("mul", y, b.splat(alpha, y))
    if addend is None or beta == 0:
        return y
    c = b.cast(addend, element_of(y.type))
    y, c = b.broadcast_all([y, c], y.type)
    if beta != 1:
        c = b.binary("mul", c, b.splat(beta, c))
    return b.binary("add", y, c)


@lowers(aten.AtenAddmmOp, aten.AtenBaddbmmOp)
def addmm(b: CoreBuilder, op: aten.AtenAddmmOp | aten.AtenBaddbmmOp) -> Results:
    """beta * self + alpha * (mat1 × mat2); nn.Linear after decomposition."""
    if isinstance(op, aten.AtenAddmmOp):
        lhs, rhs = op.mat1, op.mat2
    else:
        lhs, rhs = op.batch1, op.batch2
    product = b.matmul(lhs, rhs, element_of(op.result.type))
    y = _scaled_sum(b, product, op.self_, _number(op, "alpha"), _number(op, "beta"))
    return [fitted(b, y, op.result.type)]


@lowers(aten.AtenLinearOp)
def linear(b: CoreBuilder, op: aten.AtenLinearOp) -> Results:
    """input × weightᵀ + bias (a weight of rank 1 is a dot product per row)."""
    weight = op.weight
    if len(ranked_shape(weight)) == 2:
        weight = b.transpose(weight, [1, 0])
    y = _product(b, op.input, weight, element_of(op.result.type))
    y = _scaled_sum(b, y, op.bias, 1, 1)
    return [fitted(b, y, op.result.type)]


@lowers(aten.Aten_CdistForwardOp)
def cdist(b: CoreBuilder, op: aten.Aten_CdistForwardOp) -> Results:
    """`‖x1[..., i, :] - x2[..., j, :]‖_p` for every pair (i, j), from the differences.

    The differences are spelled out ([..., P, R, M]) rather than expanded into
    matrix products, which would lose precision to cancellation; p = 0 counts
    the non-zero differences and p = inf takes their largest magnitude.
    """
    x1, x2 = op.x1, op.x2
    p = _number(op, "p")
    s1, s2 = ranked_shape(x1), ranked_shape(x2)
    if len(s1) < 2 or len(s2) < 2:
        raise LoweringError("cdist needs operands of rank 2 or more")
    element = element_of(op.result.type)
    x1, x2 = b.cast(x1, element), b.cast(x2, element)
    left = b.reshape_to(x1, [*b.dims(x1)[:-1], 1, b.dims(x1)[-1]])
    right = b.reshape_to(x2, [*b.dims(x2)[:-2], 1, *b.dims(x2)[-2:]])
    grid = _pairs_type(left, right, element)
    left, right = b.broadcast_all([left, right], grid)
    diff = b.binary("sub", left, right)
    axis = len(ranked_shape(diff)) - 1
    if p == 2:
        return [
            fitted(
                b,
                b.unary("sqrt", b.reduce("sum", b.binary("mul", diff, diff), [axis])),
                op.result.type,
            )
        ]
    diff = b.unary("abs", diff)
    if p == 0:
        nonzero = b.compare("ne", diff, b.splat(0, diff))
        y = b.reduce("sum", b.cast(nonzero, element), [axis])
    elif math.isinf(p):
        y = b.reduce("max", diff, [axis])
    elif p == 1:
        y = b.reduce("sum", diff, [axis])
    else:
        powered = b.binary("pow", diff, b.splat(p, diff))
        total = b.reduce("sum", powered, [axis])
        y = b.binary("pow", total, b.splat(1 / p, total))
    return [fitted(b, y, op.result.type)]


def _pairs_type(left: SSAValue, right: SSAValue, element: Attribute) -> Attribute:
    """The broadcast type of `[..., P, 1, M]` and `[..., 1, R, M]` (`?` where either is)."""
    a, c = ranked_shape(left), ranked_shape(right)
    rank = max(len(a), len(c))
    a = (1,) * (rank - len(a)) + tuple(a)
    c = (1,) * (rank - len(c)) + tuple(c)
    out = []
    for da, dc in zip(a, c, strict=True):
        if da == 1 or dc == 1:
            out.append(dc if da == 1 else da)
        elif da < 0 or dc < 0:
            out.append(max(da, dc))
        else:
            out.append(da)
    return tensor(element, out)


__all__ = ["fitted"]
