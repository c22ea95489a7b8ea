"""Upgrade rules for elementwise and math ops.

Legacy broadcasting (`broadcast`/`axis` before opset 7, PRelu's per-channel
slope), attributes that went away (`consumed_inputs`) or became inputs
(Clip, DFT), and changed defaults or spellings (Selu, Cast).
"""

from __future__ import annotations

import numpy as np
from onnx import NodeProto, TensorProto, numpy_helper

from .context import Ctx
from .protos import find_attr, get_attr, pop_attr, set_attr, set_input
from .registry import Out, always, upgrades

# ---- legacy attributes that simply went away ---------------------------------------------


_CONSUMED_INPUTS_OPS = (
    "Abs", "Add", "BatchNormalization", "Ceil", "Clip", "Div", "Dropout", "Elu", "Exp",
    "Floor", "HardSigmoid", "InstanceNormalization", "LeakyRelu", "Log", "Max", "Mean",
    "Min", "Mul", "Neg", "PRelu", "Reciprocal", "Relu", "Sigmoid", "Sqrt", "Sub", "Sum",
    "Tanh",
)  # fmt: skip


@upgrades(*((op, 1) for op in _CONSUMED_INPUTS_OPS))
def _drop_consumed_inputs(ctx: Ctx, node: NodeProto) -> None:
    """`consumed_inputs` was an in-place hint for Caffe2, never semantics."""
    pop_attr(node, "consumed_inputs")


@upgrades(
    ("Selu", 1),
    converter_wrong=lambda n: find_attr(n, "alpha") is None or find_attr(n, "gamma") is None,
)
def _selu_1(ctx: Ctx, node: NodeProto) -> None:
    """Selu-6 changed the default alpha/gamma (more digits); pin the old ones."""
    pop_attr(node, "consumed_inputs")
    if find_attr(node, "alpha") is None:
        set_attr(node, "alpha", 1.6732)
    if find_attr(node, "gamma") is None:
        set_attr(node, "gamma", 1.0507)


@upgrades(("Cast", 1), converter_wrong=always)
def _cast_1(ctx: Ctx, node: NodeProto) -> None:
    """Cast-1 named the target type as a string ('FLOAT'); later versions use the enum."""
    to = get_attr(node, "to")
    if isinstance(to, str):
        try:
            set_attr(node, "to", TensorProto.DataType.Value(to.upper()))
        except ValueError:
            raise ctx.error(node, 1, f"unknown type name to='{to}'") from None


# ---- legacy broadcasting -----------------------------------------------------------------


_LEGACY_BROADCAST = (
    ("Add", 6), ("Sub", 6), ("Mul", 6), ("Div", 6), ("Pow", 1), ("And", 1), ("Or", 1),
    ("Xor", 1), ("Equal", 1), ("Greater", 1), ("Less", 1),
)  # fmt: skip


@upgrades(*_LEGACY_BROADCAST, converter_wrong=always)
def _legacy_broadcast(ctx: Ctx, node: NodeProto) -> Out | None:
    """Before opset 7, B was matched against A starting at `axis`; numpy matches from the end.

    Appending size-1 dims to B (as many as A has after the matched span) makes
    numpy broadcasting line it up the same way. onnx's adapter appends
    rank(A) - rank(B) dims whatever the axis (wrong unless axis == 0), and needs
    static shapes; here the run-time fallback covers unknown ranks.
    """
    version = 6 if node.op_type in ("Add", "Sub", "Mul", "Div") else 1
    broadcast = pop_attr(node, "broadcast", 0)
    axis = pop_attr(node, "axis")
    if not broadcast or axis is None:
        return None  # suffix matching (or equal shapes) is what numpy does anyway
    axis = int(axis)
    a, b = node.input[0], node.input[1]
    rank_a, rank_b = ctx.rank(a), ctx.rank(b)
    if rank_b is not None and (rank_a is not None or axis < 0):
        trailing = (-axis if axis < 0 else rank_a - axis) - rank_b
        if trailing < 0:
            raise ctx.error(node, version, f"B (rank {rank_b}) does not fit in A at axis {axis}")
        if trailing == 0:
            return None
        value = ctx.const(b)
        if value is not None:
            node.input[1] = ctx.add_const(
                b + "_bcast", value.reshape(value.shape + (1,) * trailing)
            )
            return None
        unsq = ctx.unsqueeze(b, list(range(rank_b, rank_b + trailing)), b + "_bcast")
        node.input[1] = unsq.output[0]
        return Out([unsq, node])
    # Ranks unknown: reshape B to shape(B) ++ ones(rank(A) - axis - rank(B)) at run time.
    hint = b + "_bcast"
    shape_b = ctx.make("Shape", [b], hint)
    rank_b_node = ctx.make("Shape", [shape_b.output[0]], hint + "_rank")
    helpers = [shape_b, rank_b_node]
    if axis < 0:
        span = ctx.ints_input(hint + "_span", [-axis])
    else:
        shape_a = ctx.make("Shape", [a], hint + "_a")
        rank_a_node = ctx.make("Shape", [shape_a.output[0]], hint + "_arank")
        sub_axis = ctx.make(
            "Sub", [rank_a_node.output[0], ctx.ints_input(hint + "_axis", [axis])], hint
        )
        helpers += [shape_a, rank_a_node, sub_axis]
        span = sub_axis.output[0]
    count = ctx.make("Sub", [span, rank_b_node.output[0]], hint + "_count")
    ones = ctx.make(
        "ConstantOfShape", [count.output[0]], hint,
        value=numpy_helper.from_array(np.array([1], dtype=np.int64)),
    )  # fmt: skip
    new_shape = ctx.make("Concat", [shape_b.output[0], ones.output[0]], hint, axis=0)
    reshape = ctx.make("Reshape", [b, new_shape.output[0]], hint)
    node.input[1] = reshape.output[0]
    return Out([*helpers, count, ones, new_shape, reshape, node])


@upgrades(("PRelu", 6), converter_wrong=always)
def _prelu_6(ctx: Ctx, node: NodeProto) -> Out | None:
    """PRelu-6 applied a 1-D slope per channel (axis 1); PRelu-7 broadcasts numpy-style.

    onnx's converter treats the change as compatible, which turns a per-channel
    slope into a per-last-axis one (or a shape error).
    """
    x, slope = node.input[0], node.input[1]
    rank_x, slope_shape = ctx.rank(x), ctx.shape(slope)
    if slope_shape is None:
        raise ctx.error(
            node, 6, "the shape of the slope is unknown, so per-channel use cannot be ruled out"
        )
    if len(slope_shape) != 1 or slope_shape[0] == 1:
        return None  # scalar-like or full-shaped slopes broadcast the same way
    if rank_x is None:
        raise ctx.error(
            node, 6, "the rank of X is unknown, so the per-channel slope cannot be placed"
        )
    if rank_x <= 2:
        return None
    extra = rank_x - 2
    value = ctx.const(slope)
    if value is not None:
        node.input[1] = ctx.add_const(
            slope + "_per_channel", value.reshape(value.shape + (1,) * extra)
        )
        return None
    unsq = ctx.unsqueeze(slope, list(range(1, 1 + extra)), slope + "_per_channel")
    node.input[1] = unsq.output[0]
    return Out([unsq, node])


# ---- attributes that became inputs -------------------------------------------------------


@upgrades(("Clip", 6), converter_wrong=always)
def _clip_6(ctx: Ctx, node: NodeProto) -> None:
    """Clip-11 takes min/max as optional inputs of the data's type.

    onnx's adapter makes them float32 whatever the data type.
    """
    lo, hi = pop_attr(node, "min"), pop_attr(node, "max")
    x, hint = node.input[0], node.output[0]
    if lo is not None:
        set_input(node, 1, ctx.scalar_like(hint + "_min", float(lo), x))
    if hi is not None:
        set_input(node, 2, ctx.scalar_like(hint + "_max", float(hi), x))


@upgrades(("DFT", 17))
def _dft_17(ctx: Ctx, node: NodeProto) -> None:
    """DFT-20 takes the axis as input 2; DFT-17 defaulted it to 1 (20 defaults to -2)."""
    axis = pop_attr(node, "axis", 1)
    set_input(node, 2, ctx.add_const(node.output[0] + "_axis", np.array(axis, dtype=np.int64)))
