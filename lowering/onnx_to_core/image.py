"""Image ONNX ops → core: Resize.

Resize is separable: every output element along one axis is a weighted sum
of a few input elements along that axis (the taps), and the weights depend
only on the output position, the lengths, the scale and the attributes. Per
resized axis the handler builds, with core ops, what the ONNX reference
(`onnx.reference.ops.op_resize`) computes in numpy: the source coordinate of
every output position (an iota through the coordinate transformation), the
indices `[out, n]` of its `n` taps and their weights `[out, n]`. Then one
`core.gather` takes the taps and a weighted sum reduces them (nearest needs
only the gather of one tap, which keeps it exact for every dtype).

The same ops serve constant and run-time roi / scales / sizes. With
constants (and static input lengths) the tables have static shapes, and
`core-fold-constants` folds their computation into constants. With run-time
values they are computed when the model runs: output lengths (and the
antialias tap count, which depends on the scale) become `?` dims, passed as
operands to the ops that need them.
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import Float64Type, IntegerType, i64
from xdsl.ir import Attribute, SSAValue

from rung.dialects import core
from rung.dialects.dtypes import numpy_dtype
from rung.dialects.onnx import generated_ops as onnx
from rung.lowering.kit import (
    CoreBuilder,
    LoweringError,
    constant_array,
    element_of,
    int_attr,
    normalize_axis,
    ranked_shape,
    shape_of_type,
    tensor,
)

from .registry import Results, lowers

F64 = Float64Type()
I1 = IntegerType(1)

# ---- formulas over core values ---------------------------------------------------------------


@dataclass(frozen=True)
class Expr:
    """A core value with Python operators, so the reference's formulas read as they do there.

    Python numbers become constants of the value's element type; a value of
    lower rank (a rank-0 scale, a length) is broadcast to the other operand.
    `shape` is the run-time shape of a value with `?` dims, computed once
    where the value's shape is made and shared by everything derived from it.
    """

    b: CoreBuilder
    v: SSAValue
    shape: SSAValue | None = None

    @property
    def rank(self) -> int:
        return len(ranked_shape(self.v))

    @property
    def element(self) -> Attribute:
        return element_of(self.v.type)

    def _like(self, other: Expr | float) -> Expr:
        """The operand whose shape a result of both has."""
        return other if isinstance(other, Expr) and other.rank > self.rank else self

    def _binary(self, fn: str, other: Expr | float, swap: bool = False) -> Expr:
        like = self._like(other)
        lhs, rhs = (_lift(e, self.element, like) for e in (self, other))
        v = self.b.binary(fn, *((rhs, lhs) if swap else (lhs, rhs)))
        return Expr(self.b, v, like.shape)

    def _compare(self, pred: str, other: Expr | float) -> Expr:
        like = self._like(other)
        lhs, rhs = (_lift(e, self.element, like) for e in (self, other))
        return Expr(self.b, self.b.compare(pred, lhs, rhs), like.shape)

    def __add__(self, o: Expr | float) -> Expr:
        return self._binary("add", o)

    def __radd__(self, o: float) -> Expr:
        return self._binary("add", o, swap=True)

    def __sub__(self, o: Expr | float) -> Expr:
        return self._binary("sub", o)

    def __rsub__(self, o: float) -> Expr:
        return self._binary("sub", o, swap=True)

    def __mul__(self, o: Expr | float) -> Expr:
        return self._binary("mul", o)

    def __rmul__(self, o: float) -> Expr:
        return self._binary("mul", o, swap=True)

    def __truediv__(self, o: Expr | float) -> Expr:
        return self._binary("div", o)

    def __rtruediv__(self, o: float) -> Expr:
        return self._binary("div", o, swap=True)

    def __neg__(self) -> Expr:
        return self.unary("neg")

    def __or__(self, o: Expr) -> Expr:
        return self._binary("or", o)

    def max(self, o: Expr | float) -> Expr:
        return self._binary("max", o)

    def min(self, o: Expr | float) -> Expr:
        return self._binary("min", o)

    def eq(self, o: Expr | float) -> Expr:
        return self._compare("eq", o)

    def ne(self, o: Expr | float) -> Expr:
        return self._compare("ne", o)

    def lt(self, o: Expr | float) -> Expr:
        return self._compare("lt", o)

    def le(self, o: Expr | float) -> Expr:
        return self._compare("le", o)

    def gt(self, o: Expr | float) -> Expr:
        return self._compare("gt", o)

    def ge(self, o: Expr | float) -> Expr:
        return self._compare("ge", o)

    def unary(self, fn: str) -> Expr:
        return Expr(self.b, self.b.unary(fn, self.v), self.shape)

    def to(self, element: Attribute) -> Expr:
        return Expr(self.b, self.b.cast(self.v, element), self.shape)

    def column(self, table: Expr) -> Expr:
        """This `[out]` vector repeated along the taps of an `[out, n]` table."""
        v = _broadcast_dims(self.b, self.v, table.v, [0], table.shape)
        return Expr(self.b, v, table.shape)

    def row_sum(self) -> Expr:
        """Sum over the taps of an `[out, n]` table, repeated back to its shape."""
        return Expr(self.b, self.b.reduce("sum", self.v, [1])).column(self)


def _lift(x: Expr | float, element: Attribute, like: Expr) -> SSAValue:
    """`x` as a value of `like`'s shape: numbers become splats, rank-0 values broadcast."""
    b = like.b
    v = x.v if isinstance(x, Expr) else b.scalar(x, element)
    shape = ranked_shape(like.v)
    if len(ranked_shape(v)) == len(shape):
        return v
    return b.broadcast_to(v, tensor(element_of(v.type), shape), like=like.v, shape=like.shape)


def _where(cond: Expr, a: Expr | float, c: Expr | float) -> Expr:
    """`cond ? a : c` elementwise; numbers and lower-rank operands broadcast to the others.

    At least one of `a` and `c` is a value: it gives the element type.
    """
    exprs = [e for e in (cond, a, c) if isinstance(e, Expr)]
    like = max(exprs, key=lambda e: e.rank)
    element = next(e.element for e in (a, c) if isinstance(e, Expr))
    values = [_lift(e, element, like) for e in (a, c)]
    return Expr(cond.b, cond.b.select(_lift(cond, I1, like), *values), like.shape)


def _broadcast_dims(
    b: CoreBuilder, v: SSAValue, like: SSAValue, dims: Sequence[int], shape: SSAValue | None
) -> SSAValue:
    """`v` expanded to `like`'s shape (`shape` at run time), its dims mapped to `dims`."""
    result = tensor(element_of(v.type), ranked_shape(like))
    operands = [v]
    if any(d < 0 for d in ranked_shape(like)):
        operands.append(shape if shape is not None else b.shape_of(like))
    op = core.BroadcastOp.create(
        operands=operands, result_types=[result], properties={"dims": core.ints(dims)}
    )
    return b.insert(op).results[0]


# ---- lengths ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Length:
    """A dim length: `size` when known at compile time (else -1), and a rank-0 i64 value."""

    size: int
    value: SSAValue

    def expr(self, b: CoreBuilder) -> Expr:
        return Expr(b, self.value)


def _static_length(b: CoreBuilder, size: int) -> Length:
    return Length(size, b.scalar(size, i64))


def _length(b: CoreBuilder, value: Expr, declared: int = -1) -> Length:
    """A computed length, static when it folds to a constant or the declared type fixes it.

    ONNX types are contracts: a declared static output dim is the output
    length, even where it depends on run-time scales or sizes.
    """
    known = constant_array(value.v)
    if known is not None:
        return Length(int(known), value.v)
    if declared >= 0:
        return _static_length(b, declared)
    return Length(-1, value.v)


def _iota(b: CoreBuilder, lengths: Sequence[Length], dim: int) -> Expr:
    """Indices (i64) along `dim` of a tensor of the given lengths."""
    shape = [n.size for n in lengths]
    dynamic = [n.value for n in lengths if n.size < 0]
    new = core.IotaOp.create(
        operands=dynamic, result_types=[tensor(i64, shape)], properties={"dim": int_attr(dim)}
    )
    iota = b.insert(new).results[0]
    return Expr(b, iota, b.shape_of(iota) if dynamic else None)


def _entry(b: CoreBuilder, v: SSAValue, i: int, element: Attribute) -> Expr:
    """Entry `i` of a 1-D tensor, as a rank-0 value of `element`."""
    g = core.GatherOp.create(
        operands=[v, b.scalar(i, i64)],
        result_types=[tensor(element_of(v.type), [])],
        properties={"axis": int_attr(0)},
    )
    return Expr(b, b.insert(g).results[0]).to(element)


def _input_length(b: CoreBuilder, x: SSAValue, axis: int) -> Length:
    size = ranked_shape(x)[axis]
    if size >= 0:
        return _static_length(b, size)
    return Length(-1, _entry(b, b.shape_of(x), axis, i64).v)


# ---- the op's parameters ---------------------------------------------------------------------


@dataclass(frozen=True)
class Attrs:
    """Resize's attributes, their schema defaults filled in."""

    mode: str
    ctm: str
    nearest_mode: str
    cubic_a: float
    exclude_outside: bool
    extrapolation: float
    antialias: bool
    axes: list[int]
    policy: str


def _axes(o: onnx.ResizeOp, rank: int) -> list[int]:
    axes = o.attr("axes")
    if axes is None:
        return list(range(rank))
    return [normalize_axis(int(i), rank) for i in axes]  # type: ignore[attr-defined]


def _attrs(o: onnx.ResizeOp, rank: int) -> Attrs:
    a = Attrs(
        mode=str(o.attr("mode")),
        ctm=str(o.attr("coordinate_transformation_mode")),
        nearest_mode=str(o.attr("nearest_mode")),
        cubic_a=float(o.attr("cubic_coeff_a")),  # type: ignore[arg-type]
        exclude_outside=bool(o.attr("exclude_outside")),
        extrapolation=float(o.attr("extrapolation_value")),  # type: ignore[arg-type]
        antialias=bool(o.attr("antialias")),
        axes=_axes(o, rank),
        policy=str(o.attr("keep_aspect_ratio_policy")),
    )
    _check_attrs(a)
    return a


def _check_attrs(a: Attrs) -> None:
    if a.mode not in ("nearest", "linear", "cubic"):
        raise LoweringError(f"Resize: unknown mode {a.mode!r}")
    if a.mode == "nearest" and a.antialias:
        raise LoweringError("Resize: antialias is not defined for nearest")
    if a.mode == "nearest" and a.nearest_mode not in NEAREST_PICKS:
        raise LoweringError(f"Resize: unknown nearest_mode {a.nearest_mode!r}")
    if a.ctm not in COORDINATE_MODES:
        raise LoweringError(f"Resize: unknown coordinate_transformation_mode {a.ctm!r}")
    if a.policy not in ("stretch", "not_larger", "not_smaller"):
        raise LoweringError(f"Resize: unknown keep_aspect_ratio_policy {a.policy!r}")


@dataclass(frozen=True)
class Axis:
    """One resized axis: its input and output lengths, scale (rank-0 f64) and roi."""

    axis: int
    n_in: Length
    n_out: Length
    scale: Expr
    roi: tuple[Expr, Expr] | None


def _given(v: SSAValue | None) -> SSAValue | None:
    """An optional input, None when absent or statically empty (ONNX's "not given")."""
    if v is None:
        return None
    shape = shape_of_type(v.type)
    return None if shape is not None and 0 in shape else v


def _check_length(v: SSAValue, count: int, what: str) -> None:
    shape = shape_of_type(v.type)
    if shape is not None and len(shape) == 1 and shape[0] not in (-1, count):
        raise LoweringError(f"Resize: {what} must have {count} entries, has {shape[0]}")


def _axes_from_scales(
    b: CoreBuilder, x: SSAValue, scales: SSAValue, a: Attrs, declared: Sequence[int]
) -> list[tuple[Length, Expr, Length]]:
    """(input length, scale, output length) per axis; output = floor(scale * input)."""
    _check_length(scales, len(a.axes), "scales")
    out = []
    for i, axis in enumerate(a.axes):
        n_in = _input_length(b, x, axis)
        scale = _entry(b, scales, i, F64)
        known = constant_array(scale.v)
        if known is not None and float(known) == 1.0:
            n_out = n_in  # also keeps a dynamic dim (the batch) as it is
        else:
            n_out = _length(b, (scale * n_in.expr(b).to(F64)).to(i64), declared[axis])
        out.append((n_in, scale, n_out))
    return out


def _axes_from_sizes(
    b: CoreBuilder, x: SSAValue, sizes: SSAValue, a: Attrs, declared: Sequence[int]
) -> list[tuple[Length, Expr, Length]]:
    """(input length, scale, output length) per axis, the scales fitted to the policy."""
    _check_length(sizes, len(a.axes), "sizes")
    n_ins = [_input_length(b, x, axis) for axis in a.axes]
    wanted = [_entry(b, sizes, i, i64) for i in range(len(a.axes))]
    scales = [w.to(F64) / n.expr(b).to(F64) for w, n in zip(wanted, n_ins, strict=True)]
    if a.policy == "stretch":
        n_outs = [_length(b, w, declared[axis]) for w, axis in zip(wanted, a.axes, strict=True)]
        return list(zip(n_ins, scales, n_outs, strict=True))
    scale = scales[0]
    for s in scales[1:]:
        scale = scale.min(s) if a.policy == "not_larger" else scale.max(s)
    n_outs = [
        _length(b, (scale * n.expr(b).to(F64) + 0.5).to(i64), declared[axis])
        for n, axis in zip(n_ins, a.axes, strict=True)
    ]
    return [(n, scale, m) for n, m in zip(n_ins, n_outs, strict=True)]


def _roi(b: CoreBuilder, roi: SSAValue | None, a: Attrs) -> list[tuple[Expr, Expr]] | None:
    """(start, end) per axis; only tf_crop_and_resize reads the roi."""
    if a.ctm != "tf_crop_and_resize":
        return None
    if roi is None:
        raise LoweringError("Resize: tf_crop_and_resize needs roi")
    k = len(a.axes)
    _check_length(roi, 2 * k, "roi")
    return [(_entry(b, roi, i, F64), _entry(b, roi, i + k, F64)) for i in range(k)]


def _plan(
    b: CoreBuilder,
    x: SSAValue,
    ins: Sequence[SSAValue | None],
    a: Attrs,
    result: Attribute,
) -> list[Axis]:
    roi_v, scales_v, sizes_v = (_given(v) for v in ins)
    declared = shape_of_type(result) or (-1,) * len(ranked_shape(x))
    if scales_v is not None and sizes_v is not None:
        raise LoweringError("Resize: only one of scales and sizes may be given")
    if scales_v is not None:
        lengths = _axes_from_scales(b, x, scales_v, a, declared)
    elif sizes_v is not None:
        lengths = _axes_from_sizes(b, x, sizes_v, a, declared)
    else:
        raise LoweringError("Resize needs scales or sizes")
    rois = _roi(b, roi_v, a)
    return [
        Axis(axis, n_in, n_out, scale, None if rois is None else rois[i])
        for i, (axis, (n_in, scale, n_out)) in enumerate(zip(a.axes, lengths, strict=True))
    ]


def _is_identity(ax: Axis) -> bool:
    """A scale of 1 keeping the length and the whole roi: the reference skips the axis."""
    scale = constant_array(ax.scale.v)
    if scale is None or not pymath.isclose(float(scale), 1.0):
        return False
    same = ax.n_out.value is ax.n_in.value or ax.n_out.size == ax.n_in.size >= 0
    if not same:
        return False
    if ax.roi is None:
        return True
    lo, hi = (constant_array(e.v) for e in ax.roi)
    return (
        lo is not None
        and hi is not None
        and pymath.isclose(float(lo), 0.0)
        and pymath.isclose(float(hi), 1.0)
    )


# ---- source coordinates ------------------------------------------------------------------


def _half_pixel(y: Expr, ax: Axis) -> Expr:
    return (y + 0.5) / ax.scale - 0.5


def _half_pixel_symmetric(y: Expr, ax: Axis) -> Expr:
    """half_pixel, shifted so the (rounded) output stays centred on the input."""
    b = y.b
    n_in = ax.n_in.expr(b).to(F64)
    width = ax.scale * n_in
    adjustment = ax.n_out.expr(b).to(F64) / width
    offset = n_in / 2.0 * (1.0 - adjustment)
    return offset + (y + 0.5) / ax.scale - 0.5


def _pytorch_half_pixel(y: Expr, ax: Axis) -> Expr:
    width = ax.scale * ax.n_in.expr(y.b).to(F64)
    return _where(width.eq(1.0), -0.5, (y + 0.5) / ax.scale - 0.5)


def _align_corners(y: Expr, ax: Axis) -> Expr:
    n_in = ax.n_in.expr(y.b).to(F64)
    width = ax.scale * n_in
    return _where(width.eq(1.0), 0.0, y * (n_in - 1.0) / (width - 1.0))


def _asymmetric(y: Expr, ax: Axis) -> Expr:
    return y / ax.scale


def _tf_crop_and_resize(y: Expr, ax: Axis) -> Expr:
    assert ax.roi is not None
    lo, hi = ax.roi
    n_in = ax.n_in.expr(y.b).to(F64)
    width = ax.scale * n_in
    single = (hi - lo) * (n_in - 1.0) / 2.0
    x = _where(width.eq(1.0), single, y * (hi - lo) * (n_in - 1.0) / (width - 1.0))
    return x + lo * (n_in - 1.0)


COORDINATE_MODES = {
    "half_pixel": _half_pixel,
    "half_pixel_symmetric": _half_pixel_symmetric,
    "pytorch_half_pixel": _pytorch_half_pixel,
    "align_corners": _align_corners,
    "asymmetric": _asymmetric,
    "tf_crop_and_resize": _tf_crop_and_resize,
}
"""Source coordinate of output positions `y` (f64), as the reference's `_compute_x_ori`."""


def _outside(x: Expr, ax: Axis, a: Attrs) -> Expr | None:
    """Positions tf_crop_and_resize fills with extrapolation_value (None: none can be)."""
    if a.ctm != "tf_crop_and_resize":
        return None
    mask = x.lt(0.0) | x.gt(ax.n_in.expr(x.b).to(F64) - 1.0)
    known = constant_array(mask.v)
    return None if known is not None and not known.any() else mask


# ---- taps and weights --------------------------------------------------------------------


NEAREST_PICKS: dict[str, Callable[[Expr], Expr]] = {
    "round_prefer_floor": lambda r: r.gt(0.5),
    "round_prefer_ceil": lambda r: r.ge(0.5),
    "floor": lambda r: r.ge(1.0),
    "ceil": lambda r: r.gt(0.0),
}
"""Whether nearest takes the upper of the two taps, from the ratio in (0, 1]
(1 exactly at an integer coordinate, where every mode takes the coordinate)."""


def _ratio(x: Expr) -> Expr:
    """Distance from the tap left of `x`, in (0, 1]: 1 at an integer `x`, as the reference."""
    base = x.unary("floor")
    return _where(x.eq(base), 1.0, x - base)


def _first_tap(x: Expr, n: Length) -> Expr:
    """Index (i64, may be out of range) of the first of the `n` taps nearest to `x`.

    `n` is even. The reference pads by n/2, finds the n nearest indices of the
    padded coordinate (ties to the smaller) and unpads; this is its closed form.
    """
    half = n.expr(x.b).to(F64) / 2.0
    padded = x + half
    p = padded.unary("floor")
    first = p - n.expr(x.b).to(F64) + padded.ne(p).to(F64)
    return first.to(i64)


def _tap_count(b: CoreBuilder, ax: Axis, a: Attrs) -> Length:
    """2 taps for nearest and linear, 4 for cubic; antialias widens them by 1/scale."""
    if not a.antialias:
        return _static_length(b, 4 if a.mode == "cubic" else 2)
    support = 2.0 if a.mode == "cubic" else 1.0
    half = -(-support / ax.scale.min(1.0)).unary("floor")
    return _length(b, (half * 2.0).to(i64))


def _pick_by_tap(tap: Expr, columns: Sequence[Expr]) -> Expr:
    """The table whose column k is `columns[k]`."""
    out = columns[-1].column(tap)
    for k in range(len(columns) - 2, -1, -1):
        out = _where(tap.eq(k), columns[k].column(tap), out)
    return out


def _linear_weights(r: Expr, tap: Expr) -> Expr:
    return _pick_by_tap(tap, [1.0 - r, r])


def _cubic_weights(r: Expr, tap: Expr, a: float) -> Expr:
    s = 1.0 - r
    return _pick_by_tap(
        tap,
        [
            ((a * (r + 1.0) - 5 * a) * (r + 1.0) + 8 * a) * (r + 1.0) - 4 * a,
            ((a + 2) * r - (a + 3)) * r * r + 1.0,
            ((a + 2) * s - (a + 3)) * s * s + 1.0,
            ((a * (s + 1.0) - 5 * a) * (s + 1.0) + 8 * a) * (s + 1.0) - 4 * a,
        ],
    )


def _antialias_weights(r: Expr, tap: Expr, n: Length, ax: Axis, a: Attrs) -> Expr:
    """The kernel stretched by 1/scale when downsampling, normalized to sum 1."""
    scale = ax.scale.min(1.0)
    start = 1.0 - n.expr(r.b).to(F64) / 2.0
    arg = ((tap.to(F64) + start) - r.column(tap)) * scale
    if a.mode == "linear":
        c = (1.0 - arg.unary("abs")).max(0.0).min(1.0)
    else:
        c = _cubic_kernel(arg.unary("abs"), a.cubic_a)
    return c / c.row_sum()


def _cubic_kernel(x: Expr, a: float) -> Expr:
    x2 = x * x
    x3 = x * x2
    near = (a + 2) * x3 - (a + 3) * x2 + 1.0
    far = a * x3 - 5 * a * x2 + 8 * a * x - 4 * a
    return _where(x.le(1.0), near, _where(x.lt(2.0), far, 0.0))


def _exclude_outside(c: Expr, idx: Expr, n_in: Length) -> Expr:
    """Drop the weights of taps beyond the input and renormalize, as the reference."""
    outside = idx.lt(0) | idx.ge(n_in.expr(idx.b))
    c = _where(outside, 0.0, c)
    total = c.row_sum()
    return c / _where(total.eq(0.0), 1.0, total)


def _clamp(idx: Expr, n_in: Length) -> Expr:
    """Edge padding: out-of-range taps read the nearest border element."""
    return idx.max(0).min(n_in.expr(idx.b) - 1)


def _nearest_index(x: Expr, ax: Axis, a: Attrs) -> Expr:
    """`[out]` i64: of the two taps around `x`, the one `nearest_mode` picks."""
    b = x.b
    first = _first_tap(x, _static_length(b, 2))
    pick = NEAREST_PICKS[a.nearest_mode](_ratio(x)).to(i64)
    return _clamp(first + pick, ax.n_in)


def _taps(x: Expr, ax: Axis, a: Attrs) -> tuple[Expr, Expr]:
    """Indices `[out, n]` (i64, in range) and weights `[out, n]` (f64) of the taps."""
    b = x.b
    n = _tap_count(b, ax, a)
    tap = _iota(b, [ax.n_out, n], 1)
    idx = _first_tap(x, n).column(tap) + tap
    r = _ratio(x)
    if a.antialias:
        c = _antialias_weights(r, tap, n, ax, a)
    elif a.mode == "cubic":
        c = _cubic_weights(r, tap, a.cubic_a)
    else:
        c = _linear_weights(r, tap)
    if a.exclude_outside:
        c = _exclude_outside(c, idx, ax.n_in)
    return _clamp(idx, ax.n_in), c


# ---- emitting --------------------------------------------------------------------------------


UNROLLED_TAPS = 4
"""Up to this many taps per output (linear: 2, cubic: 4) are summed one gather at a time."""


def _weighted_sum(b: CoreBuilder, x: SSAValue, idx: Expr, weights: Expr, axis: int) -> SSAValue:
    """The taps of `x` along `axis` at `idx` `[out, n]`, weighted and summed.

    A static count of at most `UNROLLED_TAPS` taps is a sum of n weighted gathers, one
    elementwise nest after fusion. As a reduction over a tap dim `[.., out, n]`, the
    weighted taps of the last axis (the innermost) went through a buffer n times the
    output: DeepLabV3's final 14 -> 224 upsampling wrote and re-read 8 MB.
    """
    taps = ranked_shape(idx.v)[1]
    w = weights.to(element_of(x.type)).v
    if not 0 < taps <= UNROLLED_TAPS:
        g = b.gather(x, idx.v, axis)
        wb = _broadcast_dims(b, w, g, [axis, axis + 1], None)
        return b.reduce("sum", b.binary("mul", g, wb), [axis + 1])
    total: SSAValue | None = None
    for t in range(taps):
        tap = b.constant(np.array(t, np.int64))
        g = b.gather(x, b.gather(idx.v, tap, 1), axis)
        term = b.binary("mul", g, _broadcast_dims(b, b.gather(w, tap, 1), g, [axis], None))
        total = term if total is None else b.binary("add", total, term)
    assert total is not None
    return total


def _extrapolate(b: CoreBuilder, v: SSAValue, outside: Expr, axis: int, value: float) -> SSAValue:
    """tf_crop_and_resize: positions whose source lies outside the input get `value`."""
    mask = _broadcast_dims(b, outside.v, v, [axis], None)
    return b.select(mask, b.splat(value, v), v)


def _resize_axis(b: CoreBuilder, work: SSAValue, ax: Axis, a: Attrs) -> SSAValue:
    """Resize `work` along one axis; the others keep their lengths."""
    if ax.n_out.size == 0:
        raise LoweringError("Resize to an empty axis is not supported")
    y = _iota(b, [ax.n_out], 0).to(F64)
    x = COORDINATE_MODES[a.ctm](y, ax)
    if a.mode == "nearest":
        work = b.gather(work, _nearest_index(x, ax, a).v, ax.axis)
    else:
        idx, weights = _taps(x, ax, a)
        work = _weighted_sum(b, work, idx, weights, ax.axis)
    outside = _outside(x, ax, a)
    if outside is not None:
        work = _extrapolate(b, work, outside, ax.axis, a.extrapolation)
    return work


@lowers(onnx.ResizeOp)
def resize(b: CoreBuilder, op: onnx.ResizeOp) -> Results:
    """Separable resize: per axis a gather of taps and (unless nearest) their weighted sum."""
    x = op.X
    if shape_of_type(x.type) is None:
        raise LoweringError("Resize needs a ranked input")
    a = _attrs(op, len(ranked_shape(x)))
    axes = _plan(b, x, [op.roi, op.scales, op.sizes], a, op.Y.type)
    element = element_of(x.type)
    dtype = numpy_dtype(element)
    compute_in_f64 = a.mode != "nearest" and dtype.kind != "f"
    work = b.cast(x, F64) if compute_in_f64 else x
    for ax in axes:
        if not _is_identity(ax):
            work = _resize_axis(b, work, ax, a)
    if compute_in_f64:
        work = _saturate(b, work, dtype, element)
    return [b.retype(work, op.Y.type)]


def _saturate(b: CoreBuilder, v: SSAValue, dtype: np.dtype, element: Attribute) -> SSAValue:
    """float64 back to an integer type: round half to even and clamp, like saturate_cast."""
    info = np.iinfo(dtype)
    v = b.unary("round", v)
    v = b.binary("max", v, b.splat(float(info.min), v))
    v = b.binary("min", v, b.splat(float(info.max), v))
    return b.cast(v, element)
