"""The zoo's command line: run models, keep their results, write the report.

    python bench/zoo                            # every model; writes docs/models.md
    python bench/zoo --models 'bert|gpt2'       # some models (re.search on the name)
    python bench/zoo --fast                     # the default test subset
    python bench/zoo --list                     # the models, with their export status

Results are kept beside the cached exports (`results.json`), so a run of some
models updates their rows and `--output` writes the table of every model run
so far with these library versions. `--worker` is the subprocesses' entry.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from . import all_models, by_name
from .cache import default_root, error_path, export_path, versions_folder
from .runner import Result, run_model
from .spec import ModelSpec

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUTPUT = ROOT / "docs" / "models.md"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python bench/zoo", description=__doc__.split("\n")[0])
    parser.add_argument("--models", help="run the models whose name matches this regex")
    parser.add_argument("--fast", action="store_true", help="run the default test subset only")
    parser.add_argument(
        "--output",
        type=Path,
        help="the Markdown report (default docs/models.md when every model runs)",
    )
    parser.add_argument("--cache", type=Path, help="the export cache ($RUNG_ZOO_CACHE)")
    parser.add_argument("--list", action="store_true", help="list the models and exit")
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    return parser


def select(pattern: str | None, fast: bool) -> list[ModelSpec]:
    models = all_models()
    if pattern:
        models = [m for m in models if re.search(pattern, m.name)]
    if fast:
        models = [m for m in models if m.fast]
    return models


def _results_file(root: Path) -> Path:
    return versions_folder(root) / "results.json"


def load_results(root: Path) -> dict[str, Result]:
    path = _results_file(root)
    if not path.exists():
        return {}
    return {name: Result.from_json(r) for name, r in json.loads(path.read_text()).items()}


def save_results(root: Path, results: dict[str, Result]) -> None:
    path = _results_file(root)
    data = {name: r.to_json() for name, r in results.items()}
    path.write_text(json.dumps(data, indent=1) + "\n")


def _summary(result: Result, seconds: float) -> str:
    error = f"  {result.error[:150]}" if result.error else ""
    return f"{result.name:48} {result.status:13} {seconds:6.1f}s{error}"


def _worker(args: Sequence[str]) -> int:
    """The subprocess side: `export NAME FOLDER` or `check NAME MODEL RESULT`."""
    from . import check

    job, name, *rest = args
    spec = by_name(name)
    if job == "export":
        folder = Path(rest[0])
        check.export_model(spec, export_path(spec, folder), error_path(spec, folder))
    elif job == "check":
        check.check_model(spec, Path(rest[0]), Path(rest[1]))
    else:
        raise SystemExit(f"unknown worker job '{job}'")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.worker:
        return _worker(args.worker)
    root = args.cache or default_root()
    models = select(args.models, args.fast)
    if args.list:
        folder = versions_folder(root)
        for spec in models:
            cached = export_path(spec, folder).exists() or error_path(spec, folder).exists()
            print(f"{spec.name:48} {'fast ' if spec.fast else '     '}{'cached' if cached else ''}")
        return 0
    results = load_results(root)
    for spec in models:
        start = time.perf_counter()
        result = run_model(spec, root)
        print(_summary(result, time.perf_counter() - start), flush=True)
        results[spec.name] = result
        save_results(root, results)
    output = args.output
    if output is None and not args.models and not args.fast:
        output = DEFAULT_OUTPUT
    if output is not None:
        from .report import render

        ordered = [results[m.name] for m in all_models() if m.name in results]
        output.write_text(render(ordered))
        print(f"wrote {output} ({len(ordered)} models)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
