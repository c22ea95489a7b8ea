"""Matmul, convolution and pooling: the core ops that sum products or windows.

Each accumulates in its `acc` type (matmul, conv) or the element type (sum
pooling), widened to f32 for f16/bf16 as the kernel level does, and converts
to the result type once at the end. Convolution and pooling go through
explicit sliding windows: slow, but each line restates the definition.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from rung.dialects import core

from .interpreter import (
    Args,
    Scope,
    Value,
    accumulator,
    evaluates,
    ints,
    lowest,
    result_dtype,
)


@evaluates(core.MatmulOp)
def matmul(ev: Scope, op: core.MatmulOp, args: Args) -> list[Value]:
    acc = accumulator(op.acc)
    out = np.matmul(np.asarray(args[0]).astype(acc), np.asarray(args[1]).astype(acc))
    return [out.astype(result_dtype(op.result))]


@evaluates(core.ConvOp)
def conv_op(ev: Scope, op: core.ConvOp, args: Args) -> list[Value]:
    return [_convolve(op, args, conv)]


@evaluates(core.ConvTransposeOp)
def conv_transpose_op(ev: Scope, op: core.ConvTransposeOp, args: Args) -> list[Value]:
    return [_convolve(op, args, conv_transpose)]


def _convolve(
    op: core.ConvOp | core.ConvTransposeOp, args: Args, fn: Callable[..., np.ndarray]
) -> np.ndarray:
    """core.conv and core.conv_transpose: accumulate in `acc`, then convert."""
    acc = accumulator(op.acc)
    return fn(
        np.asarray(args[0]).astype(acc),
        np.asarray(args[1]).astype(acc),
        ints(op.strides),
        ints(op.dilations),
        ints(op.pad_low),
        ints(op.pad_high),
        op.groups.value.data,
    ).astype(result_dtype(op.result))


@evaluates(core.PoolOp)
def pool(ev: Scope, op: core.PoolOp, args: Args) -> list[Value]:
    """The max or the sum of each window; padding counts as -inf (max) or 0 (sum)."""
    x = np.asarray(args[0])
    if op.kind.data == "max":
        fill = lowest(x.dtype).item()
        work = x
    else:
        fill = 0
        work = x.astype(accumulator(op.input.type.element_type))  # type: ignore[attr-defined]
    window = ints(op.window)
    windows = _windows(
        work,
        window,
        ints(op.strides),
        ints(op.dilations),
        ints(op.pad_low),
        ints(op.pad_high),
        fill,
    )
    axes = tuple(range(-len(window), 0))
    out = windows.max(axis=axes) if op.kind.data == "max" else windows.sum(axis=axes)
    return [out.astype(x.dtype)]


def _windows(
    x: np.ndarray,
    window: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    pad_low: Sequence[int],
    pad_high: Sequence[int],
    fill: float,
) -> np.ndarray:
    """Sliding windows over the trailing spatial dims: [N, C, out…, window…]."""
    spatial = len(window)
    widths = [(0, 0)] * (x.ndim - spatial) + list(zip(pad_low, pad_high, strict=True))
    padded = np.pad(x, [(max(a, 0), max(b, 0)) for a, b in widths], constant_values=fill)
    crop = tuple(slice(max(-a, 0), padded.shape[i] - max(-b, 0)) for i, (a, b) in enumerate(widths))
    padded = padded[crop]
    extent = [(k - 1) * d + 1 for k, d in zip(window, dilations, strict=True)]
    view = np.lib.stride_tricks.sliding_window_view(
        padded, extent, axis=tuple(range(x.ndim - spatial, x.ndim))
    )
    index = (Ellipsis,) + tuple(slice(None, None, s) for s in strides)
    view = view[(slice(None),) * (x.ndim - spatial) + index[1:] + (slice(None),) * spatial]
    dilate = (Ellipsis,) + tuple(slice(None, None, d) for d in dilations)
    return view[dilate]


def conv(
    x: np.ndarray,
    w: np.ndarray,
    strides: Sequence[int],
    dilations: Sequence[int],
    pad_low: Sequence[int],
    pad_high: Sequence[int],
    groups: int,
) -> np.ndarray:
    """Grouped N-d convolution by explicit windows and a tensordot per group."""
    spatial = x.ndim - 2
    windows = _windows(x, w.shape[2:], strides, dilations, pad_low, pad_high, 0)
    # windows: [N, C, out…, k…]
    cin = x.shape[1] // groups
    cout = w.shape[0] // groups
    outs = []
    for g in range(groups):
        xg = windows[:, g * cin : (g + 1) * cin]
        wg = w[g * cout : (g + 1) * cout]
        # contract C and k… : xg [N, C, out…, k…], wg [O, C, k…]
        x_axes = [1, *range(2 + spatial, 2 + 2 * spatial)]
        w_axes = [1, *range(2, 2 + spatial)]
        y = np.tensordot(xg, wg, axes=(x_axes, w_axes))  # [N, out…, O]
        outs.append(np.moveaxis(y, -1, 1))
    return np.concatenate(outs, axis=1)


def conv_transpose(
    x: np.ndarray,
    w: np.ndarray,
    strides: Sequence[int],
    dilations: Sequence[int],
    pad_low: Sequence[int],
    pad_high: Sequence[int],
    groups: int,
) -> np.ndarray:
    """Transposed convolution by scattering each input pixel's contribution."""
    n, c = x.shape[:2]
    spatial = x.ndim - 2
    cin = c // groups
    cout = w.shape[1]
    kernel = w.shape[2:]
    full = [
        (x.shape[2 + i] - 1) * strides[i] + dilations[i] * (kernel[i] - 1) + 1
        for i in range(spatial)
    ]
    out = np.zeros((n, cout * groups, *full), dtype=x.dtype)
    for g in range(groups):
        xg = x[:, g * cin : (g + 1) * cin]
        wg = w[g * cin : (g + 1) * cin]  # [C, O, k…]
        for pos in np.ndindex(*x.shape[2:]):
            contrib = np.tensordot(xg[(slice(None), slice(None), *pos)], wg, axes=([1], [0]))
            # contrib: [N, O, k…]
            index = tuple(
                slice(
                    pos[i] * strides[i],
                    pos[i] * strides[i] + dilations[i] * (kernel[i] - 1) + 1,
                    dilations[i],
                )
                for i in range(spatial)
            )
            out[(slice(None), slice(g * cout, (g + 1) * cout), *index)] += contrib
    crop = tuple(slice(pad_low[i], full[i] - pad_high[i]) for i in range(spatial))
    result = out[(slice(None), slice(None), *crop)]
    # Negative pad_high (output padding) extends with zeros.
    extra = [(0, 0), (0, 0)] + [(0, max(-pad_high[i], 0)) for i in range(spatial)]
    return np.pad(result, extra)


__all__ = ["conv", "conv_transpose"]
