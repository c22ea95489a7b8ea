"""Every ONNX node test model and light model imports, verifies and round-trips as text.

print → parse → print must give identical text, in the custom syntax and in
the generic one (with locations), so nothing the importer produces is lost
or changed by reading IR back.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from onnx_cases import light_models, node_cases

from rung.dialects import parse_module, print_module
from rung.importers.onnx import import_model


def assert_round_trips(module: object) -> None:
    text = print_module(module)  # type: ignore[arg-type]
    again = print_module(parse_module(text))
    assert again == text
    generic = print_module(module, generic=True, debuginfo=True)  # type: ignore[arg-type]
    reparsed = parse_module(generic)
    assert print_module(reparsed, generic=True, debuginfo=True) == generic
    assert print_module(reparsed) == text


@pytest.mark.parametrize("name", sorted(node_cases()))
def test_node_case_round_trips(name: str) -> None:
    case = node_cases()[name]
    module = import_model(case.model)  # type: ignore[attr-defined]
    module.verify()
    assert_round_trips(module)


@pytest.mark.parametrize("path", light_models(), ids=lambda p: p.stem)
def test_light_model_round_trips(path: Path) -> None:
    module = import_model(path)
    module.verify()
    assert_round_trips(module)


def test_all_node_cases_and_light_models_are_collected() -> None:
    # Guards against an onnx install that silently ships fewer cases.
    assert len(node_cases()) >= 1800
    assert len(light_models()) == 9
