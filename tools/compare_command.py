"""`rung compare`: run a model at rung's levels against a reference; name the first bad node.

rung compare model.onnx --random-inputs                      # kernel vs onnxruntime
rung compare model.onnx --inputs feed.npz --levels onnx,core,kernel
rung compare model.pt2 --against torch                       # torch eager
rung compare model.onnx --load-plugin my_patterns.py         # check your own lowering

The report (per level and output: shape, dtype, max abs/rel error, verdict;
on a mismatch the first diverging node) goes to stdout; the exit code is 1 on
a mismatch. The work is `rung.runtime.compare`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from rung.errors import RungError

from .common import (
    EXIT_ERROR,
    EXIT_OK,
    add_input_arguments,
    add_load_level_argument,
    load_levels,
    parse_assignments,
)

if TYPE_CHECKING:
    from rung.runtime.compare import CompareReport


def _cmd_compare(args: argparse.Namespace) -> int:
    from rung.runtime.compare import compare, read_inputs
    from rung.runtime.session import read_array

    if args.html is not None and not args.force and Path(args.html).exists():
        raise RungError(f"'{args.html}' exists; pass --force to overwrite it")  # before the work
    if args.load_plugin:
        from rung.lowering.pipelines import Registry

        from .plugins import load_plugins

        load_plugins(Registry(), args.load_plugin, entry_points=False)
    load_levels(args)
    levels = [name.strip() for name in args.levels.split(",") if name.strip()]
    if not levels:
        raise RungError("--levels needs at least one level name, e.g. --levels core,kernel")
    given = parse_assignments(args.input, "--input", "NAME=FILE.npy")
    if args.inputs is not None and (given or args.random_inputs):
        raise RungError(
            "give the inputs one way: --inputs FILE.npz, --input NAME=FILE.npy, or --random-inputs"
        )
    feed: dict[str, object] | str | None = None
    if args.inputs is not None:
        read_inputs(args.inputs)  # an unreadable file fails here, before any import
        feed = args.inputs  # compare() reads it, and names it in messages
    elif given:
        arrays = {name: read_array(path, name) for name, path in given.items()}
        if args.random_inputs:
            feed = _with_random(args.model, arrays, args.seed)
        else:
            feed = dict(arrays)
    progress = _progress if sys.stderr.isatty() else None
    report = compare(
        args.model,
        feed,
        against=args.against,
        levels=levels,
        rtol=args.rtol,
        atol=args.atol,
        bisect=not args.no_bisect,
        seed=args.seed,
        progress=progress,
    )
    print(report)
    if args.html is not None:
        _write_view(args, report)
    return EXIT_OK if report.ok else EXIT_ERROR


def _write_view(args: argparse.Namespace, report: CompareReport) -> None:
    """`--html`: the model's graph (as imported) with each level's diverging node marked."""
    from rung.runtime.loading import load_module
    from rung.runtime.view import write_html

    marks: dict[str, str] = {}
    for level in report.levels:
        found = level.divergence
        if found is None:
            continue
        worst = max((d.max_abs for d in found.outputs if not d.ok), default=0.0)
        note = f"level {level.level}: first diverging node ({found.op}), max abs err {worst:.3g}"
        marks[found.node] = f"{marks[found.node]}; {note}" if found.node in marks else note
    verdict = "ok" if report.ok else "MISMATCH"
    write_html(
        load_module(args.model),
        args.html,
        title=f"rung compare {args.model} against {report.against}: {verdict}",
        marks=marks,
        force=args.force,
    )
    print(f"wrote {args.html}", file=sys.stderr)


def _with_random(model: str, given: dict[str, object], seed: int) -> dict[str, object]:
    """Random values for the inputs not given (`--input` with `--random-inputs`)."""
    from rung.runtime.levels import level_of
    from rung.runtime.session import InferenceSession, load_module, random_inputs

    module = load_module(model)
    args = InferenceSession(module, level=level_of(module).name).get_inputs()
    missing = [a for a in args if a.name not in given]
    return {**random_inputs(missing, seed=seed), **given}


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _tolerance(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: '{text}'") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a non-negative number, got {text}")
    return value


def register(sub: argparse._SubParsersAction) -> None:
    """Adds the `compare` subcommand to `rung`'s parser."""
    p = sub.add_parser(
        "compare",
        help="run a model at rung's levels against onnxruntime or torch; name the first "
        "diverging node",
        description="Run a model (.onnx, .onnxtxt, .pt2 or .mlir) at each level and compare "
        "every output with a reference: onnxruntime (default for ONNX), torch eager (default "
        "for .pt2; for an ONNX model, the .pt2 of the same name beside it) or another level. "
        "Prints per output the max absolute and relative error and a verdict. On a mismatch, "
        "bisects over the model's nodes (a binary search over cut points, each cut run on "
        "both sides) and names the first node whose result diverges. Exit code 1 on a "
        "mismatch.",
    )
    p.add_argument("model", help="the model: .onnx, .onnxtxt, .pt2 or .mlir")
    p.add_argument("--inputs", metavar="FILE.npz", help="all inputs, by name, from one .npz")
    add_input_arguments(p)
    p.add_argument(
        "--against",
        metavar="REF",
        help="onnxruntime, torch or a level name (default: onnxruntime for ONNX models, "
        "torch for .pt2)",
    )
    p.add_argument(
        "--levels",
        default="kernel",
        metavar="L1,L2",
        help="levels to check, comma-separated (default: kernel; 'rung levels' lists them)",
    )
    p.add_argument(
        "--rtol", type=_tolerance, default=1e-3, help="relative tolerance (default 1e-3)"
    )
    p.add_argument(
        "--atol",
        type=_tolerance,
        default=1e-4,
        help="absolute tolerance, scaled by max(1, max |reference|) per output (default 1e-4)",
    )
    p.add_argument(
        "--no-bisect", action="store_true", help="compare the outputs only, do not bisect"
    )
    p.add_argument(
        "--load-plugin",
        action="append",
        default=[],
        metavar="FILE",
        help="a plugin file defining register(registry), as for opt (repeatable)",
    )
    add_load_level_argument(p)
    p.add_argument(
        "--html",
        metavar="FILE.html",
        help="also write the model's graph (as 'rung view' draws it) with each level's first "
        "diverging node marked",
    )
    p.add_argument("--force", action="store_true", help="overwrite the --html file if it exists")
    p.set_defaults(func=_cmd_compare)
