"""`core-fold-channel-scales`: a per-channel scale of a convolution's input moves onto its weights.

A squeeze-and-excite block (EfficientNet, MobileNetV3, RegNetY) ends by scaling
each channel of a feature map by a gate computed from that map, and a
convolution reads the scaled map next:

    y = conv(x * s[c], W)        with s of shape [1, C, 1, 1]

The scaling is a pass of its own over the whole map (read, multiply, write), the
GEMM behind the convolution being unable to take it in. A convolution is linear
in each input channel, and its zero padding stays zero under a scale, so

    y = conv(x, W * s[c])        W[o, c, ...] scaled along its input-channel dim

is the same result, up to the order of the rounding, for the cost of scaling
the weights: O x K per channel instead of the map's H x W. The rewrite applies
when that is cheaper, the convolution has one group, and the scale is the same
for every image of the batch (its batch and spatial dims are static 1s).
"""

from __future__ import annotations

import math

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from rung.dialects import core
from rung.dialects.dtypes import f32, f64
from rung.lowering.kit import CoreBuilder, element_of, ranked_shape


def _channel_scale(v: SSAValue, channels: int) -> SSAValue | None:
    """The `[.., C, 1, ..]` value that `v` broadcasts along every dim but the channel dim
    (dim 1), when it is such a broadcast; else None."""
    op = v.owner
    if not isinstance(op, core.BroadcastOp):
        return None
    source = ranked_shape(op.input)
    dims = list(op.dims.get_values())
    for size, dim in zip(source, dims, strict=True):
        if size != (channels if dim == 1 else 1):
            return None
    if 1 not in dims:
        return None
    return op.input


class FoldChannelScale(RewritePattern):
    """conv(x * broadcast(s), W) -> conv(x, W * s along W's input-channel dim)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: core.ConvOp, rewriter: PatternRewriter) -> None:
        mul = op.input.owner
        if op.groups.value.data != 1 or not isinstance(mul, core.BinaryOp):
            return
        if mul.fn.data != "mul" or len(list(mul.result.uses)) != 1:
            return
        if element_of(op.input.type) not in (f32, f64):
            return
        x_shape, w_shape = ranked_shape(op.input), ranked_shape(op.weight)
        if any(d < 0 for d in (*x_shape[1:], *w_shape)):
            return
        channels = x_shape[1]
        sides = (
            (_channel_scale(mul.lhs, channels), mul.rhs),
            (_channel_scale(mul.rhs, channels), mul.lhs),
        )
        found = next(((s, x) for s, x in sides if s is not None), None)
        if found is None:
            return
        scale, other = found
        per_channel_map = math.prod(x_shape[2:])
        per_channel_weights = w_shape[0] * math.prod(w_shape[2:])
        if per_channel_weights >= per_channel_map:
            return
        b = CoreBuilder(rewriter, op)
        s = b.reshape_to(scale, [channels])
        weight = b.binary("mul", op.weight, b.broadcast_in_dim(s, [1], op.weight))
        conv = core.ConvOp.create(
            operands=[other, weight],
            result_types=[op.result.type],
            properties=dict(op.properties),
        )
        b.insert(conv)
        b.replace([conv.results[0]])
        rewriter.erase_op(mul)


class FoldChannelScalesPass(ModulePass):
    """Move per-channel scales of convolution inputs onto the weights."""

    name = "core-fold-channel-scales"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FoldChannelScale(), apply_recursively=False).rewrite_module(op)


__all__ = ["FoldChannelScale", "FoldChannelScalesPass"]
