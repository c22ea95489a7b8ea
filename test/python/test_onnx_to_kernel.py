"""The kernel level checked numerically on ONNX's own node test cases.

Every node case that passes at level `core` is lowered on to the kernel
dialect, turned into C, compiled by the system C compiler and run; it must
match the case's expected outputs within the case's tolerances. Cases known
to fail at the kernel level are listed with the reason, as strict xfails, so
a fix shows up as an unexpected pass.
"""

from __future__ import annotations

import functools

import pytest
from kernel_known_failures import KNOWN_FAILURES
from test_onnx_to_core import KNOWN_FAILURES as CORE_FAILURES
from test_onnx_to_core import conformance_cases, lowered_cases


@functools.cache
def kernel_cases() -> list[str]:
    """The cases that pass at level core (the kernel level starts from there)."""
    return [name for name in lowered_cases() if name not in CORE_FAILURES]


def params() -> list[object]:
    out = []
    for name in kernel_cases():
        if name in KNOWN_FAILURES:
            mark = pytest.mark.xfail(reason=KNOWN_FAILURES[name], strict=True)
            out.append(pytest.param(name, marks=mark))
        else:
            out.append(name)
    return out


def test_known_failures_are_real_cases() -> None:
    """A stale entry (a renamed or removed case) would hide nothing; keep the list exact."""
    stale = sorted(set(KNOWN_FAILURES) - set(kernel_cases()))
    assert not stale, f"not kernel-level cases: {stale}"


def test_enough_cases_run_natively() -> None:
    assert len(kernel_cases()) - len(KNOWN_FAILURES) >= 1600


@pytest.mark.parametrize("name", params())
def test_kernel_level_matches_expected_outputs(name: str) -> None:
    from rung.runtime.conformance import run_case

    result = run_case(conformance_cases()[name], "kernel")  # type: ignore[arg-type]
    assert result["status"] == "pass", f"{result.get('category')}: {result.get('message')}"
