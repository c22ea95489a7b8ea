"""Upgrade rules for image ops.

Upsample becomes Resize, Resize-10's sampling is spelled out for Resize-11,
GridSample's modes were renamed and RoiAlign's coordinates made explicit.
"""

from __future__ import annotations

import numpy as np
from onnx import NodeProto, helper

from .context import Ctx
from .history import DEFAULT
from .protos import find_attr, get_attr, pop_attr, set_attr, set_input
from .registry import Out, always, upgrades


@upgrades(("Upsample", 1), converter_wrong=always)
def _upsample_1(ctx: Ctx, node: NodeProto) -> None:
    """Upsample-7 takes a scale per dim and calls 'bilinear' 'linear'."""
    h, w = pop_attr(node, "height_scale"), pop_attr(node, "width_scale")
    if h is None or w is None:
        raise ctx.error(node, 1, "it lacks height_scale/width_scale")
    set_attr(node, "scales", [1.0, 1.0, float(h), float(w)])
    if get_attr(node, "mode") == "bilinear":
        set_attr(node, "mode", "linear")


@upgrades(("Upsample", 7), converter_wrong=always)
def _upsample_7(ctx: Ctx, node: NodeProto) -> None:
    """Upsample-9 takes the scales as an input."""
    scales = pop_attr(node, "scales")
    if scales is None:
        raise ctx.error(node, 7, "it has no 'scales'")
    set_input(node, 1, ctx.add_const(node.output[0] + "_scales", np.array(scales, np.float32)))


@upgrades(("Upsample", 9), ("Upsample", 10), converter_wrong=always)
def _upsample_9(ctx: Ctx, node: NodeProto) -> Out | None:
    """Upsample became Resize. Its scales are >= 1, where onnxruntime's legacy nearest floors.

    The result is Resize-11 with the legacy sampling spelled out (onnx's
    adapters leave Resize-11's half_pixel default, which changes linear).
    """
    node.op_type = "Resize"
    if ctx.targets[DEFAULT] < 11:
        return Out([node], version=10)
    mode = get_attr(node, "mode", "nearest")
    _to_resize_11(ctx, node, node.input[1], "floor" if mode == "nearest" else None)
    return Out([node], version=11)


def _to_resize_11(ctx: Ctx, node: NodeProto, scales: str, nearest_mode: str | None) -> None:
    """Rewrite a Resize-10 style node (X, scales) to Resize-11 inputs and explicit sampling."""
    if ctx.targets[DEFAULT] >= 13:
        roi = ""
    else:
        roi = ctx.add_const(node.output[0] + "_roi", np.zeros(0, np.float32))
    del node.input[1:]
    node.input.extend([roi, scales])
    set_attr(node, "coordinate_transformation_mode", "asymmetric")
    if nearest_mode is not None:
        set_attr(node, "nearest_mode", nearest_mode)


@upgrades(("Resize", 10), converter_wrong=always)
def _resize_10(ctx: Ctx, node: NodeProto) -> Out | None:
    """Resize-10 sampled at x_out / scale ('asymmetric'); nearest floored when upsampling
    and took the ceiling when downsampling (onnxruntime, the reference for this version).

    Resize-11 has one nearest_mode for all axes, so mixed up/down scales become
    two Resizes (nearest is separable per axis).
    """
    mode = get_attr(node, "mode", "nearest")
    scales = node.input[1]
    if mode != "nearest":
        _to_resize_11(ctx, node, scales, None)
        return Out([node], version=11)
    value = ctx.const(scales)
    hint = node.output[0]
    if value is not None:
        up, down = bool((value > 1).any()), bool((value < 1).any())
        if not (up and down):
            _to_resize_11(ctx, node, scales, "ceil" if down else "floor")
            return Out([node], version=11)
        up_scales = ctx.add_const(hint + "_up_scales", np.maximum(value, 1).astype(np.float32))
        down_scales = ctx.add_const(hint + "_down_scales", np.minimum(value, 1).astype(np.float32))
        helpers: list[NodeProto] = []
    else:
        one = ctx.add_const(hint + "_one", np.array(1.0, np.float32))
        up_node = ctx.make("Max", [scales, one], hint + "_up")
        down_node = ctx.make("Min", [scales, one], hint + "_down")
        up_scales, down_scales = up_node.output[0], down_node.output[0]
        helpers = [up_node, down_node]
    first = helper.make_node("Resize", [node.input[0], up_scales], [ctx.fresh(hint + "_up")])
    first.name = ctx.fresh(hint + "_up")
    first.attribute.extend(node.attribute)
    _to_resize_11(ctx, first, up_scales, "floor")
    _to_resize_11(ctx, node, down_scales, "ceil")
    node.input[0] = first.output[0]
    return Out([*helpers, first, node], version=11)


@upgrades(("GridSample", 16))
def _gridsample_16(ctx: Ctx, node: NodeProto) -> None:
    """GridSample-20 renamed modes: bilinear -> linear, bicubic -> cubic."""
    mode = get_attr(node, "mode")
    if mode in ("bilinear", "bicubic"):
        set_attr(node, "mode", {"bilinear": "linear", "bicubic": "cubic"}[mode])


@upgrades(("RoiAlign", 10))
def _roialign_10(ctx: Ctx, node: NodeProto) -> None:
    """RoiAlign-10 behaved like what version 16 calls 'output_half_pixel'."""
    if find_attr(node, "coordinate_transformation_mode") is None:
        set_attr(node, "coordinate_transformation_mode", "output_half_pixel")
