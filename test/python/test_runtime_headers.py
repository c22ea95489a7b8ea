"""The C runtime headers compile without warnings, and their edge paths have no UB.

gcc's `-Waggressive-loop-optimizations` says a loop would execute undefined
behaviour in some iteration (and that gcc will optimize on that basis); it only
appears once sizes are constants, as in generated code, so the tests compile
generated C and small callers with constant sizes. The thin-matrix path of the
GEMM (`rung_gemm_few_rows`: M <= 4, K not a multiple of 4) once warned so; its
results are checked here under UBSan and ASan against numpy.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from rung.lowering.kernel_to_c import generate_c
from rung.runtime import InferenceSession, native

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tiny_cnn.onnx"
HEADER_WARNING = re.compile(r"^(rung_\w+\.h):\d+:\d+: warning: .*$", re.MULTILINE)


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CC", raising=False)


def gcc() -> list[str]:
    """The compiler, if it is gcc (the warning and its flag are gcc's)."""
    cc = native.compiler()
    version = subprocess.run([*cc, "--version"], capture_output=True, text=True).stdout
    if "Free Software Foundation" not in version:
        pytest.skip("the C compiler is not gcc")
    return cc


def warnings_of(folder: Path, source: str, openmp: bool) -> subprocess.CompletedProcess[str]:
    """Compile `source` in `folder` as a library is built, plus -Wall -Wextra, and with
    -Waggressive-loop-optimizations an error."""
    flags = native.build_flags(openmp)
    extra = ["-Wall", "-Wextra", "-Werror=aggressive-loop-optimizations"]
    cmd = [*gcc(), *flags, *extra, "-c", source, "-o", "out.o"]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=folder, timeout=600)


@pytest.mark.parametrize("openmp", [False, True], ids=["serial", "openmp"])
def test_the_example_compiles_without_header_warnings(tmp_path: Path, openmp: bool) -> None:
    """The README's example, built as `rung compile` builds it (serial: a compiler
    without OpenMP, where the GEMM's loops are specialized differently)."""
    result = native.compile_model(EXAMPLE, tmp_path / "out", emit_only=True)
    assert result.program is not None
    proc = warnings_of(tmp_path / "out", "tiny_cnn.c", openmp and result.program.uses_openmp)
    assert proc.returncode == 0, proc.stderr
    assert "aggressive-loop-optimizations" not in proc.stderr
    assert HEADER_WARNING.findall(proc.stderr) == [], proc.stderr


CALLER = """\
#include "rung_runtime.h"
/* Constant N and K, as generated code passes them: gcc specializes the GEMM on them. */
void product_n10(const float *a, const float *b, float *c, int64_t m) {
  rung_matmul_float(a, b, c, 1, 1, 1, m, 10, 16, 0);
}
void product_n196(const float *a, const float *b, float *c, int64_t bb, int64_t batch) {
  rung_matmul_float(a, b, c, 1, bb, batch, 16, 196, 72, 0);
}
void product_k7(const float *a, const float *b, float *c, int64_t m, int64_t n) {
  rung_matmul_float(a, b, c, 1, 1, 1, m, n, 7, 1);
}
void batched(const float *a, const float *b, float *c) {
  rung_matmul_float(a, b, c, 8, 8, 8, 8, 16, 6, 0);
  rung_matmul_float_bt(a, b, c, 8, 8, 8, 8, 6, 16, 0);
}
"""


def test_gemm_with_constant_sizes_has_no_loop_ub_warning(tmp_path: Path) -> None:
    for header in native.runtime_headers():
        (tmp_path / header.name).write_bytes(header.read_bytes())
    for openmp, scalar in [(False, False), (True, False), (False, True)]:
        define = "#define RUNG_GEMM_SCALAR 1\n" if scalar else ""
        (tmp_path / "caller.c").write_text(define + CALLER)
        proc = warnings_of(tmp_path, "caller.c", openmp)
        assert proc.returncode == 0, proc.stderr
        assert HEADER_WARNING.findall(proc.stderr) == [], proc.stderr


def matmul_model(m: int, k: int, n: int) -> onnx.ModelProto:
    f = TensorProto.FLOAT
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["c"])],
        "matmul",
        [
            helper.make_tensor_value_info("a", f, [m, k]),
            helper.make_tensor_value_info("b", f, [k, n]),
        ],
        [helper.make_tensor_value_info("c", f, [m, n])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


@pytest.mark.parametrize(
    ("m", "k", "n"),
    [(1, 7, 10), (3, 1, 37), (4, 6, 2053), (2, 3, 3), (4, 9, 196), (6, 13, 3), (37, 70, 50)],
    ids=lambda v: str(v),
)
def test_thin_gemm_tail_under_the_sanitizers(m: int, k: int, n: int) -> None:
    """M <= 4 with K % 4 != 0 runs the tails of `rung_gemm_few_rows` (N beyond 2048: two
    column blocks); N <= 4 the dot products' tail along K, and N two past a whole number
    of panels `rung_gemm_dot_tile`'s. The sanitizer build must find nothing and match
    numpy."""
    program = generate_c(InferenceSession(matmul_model(m, k, n), level="kernel").module, "mm")
    assert "rung_matmul_float(" in program.source
    rng = np.random.default_rng(m * 100 + k * 10 + n)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    [got] = native.run_in_harness(program, [a, b])
    expected = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
