"""A fuzz campaign: draw cases per entry point, run each in a forked child, keep reproducers.

Cases are drawn in batches with Hypothesis from a fixed seed, so the same
seed and case counts give the same inputs (a budget only cuts the list
short). The seed models are taken in a shuffled round-robin, so every seed
gets its turn. Each case is written into a work folder, run in a forked child
(`sandbox.run_all`), and, if its outcome is not ok, kept as a reproducer
folder: the input files, `case.json` (entry point, flags, mutations, outcome)
and the command that replays it.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import random
import re
import shlex
import shutil
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.errors import HypothesisException

from . import mutate, sandbox, seeds, targets
from .sandbox import OUTCOMES, Limits, Outcome, Target

RUN_SCRIPT = "test/fuzz/run.py"
WEIGHTS = bytes(range(256)) * 4
"""`weights.bin` beside every ONNX input, so external-data edits can hit a real file."""
ENTRY_WEIGHT = {"import": 2.0, "opt": 2.5, "compile": 2.5, "run": 3.0}
"""Shares of a time budget split between entry points."""
TIMEOUT = {"import": 20.0, "opt": 30.0, "compile": 60.0, "run": 20.0}
BATCH = 40


@dataclass
class Case:
    """One fuzz input: which entry point, from which seed, with which edits."""

    entry: str
    index: int
    seed: str
    notes: list[str]
    files: dict[str, bytes] = field(default_factory=dict)
    """Written into the case folder; `input` names the one the entry point reads."""
    input: str = ""
    flags: list[str] = field(default_factory=list)
    feed_ops: list[dict[str, Any]] | None = None
    """For `run`: the edits of the seed's feeds (see `mutate.apply_feed_ops`)."""

    def description(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("files")
        return data


@dataclass
class Plan:
    """What a campaign runs: entry points, how many cases each (or a time budget), how."""

    entries: list[str]
    counts: dict[str, int | None]
    budget: float | None
    out: Path
    seed: int = 0
    jobs: int = 1
    run_seeds: int = 12
    """Seed models compiled for `run` (each once, then fed many mutated feeds)."""
    keep: int = 5
    """Reproducers kept per distinct finding (the smallest inputs win)."""
    timeouts: dict[str, float] = field(default_factory=lambda: dict(TIMEOUT))
    memory: int = 4 << 30


# ---- findings -----------------------------------------------------------------------


@dataclass
class Group:
    """The outcomes that share a signature: one distinct finding."""

    signature: str
    entry: str
    kind: str
    exc_type: str
    site: str
    message: str
    count: int = 0
    reproducers: list[tuple[int, str]] = field(default_factory=list)
    """(input size, folder), smallest first."""


class Findings:
    """Counts per entry point and outcome, and the non-ok outcomes grouped by signature."""

    def __init__(self, out: Path, keep: int) -> None:
        self.out = out
        self.keep = keep
        self.counts: dict[str, Counter[str]] = {}
        self.results: Counter[str] = Counter()
        """Per entry point, the ok cases that produced a result (the rest: a clean error)."""
        self.groups: dict[str, Group] = {}
        self.ok_messages: dict[str, Counter[str]] = defaultdict(Counter)
        """The clean errors by their text less numbers and paths: how far inputs got."""

    def record(self, case: Case, outcome: Outcome, folder: Path, extra: dict[str, Path]) -> None:
        self.counts.setdefault(case.entry, Counter())[outcome.kind] += 1
        if outcome.ok:
            self.results[case.entry] += outcome.message in ("returned", "exit 0")
            self.ok_messages[case.entry][_message_shape(outcome.message)] += 1
            return
        signature = f"{case.entry} | {outcome.signature()}"
        group = self.groups.get(signature)
        if group is None:
            group = Group(
                signature,
                case.entry,
                outcome.kind,
                outcome.exc_type,
                outcome.site,
                outcome.message,
            )
            self.groups[signature] = group
        group.count += 1
        size = sum(len(v) for v in case.files.values()) + len(json.dumps(case.feed_ops))
        if len(group.reproducers) >= self.keep:
            if size >= group.reproducers[-1][0]:
                return
            _, dropped = group.reproducers.pop()
            shutil.rmtree(dropped, ignore_errors=True)
        target = self.out / "repro" / f"{case.entry}-{outcome.kind}-{case.index:05d}"
        save_reproducer(case, outcome, folder, extra, target)
        group.reproducers.append((size, str(target)))
        group.reproducers.sort()

    def bad(self) -> int:
        return sum(g.count for g in self.groups.values())


def _message_shape(message: str) -> str:
    text = re.sub(r"'[^']*/", "'", message)
    return re.sub(r"\d+", "N", text)[:120]


def replay_command(folder: Path) -> str:
    return f"python {RUN_SCRIPT} --replay {shlex.quote(str(folder))}"


def save_reproducer(
    case: Case, outcome: Outcome, folder: Path, extra: dict[str, Path], target: Path
) -> None:
    """Input files, extra files (a `run` seed's model and feeds) and case.json into `target`."""
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for name in case.files:
        shutil.copyfile(folder / name, target / name)
    for name, source in extra.items():
        shutil.copyfile(source, target / name)
    record = case.description()
    record["outcome"] = outcome.to_json()
    record["replay"] = replay_command(target)
    (target / "case.json").write_text(json.dumps(record, indent=1))


# ---- drawing cases ------------------------------------------------------------------


def _batch_seed(seed: int, entry: str, batch: int) -> int:
    digest = hashlib.sha256(f"{seed}/{entry}/{batch}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


def draw_batch(
    make: Callable[[st.DataObject, int], Case | None], first: int, count: int, seed: int
) -> list[Case]:
    """`count` cases from Hypothesis with a fixed seed (the same seed, the same cases)."""
    cases: list[Case] = []
    set_hypothesis_home_dir(seeds.cache_root() / "hypothesis")  # not .hypothesis in the cwd

    @settings(
        database=None,
        max_examples=count,
        phases=[Phase.generate],
        deadline=None,
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        derandomize=False,
    )
    @hypothesis_seed(seed)
    @given(st.data())
    def draw(data: st.DataObject) -> None:
        if len(cases) >= count:
            return
        try:
            case = make(data, first + len(cases))
        except HypothesisException:
            raise
        except Exception:  # noqa: BLE001 - an edit the protobuf API refused: draw another
            return
        if case is not None:
            cases.append(case)

    draw()
    return cases


class Drawer:
    """Makes the cases of each entry point from the corpus."""

    def __init__(self, corpus: seeds.Corpus, seed: int) -> None:
        self.corpus = corpus
        self.seed = seed
        rng = random.Random(seed)
        self.onnx = list(corpus.onnx)
        rng.shuffle(self.onnx)
        self.mlir = list(corpus.mlir)
        rng.shuffle(self.mlir)
        self.sessions: dict[str, Any] = {}
        self.session_order: list[str] = []
        self.rotation = 0
        """Added to each drawn seed index; set per batch, so batches start on different seeds."""

    def pick_seed(self, data: st.DataObject, names: list[Any]) -> Any:
        """A seed drawn by Hypothesis (a draw, so the batch stays reproducible from its seed)."""
        drawn = data.draw(st.integers(0, len(names) - 1))
        return names[(drawn + self.rotation) % len(names)]

    def _other_onnx(self, data: st.DataObject) -> Callable[[], bytes]:
        return lambda: self.corpus.onnx_bytes(mutate._pick(data, self.onnx))

    def _other_mlir(self, data: st.DataObject) -> Callable[[], str]:
        return lambda: self.corpus.mlir_text(*mutate._pick(data, self.mlir))

    def onnx_input(self, data: st.DataObject, name: str, modes: list[str]) -> tuple[bytes, list]:
        blob = self.corpus.onnx_bytes(name)
        mode = mutate._pick(data, modes)
        notes: list[str] = []
        if mode in ("model", "both"):
            model = onnx.ModelProto()
            model.ParseFromString(blob)
            notes += mutate.mutate_model(data, model)
            blob = mutate.finish_model(model)
        if mode in ("bytes", "both"):
            blob, more = mutate.mutate_bytes(data, blob, self._other_onnx(data))
            notes += more
        return blob, notes

    def make_import(self, data: st.DataObject, index: int) -> Case:
        name = self.pick_seed(data, self.onnx)
        blob, notes = self.onnx_input(data, name, ["model", "model", "bytes", "model", "both"])
        files = {"input.onnx": blob, "weights.bin": WEIGHTS}
        return Case("import", index, name, notes, files, "input.onnx")

    def mlir_input(self, data: st.DataObject) -> tuple[str, bytes, list, list]:
        name, dialect = self.pick_seed(data, self.mlir)
        text = self.corpus.mlir_text(name, dialect)
        blob, notes = mutate.mutate_mlir(data, text, self._other_mlir(data))
        flags = {
            "onnx": [[], ["--lower-to-core"], ["--lower-to-kernel"]],
            "core": [[], ["--lower-to-kernel"]],
            "kernel": [[], ["-t", "c"]],
        }[dialect]
        return f"{name}.{dialect}", blob, notes, mutate._pick(data, flags)

    def make_opt(self, data: st.DataObject, index: int) -> Case:
        seed, blob, notes, flags = self.mlir_input(data)
        return Case("opt", index, seed, notes, {"input.mlir": blob}, "input.mlir", flags)

    def make_compile(self, data: st.DataObject, index: int) -> Case:
        flags: list[str] = []
        chance = data.draw(st.randoms(use_true_random=False)).random
        if chance() < 0.1:
            flags.append("--emit-only")
        if chance() < 0.1:
            prefix = mutate._pick(data, ["model", "a-b", "int", "main", "x" * 200, "_", "é"])
            flags += ["--prefix", prefix]
        if chance() < 0.2:
            seed, blob, notes, _ = self.mlir_input(data)
            return Case("compile", index, seed, notes, {"input.mlir": blob}, "input.mlir", flags)
        name = self.pick_seed(data, self.onnx)
        modes = ["model", "model", "model", "model", "model", "both", "bytes"]
        blob, notes = self.onnx_input(data, name, modes)
        files = {"input.onnx": blob, "weights.bin": WEIGHTS}
        return Case("compile", index, name, notes, files, "input.onnx", flags)

    def make_run(self, data: st.DataObject, index: int) -> Case | None:
        if not self.session_order:
            return None
        name = self.pick_seed(data, self.session_order)
        ops = mutate.mutate_feeds(data, self.corpus.feeds(name))
        return Case("run", index, name, [f"feeds: {op}" for op in ops], feed_ops=ops)


# ---- running ------------------------------------------------------------------------


def make_target(case: Case, folder: Path, session: object = None) -> Target:
    """The child's work for `case`, whose files are in `folder`."""
    path = folder / case.input
    if case.entry == "import":
        return lambda: targets.rung_import(path)
    if case.entry == "opt":
        return lambda: targets.rung_opt(path, case.flags)
    if case.entry == "compile":
        return lambda: targets.rung_compile(path, folder / "out", case.flags)
    if case.entry == "run":
        assert case.feed_ops is not None
        with np.load(folder / "feeds.npz", allow_pickle=False) as data:
            base = {k: data[k] for k in data.files}
        feeds = mutate.apply_feed_ops(base, case.feed_ops)
        return lambda: targets.session_run(session, feeds)  # type: ignore[arg-type]
    raise ValueError(f"unknown entry point '{case.entry}'")


def write_case(case: Case, folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for name, blob in case.files.items():
        (folder / name).write_bytes(blob)


def prepare_session(model: Path, feeds_file: Path, limits: Limits) -> tuple[object, Outcome]:
    """A kernel-level session of a seed model, compiled once, or None with the reason.

    The seed first runs in a child (a crash there must not take the campaign
    down); only then is the session built in this process, where the library
    now comes from the compile cache. Children forked later reuse it.
    """

    def warm() -> object:
        from rung.runtime import InferenceSession

        with np.load(feeds_file) as data:
            feeds = {k: data[k] for k in data.files}
        return InferenceSession(str(model), level="kernel").run(None, feeds)

    outcome = sandbox.run_one(warm, limits)
    if outcome.kind != sandbox.OK or outcome.message != "returned":
        return None, outcome
    try:
        return _build_session(model, feeds_file), outcome
    except Exception as err:  # noqa: BLE001 - the child's run passed, this one did not
        return None, sandbox.Outcome(sandbox.OK, f"not usable here: {type(err).__name__}: {err}")


def _build_session(model: Path, feeds_file: Path) -> object:
    from rung.runtime import InferenceSession

    session = InferenceSession(str(model), level="kernel")
    with np.load(feeds_file) as data:
        session.run(None, {k: data[k] for k in data.files})
    return session


class Campaign:
    """Runs a plan: entry points one after another, within counts and a time budget."""

    def __init__(self, plan: Plan, log: Callable[[str], None] = print) -> None:
        self.plan = plan
        self.log = log
        self.findings = Findings(plan.out, plan.keep)
        self.started = time.monotonic()
        self.deadline = None if plan.budget is None else self.started + plan.budget
        self.cases: Counter[str] = Counter()

    def entry_deadline(self, entry: str) -> float | None:
        """This entry point's share of the time left (entries after it get theirs)."""
        if self.deadline is None:
            return None
        rest = self.plan.entries[self.plan.entries.index(entry) :]
        share = ENTRY_WEIGHT[entry] / sum(ENTRY_WEIGHT[e] for e in rest)
        if self.plan.counts.get(entry) is not None:
            return self.deadline
        return time.monotonic() + (self.deadline - time.monotonic()) * share

    def run(self) -> Findings:
        plan = self.plan
        plan.out.mkdir(parents=True, exist_ok=True)
        corpus = seeds.ensure(jobs=plan.jobs, log=self.log)
        targets.warm_up()
        work = Path(tempfile.mkdtemp(prefix="rung-fuzz-"))
        saved = os.environ.get("RUNG_CACHE_DIR")
        os.environ["RUNG_CACHE_DIR"] = str(work / "cc")
        try:
            drawer = Drawer(corpus, plan.seed)
            for entry in plan.entries:
                self.run_entry(entry, drawer, work)
        finally:
            if saved is None:
                os.environ.pop("RUNG_CACHE_DIR", None)
            else:
                os.environ["RUNG_CACHE_DIR"] = saved
            shutil.rmtree(work, ignore_errors=True)
        write_summary(self, corpus)
        return self.findings

    def limits(self, entry: str) -> Limits:
        return Limits(timeout=self.plan.timeouts[entry], memory=self.plan.memory)

    def prepare_run(self, drawer: Drawer, deadline: float | None) -> None:
        """Compile the `run` seeds (as many as the plan asks and time allows)."""
        order = list(drawer.corpus.run)
        random.Random(self.plan.seed).shuffle(order)
        examples = [n for n in order if n.startswith("example_")]
        order = examples + [n for n in order if n not in examples]
        failed: list[str] = []
        for name in order:
            if len(drawer.session_order) >= self.plan.run_seeds:
                break
            if deadline is not None and time.monotonic() > deadline:
                break
            model, feeds = drawer.corpus.onnx_path(name), drawer.corpus.feeds_path(name)
            session, outcome = prepare_session(model, feeds, self.limits("run"))
            if session is None:
                failed.append(name)
                if not outcome.ok:
                    case = Case(
                        "run", -1 - len(failed), name, ["the seed's own feeds"], feed_ops=[]
                    )
                    extra = {"model.onnx": model, "feeds.npz": feeds}
                    self.findings.record(case, outcome, model.parent, extra)
                continue
            drawer.sessions[name] = session
            drawer.session_order.append(name)
        self.log(f"run: {len(drawer.session_order)} seed models compiled, {len(failed)} unusable")

    def run_entry(self, entry: str, drawer: Drawer, work: Path) -> None:
        plan = self.plan
        count = plan.counts.get(entry)
        deadline = self.entry_deadline(entry)
        started = time.monotonic()
        if entry == "run":
            self.prepare_run(drawer, deadline)
        make = {
            "import": drawer.make_import,
            "opt": drawer.make_opt,
            "compile": drawer.make_compile,
            "run": drawer.make_run,
        }[entry]
        pending: dict[int, tuple[Case, Path]] = {}
        positions = itertools.count()

        def cases() -> Iterator[Case]:
            batch, made = 0, 0
            while count is None or made < count:
                size = BATCH if count is None else min(BATCH, count - made)
                batch_seed = _batch_seed(plan.seed, entry, batch)
                drawer.rotation = batch_seed % 100_003
                drawn = draw_batch(make, made, size, batch_seed)
                batch += 1
                if not drawn:
                    return
                for case in drawn:
                    made += 1
                    yield case

        def jobs() -> Iterator[Target]:
            for case in cases():
                folder = work / "cases" / f"{case.index}"
                write_case(case, folder)
                session = None
                if case.entry == "run":
                    shutil.copyfile(drawer.corpus.feeds_path(case.seed), folder / "feeds.npz")
                    session = drawer.sessions[case.seed]
                try:
                    target = make_target(case, folder, session)
                except Exception as err:  # noqa: BLE001 - a feed edit numpy refused
                    self.log(f"{entry}: case {case.index} skipped: {type(err).__name__}: {err}")
                    continue
                pending[next(positions)] = (case, folder)
                yield target

        limits = self.limits(entry)
        for position, outcome in sandbox.run_all(
            jobs(), limits, jobs=plan.jobs, work=work / "slots", deadline=deadline
        ):
            case, folder = pending.pop(position)
            extra: dict[str, Path] = {}
            if case.entry == "run":
                extra = {
                    "model.onnx": drawer.corpus.onnx_path(case.seed),
                    "feeds.npz": drawer.corpus.feeds_path(case.seed),
                }
            self.findings.record(case, outcome, folder, extra)
            self.cases[entry] += 1
            shutil.rmtree(folder, ignore_errors=True)
        counts = self.findings.counts.get(entry, Counter())
        detail = ", ".join(f"{k} {counts[k]}" for k in OUTCOMES if counts[k])
        seconds = time.monotonic() - started
        self.log(f"{entry}: {self.cases[entry]} cases in {seconds:.0f} s: {detail or 'none'}")


# ---- the summary --------------------------------------------------------------------


def summary_lines(campaign: Campaign) -> list[str]:
    findings = campaign.findings
    plan = campaign.plan
    lines = [
        "# Fuzz summary",
        "",
        f"seed {plan.seed}, jobs {plan.jobs}, budget {plan.budget} s, "
        f"{sum(campaign.cases.values())} cases in {time.monotonic() - campaign.started:.0f} s",
        "",
        "| entry | cases | ok with a result | " + " | ".join(OUTCOMES) + " |",
        "|---|---:|---:|" + "---:|" * len(OUTCOMES),
    ]
    for entry in plan.entries:
        counts = findings.counts.get(entry, Counter())
        cells = " | ".join(str(counts[k]) for k in OUTCOMES)
        lines.append(f"| {entry} | {campaign.cases[entry]} | {findings.results[entry]} | {cells} |")
    lines += ["", f"## Findings: {len(findings.groups)} distinct, {findings.bad()} cases", ""]
    for group in sorted(findings.groups.values(), key=lambda g: (g.entry, g.kind, -g.count)):
        lines.append(f"- **{group.entry} / {group.kind}** {group.exc_type} at `{group.site}`")
        lines.append(f"  - {group.count} case(s); message: {group.message[:200]}")
        if group.reproducers:
            lines.append(f"  - smallest reproducer: `{group.reproducers[0][1]}`")
            lines.append(f"  - replay: `{replay_command(Path(group.reproducers[0][1]))}`")
    return lines


def write_summary(campaign: Campaign, corpus: seeds.Corpus) -> None:
    out = campaign.plan.out
    (out / "summary.md").write_text("\n".join(summary_lines(campaign)) + "\n")
    data = {
        "seed": campaign.plan.seed,
        "corpus": str(corpus.folder),
        "cases": dict(campaign.cases),
        "counts": {e: dict(c) for e, c in campaign.findings.counts.items()},
        "ok_with_result": dict(campaign.findings.results),
        "ok_messages": {
            e: dict(c.most_common(40)) for e, c in campaign.findings.ok_messages.items()
        },
        "findings": [asdict(g) for g in campaign.findings.groups.values()],
    }
    (out / "summary.json").write_text(json.dumps(data, indent=1))
