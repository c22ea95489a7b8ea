"""The generated onnx dialect matches the installed ONNX schemas and covers them."""

from __future__ import annotations

import onnx.defs

from rung.dialects.onnx import OPS_BY_TYPE, OPSET_VERSIONS
from rung.dialects.onnx.base import Arity
from rung.tools import gen_onnx_dialect


def test_generated_file_is_in_sync_with_installed_onnx() -> None:
    expected = gen_onnx_dialect.render()
    current = gen_onnx_dialect.OUTPUT.read_text()
    assert current == expected, (
        "dialects/onnx/generated_ops.py is stale: run python -m rung.tools.gen_onnx_dialect"
    )


def test_every_ai_onnx_and_ml_op_has_a_class_at_its_latest_version() -> None:
    latest: dict[tuple[str, str], int] = {}
    for schema in onnx.defs.get_all_schemas_with_history():
        if schema.domain in ("", "ai.onnx.ml"):
            key = (schema.domain, schema.name)
            latest[key] = max(latest.get(key, 0), schema.since_version)
    assert set(OPS_BY_TYPE) == set(latest)
    for key, version in latest.items():
        assert OPS_BY_TYPE[key].SCHEMA.version == version, key
    assert OPSET_VERSIONS[""] == onnx.defs.onnx_opset_version()


def test_schema_tables_mirror_onnx() -> None:
    lstm = OPS_BY_TYPE[("", "LSTM")].SCHEMA
    schema = onnx.defs.get_schema("LSTM", lstm.version)
    assert [p.name for p in lstm.inputs] == [p.name for p in schema.inputs]
    assert [p.arity for p in lstm.inputs][3:] == [Arity.OPTIONAL] * 5
    assert lstm.attribute("direction").default == "forward"  # type: ignore[union-attr]
    assert set(lstm.type_constraints["T"]) == set(
        next(c for c in schema.type_constraints if c.type_param_str == "T").allowed_type_strs
    )
    concat = OPS_BY_TYPE[("", "Concat")].SCHEMA
    assert concat.inputs[0].arity is Arity.VARIADIC
    assert concat.attribute("axis").required  # type: ignore[union-attr]
    assert OPS_BY_TYPE[("", "If")].SCHEMA.regions == ("then_branch", "else_branch")


def test_ops_carry_their_onnx_doc_summary() -> None:
    doc = OPS_BY_TYPE[("", "Relu")].__doc__ or ""
    assert "Relu" in doc and "ai.onnx Relu-" in doc


def test_check_mode_reports_a_stale_file(tmp_path) -> None:
    stale = tmp_path / "ops.py"
    stale.write_text("# old\n")
    assert gen_onnx_dialect.main(["--check", "-o", str(stale)]) == 1
    assert gen_onnx_dialect.main(["-o", str(stale)]) == 0
    assert gen_onnx_dialect.main(["--check", "-o", str(stale)]) == 0
