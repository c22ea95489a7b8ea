"""What every rung command shares: error reporting and safe output files.

Bad input must end in one clear line and exit code 1, never a traceback, and
a failed command must not leave a half-written file behind. Tools wrap their
body in `run_tool` and write through `write_output`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from xdsl.utils.exceptions import (
    DiagnosticException,
    ParseError,
    VerifyException,
)

from rung.dialects import parse_error_text
from rung.errors import RungError
from rung.files import write_atomically

if TYPE_CHECKING:
    from rich.console import Console

EXIT_OK = 0
EXIT_ERROR = 1

ProgressCallback = Callable[[str, int, "int | None"], None]
"""(stage, done, total): `done` of `total` steps of `stage` finished (total None: no count);
what `rung.runtime` reports while it compiles (`rung.runtime.native.Progress`)."""


def error_message(err: BaseException) -> str:
    """The user-facing text of an error from rung or xDSL."""
    if isinstance(err, RungError):
        return str(err)
    if isinstance(err, ParseError):
        return parse_error_text(err)
    if isinstance(err, VerifyException | DiagnosticException):
        return str(err).strip()
    return str(err).strip() or type(err).__name__


def run_tool(tool: str, body: Callable[[], int]) -> int:
    """Run a command body, turning bad-input errors into `tool: error: ...` and exit 1.

    Any other exception is a bug in rung; it too ends in one line and exit 1
    (with the environment variable RUNG_TRACEBACK set, in its traceback).
    """
    try:
        return body()
    except (RungError, ParseError, VerifyException, DiagnosticException) as err:
        report(tool, error_message(err))
        return EXIT_ERROR
    except KeyboardInterrupt:
        report(tool, "interrupted")
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as err:  # noqa: BLE001 - the last resort: one line, never a traceback
        if os.environ.get("RUNG_TRACEBACK"):
            raise  # for whoever debugs rung itself
        report(tool, internal_error_message(err))
        return EXIT_ERROR


def internal_error_message(err: BaseException) -> str:
    """One line for an exception no part of rung turned into a RungError: a bug.

    Each kind of bad input has its own message where it is detected; this is
    the net under them, so that a user still gets one line and exit code 1.
    """
    lines = str(err).strip().splitlines()
    detail = f": {lines[0].strip()}" if lines else ""
    if len(detail) > 300:
        detail = detail[:300] + "..."
    return f"internal error: {type(err).__name__}{detail} (this is a bug in rung; please report it)"


def report(tool: str, message: str) -> None:
    lines = message.splitlines() or [""]
    print(f"{tool}: error: {lines[0]}", file=sys.stderr)
    for line in lines[1:]:
        print(line, file=sys.stderr)


def write_output(
    path: str | None, text: str, *, inputs: tuple[str, ...] = (), force: bool = True
) -> None:
    """Write `text` to `path` atomically (see `write_atomically`); stdout for None or '-'."""
    if path is None or path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    data = text.encode("utf-8")
    write_atomically(path, lambda f: f.write(data), inputs=inputs, force=force)


@contextlib.contextmanager
def progress_display(console: Console | None = None) -> Iterator[ProgressCallback | None]:
    """A callback that shows each stage of a long command on stderr, with a bar where the
    stage has a count; None (show nothing) unless stderr is a terminal.

    Output that goes to a file or a pipe stays as it was: logs and tests see no
    control codes. A stage is done when the next one starts, or the block ends
    without an error. `console` replaces the terminal (tests pass one that records).
    """
    if console is None:
        try:
            from rich.console import Console
        except ImportError:  # the display is a nicety: without rich, the command still runs
            yield None
            return
        if not sys.stderr.isatty():
            yield None
            return
        console = Console(stderr=True)
    from rich.progress import (
        BarColumn,
        Progress,
        SpinnerColumn,
        TaskID,
        TextColumn,
        TimeElapsedColumn,
    )

    bar = Progress(
        SpinnerColumn(finished_text="[green]done"),
        TextColumn("{task.description:<16}"),
        BarColumn(),
        TextColumn("{task.fields[count]:>9}"),
        TimeElapsedColumn(),
        console=console,
    )
    tasks: dict[str, TaskID] = {}
    order: list[str] = []

    def finish(stage: str) -> None:
        task = bar.tasks[tasks[stage]]
        total = task.total if task.total is not None else 1
        bar.update(tasks[stage], total=total, completed=total)

    def show(stage: str, done: int, total: int | None) -> None:
        if stage not in tasks:
            if order:
                finish(order[-1])
            tasks[stage] = bar.add_task(stage, total=total, count="")
            order.append(stage)
        count = f"{done}/{total}" if total is not None else ""
        # One more step than the count: a stage whose count is complete may still have
        # work left (the passes after a conversion), and shows as done only when it ends.
        steps = total + 1 if total is not None else None
        bar.update(tasks[stage], completed=done, total=steps, count=count)

    with bar:
        yield show
        if order:
            finish(order[-1])


# ---- arguments several commands share ---------------------------------------------------------


def add_load_level_argument(
    p: argparse.ArgumentParser, help: str = "a Python file or module that registers more levels"
) -> None:
    """`--load-level PLUGIN` (repeatable); `load_levels(args)` loads what was given."""
    p.add_argument("--load-level", action="append", default=[], metavar="PLUGIN", help=help)


def load_levels(args: argparse.Namespace) -> None:
    """Registers the levels of every `--load-level` plugin."""
    from rung.runtime.levels import load_level_plugin

    for plugin in args.load_level:
        load_level_plugin(plugin)


def add_input_arguments(p: argparse.ArgumentParser) -> None:
    """`--input NAME=FILE.npy` (repeatable), `--random-inputs` and `--seed`: how `run` and
    `compare` take a model's inputs."""
    p.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="NAME=FILE.npy",
        help="an input from a .npy (or .pb TensorProto) file; repeat for each input",
    )
    p.add_argument(
        "--random-inputs",
        action="store_true",
        help="generate the inputs not given with --input from their declared shapes and types",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")


def parse_assignments(items: Sequence[str], what: str, form: str = "NAME=VALUE") -> dict[str, str]:
    """`NAME=VALUE` options by name; a malformed or repeated one is an error naming it."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise RungError(f"{what} '{item}' must look like {form}")
        if name in out:
            raise RungError(f"{what} '{name}' is given twice")
        out[name] = value
    return out
