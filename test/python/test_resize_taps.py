"""Resize with constant scales sums its taps one gather at a time (up to 4 taps).

A linear or cubic Resize with at most 4 taps per output lowers to n weighted gathers
added together, which fusion makes one elementwise nest. As a reduction over a tap dim,
the taps of the last axis went through a buffer n times the output: DeepLabV3's final
14 -> 224 upsampling (21 classes) wrote and re-read 8 MB, 2 of its 17 ms.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from rung.dialects import kernel
from rung.runtime import InferenceSession
from rung.runtime.levels import lower
from rung.runtime.session import load_module


def _resize(attrs: dict[str, object], scale: float, n: int = 14, c: int = 5) -> onnx.ModelProto:
    out = int(n * scale)
    graph = helper.make_graph(
        [helper.make_node("Resize", ["x", "", "scales"], ["y"], **attrs)],
        "resize",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, n, n])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c, out, out])],
        [numpy_helper.from_array(np.array([1, 1, scale, scale], np.float32), "scales")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 9
    return model


CASES = {
    "linear_up16": ({"mode": "linear", "coordinate_transformation_mode": "half_pixel"}, 16.0),
    "linear_align_corners": (
        {"mode": "linear", "coordinate_transformation_mode": "align_corners"},
        2.0,
    ),
    "cubic_up2": ({"mode": "cubic", "cubic_coeff_a": -0.75}, 2.0),
    "cubic_exclude_outside": ({"mode": "cubic", "exclude_outside": 1}, 2.0),
    "linear_antialias_down2": ({"mode": "linear", "antialias": 1}, 0.5),  # 4 taps
    "linear_antialias_down4": ({"mode": "linear", "antialias": 1}, 0.25),  # 8: a reduction
    "nearest_up2": ({"mode": "nearest"}, 2.0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_constant_scale_resize_matches_onnxruntime(name: str) -> None:
    attrs, scale = CASES[name]
    n = 28 if scale < 0.5 else 14
    model = _resize(attrs, scale, n)
    x = np.random.default_rng(2).standard_normal((1, 5, n, n)).astype(np.float32)
    (got,) = InferenceSession(model).run(None, {"x": x})
    ref = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = ref.run(None, {"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _kernel_loops(model: onnx.ModelProto) -> list[kernel.LoopOp]:
    module = load_module(model)
    lower(module, "kernel")
    return [op for op in module.walk() if isinstance(op, kernel.LoopOp)]


@pytest.mark.parametrize(
    ("name", "reduces"),
    [("linear_up16", False), ("cubic_up2", False), ("linear_antialias_down4", True)],
)
def test_few_taps_need_no_tap_buffer(name: str, reduces: bool) -> None:
    """The upsampling is two elementwise nests (one per axis), with no reduction loop
    and no buffer the size of the output times its taps."""
    attrs, scale = CASES[name]
    n = 28 if scale < 0.5 else 14
    loops = _kernel_loops(_resize(attrs, scale, n))
    carried = [loop for loop in loops if loop.results or "reduction" in loop.kinds]
    assert bool(carried) == reduces, loops
    if not reduces:
        assert (
            len(
                [
                    loop
                    for loop in loops
                    if loop.parent_op() is not None
                    and not isinstance(loop.parent_op(), kernel.LoopOp)
                ]
            )
            == 2
        )
