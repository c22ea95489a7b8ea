"""`rung`: the user-facing command, one subcommand per job.

rung import model.onnx -o model.mlir     # ONNX → onnx-dialect MLIR
rung import model.pt2 -o model.mlir      # a torch.export program → torch-dialect MLIR
rung run model.onnx --input x=x.npy      # compile, run it and print the outputs
rung compile model.onnx -o out/          # C, header, weights and libmodel.so in out/
rung compare model.onnx                  # each level against onnxruntime; bisect to the bad node
rung view model.onnx -o graph.html       # the graph as one self-contained HTML page
rung export model.onnx -o core.onnx      # the optimised core-level graph written back as ONNX
rung conformance --level onnx            # the ONNX node tests → docs/conformance.md
rung conformance --cases models --level kernel  # the model tests → docs/conformance-models.md
rung conformance --cases torch --level kernel   # torch's OpInfo samples → docs/conformance-torch.md
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NoReturn

from rung.errors import RungError

from .common import (
    EXIT_OK,
    add_input_arguments,
    add_load_level_argument,
    load_levels,
    parse_assignments,
    progress_display,
    run_tool,
    write_atomically,
    write_output,
)

if TYPE_CHECKING:
    from rung.runtime import InferenceSession


COMMAND_MODULES = ("compare_command", "view_command", "export_command")
"""Subcommands kept in their own modules under `rung.tools`: each has `register(subparsers)`."""


class _ArgumentParser(argparse.ArgumentParser):
    """argparse whose usage errors become `rung: error: ...` and exit code 1."""

    def error(self, message: str) -> NoReturn:
        raise RungError(f"{message} (see '{self.prog} --help')")


def _cmd_import(args: argparse.Namespace) -> int:
    from rung.dialects import print_module

    if str(args.model).endswith(".pt2"):
        from rung.importers.torch import import_program

        module = import_program(args.model)
    else:
        from rung.importers.onnx import import_model

        module = import_model(args.model)
    text = print_module(module, generic=args.print_op_generic)
    write_output(args.output, text, inputs=(args.model,), force=args.force)
    return EXIT_OK


# ---- rung run -----------------------------------------------------------------------


def _cmd_run(args: argparse.Namespace) -> int:
    from rung.runtime import InferenceSession

    load_levels(args)
    given = parse_assignments(args.input, "--input", "NAME=FILE.npy")
    dims: dict[str, int] = {}
    for name, text in parse_assignments(args.dim, "--dim").items():
        try:
            dims[name] = int(text)
        except ValueError:
            raise RungError(f"--dim {name}={text}: the size must be an integer") from None
        if dims[name] < 0:
            raise RungError(f"--dim {name}={text}: the size must not be negative")
    if args.output is not None and not args.force and os.path.exists(args.output):
        raise RungError(f"'{args.output}' exists; pass --force to overwrite it")
    from rung.runtime import SessionOptions

    options = SessionOptions()
    options.intra_op_num_threads = args.threads
    with progress_display() as progress:
        session = InferenceSession(args.model, options, level=args.level, progress=progress)
        feed = _make_feed(session, args, given, dims)
        if progress is not None:
            progress("run", 0, None)
        outputs = session.run(None, feed)
    names = [o.name for o in session.get_outputs()]
    if args.output is not None:
        _save_npz(args.output, names, outputs, args.force)
        print(f"wrote {len(outputs)} output(s) to {args.output}")
    elif args.output_dir is not None:
        written = _save_dir(args.output_dir, names, outputs, args.force)
        print(f"wrote {len(written)} file(s) to {args.output_dir}")
    else:
        sys.stdout.write(_format_outputs(session.get_outputs(), outputs))
    if args.print_timings:
        _print_timings(_run_timings(session))
    return EXIT_OK


def _make_feed(
    session: InferenceSession,
    args: argparse.Namespace,
    given: dict[str, str],
    dims: dict[str, int],
) -> dict[str, object]:
    """The inputs of `rung run`: files given with --input, the rest random if asked."""
    from rung.runtime.session import random_inputs, read_array

    inputs = session.get_inputs()
    known = {i.name for i in inputs}
    for name in given:
        if name not in known:
            raise RungError(
                f"unknown input '{name}'; the model's inputs are:\n{_list_args(inputs)}"
            )
    feed: dict[str, object] = {}
    if args.random_inputs:
        feed.update(random_inputs(inputs, seed=args.seed, dims=dims))
    for name, path in given.items():
        feed[name] = read_array(path, name)
    missing = [i for i in inputs if i.name not in feed and not i.type.startswith("optional(")]
    if missing:
        names = ", ".join(f"'{i.name}'" for i in missing)
        raise RungError(
            f"missing input{'s' if len(missing) > 1 else ''} {names}; the model's inputs are:\n"
            f"{_list_args(inputs)}\n"
            "give each as --input NAME=FILE.npy, or use --random-inputs"
        )
    return feed


def _run_timings(session: InferenceSession) -> dict[str, float]:
    """The session's stage timings, its run labelled with the threads it ran on."""
    from rung.runtime.native import default_threads

    timings = dict(session.timings)
    if "run" in timings and session.compiled:
        threads = session.threads or default_threads()
        timings[f"run ({threads} thread{'s' if threads != 1 else ''})"] = timings.pop("run")
    return timings


def _print_timings(timings: dict[str, float]) -> None:
    width = max(len(stage) for stage in [*timings, "total"])
    for stage, seconds in timings.items():
        print(f"  {stage:<{width}}  {seconds:8.3f} s")
    print(f"  {'total':<{width}}  {sum(timings.values()):8.3f} s")


def _list_args(args: Sequence[object]) -> str:
    lines = []
    for a in args:
        shape = "[" + ", ".join("?" if d is None else str(d) for d in a.shape) + "]"  # type: ignore[attr-defined]
        lines.append(f"  {a.name}: {a.type} {shape}")  # type: ignore[attr-defined]
    return "\n".join(lines)


def _format_outputs(outs: Sequence[object], values: Sequence[object]) -> str:
    import numpy as np

    lines = []
    with np.printoptions(threshold=20, edgeitems=3, linewidth=100):
        for arg, value in zip(outs, values, strict=True):
            name, type_ = arg.name, arg.type  # type: ignore[attr-defined]
            if isinstance(value, np.ndarray):
                lines.append(f"{name}: {type_} shape {tuple(value.shape)} dtype {value.dtype}")
                body = repr(value)
            elif isinstance(value, list | tuple):
                lines.append(f"{name}: {type_} with {len(value)} item(s)")
                body = repr(value)
            elif value is None:
                lines.append(f"{name}: {type_}, empty (None)")
                continue
            else:
                lines.append(f"{name}: {type_}")
                body = repr(value)
            text = body.splitlines()
            if len(text) > 12:
                text = text[:12] + ["..."]
            lines.extend("  " + line for line in text)
    return "\n".join(lines) + "\n"


def _arrays_to_save(names: Sequence[str], values: Sequence[object]) -> list[tuple[str, object]]:
    """(file stem, array) for each output; a sequence gives one array per item."""
    import re

    import numpy as np

    out: list[tuple[str, object]] = []
    used: set[str] = set()

    def stem(text: str) -> str:
        base = re.sub(r"[^\w.-]", "_", text) or "output"
        candidate, k = base, 0
        while candidate in used:
            k += 1
            candidate = f"{base}_{k}"
        used.add(candidate)
        return candidate

    for name, value in zip(names, values, strict=True):
        if isinstance(value, np.ndarray):
            out.append((stem(name), value))
        elif isinstance(value, list | tuple) and all(isinstance(v, np.ndarray) for v in value):
            for i, item in enumerate(value):
                out.append((stem(f"{name}_{i}"), item))
        elif value is None:
            continue
        else:
            raise RungError(
                f"output '{name}' is a {type(value).__name__}, which cannot be saved as .npy; "
                "run without -o/--output-dir to print it"
            )
    return out


def _save_npz(path: str, names: Sequence[str], values: Sequence[object], force: bool) -> None:
    import numpy as np

    arrays = dict(_arrays_to_save(names, values))
    write_atomically(path, lambda f: np.savez(f, **arrays), force=force)  # type: ignore[arg-type]


def _save_dir(path: str, names: Sequence[str], values: Sequence[object], force: bool) -> list[str]:
    from pathlib import Path

    import numpy as np

    arrays = _arrays_to_save(names, values)
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise RungError(f"--output-dir '{path}' exists and is not a folder")
    if not folder.parent.is_dir():
        raise RungError(f"cannot create '{path}': folder '{folder.parent}' does not exist")
    targets = [str(folder / f"{stem}.npy") for stem, _ in arrays]
    clash = next((t for t in targets if Path(t).exists()), None)
    if clash is not None and not force:
        raise RungError(f"'{clash}' exists; pass --force to overwrite it")
    folder.mkdir(exist_ok=True)
    written = []
    for target, (_, array) in zip(targets, arrays, strict=True):
        write_atomically(target, lambda f, a=array: np.save(f, a, allow_pickle=False))
        written.append(target)
    return written


# ---- rung compile -------------------------------------------------------------------


def _cmd_compile(args: argparse.Namespace) -> int:
    from rung.runtime.native import compile_model

    with progress_display() as progress:
        result = compile_model(
            args.model,
            args.output,
            prefix=args.prefix,
            debug=args.debug,
            emit_only=args.emit_only,
            force=args.force,
            threads=args.threads,
            progress=progress,
        )
    print(result.summary())
    if args.threads:
        parallel = result.program is not None and result.program.uses_openmp
        print(
            f"{result.prefix}.c sets {args.threads} OpenMP thread(s) when its library is loaded"
            if parallel
            else "--threads: the model has no parallel loops; it runs on one thread"
        )
    if args.print_timings:
        _print_timings(result.timings)
    return EXIT_OK


# ---- rung conformance ---------------------------------------------------------------


def _cmd_conformance(args: argparse.Namespace) -> int:
    import shlex
    from pathlib import Path

    from rung.runtime.conformance import (
        compare_reports,
        load_scoreboard,
        render_json,
        render_markdown,
        run_conformance,
    )

    if args.cases == "torch":
        return _cmd_conformance_torch(args)
    levels = args.levels or ["onnx"]
    output = args.output
    dynamic = args.shapes == "dynamic"
    models = args.cases == "models"
    if output is None and args.filter is None:
        stem = "conformance-models" if models else "conformance"
        output = os.path.join("docs", stem + ("-dynamic.md" if dynamic else ".md"))
    if args.floor is not None and args.floor < 0:
        raise RungError(f"--floor must not be negative, got {args.floor}")
    parts = ["rung conformance", *(f"--level {shlex.quote(lv)}" for lv in levels)]
    if models:
        parts.append("--cases models")
    if dynamic:
        parts.append("--shapes dynamic")
    if args.filter is not None:
        parts.append(f"--filter {shlex.quote(args.filter)}")
    if output is not None:
        parts.append(f"--output {shlex.quote(output)}")
    if args.compare is not None:
        parts.append(f"--compare {shlex.quote(args.compare)}")
    if output is not None and output != "-":
        parts.append("--force")  # regenerating the scoreboard overwrites it
    _check_scoreboard_output(output, args.force)
    baseline = load_scoreboard(args.compare) if args.compare is not None else None
    with progress_display() as show:
        report = run_conformance(
            levels,
            jobs=args.jobs,
            timeout=args.timeout,
            pattern=args.filter,
            plugins=args.load_level,
            progress=_case_progress(show),
            command=" ".join(parts),
            shapes=args.shapes,
            kind=args.cases,
        )
    if baseline is not None:
        report.comparison = compare_reports(report, baseline, args.compare)
    if output is not None:
        if output != "-":
            json_path = str(Path(output).with_suffix(".json"))
            write_output(json_path, render_json(report), force=args.force)
        write_output(output, render_markdown(report), force=args.force)
    for line in report_lines(report, output):
        print(line)
    if args.floor is not None:
        below = [lv for lv in report.levels if report.passed(lv) < args.floor]
        if below:
            detail = ", ".join(f"level '{lv}' passed {report.passed(lv)}" for lv in below)
            raise RungError(f"{detail} of {len(report.cases)} cases, below --floor {args.floor}")
    return EXIT_OK


def _cmd_conformance_torch(args: argparse.Namespace) -> int:
    """`--cases torch`: torch's OpInfo samples for the Core ATen ops (see
    `rung.runtime.conformance_torch`)."""
    import shlex
    from pathlib import Path

    from rung.runtime.conformance_torch import (
        render_json,
        render_markdown,
        run_torch_conformance,
        summary_lines,
    )

    if args.shapes != "static" or args.compare is not None:
        raise RungError("--cases torch runs static shapes only, without --compare")
    levels = args.levels or ["kernel"]
    output = args.output
    if output is None and args.filter is None:
        output = os.path.join("docs", "conformance-torch.md")
    if args.floor is not None and args.floor < 0:
        raise RungError(f"--floor must not be negative, got {args.floor}")
    parts = ["rung conformance --cases torch", *(f"--level {shlex.quote(lv)}" for lv in levels)]
    if args.filter is not None:
        parts.append(f"--filter {shlex.quote(args.filter)}")
    if output is not None:
        parts.append(f"--output {shlex.quote(output)}")
    if output is not None and output != "-":
        parts.append("--force")  # regenerating the scoreboard overwrites it
    _check_scoreboard_output(output, args.force)
    with progress_display() as show:
        report = run_torch_conformance(
            levels,
            jobs=args.jobs,
            timeout=args.timeout,
            pattern=args.filter,
            plugins=args.load_level,
            progress=_case_progress(show),
            command=" ".join(parts),
        )
    if output is not None:
        if output != "-":
            json_path = str(Path(output).with_suffix(".json"))
            write_output(json_path, render_json(report), force=args.force)
        write_output(output, render_markdown(report), force=args.force)
    for line in summary_lines(report):
        print(line)
    if output is not None and output != "-":
        print(f"wrote {output} and {Path(output).with_suffix('.json')}")
    if args.floor is not None:
        below = [lv for lv in report.levels if report.passed(lv) < args.floor]
        if below:
            detail = ", ".join(
                f"level '{lv}' passed {report.passed(lv)} of {report.total(lv)} samples"
                for lv in below
            )
            raise RungError(f"{detail}, below --floor {args.floor}")
    return EXIT_OK


def report_lines(report: object, output: str | None) -> list[str]:
    from pathlib import Path

    from rung.runtime.conformance import summary_lines

    lines = summary_lines(report)  # type: ignore[arg-type]
    if output is not None and output != "-":
        lines.append(f"wrote {output} and {Path(output).with_suffix('.json')}")
    return lines


def _check_scoreboard_output(output: str | None, force: bool) -> None:
    """Refuse, before hours of cases, to overwrite an existing scoreboard without --force."""
    if output is None or output == "-" or force:
        return
    from pathlib import Path

    for path in (output, str(Path(output).with_suffix(".json"))):
        if os.path.exists(path):
            raise RungError(f"'{path}' exists; pass --force to overwrite it")


def _case_progress(
    show: Callable[[str, int, int | None], None] | None,
) -> Callable[[int, int], None] | None:
    """The conformance runners' (done, total) callback, shown as the stage `cases`."""
    if show is None:
        return None
    return lambda done, total: show("cases", done, total)


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: '{text}'") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: '{text}'") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text}")
    return value


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: '{text}'") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {text}")
    return value


def _threads_argument(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--threads",
        type=_non_negative_int,
        default=0,
        metavar="N",
        help=f"{what}; default 0: $OMP_NUM_THREADS, else every CPU",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _ArgumentParser(
        prog="rung", description="Carry deep-learning models down a ladder of MLIR dialects."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser(
        "import",
        help="import an ONNX model (.onnx, .onnxtxt) or a torch.export program (.pt2) as MLIR",
        description="Import an ONNX model as MLIR in rung's onnx dialect (every op brought "
        "to its latest opset; the original opsets recorded on the module), or a program saved "
        "by torch.export.save as MLIR in rung's torch dialect (decomposed to the Core ATen "
        "opset; each op located at its FX node and Python source line).",
    )
    p.add_argument("model", help="the model: a binary .onnx file, textual .onnxtxt, or .pt2")
    p.add_argument("-o", "--output", help="output file (default: standard output)")
    p.add_argument("--force", action="store_true", help="overwrite the output file if it exists")
    p.add_argument(
        "--print-op-generic", action="store_true", help="print ops in MLIR's generic syntax"
    )
    p.set_defaults(func=_cmd_import)

    p = sub.add_parser(
        "run",
        help="run a model on given or random inputs and print (or save) its outputs",
        description="Run a model (.onnx, .onnxtxt, .pt2, or .mlir) at an execution "
        "level and print each output's name, type, shape and values (truncated), or save "
        "them. Inputs come from .npy (or TensorProto .pb) files, or are generated from the "
        "declared shapes and types.",
    )
    p.add_argument("model", help="the model: .onnx, .onnxtxt, .pt2 or .mlir")
    p.add_argument(
        "--level",
        default="kernel",
        metavar="LEVEL",
        help="execution level (default: kernel, compiled C; 'rung levels' lists them)",
    )
    add_input_arguments(p)
    p.add_argument(
        "--dim",
        action="append",
        default=[],
        metavar="NAME=N",
        help="size of the symbolic dimension NAME for --random-inputs (other unknown dims: 1)",
    )
    out = p.add_mutually_exclusive_group()
    out.add_argument("-o", "--output", metavar="FILE.npz", help="save the outputs in one .npz")
    out.add_argument("--output-dir", metavar="DIR", help="save each output as DIR/<name>.npy")
    p.add_argument(
        "--force", action="store_true", help="overwrite existing output files (-o, --output-dir)"
    )
    add_load_level_argument(p)
    _threads_argument(p, "OpenMP threads of the compiled code (level kernel)")
    p.add_argument(
        "--print-timings",
        action="store_true",
        help="print the seconds spent in each stage, and in the run (with its thread count)",
    )
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser(
        "compile",
        help="compile a model to C and a shared library",
        description="Lower a model (.onnx, .onnxtxt, .pt2, or .mlir of the onnx, torch, core "
        "or kernel dialect) to the kernel dialect, generate C, and write <prefix>.c, <prefix>.h, the "
        "runtime headers, <prefix>.weights (if the model has large constants) and "
        "lib<prefix>.so into the output folder. The .c names the cc command that rebuilds "
        "the library without rung.",
    )
    p.add_argument("model", help="the model: .onnx, .onnxtxt, .pt2 or .mlir")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="output folder")
    p.add_argument(
        "--prefix",
        metavar="NAME",
        help="C prefix of the generated names and files (default: from the model's file name)",
    )
    p.add_argument(
        "--debug",
        action="store_true",
        help="sanitizer build (-fsanitize=address,undefined), plus the <prefix>_harness "
        "executable that runs the model from raw input files",
    )
    p.add_argument("--emit-only", action="store_true", help="write the C files, do not build")
    p.add_argument(
        "--force", action="store_true", help="overwrite files of an earlier compile in DIR"
    )
    p.add_argument(
        "--print-timings", action="store_true", help="print the seconds spent in each stage"
    )
    _threads_argument(
        p, "the library's default OpenMP thread count, set when it is loaded (0: OpenMP's own)"
    )
    p.set_defaults(func=_cmd_compile)

    p = sub.add_parser(
        "conformance",
        help="run every ONNX node test case at each level and write the scoreboard",
        description="Run every ONNX node test case (generated by the installed onnx package) "
        "at each --level, each case in a worker process with a time limit, and write "
        "docs/conformance.md (a table per op) and docs/conformance.json (every case's status).",
    )
    p.add_argument(
        "--level",
        dest="levels",
        action="append",
        default=[],
        metavar="LEVEL",
        help="a level to run at; repeat for several (default: onnx)",
    )
    p.add_argument(
        "--jobs",
        type=_positive_int,
        default=None,
        metavar="N",
        help="worker processes (default: the number of CPUs)",
    )
    p.add_argument(
        "--timeout",
        type=_positive_float,
        default=60.0,
        metavar="SECONDS",
        help="time allowed per case and level (default 60)",
    )
    p.add_argument(
        "--output",
        metavar="FILE.md",
        help="the markdown scoreboard; the .json goes next to it (default: "
        "docs/conformance.md, or none with --filter)",
    )
    p.add_argument("--filter", metavar="REGEX", help="only cases whose name matches REGEX")
    p.add_argument(
        "--force", action="store_true", help="overwrite the scoreboard files if they exist"
    )
    p.add_argument(
        "--cases",
        choices=("node", "models", "torch"),
        default="node",
        help="models: the model test cases onnx ships as files (onnx/backend/test/data/"
        "{simple,pytorch-converted,pytorch-operator}) instead of the node cases "
        "(default: node; default output docs/conformance-models.md); torch: the float32 "
        "samples of torch's OpInfos for the Core ATen ops, compared with torch eager, "
        "--floor counting samples (default level kernel, default output "
        "docs/conformance-torch.md)",
    )
    p.add_argument(
        "--shapes",
        choices=("static", "dynamic"),
        default="static",
        help="dynamic: every graph-input dim made symbolic, same data (default: static; "
        "default output docs/conformance-dynamic.md)",
    )
    p.add_argument(
        "--compare",
        metavar="FILE.json",
        help="an earlier scoreboard (e.g. the static one) to count lost and gained passes against",
    )
    p.add_argument(
        "--floor",
        type=int,
        default=None,
        metavar="N",
        help="fail (exit 1) if fewer than N cases pass at any level",
    )
    add_load_level_argument(
        p, "a Python file or module that registers more levels (loaded in every worker)"
    )
    p.set_defaults(func=_cmd_conformance)

    for name in COMMAND_MODULES:
        importlib.import_module(f"rung.tools.{name}").register(sub)

    p = sub.add_parser("levels", help="list the execution levels")
    add_load_level_argument(p)
    p.set_defaults(func=_cmd_levels)
    return parser


def _cmd_levels(args: argparse.Namespace) -> int:
    from rung.runtime.levels import get_level, level_names

    load_levels(args)
    names = level_names()
    width = max(10, *(len(name) for name in names))
    for name in names:
        level = get_level(name)
        print(f"{name:{width}} {level.description}")
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    def body() -> int:
        args = build_parser().parse_args(argv)
        func: Callable[[argparse.Namespace], int] = args.func
        return func(args)

    return run_tool("rung", body)


if __name__ == "__main__":
    sys.exit(main())
