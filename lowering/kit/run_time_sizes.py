"""Helpers for lowerings whose sizes only the run knows: data-dependent counts, sizes
read from scalar inputs, stacks of matrices over run-time batch dims.

A size here is a number, a `DimOf` (a dim of a value) or a rank-0 i64 value
computed in the IR; shapes built from them are read at run time.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import Attribute, SSAValue

from rung.dialects import core
from rung.dialects.dtypes import i64

from .core_builder import CoreBuilder
from .errors import LoweringError
from .shapes import (
    Size,
    element_of,
    int_attr,
    ranked_shape,
    shape_of_type,
    static_size,
    tensor,
)

AnySize = Size | SSAValue
"""A number, a `DimOf`, or a rank-0 i64 value holding the size."""


def declared(b: CoreBuilder, v: SSAValue, target: Attribute, what: str) -> SSAValue:
    """`v` in the op's declared type, once the run has checked each static dim the model
    declares where only the run knows the size (a data-dependent count)."""
    out = shape_of_type(target)
    if out is None or v.type == target:
        return v
    shape = ranked_shape(v)
    if len(out) != len(shape):
        raise LoweringError(f"{what} gives rank {len(shape)}, not that of {target}")
    claimed = [o >= 0 and d < 0 for o, d in zip(out, shape, strict=True)]
    if any(claimed):
        actual = b.shape_of(v)
        sizes = b.select(
            b.constant(np.array(claimed)),
            b.constant(np.array([max(o, 0) for o in out], np.int64)),
            actual,
        )
        same = b.compare("eq", actual, sizes)
        v = b.check(v, same, f"{what}: the result's shape differs from the declared {target}")
    return b.retype(v, target)


def one_value(b: CoreBuilder, v: SSAValue, what: str) -> SSAValue:
    """A tensor that must hold one value (Pad's value, OneHot's depth, a score
    threshold), as a rank-0 tensor: refused now when its static shape holds another
    count, checked by the run when its shape is dynamic."""
    shape = ranked_shape(v)
    if all(d >= 0 for d in shape):
        if int(np.prod(shape, dtype=np.int64)) != 1:
            raise LoweringError(f"{what} must hold one value, got {v.type}")
    else:
        count = b.reduce("prod", b.shape_of(v), [0])
        one = b.compare("eq", count, b.constant(np.array(1, np.int64)))
        v = b.check(v, one, f"{what} must hold one value")
    return b.reshape(v, tensor(element_of(v.type), []))


def _static(size: AnySize) -> int:
    return -1 if isinstance(size, SSAValue) else static_size(size)


def iota(b: CoreBuilder, sizes: Sequence[AnySize], dim: int) -> SSAValue:
    """i64 indices along `dim` of a tensor of `sizes`."""
    operands = []
    for s in sizes:
        if isinstance(s, SSAValue):
            operands.append(s)
        elif static_size(s) < 0:
            operands.append(b.reshape(b.shape_vector([s]), tensor(i64, [])))
    new = core.IotaOp.create(
        operands=operands,
        result_types=[tensor(i64, [_static(s) for s in sizes])],
        properties={"dim": int_attr(dim)},
    )
    return b.insert(new).results[0]


def size_like(b: CoreBuilder, size: Size, like: SSAValue) -> SSAValue:
    """One size (a number, or read at run time) as an i64 tensor shaped like `like`."""
    if isinstance(size, int):
        return b.splat(size, like)
    return b.sizes_like([size], like)


def stacked(b: CoreBuilder, x: SSAValue, keep: int, merged: bool = False) -> SSAValue:
    """`x` as `[P, *last keep dims]` (or `[P, their product]` when `merged`), P the
    product of its other dims (read at run time when one of them is dynamic). The
    last `keep` dims must be static."""
    shape = ranked_shape(x)
    lead, tail = shape[: len(shape) - keep], list(shape[len(shape) - keep :])
    if any(d < 0 for d in tail):
        raise LoweringError(f"needs static trailing dims, got {x.type}")
    if merged:
        tail = [int(np.prod(tail, dtype=np.int64))]
    if all(d >= 0 for d in lead):
        return b.reshape_to(x, [int(np.prod(lead, dtype=np.int64)), *tail])
    dims = b.slice(b.shape_of(x), [0], [len(lead)])
    count = b.reshape(b.reduce("prod", dims, [0]), tensor(i64, [1]))
    sizes = b.concat([count, b.constant(np.array(tail, np.int64))], 0)
    return b.reshape(x, tensor(element_of(x.type), [-1, *tail]), sizes)


def unstacked(b: CoreBuilder, v: SSAValue, lead: Sequence[Size]) -> SSAValue:
    """`v` (`[P, *tail]`) with P split back into the sizes `lead`."""
    return b.reshape_to(v, [*lead, *b.dims(v)[1:]])
