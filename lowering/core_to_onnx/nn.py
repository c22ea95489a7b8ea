"""Matmul, convolutions, pooling and NonMaxSuppression back to ONNX.

Core's explicit pads map onto ONNX's `pads` (all begins, then all ends);
its accumulation type, where it differs from the element type, becomes casts
around the op. Sum pooling (core's half of an average pool) is an AveragePool
over explicit pads, which counts the padding, times the window size; divided
by its counts, it is one AveragePool again. A convolution times a constant
per-channel scale and plus a per-channel bias (a batch norm after it) is one
Conv with scaled weights and its B input again.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import AnyFloat, Float64Type, IntegerType, Signedness
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from rung.dialects import core
from rung.dialects.core import ints_of
from rung.dialects.onnx import OnnxOp

from .emitter import Emitter, element, exports, shape, tensor


def _with_acc(
    e: Emitter,
    op_type: str,
    inputs: Sequence[SSAValue],
    acc: Attribute,
    out: Attribute,
    **attrs: object,
) -> SSAValue:
    """The op computed in `acc` (casting operands and result) when that is not `out`'s element."""
    elem = element(out)
    if acc == elem or not isinstance(acc, AnyFloat):
        return e.node(op_type, list(inputs), out, **attrs)
    wide = [e.cast(v, acc) for v in inputs]
    result = e.node(op_type, wide, tensor(acc, shape(out)), **attrs)
    return e.cast(result, elem)


@exports(core.MatmulOp)
def matmul(e: Emitter, op: core.MatmulOp) -> Sequence[SSAValue]:
    return [_with_acc(e, "MatMul", [op.lhs, op.rhs], op.acc, op.result.type)]


def _check_pads(e: Emitter, low: Sequence[int], high: Sequence[int]) -> None:
    if any(p < 0 for p in (*low, *high)):
        raise e.fail("negative pads (a crop) have no ONNX spelling here")


@exports(core.ConvOp)
def conv(e: Emitter, op: core.ConvOp) -> Sequence[SSAValue]:
    low, high = ints_of(op.pad_low), ints_of(op.pad_high)
    _check_pads(e, low, high)
    weight = shape(op.weight)
    kernel = list(weight[2:]) if weight is not None and all(d >= 0 for d in weight[2:]) else None
    attrs: dict[str, object] = {
        "strides": list(ints_of(op.strides)),
        "dilations": list(ints_of(op.dilations)),
        "pads": [*low, *high],
        "group": op.groups.value.data,
        "kernel_shape": kernel,
    }
    out = op.result.type
    if isinstance(element(out), IntegerType):
        return [_integer_conv(e, op.input, op.weight, out, attrs)]
    return [_with_acc(e, "Conv", [op.input, op.weight], op.acc, out, **attrs)]


def _integer_conv(
    e: Emitter, x: SSAValue, w: SSAValue, out: Attribute, attrs: dict[str, object]
) -> SSAValue:
    """ONNX convolves integers only as ConvInteger (8-bit operands, int32 result): found
    when both operands are 8-bit tensors widened (less a zero point), as ONNX
    ConvInteger lowers to core. Other integer convolutions run in float64 (exact for
    every sum below 2**53), valid ONNX though onnxruntime has no float64 Conv."""
    xs, ws = _narrow_source(x), _narrow_source(w)
    if xs is not None and ws is not None and element(out) == IntegerType(32):
        return e.node("ConvInteger", [xs[0], ws[0], xs[1], ws[1]], out, **attrs)
    wide = Float64Type()
    result = e.node("Conv", [e.cast(x, wide), e.cast(w, wide)], tensor(wide, shape(out)), **attrs)
    return e.cast(result, element(out))


def _narrow_source(value: SSAValue) -> tuple[SSAValue, SSAValue | None] | None:
    """(8-bit tensor, its zero point or None) if `value` is Cast(x8) or Cast(x8) - Cast(zp8)."""
    owner = value.owner
    zero: SSAValue | None = None
    if _is(owner, "Sub"):
        zero = _narrow_cast(_through_shape_ops(owner.operands[1]))  # type: ignore[union-attr]
        if zero is None:
            return None
        value = owner.operands[0]  # type: ignore[union-attr]
    source = _narrow_cast(value)
    if source is None or (zero is not None and element(zero) != element(source)):
        return None
    return source, zero


def _through_shape_ops(value: SSAValue) -> SSAValue:
    """What an Expand / Unsqueeze chain repeats (a zero point's broadcast)."""
    while _is(value.owner, "Expand", "Unsqueeze"):
        value = value.owner.operands[0]  # type: ignore[union-attr]
    return value


def _narrow_cast(value: SSAValue) -> SSAValue | None:
    """The 8-bit input of the Cast that made `value`, if one did."""
    owner = value.owner
    if not _is(owner, "Cast"):
        return None
    source = owner.operands[0]  # type: ignore[union-attr]
    if element(source) in (IntegerType(8), IntegerType(8, Signedness.UNSIGNED)):
        return source
    return None


def _is(owner: object, *op_types: str) -> bool:
    return isinstance(owner, OnnxOp) and owner.SCHEMA.op_type in op_types


def conv_with_bias(e: Emitter, conv: SSAValue, bias: SSAValue, out: Attribute) -> SSAValue | None:
    """Conv(x, w) + b as one Conv(x, w, b), as ONNX models spell it, when `conv` is a
    Conv without bias used only here (and by Shape ops: a dynamic broadcast reads its
    shape) and `b` holds one value per output channel, shaped [1, C, 1…] by the
    broadcast core made explicit."""
    from rung.importers.onnx.export import constant_array

    owner = conv.owner
    if not isinstance(owner, OnnxOp) or not _is(owner, "Conv") or len(owner.operands) != 2:
        return None
    shapes_only = [u.operation for u in conv.uses if u.operation is not e.op]
    if any(not _is(user, "Shape") for user in shapes_only):
        return None
    dims, channels = shape(bias), shape(conv)
    if dims is None or channels is None or out != conv.type or len(dims) != len(channels):
        return None
    if dims[1] != channels[1] or dims[1] < 0 or any(d != 1 for i, d in enumerate(dims) if i != 1):
        return None
    source = bias.owner
    if isinstance(source, OnnxOp) and _is(source, "Constant") and "value" in source.properties:
        array = constant_array(source.properties["value"], e.module)
        vector = e.const(array.reshape(-1), "bias")
    elif _is(source, "Unsqueeze") and shape(source.operands[0]) == (dims[1],) and not shapes_only:  # type: ignore[union-attr]
        vector = source.operands[0]  # type: ignore[union-attr]
    else:
        return None
    x, w = owner.operands
    fused = e.node("Conv", [x, w, vector], out, **dict(owner.properties))
    if shapes_only:
        # The Shape ops come before this add: the fused Conv (and its new bias
        # constant) take the old Conv's place, which they replace everywhere.
        for new in (vector.owner, fused.owner):
            assert isinstance(new, Operation)
            new.detach()
            Rewriter.insert_op(new, InsertPoint.before(owner))
        conv.replace_all_uses_with(fused)
    return fused


def conv_with_scale(e: Emitter, conv: SSAValue, scale: SSAValue, out: Attribute) -> SSAValue | None:
    """Conv(x, w) * s as Conv(x, w * s) when `w` and the per-output-channel `s` are
    constants (a batch norm that core left as a scale and a shift after the conv):
    the shift then joins the Conv as its bias."""
    from rung.importers.onnx.export import constant_array

    owner = conv.owner
    if not isinstance(owner, OnnxOp) or not _is(owner, "Conv") or len(owner.operands) != 2:
        return None
    if not conv.has_one_use() or out != conv.type:
        return None
    x, w = owner.operands
    dims, channels, kernel = shape(scale), shape(conv), shape(w)
    if dims is None or channels is None or kernel is None or len(dims) != len(channels):
        return None
    if dims[1] != channels[1] or dims[1] < 0 or any(d != 1 for i, d in enumerate(dims) if i != 1):
        return None
    weights, factors = w.owner, scale.owner
    if not (isinstance(weights, OnnxOp) and isinstance(factors, OnnxOp)):
        return None
    if not (_is(weights, "Constant") and _is(factors, "Constant")):
        return None
    w_array = constant_array(weights.properties["value"], e.module)
    s_array = constant_array(factors.properties["value"], e.module).reshape(-1)
    if w_array.dtype != s_array.dtype or w_array.dtype.kind != "f":
        return None
    folded = e.const(w_array * s_array.reshape((-1,) + (1,) * (w_array.ndim - 1)), "weight")
    return e.node("Conv", [x, folded], out, **dict(owner.properties))


@exports(core.ConvTransposeOp)
def conv_transpose(e: Emitter, op: core.ConvTransposeOp) -> Sequence[SSAValue]:
    """A negative pad_high is ONNX's output_padding (extra rows at the end)."""
    low, high = ints_of(op.pad_low), ints_of(op.pad_high)
    if any(p < 0 for p in low):
        raise e.fail("a negative pad_low")
    extra = [max(-p, 0) for p in high]
    ends = [max(p, 0) for p in high]
    return [
        _with_acc(
            e,
            "ConvTranspose",
            [op.input, op.weight],
            op.acc,
            op.result.type,
            strides=list(ints_of(op.strides)),
            dilations=list(ints_of(op.dilations)),
            pads=[*low, *ends],
            output_padding=extra if any(extra) else None,
            group=op.groups.value.data,
        )
    ]


@exports(core.PoolOp)
def pool(e: Emitter, op: core.PoolOp) -> Sequence[SSAValue]:
    low, high = ints_of(op.pad_low), ints_of(op.pad_high)
    _check_pads(e, low, high)
    window = list(ints_of(op.window))
    attrs: dict[str, object] = {
        "kernel_shape": window,
        "strides": list(ints_of(op.strides)),
        "dilations": list(ints_of(op.dilations)),
        "pads": [*low, *high],
    }
    out = op.result.type
    if op.kind.data == "max":
        return [e.node("MaxPool", [op.input], out, **attrs)]
    elem = element(op.input)
    if not isinstance(elem, AnyFloat):
        raise e.fail(f"sum pooling of {elem} (ONNX AveragePool takes floats)")
    # Every window lies inside the explicitly padded input (ceil mode is off), so
    # AveragePool counting the pads divides each sum by the window size exactly.
    mean = e.node("AveragePool", [op.input], out, count_include_pad=1, **attrs)
    size = e.scalar_like(float(math.prod(window)), elem)
    return [e.node("Mul", [mean, size], out)]


def average_pool(e: Emitter, total: SSAValue, count: SSAValue, out: Attribute) -> SSAValue | None:
    """A sum pool divided by its window counts as the one AveragePool ONNX models have:
    counting the padding (every count the window size) or not (the count of input
    elements in each window). Counts are constants by the time core holds them."""
    from rung.importers.onnx.export import constant_array

    mul = total.owner
    if not (isinstance(mul, OnnxOp) and _is(mul, "Mul")):
        return None
    if any(u.operation is not e.op and not _is(u.operation, "Shape") for u in total.uses):
        return None
    mean, size = mul.operands
    pool, scalar, divisor = mean.owner, size.owner, count.owner
    if not (isinstance(pool, OnnxOp) and _is(pool, "AveragePool") and mean.has_one_use()):
        return None
    if not (isinstance(scalar, OnnxOp) and isinstance(divisor, OnnxOp)):
        return None
    if not (_is(scalar, "Constant") and _is(divisor, "Constant")):
        return None
    ins, dims = shape(pool.operands[0]), shape(out)
    if ins is None or dims is None or any(d < 0 for d in (*ins[2:], *dims[2:])):
        return None
    window = constant_array(scalar.properties["value"], e.module)
    counts = constant_array(divisor.properties["value"], e.module)
    if counts.ndim > len(dims) or any(
        n not in (1, d) for n, d in zip(counts.shape[::-1], dims[::-1], strict=False)
    ):
        return None
    if counts.ndim == len(dims) and any(n != 1 for n in counts.shape[:2]):
        return None  # one count per window position, the same for every batch and channel
    attrs = {k: v for k, v in pool.properties.items() if k != "count_include_pad"}
    if np.all(counts == window):
        result = mean
    elif np.array_equal(
        np.broadcast_to(counts, (1, 1, *dims[2:]))[0, 0], _window_counts(ins[2:], attrs)
    ):
        result = e.node("AveragePool", [pool.operands[0]], out, **attrs)
        # Shape ops before this division may read the sum's shape: the mean takes the
        # sum's place, which it replaces everywhere.
        new = result.owner
        assert isinstance(new, Operation)
        new.detach()
        Rewriter.insert_op(new, InsertPoint.before(mul))
    else:
        return None
    total.replace_all_uses_with(result)
    return result


def _window_counts(spatial: Sequence[int], attrs: dict[str, Attribute]) -> np.ndarray:
    """How many input elements (not padding) each pooling window covers."""
    kernel, strides = ints_of(attrs["kernel_shape"]), ints_of(attrs["strides"])
    dilations, pads = ints_of(attrs["dilations"]), ints_of(attrs["pads"])
    rank = len(spatial)
    counts = np.ones((), dtype=np.int64)
    for d in range(rank):
        low, high = pads[d], pads[rank + d]
        extent = dilations[d] * (kernel[d] - 1) + 1
        outs = (spatial[d] + low + high - extent) // strides[d] + 1
        taps = np.arange(outs)[:, None] * strides[d] - low + np.arange(kernel[d]) * dilations[d]
        inside = ((taps >= 0) & (taps < spatial[d])).sum(axis=1)
        counts = np.multiply.outer(counts, inside)
    return counts


@exports(core.NonMaxSuppressionOp)
def non_max_suppression(e: Emitter, op: core.NonMaxSuppressionOp) -> Sequence[SSAValue]:
    inputs = [op.boxes, op.scores, op.max_output, op.iou_threshold, op.score_threshold]
    return [
        e.node(
            "NonMaxSuppression",
            inputs,
            op.result.type,
            center_point_box=op.center_point_box.value.data,
        )
    ]
