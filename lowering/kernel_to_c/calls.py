"""Emitters of ops that call into the runtime header: `kernel.matmul` and `kernel.call`."""

from __future__ import annotations

from xdsl.dialects.builtin import MemRefType

from rung.dialects import kernel
from rung.dialects.onnx.dtypes import ONNX_FROM_MLIR

from .emitter import Emitter, emits


@emits(kernel.MatmulOp)
def matmul(e: Emitter, op: kernel.MatmulOp) -> None:
    """`rung_matmul_float[_bt](lhs, rhs, out, batches, m, n, k, accumulate)`."""
    a, b, c = e.buffer(op.lhs), e.buffer(op.rhs), e.buffer(op.out)
    fn = "rung_matmul_float_bt" if op.transpose_rhs is not None else "rung_matmul_float"
    acc = "1" if op.accumulate is not None else "0"
    e.emit(
        f"{fn}({a.ptr}, {b.ptr}, {c.ptr}, {a.dims[0]}, {b.dims[0]}, {c.dims[0]}, "
        f"{c.dims[1]}, {c.dims[2]}, {a.dims[2]}, {acc});"
    )


@emits(kernel.CallOp)
def call(e: Emitter, op: kernel.CallOp) -> None:
    """`rung_<callee>((rung_tensor[]){...}, (const int64_t[]){args})`: the buffers as
    tensors of the C ABI, and the op's integer arguments."""
    parts = []
    for v in op.buffers:
        buf = e.buffer(v)
        t = v.type
        assert isinstance(t, MemRefType)
        dims = ", ".join(buf.dims) or "0"
        parts.append(
            f"{{(void *){buf.ptr}, {ONNX_FROM_MLIR[t.element_type]}, {len(buf.dims)}, {{{dims}}}}}"
        )
    args = ", ".join(str(a) for a in kernel.ints_of(op.args)) or "0"
    e.emit(
        f"rung_{op.callee.data}((rung_tensor[]){{{', '.join(parts)}}}, "
        f"(const int64_t[]){{{args}}});"
    )
