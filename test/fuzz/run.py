"""rung's fuzz harness: mutate seed inputs, feed them to each entry point, report failures.

    python test/fuzz/run.py --short                        # CI: fixed seed and counts, ~2 min
    python test/fuzz/run.py --budget 1200 --jobs 1 --out DIR
    python test/fuzz/run.py --long --out DIR               # 10,000+ inputs
    python test/fuzz/run.py --entry import,opt --budget 60
    python test/fuzz/run.py --replay DIR/repro/import-traceback-00012
    python test/fuzz/run.py --minimize DIR/repro/import-traceback-00012   # -> ...-00012-min

The exit code is 0 when every case was ok, 1 when any was a traceback, a
signal or a hang (each kept as a reproducer under OUT/repro, summarised in
OUT/summary.md), 2 for bad arguments. See test/fuzz/README.md.
"""

from __future__ import annotations

import os
import sys

# Children are forked from this process, and an OpenMP or BLAS thread pool does
# not survive a fork: the generated C and numpy run single-threaded here.
for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzz.campaign import Campaign, Plan  # noqa: E402
from fuzz.targets import ENTRIES  # noqa: E402

SHORT = {"import": 500, "opt": 300, "compile": 60, "run": 400}
"""Cases per entry point of the CI mode: about two minutes on two cores."""
LONG = {"import": 4000, "opt": 2500, "compile": 1000, "run": 2600}
"""The long mode: over 10,000 inputs in all."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python test/fuzz/run.py",
        description="Fuzz rung's entry points (import, opt, compile, run) with mutated seeds; "
        "each case runs in a forked child, so crashes and hangs are caught and kept.",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--short", action="store_true", help="the CI mode: fixed counts, seed 0")
    mode.add_argument("--long", action="store_true", help="10,000+ inputs (no budget by default)")
    mode.add_argument(
        "--replay", metavar="REPRO", help="replay one reproducer folder (or case.json)"
    )
    mode.add_argument(
        "--minimize",
        metavar="REPRO",
        help="shrink a reproducer (within --budget, default 120 s) into REPRO-min",
    )
    parser.add_argument(
        "--entry",
        default=",".join(ENTRIES),
        help=f"comma-separated entry points (default: {','.join(ENTRIES)})",
    )
    parser.add_argument(
        "--budget", type=float, help="seconds for the whole campaign (default 300; --short: 300)"
    )
    parser.add_argument("--cases", type=int, help="cases per entry point (instead of a budget)")
    parser.add_argument("--seed", type=int, default=0, help="the random seed (default 0)")
    parser.add_argument("--jobs", type=int, default=None, help="parallel children (default 1)")
    parser.add_argument("--out", help="output folder (default: a new folder in the temp dir)")
    parser.add_argument("--timeout", type=float, help="seconds per case (default: per entry)")
    parser.add_argument("--run-seeds", type=int, help="seed models compiled for 'run'")
    parser.add_argument("--keep", type=int, default=5, help="reproducers kept per finding")
    parser.add_argument(
        "--memory",
        type=int,
        default=4096,
        help="MiB of address space per case, beyond the runner's own",
    )
    parser.add_argument(
        "--in-process", action="store_true", help="with --replay: no fork, show the failure here"
    )
    return parser


def make_plan(args: argparse.Namespace) -> Plan:
    entries = [e.strip() for e in args.entry.split(",") if e.strip()]
    unknown = [e for e in entries if e not in ENTRIES]
    if unknown or not entries:
        raise SystemExit(f"error: unknown entry point(s) {unknown}; choose from {ENTRIES}")
    if args.short:
        counts: dict[str, int | None] = {e: SHORT[e] for e in entries}
        budget, jobs, run_seeds = args.budget or 300.0, args.jobs or 2, args.run_seeds or 8
    elif args.long:
        counts = {e: LONG[e] for e in entries}
        budget, jobs, run_seeds = args.budget, args.jobs or 1, args.run_seeds or 10_000
    else:
        counts = {e: args.cases for e in entries}
        budget = args.budget if args.budget is not None or args.cases else 300.0
        jobs, run_seeds = args.jobs or 1, args.run_seeds or 40
    if args.cases is not None:
        counts = {e: args.cases for e in entries}
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="rung-fuzz-out-"))
    plan = Plan(
        entries, counts, budget, out, seed=args.seed, jobs=max(jobs, 1), run_seeds=run_seeds
    )
    plan.keep = args.keep
    plan.memory = args.memory << 20
    if args.short:
        plan.timeouts["compile"] = 30.0  # a hang costs its whole time limit: keep CI short
    if args.timeout:
        plan.timeouts = {e: args.timeout for e in plan.timeouts}
    return plan


def replay_main(args: argparse.Namespace) -> int:
    from fuzz.replay import replay

    outcome = replay(Path(args.replay), in_process=args.in_process, timeout=args.timeout)
    print(f"outcome: {outcome.kind}")
    print(f"message: {outcome.message}")
    if outcome.site:
        print(f"site: {outcome.site}")
    if not outcome.ok and outcome.detail:
        print(outcome.detail.rstrip())
    return 0 if outcome.ok else 1


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    warnings.simplefilter("ignore")
    if args.replay:
        return replay_main(args)
    if args.minimize:
        from fuzz.replay import minimize

        minimize(Path(args.minimize), budget=args.budget or 120.0)
        return 0
    plan = make_plan(args)
    started = time.monotonic()
    print(f"fuzz: entries {','.join(plan.entries)}, seed {plan.seed}, out {plan.out}", flush=True)
    findings = Campaign(plan, log=lambda line: print(line, flush=True)).run()
    print()
    print((plan.out / "summary.md").read_text().rstrip())
    print(f"fuzz: done in {time.monotonic() - started:.0f} s; summary in {plan.out}/summary.md")
    return 1 if findings.groups else 0


if __name__ == "__main__":
    sys.exit(main())
