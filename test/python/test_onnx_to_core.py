"""ONNX → core lowerings checked numerically on ONNX's own node test cases.

Every node case whose ops all have a core lowering (a handler, or an ONNX
function body that lowers in their place) runs at level `core` (the
lowering, then the core interpreter) and must match the case's expected
outputs within the case's tolerances. Cases known to fail are listed with the
reason, as strict xfails, so a fix shows up as an unexpected pass.
"""

from __future__ import annotations

import functools

import onnx.defs
import pytest
from onnx_cases import node_cases

from rung.dialects.onnx import OPS_BY_TYPE, OPSET_VERSIONS
from rung.lowering.onnx_to_core.registry import TABLE

F8 = "float8e8m0 rounding (round_mode) is not implemented in the core interpreter"
UNRANKED = "elementwise op on unranked values of different types inside a Loop body"
RUNTIME_GRID_SIZE = (
    "AffineGrid's 3-D body picks a step by a run-time If whose branches differ in rank"
)
STRINGS = "string tensors have no core lowering"
RANDOM = "training-mode Dropout draws random masks"
RANDOM_UNIFORM = "Bernoulli draws random numbers (RandomUniformLike)"
MAXPOOL_INDICES = "MaxPool's Indices output is not lowered"
FFT_ROUNDING = (
    "the expected output holds float32 FFT rounding (1.9e-7 where the exact value is 0), "
    "beyond the case's atol of 1e-7; rung's exact 0 (like onnxruntime's) differs"
)
KNOWN_FAILURES = {
    "test_affine_grid_3d_align_corners": RUNTIME_GRID_SIZE,
    "test_affine_grid_3d_align_corners_expanded": RUNTIME_GRID_SIZE,
    "test_bernoulli": RANDOM_UNIFORM,
    "test_bernoulli_double": RANDOM_UNIFORM,
    "test_bernoulli_seed": RANDOM_UNIFORM,
    "test_cast_e8m0_FLOAT16_to_FLOAT8E8M0": F8,
    "test_cast_e8m0_FLOAT_to_FLOAT8E8M0": F8,
    "test_dft_inverse": FFT_ROUNDING,
    "test_dft_inverse_opset19": FFT_ROUNDING,
    "test_maxpool_with_argmax_2d_precomputed_pads": MAXPOOL_INDICES,
    "test_maxpool_with_argmax_2d_precomputed_strides": MAXPOOL_INDICES,
    "test_range_bfloat16_type_positive_delta_expanded": UNRANKED,
    "test_range_float16_type_positive_delta_expanded": UNRANKED,
    "test_range_float_type_positive_delta_expanded": UNRANKED,
    "test_range_int32_type_negative_delta_expanded": UNRANKED,
    "test_training_dropout": RANDOM,
    "test_training_dropout_default": RANDOM,
    "test_training_dropout_default_mask": RANDOM,
    "test_training_dropout_mask": RANDOM,
    "test_training_dropout_zero_ratio": RANDOM,
    "test_training_dropout_zero_ratio_mask": RANDOM,
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


@functools.cache
def lowerable(domain: str, op_type: str) -> bool:
    """The op has a handler, or ONNX defines it as a function (which then lowers)."""
    if domain not in ("", "ai.onnx", "ai.onnx.ml"):
        return False
    if OPS_BY_TYPE.get(("" if domain == "ai.onnx" else domain, op_type)) in TABLE:
        return True
    try:
        schema = onnx.defs.get_schema(op_type, OPSET_VERSIONS.get(domain, 28), domain)
    except onnx.defs.SchemaError:
        return False
    return bool(schema.has_function or schema.has_context_dependent_function)


def lowered_cases() -> list[str]:
    """Cases whose every op (in subgraphs too) has a core lowering or a function body."""
    names = []
    for name, case in node_cases().items():
        ops = graph_ops(case.model.graph)  # type: ignore[attr-defined]
        if ops and all(lowerable(d, t) for d, t in ops):
            names.append(name)
    return sorted(names)


def params() -> list[object]:
    out = []
    for name in lowered_cases():
        if name in KNOWN_FAILURES:
            out.append(
                pytest.param(
                    name, marks=pytest.mark.xfail(reason=KNOWN_FAILURES[name], strict=True)
                )
            )
        else:
            out.append(name)
    return out


def test_enough_cases_are_covered() -> None:
    assert len(lowered_cases()) >= 1500


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
        [helper.make_node("Add", ["a", "b"], ["y"])],
        "g",
        [
            helper.make_tensor_value_info("a", f, ["N", 1]),
            helper.make_tensor_value_info("b", f, [1, "M"]),
        ],
        [helper.make_tensor_value_info("y", f, ["N", "M"])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    x = np.arange(np.prod(a), dtype=np.float32).reshape(a)
    y = np.arange(np.prod(b), dtype=np.float32).reshape(b)
    (got,) = InferenceSession(model, level="core").run(None, {"a": x, "b": y})
    np.testing.assert_array_equal(got, x + y)
