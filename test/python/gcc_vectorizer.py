"""gcc's vectorizer report on a model's generated C, for tests that a loop vectorizes."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import onnx
import pytest

from rung.lowering.kernel_to_c import generate_c
from rung.runtime import native
from rung.runtime.levels import lower
from rung.runtime.session import load_module


def vectorizer_report(
    tmp_path: Path, model: onnx.ModelProto
) -> tuple[list[str], dict[int, set[int]]]:
    """`model`'s C lines, and for each (1-based) line where gcc's report says it
    vectorized a loop, the vector sizes in bytes."""
    cc = native.compiler()
    version = subprocess.run([*cc, "--version"], capture_output=True, text=True).stdout
    if "Free Software Foundation" not in version:
        pytest.skip("the C compiler is not gcc: -fopt-info-vec-optimized is gcc's")
    module = load_module(model)
    lower(module, "kernel")
    program = generate_c(module, "model")
    for header in native.runtime_headers():
        (tmp_path / header.name).write_bytes(header.read_bytes())
    (tmp_path / "model.h").write_text(program.header)
    (tmp_path / "model.c").write_text(program.source)
    flags = [*native.build_flags(program.uses_openmp), "-fopt-info-vec-optimized"]
    proc = subprocess.run(
        [*cc, *flags, "-c", "model.c", "-o", "model.o"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    found: dict[int, set[int]] = {}
    pattern = r"model\.c:(\d+):\d+: optimized: loop vectorized using (\d+) byte vectors"
    for line, size in re.findall(pattern, proc.stderr):
        found.setdefault(int(line), set()).add(int(size))
    return program.source.split("\n"), found
