"""Neural-network ATen ops → core: convolution, pooling, normalization, softmax, resampling,
embedding and padding.

Core has no ceil_mode, no count_include_pad and no bias on its conv, so the
handlers resolve torch's conveniences into explicit numbers from the static
shapes, as the ONNX frontend does: ceil_mode becomes extra high padding,
averages a sum pool divided by counts computed at compile time (over `?`
spatial dims, at run time as a sum pool of ones), normalizations and softmax
compositions of reduce, broadcast and elementwise ops. Resampling is
separable: per spatial axis a gather of source rows and (bilinear) a
weighted sum, the tables computed here in float32 as torch's CPU kernels
compute them. Max pooling's indices have no core op: when the program uses
them they are built from one strided slice per window offset.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Attribute, SSAValue

from rung.dialects import core
from rung.dialects.dtypes import bf16, f16, f32, i64, numpy_dtype
from rung.dialects.torch import TorchOp
from rung.dialects.torch import generated_ops as aten
from rung.lowering.kit import (
    CoreBuilder,
    DimOf,
    LoweringError,
    Size,
    acc_type,
    constant_array,
    element_of,
    int_attr,
    normalize_axis,
    ranked_shape,
    static_size,
    tensor,
)

from .registry import Results, lowers
from .sym import dim_value, sizes

# ---- arguments ----------------------------------------------------------------------------


def _ints(op: TorchOp, name: str) -> list[int]:
    """An int-list argument, all of it known now (a size only the run knows is refused)."""
    value = op.arg(name)
    if value is None:
        return []
    values = value if isinstance(value, list) else [value]
    if not all(isinstance(v, int) for v in values):
        raise LoweringError(f"'{name}' is only known at run time")
    return [int(v) for v in values]  # type: ignore[arg-type]


def _int(op: TorchOp, name: str) -> int:
    value = op.arg(name)
    if not isinstance(value, int):
        raise LoweringError(f"'{name}' is only known at run time")
    return value


def _float(op: TorchOp, name: str) -> float:
    return float(op.arg(name))  # type: ignore[arg-type]


def _per_dim(values: Sequence[int], n: int, name: str, default: Sequence[int]) -> list[int]:
    """One entry per spatial dim: torch repeats a single one, and an empty list is the default."""
    if not values:
        return list(default)
    if len(values) == 1:
        return list(values) * n
    if len(values) != n:
        raise LoweringError(f"'{name}' has {len(values)} entries for {n} spatial dims")
    return list(values)


def _static_spatial(x: SSAValue, what: str) -> list[int]:
    spatial = list(ranked_shape(x)[2:])
    if any(d < 0 for d in spatial):
        raise LoweringError(f"{what} over spatial dims only the run knows")
    return spatial


# ---- shared pieces ----------------------------------------------------------------------------


def _batched(
    b: CoreBuilder, x: SSAValue, n: int, lower: Callable[[SSAValue], list[SSAValue]]
) -> list[SSAValue]:
    """`lower` applied to `x` as an `NC…` tensor of `n` spatial dims.

    torch's pools also take an unbatched `C…` input; it gets a batch of one
    and loses it again in every result.
    """
    rank = len(ranked_shape(x))
    if rank == n + 2:
        return lower(x)
    if rank != n + 1:
        raise LoweringError(f"expected an input of rank {n + 1} or {n + 2}, got {rank}")
    results = lower(b.reshape_to(x, [1, *b.dims(x)]))
    return [b.reshape_to(r, b.dims(r)[1:]) for r in results]


def _pool(
    b: CoreBuilder,
    kind: str,
    x: SSAValue,
    window: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    low: Sequence[int],
    high: Sequence[int],
    out: Sequence[int],
) -> SSAValue:
    shape = ranked_shape(x)
    pool = core.PoolOp.create(
        operands=[x],
        result_types=[tensor(element_of(x.type), [shape[0], shape[1], *out])],
        properties={
            "kind": StringAttr(kind),
            "window": core.ints(window),
            "strides": core.ints(strides),
            "dilations": core.ints(dilations),
            "pad_low": core.ints(low),
            "pad_high": core.ints(high),
        },
    )
    return b.insert(pool).results[0]


def _pad(
    b: CoreBuilder,
    x: SSAValue,
    mode: str,
    low: Sequence[int],
    high: Sequence[int],
    value: float = 0,
) -> SSAValue:
    """core.pad by static pads (negative ones crop); `?` dims stay `?`."""
    if not any(low) and not any(high):
        return x
    out = [
        d + lo + hi if d >= 0 else -1 for d, lo, hi in zip(ranked_shape(x), low, high, strict=True)
    ]
    new = core.PadOp.create(
        operands=[x, b.scalar(value, element_of(x.type))],
        result_types=[tensor(element_of(x.type), out)],
        properties={
            "mode": StringAttr(mode),
            "pad_low": core.ints(low),
            "pad_high": core.ints(high),
        },
    )
    return b.insert(new).results[0]


def _lowest(element: Attribute) -> float:
    """What max pooling pads with: -inf, or an integer type's minimum."""
    dtype = numpy_dtype(element)
    if np.issubdtype(dtype, np.integer):
        return int(np.iinfo(dtype).min)
    return -math.inf


def _unused(b: CoreBuilder, result: SSAValue, like: SSAValue) -> SSAValue:
    """A stand-in for a result nothing reads (dce removes it): zeros of its element type."""
    return b.broadcast_in_dim(b.scalar(0, element_of(result.type)), [], like)


# ---- convolution ------------------------------------------------------------------------------


@lowers(aten.AtenConvolutionOp)
def convolution(b: CoreBuilder, op: aten.AtenConvolutionOp) -> Results:
    """core.conv, or core.conv_transpose (output_padding a smaller pad_high); bias added after."""
    x, w = op.input, op.weight
    n = len(ranked_shape(w)) - 2
    if len(ranked_shape(x)) != n + 2:
        raise LoweringError(f"convolution of a rank-{len(ranked_shape(x))} input")
    strides = _per_dim(_ints(op, "stride"), n, "stride", [1] * n)
    pads = _per_dim(_ints(op, "padding"), n, "padding", [0] * n)
    dilations = _per_dim(_ints(op, "dilation"), n, "dilation", [1] * n)
    groups = _int(op, "groups")
    element = element_of(op.result.type)
    spatial, kernel = ranked_shape(x)[2:], ranked_shape(w)[2:]
    batch = ranked_shape(x)[0]
    props = {
        "strides": core.ints(strides),
        "dilations": core.ints(dilations),
        "pad_low": core.ints(pads),
        "groups": int_attr(groups),
        "acc": acc_type(element),
    }
    if op.arg("transposed"):
        extra = _per_dim(_ints(op, "output_padding"), n, "output_padding", [0] * n)
        out = [
            (d - 1) * s + dil * (k - 1) + 1 - 2 * p + e if d >= 0 and k >= 0 else -1
            for d, k, s, dil, p, e in zip(
                spatial, kernel, strides, dilations, pads, extra, strict=True
            )
        ]
        channels = ranked_shape(w)[1]
        result = tensor(element, [batch, channels * groups if channels >= 0 else -1, *out])
        props["pad_high"] = core.ints([p - e for p, e in zip(pads, extra, strict=True)])
        new = core.ConvTransposeOp.create(operands=[x, w], result_types=[result], properties=props)
    else:
        out = [
            (d + 2 * p - dil * (k - 1) - 1) // s + 1 if d >= 0 and k >= 0 else -1
            for d, k, s, dil, p in zip(spatial, kernel, strides, dilations, pads, strict=True)
        ]
        result = tensor(element, [batch, ranked_shape(w)[0], *out])
        props |= {"pad_high": core.ints(pads), "layout": StringAttr("NCHW")}
        new = core.ConvOp.create(operands=[x, w], result_types=[result], properties=props)
    y = b.insert(new).results[0]
    if op.bias is not None:
        y = b.binary("add", y, b.broadcast_in_dim(op.bias, [1], y))
    return [y]


# ---- pooling ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Windows:
    """A torch pool's windows per spatial dim, ceil_mode resolved into extra high padding.

    `out` is the output size (-1 over a `?` dim); `extra` what ceil_mode adds
    past the high pad so that core's floor-mode formula gives torch's size.
    """

    spatial: list[int]
    kernel: list[int]
    strides: list[int]
    pads: list[int]
    dilations: list[int]
    extra: list[int]
    out: list[int]

    @property
    def high(self) -> list[int]:
        return [p + e for p, e in zip(self.pads, self.extra, strict=True)]


def _windows(op: TorchOp, x: SSAValue, n: int, dilation: bool = True) -> _Windows:
    spatial = list(ranked_shape(x)[2:])
    kernel = _per_dim(_ints(op, "kernel_size"), n, "kernel_size", [])
    strides = _per_dim(_ints(op, "stride"), n, "stride", kernel)
    pads = _per_dim(_ints(op, "padding"), n, "padding", [0] * n)
    dilations = _per_dim(_ints(op, "dilation"), n, "dilation", [1] * n) if dilation else [1] * n
    ceil_mode = bool(op.arg("ceil_mode"))
    extra, out = [], []
    for d, k, s, p, dil in zip(spatial, kernel, strides, pads, dilations, strict=True):
        extent = (k - 1) * dil + 1
        if d < 0:
            # s - 1 more padding rounds the size up; torch then drops a last window
            # starting in the high pad, which no size can do once p + s <= extent.
            if ceil_mode and s > 1 and p + s > extent:
                raise LoweringError("ceil_mode along a dynamic spatial dim with this padding")
            extra.append(s - 1 if ceil_mode else 0)
            out.append(-1)
            continue
        span = d + 2 * p - extent
        size = (-(-span // s) if ceil_mode else span // s) + 1
        if ceil_mode and (size - 1) * s >= d + p:
            size -= 1  # the last window must start inside the input or the low pad
        out.append(size)
        extra.append(max(0, (size - 1) * s + extent - (d + 2 * p)))
    return _Windows(spatial, kernel, strides, pads, dilations, extra, out)


@lowers(
    aten.AtenMaxPool2dWithIndicesOp,
    aten.AtenMaxPool3dWithIndicesOp,
    aten.AtenMaxPool2dOp,
)
def max_pool(b: CoreBuilder, op: aten.AtenMaxPool2dWithIndicesOp) -> Results:
    """core.pool max; the indices, where used, as torch's flat offsets into each plane."""
    n = 3 if isinstance(op, aten.AtenMaxPool3dWithIndicesOp) else 2
    want_indices = len(op.results) == 2 and bool(op.results[1].uses)

    def lower(x: SSAValue) -> list[SSAValue]:
        w = _windows(op, x, n)
        if want_indices:
            return list(_max_with_indices(b, x, w))
        values = _pool(b, "max", x, w.kernel, w.strides, w.dilations, w.pads, w.high, w.out)
        return [values]

    results = _batched(b, op.self_, n, lower)
    if len(op.results) == 2 and not want_indices:
        results.append(_unused(b, op.results[1], results[0]))
    return results


def _max_with_indices(b: CoreBuilder, x: SSAValue, w: _Windows) -> tuple[SSAValue, SSAValue]:
    """Max and argmax of each window, scanning its offsets in torch's order.

    One strided slice of the padded input per window offset; an element
    replaces the running max when greater (ties keep the first) or NaN, as
    torch's kernel does. The padding is -inf, so it is never picked; an
    all -inf window keeps the first position inside the input, as torch's.
    """
    spatial = _static_spatial(x, "max pooling's indices")
    element = element_of(x.type)
    lowest = _lowest(element)
    padded = _pad(b, x, "constant", [0, 0, *w.pads], [0, 0, *w.high], lowest)
    plane = np.cumprod([1, *spatial[::-1]])[::-1][1:]  # flat stride of each spatial dim
    grids = np.meshgrid(*(np.arange(o) for o in w.out), indexing="ij")
    starts = [g * s - p for g, s, p in zip(grids, w.strides, w.pads, strict=True)]
    # torch starts each window's scan at its first position inside the input.
    first = [
        np.where(st < 0, st + dil * ((-st + dil - 1) // dil), st)
        for st, dil in zip(starts, w.dilations, strict=True)
    ]
    axes = list(range(2, 2 + len(spatial)))

    def flat_indices(positions: Sequence[np.ndarray], like: SSAValue) -> SSAValue:
        flat = np.zeros(w.out, np.int64)
        for p, s in zip(positions, plane, strict=True):
            flat += p * s
        return b.broadcast_in_dim(b.constant(flat), axes, like)

    def window_slice(offset: Sequence[int]) -> SSAValue:
        start = [0, 0, *(o * dil for o, dil in zip(offset, w.dilations, strict=True))]
        return b.slice(padded, start, [-1, -1, *w.out], [1, 1, *w.strides])

    offsets = list(np.ndindex(*w.kernel))
    v = window_slice(offsets[0])
    best, index = b.splat(lowest, v), flat_indices(first, v)
    for k, offset in enumerate(offsets):
        v = v if k == 0 else window_slice(offset)
        here = [st + o * dil for st, o, dil in zip(starts, offset, w.dilations, strict=True)]
        take = b.compare("gt", v, best)
        if not np.issubdtype(numpy_dtype(element), np.integer):
            take = b.binary("or", take, b.compare("ne", v, v))
        best = b.select(take, v, best)
        index = b.select(take, flat_indices(here, v), index)
    return best, index


@lowers(aten.AtenAvgPool2dOp, aten.AtenAvgPool3dOp)
def avg_pool(b: CoreBuilder, op: aten.AtenAvgPool2dOp) -> Results:
    """Sum pool divided by divisor_override, or by how many elements each window counts."""
    n = 3 if isinstance(op, aten.AtenAvgPool3dOp) else 2
    include_pad = bool(op.arg("count_include_pad"))
    divisor = op.arg("divisor_override")

    def lower(x: SSAValue) -> list[SSAValue]:
        w = _windows(op, x, n, dilation=False)
        ones = [1] * n
        total = _pool(b, "sum", x, w.kernel, w.strides, ones, w.pads, w.high, w.out)
        if divisor is not None:
            return [b.binary("div", total, b.splat(divisor, total))]
        if all(d >= 0 for d in w.spatial):
            return [_divide_by_counts(b, total, _counts(w, include_pad))]
        if not any(w.extra) and (include_pad or not any(w.pads)):
            return [b.binary("div", total, b.splat(int(np.prod(w.kernel)), total))]
        counts = _counts_at_run_time(b, x, w, include_pad)
        return [b.binary("div", total, b.broadcast_to(counts, total.type, total))]

    return _batched(b, op.self_, n, lower)


def _counts(w: _Windows, include_pad: bool) -> np.ndarray:
    """Elements each window divides by, as torch counts them (static sizes).

    With count_include_pad a window counts the padding but not what ceil_mode
    adds past it; without, only the input. Separable: the outer product of
    the per-dim counts.
    """
    result = np.ones([])
    for d, k, s, p, o in zip(w.spatial, w.kernel, w.strides, w.pads, w.out, strict=True):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, d + p)
        if not include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, d)
        result = np.multiply.outer(result, (end - start).astype(np.float64))
    return result


def _divide_by_counts(b: CoreBuilder, total: SSAValue, counts: np.ndarray) -> SSAValue:
    if np.all(counts == counts.flat[0]):
        return b.binary("div", total, b.splat(float(counts.flat[0]), total))
    rank = len(ranked_shape(total))
    c = b.constant(counts, like=total.type)
    return b.binary("div", total, b.broadcast_in_dim(c, list(range(2, rank)), total))


def _counts_at_run_time(b: CoreBuilder, x: SSAValue, w: _Windows, include_pad: bool) -> SSAValue:
    """Counts [1, 1, E…] over `?` spatial dims: a sum pool of ones over what windows count
    (the input, grown by its padding under count_include_pad)."""
    grow = [2 * p if include_pad else 0 for p in w.pads]
    dims: list[Size] = [1, 1]
    for i, d in enumerate(w.spatial):
        dims.append(DimOf(x, 2 + i) if d < 0 else d + grow[i])
    shape = b.shape_vector(dims)
    dynamic_grow = [g if d < 0 else 0 for g, d in zip(grow, w.spatial, strict=True)]
    if any(dynamic_grow):
        shape = b.binary("add", shape, b.constant(np.array([0, 0, *dynamic_grow], np.int64)))
    element = element_of(x.type)
    ones_type = tensor(element, [static_size(s) for s in dims])
    ones = b.broadcast_to(b.scalar(1, element), ones_type, shape=shape)
    n = len(w.spatial)
    low, high = ([0] * n, w.extra) if include_pad else (w.pads, w.high)
    return _pool(b, "sum", ones, w.kernel, w.strides, [1] * n, low, high, w.out)


@lowers(aten.Aten_AdaptiveAvgPool2dOp, aten.Aten_AdaptiveAvgPool3dOp, aten.AtenAdaptiveAvgPool2dOp)
def adaptive_avg_pool(b: CoreBuilder, op: aten.Aten_AdaptiveAvgPool2dOp) -> Results:
    """A mean over the whole plane (output size 1), an average pool where the output size
    divides the input's, else a product with a constant averaging matrix per spatial dim."""
    n = 3 if isinstance(op, aten.Aten_AdaptiveAvgPool3dOp) else 2
    out = _per_dim(_ints(op, "output_size"), n, "output_size", [])

    def lower(x: SSAValue) -> list[SSAValue]:
        axes = list(range(2, 2 + n))
        if out == [1] * n:
            total = b.reduce("sum", x, axes)
            mean = b.binary("div", total, b.count(x, axes, total))
            return [b.reshape_to(mean, [*b.dims(x)[:2], *out])]
        spatial = _static_spatial(x, "adaptive pooling to a size other than 1")
        if all(d % o == 0 for d, o in zip(spatial, out, strict=True)):
            window = [d // o for d, o in zip(spatial, out, strict=True)]
            zeros = [0] * n
            total = _pool(b, "sum", x, window, window, [1] * n, zeros, zeros, out)
            return [b.binary("div", total, b.splat(int(np.prod(window)), total))]
        y = x
        for i, (d, o) in enumerate(zip(spatial, out, strict=True)):
            if d != o:
                y = _average_along(b, y, 2 + i, _adaptive_matrix(d, o))
        return [y]

    return _batched(b, op.self_, n, lower)


def _adaptive_matrix(d: int, o: int) -> np.ndarray:
    """[o, d]: row i averages torch's adaptive window [floor(i*d/o), ceil((i+1)*d/o))."""
    m = np.zeros((o, d))
    for i in range(o):
        start, end = (i * d) // o, -(-((i + 1) * d) // o)
        m[i, start:end] = 1.0 / (end - start)
    return m


def _average_along(b: CoreBuilder, x: SSAValue, axis: int, m: np.ndarray) -> SSAValue:
    """`x` with dim `axis` replaced by `m @ x` along it (a matmul on a 3-D view)."""
    dims = b.dims(x)
    element = element_of(x.type)
    if axis == len(dims) - 1:
        return b.matmul(x, b.constant(m.T, like=x.type), element)
    rest = int(np.prod([static_size(d) for d in dims[axis + 1 :]]))
    view = b.reshape_to(x, [*dims[:axis], dims[axis], rest])
    y = b.matmul(b.constant(m, like=x.type), view, element)
    return b.reshape_to(y, [*dims[:axis], m.shape[0], *dims[axis + 1 :]])


# ---- normalization --------------------------------------------------------------------------


def _compute_type(element: Attribute) -> Attribute:
    """Where torch's CPU kernels accumulate statistics: float32 for 16-bit floats."""
    return f32 if element in (f16, bf16) else element


def _statistics(
    b: CoreBuilder, x: SSAValue, axes: Sequence[int], eps: float
) -> tuple[SSAValue, SSAValue, SSAValue]:
    """(x - mean, mean, 1/sqrt(var + eps)) over `axes`; the last two without those dims.

    The variance is the biased one, as torch normalizes with; a count over
    `?` dims is read at run time.
    """
    kept = [i for i in range(len(ranked_shape(x))) if i not in set(axes)]
    total = b.reduce("sum", x, axes)
    count = b.count(x, axes, total)
    mean = b.binary("div", total, count)
    centered = b.binary("sub", x, b.broadcast_in_dim(mean, kept, x))
    var = b.binary("div", b.reduce("sum", b.binary("mul", centered, centered), axes), count)
    rstd = b.unary("reciprocal", b.unary("sqrt", b.binary("add", var, b.splat(eps, var))))
    return centered, mean, rstd


def _affine(
    b: CoreBuilder, y: SSAValue, weight: SSAValue | None, bias: SSAValue | None, dims: list[int]
) -> SSAValue:
    """`y * weight + bias`, each (when present) broadcast from `dims` of y."""
    if weight is not None:
        y = b.binary("mul", y, b.broadcast_in_dim(b.cast(weight, element_of(y.type)), dims, y))
    if bias is not None:
        y = b.binary("add", y, b.broadcast_in_dim(b.cast(bias, element_of(y.type)), dims, y))
    return y


def _empty(b: CoreBuilder, result: SSAValue) -> SSAValue:
    """The empty tensor an inference batch norm gives for the statistics it does not compute."""
    shape = [max(d, 0) for d in ranked_shape(result)]
    return b.constant(np.zeros(shape, numpy_dtype(element_of(result.type))))


@lowers(aten.Aten_NativeBatchNormLegitNoTrainingOp)
def batch_norm_inference(b: CoreBuilder, op: aten.Aten_NativeBatchNormLegitNoTrainingOp) -> Results:
    """Per-channel scale and shift, folded into two constants when the statistics are."""
    x, eps = op.input, _float(op, "eps")
    element = element_of(x.type)
    params = [op.weight, op.bias, op.running_mean, op.running_var]
    arrays = [constant_array(v) if v is not None else None for v in params]
    if all(a is not None or v is None for a, v in zip(arrays, params, strict=True)):
        weight, bias, mean, var = (
            np.asarray(a, np.float64) if a is not None else np.float64(d)
            for a, d in zip(arrays, (1.0, 0.0, 0.0, 0.0), strict=True)
        )
        mul = weight / np.sqrt(var + eps)
        add = bias - mean * mul
        mul_v, add_v = b.constant(mul, like=x.type), b.constant(add, like=x.type)
    else:
        var = b.cast(op.running_var, element)
        mul_v = b.unary("reciprocal", b.unary("sqrt", b.binary("add", var, b.splat(eps, var))))
        if op.weight is not None:
            mul_v = b.binary("mul", b.cast(op.weight, element), mul_v)
        shift = b.binary("mul", b.cast(op.running_mean, element), mul_v)
        if op.bias is not None:
            add_v = b.binary("sub", b.cast(op.bias, element), shift)
        else:
            add_v = b.unary("neg", shift)
    y = b.binary("mul", x, b.broadcast_in_dim(mul_v, [1], x))
    y = b.binary("add", y, b.broadcast_in_dim(add_v, [1], x))
    return [y, _empty(b, op.results[1]), _empty(b, op.results[2])]


@lowers(aten.Aten_NativeBatchNormLegitNoStatsOp)
def batch_norm_batch_stats(b: CoreBuilder, op: aten.Aten_NativeBatchNormLegitNoStatsOp) -> Results:
    """Normalizes with the batch's own statistics (no running ones: InstanceNorm, BatchNorm
    without tracked statistics); also gives the per-channel mean and 1/std."""
    x = op.input
    compute = _compute_type(element_of(x.type))
    xs = b.cast(x, compute)
    rank = len(ranked_shape(x))
    axes = [0, *range(2, rank)]
    centered, mean, rstd = _statistics(b, xs, axes, _float(op, "eps"))
    y = b.binary("mul", centered, b.broadcast_in_dim(rstd, [1], centered))
    y = _affine(b, b.cast(y, element_of(op.results[0].type)), op.weight, op.bias, [1])
    return [
        y,
        b.cast(mean, element_of(op.results[1].type)),
        b.cast(rstd, element_of(op.results[2].type)),
    ]


@lowers(aten.AtenNativeLayerNormOp)
def layer_norm(b: CoreBuilder, op: aten.AtenNativeLayerNormOp) -> Results:
    """Normalizes over the trailing `normalized_shape` dims; mean and rstd keep them as 1."""
    x = op.input
    rank = len(ranked_shape(x))
    k = len(op.arg("normalized_shape"))  # type: ignore[arg-type]
    axes = list(range(rank - k, rank))
    xs = b.cast(x, _compute_type(element_of(x.type)))
    centered, mean, rstd = _statistics(b, xs, axes, _float(op, "eps"))
    kept = list(range(rank - k))
    y = b.binary("mul", centered, b.broadcast_in_dim(rstd, kept, centered))
    y = _affine(b, b.cast(y, element_of(op.results[0].type)), op.weight, op.bias, axes)
    keep: list[Size] = [*b.dims(x)[: rank - k], *[1] * k]
    return [
        y,
        b.cast(b.reshape_to(mean, keep), element_of(op.results[1].type)),
        b.cast(b.reshape_to(rstd, keep), element_of(op.results[2].type)),
    ]


@lowers(aten.AtenNativeGroupNormOp)
def group_norm(b: CoreBuilder, op: aten.AtenNativeGroupNormOp) -> Results:
    """Normalizes [N, G, C/G * spatial] over its last dim, then scales per channel; mean and
    rstd are [N, G]."""
    x = op.input
    groups = _int(op, "group")
    xs = b.cast(x, _compute_type(element_of(x.type)))
    grouped = _grouped(b, xs, groups)
    centered, mean, rstd = _statistics(b, grouped, [2], _float(op, "eps"))
    normed = b.binary("mul", centered, b.broadcast_in_dim(rstd, [0, 1], centered))
    y = b.reshape_to(normed, b.dims(xs))
    y = _affine(b, b.cast(y, element_of(op.results[0].type)), op.weight, op.bias, [1])
    return [
        y,
        b.cast(mean, element_of(op.results[1].type)),
        b.cast(rstd, element_of(op.results[2].type)),
    ]


def _grouped(b: CoreBuilder, x: SSAValue, groups: int) -> SSAValue:
    """`x` [N, C, …] viewed as [N, groups, C * … / groups] (its size read at run time when
    a channel or spatial dim is `?`)."""
    shape = ranked_shape(x)
    dims = b.dims(x)
    rest = shape[1:]
    if all(d >= 0 for d in rest):
        return b.reshape_to(x, [dims[0], groups, int(np.prod(rest)) // groups])
    run_time = b.shape_of(x)
    count = b.reduce("prod", b.slice(run_time, [1], [len(shape) - 1]), [0])
    size = b.binary("div", count, b.scalar(groups, i64))
    target = sizes(b, [dim_value(b, x, 0), groups, size])
    return b.reshape(x, tensor(element_of(x.type), [shape[0], groups, -1]), target)


# ---- softmax ----------------------------------------------------------------------------------


def _softmax_input(b: CoreBuilder, op: TorchOp, x: SSAValue) -> tuple[SSAValue, int]:
    """The input in the result's element type (half_to_float, dtype), and the axis."""
    x = b.cast(x, element_of(op.results[0].type))
    return x, normalize_axis(_int(op, "dim"), len(ranked_shape(x)))


@lowers(aten.Aten_SoftmaxOp, aten.AtenSoftmaxIntOp)
def softmax(b: CoreBuilder, op: aten.Aten_SoftmaxOp) -> Results:
    """exp(x - max) / sum(exp(x - max)) along `dim`."""
    return [b.softmax(*_softmax_input(b, op, op.self_))]


@lowers(aten.Aten_LogSoftmaxOp, aten.AtenLogSoftmaxIntOp)
def log_softmax(b: CoreBuilder, op: aten.Aten_LogSoftmaxOp) -> Results:
    """(x - max) - log(sum(exp(x - max))) along `dim`."""
    return [b.log_softmax(*_softmax_input(b, op, op.self_))]


# ---- resampling -------------------------------------------------------------------------------


def _upsample_plan(op: TorchOp, x: SSAValue) -> tuple[list[int], list[int], list[float | None]]:
    """(input sizes, output sizes, scales) of the spatial dims of an upsample op.

    The `.vec` overloads give output_size or scale_factors (the output is then
    floor(size * scale), and the kernels use the scale itself); the others
    give output_size and optional per-dim scales. The sizes are checked
    against the op's declared result.
    """
    spatial = _static_spatial(x, "upsampling")
    n = len(spatial)
    factors = op.arg("scale_factors") if op.SCHEMA.arg("scale_factors") else None
    scales: list[float | None] = [None] * n
    if isinstance(factors, list):
        scales = [float(f) for f in factors] * (n if len(factors) == 1 else 1)
        out = [int(d * s) for d, s in zip(spatial, scales, strict=True)]  # type: ignore[operator]
    else:
        out = _per_dim(_ints(op, "output_size"), n, "output_size", [])
        if op.SCHEMA.arg("scales_h"):
            given = [op.arg("scales_h"), op.arg("scales_w")]
            scales = [float(s) if s is not None else None for s in given]  # type: ignore[arg-type]
    declared = list(ranked_shape(op.results[0])[2:])
    if any(d >= 0 and d != o for d, o in zip(declared, out, strict=True)):
        raise LoweringError(f"output sizes {out} differ from the declared {declared}")
    return spatial, out, scales


def _source_scale(n_in: int, n_out: int, scale: float | None) -> np.float32:
    """torch's `compute_scales_value`: 1/scale when given, else in/out, in float32."""
    if scale is not None and scale > 0:
        return np.float32(1.0 / scale)
    return np.float32(n_in) / np.float32(n_out)


def _nearest_indices(n_in: int, n_out: int, scale: float | None) -> np.ndarray:
    """torch's `nearest_idx`: floor(dst * scale) in float32, capped at the last row."""
    dst = np.arange(n_out)
    if n_out == n_in:
        return dst
    if n_out == 2 * n_in:
        return dst >> 1
    src = np.floor(dst.astype(np.float32) * _source_scale(n_in, n_out, scale))
    return np.minimum(src.astype(np.int64), n_in - 1)


def _linear_taps(
    n_in: int, n_out: int, align_corners: bool, scale: float | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(i0, i1, w0, w1) of each output row, as torch's `compute_source_index_and_lambda`."""
    dst = np.arange(n_out).astype(np.float32)
    if n_out == n_in:
        idx = np.arange(n_out)
        return idx, idx, np.ones(n_out, np.float32), np.zeros(n_out, np.float32)
    if align_corners:
        ratio = np.float32(n_in - 1) / np.float32(n_out - 1) if n_out > 1 else np.float32(0)
        src = ratio * dst
    else:
        ratio = _source_scale(n_in, n_out, scale)
        src = np.maximum(ratio * (dst + np.float32(0.5)) - np.float32(0.5), np.float32(0))
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    w1 = np.clip(src - i0.astype(np.float32), 0, 1).astype(np.float32)
    i1 = i0 + (i0 < n_in - 1)
    return i0, i1, 1 - w1, w1


def _take(b: CoreBuilder, x: SSAValue, indices: np.ndarray, axis: int) -> SSAValue:
    if np.array_equal(indices, np.arange(ranked_shape(x)[axis])):
        return x
    return b.gather(x, b.constant(indices.astype(np.int64)), axis)


@lowers(aten.AtenUpsampleNearest2dVecOp, aten.AtenUpsampleNearest2dOp)
def upsample_nearest(b: CoreBuilder, op: aten.AtenUpsampleNearest2dVecOp) -> Results:
    """One gather of source rows per spatial dim."""
    x = op.arg("input") if op.SCHEMA.arg("input") else op.arg("self")
    assert isinstance(x, SSAValue)
    spatial, out, scales = _upsample_plan(op, x)
    for i, (d, o, s) in enumerate(zip(spatial, out, scales, strict=True)):
        x = _take(b, x, _nearest_indices(d, o, s), 2 + i)
    return [x]


@lowers(aten.AtenUpsampleBilinear2dVecOp, aten.AtenUpsampleBilinear2dOp)
def upsample_bilinear(b: CoreBuilder, op: aten.AtenUpsampleBilinear2dVecOp) -> Results:
    """Per spatial dim, the two source rows of each output row weighted by their lambdas."""
    x = op.arg("input") if op.SCHEMA.arg("input") else op.arg("self")
    assert isinstance(x, SSAValue)
    spatial, out, scales = _upsample_plan(op, x)
    align = bool(op.arg("align_corners"))
    for i, (d, o, s) in enumerate(zip(spatial, out, scales, strict=True)):
        axis = 2 + i
        i0, i1, w0, w1 = _linear_taps(d, o, align, s)
        low = _take(b, x, i0, axis)
        if np.array_equal(i0, i1) or not w1.any():
            x = low
            continue
        high = _take(b, x, i1, axis)
        w0_v = b.broadcast_in_dim(b.constant(w0, like=x.type), [axis], low)
        w1_v = b.broadcast_in_dim(b.constant(w1, like=x.type), [axis], high)
        x = b.binary("add", b.binary("mul", low, w0_v), b.binary("mul", high, w1_v))
    return [x]


# ---- embedding --------------------------------------------------------------------------------


@lowers(aten.AtenEmbeddingOp)
def embedding(b: CoreBuilder, op: aten.AtenEmbeddingOp) -> Results:
    """Rows of `weight` at `indices` (padding_idx only matters to the gradient).

    Indices outside [0, rows) fail the run, as they fail torch's, instead of
    reading outside the table.
    """
    weight, indices = op.weight, op.indices
    rows = ranked_shape(weight)[0]
    known = constant_array(indices)
    if known is None or rows < 0 or ((known < 0) | (known >= rows)).any():
        zero = b.splat(0, indices)
        rows_v = b.cast(dim_value(b, weight, 0), element_of(indices.type))
        size = b.broadcast_to(rows_v, indices.type, indices)
        fits = b.binary("and", b.compare("ge", indices, zero), b.compare("lt", indices, size))
        indices = b.check(indices, fits, "embedding: an index is out of range", culprit=indices)
    return [b.gather(weight, indices, 0)]


# ---- padding ----------------------------------------------------------------------------------


def _torch_pads(op: TorchOp, name: str, rank: int) -> tuple[list[object], list[object]]:
    """torch's pads (last dim first, low then high per dim) as full-rank low and high lists."""
    pads = op.arg(name)
    assert isinstance(pads, list)
    if len(pads) % 2 or len(pads) // 2 > rank:
        raise LoweringError(f"{len(pads)} pads for a rank-{rank} tensor")
    low: list[object] = [0] * rank
    high: list[object] = [0] * rank
    for i in range(len(pads) // 2):
        low[rank - 1 - i], high[rank - 1 - i] = pads[2 * i], pads[2 * i + 1]
    return low, high


def _padded(b: CoreBuilder, op: TorchOp, x: SSAValue, mode: str, value: float = 0) -> SSAValue:
    rank = len(ranked_shape(x))
    low, high = _torch_pads(op, "padding" if op.SCHEMA.arg("padding") else "pad", rank)
    if all(isinstance(p, int) for p in [*low, *high]):
        return _pad(b, x, mode, low, high, value)  # type: ignore[arg-type]
    # Pads only the run knows: core.pad's pads operand.
    new = core.PadOp.create(
        operands=[x, b.scalar(value, element_of(x.type)), sizes(b, [*low, *high])],
        result_types=[tensor(element_of(x.type), [-1] * rank)],
        properties={"mode": StringAttr(mode)},
    )
    return b.insert(new).results[0]


@lowers(aten.AtenConstantPadNdOp)
def constant_pad(b: CoreBuilder, op: aten.AtenConstantPadNdOp) -> Results:
    """core.pad constant; negative pads crop."""
    value = op.arg("value")
    assert isinstance(value, int | float)
    return [_padded(b, op, op.self_, "constant", value)]


@lowers(aten.AtenReflectionPad1dOp, aten.AtenReflectionPad2dOp, aten.AtenReflectionPad3dOp)
def reflection_pad(b: CoreBuilder, op: aten.AtenReflectionPad1dOp) -> Results:
    """core.pad reflect: mirrored about the edge, the edge itself not repeated."""
    return [_padded(b, op, op.self_, "reflect")]


@lowers(aten.AtenReplicationPad2dOp, aten.AtenReplicationPad3dOp)
def replication_pad(b: CoreBuilder, op: aten.AtenReplicationPad2dOp) -> Results:
    """core.pad edge: the edge repeated."""
    return [_padded(b, op, op.self_, "edge")]
