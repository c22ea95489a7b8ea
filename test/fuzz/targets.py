"""The entry points under test, as they run inside a forked child.

Each takes a case folder holding the input file and returns what the child
classifies (see `sandbox.classify`): the CLIs return a `CliResult` (their own
exit code, output captured by the child), `run` returns the outputs or raises.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from .sandbox import REPO, CliResult

ENTRIES = ("import", "opt", "compile", "run")
WARM_MODEL = REPO / "examples" / "tiny_cnn.onnx"


def rung_import(path: Path) -> CliResult:
    """`rung import MODEL` (the importer and the printer), output to stdout."""
    from rung.tools import cli

    return CliResult(cli.main(["import", str(path)]))


def rung_opt(path: Path, flags: Sequence[str]) -> CliResult:
    """`opt FILE.mlir FLAGS` (parse, verify, lower, print)."""
    from rung.tools import opt

    return CliResult(opt.main([str(path), *flags]))


def rung_compile(path: Path, out: Path, flags: Sequence[str]) -> CliResult:
    """`rung compile MODEL -o DIR --force FLAGS` (lowering, C generation, cc)."""
    from rung.tools import cli

    return CliResult(cli.main(["compile", str(path), "-o", str(out), "--force", *flags]))


def session_run(session: object, feeds: Mapping[str, object]) -> object:
    """`InferenceSession.run(None, feeds)` on a session compiled before the fork."""
    return session.run(None, feeds)  # type: ignore[attr-defined]


def warm_up() -> None:
    """Import what every entry point needs, once in the parent, so that children start warm.

    Lowering the example model to kernel loads the importer, every lowering
    and the C emitter; children forked afterwards share those modules.
    """
    from rung.tools import cli, opt  # noqa: F401

    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(io.StringIO()):
        opt.main([str(WARM_MODEL), "--lower-to-kernel", "-o", f"{tmp}/k.mlir"])
        opt.main([str(WARM_MODEL), "-t", "c", "--lower-to-kernel", "-o", f"{tmp}/k.c"])
