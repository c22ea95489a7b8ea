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

When only the run knows the size of the signal axis or the DFT length (a
`?` dim, a dft_length or frame_length input), the same matrix is computed at
run time from iotas, entry for entry as the constant one. A last dim of `?`
is checked at run time to be 1 or 2 and the signal made complex (`[..., 2]`,
imaginary parts of 0 for a real one), so no branch depends on it.

An axis that arrives at run time picks among every possible axis with a
chain of `core.if`s (the shapes may differ per axis); a run-time axis out of
range fails the run. STFT gathers its frames (`start + j`, starts a
multiple of the run-time step), weights them by the window and takes the
DFT of each along the frame axis. MelWeightMatrix computes its triangular
filters from its scalar inputs at run time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.ir import Attribute, Block, Region, SSAValue

from rung.dialects import core
from rung.dialects.dtypes import f64, i64
from rung.dialects.onnx import generated_ops as onnx
from rung.lowering.kit import (
    AnySize,
    CoreBuilder,
    DimOf,
    LoweringError,
    Size,
    constant_ints,
    declared,
    element_of,
    int_attr,
    iota,
    ranked_shape,
    stacked,
    static_size,
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
    cos = np.where(quarter, np.array(_QUARTER_COS)[q], cos)
    sin = np.where(quarter, np.array(_QUARTER_SIN)[q], sin)
    return cos, sin


_QUARTER_COS = [1.0, 0.0, -1.0, 0.0]
_QUARTER_SIN = [0.0, 1.0, 0.0, -1.0]


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


def _result_shape(shape: tuple[int, ...], axis: int, bins: int, real_out: bool) -> list[int]:
    """The result's static shape (`bins` is -1 when only the run knows it)."""
    out = list(shape)
    out[axis] = bins
    out[-1] = 1 if real_out else 2
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


# ---- sizes only the run knows -----------------------------------------------------------------


def _static(size: AnySize) -> int:
    """The size when the compiler knows it, else -1."""
    return -1 if isinstance(size, SSAValue) else static_size(size)


def _known(b: CoreBuilder, size: Size) -> int | SSAValue:
    """A size as a number when the compiler knows it, else as a rank-0 i64."""
    return _static(size) if _static(size) >= 0 else _value(b, size)


def _value(b: CoreBuilder, size: AnySize) -> SSAValue:
    """A size as a rank-0 i64 value."""
    if isinstance(size, SSAValue):
        return size
    if _static(size) >= 0:
        return b.scalar(_static(size), i64)
    return b.reshape(b.shape_vector([size]), tensor(i64, []))


def _times(b: CoreBuilder, size: AnySize, factor: int) -> AnySize:
    """`size · factor`, a number when the size is known."""
    if _static(size) >= 0:
        return _static(size) * factor
    return b.binary("mul", _value(b, size), b.scalar(factor, i64))


def _one_sided(b: CoreBuilder, length: AnySize) -> AnySize:
    """The bins of a one-sided spectrum, `L/2 + 1`."""
    if _static(length) >= 0:
        return _static(length) // 2 + 1
    half = b.binary("div", _value(b, length), b.scalar(2, i64))
    return b.binary("add", half, b.scalar(1, i64))


def _vector(b: CoreBuilder, sizes: Sequence[AnySize]) -> SSAValue:
    """A 1-D i64 shape of sizes; each run of numbers and dims is one `shape_vector`."""
    parts: list[SSAValue] = []
    run: list[Size] = []
    for s in sizes:
        if isinstance(s, SSAValue):
            if run:
                parts.append(b.shape_vector(run))
                run = []
            parts.append(b.reshape(s, tensor(i64, [1])))
        else:
            run.append(s)
    if run:
        parts.append(b.shape_vector(run))
    return b.concat(parts, 0)


def _reshaped(b: CoreBuilder, x: SSAValue, sizes: Sequence[AnySize]) -> SSAValue:
    """`x` reshaped to `sizes`, read at run time where the compiler does not know them."""
    out = [_static(s) for s in sizes]
    result = tensor(element_of(x.type), out)
    if all(d >= 0 for d in out):
        return b.reshape(x, result)
    return b.reshape(x, result, _vector(b, sizes))


def _product(b: CoreBuilder, x: SSAValue, count: int) -> AnySize:
    """The product of the first `count` dims of `x`."""
    lead = ranked_shape(x)[:count]
    if all(d >= 0 for d in lead):
        return int(np.prod(lead, dtype=np.int64))
    return b.reduce("prod", b.slice(b.shape_of(x), [0], [count]), [0])


def _positive(b: CoreBuilder, value: SSAValue, message: str) -> SSAValue:
    """A rank-0 i64, checked by the run to be positive."""
    return b.check(value, b.compare("gt", value, b.scalar(0, i64)), message, culprit=value)


def _scalar(b: CoreBuilder, v: SSAValue, what: str) -> SSAValue:
    """A scalar input (rank 0, or one entry in each dim) as a rank-0 i64."""
    if [d for d in ranked_shape(v) if d not in (1, -1)]:
        raise LoweringError(f"{what} must be a scalar, got {v.type}")
    return b.reshape(b.cast(v, i64), tensor(i64, []))


def complex_last(b: CoreBuilder, x: SSAValue, what: str) -> SSAValue:
    """`x` with a static last dim. A `?` one is checked by the run to be 1 or 2 and the
    signal becomes complex, `[..., 2]`: it gathers entries 0 and `c - 1` of the last dim
    and zeroes the second unless `c == 2`, so one lowering serves both."""
    shape = ranked_shape(x)
    if shape[-1] >= 0:
        return x
    rank = len(shape)
    c = _value(b, DimOf(x, rank - 1))
    real_or_complex = b.binary(
        "or", b.compare("eq", c, b.scalar(1, i64)), b.compare("eq", c, b.scalar(2, i64))
    )
    x = b.check(x, real_or_complex, f"{what}: the last dim must be 1 (real) or 2 (complex)")
    part = b.constant(np.arange(2, dtype=np.int64))
    count = b.broadcast_to(c, part.type)
    picks = b.binary("mul", part, b.binary("sub", count, b.splat(1, count)))  # [0, c - 1]
    both = b.gather(x, picks, rank - 1)
    keep = b.broadcast_in_dim(b.compare("lt", part, count), [rank - 1], both)
    return b.select(keep, both, b.splat(0, both))


# ---- a run-time DFT matrix --------------------------------------------------------------------


def _run_time_unit(b: CoreBuilder, turns: SSAValue, length: SSAValue) -> tuple[SSAValue, SSAValue]:
    """`_unit` computed by the run: cos and sin of `2π·turns/length` (both i64 tensors of
    one shape, turns reduced mod length), quarter turns exact."""
    angle = b.cast(turns, f64)
    angle = b.binary("mul", b.splat(2.0 * np.pi, angle), angle)
    angle = b.binary("div", angle, b.cast(length, f64))
    cos, sin = b.unary("cos", angle), b.unary("sin", angle)
    four = b.binary("mul", turns, b.splat(4, turns))
    quarter = b.compare("eq", b.binary("mod", four, length), b.splat(0, four))
    q = b.binary("div", four, length)  # which quarter, 0..3

    def exact(values: list[float]) -> SSAValue:
        return b.gather(b.constant(np.array(values, np.float64)), q, 0)

    return b.select(quarter, exact(_QUARTER_COS), cos), b.select(quarter, exact(_QUARTER_SIN), sin)


def run_time_matrix(
    b: CoreBuilder,
    entries: AnySize,
    length: AnySize,
    inverse: bool,
    onesided: bool,
    complex_in: bool,
) -> tuple[SSAValue, AnySize]:
    """`dft_matrix` computed by the run for sizes it alone knows, and its number of bins."""
    bins = _one_sided(b, length) if onesided and not inverse else length
    n, k = iota(b, [entries, bins], 0), iota(b, [entries, bins], 1)
    size = b.broadcast_to(_value(b, length), n.type, n)
    turns = b.binary("mod", b.binary("mul", n, k), size)
    cos, sin = _run_time_unit(b, turns, size)
    inside = b.compare("lt", n, size)
    if inverse:
        scale = b.cast(size, f64)
        weight = b.binary("div", b.splat(1.0, scale), scale)
        if onesided:  # see dft_matrix
            twice = b.binary(
                "and",
                b.compare("gt", n, b.splat(0, n)),
                b.compare("ne", b.binary("mul", n, b.splat(2, n)), size),
            )
            weight = b.select(twice, b.binary("div", b.splat(2.0, scale), scale), weight)
            half = b.binary("div", size, b.splat(2, size))
            inside = b.binary("and", inside, b.compare("le", n, half))
        re, im = b.binary("mul", cos, weight), b.binary("mul", sin, weight)
    else:
        re, im = cos, b.binary("sub", b.splat(0.0, sin), sin)  # 0 - sin: never -0.0
    zero = b.splat(0.0, re)
    re, im = b.select(inside, re, zero), b.select(inside, im, zero)
    shape = tensor(f64, [_static(entries), 1, _static(bins), 1])
    blocks = None if all(d >= 0 for d in ranked_shape(shape)) else _vector(b, [entries, 1, bins, 1])

    def block(v: SSAValue) -> SSAValue:
        return b.reshape(v, shape, blocks)

    c_out = 1 if inverse and onesided else 2
    re_block = block(re)
    w = b.concat([re_block, block(im)], 3) if c_out == 2 else re_block  # from the real part
    if complex_in:  # from the imaginary part
        minus_im = block(b.binary("sub", zero, im))
        w = b.concat([w, b.concat([minus_im, re_block], 3) if c_out == 2 else minus_im], 1)
    rows, cols = _times(b, entries, 2 if complex_in else 1), _times(b, bins, c_out)
    return _reshaped(b, w, [rows, cols]), bins


def run_time_transform(
    b: CoreBuilder, x: SSAValue, axis: int, length: AnySize, inverse: bool, onesided: bool
) -> SSAValue:
    """`transform_along` for a DFT whose entries or length only the run knows: the same
    matmul, with a matrix the run computes. `x` is `[..., 1 or 2]`."""
    shape = ranked_shape(x)
    rank, c_in = len(shape), shape[-1]
    perm = [d for d in range(rank - 1) if d != axis] + [axis, rank - 1]
    moved = b.transpose(b.cast(x, f64), perm)
    sizes = b.dims(moved)
    matrix, bins = run_time_matrix(b, sizes[-2], length, inverse, onesided, c_in == 2)
    rows = _reshaped(b, moved, [_product(b, moved, rank - 2), _times(b, sizes[-2], c_in)])
    spectrum = b.matmul(rows, matrix, f64, f64)
    c_out = 1 if inverse and onesided else 2
    spectrum = _reshaped(b, spectrum, [*sizes[:-2], bins, c_out])
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
    value = _scalar(b, axis, f"{what}'s axis")
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


def _given_length(b: CoreBuilder, v: SSAValue, op: str, name: str) -> int | SSAValue:
    """A length input: its value when constant, else a rank-0 i64 the run checks to be
    positive."""
    what = f"{op}'s {name}"
    if not _is_constant(v):
        return _positive(b, _scalar(b, v, what), f"{op}: {name} must be positive")
    value = _constant_scalar(v, what)
    assert value is not None
    if value < 1:
        raise LoweringError(f"{what} must be positive, got {value}")
    return value


@dataclass(frozen=True)
class _DFT:
    """A DFT node: its (complex-made) signal and what the matrix needs."""

    signal: SSAValue
    given: int | SSAValue | None  # the dft_length input
    inverse: bool
    onesided: bool

    @property
    def irfft(self) -> bool:
        return self.inverse and self.onesided

    def default(self, n: int) -> int:
        """The length implied by `n` entries along the axis."""
        return 2 * (n - 1) if self.irfft else n

    def feasible(self, axis: int) -> bool:
        """Whether the DFT along `axis` can be built (a run-time axis skips the others)."""
        n = ranked_shape(self.signal)[axis]
        return self.given is not None or n < 0 or self.default(n) >= 1

    def bins(self, axis: int) -> int:
        """The result's size along `axis` when the compiler knows it, else -1."""
        n = ranked_shape(self.signal)[axis]
        length = self.given if self.given is not None else self.default(n) if n >= 0 else -1
        if not isinstance(length, int) or length < 0:
            return -1
        return Transform(length, self.inverse, self.onesided).bins()

    def length(self, b: CoreBuilder, axis: int) -> int | SSAValue:
        """The DFT length along `axis`: the given one, else from the axis' size (then
        checked by the run when only it knows that size)."""
        if self.given is not None:
            return self.given
        n = ranked_shape(self.signal)[axis]
        if n >= 0:
            if self.default(n) < 1:
                raise LoweringError(f"DFT along axis {axis} of {self.signal.type}: no samples")
            return self.default(n)
        size = _value(b, DimOf(self.signal, axis))
        if self.irfft:
            size = b.binary("mul", b.binary("sub", size, b.scalar(1, i64)), b.scalar(2, i64))
        return _positive(b, size, f"DFT: no samples along axis {axis}")

    def build(self, b: CoreBuilder, axis: int) -> SSAValue:
        """The DFT along `axis`: by a constant matrix when the compiler knows the sizes,
        else by one the run computes."""
        length = self.length(b, axis)
        flags = self.inverse, self.onesided
        if isinstance(length, int) and ranked_shape(self.signal)[axis] >= 0:
            return transform_along(b, self.signal, axis, Transform(length, *flags))
        return run_time_transform(b, self.signal, axis, length, *flags)


@lowers(onnx.DFTOp)
def dft(b: CoreBuilder, op: onnx.DFTOp) -> Results:
    x = op.input
    shape = ranked_shape(x)
    rank = len(shape)
    if rank < 2 or shape[-1] not in (-1, 1, 2):
        raise LoweringError(f"DFT needs an input of rank >= 2 ending in 1 or 2, got {x.type}")
    given = None if op.dft_length is None else _given_length(b, op.dft_length, "DFT", "dft_length")
    node = _DFT(
        complex_last(b, x, "DFT"), given, bool(op.attr("inverse")), bool(op.attr("onesided"))
    )
    known = _constant_scalar(op.axis, "DFT's axis") if _is_constant(op.axis) else None
    if op.axis is None or known is not None:
        axis = -2 if known is None else known
        if not -rank <= axis <= rank - 2 or axis == -1:
            raise LoweringError(f"DFT's axis {axis} is out of range for rank {rank}")
        result = node.build(b, axis % rank)
    else:
        candidates = [a for a in range(rank - 1) if node.feasible(a)]
        if not candidates:
            raise LoweringError(f"DFT of {x.type}: no axis has samples to transform")
        shapes = [_result_shape(shape, a, node.bins(a), node.irfft) for a in candidates]
        joined = tensor(element_of(x.type), _joined(shapes))
        value = run_time_axis(b, op.axis, rank, candidates, "DFT")
        result = choose(b, value, candidates, node.build, joined)
    return [declared(b, result, op.output.type, "DFT")]


def _is_constant(v: SSAValue | None) -> bool:
    return v is not None and constant_ints(v) is not None


# ---- STFT -------------------------------------------------------------------------------------


@lowers(onnx.STFTOp)
def stft(b: CoreBuilder, op: onnx.STFTOp) -> Results:
    shape = ranked_shape(op.signal)
    if len(shape) != 3 or shape[-1] not in (-1, 1, 2):
        raise LoweringError(f"STFT needs a signal [batch, length, 1 or 2], got {op.signal.type}")
    if op.window is not None and len(ranked_shape(op.window)) != 1:
        raise LoweringError(f"STFT needs a 1-D window, got {op.window.type}")
    onesided = bool(op.attr("onesided"))
    signal = complex_last(b, op.signal, "STFT")
    length, window = _frame_length(b, signal, op.frame_length, op.window)
    frames = _frames(b, signal, op.frame_step, length)
    if window is not None:
        weights = b.broadcast_in_dim(b.cast(window, element_of(signal.type)), [2], frames)
        frames = b.binary("mul", frames, weights)
    if isinstance(length, int):
        result = transform_along(b, frames, 2, Transform(length, False, onesided))
    else:
        result = run_time_transform(b, frames, 2, length, False, onesided)
    return [declared(b, result, op.output.type, "STFT")]


def _frame_length(
    b: CoreBuilder, signal: SSAValue, given: SSAValue | None, window: SSAValue | None
) -> tuple[int | SSAValue, SSAValue | None]:
    """The frame length (a number when the compiler knows it, else a rank-0 i64 the run
    checks to be positive): the given one, else the window's, else the whole signal's;
    and the window, checked to be as long as a frame."""
    asked = None if given is None else _given_length(b, given, "STFT", "frame_length")
    width = None if window is None else _known(b, DimOf(window, 0))
    length = asked if asked is not None else width
    if asked is not None and width is not None and window is not None:
        if isinstance(asked, int) and isinstance(width, int):
            if asked != width:
                raise LoweringError(f"STFT's window has {width} entries for frames of {asked}")
        else:
            same = b.compare("eq", _value(b, width), _value(b, asked))
            window = b.check(window, same, "STFT: the window's length differs from frame_length")
        length = width if isinstance(width, int) else asked
    if length is None:
        length = _known(b, DimOf(signal, 1))
    if isinstance(length, int):
        if length < 1:
            raise LoweringError(f"STFT's frame_length must be positive, got {length}")
    elif length is not asked:
        length = _positive(b, length, "STFT: a frame must not be empty")
    return length, window


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
    step_s = _positive(
        b, _scalar(b, step_v, "STFT's frame_step"), "STFT: frame_step must be positive"
    )
    size = _value(b, DimOf(signal, 1))
    frame = b.scalar(length, i64) if isinstance(length, int) else length
    size = b.check(size, b.compare("ge", size, frame), "STFT: the signal is shorter than a frame")
    rest = b.binary("div", b.binary("sub", size, frame), step_s)
    count_v = b.binary("add", rest, b.scalar(1, i64))
    first = iota(b, [count_v, length], 0)
    index = b.binary("mul", first, b.broadcast_to(step_s, first.type, first))
    index = b.binary("add", index, iota(b, [count_v, length], 1))
    return b.gather(signal, index, 1)


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
