"""Upgrade rules for tensor ops.

Attributes that became inputs (Reshape, Pad, Slice, Split, Tile), a default
that became required (Concat), and a renamed op (Scatter).
"""

from __future__ import annotations

import numpy as np
from onnx import NodeProto, TensorProto, numpy_helper

from .context import Ctx
from .history import DEFAULT
from .protos import find_attr, get_attr, input_at, ints, pop_attr, set_attr, set_input
from .registry import Out, always, upgrades


@upgrades(("Concat", 1))
def _concat_1(ctx: Ctx, node: NodeProto) -> None:
    """Concat-4 made `axis` required; Concat-1 defaulted it to 1."""
    if find_attr(node, "axis") is None:
        set_attr(node, "axis", 1)


@upgrades(("Reshape", 1))
def _reshape_1(ctx: Ctx, node: NodeProto) -> None:
    """Reshape-5 takes the shape as an input."""
    pop_attr(node, "consumed_inputs")
    shape = pop_attr(node, "shape")
    if shape is None:
        raise ctx.error(node, 1, "it has no 'shape' attribute")
    set_input(node, 1, ctx.ints_input(node.output[0] + "_shape", shape))


@upgrades(("Pad", 1), converter_wrong=always)
def _pad_1(ctx: Ctx, node: NodeProto) -> None:
    """Pad-2 renamed `paddings` to `pads` (same layout)."""
    paddings = pop_attr(node, "paddings")
    if paddings is not None:
        set_attr(node, "pads", ints(paddings))


@upgrades(("Pad", 2), converter_wrong=always)
def _pad_2(ctx: Ctx, node: NodeProto) -> None:
    """Pad-11 takes pads and the fill value as inputs.

    onnx's adapter always makes the fill value float32, which is invalid for
    any other data type; here it gets the data's type.
    """
    pads = pop_attr(node, "pads")
    value = float(pop_attr(node, "value", 0.0))
    if pads is None:
        raise ctx.error(node, 2, "it has no 'pads' attribute")
    set_input(node, 1, ctx.ints_input(node.output[0] + "_pads", pads))
    if get_attr(node, "mode", "constant") == "constant" and value != 0.0:
        set_input(node, 2, ctx.scalar_like(node.output[0] + "_value", value, node.input[0]))


@upgrades(("Slice", 1))
def _slice_1(ctx: Ctx, node: NodeProto) -> None:
    """Slice-10 takes starts/ends/axes as inputs."""
    hint = node.output[0]
    starts, ends, axes = pop_attr(node, "starts"), pop_attr(node, "ends"), pop_attr(node, "axes")
    if starts is None or ends is None:
        raise ctx.error(node, 1, "it lacks 'starts' or 'ends'")
    set_input(node, 1, ctx.ints_input(hint + "_starts", starts))
    set_input(node, 2, ctx.ints_input(hint + "_ends", ends))
    if axes is not None:
        set_input(node, 3, ctx.ints_input(hint + "_axes", axes))


@upgrades(("Split", 1), converter_wrong=always)
def _split_1(ctx: Ctx, node: NodeProto) -> Out | None:
    """Split-1 could take the sizes as a second input; Split-2 only as an attribute."""
    sizes = input_at(node, 1)
    if not sizes:
        return None
    value = ctx.const(sizes)
    if value is not None:
        set_input(node, 1, "")
        set_attr(node, "split", ints(value.reshape(-1)))
        return None
    if ctx.targets[DEFAULT] >= 13:
        return Out([node], version=13)  # Split-13 takes the sizes as an input again
    raise ctx.error(node, 1, "its split sizes are computed at run time; upgrade to opset 13+")


@upgrades(("Split", 11))
def _split_11(ctx: Ctx, node: NodeProto) -> None:
    """Split-13 takes the sizes as an input."""
    split = pop_attr(node, "split")
    if split is not None:
        set_input(node, 1, ctx.ints_input(node.output[0] + "_split", split))


@upgrades(("Split", 13))
def _split_13(ctx: Ctx, node: NodeProto) -> None:
    """Split-18 wants `num_outputs` when no sizes are given (it used to count outputs)."""
    if not input_at(node, 1) and find_attr(node, "num_outputs") is None:
        set_attr(node, "num_outputs", len(node.output))


@upgrades(("Tile", 1), converter_wrong=always)
def _tile_1(ctx: Ctx, node: NodeProto) -> Out | None:
    """Tile-1 repeated along one `axis` `tiles` times; Tile-6 takes a repeat per dim."""
    x, tiles, axis = node.input[0], node.input[1], node.input[2]
    hint = node.output[0] + "_repeats"
    tiles_v, axis_v, rank = ctx.const(tiles), ctx.const(axis), ctx.rank(x)
    if tiles_v is not None and axis_v is not None and rank is not None:
        repeats = np.ones(rank, dtype=np.int64)
        repeats[int(axis_v.reshape(-1)[0])] = int(tiles_v.reshape(-1)[0])
        del node.input[1:]
        node.input.append(ctx.add_const(hint, repeats))
        return None
    # Run time: ones(rank(x)) with `tiles` scattered in at `axis`.
    flat = ctx.ints_input(hint + "_flat", [1])
    shape = ctx.make("Shape", [x], hint)
    rank_node = ctx.make("Shape", [shape.output[0]], hint + "_rank")
    ones = ctx.make(
        "ConstantOfShape", [rank_node.output[0]], hint,
        value=numpy_helper.from_array(np.array([1], dtype=np.int64)),
    )  # fmt: skip
    axis_i = ctx.make("Cast", [axis], hint + "_axis", to=TensorProto.INT64)
    axis_1 = ctx.make("Reshape", [axis_i.output[0], flat], hint + "_axis")
    tiles_i = ctx.make("Cast", [tiles], hint + "_tiles", to=TensorProto.INT64)
    tiles_1 = ctx.make("Reshape", [tiles_i.output[0], flat], hint + "_tiles")
    repeats = ctx.make(
        "ScatterElements", [ones.output[0], axis_1.output[0], tiles_1.output[0]], hint
    )
    del node.input[1:]
    node.input.append(repeats.output[0])
    return Out([shape, rank_node, ones, axis_i, axis_1, tiles_i, tiles_1, repeats, node])


@upgrades(("Scatter", 9), ("Scatter", 11))
def _scatter(ctx: Ctx, node: NodeProto) -> Out:
    """Scatter was renamed ScatterElements (same semantics) in opset 11."""
    node.op_type = "ScatterElements"
    return Out([node], version=11)
