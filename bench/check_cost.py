"""What rung's run-time checks cost: each model compiled with them and without, timed alike.

    python bench/check_cost.py                          # the bench models and the zoo's
    python bench/check_cost.py --models 'bert|gpt2'     # models whose name matches
    python bench/check_cost.py --output bench/CHECK_COST.md

Indices, axes, repeats, depths and shapes that arrive at run time are checked
before use (`core.check`), so that a bad feed fails the run instead of reading
outside a buffer. This measures what those checks cost. Each model is lowered
to core once; a copy of it has every `core.check` replaced by the value it
guards, which is exactly the code without checks. Both are lowered to kernel,
compiled and run on the same feed (their outputs must be identical), then timed
on one thread, alternating in blocks as `bench/run.py` does. Where the two C
programs are the same (every check was settled at compile time), there is
nothing to time: the ratio is 1. The report gives
the checks left in each kernel program (`kernel.check` and `cf.assert`), both
medians and their ratio.

The models are bench/run.py's (the light ONNX models, three small ones and
the modern exports of `bench/modern.py`) and the zoo's exports found in its
cache (`python bench/zoo` makes them); zoo models run at their largest
checked size.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from run import bench_models, ordered_inputs, time_in_blocks  # noqa: E402

PREFIX = "m"


@dataclass
class Candidate:
    """A model to measure: its name, where it comes from, and how to get it and its feed."""

    name: str
    origin: str
    load: Callable[[], tuple[object, dict[str, np.ndarray]]]


def candidates(pattern: str | None) -> Iterator[Candidate]:
    """The bench models, then the zoo exports in the cache, whose name matches `pattern`."""
    wanted = re.compile(pattern) if pattern else None
    for spec in bench_models():
        if wanted is None or wanted.search(spec.name):

            def load(spec: object = spec) -> tuple[object, dict[str, np.ndarray]]:
                model = spec.build(0)  # type: ignore[attr-defined]
                return model, spec.inputs(model, 1)  # type: ignore[attr-defined]

            yield Candidate(spec.name, "bench", load)
    from zoo import all_models as zoo_models
    from zoo.cache import default_root, export_path, versions_folder

    folder = versions_folder(default_root())
    for spec in zoo_models():
        path = export_path(spec, folder)
        if not path.exists() or (wanted is not None and not wanted.search(spec.name)):
            continue

        def load_zoo(
            spec: object = spec, path: Path = path
        ) -> tuple[object, dict[str, np.ndarray]]:
            import onnx

            sizes = spec.sizes[-1]  # type: ignore[attr-defined]
            return onnx.load(str(path)), spec.feeds(sizes)  # type: ignore[attr-defined]

        yield Candidate(spec.name, "zoo", load_zoo)


def strip_checks(module: object) -> int:
    """Replace every `core.check` in `module` by the value it guards; returns how many."""
    from rung.dialects import core

    checks = [op for op in module.walk() if isinstance(op, core.CheckOp)]  # type: ignore[attr-defined]
    for op in checks:
        op.result.replace_all_uses_with(op.input)
        op.detach()
        op.erase()
    return len(checks)


def count_run_time_checks(module: object) -> int:
    from xdsl.dialects import cf

    from rung.dialects import kernel

    return sum(isinstance(op, kernel.CheckOp | cf.AssertOp) for op in module.walk())  # type: ignore[attr-defined]


def build(program: object) -> object:
    """The C program compiled and loaded, on one thread."""
    from rung.runtime.native import NativeModel, cached_build

    return NativeModel(cached_build(program), program)  # type: ignore[arg-type]


def measure(candidate: Candidate, args: argparse.Namespace) -> dict[str, object]:
    from rung.lowering.kernel_to_c import generate_c
    from rung.runtime.levels import lower, owned_copy
    from rung.runtime.session import load_module

    model, feed = candidate.load()
    core_module = lower(load_module(model), "core")
    unchecked = owned_copy(core_module)
    stripped = strip_checks(unchecked)
    checked_kernel = lower(core_module, "kernel")
    unchecked_kernel = lower(unchecked, "kernel")
    left = count_run_time_checks(checked_kernel)
    programs = [generate_c(m, PREFIX) for m in (checked_kernel, unchecked_kernel)]
    if programs[0].source == programs[1].source:  # nothing checked at run time: same code
        return {"core_checks": stripped, "run_time_checks": left, "same_code": True}
    with_checks, without = (build(p) for p in programs)
    inputs = ordered_inputs(with_checks, feed)  # type: ignore[arg-type]
    got = with_checks.run(inputs, threads=1)  # type: ignore[attr-defined]
    want = without.run(inputs, threads=1)  # type: ignore[attr-defined]
    for g, w in zip(got, want, strict=True):
        if not np.array_equal(np.asarray(g), np.asarray(w), equal_nan=True):
            raise AssertionError("the outputs with and without checks differ")
    samples = time_in_blocks(
        {
            "checked": lambda: with_checks.run(inputs, threads=1),  # type: ignore[attr-defined]
            "unchecked": lambda: without.run(inputs, threads=1),  # type: ignore[attr-defined]
        },
        repeat=args.repeat,
        warmup=2,
        budget_s=args.budget,
    )
    checked_ms = statistics.median(samples["checked"]) * 1e3
    unchecked_ms = statistics.median(samples["unchecked"]) * 1e3
    return {
        "core_checks": stripped,
        "run_time_checks": left,
        "checked_ms": checked_ms,
        "unchecked_ms": unchecked_ms,
        "ratio": checked_ms / unchecked_ms,
        "runs": len(samples["checked"]),
    }


def render(rows: Sequence[tuple[Candidate, dict[str, object] | str]]) -> str:
    lines = [
        "# Run-time checks: what they cost",
        "",
        "Generated by `python bench/check_cost.py`: one thread, medians of runs alternating",
        "in blocks; the ratio is checked over unchecked time.",
        "",
        "| model | from | core checks | checks in the C | checked ms | unchecked ms | ratio |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    ratios = []
    for candidate, result in rows:
        if isinstance(result, str):
            lines.append(f"| {candidate.name} | {candidate.origin} | failed: {result} | | | | |")
            continue
        if result.get("same_code"):
            lines.append(
                f"| {candidate.name} | {candidate.origin} | {result['core_checks']} "
                f"| {result['run_time_checks']} | same C with and without | | 1 |"
            )
            ratios.append(1.0)
            continue
        ratios.append(float(result["ratio"]))  # type: ignore[arg-type]
        lines.append(
            f"| {candidate.name} | {candidate.origin} | {result['core_checks']} "
            f"| {result['run_time_checks']} | {result['checked_ms']:.3f} "
            f"| {result['unchecked_ms']:.3f} | {result['ratio']:.3f} |"
        )
    if ratios:
        lines += [
            "",
            f"Worst ratio {max(ratios):.3f}; geometric mean "
            f"{float(np.exp(np.mean(np.log(ratios)))):.3f} over {len(ratios)} models.",
        ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", help="regular expression of the model names to run")
    parser.add_argument("--repeat", type=int, default=40, help="timed runs each (default 40)")
    parser.add_argument("--budget", type=float, default=20.0, help="seconds of timed runs")
    parser.add_argument("--output", help="write the Markdown report here (default: print it)")
    args = parser.parse_args(argv)
    rows: list[tuple[Candidate, dict[str, object] | str]] = []
    with tempfile.TemporaryDirectory() as cache:
        os.environ.setdefault("RUNG_CACHE_DIR", cache)
        for candidate in candidates(args.models):
            try:
                result: dict[str, object] | str = measure(candidate, args)
                print(f"{candidate.name}: {result}", flush=True)
            except Exception as err:  # every failure becomes a row of the report
                result = f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
                print(f"{candidate.name}: FAILED {result}", flush=True)
            rows.append((candidate, result))
    report = render(rows)
    if args.output:
        Path(args.output).write_text(report)
    else:
        print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
