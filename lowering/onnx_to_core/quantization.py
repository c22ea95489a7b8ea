"""Quantization ONNX ops → core: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear.

Core has no quantized types or ops: `CoreBuilder.quantize` / `dequantize`
turn them into float arithmetic around `core.cast`. What is ONNX's own is how
scale and zero point are laid out; they are brought to the input's shape
first: per tensor (one element), per axis (1-D along `axis`) or blocked (same
rank, each element repeated `block_size` times along `axis`). With `?` dims
that is a run-time broadcast (blocked: a gather of block `i // block_size`),
after a `core.check` that the lengths fit.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from rung.dialects import core
from rung.dialects.dtypes import f64, i32, i64
from rung.dialects.onnx import OnnxOp
from rung.dialects.onnx import generated_ops as onnx
from rung.lowering.kit import (
    CoreBuilder,
    LoweringError,
    element_of,
    int_attr,
    is_static,
    normalize_axis,
    ranked_shape,
    shape_of_type,
    tensor,
)

from .registry import Results, lowers


def _spread(
    b: CoreBuilder,
    param: SSAValue,
    x: SSAValue,
    axis: int,
    block_size: int,
    scale: SSAValue | None = None,
) -> SSAValue:
    """Bring a scale or zero point to the shape of `x` (per tensor, per axis or blocked);
    a zero point follows the layout of its `scale`."""
    x_shape = shape_of_type(x.type)
    shape = shape_of_type(param.type)
    if x_shape is None or shape is None:
        raise LoweringError("quantization needs ranked input, scale and zero point")
    if not is_static(x.type) or not is_static(param.type):
        return _spread_at_run_time(b, param, x, axis, block_size, scale or param)
    element = element_of(param.type)
    target = tensor(element, x_shape)
    if int(np.prod(shape, dtype=np.int64)) == 1 and block_size == 0:
        scalar = b.reshape(param, tensor(element, []))
        return b.broadcast_to(scalar, target)
    if len(x_shape) == 0:
        raise LoweringError("a scalar input takes a scalar scale")
    axis = normalize_axis(axis, len(x_shape))
    if block_size == 0:
        if len(shape) != 1 or shape[0] != x_shape[axis]:
            raise LoweringError(
                f"per-axis scale of shape {list(shape)} does not match dim {axis} of {list(x_shape)}"
            )
        op = core.BroadcastOp.create(
            operands=[param], result_types=[target], properties={"dims": core.ints([axis])}
        )
        return b.insert(op).results[0]
    # Blocked: [..., nb, ...] → [..., nb, bs, ...] → [..., nb * bs, ...] → slice to x's dim.
    blocks = -(-x_shape[axis] // block_size)
    if (
        len(shape) != len(x_shape)
        or shape[axis] != blocks
        or any(shape[i] != x_shape[i] for i in range(len(shape)) if i != axis)
    ):
        raise LoweringError(
            f"blocked scale of shape {list(shape)} does not fit {list(x_shape)} with "
            f"block_size {block_size} on axis {axis}"
        )
    wide = [*shape[: axis + 1], block_size, *shape[axis + 1 :]]
    dims = [i for i in range(len(wide)) if i != axis + 1]
    expanded = b.insert(
        core.BroadcastOp.create(
            operands=[b.reshape(param, tensor(element, shape))],
            result_types=[tensor(element, wide)],
            properties={"dims": core.ints(dims)},
        )
    ).results[0]
    full = [*shape[:axis], blocks * block_size, *shape[axis + 1 :]]
    flat = b.reshape(expanded, tensor(element, full))
    if full[axis] == x_shape[axis]:
        return flat
    sliced = core.SliceOp.create(
        operands=[flat],
        result_types=[target],
        properties={"start": core.ints([0] * len(full)), "stride": core.ints([1] * len(full))},
    )
    return b.insert(sliced).results[0]


def _spread_at_run_time(
    b: CoreBuilder, param: SSAValue, x: SSAValue, axis: int, block_size: int, scale: SSAValue
) -> SSAValue:
    """`_spread` where a shape has `?` dims: the layout follows from the scale's rank (and
    a statically single element), the lengths are checked when the model runs."""
    x_shape, shape = ranked_shape(x), ranked_shape(param)
    element = element_of(param.type)
    target = tensor(element, x_shape)
    if _per_tensor(scale, x, axis, block_size):
        scalar = b.reshape(_checked_single(b, param), tensor(element, []))
        return b.broadcast_to(scalar, target, like=x)
    axis = normalize_axis(axis, len(x_shape))
    if block_size == 0:
        if len(shape) != 1:
            raise LoweringError(f"a per-axis scale must be 1-D, got rank {len(shape)}")
        return _along(b, _checked_per_axis(b, param, x, axis), x, axis)
    if len(shape) != len(x_shape):
        raise LoweringError(
            f"a blocked scale of rank {len(shape)} does not fit an input of rank {len(x_shape)}"
        )
    blocks = _blocks(b, _checked_blocks(b, param, x, axis, block_size), x, axis, block_size)
    return b.reshape(blocks, target, b.shape_of(x))


def _per_tensor(scale: SSAValue, x: SSAValue, axis: int, block_size: int) -> bool:
    """Whether a scale applies to the whole tensor: one of rank 0 or of one element for
    certain, or (not blocked) for a scalar input or an `axis` the input does not have."""
    shape, rank = ranked_shape(scale), len(ranked_shape(x))
    if all(d >= 0 for d in shape) and int(np.prod(shape, dtype=np.int64)) == 1:
        return block_size == 0 or len(shape) == 0
    if block_size:
        return False
    return len(shape) == 0 or rank == 0 or not -rank <= axis < rank


def _checked_single(b: CoreBuilder, param: SSAValue) -> SSAValue:
    """A per-tensor scale or zero point, once it is known to hold one element."""
    shape = ranked_shape(param)
    if all(d >= 0 for d in shape):
        return param
    count = b.reduce("prod", b.shape_of(param), [0])
    fits = b.compare("eq", count, b.constant(np.array(1, np.int64)))
    return b.check(param, fits, "a per-tensor scale or zero point must hold one element")


def _along(b: CoreBuilder, param: SSAValue, x: SSAValue, axis: int) -> SSAValue:
    """A 1-D `param` broadcast along `axis` of `x`, always: its `?` length may be 1."""
    target = tensor(element_of(param.type), ranked_shape(x))
    operands = [param] if is_static(x.type) else [param, b.shape_of(x)]
    op = core.BroadcastOp.create(
        operands=operands, result_types=[target], properties={"dims": core.ints([axis])}
    )
    return b.insert(op).results[0]


def _checked_per_axis(b: CoreBuilder, param: SSAValue, x: SSAValue, axis: int) -> SSAValue:
    """A per-axis scale or zero point, once its length is known to be dim `axis` of `x`
    (or 1: per tensor)."""
    length = b.shape_of(param)
    dim = b.gather(b.shape_of(x), b.constant(np.array([axis], np.int64)), 0)
    fits = b.binary(
        "or",
        b.compare("eq", length, dim),
        b.compare("eq", length, b.constant(np.array([1], np.int64))),
    )
    return b.check(param, fits, f"the per-axis scale or zero point does not fit dim {axis}")


def _checked_blocks(
    b: CoreBuilder, param: SSAValue, x: SSAValue, axis: int, block_size: int
) -> SSAValue:
    """A blocked scale or zero point, once its shape is known to be `x`'s with dim `axis`
    divided (rounding up) by `block_size`."""
    rank = len(ranked_shape(x))
    dims = b.shape_of(x)
    size = b.constant(np.full(rank, block_size, np.int64))
    blocks = b.binary("div", b.binary("add", dims, b.binary("sub", size, b.splat(1, size))), size)
    on_axis = b.constant(np.arange(rank) == axis)
    fits = b.compare("eq", b.shape_of(param), b.select(on_axis, blocks, dims))
    message = (
        f"the blocked scale or zero point does not fit (block_size {block_size} on axis {axis})"
    )
    return b.check(param, fits, message)


def _blocks(b: CoreBuilder, param: SSAValue, x: SSAValue, axis: int, block_size: int) -> SSAValue:
    """Each block's entry repeated along `axis` of `x`: entry `i // block_size` at `i`."""
    length = ranked_shape(x)[axis]
    sizes = [] if length >= 0 else [b.gather(b.shape_of(x), b.scalar(axis, i64), 0)]
    iota = core.IotaOp.create(
        operands=sizes, result_types=[tensor(i64, [length])], properties={"dim": int_attr(0)}
    )
    positions = b.insert(iota).results[0]
    index = b.binary("div", positions, b.splat(block_size, positions))
    return b.gather(param, index, axis)


def _layout(op: OnnxOp) -> tuple[int, int]:
    """(axis, block_size) of a Quantize/DequantizeLinear op."""
    return int(op.attr("axis")), int(op.attr("block_size"))  # type: ignore[arg-type]


@lowers(onnx.QuantizeLinearOp)
def quantize_linear(b: CoreBuilder, op: onnx.QuantizeLinearOp) -> Results:
    if op.attr("precision"):
        raise LoweringError("QuantizeLinear's precision attribute is not supported")
    axis, block = _layout(op)
    scale = _spread(b, op.y_scale, op.x, axis, block)
    zero_point = op.y_zero_point
    if zero_point is not None:
        zero_point = _spread(b, zero_point, op.x, axis, block, op.y_scale)
    saturate = bool(op.attr("saturate"))
    return [b.quantize(op.x, scale, zero_point, element_of(op.y.type), saturate)]


@lowers(onnx.DequantizeLinearOp)
def dequantize_linear(b: CoreBuilder, op: onnx.DequantizeLinearOp) -> Results:
    """`(x - zero_point) * scale`, computed in f32 (f64 for f64 scales), then cast."""
    axis, block = _layout(op)
    zero_point = op.x_zero_point
    if zero_point is not None:
        zero_point = _spread(b, zero_point, op.x, axis, block, op.x_scale)
    scale = _spread(b, op.x_scale, op.x, axis, block)
    return [b.dequantize(op.x, scale, zero_point, element_of(op.y.type))]


@lowers(onnx.DynamicQuantizeLinearOp)
def dynamic_quantize_linear(b: CoreBuilder, op: onnx.DynamicQuantizeLinearOp) -> Results:
    """uint8 quantization over the range [min(x, 0), max(x, 0)], as ONNX defines it."""
    x = op.x
    shape = shape_of_type(x.type)
    if shape is None:
        raise LoweringError("DynamicQuantizeLinear needs a ranked input")
    axes = list(range(len(shape)))
    element = element_of(x.type)
    zero = b.scalar(0, element)
    low = b.binary("min", b.reduce("min", x, axes), zero)
    high = b.binary("max", b.reduce("max", x, axes), zero)
    scale = b.binary("div", b.binary("sub", high, low), b.scalar(255, element))
    zp = b.binary("sub", zero, b.binary("div", low, scale))
    zp = b.unary("round", zp)
    zp = b.binary("min", b.binary("max", zp, zero), b.scalar(255, element))
    zp_out = b.cast(zp, element_of(op.y_zero_point.type))
    like = tensor(element, shape)
    spread_scale = b.broadcast_to(scale, like, x)
    spread_zp = b.broadcast_to(zp, like, x)
    y = b.quantize(x, spread_scale, spread_zp, element_of(op.y.type), True)
    scale_type = op.y_scale.type
    scale_out = b.reshape(scale, scale_type) if scale.type != scale_type else scale
    return [y, scale_out, zp_out]


@lowers(onnx.QLinearMatMulOp)
def qlinear_matmul(b: CoreBuilder, op: onnx.QLinearMatMulOp) -> Results:
    """As ONNX defines it: an exact i32 product of the zero-point-shifted inputs, then one
    f64 rescale by `a_scale * b_scale / y_scale`, rounded and saturated.

    Scales and zero points combine with what they apply to by numpy's rules, as
    in ONNX's reference: per tensor, per row (`[…, M, 1]`) or per column
    (`[…, 1, N]`). Where a `?` dim leaves the layout open, the broadcast happens
    at run time and fails the run for lengths that do not fit.
    """
    a, zp_a = _broadcast(b, b.cast(op.a, i32), b.cast(op.a_zero_point, i32))
    c, zp_c = _broadcast(b, b.cast(op.b, i32), b.cast(op.b_zero_point, i32))
    product = b.matmul(b.binary("sub", a, zp_a), b.binary("sub", c, zp_c), i32, i32)
    rescale = b.binary("mul", *_broadcast(b, op.a_scale, op.b_scale))
    rescale = b.binary("div", *_broadcast(b, rescale, op.y_scale))
    value, rescale = _broadcast(b, b.cast(product, f64), b.cast(rescale, f64))
    value, zero_point = _broadcast(b, value, op.y_zero_point)
    scaled = b.binary("mul", value, rescale)
    return [b.quantize(scaled, b.splat(1.0, scaled), zero_point, element_of(op.y.type))]


def _broadcast(b: CoreBuilder, x: SSAValue, y: SSAValue) -> tuple[SSAValue, SSAValue]:
    """Two values broadcast to their common shape (numpy's rules; at run time along `?` dims)."""
    x_b, y_b = b.broadcast_all([x, y], tensor(element_of(x.type), _common_shape(x, y)))
    return x_b, y_b


def _common_shape(x: SSAValue, y: SSAValue) -> list[int]:
    """The numpy broadcast of two shapes, right-aligned; `?` wherever either dim is `?`
    (only the run time can tell a 1 from the size it meets)."""
    xs, ys = ranked_shape(x), ranked_shape(y)
    rank = max(len(xs), len(ys))
    xs, ys = (1,) * (rank - len(xs)) + xs, (1,) * (rank - len(ys)) + ys
    out = []
    for p, q in zip(xs, ys, strict=True):
        if p < 0 or q < 0:
            out.append(-1)
        elif p == q or q == 1:
            out.append(p)
        elif p == 1:
            out.append(q)
        else:
            raise LoweringError(f"shapes {list(xs)} and {list(ys)} cannot be broadcast together")
    return out
