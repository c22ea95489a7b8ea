"""The GEMM microkernel shared among threads (`rung_gemm.h`): every block split gives numpy's
product, and the split follows the product's shape.

One parallel region covers a product; each thread computes its own rows or columns of C
(or its own matrices of a batch) from its rows of A and its columns of B, packing its own
panels. A harness calls `rung_matmul_float`, `_bt` and `_packed` on 1, 2 and 3 threads
over shapes that cut panels and vectors in odd places, under ASan and UBSan, and compares
every result with numpy's; a second harness prints the grid `rung_gemm_split` picks.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from rung.lowering.kernel_to_c import generate_c
from rung.lowering.kernel_to_c.calls import GEMM_MIN_FLOPS, GEMM_MIN_STREAM
from rung.lowering.kernel_to_c.emit import RUNTIME_HEADER
from rung.runtime import native
from rung.runtime.levels import lower
from rung.runtime.session import load_module

SHAPES = [
    (1, 1, 1),
    (3, 5, 7),
    (8, 512, 784),  # a batch of 8 through a Linear: few rows, columns shared
    (24, 3136, 144),  # a 1x1 conv of 24 channels over 56x56
    (1152, 49, 64),  # 1152 channels of a 7x7 map: rows shared
    (1, 1000, 1280),  # a classifier's matrix-vector product
    (13, 97, 300),  # K over one block, ragged M and N
    (5, 3, 17),
    (2, 4096, 9),
    (9, 2, 513),
    (48, 49, 48),
    (33, 600, 260),
    (8, 10, 512),  # fewer columns than a vector: dot products along K
    (3, 7, 300),
    (1, 10, 700),
]

HARNESS = r"""
#include "rung_runtime.h"
#include <stdio.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static float *read_floats(FILE *f, int64_t count) {
  float *p = malloc(sizeof(float) * (size_t)(count > 0 ? count : 1));
  if (count > 0 && fread(p, sizeof(float), (size_t)count, f) != (size_t)count) exit(2);
  return p;
}

/* stdin: cases of (threads, m, n, k, batch, shared_b, tb, packed, accumulate) followed by
 * A, B and C's initial values; stdout: each C after the product. */
int main(void) {
  long long h[9];
  while (fread(h, sizeof h, 1, stdin) == 1) {
    const int64_t m = h[1], n = h[2], k = h[3], batch = h[4], bb = h[5] ? 1 : batch;
    const int tb = (int)h[6], pk = (int)h[7], acc = (int)h[8];
#ifdef _OPENMP
    omp_set_num_threads((int)h[0]);
#endif
    float *a = read_floats(stdin, batch * m * k), *b = read_floats(stdin, bb * k * n);
    float *c = read_floats(stdin, batch * m * n);
    float *packed = pk ? rung_gemm_prepack_b(b, n, k, tb) : 0;
    if (pk)
      rung_matmul_float_packed(a, b, packed, c, batch, batch, m, n, k, acc, tb);
    else if (tb)
      rung_matmul_float_bt(a, b, c, batch, bb, batch, m, n, k, acc);
    else
      rung_matmul_float(a, b, c, batch, bb, batch, m, n, k, acc);
    fwrite(c, sizeof(float), (size_t)(batch * m * n), stdout);
    free(a), free(b), free(c), free(packed);
  }
  return 0;
}
"""

SPLIT = r"""
#include "rung_runtime.h"
#include <stdio.h>
int main(int argc, char **argv) {
  int tm, tn, by_batch;
  rung_gemm_split(atoll(argv[1]), atoll(argv[2]), atoll(argv[3]), atoll(argv[4]),
                  atoi(argv[5]), &tm, &tn, &by_batch);
  printf("%d %d %d\n", tm, tn, by_batch);
  return 0;
}
"""


def build(folder: Path, source: str, name: str, extra: list[str]) -> Path:
    (folder / f"{name}.c").write_text(source)
    cmd = [
        *native.compiler(),
        *native.build_flags(True, shared=False),
        *extra,
        f"-I{RUNTIME_HEADER.parent}",
        f"{name}.c",
        "-o",
        name,
        "-lm",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=folder, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return folder / name


def test_every_split_gives_numpys_product(tmp_path: Path) -> None:
    exe = build(tmp_path, HARNESS, "gemm", ["-O1", "-g", "-fsanitize=address,undefined"])
    rng = np.random.default_rng(0)
    feed, expected, labels = [], [], []
    for threads in (1, 2, 3):
        for m, n, k in SHAPES:
            for tb in (0, 1):
                for batch, shared, packed in (
                    (1, 1, 0),
                    (1, 1, 1),
                    (4, 0, 0),
                    (4, 1, 1),
                    (3, 1, 0),
                ):
                    acc = int(rng.integers(2))
                    bb = 1 if shared else batch
                    a = rng.standard_normal((batch, m, k), dtype=np.float32)
                    b = rng.standard_normal((bb, n, k) if tb else (bb, k, n), dtype=np.float32)
                    c = rng.standard_normal((batch, m, n), dtype=np.float32)
                    rhs = b.transpose(0, 2, 1) if tb else b
                    want = a.astype(np.float64) @ rhs.astype(np.float64) + (c if acc else 0)
                    head = [threads, m, n, k, batch, shared, tb, packed, acc]
                    feed += [np.array(head, np.int64).tobytes(), a.tobytes(), b.tobytes()]
                    feed.append(c.tobytes())
                    expected.append(want)
                    labels.append(
                        f"threads={threads} m={m} n={n} k={k} tb={tb} "
                        f"batch={batch} shared={shared} packed={packed} acc={acc}"
                    )
    env = {"ASAN_OPTIONS": "detect_leaks=1", "UBSAN_OPTIONS": "halt_on_error=1"}
    proc = subprocess.run([exe], input=b"".join(feed), capture_output=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr.decode()[-3000:]
    out = np.frombuffer(proc.stdout, np.float32)
    offset = 0
    for want, label in zip(expected, labels, strict=True):
        got = out[offset : offset + want.size].reshape(want.shape)
        offset += want.size
        k = int(label.split(" k=")[1].split()[0])
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.sqrt(k), err_msg=label)
    assert offset == out.size


@pytest.mark.parametrize(
    ("shape", "threads", "grid"),
    [
        ((1, 24, 3136, 144), 2, "1 2 0"),  # few row panels: the columns are shared
        ((1, 1152, 49, 320), 2, "2 1 0"),  # few columns: the rows are shared
        ((1, 144, 3136, 24), 2, "2 1 0"),  # rows, which the next loop (per channel) reads
        ((1, 1, 1000, 1280), 2, "1 2 0"),  # a matrix-vector product: columns
        ((12, 128, 128, 64), 2, "1 1 1"),  # attention heads: whole matrices per thread
        ((1, 16, 16, 16), 2, "1 1 0"),  # too small to wake a thread
        ((1, 960, 1, 240), 2, "2 1 0"),  # few flops, but 0.9 MB of weights to stream: rows
        ((1, 2, 400, 200), 2, "1 2 0"),  # two rows streaming 320 KB of B: columns
        ((1, 72, 1, 18), 2, "1 1 0"),  # a small squeeze-and-excite layer: one thread
        ((1, 512, 512, 512), 4, "4 1 0"),  # square, four threads: rows, as a 2 x 2 grid costs
        ((1, 64, 4096, 512), 4, "1 4 0"),  # 8 row panels, wide: columns
        ((1, 512, 512, 512), 1, "1 1 0"),
    ],
)
def test_the_split_follows_the_shape(
    tmp_path: Path, shape: tuple[int, int, int, int], threads: int, grid: str
) -> None:
    exe = build(tmp_path, SPLIT, "split", ["-O1"])
    args = [str(v) for v in (*shape, threads)]
    proc = subprocess.run([exe, *args], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == grid.split(), (shape, threads, proc.stdout)


def gemm_model(m: int, k: int, n: int) -> onnx.ModelProto:
    """One MatMul of an [m, k] input by [k, n] weights."""
    w = numpy_helper.from_array(np.ones((k, n), np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "gemm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])],
        initializer=[w],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize(
    ("shape", "openmp"),
    [((8, 784, 512), True), ((4, 16, 16), False), ((1, 256, 256), True)],  # last: streams B
)
def test_a_model_whose_only_large_work_is_a_product_is_built_with_openmp(
    shape: tuple[int, int, int], openmp: bool
) -> None:
    """Without -fopenmp the GEMM's threads are compiled out: an MLP ran on one thread at
    any thread count. A product too small to share needs no OpenMP."""
    module = lower(load_module(gemm_model(*shape)), "kernel")
    assert generate_c(module, "model").uses_openmp is openmp


def test_the_threshold_of_sharing_is_the_headers() -> None:
    header = (RUNTIME_HEADER.parent / "rung_gemm.h").read_text()
    found = re.search(r"#define RUNG_GEMM_MIN_FLOPS \(1 << (\d+)\)", header)
    assert found and 1 << int(found.group(1)) == GEMM_MIN_FLOPS
    found = re.search(r"#define RUNG_GEMM_MIN_STREAM \(1 << (\d+)\)", header)
    assert found and 1 << int(found.group(1)) == GEMM_MIN_STREAM
