"""Which path f32 matmul takes, by measurement: microkernel, generated loops, onnxruntime.

    python bench/matmul_choice.py                  # all shapes, median of 9 timed runs
    python bench/matmul_choice.py --repeat 21 --loops-repeat 3 --shapes 'resnet|bert'

For each shape M x N x K (conv-as-GEMM shapes of ResNet-50, whose weights are
the left operand; its classifier as a matrix-vector product; a transformer
projection) a one-op core module `core.matmul` is compiled to C twice:

- (a) as rung lowers it, to `kernel.matmul`, the packed register-blocked
  microkernel of `lowering/kernel_to_c/rung_gemm.h`;
- (b) with the microkernel switched off, so the generic loop nest of
  `lowering/core_to_kernel/linalg.py` (parallel over M and N, a reduction over
  K) goes through the same kernel pipeline and C compiler (-O3 -march=native);

and (c) onnxruntime runs a one-node MatMul model on one thread. Each run is
timed in thread CPU time (the host may be shared; one thread, OpenMP pinned
to one thread), after a warm-up run; the table gives the median GFLOP/s and
the ratios microkernel / onnxruntime and microkernel / loops.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import re
import statistics
import time
from collections.abc import Callable

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

from rung.dialects import context, parse_module  # noqa: E402
from rung.lowering.core_to_kernel import linalg  # noqa: E402
from rung.lowering.kernel_to_c import generate_c  # noqa: E402
from rung.lowering.pipelines import default_registry  # noqa: E402
from rung.runtime.native import NativeModel, RungTensor, compile_program  # noqa: E402

SHAPES: list[tuple[str, int, int, int]] = [
    ("resnet50 res2 3x3 conv", 64, 56 * 56, 576),
    ("resnet50 res4 3x3 conv", 256, 14 * 14, 2304),
    ("resnet50 res5 1x1 conv", 2048, 7 * 7, 512),
    ("resnet50 fc, weights left", 1000, 1, 2048),
    ("resnet50 fc, batch 1", 1, 1000, 2048),
    ("bert-base projection", 128, 768, 768),
    ("mlp layer, batch 8", 8, 512, 784),
    ("mobilenetv3 expand 1x1, 112x112", 64, 112 * 112, 16),
    ("mobilenetv3 project 1x1, 56x56", 24, 56 * 56, 72),
    ("mobilenetv3 expand 1x1, 56x56", 72, 56 * 56, 24),
    ("mobilenetv3 expand 1x1, 28x28", 120, 28 * 28, 40),
    ("mobilenetv3 expand 1x1, 14x14", 480, 14 * 14, 80),
    ("mobilenetv3 project 1x1, 7x7", 160, 7 * 7, 960),
]


def core_module(m: int, n: int, k: int) -> str:
    return (
        f"func.func @mm(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>)"
        f" -> tensor<{m}x{n}xf32> {{\n"
        f"  %c = core.matmul(%a, %b) {{acc = f32}} : (tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>)"
        f" -> tensor<{m}x{n}xf32>\n"
        f"  func.return %c : tensor<{m}x{n}xf32>\n}}\n"
    )


def compile_rung(m: int, n: int, k: int, microkernel: bool) -> NativeModel:
    """The compiled one-op model; without the microkernel, f32 takes the loop nest."""
    module = parse_module(core_module(m, n, k))
    saved = linalg._gemm_ok
    if not microkernel:
        linalg._gemm_ok = lambda *types: False  # type: ignore[assignment]
    try:
        default_registry().build("core-to-kernel").apply(context(), module)
    finally:
        linalg._gemm_ok = saved  # type: ignore[assignment]
    return compile_program(generate_c(module))


def rung_runner(model: NativeModel, a: np.ndarray, b: np.ndarray) -> Callable[[], None]:
    """One call of the library's entry point on prepared tensors (no Python copies)."""
    ins = (RungTensor * 2)()
    for i, x in enumerate((a, b)):
        ins[i].data = x.ctypes.data
        ins[i].dtype = 1
        ins[i].rank = 2
        ins[i].shape[0], ins[i].shape[1] = x.shape
    outs = (RungTensor * 1)()
    arena = np.empty(model.arena_bytes + 64, np.uint8)
    base = ctypes.c_void_p((arena.ctypes.data + 63) // 64 * 64)

    def run() -> None:
        if model._run(ins, outs, base) != 0:  # noqa: SLF001
            raise RuntimeError(model._error().decode())  # noqa: SLF001
        model._free(outs[0].data)  # noqa: SLF001

    run.keep = (arena, a, b)  # type: ignore[attr-defined]
    return run


def ort_runner(a: np.ndarray, b: np.ndarray) -> Callable[[], None]:
    m, k = a.shape
    n = b.shape[1]
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["c"])],
        "mm",
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, [m, k]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, [k, n]),
        ],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, [m, n])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    sess = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    feed = {"a": a, "b": b}
    return lambda: sess.run(None, feed)


def median_seconds(run: Callable[[], None], repeat: int) -> float:
    run()
    times = []
    for _ in range(repeat):
        t = time.thread_time()
        run()
        times.append(time.thread_time() - t)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=9, help="timed runs (microkernel, ORT)")
    parser.add_argument("--loops-repeat", type=int, default=3, help="timed runs of the loops")
    parser.add_argument("--shapes", default=None, help="only shapes whose name matches")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(
        "| shape | M x N x K | microkernel GFLOP/s | loops GFLOP/s | onnxruntime GFLOP/s "
        "| micro / ORT | micro / loops |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, m, n, k in SHAPES:
        if args.shapes and not re.search(args.shapes, name):
            continue
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        want = a.astype(np.float64) @ b.astype(np.float64)
        micro = compile_rung(m, n, k, microkernel=True)
        loops = compile_rung(m, n, k, microkernel=False)
        for model in (micro, loops):  # both paths must be right before they are timed
            got = model.run([a, b])[0]
            np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3 * np.sqrt(k))
        flops = 2.0 * m * n * k
        t_micro = median_seconds(rung_runner(micro, a, b), args.repeat)
        t_loops = median_seconds(rung_runner(loops, a, b), args.loops_repeat)
        t_ort = median_seconds(ort_runner(a, b), args.repeat)
        g_micro, g_loops, g_ort = (flops / t / 1e9 for t in (t_micro, t_loops, t_ort))
        print(
            f"| {name} | {m} x {n} x {k} | {g_micro:.1f} | {g_loops:.1f} | {g_ort:.1f} "
            f"| {g_micro / g_ort:.2f} | {g_micro / g_loops:.0f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
