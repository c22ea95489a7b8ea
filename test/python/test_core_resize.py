"""Resize with roi / scales / sizes given at run time, at level core.

The lowering computes the source indices and weights of every tap with core
ops when these inputs are graph inputs. Each model here takes them as inputs
and is compared with onnx.reference (the lowering follows its formulas) and
with onnxruntime, over the modes, coordinate transformations, nearest modes,
axes, aspect-ratio policies and antialias.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

from rung.runtime import InferenceSession

RNG = np.random.default_rng(7)


@dataclass(frozen=True)
class Case:
    """One Resize: its attributes, the run-time inputs, and the shapes to declare."""

    x: tuple[int, ...]
    attrs: dict[str, object]
    scales: tuple[float, ...] | None = None
    sizes: tuple[int, ...] | None = None
    roi: tuple[float, ...] | None = None
    dtype: type = np.float32
    x_dims: tuple[int | str, ...] | None = None
    """Declared input dims (names for dims known only at run time)."""
    reference: bool = True
    """Whether onnx.reference runs this case (it takes no negative axes)."""
    ort: bool = True
    """Whether onnxruntime runs this case (it has no float64 Resize)."""


def build(case: Case) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """A one-node model taking x and the given roi / scales / sizes as graph inputs."""
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(case.dtype))
    rank = len(case.x)
    feeds: dict[str, np.ndarray] = {"x": _data(case)}
    infos = [helper.make_tensor_value_info("x", elem, case.x_dims or case.x)]
    names = ["x"]
    for name, values, dtype in (
        ("roi", case.roi, np.float32),
        ("scales", case.scales, np.float32),
        ("sizes", case.sizes, np.int64),
    ):
        if values is None:
            names.append("")
            continue
        feeds[name] = np.array(values, dtype)
        infos.append(
            helper.make_tensor_value_info(
                name, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), [len(values)]
            )
        )
        names.append(name)
    while names[-1] == "":
        names.pop()
    node = helper.make_node("Resize", names, ["y"], **case.attrs)
    out = helper.make_tensor_value_info("y", elem, [f"d{i}" for i in range(rank)])
    graph = helper.make_graph([node], "resize", infos, [out])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)
    onnx.checker.check_model(model, full_check=True)
    return model, feeds


def _data(case: Case) -> np.ndarray:
    if np.dtype(case.dtype).kind == "f":
        return RNG.standard_normal(case.x).astype(case.dtype)
    return RNG.integers(0, 255, case.x).astype(case.dtype)


CASES: dict[str, Case] = {
    "nearest_up_round_prefer_floor": Case((1, 1, 3, 4), {"mode": "nearest"}, (1, 1, 2.0, 1.5)),
    "nearest_down_round_prefer_ceil": Case(
        (1, 2, 5, 7),
        {"mode": "nearest", "nearest_mode": "round_prefer_ceil"},
        (1, 1, 0.6, 0.45),
    ),
    "nearest_floor_asymmetric": Case(
        (1, 1, 4, 4),
        {
            "mode": "nearest",
            "nearest_mode": "floor",
            "coordinate_transformation_mode": "asymmetric",
        },
        (1, 1, 2.5, 1.7),
    ),
    "nearest_ceil_align_corners": Case(
        (1, 1, 4, 5),
        {
            "mode": "nearest",
            "nearest_mode": "ceil",
            "coordinate_transformation_mode": "align_corners",
        },
        (1, 1, 1.5, 0.8),
    ),
    "nearest_int8_sizes": Case((2, 3, 4), {"mode": "nearest"}, sizes=(2, 5, 9), dtype=np.int8),
    "linear_half_pixel_up": Case((1, 1, 3, 4), {"mode": "linear"}, (1, 1, 2.0, 1.5)),
    "linear_half_pixel_down": Case((2, 1, 6, 8), {"mode": "linear"}, (1, 1, 0.5, 0.7)),
    "linear_pytorch_half_pixel": Case(
        (1, 1, 4, 3),
        {"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"},
        (1, 1, 0.25, 2.0),
    ),
    "linear_half_pixel_symmetric": Case(
        (1, 1, 5, 4),
        {"mode": "linear", "coordinate_transformation_mode": "half_pixel_symmetric"},
        (1, 1, 1.3, 0.7),
    ),
    "linear_align_corners": Case(
        (1, 1, 4, 4),
        {"mode": "linear", "coordinate_transformation_mode": "align_corners"},
        (1, 1, 1.5, 0.5),
    ),
    "linear_uint8": Case((1, 1, 4, 4), {"mode": "linear"}, (1, 1, 1.5, 0.75), dtype=np.uint8),
    "linear_float64_sizes": Case(
        (3, 5), {"mode": "linear"}, sizes=(3, 8), dtype=np.float64, ort=False
    ),
    "linear_antialias_down": Case(
        (1, 1, 9, 11), {"mode": "linear", "antialias": 1}, (1, 1, 0.35, 0.6)
    ),
    "linear_antialias_up": Case((1, 1, 3, 3), {"mode": "linear", "antialias": 1}, (1, 1, 1.5, 2.0)),
    "cubic_half_pixel": Case((1, 1, 5, 6), {"mode": "cubic"}, (1, 1, 1.6, 0.5)),
    "cubic_asymmetric": Case(
        (1, 1, 4, 4),
        {"mode": "cubic", "coordinate_transformation_mode": "asymmetric"},
        (1, 1, 2.0, 1.25),
    ),
    "cubic_a_exclude_outside": Case(
        (1, 1, 6, 5),
        {"mode": "cubic", "cubic_coeff_a": -0.5, "exclude_outside": 1},
        (1, 1, 0.7, 1.75),
    ),
    "cubic_antialias_down": Case(
        (1, 2, 10, 8), {"mode": "cubic", "antialias": 1}, (1, 1, 0.3, 0.55)
    ),
    "cubic_align_corners_sizes": Case(
        (1, 1, 4, 6),
        {"mode": "cubic", "coordinate_transformation_mode": "align_corners"},
        sizes=(1, 1, 7, 3),
    ),
    "tf_crop_and_resize_linear": Case(
        (1, 1, 5, 5),
        {"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize"},
        sizes=(1, 1, 4, 3),
        roi=(0, 0, 0.2, 0.1, 1, 1, 0.8, 1.3),
    ),
    "tf_crop_and_resize_extrapolation": Case(
        (1, 1, 4, 4),
        {
            "mode": "linear",
            "coordinate_transformation_mode": "tf_crop_and_resize",
            "extrapolation_value": 7.5,
        },
        (1, 1, 2.0, 1.5),
        roi=(0, 0, -0.4, 0.6, 1, 1, 0.9, 1.5),
    ),
    "tf_crop_and_resize_axes": Case(
        (1, 1, 6, 4),
        {
            "mode": "cubic",
            "coordinate_transformation_mode": "tf_crop_and_resize",
            "axes": [3, 2],
        },
        sizes=(3, 5),
        roi=(0.1, 0.3, 0.9, 0.8),
    ),
    "axes_unsorted": Case((2, 5, 6), {"mode": "linear", "axes": [2, 1]}, (0.5, 1.5)),
    "axes_negative": Case(
        (2, 5, 6), {"mode": "linear", "axes": [-1, -2]}, (0.5, 1.5), reference=False
    ),
    "policy_not_larger": Case(
        (1, 1, 4, 6),
        {"mode": "linear", "axes": [2, 3], "keep_aspect_ratio_policy": "not_larger"},
        sizes=(7, 7),
    ),
    "policy_not_smaller": Case(
        (1, 1, 4, 6),
        {"mode": "nearest", "axes": [2, 3], "keep_aspect_ratio_policy": "not_smaller"},
        sizes=(3, 2),
    ),
    "dynamic_input_dims": Case(
        (2, 3, 5, 4), {"mode": "linear"}, (1, 1, 1.5, 0.75), x_dims=("N", 3, "H", "W")
    ),
    "dynamic_input_sizes_cubic": Case(
        (2, 1, 5, 4), {"mode": "cubic"}, sizes=(2, 1, 3, 7), x_dims=("N", 1, "H", 4)
    ),
}


def _rung(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> np.ndarray:
    return InferenceSession(model, level="core").run(None, feeds)[0]


def _close(got: np.ndarray, want: np.ndarray, dtype: type) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_allclose(got.astype(np.int64), want.astype(np.int64), atol=1)


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c.reference))
def test_matches_onnx_reference(name: str) -> None:
    case = CASES[name]
    model, feeds = build(case)
    want = ReferenceEvaluator(model).run(None, feeds)[0]
    _close(_rung(model, feeds), want, case.dtype)


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c.ort))
def test_matches_onnxruntime(name: str) -> None:
    case = CASES[name]
    model, feeds = build(case)
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)[0]
    _close(_rung(model, feeds), want, case.dtype)


def test_same_model_runs_with_other_scales() -> None:
    """One lowering serves every run-time scale, output lengths included."""
    model, feeds = build(Case((1, 1, 4, 5), {"mode": "cubic"}, (1, 1, 1.0, 1.0)))
    session = InferenceSession(model, level="core")
    reference = ReferenceEvaluator(model)
    for scales in ((1, 1, 2.0, 0.5), (1, 1, 0.75, 3.0), (1, 1, 1.0, 1.0)):
        feeds["scales"] = np.array(scales, np.float32)
        got = session.run(None, feeds)[0]
        want = reference.run(None, feeds)[0]
        _close(got, want, np.float32)


def test_runtime_scales_give_dynamic_dims() -> None:
    from rung.dialects import context
    from rung.importers.onnx import import_model
    from rung.lowering.pipelines import default_registry

    model, _ = build(Case((1, 1, 4, 4), {"mode": "linear"}, (1, 1, 2.0, 2.0)))
    module = import_model(model)
    default_registry().build("lower-to-core").apply(context(), module)
    text = str(module)
    assert "onnx.Resize" not in text
    assert "core.iota" in text
    assert "tensor<?x?x?x?xf32>" in text
