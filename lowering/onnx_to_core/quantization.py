"""Quantization ONNX ops → core: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear.

Core has no quantized types or ops: these become float arithmetic around
`core.cast`. Scale and zero point are brought to the input's shape first:
per tensor (one element), per axis (1-D along `axis`) or blocked (same rank,
each element repeated `block_size` times along `axis`). Rounding is half to
even (`core.unary round`), and the clamp to the output type's range is done
in float before the cast, so the cast never sees an out-of-range value.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from xdsl.ir import Attribute, Operation, SSAValue

from rung.dialects import core

from .builder import (
    CoreBuilder,
    LoweringError,
    as_onnx,
    element_of,
    element_type_of,
    is_static,
    normalize_axis,
    numpy_dtype,
    shape_of_type,
    tensor,
)
from .registry import Results, lowers


def _compute_element(*values: SSAValue) -> Attribute:
    """f64 if any operand is f64, else f32: the precision ONNX's reference computes in."""
    if any(numpy_dtype(element_of(v.type)) == np.float64 for v in values):
        return element_type_of(np.dtype(np.float64))
    return element_type_of(np.dtype(np.float32))


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


def _range(dtype: np.dtype) -> tuple[float, float]:
    """The representable range of a quantized type (finite range for float types)."""
    if _is_integer(dtype):
        info = ml_dtypes.iinfo(dtype)
        return float(info.min), float(info.max)
    finfo = ml_dtypes.finfo(dtype)
    return float(finfo.min), float(finfo.max)


def _is_integer(dtype: np.dtype) -> bool:
    try:
        ml_dtypes.iinfo(dtype)
    except (ValueError, TypeError):
        return False
    return True


def _quantize(
    b: CoreBuilder,
    x: SSAValue,
    scale: SSAValue,
    zero_point: SSAValue | None,
    out_element: Attribute,
    saturate: bool,
) -> SSAValue:
    """`saturate(round(x / scale) + zero_point)` in `out_element` (all operands shaped like x)."""
    compute = _compute_element(x, scale)
    xf = b.cast(x, compute)
    value = b.binary("div", xf, b.cast(scale, compute))
    out_dtype = numpy_dtype(out_element)
    integer = _is_integer(out_dtype)
    if integer:
        value = b.unary("round", value)
    if zero_point is not None:
        value = b.binary("add", value, b.cast(zero_point, compute))
    low, high = _range(out_dtype)
    if integer or saturate:
        value = b.binary("max", value, b.splat(low, value))
        value = b.binary("min", value, b.splat(high, value))
    return b.cast(value, out_element)


@lowers("QuantizeLinear")
def quantize_linear(b: CoreBuilder, op: Operation) -> Results:
    onnx_op = as_onnx(op)
    x, scale, zero_point = (onnx_op.onnx_inputs() + [None, None])[:3]
    assert x is not None and scale is not None
    if onnx_op.attr("precision"):
        raise LoweringError("QuantizeLinear's precision attribute is not supported")
    axis = int(onnx_op.attr("axis"))  # type: ignore[arg-type]
    block = int(onnx_op.attr("block_size"))  # type: ignore[arg-type]
    out_element = element_of(op.results[0].type)
    scale = _spread(b, scale, x, axis, block)
    if zero_point is not None:
        zero_point = _spread(b, zero_point, x, axis, block)
    saturate = bool(onnx_op.attr("saturate"))
    return [_quantize(b, x, scale, zero_point, out_element, saturate)]


@lowers("DequantizeLinear")
def dequantize_linear(b: CoreBuilder, op: Operation) -> Results:
    """`(x - zero_point) * scale`, computed in f32 (f64 for f64 scales), then cast."""
    onnx_op = as_onnx(op)
    x, scale, zero_point = (onnx_op.onnx_inputs() + [None, None])[:3]
    assert x is not None and scale is not None
    axis = int(onnx_op.attr("axis"))  # type: ignore[arg-type]
    block = int(onnx_op.attr("block_size"))  # type: ignore[arg-type]
    compute = _compute_element(scale)
    value = b.cast(x, compute)
    if zero_point is not None:
        value = b.binary("sub", value, b.cast(_spread(b, zero_point, x, axis, block), compute))
    value = b.binary("mul", value, b.cast(_spread(b, scale, x, axis, block), compute))
    return [b.cast(value, element_of(op.results[0].type))]


@lowers("DynamicQuantizeLinear")
def dynamic_quantize_linear(b: CoreBuilder, op: Operation) -> Results:
    """uint8 quantization over the range [min(x, 0), max(x, 0)], as ONNX defines it."""
    (x,) = [v for v in as_onnx(op).onnx_inputs() if v is not None]
    shape = shape_of_type(x.type)
    if shape is None:
        raise LoweringError("DynamicQuantizeLinear needs a ranked input")
    axes = list(range(len(shape)))
    y_type, scale_type, zp_type = (r.type for r in op.results)
    zero = b.scalar(0, element_of(x.type))
    low = b.binary("min", b.reduce("min", x, axes), zero)
    high = b.binary("max", b.reduce("max", x, axes), zero)
    scale = b.binary("div", b.binary("sub", high, low), b.scalar(255, element_of(x.type)))
    zp = b.binary("sub", zero, b.binary("div", low, scale))
    zp = b.unary("round", zp)
    zp = b.binary("min", b.binary("max", zp, zero), b.scalar(255, element_of(x.type)))
    zp_out = b.cast(zp, element_of(zp_type))
    like = tensor(element_of(x.type), shape)
    spread_scale = b.broadcast_to(scale, like, x)
    spread_zp = b.broadcast_to(zp, like, x)
    y = _quantize(b, x, spread_scale, spread_zp, element_of(y_type), True)
    scale_out = b.reshape(scale, scale_type) if scale.type != scale_type else scale
    return [y, scale_out, zp_out]
