"""Cold parts (`kernel_to_c.outline`): runs of ops too small to gain from -O3 are parts
marked `RUNG_COLD`; small runs between large ops change nothing; results are the same."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from rung.dialects import kernel, parse_module
from rung.lowering.kernel_to_c import generate_c
from rung.lowering.kernel_to_c.outline import COLD_WORK, Outlining, work
from rung.runtime import native

BIG = 256
"""Rows of a large op: BIG x 16 elements, three scalar ops each, over COLD_WORK."""


def _op(i: int, src: str, rows: int) -> tuple[str, str]:
    """`rows` x 16 elements of `src` doubled plus one, into a heap buffer `%b{i}`."""
    t = f"memref<{rows}x16xf32>"
    text = f"""
  %b{i} = kernel.alloc() : {t}
  kernel.loop (%i{i}, %j{i}) in ({rows}, 16) [parallel, parallel] {{
    %v{i} = kernel.load {src}[%i{i}, %j{i}] : {t}
    %w{i} = arith.addf %v{i}, %v{i} : f32
    %u{i} = arith.addf %w{i}, %one : f32
    kernel.store %u{i}, %b{i}[%i{i}, %j{i}] : {t}
    kernel.yield
  }}"""
    return text, f"%b{i}"


def chain(rows: list[int]) -> ModuleOp:
    """Elementwise ops, one per entry of `rows`: those of BIG rows a chain from `%x`,
    the others a chain from `%y` (of 4 rows), both returned."""
    tx, ty = "memref<256x16xf32>", "memref<4x16xf32>"
    body = [f"func.func @chain(%x: {tx}, %y: {ty}) -> ({tx}, {ty}) {{"]
    body.append("  %one = arith.constant 1.0 : f32")
    last = {BIG: "%x", 4: "%y"}
    for i, n in enumerate(rows):
        text, last[n] = _op(i, last[n], n)
        body.append(text)
    body.append(f"  func.return {last[BIG]}, {last[4]} : {tx}, {ty}\n}}")
    return parse_module("\n".join(body))


def expected(x: np.ndarray, rows: list[int]) -> np.ndarray:
    """`x` (BIG or 4 rows) through the ops of its size."""
    for n in rows:
        if n == len(x):
            x = x * 2 + 1
    return x


def cold_parts(source: str) -> list[str]:
    return re.findall(r"^RUNG_COLD static int (\w+_part\d+)\(", source, re.M)


def hot_parts(source: str) -> list[str]:
    return re.findall(r"^static int (\w+_part\d+)\(", source, re.M)


SMALL = Outlining(above_lines=1, part_lines=40, cold_lines=30)
"""Parts of about 40 lines (5 ops); 30 lines (4 ops) of small ones make a cold part."""


def loops(module: ModuleOp) -> list[kernel.LoopOp]:
    func = next(op for op in module.body.block.ops if isinstance(op, FuncOp))
    return [op for op in func.body.block.ops if isinstance(op, kernel.LoopOp)]


def test_work_counts_trips_times_body() -> None:
    small, big = loops(chain([4, BIG]))
    assert work(small) == 4 * 16 * 5  # load, two adds, store, yield
    assert work(big) == BIG * 16 * 5 > COLD_WORK > work(small)


def test_work_of_run_time_sizes_is_unknown() -> None:
    module = parse_module(
        """
func.func @f(%x: memref<?xf32>) {
  %n = kernel.dim %x[0] : memref<?xf32>
  kernel.loop (%i) in (%n) [parallel] {
    %v = kernel.load %x[%i] : memref<?xf32>
    kernel.store %v, %x[%i] : memref<?xf32>
    kernel.yield
  }
  func.return
}"""
    )
    (loop,) = loops(module)
    assert work(loop) == math.inf


def test_work_of_a_matmul_is_its_multiply_adds() -> None:
    module = parse_module(
        """
func.func @f(%a: memref<2x3x5xf32>, %b: memref<1x5x7xf32>, %c: memref<2x3x7xf32>) {
  kernel.matmul %a, %b, %c : memref<2x3x5xf32>, memref<1x5x7xf32>, memref<2x3x7xf32>
  func.return
}"""
    )
    func = next(op for op in module.body.block.ops if isinstance(op, FuncOp))
    matmul = next(op for op in func.body.block.ops if isinstance(op, kernel.MatmulOp))
    assert work(matmul) == 2 * 3 * 7 * 5


def test_a_run_of_small_ops_is_a_cold_part() -> None:
    rows = [BIG] * 3 + [4] * 12 + [BIG]
    source = generate_c(chain(rows), "chain", outlining=SMALL).source
    cold = cold_parts(source)
    assert cold, "the twelve small ops make cold parts"
    for name in cold:  # a cold part holds only small loops
        part = source[source.index(f"static int {name}(") :]
        part = part[: part.index("\n}\n")]
        assert f"< {BIG}" not in part
    assert hot_parts(source), "the large ops stay in parts optimized for speed"
    # Without cold parts, the same parts but for their attribute and where they are cut.
    plain = generate_c(chain(rows), "chain", outlining=Outlining(1, 40, cold_work=None)).source
    assert not cold_parts(plain)


def test_a_few_small_ops_between_large_ones_change_nothing() -> None:
    rows = [BIG, BIG, 4, 4, BIG, BIG]
    module = chain(rows)
    source = generate_c(module, "chain", outlining=SMALL).source
    plain = generate_c(
        module, "chain", outlining=Outlining(1, 40, cold_work=None, cold_lines=30)
    ).source
    assert source == plain
    assert not cold_parts(source)


@pytest.mark.parametrize("cold_work", [COLD_WORK, None])
def test_cold_parts_compute_the_same(cold_work: int | None) -> None:
    rows = [BIG] * 2 + [4] * 10 + [BIG] * 2
    program = generate_c(chain(rows), "chain", outlining=Outlining(1, 40, cold_work, 30))
    assert bool(cold_parts(program.source)) == (cold_work is not None)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BIG, 16)).astype(np.float32)
    y = rng.standard_normal((4, 16)).astype(np.float32)
    got = native.compile_program(program).run([x, y])
    np.testing.assert_allclose(got[0], expected(x, rows), rtol=1e-6)
    np.testing.assert_allclose(got[1], expected(y, rows), rtol=1e-6)


def test_a_run_of_small_ops_splits_a_body_below_the_threshold() -> None:
    """Outlining's threshold is for the time gcc -O3 takes on one function; a cold part
    is for the time it would take on small ops, at any size of `_run`."""
    module = chain([4] * 12)
    source = generate_c(module, "chain", outlining=Outlining(10_000, 40, cold_lines=30)).source
    assert cold_parts(source)
    assert not hot_parts(source)
    whole = generate_c(module, "chain", outlining=Outlining(10_000, 40, cold_lines=10_000))
    assert not cold_parts(whole.source) and whole.parts == 0


def test_a_use_by_an_op_outside_the_function_is_ignored() -> None:
    """A pass may leave a detached op that still lists a value among its operands (the
    zoo's ConvNeXt and MLP-Mixer had one): outlining used to fail with a KeyError on it."""
    rows = [BIG] * 3 + [4] * 12 + [BIG]
    module = chain(rows)
    stray = loops(module)[0].clone()  # its body stores into %b0, and it is in no block
    func = next(op for op in module.body.block.ops if isinstance(op, FuncOp))
    b0 = next(op for op in func.body.block.ops if isinstance(op, kernel.AllocOp)).results[0]
    assert any(stray.is_ancestor(use.operation) for use in b0.uses)
    source = generate_c(module, "chain", outlining=SMALL).source
    assert source == generate_c(chain(rows), "chain", outlining=SMALL).source
