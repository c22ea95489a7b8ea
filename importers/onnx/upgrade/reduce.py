"""Upgrade rules for reductions and TopK.

Squeeze and Unsqueeze are here too: their `axes` became an input at the
same time, and by the same rule, as ReduceSum's.
"""

from __future__ import annotations

from onnx import NodeProto, TensorProto

from .context import Ctx
from .protos import FLOAT_TYPES, pop_attr, set_input
from .registry import Out, always, upgrades

_REDUCE_18 = (
    "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
    "ReduceMin", "ReduceProd", "ReduceSumSquare",
)  # fmt: skip


@upgrades(("ReduceSum", 11), ("Squeeze", 11), ("Unsqueeze", 11), *((op, 13) for op in _REDUCE_18))
def _axes_to_input(ctx: Ctx, node: NodeProto) -> None:
    """`axes` became an optional input (ReduceSum/Squeeze/Unsqueeze at 13, the rest at 18).

    Absent axes still means "all axes" (reductions) or "all size-1 dims"
    (Squeeze), so nothing is added then.
    """
    axes = pop_attr(node, "axes")
    if axes is not None and len(axes) > 0:
        set_input(node, 1, ctx.ints_input(node.output[0] + "_axes", axes))
    elif node.op_type == "Unsqueeze":
        raise ctx.error(node, 11, "it has no 'axes'")


@upgrades(("ReduceLogSum", 18), ("ReduceLogSumExp", 18), converter_wrong=always)
def _reduce_log_18(ctx: Ctx, node: NodeProto) -> Out | None:
    """Version 28 dropped integer inputs; compute in double and cast back, as before."""
    elem = ctx.elem_type(node.input[0])
    if elem is None or elem in FLOAT_TYPES:
        return None
    hint = node.output[0]
    to_double = ctx.make("Cast", [node.input[0]], hint, to=TensorProto.DOUBLE)
    node.input[0] = to_double.output[0]
    result = node.output[0]
    node.output[0] = ctx.fresh(hint + "_double")
    back = ctx.make("Cast", [node.output[0]], hint, to=elem)
    back.output[0] = result
    return Out([to_double, node, back])


@upgrades(("TopK", 1))
def _topk_1(ctx: Ctx, node: NodeProto) -> None:
    """TopK-10 takes k as a 1-element int64 input."""
    k = pop_attr(node, "k")
    if k is None:
        raise ctx.error(node, 1, "it has no 'k'")
    set_input(node, 1, ctx.ints_input(node.output[0] + "_k", [k]))
