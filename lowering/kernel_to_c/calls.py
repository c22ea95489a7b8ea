"""Emitters of ops that call into the runtime header: `kernel.matmul` and `kernel.call`."""

from __future__ import annotations

from xdsl.dialects.builtin import MemRefType
from xdsl.ir import OpResult, SSAValue

from rung.dialects import kernel
from rung.dialects.onnx.dtypes import ONNX_FROM_MLIR

from .emitter import Emitter, PackedWeight, emits


@emits(kernel.MatmulOp)
def matmul(e: Emitter, op: kernel.MatmulOp) -> None:
    """`rung_matmul_float[_bt](lhs, rhs, out, batches, m, n, k, accumulate)`, or, when the
    right operand is one constant matrix, `rung_matmul_float_packed` with its panels packed
    once by `_init`."""
    a, b, c = e.buffer(op.lhs), e.buffer(op.rhs), e.buffer(op.out)
    tb = op.transpose_rhs is not None
    acc = "1" if op.accumulate is not None else "0"
    if _may_share(c.dims[0], c.dims[1], c.dims[2], a.dims[2]):
        e.uses_openmp = True
    packed = _packed_rhs(e, op)
    ep = _epilogue(e, op)
    if packed is not None and packed.thin:
        e.emit(
            f"rung_matmul_float_thin({a.ptr}, {b.ptr}, {packed.name}, {c.ptr}, {a.dims[0]}, "
            f"{c.dims[0]}, {c.dims[1]}, {c.dims[2]}, {a.dims[2]}, {acc}, {int(tb)});"
        )
        if ep:
            e.emit(f"rung_gemm_epilogue_apply({ep}, {c.ptr}, {c.dims[1]}, {c.dims[2]});")
        return
    if ep:
        e.emit(
            f"rung_matmul_float_ep({a.ptr}, {b.ptr}, {packed.name if packed else 0}, {c.ptr}, "
            f"{a.dims[0]}, {b.dims[0]}, {c.dims[0]}, {c.dims[1]}, {c.dims[2]}, {a.dims[2]}, "
            f"{acc}, {int(tb)}, {ep});"
        )
        return
    if packed is not None:
        e.emit(
            f"rung_matmul_float_packed({a.ptr}, {b.ptr}, {packed.name}, {c.ptr}, {a.dims[0]}, "
            f"{c.dims[0]}, {c.dims[1]}, {c.dims[2]}, {a.dims[2]}, {acc}, {int(tb)});"
        )
        return
    fn = "rung_matmul_float_bt" if tb else "rung_matmul_float"
    e.emit(
        f"{fn}({a.ptr}, {b.ptr}, {c.ptr}, {a.dims[0]}, {b.dims[0]}, {c.dims[0]}, "
        f"{c.dims[1]}, {c.dims[2]}, {a.dims[2]}, {acc});"
    )


def _epilogue(e: Emitter, op: kernel.MatmulOp | kernel.CallOp) -> str:
    """The op's epilogue, and its activation, as a pointer to a `rung_gemm_epilogue`
    compound literal, or ""."""
    steps = op.steps()
    if not steps and op.activation is None:
        return ""
    parts = []
    for (name, index), v in zip(steps, op.epilogue_args, strict=True):
        code = f"RUNG_EP_{name.upper()}, RUNG_EP_{index.upper()}"
        parts.append(f"{{{code}, (const float *){e.buffer(v).ptr}}}")
    act = f", RUNG_ACT_{op.activation.data.upper()}" if op.activation is not None else ""
    return f"&(const rung_gemm_epilogue){{{len(parts)}, {{{', '.join(parts) or '{0}'}}}{act}}}"


GEMM_MIN_FLOPS = 1 << 20
"""`RUNG_GEMM_MIN_FLOPS` of `rung_gemm.h`: a smaller product runs on one thread..."""

GEMM_MIN_STREAM = 1 << 16
"""... unless it is thin and streams this many floats (`RUNG_GEMM_MIN_STREAM`)."""


def _may_share(*dims: str) -> bool:
    """Whether a product of these sizes (batch, M, N, K; C expressions) may be large enough
    for the GEMM to share it among threads, so that the library must be built with OpenMP:
    a model whose only large work is its products (an MLP) otherwise ran them on one
    thread, whatever the thread count asked for."""
    if not all(d.isdigit() for d in dims):
        return True
    batch, m, n, k = (int(d) for d in dims)
    streamed = m * k if n <= 4 else k * n if m <= 4 else 0
    return 2 * batch * m * n * k >= GEMM_MIN_FLOPS or batch * streamed >= GEMM_MIN_STREAM


def _constant_source(v: SSAValue) -> kernel.ConstantOp | None:
    """The weights a buffer shows through reshaping views, if it is weights."""
    while isinstance(v, OpResult):
        owner = v.owner
        if isinstance(owner, kernel.ConstantOp):
            return owner
        if not isinstance(owner, kernel.ViewOp):
            return None
        v = owner.source
    return None


def _thin(e: Emitter, op: kernel.MatmulOp) -> bool:
    """Whether every product has at most 4 rows (known statically): the GEMM then streams B
    itself (a matrix-vector product), so a packed copy would only take memory."""
    a, c = e.buffer(op.lhs), e.buffer(op.out)
    if not (c.dims[0].isdigit() and c.dims[1].isdigit()):
        return False
    rows, batch = int(c.dims[1]), int(c.dims[0])
    return rows <= 4 and (a.dims[0] == "1" or rows * batch <= 4)


THIN_COLUMNS = 16
"""Fewer columns than the widest vector (AVX-512's 16 floats): a product of at most 4 rows
(a classifier's last layer, one image at a time) streams each row of B with vectors mostly
empty, so its constant B is kept transposed as well, for dot products along K; the runtime
decides for its own vector width (`rung_gemm_prepack_thin`). A small CNN's 1 x 10 x 4096
layer took 26 us that way, a twelfth of the model."""


THIN_MIN_K = 64
"""`rung_gemm_prepack_thin`'s smallest K: shorter dot products gain nothing."""


def _packed_rhs(e: Emitter, op: kernel.MatmulOp) -> PackedWeight | None:
    """The packed copy of a constant right operand (one matrix of static size), declared
    once per weight and layout; None when the operand is not such a matrix, or is
    streamed as it is (a thin product's wide or already transposed B)."""
    source = _constant_source(op.rhs)
    t = op.rhs.type
    if source is None or not isinstance(t, MemRefType):
        return None
    shape = t.get_shape()
    if len(shape) != 3 or shape[0] != 1 or any(d < 0 for d in shape):
        return None
    weight = e.buffer(source.result).ptr
    if not any(w.name == weight for w in e.weights):
        return None
    tb = op.transpose_rhs is not None
    n, k = (shape[1], shape[2]) if tb else (shape[2], shape[1])
    thin = _thin(e, op)
    if thin and (tb or n >= THIN_COLUMNS or k < THIN_MIN_K):
        return None
    key = (weight, n, k, tb, thin, 0)
    for packed in e.packed:
        if packed.key == key:
            return packed
    name = e.fresh(f"{weight}_{'thin' if thin else 'packed'}")
    e.packed.append(PackedWeight(name, weight, n, k, tb, thin))
    return e.packed[-1]


OPENMP_CALLEES = frozenset(
    {"conv_rows_float", "conv_shift_float", "depthwise_float", "im2col_float"}
)
"""Runtime routines that share their work among threads: a model that calls one needs the
runtime built with OpenMP, even when none of its own loops is parallel."""


@emits(kernel.CallOp)
def call(e: Emitter, op: kernel.CallOp) -> None:
    """`rung_<callee>((rung_tensor[]){...}, (const int64_t[]){args})`: the buffers as
    tensors of the C ABI, and the op's integer arguments; a callee that takes an
    epilogue gets it (or 0) last."""
    parts = []
    for v in op.data_buffers:
        buf = e.buffer(v)
        t = v.type
        assert isinstance(t, MemRefType)
        dims = ", ".join(buf.dims) or "0"
        parts.append(
            f"{{(void *){buf.ptr}, {ONNX_FROM_MLIR[t.element_type]}, {len(buf.dims)}, {{{dims}}}}}"
        )
    ints = kernel.ints_of(op.args)
    args = ", ".join(str(a) for a in ints) or "0"
    ep = f", {_epilogue(e, op) or 0}" if op.callee.data in kernel.CallOp.EPILOGUE_OUT else ""
    if op.callee.data in OPENMP_CALLEES:
        e.uses_openmp = True
    callee = op.callee.data
    if callee == CONV_SHIFT:
        packed = _packed_conv_weights(e, op.data_buffers[1], ints[4] if len(ints) > 4 else 1)
        if packed is not None:
            callee, ep = CONV_SHIFT_PACKED, f"{ep}, {packed.name}"
    e.emit(
        f"rung_{callee}((rung_tensor[]){{{', '.join(parts)}}}, (const int64_t[]){{{args}}}{ep});"
    )


CONV_SHIFT = "conv_shift_float"
CONV_SHIFT_PACKED = "conv_shift_packed_float"
"""`rung_conv_shift_float` with its weights packed once by `_init` (`rung_conv_prepack_w`):
its tiles read each step's MR weights from one pointer, where MR row pointers left too
few registers for tiles whose vectors lie on different rows; packing them on every call
cost a 7x7 conv of 512 channels half its time."""


def _packed_conv_weights(e: Emitter, w: SSAValue, groups: int) -> PackedWeight | None:
    """The packed copy of a conv's constant weights `[O, C/G, KH, KW]` of static shape,
    declared once per weight; None for weights computed at run time."""
    source = _constant_source(w)
    t = w.type
    if source is None or not isinstance(t, MemRefType):
        return None
    shape = t.get_shape()
    if len(shape) != 4 or any(d <= 0 for d in shape) or groups <= 0 or shape[0] % groups:
        return None
    weight = e.buffer(source.result).ptr
    if not any(x.name == weight for x in e.weights):
        return None
    n, k = shape[0], shape[1] * shape[2] * shape[3]
    key = (weight, n, k, False, False, groups)
    for packed in e.packed:
        if packed.key == key:
            return packed
    e.packed.append(PackedWeight(e.fresh(f"{weight}_panels"), weight, n, k, False, False, groups))
    return e.packed[-1]
