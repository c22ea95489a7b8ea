"""Symbolic sizes → core: each `SymInt` becomes a 0-d i64 tensor computed at run time.

`torch.aten.sym_size.int(%x) {dim = 1}` reads one dim of `x`'s run-time
shape; `torch.sym.binary` / `torch.sym.unary` (the FX graph's `operator.mul`
and friends) are core elementwise ops on those 0-d tensors. Handlers of ops
that take a `SymInt` argument get it as such a tensor (`op.arg(name)`);
`sizes` turns a list of numbers and such tensors into a 1-D shape vector.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from rung.dialects.dtypes import f64, i64
from rung.dialects.torch import SymBinaryOp, SymUnaryOp
from rung.dialects.torch import generated_ops as aten
from rung.lowering.kit import CoreBuilder, LoweringError, element_of, normalize_axis, ranked_shape
from rung.lowering.kit import tensor as tensor_type

from .registry import Results, lowers


def dim_value(b: CoreBuilder, x: SSAValue, axis: int) -> SSAValue:
    """Dim `axis` of `x` as a 0-d i64 tensor: a constant where static, read at run time if not."""
    shape = ranked_shape(x)
    axis = normalize_axis(axis, len(shape))
    if shape[axis] >= 0:
        return b.scalar(shape[axis], i64)
    picked = b.gather(b.shape_of(x), b.constant(np.array([axis], np.int64)), 0)
    return b.reshape(picked, tensor_type(i64, []))


def sizes(b: CoreBuilder, items: Sequence[object]) -> SSAValue:
    """A 1-D i64 shape vector of `items`: Python ints and 0-d i64 tensors (symbolic sizes)."""
    if all(isinstance(i, int) for i in items):
        return b.constant(np.array(items, np.int64).reshape(len(items)))
    parts = []
    for item in items:
        if isinstance(item, SSAValue):
            parts.append(b.reshape(as_i64(b, item), tensor_type(i64, [1])))
        elif isinstance(item, int):
            parts.append(b.constant(np.array([item], np.int64)))
        else:
            raise LoweringError(f"a size of {item!r}")
    return b.concat(parts, 0)


def static_sizes(items: Sequence[object]) -> list[int]:
    """The sizes with -1 where only the run knows them (for result types)."""
    return [i if isinstance(i, int) else -1 for i in items]


def as_i64(b: CoreBuilder, v: SSAValue) -> SSAValue:
    return v if element_of(v.type) == i64 else b.cast(v, i64)


@lowers(aten.AtenSymSizeIntOp)
def sym_size(b: CoreBuilder, op: aten.AtenSymSizeIntOp) -> Results:
    return [dim_value(b, op.self_, op.arg("dim"))]  # type: ignore[arg-type]


@lowers(aten.AtenSymNumelOp)
def sym_numel(b: CoreBuilder, op: aten.AtenSymNumelOp) -> Results:
    shape = b.shape_of(op.self_)
    return [b.reduce("mul", shape, [0])]


_BINARY = {"add": "add", "sub": "sub", "mul": "mul", "max": "max", "min": "min", "pow": "pow"}
_COMPARE = {"eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge"}


@lowers(SymBinaryOp)
def sym_binary(b: CoreBuilder, op: SymBinaryOp) -> Results:
    fn = op.fn.data
    lhs, rhs = op.lhs, op.rhs
    if fn in _COMPARE:
        lhs, rhs = _common(b, lhs, rhs)
        return [b.compare(_COMPARE[fn], lhs, rhs)]
    if fn in ("and", "or"):
        return [b.binary(fn, lhs, rhs)]
    if fn == "truediv":
        return [b.binary("div", b.cast(lhs, f64), b.cast(rhs, f64))]
    lhs, rhs = _common(b, lhs, rhs)
    if fn in _BINARY:
        return [b.binary(_BINARY[fn], lhs, rhs)]
    if fn == "mod":
        return [b.binary("mod", lhs, rhs)]  # Python's %: the divisor's sign, as core's mod
    if fn == "floordiv":
        if element_of(lhs.type) == f64:
            return [b.unary("floor", b.binary("div", lhs, rhs))]
        # Python's //: floor, where core's integer div truncates.
        exact = b.binary("sub", lhs, b.binary("mod", lhs, rhs))
        return [b.binary("div", exact, rhs)]
    raise LoweringError(f"torch.sym.binary '{fn}' has no lowering")


def _common(b: CoreBuilder, lhs: SSAValue, rhs: SSAValue) -> tuple[SSAValue, SSAValue]:
    """Both operands of one type: f64 if either is a float, else as they are."""
    lt, rt = element_of(lhs.type), element_of(rhs.type)
    if lt == rt:
        return lhs, rhs
    if f64 in (lt, rt):
        return b.cast(lhs, f64), b.cast(rhs, f64)
    return as_i64(b, lhs), as_i64(b, rhs)


@lowers(SymUnaryOp)
def sym_unary(b: CoreBuilder, op: SymUnaryOp) -> Results:
    fn = op.fn.data
    x = op.x
    if fn == "neg":
        return [b.unary("neg", x)]
    if fn == "not":
        return [b.unary("not", x)]
    if fn == "float":
        return [b.cast(x, f64)]
    if fn == "int":
        return [b.cast(x, i64)]
    if fn in ("ceil", "floor"):
        return [b.cast(b.unary(fn, b.cast(x, f64)), i64)]
    raise LoweringError(f"torch.sym.unary '{fn}' has no lowering")


@lowers(
    aten.Aten_AssertScalarOp,
    aten.Aten_AssertTensorMetadataOp,
    aten.AtenSymConstrainRangeOp,
    aten.AtenSymConstrainRangeForSizeOp,
)
def drop_assert(b: CoreBuilder, op: aten.Aten_AssertScalarOp) -> Results:
    """torch's own run-time asserts on sizes: rung checks what it relies on itself."""
    return []


__all__ = ["as_i64", "dim_value", "sizes", "static_sizes"]
