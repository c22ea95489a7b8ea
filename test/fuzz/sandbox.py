"""Run one fuzz case in a forked child and classify how it ended.

A fuzz input may crash the interpreter (a segfault in generated C, an abort
in a native library) or never finish, so each case runs in a child made by
`os.fork()`: the parent survives, sees the signal or kills the child at its
deadline, and records the outcome. Forking keeps the parent's imports and
compiled sessions, which makes a case cost milliseconds instead of a new
interpreter.

Outcomes:
  ok         the target returned, or failed cleanly (a `RungError`, or a CLI
             run that exited 0, or 1 with an `error:` line)
  traceback  any other exception escaped the public API, a CLI run printed a
             traceback, or it exited with another code
  signal     the child died of a signal (SIGSEGV, SIGABRT, SIGBUS, ...)
  hang       the child did not finish within the time limit
"""

from __future__ import annotations

import faulthandler
import json
import os
import re
import resource
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import TracebackType

from rung.errors import RungError

OK, TRACEBACK, SIGNAL, HANG = "ok", "traceback", "signal", "hang"
OUTCOMES = (OK, TRACEBACK, SIGNAL, HANG)

REPO = Path(__file__).resolve().parents[2]
"""The repository root: frames under it (outside test/) are rung's own code."""

_HARNESS_DIR = Path(__file__).resolve().parent
_OUTPUT_LIMIT = 20_000
"""Characters of a child's captured output kept in a reproducer."""


@dataclass
class Outcome:
    """How one case ended, with what identifies the bug behind it."""

    kind: str
    message: str = ""
    """One line: the exception, the signal, or the time limit."""
    exc_type: str = ""
    site: str = ""
    """`path:line in function` of the innermost frame in rung's code (or anywhere)."""
    detail: str = ""
    """The traceback, or the tail of what the child printed."""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.kind == OK

    def signature(self) -> str:
        """What groups the outcomes of one bug: its kind, exception type and site (no line)."""
        site = re.sub(r":\d+ in ", " in ", self.site)
        return " | ".join(p for p in (self.kind, self.exc_type, site) if p)

    def to_json(self) -> dict[str, object]:
        return asdict(self)


@dataclass
class CliResult:
    """What a command-line entry point returned: its exit code (output is captured)."""

    code: int


@dataclass
class Limits:
    """What one child may use: seconds before it counts as hung, and address space beyond
    what the parent held when it forked."""

    timeout: float = 20.0
    memory: int = 4 << 30
    environ: dict[str, str] = field(default_factory=lambda: {"RUNG_TRACEBACK": "1"})
    """Variables set in the child before the target runs (by default: rung's CLIs let an
    internal error escape as the exception it is, instead of one `internal error` line)."""


Target = Callable[[], object]


# ---- in the child -------------------------------------------------------------------


def _frames(tb: TracebackType | None) -> list[traceback.FrameSummary]:
    return list(traceback.extract_tb(tb))


def _is_rung_file(filename: str) -> bool:
    if not os.path.isabs(filename):  # "<frozen runpy>", "<string>"
        return False
    try:
        rel = Path(filename).resolve().relative_to(REPO)
    except ValueError:
        return False
    return rel.parts[0] != "test"


def site_of(frames: Sequence[tuple[str, int, str]]) -> str:
    """The innermost frame in rung's code, else the innermost frame, as `file:line in func`."""
    if not frames:
        return ""
    chosen = next((f for f in reversed(frames) if _is_rung_file(f[0])), frames[-1])
    filename, line, func = chosen
    try:
        filename = str(Path(filename).resolve().relative_to(REPO))
    except ValueError:
        filename = re.sub(r".*/site-packages/", "", filename)
    return f"{filename}:{line} in {func}"


def _exception_outcome(err: BaseException) -> Outcome:
    frames = [(f.filename, f.lineno or 0, f.name) for f in _frames(err.__traceback__)]
    first = (str(err).strip().splitlines() or [""])[0][:300]
    return Outcome(
        TRACEBACK,
        message=f"{type(err).__name__}: {first}",
        exc_type=type(err).__name__,
        site=site_of(frames),
        detail="".join(traceback.format_exception(err))[-_OUTPUT_LIMIT:],
    )


_TRACEBACK_LINE = "Traceback (most recent call last)"
_FRAME = re.compile(r'File "([^"]+)", line (\d+)(?:,)? in (\S+)')


def _printed_traceback(output: str) -> Outcome | None:
    """A traceback the target printed itself (a CLI that formats and swallows one)."""
    at = output.find(_TRACEBACK_LINE)
    if at < 0:
        return None
    text = output[at:]
    frames = [(f, int(n), fn) for f, n, fn in _FRAME.findall(text)]
    last = next(
        (
            ln
            for ln in reversed(text.splitlines())
            if re.match(r"^[A-Za-z_.]+(Error|Exception)", ln)
        ),
        "printed a traceback",
    )
    return Outcome(
        TRACEBACK,
        message=last[:300],
        exc_type=last.split(":")[0] if ":" in last else "printed traceback",
        site=site_of(frames),
        detail=text[-_OUTPUT_LIMIT:],
    )


_INTERNAL = re.compile(r"^\S+: error: internal error: (\w+)(.*)$", re.M)


def _internal_error(output: str) -> Outcome | None:
    """A CLI's last-resort line for an exception it did not expect: a bug, like a traceback."""
    found = _INTERNAL.search(output)
    if found is None:
        return None
    return Outcome(
        TRACEBACK,
        message=f"{found.group(1)}{found.group(2)}"[:300],
        exc_type=found.group(1),
        detail=output[-_OUTPUT_LIMIT:],
    )


def classify(target: Target, output: Callable[[], str]) -> Outcome:
    """Run `target` here and classify its result; `output` reads what it printed so far."""
    try:
        result = target()
    except RungError as err:
        return Outcome(OK, message=f"{type(err).__name__}: {str(err)[:300]}")
    except BaseException as err:  # noqa: B036 - anything else escaping is the finding
        return _exception_outcome(err)
    if isinstance(result, CliResult):
        sys.stdout.flush()
        sys.stderr.flush()
        text = output()
        printed = _printed_traceback(text) or _internal_error(text)
        if printed is not None:
            return printed
        if result.code == 0:
            return Outcome(OK, message="exit 0")
        if result.code == 1 and re.search(r"^\S+: error: ", text, re.M):
            line = re.search(r"^\S+: error: .*$", text, re.M)
            return Outcome(OK, message=line.group(0)[:300] if line else "exit 1")
        return Outcome(
            TRACEBACK,
            message=f"exit code {result.code} without an 'error:' line",
            exc_type=f"exit {result.code}",
            detail=text[-_OUTPUT_LIMIT:],
        )
    return Outcome(OK, message="returned")


def _address_space() -> int:
    """Bytes of address space this process holds now (0 where /proc cannot tell).

    The child's limit counts from here: a parent that has loaded torch, compiled
    models and started OpenMP threads (each with its stacks and malloc arenas) may
    already hold more than the limit, and a cap below that fails the child's first
    allocation, before its target runs."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE")


def _child(target: Target, limits: Limits, out_path: str, result_path: str) -> None:
    """The forked child's whole life: isolate, run, write the outcome, `_exit`."""
    code = 0
    try:
        os.setpgid(0, 0)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        fd = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        sys.stdout = open(1, "w", closefd=False, errors="backslashreplace")  # noqa: SIM115
        sys.stderr = open(2, "w", closefd=False, errors="backslashreplace")  # noqa: SIM115
        empty, writer = os.pipe()  # stdin at end of file, needing no device file
        os.close(writer)
        os.dup2(empty, 0)
        os.close(empty)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if limits.memory:
            cap = _address_space() + limits.memory
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        os.environ.update(limits.environ)
        faulthandler.enable(file=sys.stderr, all_threads=True)
        faulthandler.dump_traceback_later(limits.timeout, exit=False, file=sys.stderr)

        def read_output() -> str:
            return Path(out_path).read_text(errors="replace")

        outcome = classify(target, read_output)
        faulthandler.cancel_dump_traceback_later()
        Path(result_path).write_text(json.dumps(outcome.to_json()))
    except BaseException:  # noqa: B036 - the child must never return into the parent's code
        try:
            traceback.print_exc()
        finally:
            code = 70
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


# ---- in the parent ------------------------------------------------------------------


@dataclass
class _Running:
    pid: int
    started: float
    folder: Path
    index: int


def _read_tail(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    return data[-_OUTPUT_LIMIT:].decode("utf-8", errors="replace")


def _dumped_site(output: str) -> str:
    """The site in a faulthandler dump (innermost frame first) of the current thread."""
    at = output.rfind("Current thread")
    block = output[at:] if at >= 0 else output
    block = block.split("\n\n")[0]
    frames = [(f, int(n), fn) for f, n, fn in _FRAME.findall(block)]
    rung_frames = [f for f in frames if _is_rung_file(f[0])]
    chosen = rung_frames[0] if rung_frames else (frames[0] if frames else None)
    return site_of([chosen]) if chosen else ""


def _finish(run: _Running, status: int, limits: Limits) -> Outcome:
    seconds = time.monotonic() - run.started
    output = _read_tail(run.folder / "output.txt")
    result = run.folder / "result.json"
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return Outcome(
            SIGNAL,
            message=f"killed by {name}",
            exc_type=name,
            site=_dumped_site(output),
            detail=output,
            seconds=seconds,
        )
    if result.is_file():
        data = json.loads(result.read_text())
        data["seconds"] = seconds
        return Outcome(**data)
    code = os.WEXITSTATUS(status)
    return Outcome(
        TRACEBACK,
        message=f"the child exited with code {code} before reporting",
        exc_type=f"process exit {code}",
        site=_dumped_site(output),
        detail=output,
        seconds=seconds,
    )


def _hang(run: _Running, limits: Limits) -> Outcome:
    try:
        os.killpg(run.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.waitpid(run.pid, 0)
    output = _read_tail(run.folder / "output.txt")
    return Outcome(
        HANG,
        message=f"no result within {limits.timeout:g} s",
        exc_type="timeout",
        site=_dumped_site(output),
        detail=output,
        seconds=time.monotonic() - run.started,
    )


def _start(target: Target, limits: Limits, folder: Path, index: int) -> _Running:
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("output.txt", "result.json"):
        (folder / name).unlink(missing_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        _child(target, limits, str(folder / "output.txt"), str(folder / "result.json"))
    return _Running(pid, time.monotonic(), folder, index)


def run_all(
    targets: Iterator[Target],
    limits: Limits,
    *,
    jobs: int = 1,
    work: Path | None = None,
    deadline: float | None = None,
) -> Iterator[tuple[int, Outcome]]:
    """Run each target in a forked child, at most `jobs` at a time; yield (index, outcome).

    Targets are taken lazily; none is started after `deadline` (a `time.monotonic()`
    value). A child past its time limit is killed with its process group (a
    compiler it started goes too) and reported as a hang.
    """
    own = work is None
    folder = Path(tempfile.mkdtemp(prefix="rung-fuzz-")) if work is None else work
    running: list[_Running] = []
    pending = iter(enumerate(targets))
    exhausted = False
    try:
        while running or not exhausted:
            while not exhausted and len(running) < jobs:
                if deadline is not None and time.monotonic() >= deadline:
                    exhausted = True
                    break
                item = next(pending, None)
                if item is None:
                    exhausted = True
                    break
                index, target = item
                slot = next(
                    i for i in range(jobs) if all(r.folder.name != f"slot{i}" for r in running)
                )
                running.append(_start(target, limits, folder / f"slot{slot}", index))
            time.sleep(0.002)
            for run in list(running):
                pid, status = os.waitpid(run.pid, os.WNOHANG)
                if pid:
                    outcome = _finish(run, status, limits)
                elif time.monotonic() - run.started > limits.timeout + 2.0:
                    outcome = _hang(run, limits)
                else:
                    continue
                running.remove(run)
                yield run.index, outcome
    finally:
        for run in running:
            try:
                os.killpg(run.pid, signal.SIGKILL)
                os.waitpid(run.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        if own:
            import shutil

            shutil.rmtree(folder, ignore_errors=True)


def run_one(target: Target, limits: Limits) -> Outcome:
    """One target in a forked child (see `run_all`)."""
    for _, outcome in run_all(iter([target]), limits):
        return outcome
    raise AssertionError("run_all yielded nothing")
