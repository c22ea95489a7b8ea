"""ONNX → core lowerings checked numerically on ONNX's own node test cases.

Every node case whose ops all have a core lowering runs at level `core` (the
lowering, then the core interpreter) and must match the case's expected
outputs within the case's tolerances. Cases known to fail are listed with the
reason, as strict xfails, so a fix shows up as an unexpected pass.
"""

from __future__ import annotations

import functools

import pytest
from onnx_cases import node_cases

from rung.lowering.onnx_to_core.registry import HANDLERS

F8 = "float8e8m0 rounding (round_mode) is not implemented in the core interpreter"
RUNTIME_AXES = "reduction axes computed at run time on an unranked value (needs shape folding)"
RUNTIME_PADS = "Pad with pads computed at run time: core.pad takes static pads"
RUNTIME_RANGE = "Range with run-time bounds has a data-dependent shape"
UNRANKED_SPLIT = "Split of an unranked value"
RANDOM = "training-mode Dropout draws random masks"
DYNAMIC_SHAPE = "a shape that stays dynamic after inference (needs shape folding)"
UNRANKED = "elementwise op on unranked values of different types"
MAXPOOL_INDICES = "MaxPool's Indices output is not lowered"
RESIZE_INPUTS = "Resize with roi/scales/sizes given at run time (coordinates need run-time math)"
RUNTIME_SEQ_LENS = "LSTM with run-time sequence_lens (needs per-batch masking)"
KNOWN_FAILURES = {
    "test_affine_grid_2d_align_corners_expanded": DYNAMIC_SHAPE,
    "test_affine_grid_2d_expanded": DYNAMIC_SHAPE,
    "test_affine_grid_3d_align_corners_expanded": DYNAMIC_SHAPE,
    "test_affine_grid_3d_expanded": DYNAMIC_SHAPE,
    "test_blackmanwindow_expanded": RUNTIME_RANGE,
    "test_blackmanwindow_symmetric_expanded": RUNTIME_RANGE,
    "test_cast_e8m0_FLOAT16_to_FLOAT8E8M0": F8,
    "test_cast_e8m0_FLOAT_to_FLOAT8E8M0": F8,
    "test_center_crop_pad_crop_and_pad_expanded": RUNTIME_PADS,
    "test_center_crop_pad_crop_axes_chw_expanded": RUNTIME_PADS,
    "test_center_crop_pad_crop_axes_hwc_expanded": RUNTIME_PADS,
    "test_center_crop_pad_crop_expanded": RUNTIME_PADS,
    "test_center_crop_pad_crop_negative_axes_hwc_expanded": RUNTIME_PADS,
    "test_center_crop_pad_pad_expanded": RUNTIME_PADS,
    "test_constant_pad": RUNTIME_PADS,
    "test_constant_pad_axes": RUNTIME_PADS,
    "test_constant_pad_negative_axes": RUNTIME_PADS,
    "test_edge_pad": RUNTIME_PADS,
    "test_hammingwindow_expanded": RUNTIME_RANGE,
    "test_hammingwindow_symmetric_expanded": RUNTIME_RANGE,
    "test_hannwindow_expanded": RUNTIME_RANGE,
    "test_hannwindow_symmetric_expanded": RUNTIME_RANGE,
    "test_linear_attention_decode_step_expanded": UNRANKED,
    "test_linear_attention_delta_expanded": UNRANKED,
    "test_linear_attention_explicit_scale_expanded": UNRANKED,
    "test_linear_attention_fp16_expanded": UNRANKED,
    "test_linear_attention_gated_delta_beta_scalar_expanded": UNRANKED,
    "test_linear_attention_gated_delta_expanded": UNRANKED,
    "test_linear_attention_gated_delta_gqa_expanded": UNRANKED,
    "test_linear_attention_gated_delta_mqa_expanded": UNRANKED,
    "test_linear_attention_gated_expanded": UNRANKED,
    "test_linear_attention_gated_per_head_decay_expanded": UNRANKED,
    "test_linear_attention_linear_expanded": UNRANKED,
    "test_linear_attention_linear_t1_no_past_expanded": UNRANKED,
    "test_linear_attention_no_past_explicit_zeros_expanded": UNRANKED,
    "test_linear_attention_prefill_with_past_expanded": UNRANKED,
    "test_loop11": DYNAMIC_SHAPE,
    "test_lstm_with_peepholes": RUNTIME_SEQ_LENS,
    "test_maxpool_with_argmax_2d_precomputed_pads": MAXPOOL_INDICES,
    "test_maxpool_with_argmax_2d_precomputed_strides": MAXPOOL_INDICES,
    "test_range_bfloat16_type_positive_delta": RUNTIME_RANGE,
    "test_range_bfloat16_type_positive_delta_expanded": UNRANKED,
    "test_range_float16_type_positive_delta": RUNTIME_RANGE,
    "test_range_float16_type_positive_delta_expanded": UNRANKED,
    "test_range_float_type_positive_delta": RUNTIME_RANGE,
    "test_range_float_type_positive_delta_expanded": UNRANKED,
    "test_range_int32_type_negative_delta": RUNTIME_RANGE,
    "test_range_int32_type_negative_delta_expanded": UNRANKED,
    "test_reduce_l2_do_not_keepdims_example_expanded": RUNTIME_AXES,
    "test_reduce_l2_do_not_keepdims_random_expanded": RUNTIME_AXES,
    "test_reduce_l2_empty_set_expanded": RUNTIME_AXES,
    "test_reduce_l2_keep_dims_example_expanded": RUNTIME_AXES,
    "test_reduce_l2_keep_dims_random_expanded": RUNTIME_AXES,
    "test_reduce_l2_negative_axes_keep_dims_example_expanded": RUNTIME_AXES,
    "test_reduce_l2_negative_axes_keep_dims_random_expanded": RUNTIME_AXES,
    "test_reduce_log_sum_asc_axes_expanded": RUNTIME_AXES,
    "test_reduce_log_sum_desc_axes_expanded": RUNTIME_AXES,
    "test_reduce_log_sum_empty_set_expanded": RUNTIME_AXES,
    "test_reduce_log_sum_exp_do_not_keepdims_example_expanded": RUNTIME_AXES,
    "test_reduce_log_sum_exp_do_not_keepdims_random_expanded": RUNTIME_AXES,
    "test_reduce_log_sum_exp_empty_set_expanded": RUNTIME_AXES,
    "test_reduce_log_sum_exp_keepdims_example_expanded": RUNTIME_AXES,
    "test_reduce_log_sum_exp_keepdims_random_expanded": RUNTIME_AXES,
    "test_reduce_log_sum_exp_negative_axes_keepdims_example_expanded": RUNTIME_AXES,
    "test_reduce_log_sum_exp_negative_axes_keepdims_random_expanded": RUNTIME_AXES,
    "test_reduce_log_sum_negative_axes_expanded": RUNTIME_AXES,
    "test_reflect_pad": RUNTIME_PADS,
    "test_resize_downsample_scales_cubic": RESIZE_INPUTS,
    "test_resize_downsample_scales_cubic_A_n0p5_exclude_outside": RESIZE_INPUTS,
    "test_resize_downsample_scales_cubic_align_corners": RESIZE_INPUTS,
    "test_resize_downsample_scales_cubic_antialias": RESIZE_INPUTS,
    "test_resize_downsample_scales_linear": RESIZE_INPUTS,
    "test_resize_downsample_scales_linear_align_corners": RESIZE_INPUTS,
    "test_resize_downsample_scales_linear_antialias": RESIZE_INPUTS,
    "test_resize_downsample_scales_linear_half_pixel_symmetric": RESIZE_INPUTS,
    "test_resize_downsample_scales_nearest": RESIZE_INPUTS,
    "test_resize_downsample_sizes_nearest_not_larger": RESIZE_INPUTS,
    "test_resize_downsample_sizes_nearest_not_smaller": RESIZE_INPUTS,
    "test_resize_tf_crop_and_resize": RESIZE_INPUTS,
    "test_resize_tf_crop_and_resize_axes_2_3": RESIZE_INPUTS,
    "test_resize_tf_crop_and_resize_axes_3_2": RESIZE_INPUTS,
    "test_resize_tf_crop_and_resize_extrapolation_value": RESIZE_INPUTS,
    "test_resize_upsample_scales_cubic": RESIZE_INPUTS,
    "test_resize_upsample_scales_cubic_A_n0p5_exclude_outside": RESIZE_INPUTS,
    "test_resize_upsample_scales_cubic_align_corners": RESIZE_INPUTS,
    "test_resize_upsample_scales_cubic_asymmetric": RESIZE_INPUTS,
    "test_resize_upsample_scales_linear": RESIZE_INPUTS,
    "test_resize_upsample_scales_linear_align_corners": RESIZE_INPUTS,
    "test_resize_upsample_scales_linear_half_pixel_symmetric": RESIZE_INPUTS,
    "test_resize_upsample_scales_nearest": RESIZE_INPUTS,
    "test_resize_upsample_scales_nearest_axes_2_3": RESIZE_INPUTS,
    "test_resize_upsample_scales_nearest_axes_3_2": RESIZE_INPUTS,
    "test_resize_upsample_sizes_nearest_not_larger": RESIZE_INPUTS,
    "test_resize_upsample_sizes_nearest_not_smaller": RESIZE_INPUTS,
    "test_rms_normalization_2d_axis0_expanded": RUNTIME_AXES,
    "test_rms_normalization_2d_axis1_expanded": RUNTIME_AXES,
    "test_rms_normalization_2d_axis_negative_1_expanded": RUNTIME_AXES,
    "test_rms_normalization_2d_axis_negative_2_expanded": RUNTIME_AXES,
    "test_rms_normalization_3d_axis0_epsilon_expanded": RUNTIME_AXES,
    "test_rms_normalization_3d_axis1_epsilon_expanded": RUNTIME_AXES,
    "test_rms_normalization_3d_axis2_epsilon_expanded": RUNTIME_AXES,
    "test_rms_normalization_3d_axis_negative_1_epsilon_expanded": RUNTIME_AXES,
    "test_rms_normalization_3d_axis_negative_2_epsilon_expanded": RUNTIME_AXES,
    "test_rms_normalization_3d_axis_negative_3_epsilon_expanded": RUNTIME_AXES,
    "test_rms_normalization_4d_axis0_expanded": RUNTIME_AXES,
    "test_rms_normalization_4d_axis1_expanded": RUNTIME_AXES,
    "test_rms_normalization_4d_axis2_expanded": RUNTIME_AXES,
    "test_rms_normalization_4d_axis3_expanded": RUNTIME_AXES,
    "test_rms_normalization_4d_axis_negative_1_expanded": RUNTIME_AXES,
    "test_rms_normalization_4d_axis_negative_2_expanded": RUNTIME_AXES,
    "test_rms_normalization_4d_axis_negative_3_expanded": RUNTIME_AXES,
    "test_rms_normalization_4d_axis_negative_4_expanded": RUNTIME_AXES,
    "test_rms_normalization_default_axis_expanded": RUNTIME_AXES,
    "test_rotary_embedding_expanded": UNRANKED_SPLIT,
    "test_rotary_embedding_interleaved_expanded": UNRANKED_SPLIT,
    "test_rotary_embedding_no_position_ids_expanded": UNRANKED_SPLIT,
    "test_rotary_embedding_no_position_ids_interleaved_expanded": UNRANKED_SPLIT,
    "test_rotary_embedding_no_position_ids_rotary_dim_expanded": UNRANKED_SPLIT,
    "test_rotary_embedding_with_interleaved_rotary_dim_expanded": UNRANKED_SPLIT,
    "test_rotary_embedding_with_rotary_dim_expanded": UNRANKED_SPLIT,
    "test_training_dropout": RANDOM,
    "test_training_dropout_default": RANDOM,
    "test_training_dropout_default_mask": RANDOM,
    "test_training_dropout_mask": RANDOM,
    "test_training_dropout_zero_ratio": RANDOM,
    "test_training_dropout_zero_ratio_mask": RANDOM,
    "test_wrap_pad": RUNTIME_PADS,
}


def graph_ops(graph: object) -> set[tuple[str, str]]:
    """(domain, op_type) of every node, subgraphs included."""
    found = set()
    for node in graph.node:  # type: ignore[attr-defined]
        found.add((node.domain, node.op_type))
        for attr in node.attribute:
            if attr.type == attr.GRAPH:
                found |= graph_ops(attr.g)
    return found


def lowered_cases() -> list[str]:
    """Cases whose every op (in subgraphs too) has a core lowering."""
    names = []
    for name, case in node_cases().items():
        ops = graph_ops(case.model.graph)  # type: ignore[attr-defined]
        dialect = {
            ("onnx.ml." if d == "ai.onnx.ml" else "onnx.") + t
            for d, t in ops
            if d in ("", "ai.onnx", "ai.onnx.ml")
        }
        if ops and len(dialect) == len(ops) and dialect <= set(HANDLERS):
            names.append(name)
    return sorted(names)


def params() -> list[object]:
    out = []
    for name in lowered_cases():
        if name in KNOWN_FAILURES:
            out.append(pytest.param(name, marks=pytest.mark.xfail(
                reason=KNOWN_FAILURES[name], strict=True)))
        else:
            out.append(name)
    return out


def test_enough_cases_are_covered() -> None:
    assert len(lowered_cases()) >= 150


@functools.cache
def conformance_cases() -> dict[str, object]:
    from rung.runtime.conformance import collect_cases

    return {c.name: c for c in collect_cases()}


@pytest.mark.parametrize("name", params())
def test_core_level_matches_expected_outputs(name: str) -> None:
    # The scoreboard's own check: the case's tolerances, dtypes and shapes.
    from rung.runtime.conformance import run_case

    result = run_case(conformance_cases()[name], "core")  # type: ignore[arg-type]
    assert result["status"] == "pass", f"{result.get('category')}: {result.get('message')}"


@pytest.mark.parametrize(("a", "b"), [((3, 1), (1, 4)), ((0, 1), (1, 4)), ((2, 1), (1, 0))])
def test_runtime_broadcast_of_two_dynamic_operands(a: tuple, b: tuple) -> None:
    """Neither operand has the result's shape: it is computed at run time (0-sized dims too)."""
    import numpy as np
    from onnx import TensorProto, helper

    from rung.runtime import InferenceSession

    f = TensorProto.FLOAT
    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["y"])], "g",
        [helper.make_tensor_value_info("a", f, ["N", 1]),
         helper.make_tensor_value_info("b", f, [1, "M"])],
        [helper.make_tensor_value_info("y", f, ["N", "M"])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    x = np.arange(np.prod(a), dtype=np.float32).reshape(a)
    y = np.arange(np.prod(b), dtype=np.float32).reshape(b)
    (got,) = InferenceSession(model, level="core").run(None, {"a": x, "b": y})
    np.testing.assert_array_equal(got, x + y)
