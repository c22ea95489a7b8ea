"""Neural-network ONNX ops → core: matmul/Gemm, convolutions, pooling, normalizations, softmax.

Core has no implicit broadcasting, no auto_pad and no ceil_mode, so every
such convenience of ONNX is resolved here into explicit numbers from the
static shapes: batch dims are broadcast before `core.matmul`, `auto_pad` and
`ceil_mode` become `pad_low`/`pad_high`, averages become a sum pool divided by
a count computed at compile time. Normalizations and softmax are compositions
of reduce, broadcast and elementwise ops (fusion recovers the speed later).
Dynamic dims are carried along where only the batch is dynamic; where a
dynamic dim would decide a number that core needs statically, the handler
raises `LoweringError` naming it.
"""

from __future__ import annotations

import math as pymath
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import Float32Type, IntegerType, StringAttr, i32, i64
from xdsl.ir import Attribute, Operation, SSAValue

from rung.dialects import core
from rung.dialects.onnx import OnnxOp

from .builder import (
    CoreBuilder,
    LoweringError,
    as_onnx,
    constant_array,
    element_of,
    int_attr,
    normalize_axis,
    ranked_shape,
    tensor,
)
from .registry import Results, lowers

# ---- helpers ------------------------------------------------------------------------------


def _ints_attr(op: OnnxOp, name: str, default: Sequence[int]) -> list[int]:
    value = op.attr(name)
    if value is None:
        return list(default)
    return [int(v) for v in value]  # type: ignore[union-attr]


def _acc_type(element: Attribute) -> Attribute:
    """The accumulation type: i32 for 8-bit (and other narrow) ints, else the element type."""
    if isinstance(element, IntegerType) and element.width.data < 32:
        return i32
    return element


def _shape_vector(b: CoreBuilder, source: SSAValue, spec: Sequence[int | str]) -> SSAValue:
    """A 1-D i64 shape whose entries are constants (ints) or `"d<i>"`: dim i of `source`.

    This is how a dynamic dim (a batch) is carried into a reshape or broadcast.
    """
    picks = [int(s[1:]) if isinstance(s, str) else 0 for s in spec]
    consts = np.array([0 if isinstance(s, str) else s for s in spec], dtype=np.int64)
    mask = np.array([isinstance(s, str) for s in spec])
    shape = b.shape_of(source)
    gather = core.GatherOp.create(
        operands=[shape, b.constant(np.array(picks, dtype=np.int64))],
        result_types=[tensor(i64, [len(spec)])],
        properties={"axis": int_attr(0)},
    )
    dims = b.insert(gather).results[0]
    if mask.all():
        return dims
    return b.select(b.constant(mask), dims, b.constant(consts))


def _static_spec(source: SSAValue, spec: Sequence[int | str]) -> list[int]:
    """The static shape a spec describes, -1 where it copies a dynamic dim."""
    shape = ranked_shape(source)
    return [shape[int(s[1:])] if isinstance(s, str) else s for s in spec]


def _reshape(b: CoreBuilder, x: SSAValue, source: SSAValue, spec: Sequence[int | str]) -> SSAValue:
    """Reshape `x` to `spec` (see `_shape_vector`), dynamic dims taken from `source`."""
    out = _static_spec(source, spec)
    result = tensor(element_of(x.type), out)
    if all(d >= 0 for d in out):
        return b.reshape(x, result)
    return b.reshape(x, result, _shape_vector(b, source, spec))


def _expand(b: CoreBuilder, x: SSAValue, dims: Sequence[int], like: SSAValue) -> SSAValue:
    """Broadcast `x` into the shape of `like`; `dims[i]` is the result dim of x's dim i."""
    out = ranked_shape(like)
    result = tensor(element_of(x.type), out)
    if x.type == result and list(dims) == list(range(len(out))):
        return x
    operands = [x]
    if any(d < 0 for d in out):
        operands.append(b.shape_of(like))
    op = core.BroadcastOp.create(
        operands=operands, result_types=[result], properties={"dims": core.ints(dims)}
    )
    return b.insert(op).results[0]


def _reduce_keep(b: CoreBuilder, fn: str, x: SSAValue, axes: Sequence[int]) -> SSAValue:
    """Reduce `axes` and broadcast the result back over them (keepdims, then expand)."""
    rank = len(ranked_shape(x))
    reduced = b.reduce(fn, x, axes)
    kept = [i for i in range(rank) if i not in set(axes)]
    return _expand(b, reduced, kept, x)


def _mean_keep(b: CoreBuilder, x: SSAValue, axes: Sequence[int]) -> SSAValue:
    shape = ranked_shape(x)
    count = 1
    for a in axes:
        if shape[a] < 0:
            raise LoweringError(f"a mean over dynamic dim {a} is not supported")
        count *= shape[a]
    total = _reduce_keep(b, "sum", x, axes)
    return b.binary("div", total, b.splat(count, total))


def _channel(b: CoreBuilder, v: SSAValue, x: SSAValue, axis: int = 1) -> SSAValue:
    """A per-channel vector [C] broadcast along `axis` of `x`."""
    return _expand(b, v, [axis], x)


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
    shape = ranked_shape(x)
    if len(shape) < 3:
        raise LoweringError(f"{what} needs an input of rank >= 3, got {len(shape)}")
    spatial = list(shape[2:])
    if any(d < 0 for d in spatial):
        raise LoweringError(f"{what} with dynamic spatial dims {spatial} is not supported")
    return spatial


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
            out = -(-d // s)
            total = max(0, (out - 1) * s + (k - 1) * dil + 1 - d)
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
    return (d + lo + hi - dil * (k - 1) - 1) // s + 1


# ---- matmul family ---------------------------------------------------------------------


def _matmul(
    b: CoreBuilder, lhs: SSAValue, rhs: SSAValue, result: Attribute, acc: Attribute
) -> SSAValue:
    """numpy matmul: 1-D operands get a unit dim, batch dims are broadcast explicitly."""
    a_shape, b_shape = ranked_shape(lhs), ranked_shape(rhs)
    element = element_of(result)
    a1, b1 = len(a_shape) == 1, len(b_shape) == 1
    if a1:
        lhs = b.reshape(lhs, tensor(element_of(lhs.type), [1, a_shape[0]]))
        a_shape = (1, a_shape[0])
    if b1:
        rhs = b.reshape(rhs, tensor(element_of(rhs.type), [b_shape[0], 1]))
        b_shape = (b_shape[0], 1)
    # The batch dims, broadcast like numpy (right-aligned).
    ab, bb = a_shape[:-2], b_shape[:-2]
    rank = max(len(ab), len(bb))
    ab_full = (1,) * (rank - len(ab)) + ab
    bb_full = (1,) * (rank - len(bb)) + bb
    batch: list[int] = []
    spec_a: list[int | str] = []
    spec_b: list[int | str] = []
    for i, (da, db) in enumerate(zip(ab_full, bb_full, strict=True)):
        ia, ib = i - (rank - len(ab)), i - (rank - len(bb))
        if da == db:
            batch.append(da)
            ref: int | str = da if da >= 0 else f"d{ia}"
            spec_a.append(ref)
            spec_b.append(ref if da >= 0 else ("b" + str(ib)))
        elif da == 1:
            batch.append(db)
            spec_a.append(db if db >= 0 else "b" + str(ib))
            spec_b.append(db if db >= 0 else "b" + str(ib))
        elif db == 1:
            batch.append(da)
            spec_a.append(da if da >= 0 else f"d{ia}")
            spec_b.append(da if da >= 0 else f"d{ia}")
        else:
            raise LoweringError(f"matmul batch dims {da} and {db} cannot be broadcast")

    def bring(v: SSAValue, shape: tuple[int, ...], spec: list[int | str]) -> SSAValue:
        target = [*batch, *shape[-2:]]
        if list(shape) == target:
            return v
        out = tensor(element_of(v.type), target)
        dims = list(range(rank - (len(shape) - 2), rank + 2))
        operands = [v]
        if any(d < 0 for d in target):
            # Every dynamic batch dim comes from lhs ("d") or rhs ("b").
            srcs = {s[0] for s in spec if isinstance(s, str)}
            if len(srcs) != 1:
                raise LoweringError("matmul with dynamic batch dims on both operands")
            src = lhs if "d" in srcs else rhs
            full = [s if not isinstance(s, str) else "d" + s[1:] for s in spec]
            full += [d for d in shape[-2:]]
            if any(isinstance(d, int) and d < 0 for d in full):
                raise LoweringError("matmul with dynamic matrix dims needing a broadcast")
            operands.append(_shape_vector(b, src, full))
        op = core.BroadcastOp.create(
            operands=operands, result_types=[out], properties={"dims": core.ints(dims)}
        )
        return b.insert(op).results[0]

    lhs2 = bring(lhs, a_shape, spec_a)
    rhs2 = bring(rhs, b_shape, spec_b)
    out_shape = [*batch, a_shape[-2], b_shape[-1]]
    mm = core.MatmulOp.create(
        operands=[lhs2, rhs2],
        result_types=[tensor(element, out_shape)],
        properties={"acc": acc},
    )
    value = b.insert(mm).results[0]
    if a1 or b1:
        final = [*batch] + ([] if a1 else [a_shape[-2]]) + ([] if b1 else [b_shape[-1]])
        if any(d < 0 for d in batch):
            spec: list[int | str] = [f"d{i}" for i in range(len(batch))]
            spec += ([] if a1 else [a_shape[-2]]) + ([] if b1 else [b_shape[-1]])
            value = _reshape(b, value, value, spec)
        else:
            value = b.reshape(value, tensor(element, final))
    return value


@lowers("MatMul")
def matmul(b: CoreBuilder, op: Operation) -> Results:
    a, c = as_onnx(op).onnx_inputs()
    assert a is not None and c is not None
    result = op.results[0].type
    return [_matmul(b, a, c, result, _acc_type(element_of(result)))]


@lowers("MatMulInteger")
def matmul_integer(b: CoreBuilder, op: Operation) -> Results:
    """(A - a_zero_point) × (B - b_zero_point) in i32; A's 1-D zero point is per row."""
    a, c, a_zp, b_zp = (list(as_onnx(op).onnx_inputs()) + [None, None])[:4]
    assert a is not None and c is not None
    a32, c32 = b.cast(a, i32), b.cast(c, i32)
    if a_zp is not None:
        zp = b.cast(a_zp, i32)
        zshape = ranked_shape(zp)
        if len(zshape) == 1 and zshape[0] != 1 and len(ranked_shape(a)) >= 2:
            zp = b.reshape(zp, tensor(i32, [zshape[0], 1]))
        a32 = b.binary("sub", a32, b.broadcast_to(zp, a32.type, a32))
    if b_zp is not None:
        zp = b.cast(b_zp, i32)
        c32 = b.binary("sub", c32, b.broadcast_to(zp, c32.type, c32))
    return [_matmul(b, a32, c32, op.results[0].type, i32)]


@lowers("Gemm")
def gemm(b: CoreBuilder, op: Operation) -> Results:
    """alpha * A' × B' + beta * C, with C broadcast to the result."""
    o = as_onnx(op)
    a, c, bias = (list(o.onnx_inputs()) + [None])[:3]
    assert a is not None and c is not None
    if o.attr("transA"):
        a = b.transpose(a, [1, 0])
    if o.attr("transB"):
        c = b.transpose(c, [1, 0])
    result = op.results[0].type
    y = _matmul(b, a, c, result, _acc_type(element_of(result)))
    alpha, beta = float(o.attr("alpha")), float(o.attr("beta"))  # type: ignore[arg-type]
    if alpha != 1.0:
        y = b.binary("mul", y, b.splat(alpha, y))
    if bias is not None and beta != 0.0:
        cb = b.broadcast_to(bias, y.type, y)
        if beta != 1.0:
            cb = b.binary("mul", cb, b.splat(beta, cb))
        y = b.binary("add", y, cb)
    return [y]


# ---- convolutions ----------------------------------------------------------------------


def _conv_params(
    o: OnnxOp, x: SSAValue, w: SSAValue, what: str
) -> tuple[list[int], list[int], list[int], list[int], list[int], list[int]]:
    """(spatial, kernel, strides, dilations, pad_low, pad_high) of a Conv-like op."""
    spatial = _spatial(x, what)
    n = len(spatial)
    kernel = _ints_attr(o, "kernel_shape", ranked_shape(w)[2:])
    if any(k < 0 for k in kernel):
        raise LoweringError(f"{what} with a dynamic kernel shape")
    strides = _ints_attr(o, "strides", [1] * n)
    dilations = _ints_attr(o, "dilations", [1] * n)
    pads = _ints_attr(o, "pads", [0] * 2 * n)
    low, high = _auto_pads(str(o.attr("auto_pad")), spatial, kernel, strides, dilations, pads)
    return spatial, kernel, strides, dilations, low, high


def _conv(
    b: CoreBuilder, o: OnnxOp, x: SSAValue, w: SSAValue, element: Attribute, acc: Attribute
) -> SSAValue:
    spatial, kernel, strides, dilations, low, high = _conv_params(o, x, w, o.name)
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
            "groups": int_attr(int(o.attr("group"))),  # type: ignore[arg-type]
            "layout": StringAttr("NCHW"),
            "acc": acc,
        },
    )
    return b.insert(conv).results[0]


@lowers("Conv")
def conv(b: CoreBuilder, op: Operation) -> Results:
    o = as_onnx(op)
    x, w, bias = (list(o.onnx_inputs()) + [None])[:3]
    assert x is not None and w is not None
    element = element_of(op.results[0].type)
    y = _conv(b, o, x, w, element, _acc_type(element))
    if bias is not None:
        y = b.binary("add", y, _channel(b, bias, y))
    return [y]


@lowers("ConvInteger")
def conv_integer(b: CoreBuilder, op: Operation) -> Results:
    """(x - x_zero_point) ⋆ (w - w_zero_point) in i32; w's zero point may be per channel."""
    o = as_onnx(op)
    x, w, x_zp, w_zp = (list(o.onnx_inputs()) + [None, None])[:4]
    assert x is not None and w is not None
    x32, w32 = b.cast(x, i32), b.cast(w, i32)
    if x_zp is not None:
        zp = b.cast(x_zp, i32)
        if len(ranked_shape(zp)) == 1:
            zp = b.reshape(zp, tensor(i32, []))
        x32 = b.binary("sub", x32, _expand(b, zp, [], x32))
    if w_zp is not None:
        zp = b.cast(w_zp, i32)
        zshape = ranked_shape(zp)
        if len(zshape) == 1 and zshape[0] == 1:
            zp = b.reshape(zp, tensor(i32, []))
        dims = [0] if len(ranked_shape(zp)) == 1 else []
        w32 = b.binary("sub", w32, _expand(b, zp, dims, w32))
    return [_conv(b, o, x32, w32, i32, i32)]


@lowers("ConvTranspose")
def conv_transpose(b: CoreBuilder, op: Operation) -> Results:
    """output_shape/auto_pad become explicit pads; output_padding a negative pad_high."""
    o = as_onnx(op)
    x, w, bias = (list(o.onnx_inputs()) + [None])[:3]
    assert x is not None and w is not None
    spatial = _spatial(x, "ConvTranspose")
    n = len(spatial)
    kernel = _ints_attr(o, "kernel_shape", ranked_shape(w)[2:])
    strides = _ints_attr(o, "strides", [1] * n)
    dilations = _ints_attr(o, "dilations", [1] * n)
    out_pad = _ints_attr(o, "output_padding", [0] * n)
    output_shape = o.attr("output_shape")
    auto_pad = str(o.attr("auto_pad"))
    pads_attr = o.attr("pads")
    full = [
        s * (d - 1) + op_ + (k - 1) * dil + 1
        for d, k, s, dil, op_ in zip(spatial, kernel, strides, dilations, out_pad, strict=True)
    ]
    if pads_attr is None and (output_shape is not None or auto_pad in ("SAME_UPPER", "SAME_LOWER")):
        if output_shape is not None:
            target = [int(v) for v in output_shape][-n:]  # type: ignore[union-attr]
        else:
            target = [d * s for d, s in zip(spatial, strides, strict=True)]
        low, high = [], []
        for f, t in zip(full, target, strict=True):
            total = f - t
            if auto_pad == "SAME_UPPER":
                low.append(total // 2)
                high.append(total - total // 2)
            else:
                low.append(total - total // 2)
                high.append(total // 2)
    elif auto_pad == "VALID" or pads_attr is None:
        low, high = [0] * n, [0] * n
    else:
        pads = [int(v) for v in pads_attr]  # type: ignore[union-attr]
        low, high = pads[:n], pads[n:]
    out = [f - lo - hi for f, lo, hi in zip(full, low, high, strict=True)]
    groups = int(o.attr("group"))  # type: ignore[arg-type]
    element = element_of(op.results[0].type)
    result = tensor(element, [ranked_shape(x)[0], ranked_shape(w)[1] * groups, *out])
    ct = core.ConvTransposeOp.create(
        operands=[x, w],
        result_types=[result],
        properties={
            "strides": core.ints(strides),
            "dilations": core.ints(dilations),
            "pad_low": core.ints(low),
            "pad_high": core.ints([h - p for h, p in zip(high, out_pad, strict=True)]),
            "groups": int_attr(groups),
            "acc": _acc_type(element),
        },
    )
    y = b.insert(ct).results[0]
    if bias is not None:
        y = b.binary("add", y, _channel(b, bias, y))
    return [y]


# ---- pooling ----------------------------------------------------------------------------


class _PoolGeometry:
    """Window, strides, pads and output size of an ONNX pooling op, ceil_mode resolved."""

    def __init__(self, o: OnnxOp, x: SSAValue) -> None:
        self.spatial = _spatial(x, o.name)
        n = len(self.spatial)
        self.kernel = _ints_attr(o, "kernel_shape", [])
        if len(self.kernel) != n:
            raise LoweringError(f"kernel_shape {self.kernel} does not fit {n} spatial dims")
        self.strides = _ints_attr(o, "strides", [1] * n)
        self.dilations = _ints_attr(o, "dilations", [1] * n)
        pads = _ints_attr(o, "pads", [0] * 2 * n)
        auto_pad = str(o.attr("auto_pad"))
        self.low, self.high = _auto_pads(
            auto_pad, self.spatial, self.kernel, self.strides, self.dilations, pads
        )
        self.explicit_high = list(self.high)
        try:
            ceil_mode = bool(o.attr("ceil_mode"))
        except KeyError:
            ceil_mode = False
        self.out: list[int] = []
        for i in range(n):
            d, k, s, dil = self.spatial[i], self.kernel[i], self.strides[i], self.dilations[i]
            lo, hi = self.low[i], self.high[i]
            extent = (k - 1) * dil + 1
            span = d + lo + hi - extent
            size = (-(-span // s) if ceil_mode else span // s) + 1
            if ceil_mode and (size - 1) * s >= d + lo:
                size -= 1  # the last window must start inside the input or the low pad
            self.out.append(size)
            extra = (size - 1) * s + extent - (d + lo + hi)
            if extra > 0:
                self.high[i] = hi + extra

    def pool(self, b: CoreBuilder, kind: str, x: SSAValue) -> SSAValue:
        return _pool(
            b, kind, x, self.kernel, self.strides, self.dilations, self.low, self.high, self.out
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


def _divide_by_counts(b: CoreBuilder, total: SSAValue, counts: np.ndarray) -> SSAValue:
    if np.all(counts == counts.flat[0]):
        return b.binary("div", total, b.splat(float(counts.flat[0]), total))
    rank = len(ranked_shape(total))
    c = b.constant(counts, like=total.type)
    return b.binary("div", total, _expand(b, c, list(range(2, rank)), total))


@lowers("MaxPool")
def max_pool(b: CoreBuilder, op: Operation) -> Results:
    o = as_onnx(op)
    (x,) = [v for v in o.onnx_inputs() if v is not None]
    outputs = o.onnx_outputs()
    if len(outputs) > 1 and outputs[1] is not None:
        raise LoweringError("MaxPool's Indices output is not supported")
    return [_PoolGeometry(o, x).pool(b, "max", x)]


@lowers("AveragePool")
def average_pool(b: CoreBuilder, op: Operation) -> Results:
    """Sum pool divided by the number of counted elements of each window."""
    o = as_onnx(op)
    (x,) = [v for v in o.onnx_inputs() if v is not None]
    geometry = _PoolGeometry(o, x)
    total = geometry.pool(b, "sum", x)
    return [_divide_by_counts(b, total, geometry.counts(bool(o.attr("count_include_pad"))))]


@lowers("LpPool")
def lp_pool(b: CoreBuilder, op: Operation) -> Results:
    """(sum |x|^p)^(1/p) over each window; zero padding adds nothing."""
    o = as_onnx(op)
    (x,) = [v for v in o.onnx_inputs() if v is not None]
    p = int(o.attr("p"))  # type: ignore[arg-type]
    powered = _lp_power(b, x, p)
    total = _PoolGeometry(o, x).pool(b, "sum", powered)
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
    spatial = _spatial(x, "global pooling")
    n = len(spatial)
    return _pool(b, kind, x, spatial, [1] * n, [1] * n, [0] * n, [0] * n, [1] * n)


@lowers("GlobalMaxPool")
def global_max_pool(b: CoreBuilder, op: Operation) -> Results:
    (x,) = as_onnx(op).onnx_inputs()
    assert x is not None
    return [_global(b, "max", x)]


@lowers("GlobalAveragePool")
def global_average_pool(b: CoreBuilder, op: Operation) -> Results:
    (x,) = as_onnx(op).onnx_inputs()
    assert x is not None
    total = _global(b, "sum", x)
    return [b.binary("div", total, b.splat(float(np.prod(ranked_shape(x)[2:])), total))]


@lowers("GlobalLpPool")
def global_lp_pool(b: CoreBuilder, op: Operation) -> Results:
    o = as_onnx(op)
    (x,) = o.onnx_inputs()
    assert x is not None
    p = int(o.attr("p"))  # type: ignore[arg-type]
    return [_lp_root(b, _global(b, "sum", _lp_power(b, x, p)), p)]


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


@lowers("BatchNormalization")
def batch_norm(b: CoreBuilder, op: Operation) -> Results:
    """Inference: per-channel scale and shift (folded when the statistics are constants).

    Training mode normalizes with the batch statistics and also returns the
    updated running mean and variance.
    """
    o = as_onnx(op)
    x, scale, bias, mean, var = o.onnx_inputs()
    assert x is not None and scale is not None and bias is not None
    assert mean is not None and var is not None
    eps = float(o.attr("epsilon"))  # type: ignore[arg-type]
    if o.attr("training_mode"):
        rank = len(ranked_shape(x))
        axes = [0, *range(2, rank)]
        normed, batch_mean, _ = _normalize(b, x, axes, eps)
        y = b.binary("add", b.binary("mul", normed, _channel(b, scale, x)), _channel(b, bias, x))
        momentum = float(o.attr("momentum"))  # type: ignore[arg-type]
        cur_mean = b.reduce("sum", batch_mean, axes)  # each entry repeated `count` times
        count = float(np.prod([ranked_shape(x)[a] for a in axes]))
        if count < 0 or any(ranked_shape(x)[a] < 0 for a in axes):
            raise LoweringError("training-mode BatchNormalization with dynamic dims")
        cur_mean = b.binary("div", cur_mean, b.splat(count, cur_mean))
        centered = b.binary("sub", x, batch_mean)
        cur_var = b.reduce("sum", b.binary("mul", centered, centered), axes)
        cur_var = b.binary("div", cur_var, b.splat(count, cur_var))

        def running(old: SSAValue, new: SSAValue) -> SSAValue:
            return b.binary(
                "add",
                b.binary("mul", old, b.splat(momentum, old)),
                b.binary("mul", new, b.splat(1.0 - momentum, new)),
            )

        outputs = o.onnx_outputs()
        results: list[SSAValue | None] = [y]
        results.append(running(mean, cur_mean) if len(outputs) > 1 and outputs[1] else None)
        results.append(running(var, cur_var) if len(outputs) > 2 and outputs[2] else None)
        return results
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


@lowers("InstanceNormalization")
def instance_norm(b: CoreBuilder, op: Operation) -> Results:
    o = as_onnx(op)
    x, scale, bias = o.onnx_inputs()
    assert x is not None and scale is not None and bias is not None
    axes = list(range(2, len(ranked_shape(x))))
    normed, _, _ = _normalize(b, x, axes, float(o.attr("epsilon")))  # type: ignore[arg-type]
    return [b.binary("add", b.binary("mul", normed, _channel(b, scale, x)), _channel(b, bias, x))]


def _stash(b: CoreBuilder, x: SSAValue, stash_type: int) -> SSAValue:
    """The computation type of LayerNorm/GroupNorm (stash_type 1 = float32)."""
    if stash_type == 1:
        return b.cast(x, Float32Type())
    return x


def _keepdims(
    b: CoreBuilder, v: SSAValue, result: Attribute, x: SSAValue, axes: Sequence[int]
) -> SSAValue:
    """`v` (full shape, constant along `axes`) reduced to `result`'s keepdims shape."""
    shape = ranked_shape(x)
    picked = b.reduce("max", v, axes)  # the values are equal along axes
    spec: list[int | str] = [
        1 if i in axes else (shape[i] if shape[i] >= 0 else f"d{i}") for i in range(len(shape))
    ]
    return b.cast(_reshape(b, picked, x, spec), element_of(result))


@lowers("LayerNormalization")
def layer_norm(b: CoreBuilder, op: Operation) -> Results:
    """Normalizes over the dims from `axis` on; Mean and InvStdDev keep those dims as 1."""
    o = as_onnx(op)
    x, scale, bias = (list(o.onnx_inputs()) + [None])[:3]
    assert x is not None and scale is not None
    rank = len(ranked_shape(x))
    axis = normalize_axis(int(o.attr("axis")), rank)  # type: ignore[arg-type]
    axes = list(range(axis, rank))
    xs = _stash(b, x, int(o.attr("stash_type")))  # type: ignore[arg-type]
    normed, mean, inv_std = _normalize(b, xs, axes, float(o.attr("epsilon")))  # type: ignore[arg-type]
    y = b.cast(normed, element_of(x.type))
    y = b.binary("mul", y, b.broadcast_to(scale, y.type, y))
    if bias is not None:
        y = b.binary("add", y, b.broadcast_to(bias, y.type, y))
    outputs = o.onnx_outputs()
    results: list[SSAValue | None] = [y]
    for i, v in ((1, mean), (2, inv_std)):
        if len(outputs) > i and outputs[i] is not None:
            results.append(_keepdims(b, v, outputs[i].type, xs, axes))  # type: ignore[union-attr]
    return results


@lowers("GroupNormalization")
def group_norm(b: CoreBuilder, op: Operation) -> Results:
    """Reshape to [N, G, rest], normalize over rest, reshape back, per-channel scale/bias."""
    o = as_onnx(op)
    x, scale, bias = o.onnx_inputs()
    assert x is not None and scale is not None and bias is not None
    shape = ranked_shape(x)
    groups = int(o.attr("num_groups"))  # type: ignore[arg-type]
    rest = shape[1:]
    if any(d < 0 for d in rest):
        raise LoweringError("GroupNormalization with dynamic channel or spatial dims")
    size = int(np.prod(rest)) // groups
    xs = _stash(b, x, int(o.attr("stash_type")))  # type: ignore[arg-type]
    n: int | str = shape[0] if shape[0] >= 0 else "d0"
    grouped = _reshape(b, xs, xs, [n, groups, size])
    normed, _, _ = _normalize(b, grouped, [2], float(o.attr("epsilon")))  # type: ignore[arg-type]
    back = _reshape(b, normed, xs, [n, *rest])
    y = b.cast(back, element_of(x.type))
    if len(ranked_shape(scale)) == 1 and ranked_shape(scale)[0] == groups and groups != shape[1]:
        raise LoweringError("GroupNormalization-18 per-group scale is not supported")
    return [b.binary("add", b.binary("mul", y, _channel(b, scale, y)), _channel(b, bias, y))]


@lowers("LpNormalization")
def lp_normalization(b: CoreBuilder, op: Operation) -> Results:
    o = as_onnx(op)
    (x,) = o.onnx_inputs()
    assert x is not None
    axis = normalize_axis(int(o.attr("axis")), len(ranked_shape(x)))  # type: ignore[arg-type]
    p = int(o.attr("p"))  # type: ignore[arg-type]
    if p not in (1, 2):
        raise LoweringError(f"LpNormalization with p={p} (only 1 and 2 exist)")
    norm = _lp_root(b, _reduce_keep(b, "sum", _lp_power(b, x, p), [axis]), p)
    zero = b.splat(0, x)
    # A zero vector stays zero (ONNX's reference), instead of 0/0 = NaN.
    return [b.select(b.compare("eq", norm, zero), zero, b.binary("div", x, norm))]


@lowers("MeanVarianceNormalization")
def mean_variance_normalization(b: CoreBuilder, op: Operation) -> Results:
    """ONNX's function body: (x - E[x]) / (sqrt(E[x²] - E[x]²) + 1e-9)."""
    o = as_onnx(op)
    (x,) = o.onnx_inputs()
    assert x is not None
    rank = len(ranked_shape(x))
    axes = sorted(normalize_axis(a, rank) for a in _ints_attr(o, "axes", [0, 2, 3]))
    mean = _mean_keep(b, x, axes)
    mean_sq = _mean_keep(b, b.binary("mul", x, x), axes)
    std = b.unary("sqrt", b.binary("sub", mean_sq, b.binary("mul", mean, mean)))
    return [b.binary("div", b.binary("sub", x, mean), b.binary("add", std, b.splat(1e-9, std)))]


# ---- softmax family ---------------------------------------------------------------------


def _axis(o: OnnxOp, x: SSAValue) -> int:
    return normalize_axis(int(o.attr("axis")), len(ranked_shape(x)))  # type: ignore[arg-type]


@lowers("Softmax")
def softmax(b: CoreBuilder, op: Operation) -> Results:
    """exp(x - max) / sum(exp(x - max)) along `axis`."""
    o = as_onnx(op)
    (x,) = o.onnx_inputs()
    assert x is not None
    axis = _axis(o, x)
    e = b.unary("exp", b.binary("sub", x, _reduce_keep(b, "max", x, [axis])))
    return [b.binary("div", e, _reduce_keep(b, "sum", e, [axis]))]


@lowers("LogSoftmax")
def log_softmax(b: CoreBuilder, op: Operation) -> Results:
    """(x - max) - log(sum(exp(x - max))) along `axis`."""
    o = as_onnx(op)
    (x,) = o.onnx_inputs()
    assert x is not None
    axis = _axis(o, x)
    shifted = b.binary("sub", x, _reduce_keep(b, "max", x, [axis]))
    total = _reduce_keep(b, "sum", b.unary("exp", shifted), [axis])
    return [b.binary("sub", shifted, b.unary("log", total))]


@lowers("Hardmax")
def hardmax(b: CoreBuilder, op: Operation) -> Results:
    """1 where the index along `axis` equals the (first) argmax, else 0."""
    o = as_onnx(op)
    (x,) = o.onnx_inputs()
    assert x is not None
    axis = _axis(o, x)
    shape = ranked_shape(x)
    if shape[axis] < 0:
        raise LoweringError("Hardmax along a dynamic dim")
    arg = core.ArgReduceOp.create(
        operands=[x],
        result_types=[tensor(i64, [d for i, d in enumerate(shape) if i != axis])],
        properties={"fn": StringAttr("max"), "axis": int_attr(axis), "last": int_attr(0)},
    )
    index = b.insert(arg).results[0]
    iota = b.constant(np.arange(shape[axis], dtype=np.int64))
    positions = _expand(b, iota, [axis], x)
    chosen = _expand(b, index, [i for i in range(len(shape)) if i != axis], positions)
    hit = b.compare("eq", positions, chosen)
    return [b.select(hit, b.splat(1, x), b.splat(0, x))]


@lowers("LRN")
def lrn(b: CoreBuilder, op: Operation) -> Results:
    """x / (bias + alpha/size * sum of x² over a channel window)^beta.

    The channel window sum is a sum pool over a unit-channel view [N, 1, C, …].
    """
    o = as_onnx(op)
    (x,) = o.onnx_inputs()
    assert x is not None
    shape = ranked_shape(x)
    if any(d < 0 for d in shape[1:]):
        raise LoweringError("LRN with dynamic channel or spatial dims")
    size = int(o.attr("size"))  # type: ignore[arg-type]
    alpha, beta = float(o.attr("alpha")), float(o.attr("beta"))  # type: ignore[arg-type]
    bias = float(o.attr("bias"))  # type: ignore[arg-type]
    n: int | str = shape[0] if shape[0] >= 0 else "d0"
    squared = b.binary("mul", x, x)
    view = _reshape(b, squared, x, [n, 1, *shape[1:]])
    rest = len(shape) - 1
    low = [(size - 1) // 2] + [0] * (rest - 1)
    high = [pymath.ceil((size - 1) / 2)] + [0] * (rest - 1)
    window = [size] + [1] * (rest - 1)
    summed = _pool(b, "sum", view, window, [1] * rest, [1] * rest, low, high, list(shape[1:]))
    summed = _reshape(b, summed, x, [n, *shape[1:]])
    base = b.binary(
        "add", b.splat(bias, summed), b.binary("mul", summed, b.splat(alpha / size, summed))
    )
    return [b.binary("div", x, b.binary("pow", base, b.splat(beta, base)))]


@lowers("Dropout")
def dropout(b: CoreBuilder, op: Operation) -> Results:
    """Inference: the identity, and a mask of all true; training mode is refused."""
    o = as_onnx(op)
    x, _ratio, training = (list(o.onnx_inputs()) + [None, None])[:3]
    assert x is not None
    if training is not None:
        flag = constant_array(training)
        ratio = constant_array(_ratio) if _ratio is not None else np.array(0.5)
        zero_ratio = ratio is not None and float(np.asarray(ratio).reshape(-1)[0]) == 0.0
        if (flag is None or bool(np.asarray(flag).reshape(-1)[0])) and not zero_ratio:
            raise LoweringError("Dropout in training mode (random masks) is not supported")
    outputs = o.onnx_outputs()
    if len(outputs) > 1 and outputs[1] is not None:
        return [x, _expand(b, b.constant(np.array(True)), [], x)]
    return [x]
