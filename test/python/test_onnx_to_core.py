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

F8 = "float8 casts: ml_dtypes does not saturate or produce NaN the way ONNX specifies"
KNOWN_FAILURES = {
    "test_cast_FLOAT_to_FLOAT8E4M3FN": F8,
    "test_cast_FLOAT_to_FLOAT8E4M3FNUZ": F8,
    "test_cast_FLOAT_to_FLOAT8E5M2": F8,
    "test_cast_FLOAT_to_FLOAT8E5M2FNUZ": F8,
    "test_cast_FLOAT16_to_FLOAT8E4M3FN": F8,
    "test_cast_FLOAT16_to_FLOAT8E4M3FNUZ": F8,
    "test_cast_FLOAT16_to_FLOAT8E5M2": F8,
    "test_cast_FLOAT16_to_FLOAT8E5M2FNUZ": F8,
    "test_cast_e8m0_FLOAT_to_FLOAT8E8M0": F8,
    "test_cast_e8m0_FLOAT16_to_FLOAT8E8M0": F8,
    "test_castlike_FLOAT16_to_FLOAT8E4M3FN": F8,
    "test_castlike_FLOAT16_to_FLOAT8E4M3FNUZ": F8,
    "test_castlike_FLOAT16_to_FLOAT8E4M3FNUZ_expanded": F8,
    "test_castlike_FLOAT16_to_FLOAT8E4M3FN_expanded": F8,
    "test_castlike_FLOAT16_to_FLOAT8E5M2": F8,
    "test_castlike_FLOAT16_to_FLOAT8E5M2FNUZ": F8,
    "test_castlike_FLOAT16_to_FLOAT8E5M2FNUZ_expanded": F8,
    "test_castlike_FLOAT16_to_FLOAT8E5M2_expanded": F8,
    "test_castlike_FLOAT_to_FLOAT8E4M3FN": F8,
    "test_castlike_FLOAT_to_FLOAT8E4M3FNUZ": F8,
    "test_castlike_FLOAT_to_FLOAT8E4M3FNUZ_expanded": F8,
    "test_castlike_FLOAT_to_FLOAT8E4M3FN_expanded": F8,
    "test_castlike_FLOAT_to_FLOAT8E5M2": F8,
    "test_castlike_FLOAT_to_FLOAT8E5M2FNUZ": F8,
    "test_castlike_FLOAT_to_FLOAT8E5M2FNUZ_expanded": F8,
    "test_castlike_FLOAT_to_FLOAT8E5M2_expanded": F8,
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
