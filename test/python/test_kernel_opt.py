"""The kernel-level optimizations (fuse, interchange, tile, parallelize) keep results exact.

Small ONNX models run compiled (`level="kernel"`, whose pipeline runs
`optimize-kernel`) and through the numpy interpreter of the core dialect
(`level="core"`); the lowered IR is also inspected, to check that the passes
really fused, reordered, tiled or parallelized. Hand-written kernel IR runs
with and without the passes, against numpy, for shapes the ONNX models do
not reach (ragged tiles, matmul-like nests of integers).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import ModuleOp

from rung.dialects import context, kernel, parse_module
from rung.importers.onnx import import_model
from rung.lowering.kernel_to_c import generate_c
from rung.lowering.pipelines import default_registry
from rung.runtime import InferenceSession
from rung.runtime.native import compile_program

F, I32 = TensorProto.FLOAT, TensorProto.INT32
RNG = np.random.default_rng(3)
UNOPTIMIZED = "lower-to-core,convert-core-to-kernel,cse,dce"


def make_model(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: list[onnx.ValueInfoProto],
    initializers: Sequence[TensorProto] = (),
    opset: int = 18,
) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def vi(name: str, shape: Sequence[int | str], elem: int = F) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, list(shape))


def const(name: str, value: object, dtype: type = np.float32) -> TensorProto:
    return numpy_helper.from_array(np.asarray(value, dtype), name)


# ---- models ------------------------------------------------------------------------------------


def chain_broadcast(batch: int | str = 4) -> onnx.ModelProto:
    """(x + b) -> relu -> * x -> - c, with b and c broadcast."""
    nodes = [
        helper.make_node("Add", ["x", "b"], ["t"]),
        helper.make_node("Relu", ["t"], ["u"]),
        helper.make_node("Mul", ["u", "x"], ["v"]),
        helper.make_node("Sub", ["v", "c"], ["y"]),
    ]
    return make_model(
        nodes,
        [vi("x", [batch, 8, 16]), vi("b", [16]), vi("c", [8, 1])],
        [vi("y", [batch, 8, 16])],
    )


def batchnorm_relu() -> onnx.ModelProto:
    c = 6
    inits = [
        const("scale", RNG.standard_normal(c)),
        const("bias", RNG.standard_normal(c)),
        const("mean", RNG.standard_normal(c)),
        const("var", RNG.random(c) + 0.5),
    ]
    nodes = [
        helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["n"]),
        helper.make_node("Relu", ["n"], ["y"]),
    ]
    return make_model(nodes, [vi("x", [2, c, 7, 9])], [vi("y", [2, c, 7, 9])], inits)


def gelu() -> onnx.ModelProto:
    """The erf form of Gelu, as exporters write it: x * 0.5 * (1 + erf(x / sqrt(2)))."""
    nodes = [
        helper.make_node("Add", ["x", "b"], ["h"]),
        helper.make_node("Div", ["h", "sqrt2"], ["d"]),
        helper.make_node("Erf", ["d"], ["e"]),
        helper.make_node("Add", ["e", "one"], ["e1"]),
        helper.make_node("Mul", ["h", "e1"], ["m"]),
        helper.make_node("Mul", ["m", "half"], ["y"]),
    ]
    inits = [const("sqrt2", 1.4142135), const("one", 1.0), const("half", 0.5)]
    return make_model(nodes, [vi("x", [3, 64]), vi("b", [64])], [vi("y", [3, 64])], inits)


def softmax() -> onnx.ModelProto:
    return make_model(
        [helper.make_node("Softmax", ["x"], ["y"], axis=-1)], [vi("x", [5, 33])], [vi("y", [5, 33])]
    )


def layernorm() -> onnx.ModelProto:
    inits = [const("g", RNG.standard_normal(24)), const("b", RNG.standard_normal(24))]
    node = helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1)
    return make_model([node], [vi("x", [2, 5, 24])], [vi("y", [2, 5, 24])], inits)


def transpose_sigmoid() -> onnx.ModelProto:
    nodes = [
        helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
        helper.make_node("Sigmoid", ["t"], ["y"]),
    ]
    return make_model(nodes, [vi("x", [300, 410])], [vi("y", [410, 300])])


def split_heads() -> onnx.ModelProto:
    """A bias add seen as 4 heads by a Reshape (a view), then transposed head-major."""
    nodes = [
        helper.make_node("Add", ["x", "b"], ["t"]),
        helper.make_node("Reshape", ["t", "shape"], ["r"]),
        helper.make_node("Transpose", ["r"], ["y"], perm=[0, 2, 1, 3]),
    ]
    shape = const("shape", [1, 10, 4, 8], np.int64)
    return make_model(
        nodes, [vi("x", [1, 10, 32]), vi("b", [32])], [vi("y", [1, 4, 10, 8])], [shape]
    )


def matmul_int32() -> onnx.ModelProto:
    node = helper.make_node("MatMul", ["a", "b"], ["y"])
    return make_model(
        [node], [vi("a", [37, 50], I32), vi("b", [50, 70], I32)], [vi("y", [37, 70], I32)]
    )


def mean_leading_axis() -> onnx.ModelProto:
    node = helper.make_node("ReduceMean", ["x", "axes"], ["y"], keepdims=0)
    return make_model([node], [vi("x", [40, 96])], [vi("y", [96])], [const("axes", [0], np.int64)])


def long_chain(length: int = 240) -> onnx.ModelProto:
    """`length` elementwise ops in a row (Relu, Sigmoid, + c, * x): the fusion moves each
    producer's growing body into the next nest, which must stay exact however long."""
    kinds = ["Relu", "Sigmoid", "Add", "Mul"]
    nodes = []
    for i in range(length):
        kind, src, dst = kinds[i % 4], f"t{i}" if i else "x", f"t{i + 1}"
        operands = {"Add": [src, "c"], "Mul": [src, "x"]}.get(kind, [src])
        nodes.append(helper.make_node(kind, operands, [dst]))
    nodes.append(helper.make_node("Identity", [f"t{length}"], ["y"]))
    return make_model(nodes, [vi("x", [2, 3, 5])], [vi("y", [2, 3, 5])], [const("c", [0.25])])


MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    "chain_broadcast": chain_broadcast,
    "chain_dynamic": lambda: chain_broadcast("n"),
    "batchnorm_relu": batchnorm_relu,
    "gelu": gelu,
    "softmax": softmax,
    "layernorm": layernorm,
    "transpose_sigmoid": transpose_sigmoid,
    "split_heads": split_heads,
    "matmul_int32": matmul_int32,
    "mean_leading_axis": mean_leading_axis,
    "long_chain": long_chain,
}


def feed_for(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    feed = {}
    for v in model.graph.input:
        shape = [d.dim_value or 3 for d in v.type.tensor_type.shape.dim]
        if v.type.tensor_type.elem_type == I32:
            feed[v.name] = RNG.integers(-50, 50, shape).astype(np.int32)
        else:
            feed[v.name] = RNG.standard_normal(shape).astype(np.float32)
    return feed


def lowered(model: onnx.ModelProto, pipeline: str = "lower-to-kernel") -> ModuleOp:
    module = import_model(model)
    default_registry().build(pipeline).apply(context(), module)
    return module


def top_level_loops(module: ModuleOp) -> list[kernel.LoopOp]:
    return [
        op
        for op in module.walk()
        if isinstance(op, kernel.LoopOp) and not isinstance(op.parent_op(), kernel.LoopOp)
    ]


# ---- numerics ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(MODELS))
def test_optimized_kernel_matches_core(name: str) -> None:
    model = MODELS[name]()
    feed = feed_for(model)
    want = InferenceSession(model, level="core").run(None, feed)
    got = InferenceSession(model, level="kernel").run(None, feed)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype
        if np.issubdtype(w.dtype, np.integer):
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


# ---- what the passes did -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["chain_broadcast", "chain_dynamic", "batchnorm_relu", "gelu", "split_heads", "long_chain"],
)
def test_elementwise_chains_become_one_nest(name: str) -> None:
    model = MODELS[name]()
    assert len(top_level_loops(lowered(model, UNOPTIMIZED))) > 2
    module = lowered(model)
    assert len(top_level_loops(module)) == 1
    allocs = [op for op in module.walk() if isinstance(op, kernel.AllocOp)]
    assert len(allocs) == 1  # the result's buffer only


@pytest.mark.parametrize("name", ["softmax", "layernorm"])
def test_normalizations_lose_their_elementwise_nests(name: str) -> None:
    """The reductions stay, the elementwise nests between them fuse (an expensive one read
    by two reductions, softmax's exp, stays)."""
    model = MODELS[name]()
    before = len(top_level_loops(lowered(model, UNOPTIMIZED)))
    after = len(top_level_loops(lowered(model)))
    assert after <= before - 3


def test_transpose_is_tiled_fused_and_parallel() -> None:
    (loop,) = top_level_loops(lowered(transpose_sigmoid()))
    assert loop.step_sizes == (32, 32)
    assert loop.omp is not None
    assert any(op.name == "math.exp" for op in loop.walk())


def test_integer_matmul_accumulates_along_unit_stride() -> None:
    loops = top_level_loops(lowered(matmul_int32()))
    kinds = [loop.kinds for loop in loops]
    assert ("parallel", "reduction", "parallel") in kinds
    assert not any(loop.inits for loop in loops)


def _nests(module: ModuleOp) -> list[tuple[object, ...]]:
    return [
        (loop.kinds, loop.step_sizes, loop.omp is not None, len(loop.inits))
        for loop in module.walk()
        if isinstance(loop, kernel.LoopOp)
    ]


def test_passes_are_idempotent() -> None:
    passes = (
        "kernel-fuse-elementwise,kernel-fuse-epilogue,kernel-interchange,kernel-tile,"
        "kernel-parallelize"
    )
    for build in (gelu, transpose_sigmoid, matmul_int32, layernorm):
        module = lowered(build())
        nests = _nests(module)
        default_registry().build(passes).apply(context(), module)
        assert _nests(module) == nests


# ---- hand-written kernel IR ----------------------------------------------------------------------

TRANSPOSE = """
func.func @t(%x: memref<300x1000xf32>) -> memref<1000x300xf32> {
  %y = kernel.alloc() : memref<1000x300xf32>
  kernel.loop (%i, %j) in (1000, 300) [parallel, parallel] {
    %v = kernel.load %x[%j, %i] : memref<300x1000xf32>
    kernel.store %v, %y[%i, %j] : memref<1000x300xf32>
    kernel.yield
  }
  func.return %y : memref<1000x300xf32>
}
"""

MATMUL_BIAS = """
func.func @mm(%a: memref<45x70xi32>, %b: memref<70x99xi32>, %c: memref<99xi32>)
    -> memref<45x99xi32> {
  %y = kernel.alloc() : memref<45x99xi32>
  %zero = arith.constant 0 : i32
  kernel.loop (%i, %j) in (45, 99) [parallel, parallel] {
    %r = kernel.loop (%k) in (70) [reduction] iter_args(%acc = %zero : i32) -> i32 {
      %x = kernel.load %a[%i, %k] : memref<45x70xi32>
      %w = kernel.load %b[%k, %j] : memref<70x99xi32>
      %p = arith.muli %x, %w : i32
      %s = arith.addi %acc, %p : i32
      kernel.yield %s : i32
    }
    %bias = kernel.load %c[%j] : memref<99xi32>
    %t = arith.addi %r, %bias : i32
    kernel.store %t, %y[%i, %j] : memref<45x99xi32>
    kernel.yield
  }
  func.return %y : memref<45x99xi32>
}
"""


def run_kernel_ir(text: str, pipeline: str, inputs: list[np.ndarray]) -> tuple[ModuleOp, object]:
    module = parse_module(text)
    if pipeline:
        default_registry().build(pipeline).apply(context(), module)
    return module, compile_program(generate_c(module)).run(inputs)[0]


def test_ragged_tiled_transpose_is_exact() -> None:
    x = RNG.standard_normal((300, 1000)).astype(np.float32)
    module, y = run_kernel_ir(TRANSPOSE, "optimize-kernel", [x])
    (loop,) = top_level_loops(module)
    assert loop.step_sizes == (32, 32) and loop.omp is not None
    np.testing.assert_array_equal(y, x.T)


def test_matmul_with_bias_accumulates_in_memory_exactly() -> None:
    a = RNG.integers(-1000, 1000, (45, 70)).astype(np.int32)
    b = RNG.integers(-1000, 1000, (70, 99)).astype(np.int32)
    c = RNG.integers(-1000, 1000, (99,)).astype(np.int32)
    module, y = run_kernel_ir(MATMUL_BIAS, "optimize-kernel", [a, b, c])
    assert [loop.kinds for loop in top_level_loops(module)] == [
        ("parallel",),  # the fill of the sums, coalesced into one dim
        ("parallel", "reduction", "parallel"),
        ("parallel", "parallel"),
    ]
    _, plain = run_kernel_ir(MATMUL_BIAS, "", [a, b, c])
    want = (a.astype(np.int64) @ b.astype(np.int64) + c).astype(np.int32)
    np.testing.assert_array_equal(plain, want)
    np.testing.assert_array_equal(y, want)
