"""Runs the lit/FileCheck suite (test/lit) as part of pytest, one pytest item per lit test.

lit runs once per pytest run, in parallel, writing an xUnit report; each
parametrized item then reports its own lit test, with lit's output on failure.
So `pytest` alone runs every test in the repository. Under pytest-xdist the
workers share one lit run through a file lock: two lit runs over the same
tree would delete each other's `Output/` files.
"""

from __future__ import annotations

import fcntl
import json
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
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # shared by all workers of this run
    cache = root / "lit-results.json"
    with open(root / "lit.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not cache.exists():
            lit_dir = root / "lit-run"
            lit_dir.mkdir(exist_ok=True)
            cache.write_text(json.dumps(lit_results(str(lit_dir))))
    return {k: tuple(v) for k, v in json.loads(cache.read_text()).items()}


@pytest.mark.parametrize("test", lit_tests())
def test_lit(test: str, lit_report: dict[str, tuple[str, str]]) -> None:
    status, output = lit_report.get(test, ("missing", "lit did not report this test"))
    if status == "skip":
        pytest.fail(f"lit skipped {test}: {output}")
    assert status == "pass", f"lit test {test} failed:\n{output}"


def test_lit_suite_is_not_empty() -> None:
    assert len(lit_tests()) >= 40
