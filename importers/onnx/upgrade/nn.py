"""Upgrade rules for neural-network ops.

Gemm, pooling, Dropout, BatchNormalization, the Softmax family and
GroupNormalization.
"""

from __future__ import annotations

import numpy as np
from onnx import NodeProto

from .context import Ctx
from .protos import FLOAT_TYPES, find_attr, get_attr, pop_attr, set_attr, set_input
from .registry import Out, always, upgrades


@upgrades(("Gemm", 6), converter_wrong=always)
def _gemm_6(ctx: Ctx, node: NodeProto) -> None:
    """Gemm-7 always broadcasts C, which is all `broadcast=1` asked for."""
    pop_attr(node, "broadcast")


@upgrades(("GlobalLpPool", 1), ("LpPool", 1), converter_wrong=always)
def _lppool_1(ctx: Ctx, node: NodeProto) -> Out | None:
    """`p` became an int in version 2; a fractional p has no equivalent."""
    p = get_attr(node, "p")
    if p is not None:
        if float(p) != int(p):
            raise ctx.error(node, 1, f"p={p} is not an integer, which LpPool-2 requires")
        set_attr(node, "p", int(p))
    if node.op_type == "LpPool" and find_attr(node, "kernel_shape") is None:
        raise ctx.error(node, 1, "LpPool-2 requires kernel_shape; use GlobalLpPool")
    return None


# ---- Dropout / BatchNormalization --------------------------------------------------------


@upgrades(
    ("Dropout", 6), ("BatchNormalization", 6), converter_wrong=lambda n: get_attr(n, "is_test") == 0
)
def _drop_is_test(ctx: Ctx, node: NodeProto) -> None:
    """`is_test` went away in version 7; the inference behaviour is what rung compiles."""
    pop_attr(node, "is_test")


@upgrades(("Dropout", 7), converter_wrong=lambda n: len(n.output) > 1 and bool(n.output[1]))
def _dropout_7(ctx: Ctx, node: NodeProto) -> Out | None:
    """Dropout-10 made the mask bool; cast it back to the data's type for old consumers.

    The mask of an inference model is rarely read; an unread one is dropped.
    """
    if len(node.output) < 2 or not node.output[1]:
        return None
    mask = node.output[1]
    if not ctx.is_used(mask):
        del node.output[1:]
        return None
    node.output[1] = ctx.fresh(mask + "_bool")
    elem = ctx.elem_type(node.input[0])
    if elem is not None:
        cast = ctx.make("Cast", [node.output[1]], mask, to=elem)
    else:
        cast = ctx.make("CastLike", [node.output[1], node.input[0]], mask)
    cast.output[0] = mask
    return Out([node, cast])


@upgrades(("Dropout", 10))
def _dropout_10(ctx: Ctx, node: NodeProto) -> None:
    """Dropout-12 takes the ratio as an input; without training_mode it is identity."""
    ratio = pop_attr(node, "ratio")
    if ratio is not None:
        set_input(node, 1, ctx.add_const(node.output[0] + "_ratio", np.array(ratio, np.float32)))


@upgrades(("BatchNormalization", 7), converter_wrong=lambda n: get_attr(n, "spatial", 1) != 1)
def _bn_7(ctx: Ctx, node: NodeProto) -> Out | None:
    """BatchNormalization-9 dropped `spatial`; spatial=0 (per-element statistics) is spelled out.

    With spatial=0 the statistics have shape (C, D1, ...), which numpy-style
    broadcasting lines up against (N, C, D1, ...), so plain arithmetic does it.
    """
    spatial = pop_attr(node, "spatial", 1)
    if spatial == 1:
        return None
    if len([o for o in node.output if o]) > 1:
        raise ctx.error(node, 7, "spatial=0 in training mode has no equivalent")
    x, scale, bias, mean, var = node.input[:5]
    hint = node.output[0]
    eps = ctx.scalar_like(hint + "_eps", float(get_attr(node, "epsilon", 1e-5)), x)
    centered = ctx.make("Sub", [x, mean], hint)
    var_eps = ctx.make("Add", [var, eps], hint)
    std = ctx.make("Sqrt", [var_eps.output[0]], hint)
    normed = ctx.make("Div", [centered.output[0], std.output[0]], hint)
    scaled = ctx.make("Mul", [normed.output[0], scale], hint)
    out = ctx.make("Add", [scaled.output[0], bias], hint)
    out.output[0] = node.output[0]
    return Out([centered, var_eps, std, normed, scaled, out])


@upgrades(("BatchNormalization", 9), converter_wrong=lambda n: len(n.output) > 1)
def _bn_9(ctx: Ctx, node: NodeProto) -> None:
    """BatchNormalization-14 spells training as `training_mode=1` and drops saved_mean/var.

    In version 9 the outputs a node declares decide its mode: with more than Y
    it normalizes with the batch's own statistics, whether or not anything
    reads them. onnx's adapter keeps the outputs without setting
    training_mode, which silently switches to inference.
    """
    outputs = list(node.output)
    training = any(outputs[1:])
    for i in (3, 4):
        if i < len(outputs) and outputs[i] and ctx.is_used(outputs[i]):
            raise ctx.error(node, 9, "saved_mean/saved_var outputs no longer exist; remove them")
    del node.output[3:]
    if training:
        # Version 14 in training mode must declare its running statistics.
        set_attr(node, "training_mode", 1)
        while len(node.output) < 3:
            node.output.append("")
        for i in (1, 2):
            if not node.output[i]:
                node.output[i] = ctx.fresh(f"{node.output[0]}_running_{('', 'mean', 'var')[i]}")


# ---- Softmax family ----------------------------------------------------------------------


@upgrades(
    ("Softmax", 11),
    ("LogSoftmax", 11),
    ("Hardmax", 11),
    converter_wrong=lambda n: n.op_type == "Hardmax",
)
def _softmax_11(ctx: Ctx, node: NodeProto) -> Out | None:
    """Before 13 these coerced the input to 2-D at `axis` and normalized each row.

    Flatten at the old axis, normalize the last axis, and reshape back. onnx's
    converter does this for Softmax/LogSoftmax but treats Hardmax as compatible.
    """
    axis = int(get_attr(node, "axis", 1))
    x = node.input[0]
    rank = ctx.rank(x)
    if axis == -1 or (rank is not None and axis in (rank - 1, -1)):
        set_attr(node, "axis", -1)
        return None
    hint = node.output[0]
    shape = ctx.make("Shape", [x], hint)
    flat = ctx.make("Flatten", [x], hint, axis=axis)
    node.input[0] = flat.output[0]
    set_attr(node, "axis", -1)
    result = node.output[0]
    node.output[0] = ctx.fresh(hint + "_2d")
    back = ctx.make("Reshape", [node.output[0], shape.output[0]], hint)
    back.output[0] = result
    return Out([shape, flat, node, back])


# ---- GroupNormalization ------------------------------------------------------------------


@upgrades(("GroupNormalization", 18), converter_wrong=always)
def _groupnorm_18(ctx: Ctx, node: NodeProto) -> Out | None:
    """GroupNormalization-21 takes scale/bias per channel, not per group: repeat each.

    The statistics were computed in the input type before; stash_type says so.
    onnx has an adapter for this, but its converter never applies it (the node
    comes out unchanged, per-group scale and all).
    """
    groups = int(get_attr(node, "num_groups"))
    x, hint = node.input[0], node.output[0]
    elem = ctx.elem_type(x)
    if elem in FLOAT_TYPES:
        set_attr(node, "stash_type", elem)
    shape = ctx.shape(x)
    channels = shape[1] if shape is not None and len(shape) > 1 else None
    values = [ctx.const(node.input[i]) for i in (1, 2)]
    if channels is not None and all(v is not None for v in values):
        for i, v in zip((1, 2), values, strict=True):
            node.input[i] = ctx.add_const(
                f"{hint}_{i}_per_channel", np.repeat(v, channels // groups)
            )
        return None
    # Run time: reshape to (G, 1), expand to (G, C/G), flatten.
    c = ctx.make("Shape", [x], hint + "_c", start=1, end=2)
    per_group = ctx.make("Div", [c.output[0], ctx.ints_input(hint + "_groups", [groups])], hint)
    one = ctx.ints_input(hint + "_one", [1])
    expand_shape = ctx.make("Concat", [one, per_group.output[0]], hint, axis=0)
    col = ctx.ints_input(hint + "_col", [-1, 1])
    flat = ctx.ints_input(hint + "_flat", [-1])
    helpers = [c, per_group, expand_shape]
    for i in (1, 2):
        r0 = ctx.make("Reshape", [node.input[i], col], hint)
        ex = ctx.make("Expand", [r0.output[0], expand_shape.output[0]], hint)
        r1 = ctx.make("Reshape", [ex.output[0], flat], hint)
        helpers += [r0, ex, r1]
        node.input[i] = r1.output[0]
    return Out([*helpers, node])
