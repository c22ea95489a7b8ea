"""core-prune-conv-taps on ONNX convolutions: dilated convolutions on small maps (the ASPP
head of DeepLabV3) lose the taps that read only padding, or split into per-tap 1x1
convolutions, and still match onnxruntime.

Each model is compiled to C and run; the test also counts the convolutions the kernel level
was given, so a rewrite that silently stopped applying fails here too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from rung.dialects import context
from rung.lowering.core_opt.conv_taps import Axis
from rung.lowering.pipelines import default_registry
from rung.runtime import InferenceSession
from rung.runtime.levels import lower
from rung.runtime.session import load_module


@dataclass(frozen=True)
class Case:
    cin: int
    cout: int
    spatial: tuple[int, ...]
    kernel: int
    dilation: int
    convs: int
    """How many core.conv ops the rewrite leaves."""
    stride: int = 1
    pads: tuple[int, ...] | None = None
    group: int = 1
    batch: int | str = 1
    bias: bool = False
    kept: str = ""
    """A weight type the rewritten IR must contain (the trimmed kernel)."""


CASES = {
    # DeepLabV3's ASPP branches on a 14x14 map: dilation 12 splits into 9 taps,
    # 24 and 36 trim to the centre tap
    "aspp_rate12_split": Case(64, 32, (14, 14), 3, 12, convs=9, bias=True),
    "aspp_rate24_centre": Case(64, 32, (14, 14), 3, 24, convs=1, kept="32x64x1x1xf32"),
    "aspp_rate36_centre": Case(64, 32, (14, 14), 3, 36, convs=1),
    # strided: each tap's window is read with the stride
    "strided_split": Case(64, 64, (15, 13), 3, 10, convs=9, stride=2),
    # asymmetric padding, a 5x5 kernel, a run-time batch: trims to 3x4 taps
    "asymmetric_pads": Case(
        48, 40, (9, 11), 5, 4, convs=1, pads=(3, 8, 9, 2), batch="N", kept="40x48x3x4xf32"
    ),
    # grouped: still a GEMM per group, still split
    "grouped_split": Case(64, 64, (14, 14), 3, 12, convs=9, group=2),
    # depthwise: trimmed only, never split
    "depthwise_centre": Case(32, 32, (14, 14), 3, 24, convs=1, group=32, kept="32x1x1x1xf32"),
    "depthwise_rate12_kept": Case(32, 32, (14, 14), 3, 12, convs=1, group=32),
    # 1-D (a sequence model's dilated conv)
    "conv1d_split": Case(128, 128, (64,), 3, 56, convs=3),
    # an ordinary 3x3 conv reads padding only along its border: untouched
    "plain_3x3_kept": Case(16, 16, (8, 8), 3, 1, convs=1),
}


def _model(case: Case) -> onnx.ModelProto:
    n = len(case.spatial)
    pads = list(case.pads) if case.pads else [case.dilation * (case.kernel // 2)] * (2 * n)
    w = np.random.default_rng(1).standard_normal(
        (case.cout, case.cin // case.group, *[case.kernel] * n)
    )
    inits = [numpy_helper.from_array(w.astype(np.float32), "w")]
    inputs = ["x", "w"]
    if case.bias:
        inits.append(numpy_helper.from_array(np.arange(case.cout, dtype=np.float32), "b"))
        inputs.append("b")
    node = helper.make_node(
        "Conv",
        inputs,
        ["y"],
        dilations=[case.dilation] * n,
        pads=pads,
        strides=[case.stride] * n,
        group=case.group,
    )
    graph = helper.make_graph(
        [node],
        "dilated",
        [
            helper.make_tensor_value_info(
                "x", TensorProto.FLOAT, [case.batch, case.cin, *case.spatial]
            )
        ],
        [
            helper.make_tensor_value_info(
                "y", TensorProto.FLOAT, [case.batch, case.cout, *[None] * n]
            )
        ],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_onnxruntime(name: str) -> None:
    case = CASES[name]
    model = _model(case)
    batch = 2 if isinstance(case.batch, str) else case.batch
    x = (
        np.random.default_rng(7)
        .standard_normal((batch, case.cin, *case.spatial))
        .astype(np.float32)
    )
    (got,) = InferenceSession(model).run(None, {"x": x})
    ref = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = ref.run(None, {"x": x})
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", sorted(CASES))
def test_rewrite_applies(name: str) -> None:
    module = load_module(_model(CASES[name]))
    lower(module, "core")
    default_registry().build("core-prune-conv-taps,dce").apply(context(), module)
    text = str(module)
    assert text.count("core.conv(") == CASES[name].convs, text
    assert CASES[name].kept in text, text


@pytest.mark.parametrize(
    ("axis", "boxes"),
    [
        # dilation 12 on 14: the outer taps reach the input at 2 outputs each
        (Axis(14, 3, 1, 12, 12, 12), [(12, 14), (0, 14), (0, 2)]),
        # dilation 24: only the centre
        (Axis(14, 3, 1, 24, 24, 24), [(14, 14), (0, 14), (0, 0)]),
        # stride 2, no padding: every tap reads at every output
        (Axis(7, 3, 2, 1, 0, 0), [(0, 3), (0, 3), (0, 3)]),
        # stride 2, padding 1 on 6: the first tap misses output 0, the last misses none
        (Axis(6, 3, 2, 1, 1, 1), [(1, 3), (0, 3), (0, 3)]),
    ],
)
def test_tap_boxes(axis: Axis, boxes: list[tuple[int, int]]) -> None:
    """Each tap's valid outputs, checked against a brute-force scan of the input index."""
    assert [axis.box(k) for k in range(axis.kernel)] == boxes
    for k, (lo, hi) in enumerate(boxes):
        inside = [
            o
            for o in range(axis.out)
            if 0 <= o * axis.stride + k * axis.dilation - axis.low < axis.size
        ]
        assert inside == list(range(lo, hi)) or (not inside and lo == hi)
