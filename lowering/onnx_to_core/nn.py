"""Neural-network ONNX ops → core: matmul/Gemm, convolutions, pooling, normalizations, softmax.

Core has no implicit broadcasting, no auto_pad and no ceil_mode, so every
such convenience of ONNX is resolved here into explicit numbers from the
static shapes: batch dims are broadcast before `core.matmul` (by
`CoreBuilder.matmul`), `auto_pad` and `ceil_mode` become `pad_low`/`pad_high`,
averages become a sum pool divided by a count computed at compile time
(or, over `?` spatial dims, at run time as a sum pool of ones).
Normalizations and softmax are compositions of reduce, broadcast and
elementwise ops (fusion recovers the speed later). Dynamic dims are carried
along (conv and pooling outputs are sized at run time from `?` spatial dims);
where a pad depends on a `?` size (auto_pad SAME with a stride, ceil_mode,
ConvTranspose's output_shape), it is computed at run time and applied by a
`core.pad` with a pads operand, around a conv or pool without pads.
"""

from __future__ import annotations

import math as pymath
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Attribute, SSAValue

from rung.dialects import core
from rung.dialects.dtypes import f32, i32, i64, numpy_dtype
from rung.dialects.onnx import OnnxOp
from rung.dialects.onnx import generated_ops as onnx
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

from .attrs import ints_attr
from .registry import Results, lowers

# ---- helpers ------------------------------------------------------------------------------


def _float(op: OnnxOp, name: str) -> float:
    return float(op.attr(name))  # type: ignore[arg-type]


def _int(op: OnnxOp, name: str) -> int:
    return int(op.attr(name))  # type: ignore[arg-type]


def _mean_keep(b: CoreBuilder, x: SSAValue, axes: Sequence[int]) -> SSAValue:
    """The mean over `axes`, broadcast back over them (a dynamic count is read at run time)."""
    total = b.reduce_keep("sum", x, axes)
    return b.binary("div", total, b.count(x, axes, total))


def _channel(b: CoreBuilder, v: SSAValue, x: SSAValue, axis: int = 1) -> SSAValue:
    """A per-channel vector [C] broadcast along `axis` of `x`."""
    return b.broadcast_in_dim(v, [axis], x)


def _pool(
    b: CoreBuilder,
    kind: str,
    x: SSAValue,
    window: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    pad_low: Sequence[int],
    pad_high: Sequence[int],
    out_spatial: Sequence[int],
) -> SSAValue:
    shape = ranked_shape(x)
    result = tensor(element_of(x.type), [shape[0], shape[1], *out_spatial])
    op = core.PoolOp.create(
        operands=[x],
        result_types=[result],
        properties={
            "kind": StringAttr(kind),
            "window": core.ints(window),
            "strides": core.ints(strides),
            "dilations": core.ints(dilations),
            "pad_low": core.ints(pad_low),
            "pad_high": core.ints(pad_high),
        },
    )
    return b.insert(op).results[0]


def _spatial(x: SSAValue, what: str) -> list[int]:
    """The spatial dims of an `NC…` input, -1 where only the run time knows them.

    core.conv and core.pool take their pads and windows as numbers but size
    their results from the input at run time, so a `?` spatial dim only
    leaves a `?` in the result wherever the pads do not depend on it.
    """
    shape = ranked_shape(x)
    if len(shape) < 3:
        raise LoweringError(f"{what} needs an input of rank >= 3, got {len(shape)}")
    return list(shape[2:])


def _auto_pads(
    auto_pad: str,
    spatial: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    pads: Sequence[int],
) -> tuple[list[int], list[int]]:
    """ONNX auto_pad resolved into explicit (pad_low, pad_high) for conv and pooling."""
    n = len(spatial)
    if auto_pad in ("", "NOTSET"):
        return list(pads[:n]), list(pads[n:])
    if auto_pad == "VALID":
        return [0] * n, [0] * n
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        low, high = [], []
        for d, k, s, dil in zip(spatial, kernel, strides, dilations, strict=True):
            if d < 0 and s != 1:
                raise LoweringError(
                    f"auto_pad {auto_pad} with stride {s} along a dynamic spatial dim "
                    "(the pads would depend on its size)"
                )
            out = d if d < 0 else -(-d // s)
            total = (k - 1) * dil if d < 0 else max(0, (out - 1) * s + (k - 1) * dil + 1 - d)
            small = total // 2
            if auto_pad == "SAME_UPPER":
                low.append(small)
                high.append(total - small)
            else:
                low.append(total - small)
                high.append(small)
        return low, high
    raise LoweringError(f"unknown auto_pad '{auto_pad}'")


def _conv_out(d: int, k: int, s: int, dil: int, lo: int, hi: int) -> int:
    """An output spatial size of a conv; -1 (computed at run time) for a dynamic input or
    kernel dim."""
    if d < 0 or k < 0:
        return -1
    return (d + lo + hi - dil * (k - 1) - 1) // s + 1


# ---- pads known only at run time ------------------------------------------------------------

_SAME = ("SAME_UPPER", "SAME_LOWER")


def _same_at_run_time(auto_pad: str, spatial: Sequence[int], strides: Sequence[int]) -> list[bool]:
    """Per spatial dim, whether auto_pad SAME's pads depend on a `?` size (stride over 1)."""
    return [auto_pad in _SAME and d < 0 and s != 1 for d, s in zip(spatial, strides, strict=True)]


def _ints_vector(b: CoreBuilder, values: Sequence[int]) -> SSAValue:
    return b.constant(np.array(values, np.int64))


def _floor_div(b: CoreBuilder, a: SSAValue, divisor: SSAValue) -> SSAValue:
    """Python's `a // divisor` on i64 vectors (core's integer div truncates toward zero)."""
    return b.binary("div", b.binary("sub", a, b.binary("mod", a, divisor)), divisor)


def _split_total(b: CoreBuilder, total: SSAValue, auto_pad: str) -> tuple[SSAValue, SSAValue]:
    """A total pad per dim split into (low, high) as ONNX does: SAME_UPPER puts the odd one
    high, anything else low."""
    small = _floor_div(b, total, _ints_vector(b, [2] * ranked_shape(total)[0]))
    large = b.binary("sub", total, small)
    return (small, large) if auto_pad == "SAME_UPPER" else (large, small)


def _same_pads_at_run_time(
    b: CoreBuilder, sizes: SSAValue, extents: SSAValue, strides: Sequence[int], auto_pad: str
) -> tuple[SSAValue, SSAValue]:
    """auto_pad SAME's (low, high) i64 vectors from run-time spatial `sizes` and window extents.

    The output keeps ceil(d / s) positions; the pad is what its last window
    reaches past d, which depends on d mod s once the stride is over 1.
    """
    n = len(strides)
    s = _ints_vector(b, strides)
    ones = _ints_vector(b, [1] * n)
    out = _floor_div(b, b.binary("add", sizes, b.binary("sub", s, ones)), s)
    reach = b.binary("add", b.binary("mul", b.binary("sub", out, ones), s), extents)
    total = b.binary("max", b.binary("sub", reach, sizes), _ints_vector(b, [0] * n))
    return _split_total(b, total, auto_pad)


def _pad_spatial(
    b: CoreBuilder,
    x: SSAValue,
    low: SSAValue,
    high: SSAValue,
    fill: float,
    spatial: Sequence[int],
) -> SSAValue:
    """`x` [N, C, D…] padded (or cropped, where negative) along its spatial dims by run-time
    (low, high) i64 vectors, with `fill`; `spatial` holds the result's sizes, -1 where only
    the run time knows them."""
    zeros = _ints_vector(b, [0, 0])
    pads = b.concat([zeros, low, zeros, high], 0)
    element = element_of(x.type)
    shape = ranked_shape(x)
    result = tensor(element, [shape[0], shape[1], *spatial])
    value = b.constant(np.asarray(fill).astype(numpy_dtype(element)))
    new = core.PadOp.create(
        operands=[x, value, pads],
        result_types=[result],
        properties={"mode": StringAttr("constant")},
    )
    return b.insert(new).results[0]


def _pool_identity(kind: str, element: Attribute) -> float:
    """What a pad adds to a pool: nothing to a sum, the lowest value to a max."""
    if kind == "sum":
        return 0
    dtype = numpy_dtype(element)
    if np.issubdtype(dtype, np.integer):
        return int(np.iinfo(dtype).min)
    return -np.inf


# ---- matmul family ---------------------------------------------------------------------


@lowers(onnx.MatMulOp)
def matmul(b: CoreBuilder, op: onnx.MatMulOp) -> Results:
    return [b.matmul(op.A, op.B, element_of(op.Y.type))]


@lowers(onnx.MatMulIntegerOp)
def matmul_integer(b: CoreBuilder, op: onnx.MatMulIntegerOp) -> Results:
    """(A - a_zero_point) × (B - b_zero_point) in i32; A's 1-D zero point is per row."""
    a32, c32 = b.cast(op.A, i32), b.cast(op.B, i32)
    if op.a_zero_point is not None:
        zp = b.cast(op.a_zero_point, i32)
        zshape = ranked_shape(zp)
        if len(zshape) == 1 and zshape[0] != 1 and len(ranked_shape(op.A)) >= 2:
            zp = b.reshape_to(zp, [*b.dims(zp), 1])
        a32 = b.binary("sub", a32, _broadcast_checked(b, zp, a32, "a_zero_point"))
    if op.b_zero_point is not None:
        zp = b.cast(op.b_zero_point, i32)
        c32 = b.binary("sub", c32, _broadcast_checked(b, zp, c32, "b_zero_point"))
    return [b.matmul(a32, c32, element_of(op.Y.type), i32)]


@lowers(onnx.GemmOp)
def gemm(b: CoreBuilder, op: onnx.GemmOp) -> Results:
    """alpha * A' × B' + beta * C, with C broadcast to the result."""
    a = b.transpose(op.A, [1, 0]) if op.attr("transA") else op.A
    c = b.transpose(op.B, [1, 0]) if op.attr("transB") else op.B
    y = b.matmul(a, c, element_of(op.Y.type))
    alpha, beta = _float(op, "alpha"), _float(op, "beta")
    if alpha != 1.0:
        y = b.binary("mul", y, b.splat(alpha, y))
    if op.C is not None and beta != 0.0:
        cb = _broadcast_checked(b, op.C, y, "Gemm's C")
        if beta != 1.0:
            cb = b.binary("mul", cb, b.splat(beta, cb))
        y = b.binary("add", y, cb)
    return [y]


def _broadcast_checked(
    b: CoreBuilder, x: SSAValue, like: SSAValue, what: str, dims: Sequence[int] | None = None
) -> SSAValue:
    """`x` broadcast one way to the shape of `like`; `dims[i]` is the result dim of x's dim i
    (numpy's right alignment by default).

    Where a dim of `x` or of `like` is `?`, their types cannot tell whether
    x's dim is 1 (to repeat) or like's (to follow): `x` is broadcast to like's
    run-time shape, and a dim of `x` that is neither fails the run, naming
    `what` (the kernels would otherwise read past its end).
    """
    x_shape, out = ranked_shape(x), ranked_shape(like)
    if dims is None:
        offset = len(out) - len(x_shape)
        if offset < 0:
            raise LoweringError(f"{what} of rank {len(x_shape)} does not fit rank {len(out)}")
        dims = range(offset, len(out))
    dims = list(dims)
    if all(n == 1 or (n >= 0 and n == out[d]) for n, d in zip(x_shape, dims, strict=True)):
        return b.broadcast_in_dim(x, dims, like)  # x's dims fit whatever the `?` ones are
    sizes: list[Size] = [1] * len(out)
    for i, d in enumerate(dims):
        sizes[d] = b.dims(x)[i]
    same_rank = dims == list(range(len(out)))
    have = b.shape_of(x) if same_rank else b.shape_vector(sizes)
    wanted = b.shape_of(like)
    one = b.constant(np.ones(len(out), np.int64))
    fits = b.binary("or", b.compare("eq", have, one), b.compare("eq", have, wanted))
    shape = b.check(wanted, fits, f"{what} cannot be broadcast to the result's shape")
    op = core.BroadcastOp.create(
        operands=[x, shape],
        result_types=[tensor(element_of(x.type), out)],
        properties={"dims": core.ints(dims)},
    )
    return b.insert(op).results[0]


# ---- convolutions ----------------------------------------------------------------------


def _conv_params(
    o: OnnxOp, x: SSAValue, w: SSAValue, what: str, auto_pad: str | None = None
) -> tuple[list[int], list[int], list[int], list[int], list[int], list[int]]:
    """(spatial, kernel, strides, dilations, pad_low, pad_high) of a Conv-like op
    (`auto_pad` overrides the op's)."""
    spatial = _spatial(x, what)
    n = len(spatial)
    kernel = ints_attr(o, "kernel_shape", ranked_shape(w)[2:])
    strides = ints_attr(o, "strides", [1] * n)
    dilations = ints_attr(o, "dilations", [1] * n)
    pads = ints_attr(o, "pads", [0] * 2 * n)
    auto_pad = str(o.attr("auto_pad")) if auto_pad is None else auto_pad
    if any(k < 0 for k in kernel) and auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        # Explicit pads do not depend on the kernel, so core.conv reads it at run time.
        raise LoweringError(f"{what} with auto_pad {auto_pad} and a dynamic kernel shape")
    low, high = _auto_pads(auto_pad, spatial, kernel, strides, dilations, pads)
    return spatial, kernel, strides, dilations, low, high


def _same_input(b: CoreBuilder, o: OnnxOp, x: SSAValue, w: SSAValue) -> tuple[SSAValue, str | None]:
    """A Conv's input padded at run time where auto_pad SAME's pads depend on a `?` size
    (stride over 1), and the auto_pad that then applies to it (VALID); else `x` as it is."""
    auto_pad = str(o.attr("auto_pad"))
    spatial = _spatial(x, o.name)
    n = len(spatial)
    strides = ints_attr(o, "strides", [1] * n)
    if not any(_same_at_run_time(auto_pad, spatial, strides)):
        return x, None
    dilations = ints_attr(o, "dilations", [1] * n)
    kernel_attr = ints_attr(o, "kernel_shape", [-1] * n)
    kernel: list[Size] = [
        k if k >= 0 else (DimOf(w, 2 + i) if ranked_shape(w)[2 + i] < 0 else ranked_shape(w)[2 + i])
        for i, k in enumerate(kernel_attr)
    ]
    static = [k for k in kernel if isinstance(k, int)]
    if len(static) == n:
        extents = _ints_vector(b, [(k - 1) * d + 1 for k, d in zip(static, dilations, strict=True)])
    else:
        ones = _ints_vector(b, [1] * n)
        reach = b.binary("sub", b.shape_vector(kernel), ones)
        extents = b.binary("add", b.binary("mul", reach, _ints_vector(b, dilations)), ones)
    sizes = b.shape_vector(b.dims(x)[2:])
    low, high = _same_pads_at_run_time(b, sizes, extents, strides, auto_pad)
    padded = []
    for d, k, s, dil in zip(spatial, kernel, strides, dilations, strict=True):
        if d < 0 or isinstance(k, DimOf):
            padded.append(-1)
            continue
        lo, hi = _auto_pads(auto_pad, [d], [k], [s], [dil], [0, 0])
        padded.append(d + lo[0] + hi[0])
    return _pad_spatial(b, x, low, high, 0, padded), "VALID"


def _weight_fits_kernel_shape(b: CoreBuilder, o: OnnxOp, w: SSAValue) -> SSAValue:
    """The weights, checked at run time against `kernel_shape` where their dims are `?`.

    The attribute then sizes the result statically; weights of another size
    fail the run (as in onnxruntime) instead of being read past their end.
    """
    dims = ranked_shape(w)[2:]
    if o.attr("kernel_shape") is None or all(d >= 0 for d in dims):
        return w
    kernel = ints_attr(o, "kernel_shape", [])
    if len(kernel) != len(dims):
        raise LoweringError(f"kernel_shape {kernel} does not fit weights of rank {len(dims) + 2}")
    spatial = b.slice(b.shape_of(w), [2], [len(dims)])
    fits = b.compare("eq", spatial, b.constant(np.array(kernel, np.int64)))
    return b.check(w, fits, f"the weights' spatial dims differ from kernel_shape {kernel}")


def _conv(
    b: CoreBuilder, o: OnnxOp, x: SSAValue, w: SSAValue, element: Attribute, acc: Attribute
) -> SSAValue:
    w = _weight_fits_kernel_shape(b, o, w)
    x, auto_pad = _same_input(b, o, x, w)
    spatial, kernel, strides, dilations, low, high = _conv_params(o, x, w, o.name, auto_pad)
    out = [
        _conv_out(*args)
        for args in zip(spatial, kernel, strides, dilations, low, high, strict=True)
    ]
    result = tensor(element, [ranked_shape(x)[0], ranked_shape(w)[0], *out])
    conv = core.ConvOp.create(
        operands=[x, w],
        result_types=[result],
        properties={
            "strides": core.ints(strides),
            "dilations": core.ints(dilations),
            "pad_low": core.ints(low),
            "pad_high": core.ints(high),
            "groups": int_attr(_int(o, "group")),
            "layout": StringAttr("NCHW"),
            "acc": acc,
        },
    )
    return b.insert(conv).results[0]


@lowers(onnx.ConvOp)
def conv(b: CoreBuilder, op: onnx.ConvOp) -> Results:
    element = element_of(op.Y.type)
    y = _conv(b, op, op.X, op.W, element, acc_type(element))
    if op.B is not None:
        y = b.binary("add", y, _broadcast_checked(b, op.B, y, "B", [1]))
    return [y]


@lowers(onnx.ConvIntegerOp)
def conv_integer(b: CoreBuilder, op: onnx.ConvIntegerOp) -> Results:
    """(x - x_zero_point) ⋆ (w - w_zero_point) in i32; w's zero point may be per channel."""
    x32, w32 = b.cast(op.x, i32), b.cast(op.w, i32)
    if op.x_zero_point is not None:
        zp = b.cast(op.x_zero_point, i32)
        if len(ranked_shape(zp)) == 1:
            zp = b.reshape(zp, tensor(i32, []))
        x32 = b.binary("sub", x32, b.broadcast_in_dim(zp, [], x32))
    if op.w_zero_point is not None:
        zp = b.cast(op.w_zero_point, i32)
        zshape = ranked_shape(zp)
        if len(zshape) == 1 and zshape[0] == 1:
            zp = b.reshape(zp, tensor(i32, []))
        dims = [0] if len(ranked_shape(zp)) == 1 else []
        w32 = b.binary("sub", w32, _broadcast_checked(b, zp, w32, "w_zero_point", dims))
    return [_conv(b, op, x32, w32, i32, i32)]


def _transpose_pads(
    op: onnx.ConvTransposeOp, full: Sequence[int], tails: Sequence[int], strides: Sequence[int]
) -> tuple[list[int], list[int]] | None:
    """ConvTranspose's (pad_low, pad_high): from `pads`, or from `output_shape`/auto_pad.

    `full` is the unpadded output size `stride * (D - 1) + tail`, -1 along a
    dynamic input or kernel dim (`tail`, -1 along a dynamic kernel dim).
    auto_pad SAME aims at `D * stride`, a total pad of `tail - stride`
    whatever D is; a fixed `output_shape` needs D itself. None when the pads
    depend on a size only the run time knows.
    """
    n = len(full)
    output_shape = op.attr("output_shape")
    auto_pad = str(op.attr("auto_pad"))
    pads_attr = op.attr("pads")
    if pads_attr is None and (output_shape is not None or auto_pad in ("SAME_UPPER", "SAME_LOWER")):
        if output_shape is not None:
            if any(f < 0 for f in full):
                return None
            target = [int(v) for v in output_shape][-n:]  # type: ignore[union-attr]
            totals = [f - t for f, t in zip(full, target, strict=True)]
        else:
            if any(tail < 0 for tail in tails):
                return None
            totals = [tail - s for tail, s in zip(tails, strides, strict=True)]
        low, high = [], []
        for total in totals:
            if auto_pad == "SAME_UPPER":
                low.append(total // 2)
                high.append(total - total // 2)
            else:
                low.append(total - total // 2)
                high.append(total // 2)
        return low, high
    if auto_pad == "VALID" or pads_attr is None:
        return [0] * n, [0] * n
    pads = [int(v) for v in pads_attr]  # type: ignore[union-attr]
    return pads[:n], pads[n:]


@lowers(onnx.ConvTransposeOp)
def conv_transpose(b: CoreBuilder, op: onnx.ConvTransposeOp) -> Results:
    """output_shape/auto_pad become explicit pads; output_padding a negative pad_high."""
    x, w = op.X, op.W
    spatial = _spatial(x, "ConvTranspose")
    n = len(spatial)
    kernel = ints_attr(op, "kernel_shape", ranked_shape(w)[2:])
    strides = ints_attr(op, "strides", [1] * n)
    dilations = ints_attr(op, "dilations", [1] * n)
    out_pad = ints_attr(op, "output_padding", [0] * n)
    tails = [
        op_ + (k - 1) * dil + 1 if k >= 0 else -1
        for k, dil, op_ in zip(kernel, dilations, out_pad, strict=True)
    ]
    full = [
        s * (d - 1) + tail if d >= 0 and tail >= 0 else -1
        for d, s, tail in zip(spatial, strides, tails, strict=True)
    ]
    pads = _transpose_pads(op, full, tails, strides)
    if pads is None:
        no_pad = [-p for p in out_pad]
        y = _transpose_core(b, op, strides, dilations, [0] * n, no_pad, full)
        y = _crop_transposed(b, op, y, strides)
    else:
        low, high = pads
        out = [f - lo - hi if f >= 0 else -1 for f, lo, hi in zip(full, low, high, strict=True)]
        high = [h - p for h, p in zip(high, out_pad, strict=True)]
        y = _transpose_core(b, op, strides, dilations, low, high, out)
    if op.B is not None:
        y = b.binary("add", y, _channel(b, op.B, y))
    return [y]


def _transpose_core(
    b: CoreBuilder,
    op: onnx.ConvTransposeOp,
    strides: Sequence[int],
    dilations: Sequence[int],
    low: Sequence[int],
    high: Sequence[int],
    out: Sequence[int],
) -> SSAValue:
    """The core.conv_transpose of a ConvTranspose, with core's pads and output sizes."""
    x, w = op.X, op.W
    groups = _int(op, "group")
    element = element_of(op.Y.type)
    channels = ranked_shape(w)[1]
    result = tensor(element, [ranked_shape(x)[0], channels * groups if channels >= 0 else -1, *out])
    ct = core.ConvTransposeOp.create(
        operands=[x, w],
        result_types=[result],
        properties={
            "strides": core.ints(strides),
            "dilations": core.ints(dilations),
            "pad_low": core.ints(low),
            "pad_high": core.ints(high),
            "groups": int_attr(groups),
            "acc": acc_type(element),
        },
    )
    return b.insert(ct).results[0]


def _crop_transposed(
    b: CoreBuilder, op: onnx.ConvTransposeOp, y: SSAValue, strides: Sequence[int]
) -> SSAValue:
    """The unpadded output `y` cropped (or zero-extended) at run time to what output_shape,
    or auto_pad SAME (`D * stride`), asks for, the total split as ONNX splits it."""
    n = len(strides)
    output_shape = op.attr("output_shape")
    if output_shape is not None:
        target = [int(v) for v in output_shape][-n:]  # type: ignore[union-attr]
        wanted = _ints_vector(b, target)
    else:
        x = op.X
        target = [
            d * s if d >= 0 else -1 for d, s in zip(_spatial(x, op.name), strides, strict=True)
        ]
        wanted = b.binary("mul", b.shape_vector(b.dims(x)[2:]), _ints_vector(b, strides))
    total = b.binary("sub", b.shape_vector(b.dims(y)[2:]), wanted)
    low, high = _split_total(b, total, str(op.attr("auto_pad")))
    zeros = _ints_vector(b, [0] * n)
    crop_low, crop_high = b.binary("sub", zeros, low), b.binary("sub", zeros, high)
    return _pad_spatial(b, y, crop_low, crop_high, 0, target)


# ---- pooling ----------------------------------------------------------------------------


class _PoolGeometry:
    """Window, strides, pads and output size of an ONNX pooling op, ceil_mode resolved."""

    def __init__(self, o: OnnxOp, x: SSAValue) -> None:
        self.spatial = _spatial(x, o.name)
        n = len(self.spatial)
        self.kernel = ints_attr(o, "kernel_shape", [])
        if len(self.kernel) != n:
            raise LoweringError(f"kernel_shape {self.kernel} does not fit {n} spatial dims")
        self.strides = ints_attr(o, "strides", [1] * n)
        self.dilations = ints_attr(o, "dilations", [1] * n)
        pads = ints_attr(o, "pads", [0] * 2 * n)
        self.auto_pad = str(o.attr("auto_pad"))
        self.same_later = _same_at_run_time(self.auto_pad, self.spatial, self.strides)
        self.low, self.high = self._pads(pads)
        self.explicit_high = list(self.high)
        try:
            self.ceil_mode = bool(o.attr("ceil_mode"))
        except KeyError:
            self.ceil_mode = False
        # Pads that depend on a `?` size are computed when the model runs (see `pool`).
        self.run_time = any(self.same_later)
        self._run_time_pads: tuple[SSAValue, SSAValue, SSAValue] | None = None
        self.out: list[int] = []
        for i in range(n):
            d, k, s, dil = self.spatial[i], self.kernel[i], self.strides[i], self.dilations[i]
            lo, hi = self.low[i], self.high[i]
            extent = (k - 1) * dil + 1
            if d < 0:
                self.out.append(-1)
                if self.ceil_mode and s > 1:
                    if _ceil_pad_fits(hi, s, extent):
                        self.high[i] = hi + s - 1
                    else:
                        self.run_time = True
                continue
            span = d + lo + hi - extent
            size = (-(-span // s) if self.ceil_mode else span // s) + 1
            if self.ceil_mode and (size - 1) * s >= d + lo:
                size -= 1  # the last window must start inside the input or the low pad
            self.out.append(size)
            extra = (size - 1) * s + extent - (d + lo + hi)
            if extra > 0:
                self.high[i] = hi + extra

    def _pads(self, pads: Sequence[int]) -> tuple[list[int], list[int]]:
        """(pad_low, pad_high) from pads/auto_pad; 0 where SAME's depend on a `?` size."""
        if not any(self.same_later):
            return _auto_pads(
                self.auto_pad, self.spatial, self.kernel, self.strides, self.dilations, pads
            )
        low, high = [], []
        for i, later in enumerate(self.same_later):
            if later:
                low.append(0)
                high.append(0)
                continue
            one = [self.spatial[i]], [self.kernel[i]], [self.strides[i]], [self.dilations[i]]
            lo, hi = _auto_pads(self.auto_pad, *one, [0, 0])
            low.extend(lo)
            high.extend(hi)
        return low, high

    def pool(self, b: CoreBuilder, kind: str, x: SSAValue) -> SSAValue:
        if not self.run_time:
            return _pool(
                b, kind, x, self.kernel, self.strides, self.dilations, self.low, self.high, self.out
            )
        low, _, high = self.pads_at_run_time(b, x)
        fill = _pool_identity(kind, element_of(x.type))
        padded = _pad_spatial(b, x, low, high, fill, self._padded(self.high))
        zeros = [0] * len(self.spatial)
        return _pool(
            b, kind, padded, self.kernel, self.strides, self.dilations, zeros, zeros, self.out
        )

    def pads_at_run_time(self, b: CoreBuilder, x: SSAValue) -> tuple[SSAValue, SSAValue, SSAValue]:
        """(low, counted high, high) i64 vectors, computed once from `x`'s run-time sizes.

        Low and counted high are the explicit or SAME pads; high adds what
        ceil_mode needs for a last, partial window (ONNX drops one that would
        start in the high pad).
        """
        if self._run_time_pads is not None:
            return self._run_time_pads
        sizes = b.shape_vector(b.dims(x)[2:])
        extents = [(k - 1) * d + 1 for k, d in zip(self.kernel, self.dilations, strict=True)]
        if any(self.same_later):
            low, counted = _same_pads_at_run_time(
                b, sizes, _ints_vector(b, extents), self.strides, self.auto_pad
            )
        else:
            low, counted = _ints_vector(b, self.low), _ints_vector(b, self.explicit_high)
        high = counted
        if self.ceil_mode:
            high = b.binary("add", counted, self._ceil_extra(b, sizes, low, counted, extents))
        self._run_time_pads = (low, counted, high)
        return self._run_time_pads

    def _ceil_extra(
        self,
        b: CoreBuilder,
        sizes: SSAValue,
        low: SSAValue,
        high: SSAValue,
        extents: Sequence[int],
    ) -> SSAValue:
        """The high pad ceil_mode adds per dim, at run time: ONNX's output size
        `ceil((d + lo + hi - extent) / s) + 1`, less one if the last window would
        start past the input and its low pad, needs this much more input."""
        n = len(self.spatial)
        s, extent = _ints_vector(b, self.strides), _ints_vector(b, extents)
        ones = _ints_vector(b, [1] * n)
        reach = b.binary("add", b.binary("add", sizes, low), high)
        span = b.binary("sub", reach, extent)
        size = b.binary(
            "add", _floor_div(b, b.binary("add", span, b.binary("sub", s, ones)), s), ones
        )
        last = b.binary("mul", b.binary("sub", size, ones), s)
        in_pad = b.compare("ge", last, b.binary("add", sizes, low))
        last = b.select(in_pad, b.binary("sub", last, s), last)
        extra = b.binary("sub", b.binary("add", last, extent), reach)
        return b.binary("max", extra, _ints_vector(b, [0] * n))

    def _padded(self, high: Sequence[int]) -> list[int]:
        """Spatial sizes of the input padded by `low` and `high`, -1 where dynamic."""
        return [
            d + lo + hi if d >= 0 else -1
            for d, lo, hi in zip(self.spatial, self.low, high, strict=True)
        ]

    def average(self, b: CoreBuilder, total: SSAValue, x: SSAValue, include_pad: bool) -> SSAValue:
        """`total` (a sum pool of `x`) divided by the number of counted elements per window."""
        if self.run_time:
            counts = self._counts_at_run_time(b, x, include_pad)
            return b.binary("div", total, b.broadcast_to(counts, total.type, total))
        if all(d >= 0 for d in self.spatial):
            return _divide_by_counts(b, total, self.counts(include_pad))
        if self._uniform(include_pad):
            return b.binary("div", total, b.splat(float(np.prod(self.kernel)), total))
        return b.binary(
            "div",
            total,
            b.broadcast_to(self._run_time_counts(b, x, include_pad), total.type, total),
        )

    def _uniform(self, include_pad: bool) -> bool:
        """Whether every window lies inside what it counts, whatever the dynamic sizes are."""
        if include_pad:
            return self.high == self.explicit_high
        return not any(self.low) and not any(self.high)

    def _run_time_counts(self, b: CoreBuilder, x: SSAValue, include_pad: bool) -> SSAValue:
        """Elements per window [1, 1, E…], as a sum pool of ones over what is counted.

        That is the input, or the input with its explicit pads (then only the
        ceil_mode extension is padding); its dynamic sizes are read at run time.
        """
        grow = [
            lo + hi if include_pad else 0
            for lo, hi in zip(self.low, self.explicit_high, strict=True)
        ]
        sizes: list[Size] = [1, 1]
        for i, d in enumerate(self.spatial):
            sizes.append(DimOf(x, 2 + i) if d < 0 else d + grow[i])
        shape = b.shape_vector(sizes)
        dynamic_grow = [g if d < 0 else 0 for g, d in zip(grow, self.spatial, strict=True)]
        if any(dynamic_grow):
            shape = b.binary("add", shape, b.constant(np.array([0, 0, *dynamic_grow], np.int64)))
        element = element_of(x.type)
        ones_type = tensor(element, [static_size(s) for s in sizes])
        ones = b.broadcast_to(b.scalar(1, element), ones_type, shape=shape)
        n = len(self.spatial)
        if include_pad:
            low = [0] * n
            high = [h - e for h, e in zip(self.high, self.explicit_high, strict=True)]
        else:
            low, high = self.low, self.high
        return _pool(b, "sum", ones, self.kernel, self.strides, self.dilations, low, high, self.out)

    def _counts_at_run_time(self, b: CoreBuilder, x: SSAValue, include_pad: bool) -> SSAValue:
        """Elements per window [1, 1, E…] with run-time pads: a sum pool of a mask that is
        1 over what is counted (the input, with its pads under count_include_pad) and 0
        over the rest of the padding."""
        low, counted, high = self.pads_at_run_time(b, x)
        element = element_of(x.type)
        sizes: list[Size] = [1, 1, *b.dims(x)[2:]]
        ones_type = tensor(element, [static_size(s) for s in sizes])
        mask = b.broadcast_to(b.scalar(1, element), ones_type, shape=b.shape_vector(sizes))
        if include_pad:
            mask = _pad_spatial(b, mask, low, counted, 1, self._padded(self.explicit_high))
            low = _ints_vector(b, [0] * len(self.spatial))
            high = b.binary("sub", high, counted)
        mask = _pad_spatial(b, mask, low, high, 0, self._padded(self.high))
        zeros = [0] * len(self.spatial)
        return _pool(
            b, "sum", mask, self.kernel, self.strides, self.dilations, zeros, zeros, self.out
        )

    def counts(self, include_pad: bool) -> np.ndarray:
        """Elements per window: separable, so the product of 1-D counts (computed statically)."""
        result = np.ones([1] * 0)
        for i, d in enumerate(self.spatial):
            lo, hi = self.low[i], self.explicit_high[i]
            first, last = (-lo, d + hi) if include_pad else (0, d)
            per = np.array(
                [
                    sum(
                        first <= o * self.strides[i] - lo + j * self.dilations[i] < last
                        for j in range(self.kernel[i])
                    )
                    for o in range(self.out[i])
                ],
                dtype=np.float64,
            )
            result = np.multiply.outer(result, per)
        return result


def _ceil_pad_fits(hi: int, stride: int, extent: int) -> bool:
    """Whether `stride - 1` more high pad makes a floor-mode pool size ceil-mode along a
    dynamic dim, whatever its size.

    It rounds the division up; ONNX then drops a last window that would start
    in the high pad, which happens for some sizes unless `hi + stride <= extent`
    (the rounding can never reach past `hi`). Otherwise the pad is computed at
    run time.
    """
    return hi + stride <= extent


def _divide_by_counts(b: CoreBuilder, total: SSAValue, counts: np.ndarray) -> SSAValue:
    if np.all(counts == counts.flat[0]):
        return b.binary("div", total, b.splat(float(counts.flat[0]), total))
    rank = len(ranked_shape(total))
    c = b.constant(counts, like=total.type)
    return b.binary("div", total, b.broadcast_in_dim(c, list(range(2, rank)), total))


@lowers(onnx.MaxPoolOp)
def max_pool(b: CoreBuilder, op: onnx.MaxPoolOp) -> Results:
    if op.Indices is not None:
        raise LoweringError("MaxPool's Indices output is not supported")
    return [_PoolGeometry(op, op.X).pool(b, "max", op.X)]


@lowers(onnx.AveragePoolOp)
def average_pool(b: CoreBuilder, op: onnx.AveragePoolOp) -> Results:
    """Sum pool divided by the number of counted elements of each window."""
    geometry = _PoolGeometry(op, op.X)
    total = geometry.pool(b, "sum", op.X)
    return [geometry.average(b, total, op.X, bool(op.attr("count_include_pad")))]


@lowers(onnx.LpPoolOp)
def lp_pool(b: CoreBuilder, op: onnx.LpPoolOp) -> Results:
    """(sum |x|^p)^(1/p) over each window; zero padding adds nothing."""
    p = _int(op, "p")
    powered = _lp_power(b, op.X, p)
    total = _PoolGeometry(op, op.X).pool(b, "sum", powered)
    return [_lp_root(b, total, p)]


def _lp_power(b: CoreBuilder, x: SSAValue, p: int) -> SSAValue:
    if p == 1:
        return b.unary("abs", x)
    if p == 2:
        return b.binary("mul", x, x)
    return b.binary("pow", b.unary("abs", x), b.splat(float(p), x))


def _lp_root(b: CoreBuilder, x: SSAValue, p: int) -> SSAValue:
    if p == 1:
        return x
    if p == 2:
        return b.unary("sqrt", x)
    return b.binary("pow", x, b.splat(1.0 / p, x))


def _global(b: CoreBuilder, kind: str, x: SSAValue) -> SSAValue:
    """A pool whose window is the whole input; over dynamic spatial dims (a window
    core.pool cannot take) a reduction, reshaped back to [N, C, 1…]."""
    spatial = _spatial(x, "global pooling")
    n = len(spatial)
    if all(d >= 0 for d in spatial):
        return _pool(b, kind, x, spatial, [1] * n, [1] * n, [0] * n, [0] * n, [1] * n)
    reduced = b.reduce(kind, x, list(range(2, 2 + n)))
    return b.reshape_to(reduced, [*b.dims(x)[:2], *[1] * n])


@lowers(onnx.GlobalMaxPoolOp)
def global_max_pool(b: CoreBuilder, op: onnx.GlobalMaxPoolOp) -> Results:
    return [_global(b, "max", op.X)]


@lowers(onnx.GlobalAveragePoolOp)
def global_average_pool(b: CoreBuilder, op: onnx.GlobalAveragePoolOp) -> Results:
    total = _global(b, "sum", op.X)
    return [b.binary("div", total, b.count(op.X, list(range(2, len(ranked_shape(op.X)))), total))]


@lowers(onnx.GlobalLpPoolOp)
def global_lp_pool(b: CoreBuilder, op: onnx.GlobalLpPoolOp) -> Results:
    p = _int(op, "p")
    return [_lp_root(b, _global(b, "sum", _lp_power(b, op.X, p)), p)]


# ---- normalizations ---------------------------------------------------------------------


def _normalize(
    b: CoreBuilder, x: SSAValue, axes: Sequence[int], epsilon: float
) -> tuple[SSAValue, SSAValue, SSAValue]:
    """(x - mean) / sqrt(var + eps) over `axes`; also returns the mean and 1/std (expanded)."""
    mean = _mean_keep(b, x, axes)
    centered = b.binary("sub", x, mean)
    var = _mean_keep(b, b.binary("mul", centered, centered), axes)
    inv_std = b.unary("reciprocal", b.unary("sqrt", b.binary("add", var, b.splat(epsilon, var))))
    return b.binary("mul", centered, inv_std), mean, inv_std


@lowers(onnx.BatchNormalizationOp)
def batch_norm(b: CoreBuilder, op: onnx.BatchNormalizationOp) -> Results:
    """Inference: per-channel scale and shift (folded when the statistics are constants).

    Training mode normalizes with the batch statistics and also returns the
    updated running mean and variance.
    """
    if op.attr("training_mode"):
        return _batch_norm_training(b, op)
    x, eps = op.X, _float(op, "epsilon")
    scale, bias, mean, var = op.scale, op.B, op.input_mean, op.input_var
    arrays = [constant_array(v) for v in (scale, bias, mean, var)]
    if all(a is not None for a in arrays):
        s, c, m, v = (np.asarray(a, dtype=np.float64) for a in arrays)  # type: ignore[arg-type]
        mul = s / np.sqrt(v + eps)
        add = c - m * mul
        mul_v = b.constant(mul, like=x.type)
        add_v = b.constant(add, like=x.type)
    else:
        inv = b.unary("reciprocal", b.unary("sqrt", b.binary("add", var, b.splat(eps, var))))
        mul_v = b.binary("mul", scale, inv)
        add_v = b.binary("sub", bias, b.binary("mul", mean, mul_v))
    y = b.binary("add", b.binary("mul", x, _channel(b, mul_v, x)), _channel(b, add_v, x))
    return [y]


def _batch_norm_training(b: CoreBuilder, op: onnx.BatchNormalizationOp) -> Results:
    """Normalize with the batch's statistics; update the running ones with `momentum`."""
    x = op.X
    shape = ranked_shape(x)
    axes = [0, *range(2, len(shape))]
    normed, batch_mean, _ = _normalize(b, x, axes, _float(op, "epsilon"))
    y = b.binary("add", b.binary("mul", normed, _channel(b, op.scale, x)), _channel(b, op.B, x))
    momentum = _float(op, "momentum")
    cur_mean = b.reduce("sum", batch_mean, axes)  # each entry repeated `count` times
    cur_mean = b.binary("div", cur_mean, b.count(x, axes, cur_mean))
    centered = b.binary("sub", x, batch_mean)
    cur_var = b.reduce("sum", b.binary("mul", centered, centered), axes)
    cur_var = b.binary("div", cur_var, b.count(x, axes, cur_var))

    def running(old: SSAValue, new: SSAValue) -> SSAValue:
        return b.binary(
            "add",
            b.binary("mul", old, b.splat(momentum, old)),
            b.binary("mul", new, b.splat(1.0 - momentum, new)),
        )

    return [
        y,
        running(op.input_mean, cur_mean) if op.running_mean is not None else None,
        running(op.input_var, cur_var) if op.running_var is not None else None,
    ]


@lowers(onnx.InstanceNormalizationOp)
def instance_norm(b: CoreBuilder, op: onnx.InstanceNormalizationOp) -> Results:
    x = op.input
    axes = list(range(2, len(ranked_shape(x))))
    normed, _, _ = _normalize(b, x, axes, _float(op, "epsilon"))
    return [
        b.binary("add", b.binary("mul", normed, _channel(b, op.scale, x)), _channel(b, op.B, x))
    ]


def _stash(b: CoreBuilder, x: SSAValue, stash_type: int) -> SSAValue:
    """The computation type of LayerNorm/GroupNorm (stash_type 1 = float32)."""
    if stash_type == 1:
        return b.cast(x, f32)
    return x


def _keepdims(
    b: CoreBuilder, v: SSAValue, result: Attribute, x: SSAValue, axes: Sequence[int]
) -> SSAValue:
    """`v` (full shape, constant along `axes`) reduced to `result`'s keepdims shape."""
    picked = b.reduce("max", v, axes)  # the values are equal along axes
    sizes: list[Size] = [1 if i in axes else d for i, d in enumerate(b.dims(x))]
    return b.cast(b.reshape_to(picked, sizes), element_of(result))


@lowers(onnx.LayerNormalizationOp)
def layer_norm(b: CoreBuilder, op: onnx.LayerNormalizationOp) -> Results:
    """Normalizes over the dims from `axis` on; Mean and InvStdDev keep those dims as 1."""
    x = op.X
    rank = len(ranked_shape(x))
    axes = list(range(normalize_axis(_int(op, "axis"), rank), rank))
    xs = _stash(b, x, _int(op, "stash_type"))
    normed, mean, inv_std = _normalize(b, xs, axes, _float(op, "epsilon"))
    y = b.cast(normed, element_of(x.type))
    y = b.binary("mul", y, b.broadcast_to(op.Scale, y.type, y))
    if op.B is not None:
        y = b.binary("add", y, b.broadcast_to(op.B, y.type, y))
    results: list[SSAValue | None] = [y]
    for output, v in ((op.Mean, mean), (op.InvStdDev, inv_std)):
        if output is not None:
            results.append(_keepdims(b, v, output.type, xs, axes))
    return results


@lowers(onnx.GroupNormalizationOp)
def group_norm(b: CoreBuilder, op: onnx.GroupNormalizationOp) -> Results:
    """Reshape to [N, G, rest], normalize over rest, reshape back, per-channel scale/bias."""
    x = op.X
    shape = ranked_shape(x)
    groups = _int(op, "num_groups")
    rest = shape[1:]
    xs = _stash(b, x, _int(op, "stash_type"))
    n = b.dims(xs)[0]
    if any(d < 0 for d in rest):
        grouped = _group_at_run_time(b, xs, groups)
    else:
        grouped = b.reshape_to(xs, [n, groups, int(np.prod(rest)) // groups])
    normed, _, _ = _normalize(b, grouped, [2], _float(op, "epsilon"))
    back = b.reshape_to(normed, [n, *b.dims(xs)[1:]])
    y = b.cast(back, element_of(x.type))
    scale_shape = ranked_shape(op.scale)
    if len(scale_shape) == 1 and scale_shape[0] == groups and groups != shape[1] >= 0:
        raise LoweringError("GroupNormalization-18 per-group scale is not supported")
    scale, bias = (_per_channel(b, v, x, "GroupNormalization") for v in (op.scale, op.bias))
    return [b.binary("add", b.binary("mul", y, _channel(b, scale, y)), _channel(b, bias, y))]


def _group_at_run_time(b: CoreBuilder, x: SSAValue, groups: int) -> SSAValue:
    """`x` [N, C, …] as [N, groups, C * … / groups], sized at run time; a channel count
    that `groups` does not divide fails the run."""
    shape = b.shape_of(x)
    rank = len(ranked_shape(x))
    channels = b.gather(shape, b.constant(np.array([1], np.int64)), 0)
    groups_v = b.constant(np.array([groups], np.int64))
    divides = b.compare(
        "eq", b.binary("rem", channels, groups_v), b.constant(np.array([0], np.int64))
    )
    rest = b.gather(shape, b.constant(np.arange(1, rank, dtype=np.int64)), 0)
    size = b.reshape(b.reduce("prod", rest, [0]), tensor(i64, [1]))
    size = b.check(b.binary("div", size, groups_v), divides, "channels do not split into groups")
    sizes = b.concat([b.gather(shape, b.constant(np.array([0], np.int64)), 0), groups_v, size], 0)
    n = ranked_shape(x)[0]
    return b.reshape(x, tensor(element_of(x.type), [n, groups, -1]), sizes)


def _per_channel(b: CoreBuilder, v: SSAValue, x: SSAValue, what: str) -> SSAValue:
    """A [C] parameter of an `NC…` input; where either length is `?`, checked at run time to
    be C (the kernels would otherwise read past its end)."""
    length, channels = ranked_shape(v)[0], ranked_shape(x)[1]
    if length >= 0 and channels >= 0:
        return v
    pick = b.constant(np.array([1], np.int64))
    fits = b.compare("eq", b.shape_of(v), b.gather(b.shape_of(x), pick, 0))
    return b.check(v, fits, f"{what}'s per-channel parameter does not have one entry per channel")


@lowers(onnx.LpNormalizationOp)
def lp_normalization(b: CoreBuilder, op: onnx.LpNormalizationOp) -> Results:
    x = op.input
    axis = normalize_axis(_int(op, "axis"), len(ranked_shape(x)))
    p = _int(op, "p")
    if p not in (1, 2):
        raise LoweringError(f"LpNormalization with p={p} (only 1 and 2 exist)")
    norm = _lp_root(b, b.reduce_keep("sum", _lp_power(b, x, p), [axis]), p)
    zero = b.splat(0, x)
    # A zero vector stays zero (ONNX's reference), instead of 0/0 = NaN.
    return [b.select(b.compare("eq", norm, zero), zero, b.binary("div", x, norm))]


@lowers(onnx.MeanVarianceNormalizationOp)
def mean_variance_normalization(b: CoreBuilder, op: onnx.MeanVarianceNormalizationOp) -> Results:
    """ONNX's function body: (x - E[x]) / (sqrt(E[x²] - E[x]²) + 1e-9)."""
    x = op.X
    rank = len(ranked_shape(x))
    axes = sorted(normalize_axis(a, rank) for a in ints_attr(op, "axes", [0, 2, 3]))
    mean = _mean_keep(b, x, axes)
    mean_sq = _mean_keep(b, b.binary("mul", x, x), axes)
    std = b.unary("sqrt", b.binary("sub", mean_sq, b.binary("mul", mean, mean)))
    return [b.binary("div", b.binary("sub", x, mean), b.binary("add", std, b.splat(1e-9, std)))]


# ---- softmax family ---------------------------------------------------------------------


def _axis(op: OnnxOp, x: SSAValue) -> int:
    return normalize_axis(_int(op, "axis"), len(ranked_shape(x)))


@lowers(onnx.SoftmaxOp)
def softmax(b: CoreBuilder, op: onnx.SoftmaxOp) -> Results:
    """exp(x - max) / sum(exp(x - max)) along `axis`."""
    return [b.softmax(op.input, _axis(op, op.input))]


@lowers(onnx.LogSoftmaxOp)
def log_softmax(b: CoreBuilder, op: onnx.LogSoftmaxOp) -> Results:
    """(x - max) - log(sum(exp(x - max))) along `axis`."""
    return [b.log_softmax(op.input, _axis(op, op.input))]


@lowers(onnx.HardmaxOp)
def hardmax(b: CoreBuilder, op: onnx.HardmaxOp) -> Results:
    """1 where the index along `axis` equals the (first) argmax, else 0.

    The positions along a dynamic axis are a core.iota of its run-time size.
    """
    x = op.input
    axis = _axis(op, x)
    shape = ranked_shape(x)
    arg = core.ArgReduceOp.create(
        operands=[x],
        result_types=[tensor(i64, [d for i, d in enumerate(shape) if i != axis])],
        properties={"fn": StringAttr("max"), "axis": int_attr(axis), "last": int_attr(0)},
    )
    index = b.insert(arg).results[0]
    if shape[axis] >= 0:
        iota = b.constant(np.arange(shape[axis], dtype=np.int64))
    else:
        iota = b.insert(
            core.IotaOp.create(
                operands=[b.reshape(b.shape_vector([DimOf(x, axis)]), tensor(i64, []))],
                result_types=[tensor(i64, [-1])],
                properties={"dim": int_attr(0)},
            )
        ).results[0]
    positions = b.broadcast_in_dim(iota, [axis], x)
    chosen = b.broadcast_in_dim(index, [i for i in range(len(shape)) if i != axis], positions)
    hit = b.compare("eq", positions, chosen)
    return [b.select(hit, b.splat(1, x), b.splat(0, x))]


@lowers(onnx.LRNOp)
def lrn(b: CoreBuilder, op: onnx.LRNOp) -> Results:
    """x / (bias + alpha/size * sum of x² over a channel window)^beta.

    The channel window sum is a sum pool over a unit-channel view [N, 1, C, …].
    """
    x = op.X
    shape = ranked_shape(x)
    size = _int(op, "size")
    alpha, beta, bias = _float(op, "alpha"), _float(op, "beta"), _float(op, "bias")
    n, *dims = b.dims(x)
    squared = b.binary("mul", x, x)
    view = b.reshape_to(squared, [n, 1, *dims])
    rest = len(shape) - 1
    low = [(size - 1) // 2] + [0] * (rest - 1)
    high = [pymath.ceil((size - 1) / 2)] + [0] * (rest - 1)
    window = [size] + [1] * (rest - 1)
    summed = _pool(b, "sum", view, window, [1] * rest, [1] * rest, low, high, list(shape[1:]))
    summed = b.reshape_to(summed, [n, *dims])
    base = b.binary(
        "add", b.splat(bias, summed), b.binary("mul", summed, b.splat(alpha / size, summed))
    )
    return [b.binary("div", x, b.binary("pow", base, b.splat(beta, base)))]


@lowers(onnx.DropoutOp)
def dropout(b: CoreBuilder, op: onnx.DropoutOp) -> Results:
    """Inference: the identity, and a mask of all true; training mode is refused."""
    x = op.data
    if op.training_mode is not None:
        flag = constant_array(op.training_mode)
        ratio = constant_array(op.ratio) if op.ratio is not None else np.array(0.5)
        zero_ratio = ratio is not None and float(np.asarray(ratio).reshape(-1)[0]) == 0.0
        if (flag is None or bool(np.asarray(flag).reshape(-1)[0])) and not zero_ratio:
            raise LoweringError("Dropout in training mode (random masks) is not supported")
    if op.mask is not None:
        return [x, b.broadcast_in_dim(b.constant(np.array(True)), [], x)]
    return [x]
