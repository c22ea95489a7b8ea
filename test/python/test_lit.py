"""Runs the lit/FileCheck suite (test/lit) as part of pytest, one pytest item per lit test.

lit runs once per session, in parallel, writing an xUnit report; each
parametrized item then reports its own lit test, with lit's output on failure.
So `pytest` alone runs every test in the repository.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

LIT_DIR = Path(__file__).resolve().parent.parent / "lit"
SUFFIXES = (".mlir", ".onnxtxt")


def lit_tests() -> list[str]:
    found = []
    for path in sorted(LIT_DIR.rglob("*")):
        rel = path.relative_to(LIT_DIR)
        if path.suffix in SUFFIXES and not {"Inputs", "Output"} & set(rel.parts):
            found.append(rel.as_posix())
    return found


@functools.cache
def lit_results(report_dir: str) -> dict[str, tuple[str, str]]:
    """Run lit once; map each test's path (relative to test/lit) to (status, output)."""
    report = Path(report_dir) / "lit.xml"
    bin_dir = os.path.dirname(sys.executable)
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
    launcher = "import sys; from lit.main import main; sys.argv[0] = 'lit'; main()"
    cmd = [sys.executable, "-c", launcher, str(LIT_DIR), "-q", f"--xunit-xml-output={report}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if not report.exists():
        raise RuntimeError(f"lit did not run:\n{proc.stdout}\n{proc.stderr}")
    results: dict[str, tuple[str, str]] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        # lit names a case '<suite>.<path with dots>' in classname + name; name holds the file.
        name = case.get("name", "")
        classname = case.get("classname", "")
        folder = classname.split(".", 1)[1].replace(".", "/") if "." in classname else ""
        key = f"{folder}/{name}" if folder else name
        failure = case.find("failure")
        skipped = case.find("skipped")
        if failure is not None:
            results[key] = ("fail", failure.text or "")
        elif skipped is not None:
            results[key] = ("skip", skipped.get("message", ""))
        else:
            results[key] = ("pass", "")
    return results


@pytest.fixture(scope="session")
def lit_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, str]]:
    return lit_results(str(tmp_path_factory.mktemp("lit")))


@pytest.mark.xdist_group("lit")
@pytest.mark.parametrize("test", lit_tests())
def test_lit(test: str, lit_report: dict[str, tuple[str, str]]) -> None:
    status, output = lit_report.get(test, ("missing", "lit did not report this test"))
    if status == "skip":
        pytest.fail(f"lit skipped {test}: {output}")
    assert status == "pass", f"lit test {test} failed:\n{output}"


def test_lit_suite_is_not_empty() -> None:
    assert len(lit_tests()) >= 40
