"""Replay a reproducer folder, and shrink one to a smaller input that fails the same way.

A reproducer is what `campaign.save_reproducer` wrote: `case.json` and the
input files (for `run`: the seed's `model.onnx`, `feeds.npz` and the feed edits
in case.json). Replay copies it into a temporary folder (a compile writes its
output there) and reports the outcome; `in_process` runs the entry point in
this process instead, so that a traceback or a debugger shows the failure
directly.

Minimizing is delta debugging on the input (lines of MLIR text, bytes of
anything else) or on the list of feed edits, keeping a smaller candidate
whenever it still ends with the same signature (outcome kind, exception type
and site).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import TracebackType

from . import campaign, sandbox, targets
from .campaign import Case


def load_case(path: Path) -> tuple[Case, dict[str, object]]:
    """The case of a reproducer folder (or of its case.json), and its recorded outcome."""
    folder = path if path.is_dir() else path.parent
    record = json.loads((folder / "case.json").read_text())
    outcome = record.pop("outcome", {})
    record.pop("replay", None)
    names = [n.name for n in folder.iterdir() if n.name != "case.json"]
    files = {n: (folder / n).read_bytes() for n in names if (folder / n).is_file()}
    return Case(files=files, **record), outcome


class Replayer:
    """Runs cases of one reproducer again: warm imports, a compile cache, the `run` session."""

    def __init__(self, case: Case, timeout: float | None = None, in_process: bool = False) -> None:
        self.limits = sandbox.Limits(timeout=timeout or campaign.TIMEOUT[case.entry])
        self.in_process = in_process
        self.work = Path(tempfile.mkdtemp(prefix="rung-fuzz-replay-"))
        self.saved = os.environ.get("RUNG_CACHE_DIR")
        os.environ["RUNG_CACHE_DIR"] = str(self.work / "cc")
        self.session: object = None
        self.failed: sandbox.Outcome | None = None
        targets.warm_up()
        if case.entry == "run":
            folder = self.work / "seed"
            campaign.write_case(case, folder)
            model, feeds = folder / "model.onnx", folder / "feeds.npz"
            if in_process:
                self.session = campaign._build_session(model, feeds)
            else:
                self.session, outcome = campaign.prepare_session(model, feeds, self.limits)
                if self.session is None:
                    self.failed = outcome

    def run(self, case: Case) -> sandbox.Outcome:
        if self.failed is not None:  # the seed itself fails: that is the outcome
            return self.failed
        folder = self.work / "case"
        campaign.write_case(case, folder)
        target = campaign.make_target(case, folder, self.session)
        if self.in_process:
            return sandbox.classify(target, lambda: "")
        return sandbox.run_one(target, self.limits)

    def __enter__(self) -> Replayer:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.saved is None:
            os.environ.pop("RUNG_CACHE_DIR", None)
        else:
            os.environ["RUNG_CACHE_DIR"] = self.saved
        shutil.rmtree(self.work, ignore_errors=True)


def replay(
    path: Path, *, in_process: bool = False, timeout: float | None = None
) -> sandbox.Outcome:
    """Run the reproducer at `path` (its folder or case.json) again; its outcome now."""
    case, _ = load_case(path)
    with Replayer(case, timeout, in_process) as replayer:
        return replayer.run(case)


# ---- minimizing ---------------------------------------------------------------------


def _same(outcome: sandbox.Outcome, want: str) -> bool:
    return not outcome.ok and outcome.signature() == want


def _ddmin(
    units: list[bytes], fails: Callable[[list[bytes]], bool], deadline: float
) -> list[bytes]:
    """The classic delta debugging loop: drop chunks while the failure stays."""
    chunks = 2
    while len(units) >= 2 and time.monotonic() < deadline:
        size = max(len(units) // chunks, 1)
        for start in range(0, len(units), size):
            candidate = units[:start] + units[start + size :]
            if time.monotonic() >= deadline:
                return units
            if candidate and fails(candidate):
                units = candidate
                chunks = max(chunks - 1, 2)
                break
        else:
            if size == 1:
                return units
            chunks = min(chunks * 2, len(units))
    return units


def minimize(path: Path, budget: float = 120.0, log: Callable[[str], None] = print) -> Path:
    """A smaller reproducer with the same signature, written beside `path` as `<name>-min`."""
    folder = path if path.is_dir() else path.parent
    case, _ = load_case(folder)
    deadline = time.monotonic() + budget
    tries = 0
    with Replayer(case) as replayer:
        first = replayer.run(case)
        want = first.signature()
        if first.ok:
            raise SystemExit(f"{folder}: the case no longer fails ({first.message})")

        def fails(candidate: Case) -> bool:
            nonlocal tries
            tries += 1
            return _same(replayer.run(candidate), want)

        if case.entry == "run" and case.feed_ops:
            ops = case.feed_ops
            for op in list(ops):
                smaller = [o for o in ops if o is not op]
                if time.monotonic() < deadline and fails(replace(case, feed_ops=smaller)):
                    ops = smaller
            case = replace(case, feed_ops=ops)
        elif case.input:
            data = case.files[case.input]
            if case.input.endswith(".mlir"):
                units = re.split(rb"(?<=\n)", data)
            else:
                units = [data[i : i + 1] for i in range(len(data))]

            def with_input(parts: list[bytes]) -> Case:
                return replace(case, files={**case.files, case.input: b"".join(parts)})

            units = _ddmin(units, lambda parts: fails(with_input(parts)), deadline)
            case = with_input(units)
        final = replayer.run(case)
    target = folder.with_name(folder.name + "-min")
    case = replace(case, notes=[*case.notes, f"minimized in {tries} tries"])
    source = Path(tempfile.mkdtemp(prefix="rung-fuzz-min-"))
    try:
        campaign.write_case(case, source)
        campaign.save_reproducer(case, final, source, {}, target)
    finally:
        shutil.rmtree(source, ignore_errors=True)
    size = sum(len(v) for v in case.files.values())
    log(f"{target}: {size} bytes after {tries} tries, outcome {final.signature()}")
    return target
