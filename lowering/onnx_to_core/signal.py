"""Signal-processing ONNX ops → core: DFT, STFT, MelWeightMatrix.

A DFT of a static length is a matrix product. The signal axis is moved next
to the trailing real/imaginary dim and the two are merged, so each signal is
one row of interleaved numbers (`re, im, re, im, …`, or only `re` for a real
signal); a constant matrix maps it to the interleaved spectrum:

    %rows = core.reshape(%moved) : (tensor<1x10x10x1xf64>) -> tensor<10x10xf64>
    %spec = core.matmul(%rows, %w) {acc = f64} : (tensor<10x10xf64>, tensor<10x12xf64>) -> tensor<10x12xf64>

The matrix holds `e^(-2πi·nk/L)` (forward) or `e^(2πi·nk/L)/L` (inverse) as
real 2x2 blocks; rows past the DFT length `L` are zero (the signal is cut),
missing rows are zeros (it is padded), a one-sided result keeps the first
`L/2 + 1` bins, and a one-sided inverse (irfft) reads the `L/2 + 1` bins of a
Hermitian spectrum and gives real numbers. Angles are reduced exactly
(`nk mod L`) and quarter turns are exact, so the bins that must be real are.
Arithmetic is in f64, cast back to the element type at the end.

An axis that arrives at run time picks among every possible axis with a
chain of `core.if`s (the shapes may differ per axis); a run-time axis out of
range fails the run. STFT gathers its frames (`start + j`, starts a
multiple of the run-time step), weights them by the window and takes the
DFT of each along the frame axis. MelWeightMatrix computes its triangular
filters from its scalar inputs at run time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.ir import Attribute, Block, Region, SSAValue

from rung.dialects import core
from rung.dialects.dtypes import f64, i64
from rung.dialects.onnx import generated_ops as onnx
from rung.lowering.kit import (
    CoreBuilder,
    LoweringError,
    constant_ints,
    declared,
    element_of,
    int_attr,
    iota,
    ranked_shape,
    stacked,
    tensor,
    unstacked,
)

from .registry import Results, lowers

# ---- the DFT matrix -------------------------------------------------------------------------


@dataclass(frozen=True)
class Transform:
    """One DFT along an axis, as far as its matrix is concerned."""

    length: int  # L, the DFT length
    inverse: bool
    onesided: bool

    @property
    def real_out(self) -> bool:
        """A one-sided inverse (irfft) gives real numbers."""
        return self.inverse and self.onesided

    def bins(self) -> int:
        """Entries along the axis of the result."""
        if self.onesided and not self.inverse:
            return self.length // 2 + 1
        return self.length


def _unit(turns: np.ndarray, length: int) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of `2π·turns/length` (turns already reduced mod length); multiples of
    a quarter turn are exact."""
    angle = 2.0 * np.pi * turns / length
    cos, sin = np.cos(angle), np.sin(angle)
    quarter = (4 * turns) % length == 0
    q = (4 * turns) // length % 4
    cos = np.where(quarter, np.array([1.0, 0.0, -1.0, 0.0])[q], cos)
    sin = np.where(quarter, np.array([0.0, 1.0, 0.0, -1.0])[q], sin)
    return cos, sin


def dft_matrix(t: Transform, entries: int, complex_in: bool) -> np.ndarray:
    """The real matrix taking `entries` interleaved input numbers along the axis to the
    interleaved result (`[entries * c_in, bins * c_out]`, c = 2 for complex, 1 for real)."""
    length, bins = t.length, t.bins()
    n = np.arange(entries, dtype=np.int64)[:, None]
    k = np.arange(bins, dtype=np.int64)[None, :]
    cos, sin = _unit((n * k) % length, length)
    if t.inverse:
        weight = np.full(entries, 1.0 / length)
        if t.onesided:  # a Hermitian spectrum: each bin but 0 and L/2 stands for two
            twice = (n[:, 0] > 0) & (2 * n[:, 0] != length)
            weight = np.where(twice, 2.0 / length, 1.0 / length)
            weight = np.where(n[:, 0] <= length // 2, weight, 0.0)
        re, im = cos * weight[:, None], sin * weight[:, None]
    else:
        re, im = cos, -sin
    re = np.where(n < length, re, 0.0)
    im = np.where(n < length, im, 0.0)
    c_in = 2 if complex_in else 1
    c_out = 1 if t.real_out else 2
    w = np.zeros((entries, c_in, bins, c_out))
    w[:, 0, :, 0] = re  # (a + ib)(re + i·im) = (a·re - b·im) + i(a·im + b·re)
    if c_out == 2:
        w[:, 0, :, 1] = im
    if c_in == 2:
        w[:, 1, :, 0] = -im
        if c_out == 2:
            w[:, 1, :, 1] = re
    return w.reshape(entries * c_in, bins * c_out) + 0.0  # no -0.0 in the constant


def _result_shape(shape: tuple[int, ...], axis: int, t: Transform) -> list[int]:
    out = list(shape)
    out[axis] = t.bins()
    out[-1] = 1 if t.real_out else 2
    return out


def transform_along(b: CoreBuilder, x: SSAValue, axis: int, t: Transform) -> SSAValue:
    """The DFT `t` of `x` (`[..., 1 or 2]`) along `axis`, by one matmul in f64."""
    shape = ranked_shape(x)
    rank, entries, c_in = len(shape), shape[axis], shape[-1]
    if entries < 0:
        raise LoweringError(f"the signal axis {axis} of {x.type} needs a static size")
    perm = [d for d in range(rank - 1) if d != axis] + [axis, rank - 1]
    moved = b.transpose(b.cast(x, f64), perm)
    lead = b.dims(moved)[:-2]
    rows = stacked(b, moved, 2, merged=True)
    matrix = b.constant(dft_matrix(t, entries, c_in == 2))
    spectrum = b.matmul(rows, matrix, f64, f64)
    c_out = 1 if t.real_out else 2
    spectrum = unstacked(b, b.reshape_to(spectrum, [b.dims(spectrum)[0], t.bins(), c_out]), lead)
    back = [perm.index(d) for d in range(rank)]
    return b.cast(b.transpose(spectrum, back), element_of(x.type))


# ---- a run-time axis --------------------------------------------------------------------------


def _joined(shapes: list[list[int]]) -> list[int]:
    """Each dim where every shape agrees, `?` where they differ."""
    return [d[0] if all(x == d[0] for x in d) else -1 for d in zip(*shapes, strict=True)]


def run_time_axis(
    b: CoreBuilder, axis: SSAValue, rank: int, candidates: list[int], what: str
) -> SSAValue:
    """A run-time axis as a non-negative rank-0 i64, checked to be one of `candidates`
    (the axes the op can run along for this input)."""
    if [d for d in ranked_shape(axis) if d != 1]:
        raise LoweringError(f"{what}'s axis must be a scalar, got {axis.type}")
    value = b.reshape(b.cast(axis, i64), tensor(i64, []))
    negative = b.compare("lt", value, b.scalar(0, i64))
    value = b.select(negative, b.binary("add", value, b.scalar(rank, i64)), value)
    valid = b.compare("eq", value, b.scalar(candidates[0], i64))
    for c in candidates[1:]:
        valid = b.binary("or", valid, b.compare("eq", value, b.scalar(c, i64)))
    message = f"{what}: the axis must be one of {candidates} (or that minus {rank})"
    return b.check(value, valid, message)


def choose(
    b: CoreBuilder,
    value: SSAValue,
    candidates: list[int],
    build: Callable[[CoreBuilder, int], SSAValue],
    result: Attribute,
) -> SSAValue:
    """`build(candidate)` for the candidate equal to the rank-0 `value`, by a chain of
    `core.if`s (the last candidate is the else of the last one); each branch gives its
    value the joined `result` type."""
    if len(candidates) == 1:
        return b.retype(build(b, candidates[0]), result)
    cond = b.compare("eq", value, b.scalar(candidates[0], i64))
    yields = [core.YieldOp.create(operands=[]) for _ in range(2)]
    for y in yields:
        y.location = b.op.location
    new = core.IfOp.create(
        operands=[cond],
        result_types=[result],
        regions=[Region(Block([y])) for y in yields],
    )
    b.insert(new)
    fills: list[Callable[[CoreBuilder], SSAValue]] = [
        lambda inner: inner.retype(build(inner, candidates[0]), result),
        lambda inner: choose(inner, value, candidates[1:], build, result),
    ]
    for placeholder, fill in zip(yields, fills, strict=True):
        inner = CoreBuilder(b.rewriter, placeholder)
        done = core.YieldOp.create(operands=[fill(inner)])
        done.location = placeholder.location
        b.rewriter.replace(placeholder, [done])
    return new.results[0]


# ---- DFT --------------------------------------------------------------------------------------


def _constant_scalar(v: SSAValue | None, what: str) -> int | None:
    """A constant scalar input's value (None when absent); a run-time one is refused."""
    if v is None:
        return None
    values = constant_ints(v)
    if values is None:
        raise LoweringError(f"{what} must be a constant")
    if len(values) != 1:
        raise LoweringError(f"{what} must be a scalar, got {v.type}")
    return values[0]


@lowers(onnx.DFTOp)
def dft(b: CoreBuilder, op: onnx.DFTOp) -> Results:
    x = op.input
    shape = ranked_shape(x)
    rank = len(shape)
    if rank < 2 or shape[-1] not in (1, 2):
        raise LoweringError(f"DFT needs an input of rank >= 2 ending in 1 or 2, got {x.type}")
    inverse, onesided = bool(op.attr("inverse")), bool(op.attr("onesided"))
    length = _constant_scalar(op.dft_length, "DFT's dft_length")
    if length is not None and length < 1:
        raise LoweringError(f"DFT's dft_length must be positive, got {length}")

    def transform(axis: int) -> Transform:
        if length is not None:
            return Transform(length, inverse, onesided)
        n = shape[axis]
        if n < 0:
            raise LoweringError(f"DFT along axis {axis} of {x.type} needs a static size")
        default = 2 * (n - 1) if inverse and onesided else n
        if default < 1:
            raise LoweringError(f"DFT along axis {axis} of {x.type}: no samples")
        return Transform(default, inverse, onesided)

    def build(inner: CoreBuilder, axis: int) -> SSAValue:
        return transform_along(inner, x, axis, transform(axis))

    known = _constant_scalar(op.axis, "DFT's axis") if _is_constant(op.axis) else None
    if op.axis is None or known is not None:
        axis = -2 if known is None else known
        if not -rank <= axis <= rank - 2 or axis == -1:
            raise LoweringError(f"DFT's axis {axis} is out of range for rank {rank}")
        result = build(b, axis % rank)
    else:
        if any(d < 0 for d in shape[:-1]):
            raise LoweringError(f"DFT along a run-time axis needs static signal dims, got {x.type}")
        candidates = [a for a in range(rank - 1) if _feasible(transform, a)]
        if not candidates:
            raise LoweringError(f"DFT of {x.type}: no axis has samples to transform")
        shapes = [_result_shape(shape, a, transform(a)) for a in candidates]
        joined = tensor(element_of(x.type), _joined(shapes))
        value = run_time_axis(b, op.axis, rank, candidates, "DFT")
        result = choose(b, value, candidates, build, joined)
    return [declared(b, result, op.output.type, "DFT")]


def _feasible(transform: Callable[[int], Transform], axis: int) -> bool:
    """Whether the DFT along `axis` can be built (a run-time axis skips the others)."""
    try:
        transform(axis)
    except LoweringError:
        return False
    return True


def _is_constant(v: SSAValue | None) -> bool:
    return v is not None and constant_ints(v) is not None


# ---- STFT -------------------------------------------------------------------------------------


@lowers(onnx.STFTOp)
def stft(b: CoreBuilder, op: onnx.STFTOp) -> Results:
    signal = op.signal
    shape = ranked_shape(signal)
    if len(shape) != 3 or shape[-1] not in (1, 2):
        raise LoweringError(f"STFT needs a signal [batch, length, 1 or 2], got {signal.type}")
    onesided = bool(op.attr("onesided"))
    window = op.window
    width = None
    if window is not None:
        (width,) = ranked_shape(window) or (None,)
        if width is None or width < 0:
            raise LoweringError(f"STFT needs a window of static length, got {window.type}")
    length = (
        _constant_scalar(op.frame_length, "STFT's frame_length")
        if op.frame_length is None or _is_constant(op.frame_length)
        else None
    )
    if length is None and op.frame_length is None:
        length = width if width is not None else shape[1]
    if length is None or length < 0:  # the frame length arrives at run time
        if window is not None:
            raise LoweringError("STFT: a run-time frame_length with a window")
        length_v = _run_time_length(b, signal, op.frame_length)
        frames = _frames(b, signal, op.frame_step, length_v)
        result = _run_time_transform(b, frames, length_v, onesided)
        return [declared(b, result, op.output.type, "STFT")]
    if length < 1:
        raise LoweringError(f"STFT's frame_length must be positive, got {length}")
    if width is not None and width != length:
        raise LoweringError(f"STFT's window has {width} entries for frames of {length}")
    frames = _frames(b, signal, op.frame_step, length)
    if window is not None:
        weights = b.broadcast_in_dim(b.cast(window, element_of(signal.type)), [2], frames)
        frames = b.binary("mul", frames, weights)
    t = Transform(length, inverse=False, onesided=onesided)
    return [declared(b, transform_along(b, frames, 2, t), op.output.type, "STFT")]


def _run_time_length(b: CoreBuilder, signal: SSAValue, given: SSAValue | None) -> SSAValue:
    """The frame length as a rank-0 i64 checked to be positive: `given`, or else the
    signal's length."""
    if given is None:
        return b.reshape(b.slice(b.shape_of(signal), [1], [1]), tensor(i64, []))
    if [d for d in ranked_shape(given) if d != 1]:
        raise LoweringError(f"STFT's frame_length must be a scalar, got {given.type}")
    value = b.reshape(b.cast(given, i64), tensor(i64, []))
    positive = b.compare("gt", value, b.scalar(0, i64))
    return b.check(value, positive, "STFT: frame_length must be positive")


def _frames(b: CoreBuilder, signal: SSAValue, step_v: SSAValue, length: int | SSAValue) -> SSAValue:
    """The frames `[batch, count, length, c]` of the signal: frame f is
    `signal[:, f·step + j]` for j < length."""
    n = ranked_shape(signal)[1]
    step = constant_ints(step_v)
    if step is not None and (len(step) != 1 or step[0] < 1):
        raise LoweringError(f"STFT's frame_step must be a positive scalar, got {step}")
    if step is not None and n >= 0 and isinstance(length, int):
        if n < length:
            raise LoweringError(f"STFT: a signal of {n} is shorter than a frame ({length})")
        count = (n - length) // step[0] + 1
        index = np.arange(count)[:, None] * step[0] + np.arange(length)[None, :]
        return b.gather(signal, b.constant(index.astype(np.int64)), 1)
    step_s = b.reshape(b.cast(step_v, i64), tensor(i64, []))
    positive = b.compare("gt", step_s, b.scalar(0, i64))
    step_s = b.check(step_s, positive, "STFT: frame_step must be positive")
    size = b.reshape(b.slice(b.shape_of(signal), [1], [1]), tensor(i64, []))
    frame = b.scalar(length, i64) if isinstance(length, int) else length
    size = b.check(size, b.compare("ge", size, frame), "STFT: the signal is shorter than a frame")
    rest = b.binary("div", b.binary("sub", size, frame), step_s)
    count_v = b.binary("add", rest, b.scalar(1, i64))
    first = iota(b, [count_v, length], 0)
    index = b.binary("mul", first, b.broadcast_to(step_s, first.type, first))
    index = b.binary("add", index, iota(b, [count_v, length], 1))
    return b.gather(signal, index, 1)


def _vector(b: CoreBuilder, sizes: list[int | SSAValue]) -> SSAValue:
    """A 1-D i64 shape of numbers and rank-0 i64 values."""
    parts = [
        b.constant(np.array([s], np.int64))
        if isinstance(s, int)
        else b.reshape(s, tensor(i64, [1]))
        for s in sizes
    ]
    return b.concat(parts, 0)


def _run_time_matrix(
    b: CoreBuilder, length: SSAValue, onesided: bool, complex_in: bool
) -> tuple[SSAValue, SSAValue]:
    """The forward DFT matrix (see `dft_matrix`) for a run-time length, computed with core
    ops, and its number of bins."""
    bins = length
    if onesided:
        half = b.binary("div", length, b.scalar(2, i64))
        bins = b.binary("add", half, b.scalar(1, i64))
    n, k = iota(b, [length, bins], 0), iota(b, [length, bins], 1)
    turns = b.binary("mod", b.binary("mul", n, k), b.broadcast_to(length, n.type, n))
    step = b.binary("div", b.scalar(2.0 * np.pi, f64), b.cast(length, f64))
    angle = b.cast(turns, f64)
    angle = b.binary("mul", angle, b.broadcast_to(step, angle.type, angle))
    cos, sin = b.unary("cos", angle), b.unary("sin", angle)
    blocks = _vector(b, [length, 1, bins, 1])

    def block(v: SSAValue) -> SSAValue:
        return b.reshape(v, tensor(f64, [-1, 1, -1, 1]), blocks)

    re = block(cos)
    w = b.concat([re, block(b.unary("neg", sin))], 3)  # from the real part
    if complex_in:
        w = b.concat([w, b.concat([block(sin), re], 3)], 1)  # from the imaginary part
    c = 2 if complex_in else 1
    rows = b.binary("mul", length, b.scalar(c, i64))
    cols = b.binary("mul", bins, b.scalar(2, i64))
    return b.reshape(w, tensor(f64, [-1, -1]), _vector(b, [rows, cols])), bins


def _run_time_transform(
    b: CoreBuilder, frames: SSAValue, length: SSAValue, onesided: bool
) -> SSAValue:
    """The forward DFT of `[batch, count, length, c]` frames along their length, which
    arrives at run time."""
    c = ranked_shape(frames)[-1]
    matrix, bins = _run_time_matrix(b, length, onesided, c == 2)
    dims = b.shape_of(frames)
    lead = b.slice(dims, [0], [2])
    count = b.reduce("prod", lead, [0])
    entries = b.binary("mul", length, b.scalar(c, i64))
    rows = b.reshape(b.cast(frames, f64), tensor(f64, [-1, -1]), _vector(b, [count, entries]))
    spectrum = b.matmul(rows, matrix, f64, f64)
    shape = b.concat([lead, _vector(b, [bins, 2])], 0)
    batch, frames_n = ranked_shape(frames)[:2]
    out = b.reshape(spectrum, tensor(f64, [batch, frames_n, -1, 2]), shape)
    return b.cast(out, element_of(frames.type))


# ---- MelWeightMatrix --------------------------------------------------------------------------

_LN10 = float(np.log(10.0))


def _scalar_input(b: CoreBuilder, v: SSAValue, element: Attribute, what: str) -> SSAValue:
    """A scalar input as a rank-0 tensor of `element`."""
    if [d for d in ranked_shape(v) if d != 1]:
        raise LoweringError(f"MelWeightMatrix's {what} must be a scalar, got {v.type}")
    return b.reshape(b.cast(v, element), tensor(element, []))


def _log1p(b: CoreBuilder, x: SSAValue) -> SSAValue:
    """`log(1 + x)`, accurate for small x: `log(u) · x / (u - 1)` with `u = 1 + x` (the
    rounding of u cancels), and x itself where u rounds to 1."""
    u = b.binary("add", x, b.splat(1.0, x))
    shift = b.binary("sub", u, b.splat(1.0, x))
    same = b.compare("eq", shift, b.splat(0.0, x))
    safe = b.select(same, b.splat(1.0, x), shift)
    ratio = b.binary("div", b.binary("mul", b.unary("log", u), x), safe)
    return b.select(same, x, ratio)


def _mel(b: CoreBuilder, hertz: SSAValue) -> SSAValue:
    """`2595 · log1p(hertz / 700) / ln 10` (f64), rounded as ONNX's reference rounds it:
    in the type of the edge up to the division by ln 10."""
    scaled = _log1p(b, b.binary("div", hertz, b.splat(700.0, hertz)))
    mel = b.cast(b.binary("mul", scaled, b.splat(2595.0, scaled)), f64)
    return b.binary("div", mel, b.scalar(_LN10, f64))


@lowers(onnx.MelWeightMatrixOp)
def mel_weight_matrix(b: CoreBuilder, op: onnx.MelWeightMatrixOp) -> Results:
    """The triangular filters of ONNX's reference, all sizes read at run time: filter i
    rises over spectrogram bins [lo_i, center_i] and falls over [center_i, hi_i), where
    the M + 2 edges are evenly spaced in mel between the edge frequencies."""
    bins_n = _scalar_input(b, op.num_mel_bins, i64, "num_mel_bins")
    length = _scalar_input(b, op.dft_length, i64, "dft_length")
    rate = _scalar_input(b, op.sample_rate, i64, "sample_rate")
    valid = b.binary(
        "and",
        b.binary(
            "and",
            b.compare("ge", bins_n, b.scalar(0, i64)),
            b.compare("ge", length, b.scalar(0, i64)),
        ),
        b.compare("gt", rate, b.scalar(0, i64)),
    )
    message = (
        "MelWeightMatrix: num_mel_bins and dft_length must not be negative, "
        "sample_rate must be positive"
    )
    bins_n = b.check(bins_n, valid, message)
    edge = element_of(op.lower_edge_hertz.type)
    low = _mel(b, _scalar_input(b, op.lower_edge_hertz, edge, "lower_edge_hertz"))
    high = _mel(b, _scalar_input(b, op.upper_edge_hertz, edge, "upper_edge_hertz"))
    edges_n = b.binary("add", bins_n, b.scalar(2, i64))
    step = b.binary("div", b.binary("sub", high, low), b.cast(edges_n, f64))
    points = b.cast(iota(b, [edges_n], 0), f64)
    mel = b.binary(
        "add",
        b.binary("mul", points, b.broadcast_to(step, points.type, points)),
        b.broadcast_to(low, points.type, points),
    )
    power = b.binary("mul", b.binary("div", mel, b.splat(2595.0, mel)), b.splat(_LN10, mel))
    hertz = b.binary(
        "mul", b.binary("sub", b.unary("exp", power), b.splat(1.0, mel)), b.splat(700.0, mel)
    )
    scale = b.binary(
        "div", b.cast(b.binary("add", length, b.scalar(1, i64)), f64), b.cast(rate, f64)
    )
    spectral = b.unary("floor", b.binary("mul", hertz, b.broadcast_to(scale, hertz.type, hertz)))
    edges = b.cast(spectral, i64)
    rows = b.binary("add", b.binary("div", length, b.scalar(2, i64)), b.scalar(1, i64))
    j = iota(b, [rows, bins_n], 0)
    filters = iota(b, [rows, bins_n], 1)
    lo, center, hi = (
        b.insert(
            core.GatherOp.create(
                operands=[edges, b.binary("add", filters, b.splat(k, filters))],
                result_types=[filters.type],
                properties={"axis": int_attr(0)},
            )
        ).results[0]
        for k in range(3)
    )
    jf, lof, cf, hif = (b.cast(v, f64) for v in (j, lo, center, hi))
    rising = b.binary("and", b.compare("ge", j, lo), b.compare("le", j, center))
    rise_span = b.binary("sub", cf, lof)
    flat = b.compare("eq", rise_span, b.splat(0.0, rise_span))
    rise = b.binary(
        "div", b.binary("sub", jf, lof), b.select(flat, b.splat(1.0, rise_span), rise_span)
    )
    rise = b.select(flat, b.splat(1.0, rise), rise)
    falling = b.binary("and", b.compare("ge", j, center), b.compare("lt", j, hi))
    fall_span = b.binary("sub", hif, cf)
    fall_span = b.select(falling, fall_span, b.splat(1.0, fall_span))
    fall = b.binary("div", b.binary("sub", hif, jf), fall_span)
    zero = b.splat(0.0, rise)
    weights = b.select(falling, fall, b.select(rising, rise, zero))
    result = b.cast(weights, element_of(op.output.type))
    return [declared(b, result, op.output.type, "MelWeightMatrix")]
