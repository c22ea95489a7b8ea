"""What every rung command shares: error reporting and safe output files.

Bad input must end in one clear line and exit code 1, never a traceback, and
a failed command must not leave a half-written file behind. Tools wrap their
body in `run_tool` and write through `write_output`.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from xdsl.utils.exceptions import (
    DiagnosticException,
    ParseError,
    VerifyException,
)

from rung.dialects import parse_error_text
from rung.errors import RungError

EXIT_OK = 0
EXIT_ERROR = 1


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


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomically(
    path: str,
    write: Callable[[BinaryIO], None],
    *,
    inputs: tuple[str, ...] = (),
    force: bool = True,
) -> None:
    """Create or replace the file `path` with what `write` writes, all at once or not at all.

    The data goes to a temporary file in the same folder, which then replaces
    the target, so an interrupted or failed write never leaves a partial file.
    The result gets the usual permissions (0666 less the umask). Writing over
    one of the command's own input files is refused, and so is writing over any
    existing file unless `force` (a command's `--force`).
    """
    target = Path(path)
    for source in inputs:
        if source not in ("-", "") and Path(source).exists() and target.exists():
            if os.path.samefile(source, target):
                raise RungError(f"refusing to write output over the input file '{path}'")
    if target.is_dir():
        raise RungError(f"'{path}' is a directory; give a file name for the output")
    if not force and target.exists():
        raise RungError(f"'{path}' exists; pass --force to overwrite it")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise RungError(f"cannot write '{path}': folder '{folder}' does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


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
