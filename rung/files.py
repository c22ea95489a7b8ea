"""Writing files all at once: every layer that writes a user's file (the tools' `-o`,
a session's optimized model, `rung view`'s page) shares one contract, so none of
them can leave a half-written file or overwrite one it was not asked to."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from rung.errors import RungError


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
