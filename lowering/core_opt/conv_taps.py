"""`core-prune-conv-taps`: a convolution stops multiplying weights by its zero padding.

Atrous (dilated) convolutions are built for large feature maps, but models run
them on small ones: DeepLabV3's ASPP head applies 3x3 convolutions with dilation
12, 24 and 36 to a 14x14 map at 224x224 input. With dilation 24 every tap but the
centre reads padding at every output position, and with dilation 12 the off-centre
taps reach real pixels only along a 2-pixel border. An im2col GEMM computes all
nine taps everywhere: 5x the work the convolution needs, in the heaviest op of
the model.

The valid output positions of each tap are a box (one interval per spatial
axis), computable at compile time from static spatial sizes. So, for a
`core.conv` with static spatial dims and constant weights:

* taps that never touch the input, at either end of an axis, are dropped,
  and the padding shrinks by what they spanned: the same result, from a
  smaller kernel (dilation 24 on 14x14 becomes a 1x1 convolution);
* if the remaining taps still spend most of their work on padding (less than
  half of the tap-by-output pairs read the input), and each group has more than
  one input channel (a GEMM, not a depthwise window sum), the convolution
  becomes one 1x1 convolution per tap over the input window that tap reads,
  each padded with zeros to the output's size and summed.

Both rewrites are exact up to the order of the floating-point sum.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from rung.dialects import core
from rung.lowering.kit import CoreBuilder, constant_array, element_of, ranked_shape, tensor

SPLIT_DENSITY = 0.5
"""Split a convolution into per-tap 1x1 convolutions when fewer than this share of
its tap-by-output pairs read the input."""

SPLIT_MIN_SAVING = 1 << 20
"""...and when that saves at least this many multiply-adds: on small convolutions
the extra ops cost more than the padding's work."""


@dataclass(frozen=True)
class Axis:
    """One spatial axis of a convolution: where each tap reads the input."""

    size: int
    kernel: int
    stride: int
    dilation: int
    low: int
    high: int

    @property
    def out(self) -> int:
        return (self.size + self.low + self.high - self.dilation * (self.kernel - 1) - 1) // (
            self.stride
        ) + 1

    def box(self, tap: int) -> tuple[int, int]:
        """The outputs [lo, hi) at which `tap` reads inside the input (lo == hi: none)."""
        offset = tap * self.dilation - self.low
        lo = min(max(0, _ceil_div(-offset, self.stride)), self.out)
        hi = min(self.out, (self.size - 1 - offset) // self.stride + 1)
        return lo, max(lo, hi)

    def reads(self, tap: int) -> int:
        lo, hi = self.box(tap)
        return hi - lo


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _axes(op: core.ConvOp) -> list[Axis] | None:
    """The spatial axes, if the input's spatial sizes and the kernel are static."""
    x, w = ranked_shape(op.input), ranked_shape(op.weight)
    spatial = x[2:]
    if any(d < 0 for d in spatial) or any(k < 0 for k in w[2:]):
        return None
    return [
        Axis(d, k, s, dil, lo, hi)
        for d, k, s, dil, lo, hi in zip(
            spatial,
            w[2:],
            core.ints_of(op.strides),
            core.ints_of(op.dilations),
            core.ints_of(op.pad_low),
            core.ints_of(op.pad_high),
            strict=True,
        )
    ]


def _trimmed(axis: Axis) -> tuple[int, int] | None:
    """The first and last taps that read the input, if dropping the others keeps the
    padding non-negative; None if no tap does (every output is 0)."""
    live = [k for k in range(axis.kernel) if axis.reads(k) > 0]
    if not live:
        return None
    first, last = live[0], live[-1]
    if (
        axis.low - first * axis.dilation < 0
        or axis.high - (axis.kernel - 1 - last) * axis.dilation < 0
    ):
        return 0, axis.kernel - 1
    return first, last


def _conv(
    b: CoreBuilder,
    op: core.ConvOp,
    x: SSAValue,
    weights: np.ndarray,
    axes: list[Axis],
) -> SSAValue:
    """A copy of `op` on `x` with these weights and axes (the same groups and types)."""
    n, o = ranked_shape(op.result)[:2]
    result = tensor(element_of(op.result.type), [n, o, *(a.out for a in axes)])
    new = core.ConvOp.create(
        operands=[x, b.constant(weights)],
        result_types=[result],
        properties={
            **op.properties,
            "strides": core.ints([a.stride for a in axes]),
            "dilations": core.ints([a.dilation for a in axes]),
            "pad_low": core.ints([a.low for a in axes]),
            "pad_high": core.ints([a.high for a in axes]),
        },
    )
    return b.insert(new).results[0]


def _split(b: CoreBuilder, op: core.ConvOp, weights: np.ndarray, axes: list[Axis]) -> SSAValue:
    """The sum of one 1x1 convolution per tap over the window it reads, zero-padded."""
    out = [a.out for a in axes]
    element = element_of(op.result.type)
    taps = [
        (taps, [a.box(k) for a, k in zip(axes, taps, strict=True)])
        for taps in product(*(range(a.kernel) for a in axes))
    ]
    taps = [(t, boxes) for t, boxes in taps if all(hi > lo for lo, hi in boxes)]
    taps.sort(key=lambda item: -int(np.prod([hi - lo for lo, hi in item[1]])))
    zero = b.scalar(0, element)
    total: SSAValue | None = None
    for tap, boxes in taps:
        start = [
            lo * a.stride + k * a.dilation - a.low
            for a, k, (lo, _) in zip(axes, tap, boxes, strict=True)
        ]
        sizes = [hi - lo for lo, hi in boxes]
        window = b.slice(
            op.input,
            [0, 0, *start],
            [-1, -1, *sizes],
            [1, 1, *(a.stride for a in axes)],
        )
        index = (slice(None), slice(None), *(slice(k, k + 1) for k in tap))
        part = _conv(
            b,
            op,
            window,
            np.ascontiguousarray(weights[index]),
            [Axis(s, 1, 1, 1, 0, 0) for s in sizes],
        )
        if sizes != out:
            n, o = ranked_shape(op.result)[:2]
            pad = core.PadOp.create(
                operands=[part, zero],
                result_types=[tensor(element, [n, o, *out])],
                properties={
                    "mode": StringAttr("constant"),
                    "pad_low": core.ints([0, 0, *(lo for lo, _ in boxes)]),
                    "pad_high": core.ints(
                        [0, 0, *(m - hi for m, (_, hi) in zip(out, boxes, strict=True))]
                    ),
                },
            )
            part = b.insert(pad).results[0]
        total = part if total is None else b.binary("add", total, part)
    assert total is not None
    return total


@dataclass
class PruneConvTaps(RewritePattern):
    """Drop the taps of a convolution that read only padding; split a mostly-padding one."""

    min_saving: int = SPLIT_MIN_SAVING

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: core.ConvOp, rewriter: PatternRewriter) -> None:
        axes = _axes(op)
        weights = constant_array(op.weight) if axes else None
        if axes is None or weights is None:
            return
        ends = [_trimmed(a) for a in axes]
        if any(e is None for e in ends):
            return
        b = CoreBuilder(rewriter, op)
        trimmed = [
            Axis(
                a.size,
                last - first + 1,
                a.stride,
                a.dilation,
                a.low - first * a.dilation,
                a.high - (a.kernel - 1 - last) * a.dilation,
            )
            for a, (first, last) in zip(axes, ends, strict=True)  # type: ignore[misc]
        ]
        index = (slice(None), slice(None), *(slice(first, last + 1) for first, last in ends))  # type: ignore[misc]
        weights = weights[index]
        if _worth_splitting(op, trimmed, self.min_saving):
            b.replace([_split(b, op, weights, trimmed)])
        elif trimmed != axes:
            b.replace([_conv(b, op, op.input, np.ascontiguousarray(weights), trimmed)])


def _worth_splitting(op: core.ConvOp, axes: list[Axis], min_saving: int) -> bool:
    """Most tap-by-output pairs read padding, the saving is large, and it is a GEMM."""
    w = ranked_shape(op.weight)
    if w[1] <= 1 or any(d < 0 for d in w[:2]):
        return False
    pairs = int(np.prod([a.kernel * a.out for a in axes]))
    reading = int(np.prod([sum(a.reads(k) for k in range(a.kernel)) for a in axes]))
    saving = (pairs - reading) * w[0] * w[1]
    return reading < SPLIT_DENSITY * pairs and saving >= min_saving


@dataclass(frozen=True)
class PruneConvTapsPass(ModulePass):
    """Drop convolution taps that read only padding; split convolutions that mostly do."""

    name = "core-prune-conv-taps"

    min_saving: int = SPLIT_MIN_SAVING
    """Split only when it saves at least this many multiply-adds."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pattern = PruneConvTaps(self.min_saving)
        PatternRewriteWalker(pattern, apply_recursively=False).rewrite_module(op)


__all__ = ["Axis", "PruneConvTaps", "PruneConvTapsPass"]
