"""`rung export`: a model written back as ONNX at a level of the ladder.

rung export model.onnx --level core -o out.onnx    # the optimised core graph as ONNX
rung export model.pt2 --level core -o out.onnx     # a torch.export program, via core
rung export model.onnx --level onnx -o out.onnx    # the imported onnx dialect, round-tripped
"""

from __future__ import annotations

import argparse

from rung.errors import RungError

from .common import EXIT_OK, progress_display, write_atomically

LEVELS = ("core", "onnx")
"""The levels whose IR is expressible as ONNX; the kernel level is buffers and loops."""


def _cmd_export(args: argparse.Namespace) -> int:
    from rung.lowering.core_to_onnx import core_module_to_model, onnx_module_to_model
    from rung.runtime.levels import lower_reporting
    from rung.runtime.session import load_module

    if args.level not in LEVELS:
        if args.level == "kernel":
            raise RungError(
                "--level kernel cannot be exported as ONNX: kernel IR is buffers and loop "
                "nests, which ONNX cannot express; use --level core or --level onnx"
            )
        raise RungError(f"--level must be one of {', '.join(LEVELS)}, got '{args.level}'")
    _check_target(args.output, args.force)
    with progress_display() as progress:
        if progress is not None:
            progress("import", 0, None)
        module = load_module(args.model)
        module = lower_reporting(module, args.level, where=f"'{args.model}'", progress=progress)
        if progress is not None:
            progress("export", 0, None)
        if args.level == "core":
            model = core_module_to_model(module)
        else:
            model = onnx_module_to_model(module)
    data = model.SerializeToString()
    write_atomically(args.output, lambda f: f.write(data), inputs=(args.model,), force=args.force)
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    print(
        f"wrote {args.output}: {len(model.graph.node)} nodes, "
        f"{len(model.graph.initializer)} initializers, opset {opset}"
    )
    return EXIT_OK


def _check_target(output: str, force: bool) -> None:
    """Refuse early, before the lowering's work, an output that would be refused at the end."""
    from pathlib import Path

    target = Path(output)
    if target.is_dir():
        raise RungError(f"'{output}' is a directory; give a file name for the output")
    if target.exists() and not force:
        raise RungError(f"'{output}' exists; pass --force to overwrite it")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise RungError(f"cannot write '{output}': folder '{folder}' does not exist")


def register(sub: argparse._SubParsersAction) -> None:
    """Adds the `export` subcommand to `rung`'s parser."""
    p = sub.add_parser(
        "export",
        help="write a model back as ONNX at the core or onnx level",
        description="Import a model (.onnx, .onnxtxt, .pt2 or .mlir), lower it to LEVEL and "
        "write that IR as an ONNX model that onnxruntime and other ONNX tools run. "
        "--level core (the default) exports the optimised core graph (constants folded, "
        "batch norms folded into convolutions); --level onnx round-trips the imported onnx "
        "dialect. The model keeps its input and output names and symbolic dims; weights "
        "are initializers.",
    )
    p.add_argument("model", help="the model: .onnx, .onnxtxt, .pt2 or .mlir")
    p.add_argument(
        "--level",
        default="core",
        metavar="LEVEL",
        help="the level to export: core (default) or onnx",
    )
    p.add_argument("-o", "--output", required=True, metavar="FILE.onnx", help="output file")
    p.add_argument("--force", action="store_true", help="overwrite the output file if it exists")
    p.set_defaults(func=_cmd_export)
