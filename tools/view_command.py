"""`rung view`: writes a model's graph, at any level, as one self-contained HTML page."""

from __future__ import annotations

import argparse
from pathlib import Path

from rung.tools.common import (
    EXIT_OK,
    add_load_level_argument,
    load_levels,
    progress_display,
)

SUFFIXES = (".onnx", ".onnxtxt", ".pt2", ".mlir")


def register(sub: argparse._SubParsersAction) -> None:
    """Adds the `view` subcommand to `rung`'s parser."""
    p = sub.add_parser(
        "view",
        help="write a model's graph (at any level) as one self-contained HTML page",
        description="Draw a model (.onnx, .onnxtxt, .pt2, or .mlir of any level) as a graph in "
        "one HTML file that needs no network: ops, edges, shapes and element types, locations; "
        "click a node for its attributes, open If/Loop bodies, search by name, drag to pan, "
        "wheel to zoom. Constants are listed with the ops that use them instead of drawn.",
    )
    p.add_argument("model", help="the model: .onnx, .onnxtxt, .pt2 or .mlir")
    p.add_argument(
        "--level",
        metavar="LEVEL",
        help="lower to this level first, e.g. core or kernel (default: the level of the file)",
    )
    p.add_argument("-o", "--output", required=True, metavar="FILE.html", help="the page to write")
    p.add_argument("--title", help="the page's title (default: the model's file name)")
    p.add_argument("--force", action="store_true", help="overwrite the output file if it exists")
    add_load_level_argument(p)
    p.set_defaults(func=_cmd_view)


def _cmd_view(args: argparse.Namespace) -> int:
    from rung.errors import RungError
    from rung.runtime.levels import level_of, lower_reporting
    from rung.runtime.session import load_module
    from rung.runtime.view import write_html

    model = Path(args.model)
    if model.suffix not in SUFFIXES:
        raise RungError(
            f"'{args.model}': expected a .onnx, .onnxtxt, .pt2 or .mlir file, got '{model.suffix}'"
        )
    if not model.is_file():
        raise RungError(f"no such file: '{args.model}'")
    out = Path(args.output)
    if out.exists() and model.exists() and out.resolve() == model.resolve():
        raise RungError(f"refusing to write output over the input file '{args.output}'")
    if out.exists() and not args.force:
        raise RungError(f"'{args.output}' exists; pass --force to overwrite it")
    load_levels(args)
    with progress_display() as progress:
        if progress is not None:
            progress("import", 0, None)
        module = load_module(model)
        if args.level is not None:
            module = lower_reporting(module, args.level, where=f"'{model.name}'", progress=progress)
            level = args.level
        else:
            level = level_of(module, f"'{model.name}'").name
        if progress is not None:
            progress("write page", 0, None)
        write_html(module, out, title=args.title or model.name, level=level, force=args.force)
    print(f"wrote {args.output}")
    return EXIT_OK
