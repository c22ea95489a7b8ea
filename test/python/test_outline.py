"""A large `_run` is split into static functions (`kernel_to_c.outline`): same results,
errors and heap as one function, and small models' C unchanged."""

from __future__ import annotations

import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx_cases import graph_size_bench
from xdsl.dialects.builtin import ModuleOp

from rung.dialects import parse_module
from rung.errors import RungError
from rung.lowering.kernel_to_c import generate_c
from rung.lowering.kernel_to_c.outline import OUTLINE_ABOVE_LINES, Outlining
from rung.runtime import InferenceSession, native
from rung.runtime.levels import EvaluationError

STEPS = """
func.func @steps(%x: memref<?x8xf32>, %c: memref<1xi1>) -> memref<4xf32> attributes {kernel.arena_bytes = 128 : i64} {
  %n = kernel.dim %x[0] : memref<?x8xf32>
  %a = kernel.alloc() {offset = 0 : i64} : memref<8xf32>
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  kernel.loop (%j) in (8) [parallel] {
    %s = kernel.loop (%i) in (%n) [reduction] iter_args(%acc = %zero : f32) -> f32 {
      %v = kernel.load %x[%i, %j] : memref<?x8xf32>
      %t = arith.addf %acc, %v : f32
      kernel.yield %t : f32
    }
    %scratch = kernel.alloc() : memref<1xf32>
    kernel.store %s, %scratch[%c0] : memref<1xf32>
    %back = kernel.load %scratch[%c0] : memref<1xf32>
    kernel.store %back, %a[%j] : memref<8xf32>
    kernel.yield
  }
  %h = kernel.alloc(%n) : memref<?x8xf32>
  kernel.loop (%i, %j) in (%n, 8) [parallel, parallel] {
    %v = kernel.load %x[%i, %j] : memref<?x8xf32>
    %s = kernel.load %a[%j] : memref<8xf32>
    %p = arith.mulf %v, %s : f32
    kernel.store %p, %h[%i, %j] : memref<?x8xf32>
    kernel.yield
  }
  %ok = kernel.load %c[%c0] : memref<1xi1>
  cf.assert %ok, "the flag is off"
  %o = kernel.alloc() {offset = 64 : i64} : memref<4xf32>
  %w = kernel.view %a() : memref<8xf32> -> memref<2x4xf32>
  kernel.loop (%k) in (4) [parallel] {
    %c1 = arith.constant 1 : index
    %l = kernel.load %w[%c0, %k] : memref<2x4xf32>
    %r = kernel.load %w[%c1, %k] : memref<2x4xf32>
    %q = arith.addf %l, %r : f32
    %z = kernel.load %h[%c0, %k] : memref<?x8xf32>
    %y = arith.addf %q, %z : f32
    kernel.store %y, %o[%k] : memref<4xf32>
    kernel.yield
  }
  kernel.dealloc %h : memref<?x8xf32>
  func.return %o : memref<4xf32>
}
"""
"""Loops over arena, heap and input buffers, a view, a scratch buffer that the first
loop takes from the heap (released only when the run ends) and a run-time check."""

EVERY_OP_A_PART = Outlining(above_lines=1, part_lines=1)


def steps() -> ModuleOp:
    return parse_module(STEPS)


def steps_expected(x: np.ndarray) -> np.ndarray:
    a = x.sum(axis=0)
    return a[:4] + a[4:] + x[0, :4] * a[:4]


def parts(source: str) -> list[str]:
    return re.findall(r"^(?:RUNG_COLD )?static int (\w+_part\d+)\(", source, re.M)


def test_a_small_body_stays_one_function() -> None:
    whole = generate_c(steps(), outlining=Outlining(above_lines=None)).source
    assert generate_c(steps()).source == whole
    assert not parts(whole)


def test_every_op_a_part() -> None:
    source = generate_c(steps(), outlining=EVERY_OP_A_PART).source
    assert parts(source) == [f"model_part{k}" for k in range(1, 8)]  # 7 top-level ops
    run = source[source.index("int model_run(") :]
    for name in parts(source):
        assert f"if ((rc = {name}(arena, &heap" in run
    # Arena buffers are re-derived from `arena`, not received, in each part that uses them.
    assert source.count("float *const a = (float *)(arena + 0);") == 3
    # The heap buffer is handed back by the part that allocates it, then received,
    # `restrict`: the other pointers of the parts that receive it are inputs.
    assert "float **const h_out, int64_t *const h_d0_out)" in source
    assert "float *restrict const h, const int64_t h_d0)" in source
    assert "  float *h = 0;\n  int64_t h_d0 = 0;\n" in run


@pytest.mark.parametrize("outlining", [Outlining(above_lines=None), EVERY_OP_A_PART])
def test_outlined_runs_like_one_function(outlining: Outlining) -> None:
    x = np.random.default_rng(0).standard_normal((5, 8)).astype(np.float32)
    model = native.compile_program(generate_c(steps(), "steps", outlining=outlining))
    (got,) = model.run([x, np.array([True])])
    np.testing.assert_allclose(got, steps_expected(x), rtol=1e-5)
    with pytest.raises(EvaluationError, match="run: the flag is off"):
        model.run([x, np.array([False])])
    (again,) = model.run([x, np.array([True])])
    np.testing.assert_array_equal(again, got)


@pytest.mark.parametrize("flag", [True, False])
def test_parts_leave_nothing_behind(flag: bool) -> None:
    """Under the sanitizers: the scratch buffers the first part takes from the heap reach
    `_run`'s heap and are released, on success and when a later part fails."""
    program = generate_c(steps(), "steps", outlining=EVERY_OP_A_PART)
    x = np.random.default_rng(1).standard_normal((3, 8)).astype(np.float32)
    if flag:
        (got,) = native.run_in_harness(program, [x, np.array([True])])
        np.testing.assert_allclose(got, steps_expected(x), rtol=1e-5)
    else:
        with pytest.raises(EvaluationError, match="the flag is off"):
            native.run_in_harness(program, [x, np.array([False])])


# ---- a model of hundreds of nodes, through InferenceSession ---------------------------------


def chain_with_top_k(nodes: int) -> onnx.ModelProto:
    """bench/graph_size's chain of blocks, then TopK with K from an input: its run-time
    check of K comes last, in a part of its own."""
    model = graph_size_bench().build_model(nodes)
    g = model.graph
    y = g.output[0].name
    g.input.append(helper.make_tensor_value_info("k", TensorProto.INT64, [1]))
    g.node.append(helper.make_node("TopK", [y, "k"], ["values", "indices"], axis=-1))
    g.node[-1].name = "top_k"
    g.output.append(helper.make_tensor_value_info("values", TensorProto.FLOAT, [1, 4, None]))
    return model


@pytest.fixture(scope="module")
def large() -> tuple[onnx.ModelProto, InferenceSession]:
    model = chain_with_top_k(500)
    return model, InferenceSession(model)


def test_a_large_model_is_split(large: tuple[onnx.ModelProto, InferenceSession]) -> None:
    _, sess = large
    source = generate_c(sess.module, "chain").source
    run = source[source.index("int chain_run(") :]
    body = run[: run.index("\ndone:")]
    assert body.count("\n") < OUTLINE_ABOVE_LINES // 10  # calls, not ops
    assert len(parts(source)) >= 5
    check = source.index("RUNG_FAIL_GOT_I64(\"node 'top_k': TopK: K is negative or larger")
    assert check < source.index("int chain_run(")  # inside a part


def test_a_large_model_matches_onnxruntime(
    large: tuple[onnx.ModelProto, InferenceSession],
) -> None:
    import onnxruntime as ort

    model, sess = large
    feed = {
        "x": np.random.default_rng(2).standard_normal((1, 4, 16)).astype(np.float32),
        "k": np.array([3]),
    }
    want = ort.InferenceSession(model.SerializeToString()).run(None, feed)
    got = sess.run(None, feed)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def test_a_check_failing_in_a_part_is_a_rung_error(
    large: tuple[onnx.ModelProto, InferenceSession],
) -> None:
    _, sess = large
    x = np.zeros((1, 4, 16), np.float32)
    with pytest.raises(RungError, match="node 'top_k': TopK: K is negative or larger"):
        sess.run(None, {"x": x, "k": np.array([20])})
    assert sess.run(None, {"x": x, "k": np.array([2])})[1].shape == (1, 4, 2)
