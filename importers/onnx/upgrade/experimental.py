"""Experimental ops that onnx removed (no schema left), rewritten as standard ops.

Each is registered by op type; `EXPERIMENTAL_UNSUPPORTED` lists those rung
cannot rewrite, so that the error says so rather than "unknown op".
"""

from __future__ import annotations

import numpy as np
from onnx import NodeProto, TensorProto

from rung.errors import RungError

from .context import Ctx
from .protos import get_attr, ints, np_dtype
from .registry import Out, experimental

_INT64_MAX = 2**63 - 1


@experimental("ImageScaler")
def _experimental_image_scaler(ctx: Ctx, node: NodeProto) -> Out:
    """ImageScaler: y = scale * x + bias[c] (NCHW)."""
    x, hint = node.input[0], node.output[0]
    dtype = np_dtype(ctx.elem_type(x) or TensorProto.FLOAT)
    scale = ctx.add_const(hint + "_scale", np.array(get_attr(node, "scale", 1.0), dtype))
    bias = np.array(get_attr(node, "bias", [0.0]), dtype).reshape(-1, 1, 1)
    mul = ctx.make("Mul", [x, scale], hint)
    add = ctx.make("Add", [mul.output[0], ctx.add_const(hint + "_bias", bias)], hint)
    add.output[0] = node.output[0]
    return Out([mul, add])


@experimental("Affine")
def _experimental_affine(ctx: Ctx, node: NodeProto, alpha_default: float = 1.0) -> Out:
    """Affine: y = alpha * x + beta."""
    x, hint = node.input[0], node.output[0]
    alpha = ctx.scalar_like(hint + "_alpha", float(get_attr(node, "alpha", alpha_default)), x)
    beta = ctx.scalar_like(hint + "_beta", float(get_attr(node, "beta", 0.0)), x)
    mul = ctx.make("Mul", [x, alpha], hint)
    add = ctx.make("Add", [mul.output[0], beta], hint)
    add.output[0] = node.output[0]
    return Out([mul, add])


@experimental("Scale")
def _experimental_scale(ctx: Ctx, node: NodeProto) -> Out:
    """Scale: y = scale * x."""
    x, hint = node.input[0], node.output[0]
    mul = ctx.make(
        "Mul", [x, ctx.scalar_like(hint + "_scale", float(get_attr(node, "scale", 1.0)), x)], hint
    )
    mul.output[0] = node.output[0]
    return Out([mul])


@experimental("ScaledTanh")
def _experimental_scaled_tanh(ctx: Ctx, node: NodeProto) -> Out:
    """ScaledTanh: y = alpha * tanh(beta * x)."""
    x, hint = node.input[0], node.output[0]
    beta = ctx.scalar_like(hint + "_beta", float(get_attr(node, "beta", 1.0)), x)
    alpha = ctx.scalar_like(hint + "_alpha", float(get_attr(node, "alpha", 1.0)), x)
    inner = ctx.make("Mul", [x, beta], hint)
    tanh = ctx.make("Tanh", [inner.output[0]], hint)
    out = ctx.make("Mul", [tanh.output[0], alpha], hint)
    out.output[0] = node.output[0]
    return Out([inner, tanh, out])


@experimental("ParametricSoftplus")
def _experimental_parametric_softplus(ctx: Ctx, node: NodeProto) -> Out:
    """ParametricSoftplus: y = alpha * ln(exp(beta * x) + 1)."""
    x, hint = node.input[0], node.output[0]
    beta = ctx.scalar_like(hint + "_beta", float(get_attr(node, "beta", 1.0)), x)
    alpha = ctx.scalar_like(hint + "_alpha", float(get_attr(node, "alpha", 1.0)), x)
    inner = ctx.make("Mul", [x, beta], hint)
    soft = ctx.make("Softplus", [inner.output[0]], hint)
    out = ctx.make("Mul", [soft.output[0], alpha], hint)
    out.output[0] = node.output[0]
    return Out([inner, soft, out])


@experimental("ThresholdedRelu")
def _experimental_thresholded_relu(ctx: Ctx, node: NodeProto) -> Out:
    """ThresholdedRelu was experimental before opset 10, with the same meaning."""
    return Out([node], version=10)


@experimental("DynamicSlice")
def _experimental_dynamic_slice(ctx: Ctx, node: NodeProto) -> Out:
    """DynamicSlice(data, starts, ends, axes) is Slice-10 without steps."""
    node.op_type = "Slice"
    return Out([node], version=10)


@experimental("Crop")
def _experimental_crop(ctx: Ctx, node: NodeProto) -> Out:
    """Crop(border=[left, top, right, bottom], scale=[h, w]) on NCHW is a Slice of H and W."""
    border = ints(get_attr(node, "border", []))
    if len(border) != 4:
        raise RungError(f"Crop at {ctx.node_label} needs a 4-element 'border'")
    left, top, right, bottom = border
    scale = ints(get_attr(node, "scale", []))
    if scale:
        ends = [top + scale[0], left + scale[1]]
    else:
        ends = [-bottom if bottom else _INT64_MAX, -right if right else _INT64_MAX]
    hint = node.output[0]
    inputs = [
        node.input[0],
        ctx.ints_input(hint + "_starts", [top, left]),
        ctx.ints_input(hint + "_ends", ends),
        ctx.ints_input(hint + "_axes", [2, 3]),
    ]
    out = ctx.make("Slice", inputs, hint)
    out.output[0] = node.output[0]
    return Out([out])


EXPERIMENTAL_UNSUPPORTED = frozenset(
    {"ConstantFill", "GivenTensorFill", "GRUUnit", "ATen", "MeanVarianceNormalization"}
)
