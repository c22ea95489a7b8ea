"""Quantization ONNX ops → core: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear.

Core has no quantized types or ops: `CoreBuilder.quantize` / `dequantize`
turn them into float arithmetic around `core.cast`. What is ONNX's own is how
scale and zero point are laid out; they are brought to the input's shape
first: per tensor (one element), per axis (1-D along `axis`) or blocked (same
rank, each element repeated `block_size` times along `axis`).
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from rung.dialects import core
from rung.dialects.dtypes import f64, i32
from rung.dialects.onnx import OnnxOp
from rung.dialects.onnx import generated_ops as onnx
from rung.lowering.kit import (
    CoreBuilder,
    LoweringError,
    element_of,
    is_static,
    normalize_axis,
    shape_of_type,
    tensor,
)

from .registry import Results, lowers


def _spread(b: CoreBuilder, param: SSAValue, x: SSAValue, axis: int, block_size: int) -> SSAValue:
    """Bring a scale or zero point to the shape of `x` (per tensor, per axis or blocked)."""
    x_shape = shape_of_type(x.type)
    shape = shape_of_type(param.type)
    if x_shape is None or shape is None or not is_static(x.type) or not is_static(param.type):
        raise LoweringError("quantization needs static shapes for the input, scale and zero point")
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
        zero_point = _spread(b, zero_point, op.x, axis, block)
    saturate = bool(op.attr("saturate"))
    return [b.quantize(op.x, scale, zero_point, element_of(op.y.type), saturate)]


@lowers(onnx.DequantizeLinearOp)
def dequantize_linear(b: CoreBuilder, op: onnx.DequantizeLinearOp) -> Results:
    """`(x - zero_point) * scale`, computed in f32 (f64 for f64 scales), then cast."""
    axis, block = _layout(op)
    zero_point = op.x_zero_point
    if zero_point is not None:
        zero_point = _spread(b, zero_point, op.x, axis, block)
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
    f64 rescale by `a_scale * b_scale / y_scale` (per tensor), rounded and saturated."""
    params = [op.a_scale, op.b_scale, op.y_scale, op.a_zero_point, op.b_zero_point]
    if any(not _one_element(p) for p in [*params, op.y_zero_point] if p is not None):
        raise LoweringError("QLinearMatMul with per-row or per-column scales")
    a, zp_a = b.broadcast_all([b.cast(op.a, i32), b.cast(op.a_zero_point, i32)], op.a.type)
    c, zp_c = b.broadcast_all([b.cast(op.b, i32), b.cast(op.b_zero_point, i32)], op.b.type)
    product = b.matmul(b.binary("sub", a, zp_a), b.binary("sub", c, zp_c), i32, i32)
    rescale = b.binary("div", b.binary("mul", op.a_scale, op.b_scale), op.y_scale)
    value, rescale = b.broadcast_all([b.cast(product, f64), b.cast(rescale, f64)], product.type)
    _, zero_point = b.broadcast_all([value, op.y_zero_point], value.type)
    scaled = b.binary("mul", value, rescale)
    return [b.quantize(scaled, b.splat(1.0, scaled), zero_point, element_of(op.y.type))]


def _one_element(v: SSAValue) -> bool:
    shape = shape_of_type(v.type)
    return shape is not None and all(d >= 0 for d in shape) and int(np.prod(shape)) == 1
