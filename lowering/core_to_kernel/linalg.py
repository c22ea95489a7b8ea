"""core → kernel: matmul, conv, conv_transpose and pooling.

Where the time of a CNN goes, so each op takes its fastest form:

- f32 `core.matmul` becomes `kernel.matmul` on rank-3 views (the register-
  blocked GEMM of `rung_gemm.h`); a matrix broadcast over the batch is read
  once, and a transposed right operand (Gemm's transB) is read in place.
  f16/bf16 operands are widened to f32 around it. Other element types get a
  loop nest: parallel over batch, M and N, with a reduction over K carrying
  the sum in the `acc` type.
- f32 `core.conv` with more than one input channel per group is im2col into a
  scratch buffer plus one batched `kernel.matmul` with the weights on the left,
  `out[n, g] = W[g] (O/g x C/g*K…) @ cols[n, g] (C/g*K… x E…)`, so the
  result lands in NCHW directly. A 1x1, stride-1, unpadded conv needs no
  im2col: the input itself, viewed, is the right operand. Other stride-1 convs
  of 2 spatial dims on maps at least 16 wide call the runtime's
  `rung_conv_shift_float`, whose GEMM tiles read each row of the columns from
  a zero-bordered copy of the input in place (see `_shift_conv`; the small
  CNN 19% faster, DenseNet-121 12%, VGG-19 8%, ResNet-50 4%). A large map with
  few output channels (VGG's 224x224 layers: 115 MB of columns) calls the
  runtime's `rung_conv_rows_float` instead, which makes the columns of a
  block of output rows (about 1 MB) right before its GEMM, while they are in
  the cache (VGG-19: 16% faster, DenseNet-121 12%, ResNet-50 5%). The im2col is a
  `kernel.call` of the runtime's `rung_im2col_float`, which computes, per
  kernel offset, the range of output positions that read inside the input,
  copies that range and zero-fills the rest, so no element is bounds-checked.
  As generated loops, one nest per conv, it was half of gcc's time on
  ResNet-50's C.
- f32 depthwise convs (one input channel per group) of 2 spatial dims are a
  `kernel.call` of the runtime's `rung_depthwise_float`, which reads each
  channel's zero-padded plane as one flat row, so that a 7- or 14-wide map
  still fills whole vectors (EfficientNet-B0: 18% faster than the per-point
  loops below). Other ranks sum their window per output point on a padded
  copy of the input.
- Convs of other element types are direct: the output starts at zero and,
  for each (channel, kernel offset), the valid output range accumulates
  weight x shifted input along the contiguous last dim.
- `core.conv_transpose` scatters each input element times each weight into a
  zero-initialized full-size buffer, which is then cropped (pad_low/pad_high,
  negative pad_high adding zeros).
- Ordinary `core.pool` reduces each output point's whole window, a static
  nest that C generation unrolls so the loop along the output row vectorizes,
  on a copy of the input bordered with the reduction's identity (-inf, the
  smallest integer, or 0) where the windows reach past it. Combining one
  window offset at a time into the whole output instead, with a load and a
  store of the output per offset, made the 2x2 max pools of a small CNN 4x
  onnxruntime's time. Global pooling reduces per point the window offsets
  that fall inside the input.

Measured by `bench/matmul_choice.py` (median GFLOP/s of thread CPU time, one
thread; AMD EPYC (Zen 4, AVX-512, ~117 GFLOP/s peak at 3.67 GHz), gcc 12
-O3 -march=native, a shared and noisy host):

    shape M x N x K          microkernel   generated loops   onnxruntime
    64 x 3136 x 576               97             29               71
    256 x 196 x 2304              96             29               98
    2048 x 49 x 512               93             11               84
    1000 x 1 x 2048               37              2.3             33
    1 x 1000 x 2048               39             39               37
    128 x 768 x 768              102             35               89

The generated nest, even after the kernel-level passes, is 3 to 17 times
slower wherever M > 1, so every f32 matmul and conv-as-GEMM takes the
microkernel (at M = 1 both stream B at memory speed). On whole models (the
nine light ONNX models, random weights, level kernel, one thread, thread CPU
time), rung takes 1.11x onnxruntime's time on ResNet-50 (the GEMMs average
105 GFLOP/s there), 1.14x on VGG-19, 0.65x to 1.27x on the others: a
geometric mean of about 1.0x.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    MemRefType,
    TensorType,
    f32,
)
from xdsl.ir import Attribute, SSAValue

from rung.dialects import core, kernel

from .builder import Dim, KernelBuilder, static_value
from .registry import lowers

_GEMM_TYPES = (Float32Type, Float16Type, BFloat16Type)
"""Element types the f32 microkernel serves (half types widened around it)."""


# ---- index helpers ----------------------------------------------------------------------------


def _ceil_div(b: KernelBuilder, a: Dim, d: int) -> Dim:
    """Ceiling division by a positive constant, for any sign of `a`."""
    if d == 1:
        return a
    sa = static_value(a)
    if sa is not None:
        return -(-sa // d)
    return b.op1(arith.CeilDivSIOp, b.index(a), b.index(d))


def _clamp(b: KernelBuilder, v: Dim, lo: Dim, hi: Dim) -> Dim:
    return b.imin(b.imax(v, lo), hi)


def _valid_range(b: KernelBuilder, t: Dim, size: Dim, step: int, limit: Dim) -> tuple[Dim, Dim]:
    """The j in [lo, hi) ⊆ [0, limit) with 0 <= j*step - t < size.

    For a conv, `t = pad - k*dilation` and `step = stride` give the output
    positions that read input for kernel offset k; for pooling, `t = pad -
    e*stride` and `step = dilation` give the window offsets inside the input.
    """
    lo = _clamp(b, _ceil_div(b, t, step), 0, limit)
    hi = _clamp(b, _ceil_div(b, b.iadd(size, t), step), lo, limit)
    return lo, hi


def _windows(b: KernelBuilder, span: Dim, stride: int) -> Dim:
    """How many windows a dynamic dim holds: `floor(span / stride) + 1`, `span` being the
    padded size less the window's extent; none when the window is the larger (span < 0)."""
    sa = static_value(span)
    if sa is not None:
        return max(sa // stride + 1, 0)
    q = span if stride == 1 else b.op1(arith.FloorDivSIOp, b.index(span), b.index(stride))
    return b.imax(b.iadd(q, 1), 0)


def _ints(attr: object) -> list[int]:
    return list(core.ints_of(attr))  # type: ignore[arg-type]


def _element(v: SSAValue) -> Attribute:
    t = v.type
    assert isinstance(t, TensorType)
    return t.element_type


def _buffer_element(buf: SSAValue) -> Attribute:
    t = buf.type
    assert isinstance(t, MemRefType)
    return t.element_type


def _zero(b: KernelBuilder, buf: SSAValue) -> None:
    """Fill a buffer with zeros (a nest C compilers turn into memset)."""
    dims = b.dims(buf)
    element = _buffer_element(buf)

    def body(b: KernelBuilder, ivs: list[SSAValue]) -> None:
        b.store(b.const(0, element), buf, ivs)

    b.parallel(dims, body)


def _convert(b: KernelBuilder, buf: SSAValue, element: Attribute) -> SSAValue:
    """A copy of `buf` in another element type (the buffer itself if it has it)."""
    if _buffer_element(buf) == element:
        return buf
    dims = b.dims(buf)
    out = b.alloc(element, dims)

    def body(b: KernelBuilder, ivs: list[SSAValue]) -> None:
        b.store(b.cast(b.load(buf, ivs), element), out, ivs)

    b.parallel(dims, body)
    return out


def _convert_into(b: KernelBuilder, buf: SSAValue, out: SSAValue) -> None:
    element = _buffer_element(out)

    def body(b: KernelBuilder, ivs: list[SSAValue]) -> None:
        b.store(b.cast(b.load(buf, ivs), element), out, ivs)

    b.parallel(b.dims(out), body)


def _work_type(acc: Attribute) -> Attribute:
    """Half types accumulate in f32 (onnxruntime's choice, and more accurate)."""
    return f32 if isinstance(acc, Float16Type | BFloat16Type) else acc


def _gemm_ok(*types: Attribute) -> bool:
    return all(isinstance(t, _GEMM_TYPES) for t in types)


# ---- matmul -----------------------------------------------------------------------------------


def _broadcast_matrix(value: SSAValue) -> SSAValue | None:
    """The matrix that `value` broadcasts over its batch dims (unit leading dims), if any.

    `core.matmul` takes equal batch dims, so a weight shared by every batch
    arrives broadcast; the microkernel reads it once instead (batch 1).
    """
    op = value.owner
    if not isinstance(op, core.BroadcastOp):
        return None
    src_t, out_t = op.input.type, op.result.type
    if not isinstance(src_t, TensorType) or not isinstance(out_t, TensorType):
        return None
    src, out = src_t.get_shape(), out_t.get_shape()
    dims = _ints(op.dims)
    rank = len(out)
    if len(src) < 2 or any(d < 0 for d in (*src[-2:], *out[-2:])):
        return None
    if dims[-2:] != [rank - 2, rank - 1] or list(src[-2:]) != list(out[-2:]):
        return None
    if any(d != 1 for d in src[:-2]):
        return None
    return op.input


def _shared_matrix(b: KernelBuilder, value: SSAValue) -> SSAValue | None:
    """The buffer of a matrix broadcast over the batch dims of `value`, viewed [1, R, C]."""
    matrix = _broadcast_matrix(value)
    if matrix is None:
        return None
    rows, cols = matrix.type.get_shape()[-2:]  # type: ignore[attr-defined]
    return b.view(b.buffer(matrix), [1, rows, cols])


def _transposed(value: SSAValue) -> SSAValue | None:
    """The input of a core.transpose that only swaps the last two dims of `value`."""
    op = value.owner
    if not isinstance(op, core.TransposeOp):
        return None
    rank = len(_ints(op.perm))
    if _ints(op.perm) != [*range(rank - 2), rank - 1, rank - 2]:
        return None
    return op.input


def _transposed_rhs(
    b: KernelBuilder, value: SSAValue, batch: Dim, n: Dim, k: Dim
) -> SSAValue | None:
    """The right operand read in place as [B, N, K] when it is a transpose (maybe of a
    matrix then broadcast over the batch): one matrix for every batch when it is one."""
    source = _transposed(value)
    if source is None:
        matrix = _broadcast_matrix(value)
        source = _transposed(matrix) if matrix is not None else None
        if source is None:
            return None
        return b.view(b.buffer(source), [1, n, k])
    shared = _shared_matrix(b, source)
    if shared is not None:
        return shared
    shape = source.type.get_shape()  # type: ignore[attr-defined]
    if all(d == 1 for d in shape[:-2]):
        return b.view(b.buffer(source), [1, n, k])
    return b.view(b.buffer(source), [batch, n, k])


def _matmul_f32(
    b: KernelBuilder, op: core.MatmulOp, lhs: SSAValue, rhs: SSAValue, out: SSAValue
) -> None:
    """`out = lhs @ rhs` by the microkernel, all f32, as rank-3 views.

    Operands that are still the core op's own tensors are looked through: a
    matrix broadcast over the batch is read once (batch 1), and a transposed
    right operand is read in place (`transpose_rhs`), so neither copy is made
    (`kernel-drop-dead-buffers` removes the unused ones). A constant right
    operand, transposed or not, is packed for the microkernel once, by the
    model's `_init` (see `kernel_to_c.calls`), so its layout costs nothing per run.
    """
    ad, cd = b.dims(lhs), b.dims(out)
    batch = b.product(cd[:-2])
    m, k, n = ad[-2], ad[-1], cd[-1]
    a3 = b3 = None
    transpose = False
    if rhs is b.buffer(op.rhs):
        b3 = _transposed_rhs(b, op.rhs, batch, n, k)
        transpose = b3 is not None
        if b3 is None:
            b3 = _shared_matrix(b, op.rhs)
    rhs_shared = b3 is not None and b.dims(b3)[0] == 1
    if lhs is b.buffer(op.lhs) and not rhs_shared:
        a3 = _shared_matrix(b, op.lhs)
    if a3 is None:
        a3 = b.view(lhs, [batch, m, k])
    if b3 is None:
        b3 = b.view(rhs, [batch, k, n])
    c3 = b.view(out, [batch, m, n])
    b.insert(kernel.MatmulOp(a3, b3, c3, transpose_rhs=transpose))


def _matmul_loops(
    b: KernelBuilder, lhs: SSAValue, rhs: SSAValue, out: SSAValue, acc: Attribute
) -> None:
    """The generic nest: out[..., i, j] = sum_k lhs[..., i, k] * rhs[..., k, j] in `acc`."""
    k = b.dims(lhs)[-1]
    element = _buffer_element(out)

    def body(b: KernelBuilder, ivs: list[SSAValue]) -> None:
        def step(b: KernelBuilder, kv: list[SSAValue], sums: list[SSAValue]) -> list[SSAValue]:
            x = b.cast(b.load(lhs, [*ivs[:-1], kv[0]]), acc)
            y = b.cast(b.load(rhs, [*ivs[:-2], kv[0], ivs[-1]]), acc)
            return [b.binary("add", sums[0], b.binary("mul", x, y))]

        (total,) = b.reduce_loop([k], [b.const(0, acc)], step)
        b.store(b.cast(total, element), out, ivs)

    b.parallel(b.dims(out), body)


@lowers(core.MatmulOp)
def matmul(b: KernelBuilder, op: core.MatmulOp) -> list[SSAValue]:
    lhs, rhs = b.buffer(op.lhs), b.buffer(op.rhs)
    acc = op.acc
    ad, bd = b.dims(lhs), b.dims(rhs)
    out = b.alloc_for(op.result, [*ad[:-1], bd[-1]])
    element = _element(op.result)
    if _gemm_ok(_element(op.lhs), _element(op.rhs), element, acc):
        wide = out if element == f32 else b.alloc(f32, b.dims(out))
        _matmul_f32(b, op, _convert(b, lhs, f32), _convert(b, rhs, f32), wide)
        if wide is not out:
            _convert_into(b, wide, out)
    else:
        _matmul_loops(b, lhs, rhs, out, acc)
    return [out]


# ---- convolution ------------------------------------------------------------------------------


class _Conv:
    """The geometry of a core.conv: sizes as Dims, attributes as ints."""

    def __init__(self, b: KernelBuilder, op: core.ConvOp | core.ConvTransposeOp) -> None:
        self.x = b.buffer(op.input)
        self.w = b.buffer(op.weight)
        xd, wd = b.dims(self.x), b.dims(self.w)
        self.n, self.c, self.spatial = xd[0], xd[1], xd[2:]
        self.kernel = wd[2:]
        self.strides = _ints(op.strides)
        self.dilations = _ints(op.dilations)
        self.pad_low = _ints(op.pad_low)
        self.pad_high = _ints(op.pad_high)
        self.groups = op.groups.value.data
        self.rank = len(self.spatial)
        self.w_dims = wd

    def input_index(self, b: KernelBuilder, i: int, e: Dim, k: Dim) -> Dim:
        """The input position read by output position e at kernel offset k, dim i."""
        s, d, p = self.strides[i], self.dilations[i], self.pad_low[i]
        return b.isub(b.iadd(b.imul(e, s), b.imul(k, d)), p)

    def out_range(self, b: KernelBuilder, i: int, k: Dim, extent: Dim) -> tuple[Dim, Dim]:
        """The output positions of dim i that read inside the input at kernel offset k."""
        t = b.isub(self.pad_low[i], b.imul(k, self.dilations[i]))
        return _valid_range(b, t, self.spatial[i], self.strides[i], extent)


IM2COL = "im2col_float"
"""The C runtime's im2col (`rung_im2col_float` of `rung_gemm.h`), a `kernel.call`."""


def _im2col(b: KernelBuilder, g: _Conv, out_spatial: Sequence[Dim]) -> SSAValue:
    """cols [N, C, K…, E…]: the input under each kernel offset, zeros where padded; one
    call of the runtime's im2col, which the model's C does not have to compile again."""
    cols = b.alloc(f32, [g.n, g.c, *g.kernel, *out_spatial])
    b.insert(kernel.CallOp(IM2COL, [g.x, cols], [*g.strides, *g.dilations, *g.pad_low]))
    return cols


CONV_ROWS = "conv_rows_float"
"""The C runtime's conv by blocks of output rows (`rung_conv_rows_float` of `rung_gemm.h`)."""

ROW_BLOCK_FLOATS = 256 * 1024
"""The size of one row block's columns for `rung_conv_rows_float`: 1 MB, half an L2 cache."""


def _row_block(g: _Conv, out_spatial: Sequence[Dim], out_channels: Dim) -> int | None:
    """Output rows per block when a conv should run by row blocks, else None.

    Where the whole im2col would be larger than a few blocks, making each block's
    columns right before its GEMM keeps them in the cache; each block reads the
    weights again, which pays only while they are no larger than the block's
    columns (few output channels for the size of the map).
    """
    sizes = [g.n, g.c, *g.spatial, *g.kernel, *out_spatial, out_channels]
    if g.rank != 2 or any(static_value(d) is None for d in sizes):
        return None
    oh, ow = (int(static_value(d)) for d in out_spatial)  # type: ignore[arg-type]
    ck = int(static_value(g.c)) // g.groups * math.prod(int(static_value(k)) for k in g.kernel)  # type: ignore[arg-type]
    og = int(static_value(out_channels)) // g.groups  # type: ignore[arg-type]
    if ck * oh * ow <= 4 * ROW_BLOCK_FLOATS:
        return None
    rows = max(1, ROW_BLOCK_FLOATS // (ck * ow))
    if rows >= oh or og > rows * ow:
        return None
    return rows


CONV_SHIFT = "conv_shift_float"
"""The C runtime's conv that reads its input's rows in place (`rung_conv_shift_float` of
`rung_gemm.h`), a `kernel.call` that takes an epilogue; args: dilations, low pads, groups,
strides."""

SHIFT_MIN_CHANNELS = 5
"""Fewer output channels per group than this take im2col: the GEMM's few-rows form streams
the columns once, where the shifted tiles would compute mostly empty rows."""


def _shift_conv(g: _Conv, out_spatial: Sequence[Dim], out_channels: Dim) -> bool:
    """Whether a conv runs as `rung_conv_shift_float`: 2 spatial dims, static sizes, and an
    output row that the shifted tiles fill well.

    Its tiles read each row of the im2col columns straight from a zero-bordered copy of
    the input, so the columns (KH*KW times the input) are never written or read back;
    against im2col + GEMM, one thread: 3x3 convs on 64-wide maps of 3 to 64 channels
    0.7-0.8 of the time, 112-wide 0.5, 28-wide of 64-128 channels 0.83-0.89, 14-wide 1.0,
    7-wide 1.2-1.24. Rows of whole vectors (16, 32, 64, 112 points) are tiled by their
    vectors in order, three to a tile across row ends; others as one run over the bordered
    rows, wasting the border's columns, so the border must be under an eighth of the row (a
    3x3 kernel: maps of 16 or more).

    A strided conv reads its input split into phase planes, where each tap is again a
    shift; it is taken for rows of whole vectors only. One thread: the 7x7 stride-2 stem of
    3 channels at 224 (rows of 112) 0.67 of the time of blocks of im2col rows, a 3x3
    stride-2 stem 0.9; 3x3 stride-2 convs onto 28- and 14-wide maps, flat runs, 1.1-1.2.
    """
    sizes = [g.n, g.c, *g.spatial, *g.kernel, *out_spatial, out_channels]
    if g.rank != 2 or any(static_value(d) is None for d in sizes):
        return False
    og = int(static_value(out_channels)) // g.groups  # type: ignore[arg-type]
    cg = int(static_value(g.c)) // g.groups  # type: ignore[arg-type]
    if og < SHIFT_MIN_CHANNELS or cg < 1:
        return False
    ow = int(static_value(out_spatial[1]))  # type: ignore[arg-type]
    if any(s != 1 for s in g.strides):
        return ow % 16 == 0
    border = (int(static_value(g.kernel[1])) - 1) * g.dilations[1]  # type: ignore[arg-type]
    return ow % 16 == 0 or 8 * border < ow + border


def _conv_gemm(b: KernelBuilder, g: _Conv, out: SSAValue, out_spatial: list[Dim]) -> None:
    """f32 conv as im2col + one batched kernel.matmul (weights on the left), or, for a
    large map with few output channels, GEMMs on blocks of output rows."""
    groups = g.groups
    o = b.dims(out)[1]
    og = b.idiv(o, groups)
    cg = b.idiv(g.c, groups)
    ck = b.product([cg, *g.kernel])
    e = b.product(out_spatial)
    ng = b.imul(g.n, groups)
    pointwise = (
        all(static_value(k) == 1 for k in g.kernel)
        and all(s == 1 for s in g.strides)
        and not any(g.pad_low)
        and not any(g.pad_high)
    )
    if pointwise:
        cols = b.view(g.x, [ng, cg, e])
    elif _shift_conv(g, out_spatial, o):
        args = [*g.dilations, *g.pad_low, groups, *g.strides]
        b.insert(kernel.CallOp(CONV_SHIFT, [g.x, g.w, out], args))
        return
    elif (rows := _row_block(g, out_spatial, o)) is not None:
        args = [*g.strides, *g.dilations, *g.pad_low, groups, rows]
        b.insert(kernel.CallOp(CONV_ROWS, [g.x, g.w, out], args))
        return
    else:
        cols = b.view(_im2col(b, g, out_spatial), [ng, ck, e])
    weights = b.view(g.w, [groups, og, ck])
    if groups > 1 and static_value(g.n) != 1:
        # Every image needs its group's weights at the same batch index: repeat them.
        repeated = b.alloc(f32, [g.n, groups, og, ck])

        def copy(b: KernelBuilder, ivs: list[SSAValue]) -> None:
            b.store(b.load(weights, ivs[1:]), repeated, ivs)

        b.parallel(b.dims(repeated), copy)
        weights = b.view(repeated, [ng, og, ck])
    b.insert(kernel.MatmulOp(weights, cols, b.view(out, [ng, og, e])))


def _conv_direct(
    b: KernelBuilder, g: _Conv, out: SSAValue, out_spatial: list[Dim], acc: Attribute
) -> None:
    """Any conv, directly: out[n, o, range] += w[o, c, k…] * x[n, g*C/G + c, shifted range].

    Accumulates in a buffer of the work type (the output itself when it has
    that type), so the inner loop is a vectorizable axpy along the last dim.
    """
    work = _work_type(acc)
    target = out if _buffer_element(out) == work else b.alloc(work, b.dims(out))
    _zero(b, target)
    o = b.dims(out)[1]
    og = b.idiv(o, g.groups)
    cg = b.idiv(g.c, g.groups)
    r = g.rank

    def body(b: KernelBuilder, ivs: list[SSAValue], _: list[SSAValue]) -> None:
        n, oc, c, ks = ivs[0], ivs[1], ivs[2], ivs[3:]
        channel = b.iadd(b.imul(b.idiv(oc, og), cg), c)
        wv = b.cast(b.load(g.w, [oc, c, *ks]), work)
        ranges = [g.out_range(b, i, ks[i], out_spatial[i]) for i in range(r)]

        def axpy(b: KernelBuilder, js: list[SSAValue]) -> None:
            es = [b.iadd(lo, j) for (lo, _hi), j in zip(ranges, js, strict=True)]
            src = [g.input_index(b, i, es[i], ks[i]) for i in range(r)]
            xv = b.cast(b.load(g.x, [n, channel, *src]), work)
            old = b.load(target, [n, oc, *es])
            b.store(b.binary("add", old, b.binary("mul", wv, xv)), target, [n, oc, *es])

        b.parallel([b.isub(hi, lo) for lo, hi in ranges], axpy)

    kinds = ["parallel", "parallel"] + ["reduction"] * (1 + r)
    b.loop([g.n, o, cg, *g.kernel], kinds, body)
    if target is not out:
        _convert_into(b, target, out)


def _padded_input(b: KernelBuilder, g: _Conv) -> tuple[SSAValue, list[int]]:
    """The input with its padding made real (zeros), and the pad now to subtract (none).

    A conv that reads a padded copy needs no bounds at all, so its taps can be
    unrolled in registers. The copy zeroes only the border and copies the
    rest, a pass over the input that the conv's taps repay many times over.
    """
    if not any(g.pad_low) and not any(g.pad_high):
        return g.x, g.pad_low
    padded = _padded_copy(
        b, g.x, [g.n, g.c], g.spatial, g.pad_low, g.pad_high, lambda b: b.const(0.0, f32)
    )
    return padded, [0] * g.rank


def _padded_copy(
    b: KernelBuilder,
    x: SSAValue,
    lead: Sequence[Dim],
    spatial: Sequence[Dim],
    pad_low: Sequence[int],
    pad_high: Sequence[int],
    fill: Callable[[KernelBuilder], SSAValue],
) -> SSAValue:
    """A copy of `x` [*lead, *spatial] with `pad_low`/`pad_high` border positions of
    `fill(b)` around each spatial dim: only the border is filled, the rest copied."""
    r = len(spatial)
    sizes = [b.iadd(d, lo + hi) for d, lo, hi in zip(spatial, pad_low, pad_high, strict=True)]
    padded = b.alloc(_buffer_element(x), [*lead, *sizes])

    def plane(b: KernelBuilder, ivs: list[SSAValue]) -> None:
        def fill_dim(b: KernelBuilder, i: int, pos: list[Dim]) -> None:
            rest = sizes[i + 1 :]
            lo, size = pad_low[i], spatial[i]

            def border(start: Dim) -> Callable[[KernelBuilder, list[SSAValue]], None]:
                def body(b: KernelBuilder, zs: list[SSAValue]) -> None:
                    b.store(fill(b), padded, [*ivs, *pos, b.iadd(start, zs[0]), *zs[1:]])

                return body

            b.parallel([lo, *rest], border(0))

            def inside(b: KernelBuilder, js: list[SSAValue]) -> None:
                if i + 1 < r:
                    fill_dim(b, i + 1, [*pos, b.iadd(js[0], lo)])
                    return
                src = [*(b.isub(p, pad_low[d]) for d, p in enumerate(pos)), js[0]]
                b.store(b.load(x, [*ivs, *src]), padded, [*ivs, *pos, b.iadd(js[0], lo)])

            b.parallel([size], inside)
            b.parallel([pad_high[i], *rest], border(b.iadd(lo, size)))

        fill_dim(b, 0, [])

    b.parallel(list(lead), plane)
    return padded


DEPTHWISE = "depthwise_float"
"""The C runtime's depthwise conv of 2 spatial dims (`rung_depthwise_float` of `rung_gemm.h`)."""


def _conv_depthwise(b: KernelBuilder, g: _Conv, out: SSAValue, out_spatial: list[Dim]) -> None:
    """A depthwise f32 conv: with 2 spatial dims, a call of the runtime's; else as loops."""
    if g.rank == 2:
        b.insert(kernel.CallOp(DEPTHWISE, [g.x, g.w, out], [*g.strides, *g.dilations, *g.pad_low]))
        return
    _conv_depthwise_loops(b, g, out, out_spatial)


def _conv_depthwise_loops(
    b: KernelBuilder, g: _Conv, out: SSAValue, out_spatial: list[Dim]
) -> None:
    """A depthwise f32 conv as a sum over its taps per output point, on a padded input.

    Per output point the taps (a static window) are summed in a register; C
    compilers unroll them and vectorize along the row. Accumulating whole
    output planes tap by tap instead does a load and a store of the output
    per tap and point (measured 2.6x slower than onnxruntime on EfficientNet).
    """
    r = g.rank
    o = b.dims(out)[1]
    mult = b.idiv(o, g.groups)  # output channels per input channel (the depth multiplier)
    x, pads = _padded_input(b, g)

    def point(b: KernelBuilder, ivs: list[SSAValue]) -> None:
        n, oc, es = ivs[0], ivs[1], ivs[2:]
        channel = b.idiv(oc, mult)

        def tap(b: KernelBuilder, ks: list[SSAValue], acc: list[SSAValue]) -> list[SSAValue]:
            src = [
                b.iadd(b.imul(es[i], g.strides[i]), b.imul(ks[i], g.dilations[i])) for i in range(r)
            ]
            wv = b.load(g.w, [oc, 0, *ks])
            xv = b.load(x, [n, channel, *src])
            return [b.binary("add", acc[0], b.binary("mul", wv, xv))]

        (total,) = b.reduce_loop(g.kernel, [b.const(0.0, f32)], tap)
        b.store(total, out, ivs)

    assert not any(pads)
    b.parallel([g.n, o, *out_spatial], point)


def _depthwise_f32(op: core.ConvOp, g: _Conv) -> bool:
    """One input channel per group, f32 throughout, at least one spatial dim."""
    return (
        g.rank >= 1
        and static_value(g.w_dims[1]) == 1
        and _element(op.input) == f32
        and _element(op.weight) == f32
        and _element(op.result) == f32
        and _work_type(op.acc) == f32
    )


@lowers(core.ConvOp)
def conv(b: KernelBuilder, op: core.ConvOp) -> list[SSAValue]:
    g = _Conv(b, op)
    out_t = op.result.type
    assert isinstance(out_t, TensorType)
    out_spatial: list[Dim] = []
    for i, size in enumerate(out_t.get_shape()[2:]):
        if size >= 0:
            out_spatial.append(size)
            continue
        extent = b.imul(b.isub(g.kernel[i], 1), g.dilations[i])
        span = b.isub(b.iadd(g.spatial[i], g.pad_low[i] + g.pad_high[i]), b.iadd(extent, 1))
        out_spatial.append(_windows(b, span, g.strides[i]))
    out = b.alloc_for(op.result, [g.n, g.w_dims[0], *out_spatial])
    element = _element(op.result)
    cg = b.idiv(g.c, g.groups)
    if _gemm_ok(_element(op.input), _element(op.weight), element, op.acc) and static_value(cg) != 1:
        if element == f32 and _element(op.input) == f32 and _element(op.weight) == f32:
            _conv_gemm(b, g, out, out_spatial)
            return [out]
        g.x, g.w = _convert(b, g.x, f32), _convert(b, g.w, f32)
        wide = b.alloc(f32, b.dims(out))
        _conv_gemm(b, g, wide, out_spatial)
        _convert_into(b, wide, out)
        return [out]
    if _depthwise_f32(op, g):
        _conv_depthwise(b, g, out, out_spatial)
        return [out]
    _conv_direct(b, g, out, out_spatial, op.acc)
    return [out]


@lowers(core.ConvTransposeOp)
def conv_transpose(b: KernelBuilder, op: core.ConvTransposeOp) -> list[SSAValue]:
    """Scatter x[n, c, i…] * w[c, o, k…] into full[n, g*O/G + o, i*s + k*d], then crop."""
    g = _Conv(b, op)
    r = g.rank
    out_t = op.result.type
    assert isinstance(out_t, TensorType)
    og = g.w_dims[1]
    o = b.imul(og, g.groups)
    cg = b.idiv(g.c, g.groups)
    full = [
        b.iadd(b.iadd(b.imul(b.isub(d, 1), s), b.imul(b.isub(k, 1), dil)), 1)
        for d, k, s, dil in zip(g.spatial, g.kernel, g.strides, g.dilations, strict=True)
    ]
    out_spatial = [
        size if size >= 0 else b.isub(full[i], g.pad_low[i] + g.pad_high[i])
        for i, size in enumerate(out_t.get_shape()[2:])
    ]
    out = b.alloc_for(op.result, [g.n, o, *out_spatial])
    work = _work_type(op.acc)
    direct = not any(g.pad_low) and not any(g.pad_high) and _element(op.result) == work
    target = out if direct else b.alloc(work, [g.n, o, *full])
    _zero(b, target)

    def body(b: KernelBuilder, ivs: list[SSAValue], _: list[SSAValue]) -> None:
        n, grp, oc, c, ks = ivs[0], ivs[1], ivs[2], ivs[3], ivs[4:]
        channel = b.iadd(b.imul(grp, cg), c)
        out_c = b.iadd(b.imul(grp, og), oc)
        wv = b.cast(b.load(g.w, [channel, oc, *ks]), work)

        def axpy(b: KernelBuilder, pos: list[SSAValue]) -> None:
            xv = b.cast(b.load(g.x, [n, channel, *pos]), work)
            dst = [
                b.iadd(b.imul(pos[i], g.strides[i]), b.imul(ks[i], g.dilations[i]))
                for i in range(r)
            ]
            old = b.load(target, [n, out_c, *dst])
            b.store(b.binary("add", old, b.binary("mul", wv, xv)), target, [n, out_c, *dst])

        b.parallel(g.spatial, axpy)

    kinds = ["parallel"] * 3 + ["reduction"] * (1 + r)
    b.loop([g.n, g.groups, og, cg, *g.kernel], kinds, body)
    if target is out:
        return [out]
    element = _element(op.result)

    def crop(b: KernelBuilder, ivs: list[SSAValue]) -> None:
        inside: SSAValue | None = None
        src: list[Dim] = list(ivs[:2])
        for i in range(r):
            pos = b.iadd(ivs[2 + i], g.pad_low[i])
            ok = b.op1(arith.AndIOp, b.icmp("sge", pos, 0), b.icmp("slt", pos, full[i]))
            inside = ok if inside is None else b.op1(arith.AndIOp, inside, ok)
            src.append(_clamp(b, pos, 0, b.isub(full[i], 1)))
        value = b.cast(b.load(target, src), element)
        if inside is not None:
            value = b.select(inside, value, b.const(0, element))
        b.store(value, out, ivs)

    b.parallel(b.dims(out), crop)
    return [out]


# ---- pooling ----------------------------------------------------------------------------------


class _Pool:
    """The geometry of a core.pool, in the terms `_valid_range` takes."""

    def __init__(self, b: KernelBuilder, op: core.PoolOp) -> None:
        self.x = b.buffer(op.input)
        xd = b.dims(self.x)
        self.window = _ints(op.window)
        self.strides, self.dilations = _ints(op.strides), _ints(op.dilations)
        self.pad_low, self.pad_high = _ints(op.pad_low), _ints(op.pad_high)
        self.rank = len(self.window)
        self.lead, self.spatial = xd[:2], xd[2:]
        out_t = op.result.type
        assert isinstance(out_t, TensorType)
        self.out_spatial: list[Dim] = []
        for i, size in enumerate(out_t.get_shape()[2:]):
            if size >= 0:
                self.out_spatial.append(size)
                continue
            extent = (self.window[i] - 1) * self.dilations[i] + 1
            total = b.iadd(self.spatial[i], self.pad_low[i] + self.pad_high[i])
            self.out_spatial.append(_windows(b, b.isub(total, extent), self.strides[i]))

    def source(self, b: KernelBuilder, i: int, e: Dim, k: Dim) -> Dim:
        """The input position of output position e at window offset k, dim i."""
        offset = b.iadd(b.imul(e, self.strides[i]), b.imul(k, self.dilations[i]))
        return b.isub(offset, self.pad_low[i])


def _pool_per_output(b: KernelBuilder, g: _Pool, out: SSAValue, kind: str, work: Attribute) -> None:
    """Each output point reduces the window offsets inside the input (for few outputs, big
    windows: global pooling reduces a contiguous run)."""
    element = _buffer_element(out)
    r = g.rank

    def body(b: KernelBuilder, ivs: list[SSAValue]) -> None:
        es = ivs[2:]
        ranges = [
            _valid_range(
                b,
                b.isub(g.pad_low[i], b.imul(es[i], g.strides[i])),
                g.spatial[i],
                g.dilations[i],
                g.window[i],
            )
            for i in range(r)
        ]

        def step(b: KernelBuilder, js: list[SSAValue], acc: list[SSAValue]) -> list[SSAValue]:
            src = [g.source(b, i, es[i], b.iadd(ranges[i][0], js[i])) for i in range(r)]
            v = b.cast(b.load(g.x, [ivs[0], ivs[1], *src]), work)
            return [b.binary("max" if kind == "max" else "add", acc[0], v)]

        init = b.lowest(work) if kind == "max" else b.const(0, work)
        (total,) = b.reduce_loop([b.isub(hi, lo) for lo, hi in ranges], [init], step)
        b.store(b.cast(total, element), out, ivs)

    b.parallel(b.dims(out), body)


def _reach(g: _Pool, i: int) -> int:
    """How far past the input's end (dim i) the last window reads: its high padding, or
    less when static sizes show that the windows stop short of it."""
    out, size = static_value(g.out_spatial[i]), static_value(g.spatial[i])
    if out is None or size is None:
        return g.pad_high[i]
    extent = (g.window[i] - 1) * g.dilations[i] + 1
    last = (out - 1) * g.strides[i] + extent - g.pad_low[i]
    return min(max(last - size, 0), g.pad_high[i])


def _pool_windows(b: KernelBuilder, g: _Pool, out: SSAValue, kind: str, work: Attribute) -> None:
    """Each output point reduces its whole (static) window in registers, on a copy of the
    input padded with the reduction's identity where the windows reach past it.

    With static window loops and no bounds, C compilers unroll the window and vectorize
    along the output row; per output point there is no load and store of the output per
    window offset, as in `_pool_per_offset` (the 2x2 max pools of a small CNN took 4x
    onnxruntime's time that way).
    """
    element = _buffer_element(g.x)
    r = g.rank
    reach = [_reach(g, i) for i in range(r)]
    x = g.x
    if any(g.pad_low) or any(reach):

        def identity(b: KernelBuilder) -> SSAValue:
            return b.lowest(element) if kind == "max" else b.const(0, element)

        x = _padded_copy(b, g.x, g.lead, g.spatial, g.pad_low, reach, identity)
    out_element = _buffer_element(out)

    def point(b: KernelBuilder, ivs: list[SSAValue]) -> None:
        es = ivs[2:]

        def step(b: KernelBuilder, ks: list[SSAValue], acc: list[SSAValue]) -> list[SSAValue]:
            src = [
                b.iadd(b.imul(es[i], g.strides[i]), b.imul(ks[i], g.dilations[i])) for i in range(r)
            ]
            v = b.cast(b.load(x, [ivs[0], ivs[1], *src]), work)
            return [b.binary("max" if kind == "max" else "add", acc[0], v)]

        init = b.lowest(work) if kind == "max" else b.const(0, work)
        (total,) = b.reduce_loop(list(g.window), [init], step)
        b.store(b.cast(total, out_element), out, ivs)

    b.parallel(b.dims(out), point)


@lowers(core.PoolOp)
def pool(b: KernelBuilder, op: core.PoolOp) -> list[SSAValue]:
    """out[n, c, e…] = max/sum of x over the window's offsets that fall inside the input.

    Many output points per window offset (ordinary pooling) reduce their static window on
    a copy of the input padded with the identity; few (global pooling) reduce per point the
    offsets that fall inside the input.
    """
    g = _Pool(b, op)
    out = b.alloc_for(op.result, [*g.lead, *g.out_spatial])
    element = _element(op.result)
    kind = op.kind.data
    work = _work_type(element) if kind == "sum" else element
    points = [static_value(e) for e in g.out_spatial]
    many = math.prod(p if p is not None else 1 << 20 for p in points)
    if many >= math.prod(g.window):
        _pool_windows(b, g, out, kind, work)
    else:
        _pool_per_output(b, g, out, kind, work)
    return [out]


__all__ = ["conv", "conv_transpose", "matmul", "pool"]
