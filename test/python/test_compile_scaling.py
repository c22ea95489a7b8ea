"""What keeps compile time linear in the model's size: Python's full garbage collections
held back while a model is compiled, and gcc building a large program's parts in
parallel."""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from onnx_cases import graph_size_bench
from xdsl.dialects.builtin import ModuleOp

from rung.dialects import parse_module
from rung.lowering.kernel_to_c import CProgram, generate_c
from rung.lowering.kernel_to_c.outline import Outlining
from rung.runtime import native
from rung.runtime.collection import FULL_COLLECTIONS_EVERY, rare_full_collections


def test_thresholds_are_restored_once_the_last_compilation_ends() -> None:
    before = gc.get_threshold()
    with rare_full_collections():
        raised = gc.get_threshold()
        assert raised[2] >= FULL_COLLECTIONS_EVERY
        assert raised[:2] == before[:2]
        with rare_full_collections():
            assert gc.get_threshold() == raised
        assert gc.get_threshold() == raised
    assert gc.get_threshold() == before


def test_thresholds_are_restored_after_an_error() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), rare_full_collections():
        raise RuntimeError("stop")
    assert gc.get_threshold() == before


def test_concurrent_compilations_restore_the_thresholds() -> None:
    before = gc.get_threshold()
    inside, leave = threading.Barrier(2), threading.Event()

    def compile_one() -> None:
        with rare_full_collections():
            inside.wait()
            leave.wait()

    other = threading.Thread(target=compile_one)
    other.start()
    with rare_full_collections():
        inside.wait()
    assert gc.get_threshold()[2] >= FULL_COLLECTIONS_EVERY  # the other is still in
    leave.set()
    other.join()
    assert gc.get_threshold() == before


def full_collections(work: Callable[[], object]) -> int:
    """How many full collections Python ran during `work()`."""
    full: list[int] = []

    def count(phase: str, info: dict[str, Any]) -> None:
        if phase == "start" and info["generation"] == 2:
            full.append(1)

    gc.callbacks.append(count)
    try:
        work()
    finally:
        gc.callbacks.remove(count)
    return len(full)


def test_compiling_a_model_runs_no_full_collection(tmp_path: Path) -> None:
    """A model of 600 nodes made enough objects for three full collections (each a scan
    of everything, their time growing as the square of the model's size)."""
    model = graph_size_bench().build_model(600)
    assert (
        full_collections(lambda: native.compile_model(model, tmp_path / "out", emit_only=True)) == 0
    )


def test_lowering_a_model_runs_no_full_collection() -> None:
    """The same through `levels.lower`, which `InferenceSession` uses."""
    from rung.importers.onnx import import_model
    from rung.runtime.levels import lower

    module = import_model(graph_size_bench().build_model(600))
    assert full_collections(lambda: lower(module, "kernel")) == 0


def chain(n: int) -> ModuleOp:
    """`n` elementwise ops in a chain, `x * 2 + 1` each, on a 64 x 16 buffer."""
    t = "memref<64x16xf32>"
    lines = [f"func.func @chain(%x: {t}) -> {t} {{", "  %one = arith.constant 1.0 : f32"]
    src = "%x"
    for i in range(n):
        lines.append(
            f"""  %b{i} = kernel.alloc() : {t}
  kernel.loop (%i{i}, %j{i}) in (64, 16) [parallel, parallel] {{
    %v{i} = kernel.load {src}[%i{i}, %j{i}] : {t}
    %w{i} = arith.addf %v{i}, %v{i} : f32
    %u{i} = arith.addf %w{i}, %one : f32
    kernel.store %u{i}, %b{i}[%i{i}, %j{i}] : {t}
    kernel.yield
  }}"""
        )
        src = f"%b{i}"
    lines.append(f"  func.return {src} : {t}\n}}")
    return parse_module("\n".join(lines))


def many_parts() -> CProgram:
    """Ten ops, a part each."""
    program = generate_c(chain(10), "chain", outlining=Outlining(1, 10, cold_work=None))
    assert program.parts == 10 >= native.PARALLEL_PARTS
    return program


def two_cores(monkeypatch: pytest.MonkeyPatch, cores: int = 2) -> None:
    monkeypatch.setattr(native.os, "sched_getaffinity", lambda pid: set(range(cores)))


def test_parts_build_in_parallel_and_run_the_same(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    program = many_parts()
    if not native._flag_supported(native.compiler(), "-flto=2"):
        pytest.skip("the C compiler has no -flto=N")
    two_cores(monkeypatch)
    assert native.parallel_flags(program)[0] == "-flto=2"
    commands: list[list[str]] = []
    run_compiler = native._run_compiler

    def record(cmd: list[str], what: Path, **kwargs: bool) -> None:
        commands.append(cmd)
        run_compiler(cmd, what, **kwargs)

    monkeypatch.setattr(native, "_run_compiler", record)
    monkeypatch.setenv("RUNG_CACHE_DIR", str(tmp_path))
    x = np.random.default_rng(0).standard_normal((64, 16)).astype(np.float32)
    (got,) = native.compile_program(program).run([x])
    assert [cmd for cmd in commands if "-flto=2" in cmd]
    want = x
    for _ in range(10):
        want = want * 2 + 1
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_small_debug_and_one_core_builds_are_one_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    program = many_parts()
    two_cores(monkeypatch)
    assert native.parallel_flags(program, debug=True) == []
    small = generate_c(chain(2), "chain")
    assert small.parts == 0
    assert native.parallel_flags(small) == []
    two_cores(monkeypatch, cores=1)
    assert native.parallel_flags(program) == []


def test_cold_parts_build_in_parallel_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """Parts built for size are shared among the cores like the others: a generated model
    of 5,000 tiny nodes, its parts mostly cold, built in 6.6 s instead of 9.8 on two."""
    if not native._flag_supported(native.compiler(), "-flto=2"):
        pytest.skip("the C compiler has no -flto=N")
    two_cores(monkeypatch)
    cold = generate_c(chain(10), "chain", outlining=Outlining(1, 10, cold_lines=1))
    assert cold.parts == cold.cold_parts == 10
    assert native.parallel_flags(cold)[0] == "-flto=2"


# ---- fusion: what ops write, walked once ---------------------------------------------------


def shared_reads(n: int) -> ModuleOp:
    """`n` elementwise producers of `x`, all read by one last nest: fusing each walks
    from it to that nest, over the producers after it."""
    t = "memref<8xf32>"
    lines = [f"func.func @sums(%x: {t}) -> {t} {{"]
    for i in range(n):
        lines.append(
            f"""  %c{i} = arith.constant {i}.0 : f32
  %p{i} = kernel.alloc() : {t}
  kernel.loop (%i{i}) in (8) [parallel] {{
    %v{i} = kernel.load %x[%i{i}] : {t}
    %w{i} = arith.addf %v{i}, %c{i} : f32
    kernel.store %w{i}, %p{i}[%i{i}] : {t}
    kernel.yield
  }}"""
        )
    body = ["    %s = arith.constant 0.0 : f32"]
    for i in range(n):
        body.append(f"    %l{i} = kernel.load %p{i}[%j] : {t}")
        body.append(f"    %s{i} = arith.addf {'%s' if i == 0 else f'%s{i - 1}'}, %l{i} : f32")
    lines.append(f"  %out = kernel.alloc() : {t}")
    lines.append("  kernel.loop (%j) in (8) [parallel] {")
    lines += body
    lines.append(f"    kernel.store %s{n - 1}, %out[%j] : {t}\n    kernel.yield\n  }}")
    lines.append(f"  func.return %out : {t}\n}}")
    return parse_module("\n".join(lines))


def test_fusion_walks_each_op_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """What an op writes is remembered across rewrites: 24 producers read by one nest took
    876 walks of the ops between each and that nest (48 took 3480: quadratic in the
    model's size), and take 71."""
    from xdsl.pattern_rewriter import PatternRewriteWalker

    from rung.dialects import context, print_module
    from rung.lowering.kernel_opt import fuse

    n = 24
    walks: list[int] = []
    writes = fuse.writes

    def counted(op: Any) -> Any:
        walks.append(1)
        return writes(op)

    monkeypatch.setattr(fuse, "writes", counted)
    fused = shared_reads(n)
    fuse.FuseElementwisePass().apply(context(), fused)
    assert len(walks) <= 3 * n
    assert "kernel.alloc() : memref<8xf32>" in print_module(fused)  # the output's
    assert print_module(fused).count("kernel.loop") == 1  # every producer fused

    plain = shared_reads(n)  # the same rewrites, walking the ops each time
    PatternRewriteWalker(fuse.FoldDimOfAlloc(), apply_recursively=False).rewrite_module(plain)
    walks.clear()
    PatternRewriteWalker(fuse.InlineElementwiseProducer(), apply_recursively=True).rewrite_module(
        plain
    )
    assert len(walks) > n * n // 4
    assert print_module(plain) == print_module(fused)
