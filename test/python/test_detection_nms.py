"""NonMaxSuppression at levels core and kernel, against onnxruntime.

Expected results come from onnxruntime only: its order (per batch, per class,
best score first, ties to the lower index, and with NaN scores whatever its
heap gives), its IoU arithmetic in float32 and its degenerate-box rules.
Random inputs are drawn on a coarse grid so that ties, identical and nested
boxes, zero-area boxes and IoUs exactly at the threshold are common; some
seeds add NaN scores and NaN or infinite coordinates. One model per
combination of `center_point_box` and given inputs is compiled once and run
on every seed. The compiled routine also runs under AddressSanitizer and
UndefinedBehaviorSanitizer on edge cases.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType, f32, i64
from xdsl.ir import Block
from xdsl.utils.exceptions import VerifyException

from rung.dialects import core, parse_module
from rung.errors import RungError
from rung.lowering.kernel_to_c import generate_c
from rung.lowering.kit import int_attr
from rung.runtime import InferenceSession, native

INF = np.inf
NAMES = ["boxes", "scores", "max_output", "iou", "score_threshold"]
SEEDS = 120


def nms_model(center: int, inputs: int, dims: Sequence[str] = "bnbcn") -> onnx.ModelProto:
    """One NonMaxSuppression node with its first `inputs` inputs, all of run-time size;
    `dims` names those of boxes (2) and of scores (3)."""
    infos = [
        helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [*dims[:2], 4]),
        helper.make_tensor_value_info("scores", TensorProto.FLOAT, list(dims[2:])),
        helper.make_tensor_value_info("max_output", TensorProto.INT64, []),
        helper.make_tensor_value_info("iou", TensorProto.FLOAT, [1]),
        helper.make_tensor_value_info("score_threshold", TensorProto.FLOAT, []),
    ][:inputs]
    node = helper.make_node(
        "NonMaxSuppression", NAMES[:inputs], ["selected"], center_point_box=center
    )
    out = helper.make_tensor_value_info("selected", TensorProto.INT64, [None, 3])
    graph = helper.make_graph([node], "nms", infos, [out])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], ir_version=8)


@functools.cache
def reference(center: int, inputs: int) -> ort.InferenceSession:
    model = nms_model(center, inputs).SerializeToString()
    return ort.InferenceSession(model, providers=["CPUExecutionProvider"])


@functools.cache
def session(center: int, inputs: int, level: str) -> InferenceSession:
    return InferenceSession(nms_model(center, inputs), level=level)


def random_feed(seed: int, inputs: int) -> dict[str, np.ndarray]:
    """Boxes on a grid of a random step, scores in eighths; some NaN and inf values."""
    rng = np.random.default_rng(seed)
    b, c, n = int(rng.integers(1, 4)), int(rng.integers(1, 4)), int(rng.integers(0, 30))
    step = float(rng.choice([0.25, 0.5, 1.0]))
    boxes = (np.round(rng.normal(0, 3, (b, n, 4)) / step) * step).astype(np.float32)
    if rng.random() < 0.3:  # zero height (corners) or a mirrored size (centre)
        boxes[..., 2] = boxes[..., 0]
    if rng.random() < 0.2 and n:  # exact duplicates
        boxes[:, rng.integers(0, n, n // 2)] = boxes[:, rng.integers(0, n, n // 2)]
    scores = (np.round(rng.random((b, c, n)) * 8) / 8).astype(np.float32)
    if rng.random() < 0.3:
        scores[rng.random(scores.shape) < 0.2] = np.nan
    if rng.random() < 0.2:
        boxes[rng.random(boxes.shape) < 0.1] = np.nan
    if rng.random() < 0.1:
        boxes[rng.random(boxes.shape) < 0.1] = rng.choice([np.inf, -np.inf])
    values = [
        boxes,
        scores,
        np.array(rng.integers(-2, 12), np.int64),
        np.array([rng.choice([0.0, 0.25, 0.5, 1.0])], np.float32),
        np.array(rng.choice([-np.inf, 0.0, 0.25, 0.5]), np.float32),
    ]
    return dict(zip(NAMES[:inputs], values[:inputs], strict=True))


def assert_same(got: np.ndarray, want: np.ndarray, what: str) -> None:
    assert got.dtype == np.int64 and got.shape == want.shape, (what, got.shape, want.shape)
    np.testing.assert_array_equal(got, want, err_msg=what)


@pytest.mark.parametrize("level", ["core", "kernel"])
@pytest.mark.parametrize("center", [0, 1])
@pytest.mark.parametrize("inputs", [2, 3, 4, 5])
def test_random_boxes_match_onnxruntime(level: str, center: int, inputs: int) -> None:
    rung = session(center, inputs, level)
    for seed in range(SEEDS):
        feed = random_feed(1000 * inputs + seed, inputs)
        want = reference(center, inputs).run(None, feed)[0]
        assert_same(rung.run(None, feed)[0], want, f"seed {seed}")


def nan_scores_feed(seed: int) -> dict[str, np.ndarray]:
    """Many boxes, a third of their scores NaN: the order is the heap's, not a sort's."""
    rng = np.random.default_rng(seed)
    n = 64
    corner = rng.integers(0, 20, (2, n, 2)).astype(np.float32)
    size = rng.integers(1, 6, (2, n, 2)).astype(np.float32)
    scores = (np.round(rng.random((2, 2, n)) * 4) / 4).astype(np.float32)
    scores[rng.random(scores.shape) < 0.3] = np.nan
    return {
        "boxes": np.concatenate([corner, corner + size], axis=-1),
        "scores": scores,
        "max_output": np.array(n, np.int64),
        "iou": np.array([0.25], np.float32),
    }


@pytest.mark.parametrize("level", ["core", "kernel"])
def test_nan_scores_leave_in_the_order_of_onnxruntimes_heap(level: str) -> None:
    for seed in range(20):
        feed = nan_scores_feed(seed)
        want = reference(0, 4).run(None, feed)[0]
        assert_same(session(0, 4, level).run(None, feed)[0], want, f"seed {seed}")


def edge_feeds() -> dict[str, dict[str, np.ndarray]]:
    """Inputs at the edges: no boxes, NaN everywhere, zero areas, extreme counts and values."""
    rng = np.random.default_rng(5)
    ones = np.ones((1, 1, 4), np.float32)

    def feed(boxes: object, scores: object, count: int, iou: float, threshold: float) -> dict:
        return {
            "boxes": np.asarray(boxes, np.float32),
            "scores": np.asarray(scores, np.float32),
            "max_output": np.array(count, np.int64),
            "iou": np.array([iou], np.float32),
            "score_threshold": np.array(threshold, np.float32),
        }

    return {
        "no_boxes": feed(np.zeros((2, 0, 4)), np.zeros((2, 3, 0)), 5, 0.5, 0.0),
        "no_classes": feed(rng.random((1, 4, 4)), np.zeros((1, 0, 4)), 5, 0.5, 0.0),
        "all_nan": feed(np.full((2, 5, 4), np.nan), np.full((2, 3, 5), np.nan), 7, 0.5, -np.inf),
        "zero_areas": feed(np.zeros((1, 6, 4)), rng.random((1, 2, 6)), 10, 0.0, -np.inf),
        "negative_max_output": feed(rng.random((1, 6, 4)), rng.random((1, 2, 6)), -5, 0.5, 0.0),
        "largest_max_output": feed(
            rng.random((2, 6, 4)), rng.random((2, 2, 6)), 2**63 - 1, 1.0, -np.inf
        ),
        "infinite_boxes": feed(
            [[[0, 0, INF, INF], [-INF, -INF, 1, 1], [0, 0, 1, 1], [1e38, 1e38, -1e38, -1e38]]],
            np.ones((1, 1, 4)),
            4,
            0.0,
            0.0,
        ),
        "subnormal_boxes": feed(
            [[[0, 0, 1e-45, 1e-45], [0, 0, 1e-44, 1e-44], [0, 0, 3e-45, 1e-45]]],
            [[[0.5, 0.5, 0.5]]],
            3,
            0.0,
            0.0,
        ),
        "identical_boxes": feed(np.tile(ones, (1, 8, 1)), np.full((1, 2, 8), 0.5), 8, 1.0, 0.0),
    }


@pytest.mark.parametrize("center", [0, 1])
@pytest.mark.parametrize("level", ["core", "kernel"])
def test_edge_inputs_match_onnxruntime(level: str, center: int) -> None:
    for name, feed in edge_feeds().items():
        want = reference(center, 5).run(None, feed)[0]
        assert_same(session(center, 5, level).run(None, feed)[0], want, name)


@pytest.mark.parametrize("center", [0, 1])
def test_edge_inputs_under_the_sanitizers(center: int) -> None:
    """ASan and UBSan find nothing, and two runs over differently filled arenas agree."""
    program = generate_c(session(center, 5, "kernel").module, "nms")
    for name, feed in edge_feeds().items():
        want = reference(center, 5).run(None, feed)[0]
        got = native.run_in_harness(program, [feed[k] for k in NAMES])
        assert_same(got[0], want, name)


CALLS = """
func.func @main(%boxes: memref<1x4x4xf32>, %scores: memref<1x1x4xf32>)
    -> (memref<1xi64>, memref<2x3xi64>, memref<1xi64>) {
  %max = kernel.constant dense<4> : tensor<i64>
  %iou = kernel.constant dense<0.5> : tensor<f32>
  %rows = kernel.alloc() : memref<2x3xi64>
  %count = kernel.alloc() : memref<1xi64>
  %corners = kernel.alloc() : memref<4x5xf32>
  %heap = kernel.alloc() : memref<4xi64>
  kernel.call @nms(%boxes, %scores, %max, %iou, %iou, %rows, %count, %corners, %heap) [0, 0]
    : memref<1x4x4xf32>, memref<1x1x4xf32>, memref<i64>, memref<f32>, memref<f32>,
      memref<2x3xi64>, memref<1xi64>, memref<4x5xf32>, memref<4xi64>
  %unused = kernel.alloc() : memref<2x3xi64>
  %none = kernel.alloc() : memref<1xi64>
  %small = kernel.alloc() : memref<3x5xf32>
  kernel.call @nms(%boxes, %scores, %max, %iou, %iou, %unused, %none, %small, %heap) [0, 0]
    : memref<1x4x4xf32>, memref<1x1x4xf32>, memref<i64>, memref<f32>, memref<f32>,
      memref<2x3xi64>, memref<1xi64>, memref<3x5xf32>, memref<4xi64>
  func.return %count, %rows, %none : memref<1xi64>, memref<2x3xi64>, memref<1xi64>
}
"""


def test_the_runtime_routine_stays_inside_the_buffers_it_is_given() -> None:
    """A call written by hand: four boxes to keep and room for two rows keeps the best
    two; scratch too small for the boxes keeps none. Neither reads or writes past a
    buffer (the sanitizers watch)."""
    program = generate_c(parse_module(CALLS), "calls")
    boxes = np.array([[[0, 0, 1, 1], [2, 2, 3, 3], [4, 4, 5, 5], [6, 6, 7, 7]]], np.float32)
    scores = np.array([[[0.1, 0.4, 0.3, 0.2]]], np.float32)
    count, rows, none = native.run_in_harness(program, [boxes, scores])
    assert count.tolist() == [2] and rows.tolist() == [[0, 0, 1], [0, 0, 2]]
    assert none.tolist() == [0]


@pytest.mark.parametrize("level", ["core", "kernel"])
@pytest.mark.parametrize("iou", [-0.5, 1.5, np.nan])
def test_iou_threshold_outside_0_1_fails_the_run(level: str, iou: float) -> None:
    feed = random_feed(3, 4)
    feed["iou"] = np.array([iou], np.float32)
    with pytest.raises(Exception, match="iou_threshold"):  # onnxruntime refuses it too
        reference(0, 4).run(None, feed)
    with pytest.raises(RungError, match="iou_threshold must be in range"):
        session(0, 4, level).run(None, feed)


@pytest.mark.parametrize("level", ["core", "kernel"])
def test_boxes_and_scores_of_different_box_counts_fail_the_run(level: str) -> None:
    feed = {
        "boxes": np.zeros((1, 5, 4), np.float32),
        "scores": np.zeros((1, 2, 6), np.float32),
        "max_output": np.array(3, np.int64),
    }
    model = nms_model(0, 3, dims=["b1", "n1", "b2", "c", "n2"])  # nothing says they agree
    with pytest.raises(RungError, match="boxes and scores differ in their batches or boxes"):
        InferenceSession(model, level=level).run(None, feed)


@pytest.mark.parametrize("level", ["core", "kernel"])
def test_a_count_the_model_declares_is_checked_at_run_time(level: str) -> None:
    model = nms_model(0, 3)
    model.graph.output[0].type.tensor_type.shape.dim[0].dim_value = 2
    rung = InferenceSession(model, level=level)
    disjoint = np.array([[[0, 0, 1, 1], [2, 2, 3, 3], [4, 4, 5, 5]]], np.float32)
    feed = {"boxes": disjoint, "scores": np.ones((1, 1, 3), np.float32)}
    assert_same(
        rung.run(None, {**feed, "max_output": np.array(2)})[0],
        np.array([[0, 0, 0], [0, 0, 1]]),
        "2",
    )
    with pytest.raises(RungError, match="count of kept boxes differs from 2"):
        rung.run(None, {**feed, "max_output": np.array(3)})


@pytest.mark.parametrize("level", ["core", "kernel"])
def test_opset_10_and_constant_inputs(level: str) -> None:
    """Opset 10's NonMaxSuppression, with the scalar inputs as constants (folded sizes)."""
    rng = np.random.default_rng(9)
    consts = [
        helper.make_node("Constant", [], [name], value=onnx.numpy_helper.from_array(v, name))
        for name, v in [
            ("max_output", np.array([3], np.int64)),
            ("iou", np.array([0.3], np.float32)),
            ("score_threshold", np.array([0.2], np.float32)),
        ]
    ]
    node = helper.make_node("NonMaxSuppression", NAMES, ["selected"])
    graph = helper.make_graph(
        [*consts, node],
        "nms",
        [
            helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [2, 12, 4]),
            helper.make_tensor_value_info("scores", TensorProto.FLOAT, [2, 3, 12]),
        ],
        [helper.make_tensor_value_info("selected", TensorProto.INT64, [None, 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 10)], ir_version=8)
    corner = rng.integers(0, 8, (2, 12, 2)).astype(np.float32)
    feed = {
        "boxes": np.concatenate([corner, corner + rng.integers(1, 4, (2, 12, 2))], -1).astype(
            np.float32
        ),
        "scores": rng.random((2, 3, 12)).astype(np.float32),
    }
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(None, feed)[0]
    assert len(want) > 0
    assert_same(InferenceSession(model, level=level).run(None, feed)[0], want, "opset 10")


def _nms_op(types: Sequence[TensorType], result: TensorType, center: int = 0) -> core.CoreOp:
    block = Block(arg_types=list(types))
    return core.NonMaxSuppressionOp.create(
        operands=list(block.args),
        result_types=[result],
        properties={"center_point_box": int_attr(center)},
    )


GOOD = [
    TensorType(f32, [2, 5, 4]),
    TensorType(f32, [2, 3, 5]),
    TensorType(i64, []),
    TensorType(f32, []),
]
ROWS = TensorType(i64, [DYNAMIC_INDEX, 3])


def test_verifier_accepts_the_documented_form() -> None:
    _nms_op(GOOD, ROWS).verify()
    _nms_op([*GOOD, TensorType(f32, [])], ROWS, center=1).verify()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({0: TensorType(f32, [2, 5, 3])}, "4 numbers per box"),
        ({1: TensorType(f32, [2, 3, 6])}, "differ in their batches or boxes"),
        ({1: TensorType(f32, [1, 3, 5])}, "differ in their batches or boxes"),
        ({0: TensorType(i64, [2, 5, 4])}, "boxes must be a rank-3 f32 tensor"),
        ({2: TensorType(i64, [1])}, "max_output must be a rank-0"),
        ({3: TensorType(i64, [])}, "iou_threshold must be a rank-0"),
        ({4: TensorType(f32, [1])}, "score_threshold must be a rank-0"),
    ],
)
def test_verifier_refuses_malformed_operands(change: dict[int, TensorType], message: str) -> None:
    types = [*GOOD, TensorType(f32, [])]
    for i, t in change.items():
        types[i] = t
    with pytest.raises(VerifyException, match=message):
        _nms_op(types, ROWS).verify()


def test_verifier_refuses_a_static_count_and_other_formats() -> None:
    with pytest.raises(VerifyException, match=r"tensor<\?x3xi64>"):
        _nms_op(GOOD, TensorType(i64, [4, 3])).verify()
    with pytest.raises(VerifyException, match="center_point_box must be 0 or 1"):
        _nms_op(GOOD, ROWS, center=2).verify()
