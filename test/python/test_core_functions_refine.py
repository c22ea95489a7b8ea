"""Function expansion, shape refinement, run-time pads/slices/ranges and constant
folding, checked numerically against onnxruntime and the core interpreter."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from rung.dialects import context, parse_module
from rung.dialects.core_eval import CoreInterpreter
from rung.runtime import InferenceSession

LIT = Path(__file__).parents[1] / "lit"
F = TensorProto.FLOAT
I64 = TensorProto.INT64
RNG = np.random.default_rng(11)


def ort_run(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    import onnxruntime as ort

    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def core_run(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    return InferenceSession(model, level="core").run(None, feeds)


def model_of(nodes: list, inputs: list, outputs: list, opset: int = 21) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


@pytest.mark.parametrize(
    ("pads", "mode"),
    [
        ([1, 0, 2, 1], "constant"),
        ([0, -1, 1, 2], "constant"),
        ([1, 1, 1, 1], "reflect"),
        ([2, 0, 0, 3], "edge"),
        ([1, 2, 1, 2], "wrap"),
    ],
)
def test_run_time_pads_match_onnxruntime(pads: list[int], mode: str) -> None:
    model = model_of(
        [helper.make_node("Pad", ["x", "p"], ["y"], mode=mode)],
        [
            helper.make_tensor_value_info("x", F, [3, 4]),
            helper.make_tensor_value_info("p", I64, [4]),
        ],
        [helper.make_tensor_value_info("y", F, ["A", "B"])],
    )
    feeds = {"x": RNG.standard_normal((3, 4)).astype(np.float32), "p": np.array(pads, np.int64)}
    np.testing.assert_array_equal(core_run(model, feeds)[0], ort_run(model, feeds)[0])


def test_run_time_pads_on_some_axes_match_onnxruntime() -> None:
    model = model_of(
        [helper.make_node("Pad", ["x", "p", "", "a"], ["y"])],
        [
            helper.make_tensor_value_info("x", F, [2, 3, 4]),
            helper.make_tensor_value_info("p", I64, [4]),
            helper.make_tensor_value_info("a", I64, [2]),
        ],
        [helper.make_tensor_value_info("y", F, ["A", "B", "C"])],
    )
    feeds = {
        "x": RNG.standard_normal((2, 3, 4)).astype(np.float32),
        "p": np.array([1, 0, 2, 3], np.int64),
        "a": np.array([-1, 0], np.int64),
    }
    np.testing.assert_array_equal(core_run(model, feeds)[0], ort_run(model, feeds)[0])


@pytest.mark.parametrize(
    ("starts", "ends", "steps"),
    [
        ([0, 1], [2, 4], [1, 1]),
        ([-1, 3], [-4, 0], [-1, -2]),
        ([5, -10], [1, 10], [1, 3]),
        ([1, 0], [1, 4], [1, 1]),
    ],
)
def test_run_time_slices_match_onnxruntime(
    starts: list[int], ends: list[int], steps: list[int]
) -> None:
    model = model_of(
        [helper.make_node("Slice", ["x", "s", "e", "a", "t"], ["y"])],
        [helper.make_tensor_value_info("x", F, ["N", 5])]
        + [helper.make_tensor_value_info(n, I64, [2]) for n in "seat"],
        [helper.make_tensor_value_info("y", F, ["A", "B"])],
    )
    feeds = {
        "x": RNG.standard_normal((3, 5)).astype(np.float32),
        "s": np.array(starts, np.int64),
        "e": np.array(ends, np.int64),
        "a": np.array([0, 1], np.int64),
        "t": np.array(steps, np.int64),
    }
    np.testing.assert_array_equal(core_run(model, feeds)[0], ort_run(model, feeds)[0])


@pytest.mark.parametrize(
    ("dtype", "start", "limit", "delta"),
    [
        (np.float32, 0.5, 3.7, 0.4),
        (np.int64, 10, -3, -4),
        (np.int32, 2, 2, 1),
        (np.float32, 3, 1, 1),
    ],
)
def test_run_time_range_matches_onnxruntime(
    dtype: type, start: float, limit: float, delta: float
) -> None:
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    model = model_of(
        [helper.make_node("Range", ["a", "b", "c"], ["y"])],
        [helper.make_tensor_value_info(n, elem, []) for n in "abc"],
        [helper.make_tensor_value_info("y", elem, ["N"])],
    )
    feeds = {n: np.array(v, dtype) for n, v in zip("abc", (start, limit, delta), strict=True)}
    got, want = core_run(model, feeds)[0], ort_run(model, feeds)[0]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_rms_normalization_through_its_function_body_matches_onnxruntime() -> None:
    model = model_of(
        [helper.make_node("RMSNormalization", ["x", "s"], ["y"], axis=-1, epsilon=1e-3)],
        [
            helper.make_tensor_value_info("x", F, [2, 3, 8]),
            helper.make_tensor_value_info("s", F, [8]),
        ],
        [helper.make_tensor_value_info("y", F, [2, 3, 8])],
        opset=23,
    )
    feeds = {
        "x": RNG.standard_normal((2, 3, 8)).astype(np.float32),
        "s": RNG.standard_normal(8).astype(np.float32),
    }
    np.testing.assert_allclose(
        core_run(model, feeds)[0], ort_run(model, feeds)[0], rtol=1e-5, atol=1e-6
    )


def test_softmax_cross_entropy_through_its_function_body_matches_onnxruntime() -> None:
    model = model_of(
        [
            helper.make_node(
                "SoftmaxCrossEntropyLoss",
                ["x", "t"],
                ["loss", "logp"],
                reduction="mean",
                ignore_index=1,
            )
        ],
        [
            helper.make_tensor_value_info("x", F, [4, 5, 2]),
            helper.make_tensor_value_info("t", I64, [4, 2]),
        ],
        [
            helper.make_tensor_value_info("loss", F, []),
            helper.make_tensor_value_info("logp", F, [4, 5, 2]),
        ],
    )
    feeds = {
        "x": RNG.standard_normal((4, 5, 2)).astype(np.float32),
        "t": RNG.integers(0, 5, (4, 2)).astype(np.int64),
    }
    for got, want in zip(core_run(model, feeds), ort_run(model, feeds), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_refined_types_match_onnxruntime() -> None:
    path = LIT / "onnx_to_core" / "functions_refine_types.onnxtxt"
    from rung.importers.onnx.loader import load

    model = load(path).model
    feeds = {"x": RNG.standard_normal((2, 6)).astype(np.float32)}
    model.ir_version = 10
    np.testing.assert_array_equal(core_run(model, feeds)[0], ort_run(model, feeds)[0])


def run_function(module: ModuleOp, name: str, args: list[np.ndarray]) -> list[object]:
    func = next(
        op for op in module.body.block.ops if isinstance(op, FuncOp) and op.sym_name.data == name
    )
    return CoreInterpreter(module).run(func, args)


def test_folding_keeps_every_function_s_results() -> None:
    """The fold lit test's functions give the same results before and after folding."""
    text = (LIT / "core_opt" / "fold_constants.mlir").read_text()
    from rung.lowering.core_opt import FoldConstantsPass

    before = parse_module(text)
    after = parse_module(text)
    FoldConstantsPass().apply(context(), after)
    assert "core.binary mul" in str(before) and "core.binary mul" not in str(after)
    for name, shapes in {"shape_chain": [(2, 6)], "mask": [(2, 3)]}.items():
        args = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
        want = run_function(before, name, args)
        got = run_function(after, name, args)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize(
    ("x_shape", "target"), [((3, 1), [2, 3, 4]), ((2, 1, 4), [3, 1]), ((1,), [1])]
)
def test_run_time_expand_matches_onnxruntime(x_shape: tuple, target: list[int]) -> None:
    rank = max(len(x_shape), len(target))
    model = model_of(
        [helper.make_node("Expand", ["x", "s"], ["y"])],
        [
            helper.make_tensor_value_info("x", F, list(x_shape)),
            helper.make_tensor_value_info("s", I64, [len(target)]),
        ],
        [helper.make_tensor_value_info("y", F, [f"d{i}" for i in range(rank)])],
    )
    feeds = {"x": RNG.standard_normal(x_shape).astype(np.float32), "s": np.array(target, np.int64)}
    np.testing.assert_array_equal(core_run(model, feeds)[0], ort_run(model, feeds)[0])
