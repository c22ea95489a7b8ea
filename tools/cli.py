"""`rung`: the user-facing command, one subcommand per job.

    rung import model.onnx -o model.mlir     # ONNX → onnx-dialect MLIR
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from .common import EXIT_OK, run_tool, write_output


def _cmd_import(args: argparse.Namespace) -> int:
    from rung.dialects import print_module
    from rung.importers.onnx import import_model

    module = import_model(args.model)
    text = print_module(module, generic=args.print_op_generic)
    write_output(args.output, text, inputs=(args.model,))
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rung", description="Carry deep-learning models down a ladder of MLIR dialects."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser(
        "import",
        help="import an ONNX model (.onnx or .onnxtxt) as onnx-dialect MLIR",
        description="Import an ONNX model as MLIR in rung's onnx dialect. Every op is brought "
        "to its latest opset; the original opsets are recorded on the module.",
    )
    p.add_argument("model", help="the model: a binary .onnx file or textual .onnxtxt")
    p.add_argument("-o", "--output", help="output file (default: standard output)")
    p.add_argument(
        "--print-op-generic", action="store_true", help="print ops in MLIR's generic syntax"
    )
    p.set_defaults(func=_cmd_import)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    return run_tool("rung", lambda: func(args))


if __name__ == "__main__":
    sys.exit(main())
