"""C literals of inline constants: the array form gives, element for element, what the
scalar form gives (the array form exists for speed: a CNN has 100,000s of them), and
every literal reads back, through a C compiler, as the value it came from."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import Float32Type, Float64Type

from rung.lowering.kernel_to_c.c_types import float_literal, float_literals

SPECIAL = [0.0, -0.0, 1.0, 0.1, -2.5e-30, np.inf, -np.inf, np.nan, 3.0e38, 1e-45, 1e300, 100.0]


@pytest.mark.parametrize("t", [Float32Type(), Float64Type()], ids=["f32", "f64"])
def test_array_literals_match_scalar_ones(t: Float32Type | Float64Type) -> None:
    dtype = np.float64 if isinstance(t, Float64Type) else np.float32
    rng = np.random.default_rng(0)
    with np.errstate(over="ignore"):  # 1e300 is inf in f32
        values = np.concatenate(
            [np.array(SPECIAL), rng.standard_normal(500) * 10.0 ** rng.integers(-30, 30, 500)]
        ).astype(dtype)
    want = [float_literal(float(v), t) for v in values]
    assert float_literals(values, t) == want


def test_f32_literals_read_back_exactly(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    values = (rng.standard_normal(200) * 10.0 ** rng.integers(-40, 38, 200)).astype(np.float32)
    values = np.concatenate([values, np.array([0.0, 1e-45, 3.4e38], np.float32)])
    src = tmp_path / "lit.c"
    literals = ", ".join(float_literals(values, Float32Type()))
    src.write_text(
        "#include <stdio.h>\n#include <string.h>\n#include <stdint.h>\n"
        f"static const float v[] = {{{literals}}};\n"
        "int main(void) { for (unsigned i = 0; i < sizeof v / sizeof v[0]; ++i) {"
        ' uint32_t b; memcpy(&b, &v[i], 4); printf("%u\\n", b); } return 0; }\n'
    )
    exe = tmp_path / "lit"
    subprocess.run(["cc", str(src), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    assert [int(b) for b in out.split()] == values.view(np.uint32).tolist()
