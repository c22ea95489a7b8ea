"""CausalConvWithState → core: a depthwise causal convolution carrying its past.

The input [B, C, L] is left-padded along its length with the past state, or
with K - 1 zeros when there is none (K the kernel size, weight [C, 1, K]).
Output position t is the padded window [t, t + K) of each channel times that
channel's kernel (plus its bias, then SiLU if asked); present_state is the
padded input's last K - 1 positions, those from L on.

ONNX's function body for the op is a Conv whose `group` is the channel count,
so ONNX builds it only for a static count. Here a static count gives the same
grouped `core.conv`; a count only the run knows takes the windows with one
`core.gather` (indices t + k, shaped [L, K]) and sums them against the
kernels in a batched `core.matmul` ([B, C, L, K] × [B, C, K, 1]), which, as the
conv, sums the products in the accumulator type. Batch, length and kernel
size may be `?` either way. Sizes that contradict each other (a weight or
bias for another channel count, a past state not K - 1 long) are refused when
static and fail the run, naming the node, when only the run knows them.

    %pad = core.pad constant(%x, %zero) {pad_low = [0, 0, 3], pad_high = [0, 0, 0]}
    %y   = core.conv(%pad, %w) {groups = 4, ...}
    %s   = core.slice(%pad) {start = [0, 0, 8], ...}
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import SSAValue

from rung.dialects import core
from rung.dialects.dtypes import f32
from rung.dialects.onnx import generated_ops as onnx
from rung.lowering.kit import (
    CoreBuilder,
    DimOf,
    LoweringError,
    Size,
    acc_type,
    declared,
    element_of,
    int_attr,
    iota,
    ranked_shape,
    static_size,
    tensor,
)

from .registry import Results, lowers

ACTIVATIONS = ("none", "silu", "swish")
"""The op's `activation` values; `swish` is another name for `silu`."""


@lowers(onnx.CausalConvWithStateOp)
def causal_conv_with_state(b: CoreBuilder, op: onnx.CausalConvWithStateOp) -> Results:
    """(output, present_state), lowered here rather than through ONNX's function body,
    which exists only for a static channel count."""
    activation = str(op.attr("activation"))
    if activation not in ACTIVATIONS:
        raise LoweringError(f"activation '{activation}' is not one of {', '.join(ACTIVATIONS)}")
    x = op.input
    _check_ranks(x=x, weight=op.weight, bias=op.bias, past_state=op.past_state)
    w = _checked_weight(b, op.weight, x)
    padded = _padded(b, x, w, op.past_state)
    y = _depthwise(b, padded, w, x)
    if op.bias is not None:
        bias = _agreeing(b, op.bias, b.dims(op.bias), [b.dims(x)[1]], "bias is not [channels]")
        y = b.binary("add", y, b.broadcast_in_dim(bias, [1], like=y))
    if activation != "none":
        y = _silu(b, y)
    state = _last_positions(b, padded, x)
    return [
        declared(b, y, op.output.type, "CausalConvWithState output"),
        declared(b, state, op.present_state.type, "CausalConvWithState present_state"),
    ]


# ---- sizes -------------------------------------------------------------------------------------


def _check_ranks(**values: SSAValue | None) -> None:
    """Every operand is [B, C, ·] but the bias, [C]; other ranks are malformed models."""
    for name, v in values.items():
        if v is None:
            continue
        want = 1 if name == "bias" else 3
        if len(ranked_shape(v)) != want:
            raise LoweringError(f"{name} must have rank {want}, not {len(ranked_shape(v))}")


def _same(a: Size, b: Size) -> bool:
    """Whether two sizes are one for certain: equal numbers, or one dim of one value."""
    if isinstance(a, DimOf) and isinstance(b, DimOf):
        return a.value is b.value and a.axis == b.axis
    return isinstance(a, int) and isinstance(b, int) and a == b


def _agreeing(
    b: CoreBuilder,
    v: SSAValue,
    got: Sequence[Size],
    want: Sequence[Size],
    message: str,
    plus: Sequence[int] | None = None,
) -> SSAValue:
    """`v`, once each size `got[i] + plus[i]` equals `want[i]`.

    Static sizes are compared now (a mismatch is a `LoweringError`); the others
    at run time, where a mismatch fails the run before `v` is used.
    """
    plus = [0] * len(got) if plus is None else plus
    pending: list[tuple[Size, Size, int]] = []
    for g, w, p in zip(got, want, plus, strict=True):
        sg, sw = static_size(g), static_size(w)
        if sg >= 0 and sw >= 0:
            if sg + p != sw:
                raise LoweringError(f"{message}: a size is {sg}, expected {sw - p}")
        elif not (p == 0 and _same(g, w)):
            pending.append((g, w, p))
    if not pending:
        return v
    actual = b.shape_vector([g for g, _, _ in pending])
    if any(p for _, _, p in pending):
        offsets = b.constant(np.array([p for _, _, p in pending], np.int64))
        actual = b.binary("add", actual, offsets)
    same = b.compare("eq", actual, b.shape_vector([w for _, w, _ in pending]))
    return b.check(v, same, message)


def _checked_weight(b: CoreBuilder, w: SSAValue, x: SSAValue) -> SSAValue:
    """The weight, [C, 1, K] with C the input's channel count and K at least 1."""
    channels, one, k = b.dims(w)
    w = _agreeing(b, w, [channels, one], [b.dims(x)[1], 1], "weight is not [channels, 1, K]")
    if isinstance(k, int):
        if k < 1:
            raise LoweringError("weight has a kernel size of 0")
        return w
    positive = b.compare("ge", b.shape_vector([k]), b.constant(np.array([1], np.int64)))
    return b.check(w, positive, "weight has a kernel size of 0")


# ---- the convolution ---------------------------------------------------------------------------


def _padded(b: CoreBuilder, x: SSAValue, w: SSAValue, past: SSAValue | None) -> SSAValue:
    """The input after its past: [B, C, L + K - 1], the past state or K - 1 zeros first."""
    batch, channels, length = b.dims(x)
    k = b.dims(w)[2]
    if past is not None:
        past = _agreeing(
            b,
            past,
            b.dims(past),
            [batch, channels, k],
            "past_state is not [batch, channels, K - 1]",
            plus=[0, 0, 1],
        )
        return b.concat([past, x], 2)
    element = element_of(x.type)
    zero = b.scalar(0, element)
    static_length = static_size(length) + static_size(k) - 1
    if isinstance(length, DimOf) or isinstance(k, DimOf):
        static_length = -1
    result = tensor(element, [static_size(batch), static_size(channels), static_length])
    if isinstance(k, int):
        operands = [x, zero]
        props = {"pad_low": core.ints([0, 0, k - 1]), "pad_high": core.ints([0, 0, 0])}
    else:
        low_high = b.shape_vector([0, 0, k, 0, 0, 0])
        pads = b.binary("sub", low_high, b.constant(np.array([0, 0, 1, 0, 0, 0], np.int64)))
        operands, props = [x, zero, pads], {}
    new = core.PadOp.create(
        operands=operands,
        result_types=[result],
        properties={"mode": StringAttr("constant"), **props},
    )
    return b.insert(new).results[0]


def _depthwise(b: CoreBuilder, padded: SSAValue, w: SSAValue, x: SSAValue) -> SSAValue:
    """Each channel of the padded input convolved (valid) with its own kernel: [B, C, L].

    A channel count known now is the `groups` of a `core.conv`; one only the run
    knows cannot be, so the windows are gathered and contracted instead.
    """
    channels = next((c for c in (ranked_shape(x)[1], ranked_shape(w)[0]) if c >= 0), None)
    if channels is None:
        return _windowed(b, padded, w, x)
    element = element_of(x.type)
    padded_length, k = ranked_shape(padded)[2], ranked_shape(w)[2]
    length = padded_length - k + 1 if padded_length >= 0 and k >= 0 else -1
    conv = core.ConvOp.create(
        operands=[padded, w],
        result_types=[tensor(element, [ranked_shape(padded)[0], channels, length])],
        properties={
            "strides": core.ints([1]),
            "dilations": core.ints([1]),
            "pad_low": core.ints([0]),
            "pad_high": core.ints([0]),
            "groups": int_attr(channels),
            "layout": StringAttr("NCHW"),
            "acc": acc_type(element),
        },
    )
    return b.insert(conv).results[0]


def _windowed(b: CoreBuilder, padded: SSAValue, w: SSAValue, x: SSAValue) -> SSAValue:
    """The depthwise conv as gathered windows [B, C, L, K] times the kernels [B, C, K, 1]."""
    length, k = b.dims(x)[2], b.dims(w)[2]
    starts = iota(b, [length, k], 0)
    offsets = iota(b, [length, k], 1)
    windows = b.gather(padded, b.binary("add", starts, offsets), 2)
    element = element_of(x.type)
    batch, channels = b.dims(padded)[:2]
    kernels = b.reshape_to(w, [b.dims(w)[0], k, 1])
    target = tensor(element, [static_size(batch), static_size(channels), static_size(k), 1])
    kernels = b.broadcast_to(kernels, target, shape=b.shape_vector([batch, channels, k, 1]))
    out = [static_size(batch), static_size(channels), static_size(length), 1]
    product = core.MatmulOp.create(
        operands=[windows, kernels],
        result_types=[tensor(element, out)],
        properties={"acc": acc_type(element)},
    )
    value = b.insert(product).results[0]
    return b.reshape_to(value, [batch, channels, length])


def _silu(b: CoreBuilder, y: SSAValue) -> SSAValue:
    """`y · sigmoid(y)` in f32, as the reference computes it for every element type."""
    element = element_of(y.type)
    wide = b.cast(y, f32)
    return b.cast(b.binary("mul", wide, b.unary("sigmoid", wide)), element)


def _last_positions(b: CoreBuilder, padded: SSAValue, x: SSAValue) -> SSAValue:
    """present_state: the padded input from position L (the input's length) to its end."""
    shape = ranked_shape(padded)
    length = ranked_shape(x)[2]
    if all(d >= 0 for d in shape) and length >= 0:
        return b.slice(padded, [0, 0, length], [-1, -1, shape[2] - length])
    start = b.shape_vector([0, 0, b.dims(x)[2]])
    sizes = b.binary("sub", b.shape_of(padded), start)
    state_length = shape[2] - length if shape[2] >= 0 and length >= 0 else -1
    new = core.SliceOp.create(
        operands=[padded, start, sizes, b.constant(np.ones(3, np.int64))],
        result_types=[tensor(element_of(padded.type), [shape[0], shape[1], state_length])],
    )
    return b.insert(new).results[0]


__all__ = ["ACTIVATIONS", "causal_conv_with_state"]
