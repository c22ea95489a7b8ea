"""Image ONNX ops → core: Resize.

Resize is separable: every output element along one axis is a weighted sum
of a few input elements along that axis, and the weights depend only on the
output position, the static sizes and the attributes. So the handler computes,
in numpy at compile time, per resized axis, the source indices `[out, n]` and
weights `[out, n]` exactly as the ONNX reference does, then emits one
`core.gather` of the neighbours and a weighted sum over the `n` taps
(nearest needs only the gather, which keeps it exact for every dtype).
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import Float64Type
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
    is_static,
    normalize_axis,
    numpy_dtype,
    ranked_shape,
    shape_of_type,
    tensor,
)
from .registry import Results, lowers

Coeffs = Callable[[float, float], np.ndarray]

# ---- the reference's 1-D kernels (onnx.reference.ops.op_resize) ---------------------------


def _nearest_coeffs(mode: str) -> Coeffs:
    def coeffs(ratio: float, scale: float) -> np.ndarray:
        if float(ratio).is_integer():
            return np.array([0.0, 1.0])
        if mode == "round_prefer_floor":
            return np.array([ratio <= 0.5, ratio > 0.5], dtype=np.float64)
        if mode == "round_prefer_ceil":
            return np.array([ratio < 0.5, ratio >= 0.5], dtype=np.float64)
        if mode == "floor":
            return np.array([1.0, 0.0])
        if mode == "ceil":
            return np.array([0.0, 1.0])
        raise LoweringError(f"Resize: unknown nearest_mode {mode!r}")

    return coeffs


def _cubic_coeffs(a: float, antialias: bool) -> Coeffs:
    def plain(ratio: float, scale: float) -> np.ndarray:
        r, s = ratio, 1 - ratio
        return np.array(
            [
                ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
                ((a + 2) * r - (a + 3)) * r * r + 1,
                ((a + 2) * s - (a + 3)) * s * s + 1,
                ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a,
            ]
        )

    def smooth(ratio: float, scale: float) -> np.ndarray:
        scale = min(scale, 1.0)

        def k(x: float) -> float:
            x = abs(x)
            if x <= 1:
                return (a + 2) * x**3 - (a + 3) * x * x + 1
            if x < 2:
                return a * x**3 - 5 * a * x * x + 8 * a * x - 4 * a
            return 0.0

        start = int(np.floor(-2 / scale) + 1)
        c = np.array([k(scale * (i - ratio)) for i in range(start, 2 - start)])
        return c / c.sum()

    return smooth if antialias else plain


def _linear_coeffs(antialias: bool) -> Coeffs:
    def plain(ratio: float, scale: float) -> np.ndarray:
        return np.array([1 - ratio, ratio])

    def smooth(ratio: float, scale: float) -> np.ndarray:
        scale = min(scale, 1.0)
        start = int(np.floor(-1 / scale) + 1)
        args = (np.arange(start, 2 - start) - ratio) * scale
        c = np.clip(1 - np.abs(args), 0, 1)
        return c / c.sum()

    return smooth if antialias else plain


def _source_coords(
    mode: str, n_in: int, n_out: int, scale: float, roi: tuple[float, float] | None
) -> tuple[np.ndarray, np.ndarray | None]:
    """Source coordinate of every output position; also which ones extrapolate."""
    y = np.arange(n_out, dtype=np.float64)
    width = scale * n_in
    if mode == "align_corners":
        return (np.zeros(n_out) if width == 1 else y * (n_in - 1) / (width - 1)), None
    if mode == "asymmetric":
        return y / scale, None
    if mode == "tf_crop_and_resize":
        lo, hi = roi if roi is not None else (0.0, 1.0)
        if width == 1:
            x = np.full(n_out, (hi - lo) * (n_in - 1) / 2)
        else:
            x = y * (hi - lo) * (n_in - 1) / (width - 1)
        x = x + lo * (n_in - 1)
        return x, (x < 0) | (x > n_in - 1)
    if mode == "pytorch_half_pixel":
        return (np.full(n_out, -0.5) if width == 1 else (y + 0.5) / scale - 0.5), None
    if mode == "half_pixel":
        return (y + 0.5) / scale - 0.5, None
    if mode == "half_pixel_symmetric":
        offset = n_in / 2 * (1 - n_out / width)
        return offset + (y + 0.5) / scale - 0.5, None
    raise LoweringError(f"Resize: unknown coordinate_transformation_mode {mode!r}")


def _taps(
    coeffs_of: Coeffs,
    x: np.ndarray,
    n_in: int,
    scale: float,
    exclude_outside: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """Clamped neighbour indices and weights `[out, n]`, as the reference picks them."""
    base = np.floor(x).astype(np.int64)
    ratios = np.where(x == base, 1.0, x - base)
    coeffs = np.stack([np.asarray(coeffs_of(float(r), scale), np.float64) for r in ratios])
    n = coeffs.shape[1]
    pad = int(np.ceil(n / 2))
    xp = x + pad
    p = np.floor(xp).astype(np.int64)
    frac = xp - p
    if n % 2 == 0:
        start = p + np.where(frac == 0, -(n // 2), -(n // 2) + 1)
    else:
        start = p + np.where(frac <= 0.5, -((n - 1) // 2), -((n - 1) // 2) + 1)
    idx = start[:, None] + np.arange(n)[None, :] - pad
    if exclude_outside:
        coeffs = np.where((idx < 0) | (idx >= n_in), 0.0, coeffs)
        total = coeffs.sum(axis=-1, keepdims=True)
        coeffs = coeffs / np.where(total == 0, 1.0, total)
    return np.clip(idx, 0, n_in - 1), coeffs


# ---- emitting --------------------------------------------------------------------------------


def _gather(b: CoreBuilder, x: SSAValue, idx: np.ndarray, axis: int) -> SSAValue:
    shape = list(ranked_shape(x))
    out = shape[:axis] + list(idx.shape) + shape[axis + 1 :]
    g = core.GatherOp.create(
        operands=[x, b.constant(idx.astype(np.int64))],
        result_types=[tensor(element_of(x.type), out)],
        properties={"axis": int_attr(axis)},
    )
    return b.insert(g).results[0]


def _resize_axis(
    b: CoreBuilder,
    x: SSAValue,
    axis: int,
    idx: np.ndarray,
    coeffs: np.ndarray,
    nearest: bool,
) -> SSAValue:
    """Apply one axis: gather the taps, then (unless nearest) the weighted sum over them."""
    if nearest:
        pick = np.argmax(coeffs, axis=1)
        return _gather(b, x, idx[np.arange(len(idx)), pick], axis)
    g = _gather(b, x, idx, axis)
    w = b.constant(coeffs, like=g.type)
    bc = core.BroadcastOp.create(
        operands=[w], result_types=[g.type], properties={"dims": core.ints([axis, axis + 1])}
    )
    wb = b.insert(bc).results[0]
    return b.reduce("sum", b.binary("mul", g, wb), [axis + 1])


def _attr(o: OnnxOp, name: str, default: object) -> object:
    """An attribute that older opsets of the op lack (antialias, axes, policy)."""
    return o.attr(name) if o.SCHEMA.attribute(name) is not None else default


def _sizes(
    v: SSAValue | None, result: Attribute, axes: Sequence[int], policy: str
) -> np.ndarray | None:
    """Constant sizes; or, stretching to a static declared result, that result's dims.

    The declared result type must equal `sizes` when the policy stretches, so a
    runtime `sizes` input is known from the type; other policies round a
    scale that the output dims do not determine, so they need a constant.
    """
    if v is None:
        return None
    a = constant_array(v)
    if a is not None:
        return None if a.size == 0 else a.reshape(-1)
    out = shape_of_type(result)
    if policy == "stretch" and out is not None and is_static(result):
        return np.array([out[a] for a in axes], dtype=np.int64)
    raise LoweringError("Resize: sizes must be constant (or the result shape static)")


def _floats(v: SSAValue | None) -> np.ndarray | None:
    if v is None:
        return None
    a = constant_array(v)
    if a is None:
        raise LoweringError("Resize: roi, scales and sizes must be constants")
    return None if a.size == 0 else a.reshape(-1)


@lowers("Resize")
def resize(b: CoreBuilder, op: Operation) -> Results:
    """Separable resize: per axis a compile-time gather of taps and their weights."""
    o = as_onnx(op)
    ins = o.onnx_inputs() + [None] * 4
    x, roi_v, scales_v, sizes_v = ins[:4]
    assert x is not None
    if shape_of_type(x.type) is None:
        raise LoweringError("Resize needs a ranked input")
    shape = ranked_shape(x)
    rank = len(shape)
    mode = str(o.attr("mode"))
    ctm = str(o.attr("coordinate_transformation_mode"))
    antialias = bool(_attr(o, "antialias", 0))
    axes_attr = _attr(o, "axes", None)
    axes = (
        list(range(rank))
        if axes_attr is None
        else [normalize_axis(int(a), rank) for a in axes_attr]  # type: ignore[union-attr]
    )
    policy = str(_attr(o, "keep_aspect_ratio_policy", "stretch"))
    roi = _floats(roi_v)
    scales = _floats(scales_v)
    sizes = _sizes(sizes_v, op.results[0].type, axes, policy)
    if scales is not None and sizes is not None:
        raise LoweringError("Resize: only one of scales and sizes may be given")
    if scales is not None:
        if len(scales) != len(axes):
            raise LoweringError("Resize: scales must have one entry per axis")
        factors = [float(s) for s in scales]
        if any(shape[a] < 0 and s != 1 for s, a in zip(scales, axes, strict=True)):
            raise LoweringError("Resize: a dynamic dim can only keep its size (scale 1)")
        # A dynamic dim (batch, typically) with scale 1 stays as it is.
        out_sizes = [
            int(s * shape[a]) if shape[a] >= 0 else -1 for s, a in zip(scales, axes, strict=True)
        ]
    elif sizes is not None:
        if len(sizes) != len(axes):
            raise LoweringError("Resize: sizes must have one entry per axis")
        if any(shape[a] < 0 for a in axes):
            raise LoweringError("Resize: sizes over a dynamic dim are not supported")
        out_sizes = [int(s) for s in sizes]
        factors = [s / shape[a] for s, a in zip(out_sizes, axes, strict=True)]
        if policy != "stretch":
            pick = {"not_larger": min, "not_smaller": max}.get(policy)
            if pick is None:
                raise LoweringError(f"Resize: unknown keep_aspect_ratio_policy {policy!r}")
            scale = pick(factors)
            factors = [scale] * len(axes)
            out_sizes = [int(scale * shape[a] + 0.5) for a in axes]
    else:
        raise LoweringError("Resize needs scales or sizes")
    if mode == "nearest":
        if antialias:
            raise LoweringError("Resize: antialias is not defined for nearest")
        coeffs_of = _nearest_coeffs(str(o.attr("nearest_mode")))
    elif mode == "linear":
        coeffs_of = _linear_coeffs(antialias)
    elif mode == "cubic":
        coeffs_of = _cubic_coeffs(float(o.attr("cubic_coeff_a")), antialias)  # type: ignore[arg-type]
    else:
        raise LoweringError(f"Resize: unknown mode {mode!r}")
    exclude = bool(o.attr("exclude_outside"))
    extrapolation = float(o.attr("extrapolation_value"))  # type: ignore[arg-type]

    element = element_of(x.type)
    dtype = numpy_dtype(element)
    nearest = mode == "nearest"
    work = x
    compute_in_f64 = not nearest and dtype.kind != "f"
    if compute_in_f64:
        work = b.cast(work, Float64Type())
    for i, axis in enumerate(axes):
        n_in, n_out, scale = shape[axis], out_sizes[i], factors[i]
        axis_roi = None if roi is None else (float(roi[i]), float(roi[i + len(axes)]))
        trivial_roi = axis_roi is None or (
            pymath.isclose(axis_roi[0], 0.0) and pymath.isclose(axis_roi[1], 1.0)
        )
        if pymath.isclose(scale, 1.0) and n_out == n_in and trivial_roi:
            continue
        if ctm == "tf_crop_and_resize" and axis_roi is None:
            raise LoweringError("Resize: tf_crop_and_resize needs roi")
        if n_out == 0:
            raise LoweringError("Resize to an empty axis is not supported")
        coords, outside = _source_coords(ctm, n_in, n_out, scale, axis_roi)
        idx, coeffs = _taps(coeffs_of, coords, n_in, scale, exclude)
        work = _resize_axis(b, work, axis, idx, coeffs, nearest)
        if outside is not None and outside.any():
            if not is_static(work.type):
                raise LoweringError("Resize: extrapolation needs a static shape")
            mask_shape = [1] * rank
            mask_shape[axis] = n_out
            full = ranked_shape(work)
            mask = np.broadcast_to(outside.reshape(mask_shape), full)
            fill = np.full(full, extrapolation, dtype=numpy_dtype(element_of(work.type)))
            work = b.select(b.constant(mask), b.constant(fill), work)
    if compute_in_f64:
        work = _saturate(b, work, dtype, element)
    return [b.retype(work, op.results[0].type)]


def _saturate(b: CoreBuilder, v: SSAValue, dtype: np.dtype, element: Attribute) -> SSAValue:
    """float64 back to an integer type: round half to even and clamp, like saturate_cast."""
    info = np.iinfo(dtype)
    v = b.unary("round", v)
    v = b.binary("max", v, b.splat(float(info.min), v))
    v = b.binary("min", v, b.splat(float(info.max), v))
    return b.cast(v, element)
