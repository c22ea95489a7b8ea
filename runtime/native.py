"""Compiling generated C into a shared library, caching it, loading it, running it.

    program = generate_c(kernel_module)          # rung.lowering.kernel_to_c
    model = compile_program(program)             # cc, cached by content hash
    outputs = model.run([x, y])                  # numpy in, numpy out

    result = compile_model("model.onnx", "out/")  # `rung compile`: files + lib into out/
    outputs = run_in_harness(program, [x, y])     # sanitizer build, run as its own process

The compiler is `$CC`, else `cc`. Libraries are cached under `$RUNG_CACHE_DIR`
(default `~/.cache/rung`) in a folder named by the hash of everything that
goes into the build (sources, runtime headers, weights, compiler and flags),
so compiling the same model twice costs one hash. Builds write to a staging
folder that is renamed into place, so a cache entry is always complete, even
with several processes compiling at once. A staging folder is removed however
its build ends (an error, Ctrl-C, SIGTERM); one that a killed process left
(`.<label>.rung-staging-<host>-<pid>-<random>`) is removed by the next build
in that folder (`remove_stale_staging`).

A sanitizer build (`-fsanitize=address,undefined`) cannot be loaded into the
Python process: the ASan runtime must come first in the process. Instead,
`run_in_harness` links the model's C with `rung_harness.c` (a `main` that
reads raw input files and writes raw output files) into an executable and
runs it; any sanitizer finding raises `SanitizerError` with the report.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import hashlib
import math
import os
import platform
import re
import shlex
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

import rung.runtime.native_values as native_values
from rung.errors import RungError

from .collection import rare_full_collections
from .levels import EvaluationError, Progress
from .native_values import RungTensor

if TYPE_CHECKING:
    from onnx import ModelProto

    from rung.lowering.kernel_to_c import CProgram

MAX_RANK = 8

OPT_FLAGS = ("-O3", "-march=native", "-fno-math-errno", "-fopenmp-simd")
DEBUG_FLAGS = (
    "-O1",
    "-g",
    "-fno-omit-frame-pointer",
    "-fsanitize=address,undefined",
    "-fno-sanitize-recover=all",
    "-fopenmp-simd",
)

SANITIZER_ENV = {
    "ASAN_OPTIONS": "detect_leaks=1:abort_on_error=1",
    "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1",
}
"""The environment of a harness run: stop at the first finding, and look for leaks."""

HARNESS = "rung_harness.c"
"""The test harness's C file, kept beside the runtime headers (see `harness_source`)."""


class CompileError(RungError):
    """The C compiler failed or is missing."""


class SanitizerError(RungError):
    """A sanitizer build found a problem (its report is the message)."""


@dataclass
class CacheStats:
    """How often the cache answered and how often the compiler ran (in this process)."""

    hits: int = 0
    builds: int = 0
    runtime_builds: int = 0
    """Builds of the prebuilt runtime object (`runtime_object`), not counted in `builds`."""


STATS = CacheStats()
_STATS_LOCK = threading.Lock()


# ---- staging folders ---------------------------------------------------------------------------

STAGING_TAG = "rung-staging"
"""In the name of every staging folder: `.<label>.rung-staging-<host>-<pid>-<random>`."""

STALE_AFTER = 24 * 3600.0
"""Seconds after which a staging folder is stale even if its process may still run (the
pid may have been reused, or the folder is from another machine sharing the cache)."""

_STAGING_NAME = re.compile(
    rf"^\.(?P<label>[^/]*)\.{STAGING_TAG}-(?P<host>[0-9a-f]{{8}})-(?P<pid>[0-9]+)-"
    r"[a-z0-9_]{8}$"
)


@functools.cache
def _host_tag() -> str:
    """8 hex digits naming this machine: a pid only says something about its own machine."""
    return hashlib.sha256(platform.node().encode()).hexdigest()[:8]


def new_staging_folder(parent: Path, label: str) -> Path:
    """A new, empty staging folder in `parent`, named after `label`, this machine and process.

    Builds happen in such a folder, renamed into place when complete. The name is
    what lets a later run recognise and remove a folder a killed process left
    behind (`remove_stale_staging`), and nothing else.
    """
    remove_stale_staging(parent)
    prefix = f".{label}.{STAGING_TAG}-{_host_tag()}-{os.getpid()}-"
    return Path(tempfile.mkdtemp(prefix=prefix, dir=parent))


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # someone else's process, or a pid we cannot ask about: not ours to judge
    return True


def is_stale_staging(path: Path, now: float | None = None) -> bool:
    """Whether `path` is a staging folder of ours whose process is gone (or that is old).

    Ours: the exact name pattern, a real folder (not a link), owned by this user.
    Gone: made on this machine by a process that no longer exists; any machine's
    folder is stale after STALE_AFTER seconds.
    """
    match = _STAGING_NAME.match(path.name)
    if match is None:
        return False
    try:
        info = path.lstat()
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        return False
    age = (time.time() if now is None else now) - info.st_mtime
    if age > STALE_AFTER:
        return True
    return match["host"] == _host_tag() and not _process_alive(int(match["pid"]))


def remove_stale_staging(parent: Path) -> list[Path]:
    """Remove the stale staging folders in `parent` (see `is_stale_staging`); returns them."""
    removed: list[Path] = []
    try:
        entries = [Path(e.path) for e in os.scandir(parent) if e.name.startswith(".")]
    except OSError:
        return removed
    for path in entries:
        if is_stale_staging(path):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


class _Terminated(BaseException):
    """SIGTERM, raised in the main thread while a staging folder exists."""


@contextlib.contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """Make SIGTERM unwind the block (running its `finally`s), then end the process by it.

    Only in the main thread and where nobody else handles SIGTERM: the process
    still dies of the signal, as its sender meant, just after cleaning up.
    """
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
    ):
        yield
        return

    def raise_terminated(signum: int, frame: object) -> None:
        raise _Terminated

    signal.signal(signal.SIGTERM, raise_terminated)
    try:
        yield
    except _Terminated:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        raise
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextlib.contextmanager
def staging(make: Callable[[], Path]) -> Iterator[Path]:
    """The folder `make` creates, removed when the block ends, however it ends.

    An exception, Ctrl-C or SIGTERM removes it; SIGKILL cannot be caught, and
    the next run's `remove_stale_staging` removes what it left.
    """
    with _sigterm_unwinds():
        tmp = make()
        try:
            yield tmp
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)


# ---- the compiler -----------------------------------------------------------------------------


def cache_dir() -> Path:
    root = os.environ.get("RUNG_CACHE_DIR")
    return Path(root) if root else Path.home() / ".cache" / "rung"


def compiler() -> list[str]:
    """The C compiler command: `$CC` (which may carry words, e.g. `ccache gcc`), else `cc`."""
    cc = os.environ.get("CC", "").strip() or "cc"
    try:
        words = shlex.split(cc)
    except ValueError as err:
        raise CompileError(f"cannot parse $CC '{cc}': {err}") from None
    found = shutil.which(words[0]) if words else None
    if found is None:
        raise CompileError(
            f"no C compiler: '{cc}' was not found (set $CC to a C compiler such as gcc or clang)"
        )
    # Absolute, so that builds can run inside their folder with short file names.
    return [os.path.abspath(found), *words[1:]]


_OPENMP: dict[tuple[str, ...], bool] = {}
_OPENMP_LOCK = threading.Lock()


def openmp_supported(cc: Sequence[str]) -> bool:
    """Whether `cc` builds with `-fopenmp` (clang without libomp does not); probed once."""
    key = tuple(cc)
    with _OPENMP_LOCK:
        if key not in _OPENMP:
            with tempfile.TemporaryDirectory(prefix="rung-omp-") as tmp:
                src = Path(tmp) / "probe.c"
                src.write_text(
                    "#include <omp.h>\nint probe(void) { return omp_get_max_threads(); }\n"
                )
                try:
                    proc = subprocess.run(
                        [
                            *cc,
                            "-fopenmp",
                            "-fPIC",
                            "-shared",
                            str(src),
                            "-o",
                            str(Path(tmp) / "probe.so"),
                        ],
                        capture_output=True,
                        timeout=120,
                    )
                    _OPENMP[key] = proc.returncode == 0
                except (OSError, subprocess.TimeoutExpired):
                    _OPENMP[key] = False
        return _OPENMP[key]


def build_flags(openmp: bool, debug: bool = False, *, shared: bool = True) -> list[str]:
    """Flags of a build; OpenMP only if the program uses it and the compiler has it.

    Without OpenMP the `#pragma omp` lines are ignored and the loops run serially.
    """
    flags = ["-std=gnu11"]
    if shared:
        flags += ["-fPIC", "-shared"]
    flags += list(DEBUG_FLAGS if debug else OPT_FLAGS)
    if not debug and _flag_supported(compiler(), NO_HALF_ARITHMETIC, quiet=True):
        flags.append(NO_HALF_ARITHMETIC)
    if openmp and openmp_supported(compiler()):
        flags.append("-fopenmp")
    return flags


NO_HALF_ARITHMETIC = "-mno-avx512fp16"
"""Half types compute as float and round to half after each op (`rung_round_f16`). On a CPU
with AVX512-FP16, `-march=native` lets gcc compute some of those steps with half-precision
instructions instead, and ONNX's fp16 Attention cases then differ from the float path (and
from ONNX's expected outputs) by an ulp. Without them every CPU gives the same results."""


def _run_compiler(cmd: list[str], what: Path, *, runtime: bool = False) -> None:
    """Run one compiler command in the folder of `what` (file names in `cmd` are relative);
    `runtime`: it builds the runtime object (counted apart)."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, cwd=what.parent)
    except FileNotFoundError:
        raise CompileError(f"no C compiler: '{cmd[0]}' was not found (set $CC)") from None
    except PermissionError:
        raise CompileError(f"cannot run the C compiler '{cmd[0]}': permission denied") from None
    except subprocess.TimeoutExpired:
        raise CompileError(f"the C compiler took too long on {what.name}") from None
    with _STATS_LOCK:
        if runtime:
            STATS.runtime_builds += 1
        else:
            STATS.builds += 1
    if proc.returncode != 0:
        lines = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
        detail = "\n".join(lines[:20]) + ("\n..." if len(lines) > 20 else "")
        raise CompileError(
            f"the C compiler '{cmd[0]}' failed (exit code {proc.returncode}) on {what.name}"
            + (f":\n{detail}" if detail else "")
            + f"\ncommand: {shlex.join(cmd)}"
        )


def runtime_headers() -> list[Path]:
    """The C runtime's headers, which every generated file needs beside it."""
    from rung.lowering.kernel_to_c.emit import RUNTIME_HEADER

    return sorted(RUNTIME_HEADER.parent.glob("*.h"))


def write_sources(program: CProgram, folder: Path) -> list[Path]:
    """Write `<prefix>.c`, `<prefix>.h`, the runtime headers and `<prefix>.weights` (if any)."""
    p = program.prefix
    folder.mkdir(parents=True, exist_ok=True)
    files = [folder / f"{p}.c", folder / f"{p}.h"]
    files[0].write_text(program.source)
    files[1].write_text(program.header)
    for header in runtime_headers():
        files.append(folder / header.name)
        shutil.copyfile(header, files[-1])
    if program.weights:
        files.append(folder / f"{p}.weights")
        files[-1].write_bytes(program.weights)
    return files


def build_library(program: CProgram, folder: Path, debug: bool = False) -> Path:
    """Compile the sources written in `folder` into `lib<prefix>.so` there: an optimized
    build declares the runtime's entry points and links the prebuilt runtime object; a
    debug build compiles them with the model, under the sanitizers."""
    p = program.prefix
    out = folder / f"lib{p}.so"
    src = folder / f"{p}.c"
    flags = [*build_flags(program.uses_openmp, debug), *parallel_flags(program, debug)]
    prebuilt: list[str] = []
    if not debug:
        prebuilt = [PREBUILT_DEFINE, str(runtime_object(program.uses_openmp))]
    cmd = [*compiler(), *flags, src.name, *prebuilt, "-o", out.name, "-lm"]
    _run_compiler(cmd, src)
    return out


PREBUILT_DEFINE = "-DRUNG_PREBUILT_RUNTIME"
"""A model's file compiled with this only declares the runtime's `RUNG_API` functions."""

RUNTIME_SOURCE = "rung_runtime.c"
"""Beside the runtime headers: the source of the prebuilt runtime object."""

_RUNTIME_LOCK = threading.Lock()
_RUNTIME_BUILT: dict[str, Path] = {}
"""The runtime objects this process built or found, by cache entry: a process that moves
to another cache folder (each test has its own) copies its object rather than compiling
it again."""


def _runtime_source() -> Path:
    from rung.lowering.kernel_to_c.emit import RUNTIME_HEADER

    source = RUNTIME_HEADER.with_name(RUNTIME_SOURCE)
    if not source.is_file():
        raise CompileError(f"the runtime source {RUNTIME_SOURCE} is missing from rung's install")
    return source


def runtime_object(openmp: bool) -> Path:
    """The runtime's entry points (the GEMM) compiled once for this machine, compiler and
    optimized flags (with or without OpenMP) and cached: `rung_runtime.o`, which every
    optimized model library links. gcc took 0.8 s on them in every model's build, a
    two-layer MLP's whole build and a quarter of ResNet-50's."""
    source = _runtime_source()
    flags = [*build_flags(openmp, shared=False), "-fPIC"]
    h = hashlib.sha256()
    for part in ["runtime", _host(), " ".join(compiler() + flags), source.read_text()] + [
        header.read_text() for header in runtime_headers()
    ]:
        h.update(part.encode())
        h.update(b"\0")
    folder = cache_dir() / f"runtime-{h.hexdigest()[:24]}"
    target = folder / "rung_runtime.o"
    with _RUNTIME_LOCK:  # threads of one process build it once
        if target.exists():
            _RUNTIME_BUILT.setdefault(folder.name, target)
            return target

        with staging(lambda: _cache_staging(folder.parent, "runtime")) as tmp:
            earlier = _RUNTIME_BUILT.get(folder.name)
            if earlier is not None and earlier.is_file():
                shutil.copyfile(earlier, tmp / target.name)  # built into another cache folder
            else:
                shutil.copyfile(source, tmp / source.name)
                for header in runtime_headers():
                    shutil.copyfile(header, tmp / header.name)
                cmd = [*compiler(), *flags, "-c", source.name, "-o", target.name]
                _run_compiler(cmd, tmp / source.name, runtime=True)
            try:
                tmp.rename(folder)
            except OSError:
                # Another process finished the same object first; it is just as good.
                if not target.exists():
                    raise
        _RUNTIME_BUILT[folder.name] = target
    return target


PARALLEL_PARTS = 2
"""The fewest parts (`CProgram.parts`) of a program that gcc compiles in parallel. With
two, ResNet-50's C (six parts) built in 1.2 s instead of 1.7 on two cores, DenseNet-121's
in 3.5 instead of 8.5, and a generated model of 5,000 tiny nodes (its parts mostly cold,
built for size) in 6.6 s instead of 9.8."""

LTO_PARTITIONS_PER_JOB = 4
"""gcc's `lto-partitions`: so many partitions per process, so that the processes finish
together however unequal the parts (at gcc's default, a minimum partition size of
10,000 of its estimated instructions, ResNet-50's parts were one partition, built by
one process)."""

_FLAGS: dict[tuple[str, ...], bool] = {}


def parallel_flags(program: CProgram, debug: bool = False) -> list[str]:
    """`-flto=N`, so that gcc optimizes a program's parts (the functions `_run` is split
    into) in N processes, one per core, after reading the file once: the code is the
    same, built in less time. Not for a program of fewer parts than
    `PARALLEL_PARTS` (nothing to share), a debug build, one core, or a compiler
    without it."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if debug or program.parts < PARALLEL_PARTS or (cores or 1) < 2:
        return []
    jobs = min(cores or 1, 8)
    flag = f"-flto={jobs}"
    if not _flag_supported(compiler(), flag):
        return []
    partitions = [
        f"--param=lto-partitions={LTO_PARTITIONS_PER_JOB * jobs}",
        "--param=lto-min-partition=100",
    ]
    if all(_flag_supported(compiler(), p, quiet=True) for p in partitions):
        return [flag, *partitions]
    return [flag]


def _flag_supported(cc: Sequence[str], flag: str, *, quiet: bool = False) -> bool:
    """Whether `cc` builds a shared library with `flag` (clang takes no job count after
    `-flto`; an x86 option is an error elsewhere), and with `quiet` says nothing about it
    (clang only warns of an option it ignores); probed once."""
    key = (*cc, flag, str(quiet))
    with _OPENMP_LOCK:
        if key not in _FLAGS:
            with tempfile.TemporaryDirectory(prefix="rung-flag-") as tmp:
                src = Path(tmp) / "probe.c"
                src.write_text("int probe(int x) { return x + 1; }\n")
                cmd = [*cc, flag, "-O2", "-fPIC", "-shared", str(src), "-o", f"{tmp}/probe.so"]
                try:
                    proc = subprocess.run(cmd, capture_output=True, timeout=120)
                    ok = proc.returncode == 0 and not (quiet and proc.stderr.strip())
                except (OSError, subprocess.TimeoutExpired):
                    ok = False
                _FLAGS[key] = ok
        return _FLAGS[key]


def harness_source() -> Path:
    """`rung_harness.c`: the `main` that runs a model from raw files (see `run_in_harness`)."""
    from rung.lowering.kernel_to_c.emit import RUNTIME_HEADER

    path = RUNTIME_HEADER.with_name(HARNESS)
    if not path.is_file():
        raise CompileError(f"the test harness source {HARNESS} is missing from rung's install")
    return path


def build_harness(program: CProgram, folder: Path, debug: bool = True) -> Path:
    """Link the sources written in `folder` with the harness into `<prefix>_harness` there."""
    p = program.prefix
    harness = folder / HARNESS
    if not harness.exists():
        shutil.copyfile(harness_source(), harness)
    out = folder / f"{p}_harness"
    src = folder / f"{p}.c"
    # `linux` and `unix` are predefined in GNU C; the harness pastes the prefix into names.
    cmd = [
        *compiler(),
        *build_flags(program.uses_openmp, debug, shared=False),
        "-Ulinux",
        "-Uunix",
        f"-DRUNG_PREFIX={p}",
        "-include",
        f"{p}.h",
        src.name,
        harness.name,
        "-o",
        out.name,
        "-lm",
    ]
    _run_compiler(cmd, src)
    return out


@functools.cache
def _host() -> str:
    """The CPU a `-march=native` build is for, so a cache shared between machines stays valid."""
    text = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("model name", "flags")):
                text += line
            if line.strip() == "":
                break
    return platform.machine() + hashlib.sha256(text.encode()).hexdigest()[:16]


def _digest(program: CProgram, debug: bool, kind: str = "lib") -> str:
    h = hashlib.sha256()
    parts = [
        kind,
        _host(),
        program.prefix,
        program.source,
        program.header,
        *(header.read_text() for header in runtime_headers()),
        _runtime_source().read_text(),
        " ".join(compiler() + build_flags(program.uses_openmp, debug)),
    ]
    if kind == "harness":
        parts.append(harness_source().read_text())
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    h.update(hashlib.sha256(program.weights).digest())
    return h.hexdigest()[:24]


def _cache_staging(cache: Path, label: str) -> Path:
    """A new staging folder in the cache folder `cache`, which is made if need be."""
    try:
        cache.mkdir(parents=True, exist_ok=True)
        return new_staging_folder(cache, label)
    except OSError as err:
        raise CompileError(f"cannot use the cache folder '{cache}': {err}") from None


def _cached(program: CProgram, debug: bool, kind: str) -> Path:
    """The cache folder of one build (`lib` or `harness`), building it if it is not there."""
    folder = cache_dir() / _digest(program, debug, kind)
    target = folder / (f"lib{program.prefix}.so" if kind == "lib" else f"{program.prefix}_harness")
    if target.exists():
        with _STATS_LOCK:
            STATS.hits += 1
        return folder

    with staging(lambda: _cache_staging(folder.parent, "build")) as tmp:
        write_sources(program, tmp)
        if kind == "lib":
            build_library(program, tmp, debug)
        else:
            build_harness(program, tmp, debug)
        try:
            tmp.rename(folder)
        except OSError:
            # Another process finished the same entry first; its files are just as good.
            if not target.exists():
                raise
    return folder


def cached_build(program: CProgram, debug: bool = False) -> Path:
    """The folder holding the built library of `program`, compiling it if not cached."""
    return _cached(program, debug, "lib")


def cached_harness(program: CProgram, debug: bool = True) -> Path:
    """The harness executable of `program` (a sanitizer build by default), cached."""
    return _cached(program, debug, "harness") / f"{program.prefix}_harness"


# ---- inputs and outputs -------------------------------------------------------------------------


@dataclass
class _Arg:
    name: str
    dtype: np.dtype
    code: int
    shape: list[int]
    element: object = None
    """The port's element type; for sequences, optionals and strings (`native_values`)
    the only one of these fields that counts."""

    is_value: bool = field(init=False)
    """Whether the port goes through `native_values` (computed once: runs check it often)."""

    static_shape: tuple[int, ...] | None = field(init=False)
    """The shape, when no dim is dynamic: an input's check is then one tuple comparison."""

    def __post_init__(self) -> None:
        self.is_value = native_values.is_value(self.element)  # type: ignore[arg-type]
        self.static_shape = None if any(d < 0 for d in self.shape) else tuple(self.shape)


def _args(items: Sequence[tuple[str, object, list[int]]]) -> list[_Arg]:
    from rung.dialects.dtypes import numpy_dtype
    from rung.dialects.onnx.dtypes import ONNX_FROM_MLIR

    return [
        _Arg(n, np.dtype(object), -1, s, t)
        if native_values.is_value(t)  # type: ignore[arg-type]
        else _Arg(n, numpy_dtype(t), ONNX_FROM_MLIR[t], s, t)  # type: ignore[arg-type]
        for n, t, s in items
    ]


def _check_inputs(args: Sequence[_Arg], inputs: Sequence[object]) -> list[Any]:
    """The inputs as C-contiguous arrays (sequences, optionals and strings as
    `native_values.check` gives them), checked against the signature (same errors as C)."""
    if len(inputs) != len(args):
        names = ", ".join(f"'{a.name}'" for a in args) or "none"
        raise EvaluationError(f"expected {len(args)} inputs ({names}), got {len(inputs)}")
    arrays = []
    for i, (arg, value) in enumerate(zip(args, inputs, strict=True)):
        if arg.is_value:
            what = f"input {i} ('{arg.name}')"
            arrays.append(native_values.check(arg.element, arg.shape, value, what))  # type: ignore[arg-type]
            continue
        # asarray(order="C") keeps 0-d arrays 0-d (ascontiguousarray makes them 1-d).
        a = value if type(value) is np.ndarray and value.flags.c_contiguous else None
        if a is None:
            a = np.asarray(value, order="C")
        elif a.shape == arg.static_shape and a.dtype == arg.dtype:
            arrays.append(a)  # the usual case, checked at once
            continue
        if a.dtype != arg.dtype:
            raise EvaluationError(f"input {i} ('{arg.name}') must be of {arg.dtype}, got {a.dtype}")
        if a.ndim != len(arg.shape) or any(
            d >= 0 and d != n for d, n in zip(arg.shape, a.shape, strict=True)
        ):
            want = "x".join("?" if d < 0 else str(d) for d in arg.shape) or "a scalar"
            raise EvaluationError(
                f"input {i} ('{arg.name}') must have shape {want}, got {list(a.shape)}"
            )
        arrays.append(a)
    return arrays


class NativeModel:
    """A loaded model library: feed numpy arrays, get numpy arrays."""

    def __init__(self, folder: Path, program: CProgram) -> None:
        p = program.prefix
        self.folder = folder
        self.inputs = _args(program.signature.inputs)
        self.outputs = _args(program.signature.outputs)
        try:
            self.lib = ctypes.CDLL(str(folder / f"lib{p}.so"))
        except OSError as err:
            raise CompileError(f"cannot load the compiled model lib{p}.so: {err}") from None
        self._run = getattr(self.lib, f"{p}_run")
        tensors = ctypes.POINTER(RungTensor)
        self._run.argtypes = [tensors, tensors, ctypes.c_void_p]
        self._run.restype = ctypes.c_int
        self._free = getattr(self.lib, f"{p}_free")
        self._free.argtypes = [ctypes.c_void_p]
        self._error = getattr(self.lib, f"{p}_last_error")
        self._error.restype = ctypes.c_char_p
        arena_bytes = getattr(self.lib, f"{p}_arena_bytes")
        arena_bytes.restype = ctypes.c_size_t
        self.arena_bytes = int(arena_bytes())
        weights = folder / f"{p}.weights"
        init = getattr(self.lib, f"{p}_init")
        init.argtypes = [ctypes.c_char_p]
        if init(str(weights).encode() if weights.exists() else None) != 0:
            raise EvaluationError(f"cannot initialize the model: {self._error().decode()}")
        try:
            self._set_threads = getattr(self.lib, f"{p}_set_num_threads")
            self._set_threads.argtypes = [ctypes.c_int]
            self._set_threads.restype = None
        except AttributeError:  # a library from before the ABI had it
            self._set_threads = None
        self._lock = threading.Lock()
        self._arena = np.empty(self.arena_bytes + 64, dtype=np.uint8)
        self._arena_base = (self._arena.ctypes.data + 63) // 64 * 64
        # The descriptors of a run, made once and refilled by each run under the lock (a
        # small model's run spends microseconds in Python; this is one of them).
        self._ins = (RungTensor * max(len(self.inputs), 1))()
        self._outs = (RungTensor * max(len(self.outputs), 1))()

    def _adopt(self, data: int, nbytes: int, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """An array over the model's own output buffer, which is freed with the buffer
        object every view of the array keeps alive."""
        buffer = (ctypes.c_char * nbytes).from_address(data)
        weakref.finalize(buffer, self._free, data)
        return np.frombuffer(buffer, dtype=dtype).reshape(shape)

    def run(self, inputs: Sequence[object], threads: int = 0) -> list[object]:
        """The outputs for `inputs`, computed by `threads` OpenMP threads (0: the default,
        `default_threads()`).

        The count is set before every run, not once per library: OpenMP keeps it per
        calling thread for the whole process, and sessions that compile the same C
        share one loaded library, so a count set once would leak into other sessions.
        """
        arrays = _check_inputs(self.inputs, inputs)
        keep: list[object] = []  # what the inputs' descriptors point into, alive for the run
        results: list[object] = []
        with self._lock:
            ins, outs = self._ins, self._outs
            for i, (arg, a) in enumerate(zip(self.inputs, arrays, strict=True)):
                t = ins[i]
                if arg.is_value:
                    native_values.put(t, arg.element, a, keep)  # type: ignore[arg-type]
                    continue
                t.data = a.ctypes.data
                t.dtype = arg.code
                t.rank = a.ndim
                t.shape[: a.ndim] = a.shape
            if self._set_threads is not None:
                self._set_threads(threads if threads > 0 else default_threads())
            rc = self._run(ins, outs, self._arena_base)
            if rc != 0:
                raise EvaluationError(f"the compiled model failed: {self._error().decode()}")
            for i, arg in enumerate(self.outputs):
                t = outs[i]
                if arg.is_value:
                    results.append(native_values.take(t, self._free))
                    continue
                shape = tuple(t.shape[: t.rank])
                nbytes = math.prod(shape) * arg.dtype.itemsize
                if nbytes >= ADOPT_BYTES:
                    results.append(self._adopt(t.data, nbytes, shape, arg.dtype))
                    continue
                # One copy, out of the buffer the model allocated, into an array numpy owns.
                if nbytes:
                    view = (ctypes.c_char * nbytes).from_address(t.data)
                    array = np.frombuffer(view, dtype=arg.dtype).reshape(shape).copy()
                else:
                    array = np.empty(shape, dtype=arg.dtype)
                self._free(t.data)
                results.append(array)
        return results


@functools.cache
def default_threads() -> int:
    """The OpenMP thread count of a run that asks for none: `$OMP_NUM_THREADS` (its first
    number), else the CPUs this process may use, as OpenMP itself would choose."""
    text = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    if text.isdigit() and int(text) > 0:
        return int(text)
    if hasattr(os, "sched_getaffinity"):
        return max(len(os.sched_getaffinity(0)), 1)
    return os.cpu_count() or 1


ADOPT_BYTES = 1 << 20
"""Outputs this large are handed to numpy in the buffer the model allocated (freed when the
last array viewing it goes), not copied: a language model's logits are 25 MB per run."""


def compile_program(program: CProgram, debug: bool = False) -> NativeModel:
    """Build (or find in the cache) and load the library of a generated program."""
    if debug:
        raise CompileError(
            "a sanitizer build cannot be loaded into Python (the ASan runtime must be the "
            "first library of the process); run it with run_in_harness instead"
        )
    return NativeModel(cached_build(program, debug), program)


_LOADED: weakref.WeakKeyDictionary[object, NativeModel] = weakref.WeakKeyDictionary()


def load(
    module: object,
    *,
    progress: Progress | None = None,
    timings: dict[str, float] | None = None,
) -> NativeModel:
    """The loaded library of a kernel-dialect module: C generated and compiled (cached),
    once per module. `timings` gets the seconds of `C generation` and `C compile`."""
    from rung.lowering.kernel_to_c import generate_c

    model = _LOADED.get(module)
    if model is not None:
        return model
    start = time.perf_counter()
    if progress is not None:
        progress("C generation", 0, None)
    program = generate_c(module)  # type: ignore[arg-type]
    middle = time.perf_counter()
    if progress is not None:
        progress("C compile", 0, 1)
    model = compile_program(program)
    if progress is not None:
        progress("C compile", 1, 1)
    if timings is not None:
        timings["C generation"] = middle - start
        timings["C compile"] = time.perf_counter() - middle
    _LOADED[module] = model
    return model


def evaluate(module: object, inputs: Sequence[object]) -> list[object]:
    """The `kernel` level's evaluator: generate C, compile (cached), run."""
    return load(module).run(inputs)  # type: ignore[return-value]


_PROGRAMS: weakref.WeakKeyDictionary[object, CProgram] = weakref.WeakKeyDictionary()


def evaluate_sanitized(module: object, inputs: Sequence[object]) -> list[object]:
    """The `kernel-sanitized` level's evaluator: generate C, run it in a sanitizer build.

    Every run is a process of its own (see `run_in_harness`), so this is for
    finding bugs in the generated C, not for speed. A model with sequences,
    optionals or strings among its inputs or outputs, which the harness cannot
    pass, runs as a sanitizer-built library in a Python process of its own
    instead (`run_sanitized_library`: no leak check).
    """
    from rung.lowering.kernel_to_c import generate_c

    program = _PROGRAMS.get(module)
    if program is None:
        program = generate_c(module)  # type: ignore[arg-type]
        _PROGRAMS[module] = program
    ports = _args([*program.signature.inputs, *program.signature.outputs])
    if any(a.is_value for a in ports):
        return run_sanitized_library(program, inputs)
    return run_in_harness(program, inputs)  # type: ignore[return-value]


# ---- the sanitizer harness ----------------------------------------------------------------------

_FINDING = re.compile(
    r"ERROR: (AddressSanitizer|LeakSanitizer|ThreadSanitizer|MemorySanitizer)|runtime error:"
)
_HARNESS_USAGE, _HARNESS_MODEL_ERROR = 2, 3
"""Exit codes of rung_harness.c (4, outputs that differ between runs, is a finding)."""


def run_in_harness(
    program: CProgram,
    inputs: Sequence[object],
    *,
    debug: bool = True,
    repeat: int = 2,
    timeout: float = 300.0,
) -> list[np.ndarray]:
    """Run `program` in its harness executable (by default a sanitizer build) on `inputs`.

    The harness runs the model `repeat` times, with the arena filled with a
    different byte pattern each time, and requires identical outputs, so reads
    of uninitialized scratch memory show up even where no sanitizer sees them.
    Raises SanitizerError with the report on any finding (or on outputs that
    differ between runs), EvaluationError if the model reports an error.
    """
    args = _args(program.signature.inputs)
    outs = _args(program.signature.outputs)
    if any(a.is_value for a in [*args, *outs]):
        raise RungError(
            f"the harness runs models whose inputs and outputs are tensors of numbers; "
            f"'{program.prefix}' has sequences, optionals or strings"
        )
    arrays = _check_inputs(args, inputs)
    exe = cached_harness(program, debug)
    with tempfile.TemporaryDirectory(prefix="rung-harness-") as tmp:
        folder = Path(tmp)
        cmd = [str(exe), "-n", str(max(repeat, 1)), "-o", str(folder / "out")]
        weights = exe.parent / f"{program.prefix}.weights"
        if weights.exists():
            cmd += ["-w", str(weights)]
        for i, (arg, a) in enumerate(zip(args, arrays, strict=True)):
            path = folder / f"input_{i}.bin"
            path.write_bytes(a.tobytes())
            cmd.append(f"{arg.code}:{'x'.join(str(n) for n in a.shape)}:{path}")
        (folder / "out").mkdir()
        env = {**os.environ, **SANITIZER_ENV}
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            raise SanitizerError(
                f"the harness of '{program.prefix}' ran longer than {timeout} s"
            ) from None
        report = _check_report(program, proc, "sanitizer build" if debug else "harness")
        if proc.returncode == _HARNESS_MODEL_ERROR:
            raise EvaluationError(f"the compiled model failed: {report}")
        if proc.returncode == _HARNESS_USAGE:
            raise RungError(f"the harness of '{program.prefix}' refused its arguments: {report}")
        return _read_outputs(folder / "out", outs)


_UB_LINE = re.compile(r"([^\s/]+:\d+:\d+: runtime error: .*)")
_SUMMARY_LINE = re.compile(r"^SUMMARY: (\w+Sanitizer: .*)$", re.MULTILINE)
_DIRECTORIES = re.compile(r"(?:/[^/\s]+)*/(?=[^/\s]+:\d+)")


def finding(report: str, exit_code: int) -> str:
    """One line saying what a harness run found, without addresses or folders.

    It heads the SanitizerError's message, so that a scoreboard (which shows one
    line per failing case) says which sanitizer found what, and where: UBSan's
    `file:line:col: runtime error: ...`, ASan's `SUMMARY:` line (`LeakSanitizer`
    for leaks, which ASan's summary does not say), or the harness's own line.
    """
    ub = _UB_LINE.search(report)
    if ub:
        return ub.group(1)
    summary = _SUMMARY_LINE.search(report)
    if summary:
        line = _DIRECTORIES.sub("", summary.group(1))
        if "ERROR: LeakSanitizer" in report and "leaked" in line:
            line = line.replace("AddressSanitizer:", "LeakSanitizer:", 1)
        return line
    for line in report.splitlines():
        if line.startswith(("rung_harness:", "rung_sanitized:")) or "Sanitizer" in line:
            return line.strip()
    if exit_code < 0:
        return f"the harness was killed by signal {-exit_code}"
    return f"the harness exited with code {exit_code}"


def _check_report(program: CProgram, proc: subprocess.CompletedProcess[str], build: str) -> str:
    """Raise SanitizerError if a sanitized run found anything; returns its stderr."""
    report = proc.stderr.strip()
    if (
        _FINDING.search(report)
        or proc.returncode < 0
        or proc.returncode not in (0, _HARNESS_USAGE, _HARNESS_MODEL_ERROR)
    ):
        lines = report.splitlines()
        shown = "\n".join(lines[:200]) + ("\n..." if len(lines) > 200 else "")
        raise SanitizerError(
            f"the {build} of '{program.prefix}' found a problem: "
            f"{finding(report, proc.returncode)}\n(exit code {proc.returncode})\n{shown}"
        )
    return report


@functools.cache
def _asan_runtime() -> str:
    """The compiler's ASan runtime library, which must be the first library of a process
    that loads a sanitizer-built library."""
    cc = compiler()
    for name in ("libasan.so", "libclang_rt.asan-x86_64.so", "libclang_rt.asan.so"):
        proc = subprocess.run(
            [*cc, f"-print-file-name={name}"], capture_output=True, text=True, timeout=60
        )
        path = proc.stdout.strip()
        if proc.returncode == 0 and os.path.isabs(path) and os.path.exists(path):
            return path
    raise CompileError(f"the C compiler '{cc[0]}' has no AddressSanitizer runtime to preload")


_CHILD = (
    "import sys; from rung.runtime.native import _sanitized_child; _sanitized_child(*sys.argv[1:])"
)


def run_sanitized_library(
    program: CProgram, inputs: Sequence[object], *, repeat: int = 2, timeout: float = 300.0
) -> list[object]:
    """Run the sanitizer build of `program` as a library, in a Python process of its own.

    For models the harness cannot pass (sequences, optionals, strings): the ASan
    runtime is preloaded into a new Python, which loads the library with the
    usual ctypes glue and runs it `repeat` times, the scratch arena (allocated
    at its exact size) filled with a different byte pattern each time, and
    requires equal outputs. Leaks are not checked (Python itself does not free
    everything at exit). Raises SanitizerError on a finding, EvaluationError if
    the model reports an error.
    """
    import pickle
    import sys

    folder = cached_build(program, debug=True)
    env = {
        **os.environ,
        **SANITIZER_ENV,
        "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1",
        "LD_PRELOAD": _asan_runtime(),
    }
    with tempfile.TemporaryDirectory(prefix="rung-sanitized-") as tmp:
        job, result = Path(tmp) / "job.pickle", Path(tmp) / "result.pickle"
        job.write_bytes(pickle.dumps((program, list(inputs), str(folder), max(repeat, 1))))
        cmd = [sys.executable, "-c", _CHILD, str(job), str(result)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            raise SanitizerError(
                f"the sanitizer build of '{program.prefix}' ran longer than {timeout} s"
            ) from None
        report = _check_report(program, proc, "sanitizer build")
        if proc.returncode == _HARNESS_MODEL_ERROR:
            raise EvaluationError(report.splitlines()[-1] if report else "the model failed")
        if proc.returncode == _HARNESS_USAGE or not result.exists():
            raise RungError(f"the sanitized run of '{program.prefix}' failed: {report}")
        return pickle.loads(result.read_bytes())


def _same_outputs(a: object, b: object) -> bool:
    """Whether two runs gave the same outputs (arrays bit for bit, NaN equal to NaN)."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        if a.dtype == object:
            return all(_same_outputs(x, y) for x, y in zip(a.flat, b.flat, strict=True))
        return a.tobytes() == b.tobytes()
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same_outputs(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_outputs(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _sanitized_child(job: str, result: str) -> None:
    """The process `run_sanitized_library` starts: load, run `repeat` times, compare, write.

    Exit codes as the harness's: 3 the model reported an error, 4 runs differed.
    """
    import pickle
    import sys

    program, inputs, folder, repeat = pickle.loads(Path(job).read_bytes())
    model = NativeModel(Path(folder), program)
    # The arena at its exact size and already aligned, so that ASan sees any access past it.
    libc = ctypes.CDLL(None)
    pointer = ctypes.c_void_p()
    if libc.posix_memalign(ctypes.byref(pointer), 64, max(model.arena_bytes, 1)) != 0:
        sys.exit("rung_sanitized: out of memory for the arena")
    model._arena = np.ctypeslib.as_array(
        (ctypes.c_uint8 * max(model.arena_bytes, 1)).from_address(pointer.value or 0)
    )
    model._arena_base = pointer.value or 0
    first: list[object] | None = None
    for run in range(repeat):
        model._arena[:] = (0xA5, 0x5A, 0xFF, 0x00)[run % 4]
        try:
            outputs = model.run(inputs)
        except EvaluationError as err:
            print(str(err), file=sys.stderr)
            sys.exit(_HARNESS_MODEL_ERROR)
        if first is None:
            first = outputs
        elif not _same_outputs(first, outputs):
            print(
                f"rung_sanitized: run {run + 1} gave different outputs than run 1 "
                "(reads of uninitialized memory, or state kept between runs)",
                file=sys.stderr,
            )
            sys.exit(4)
    Path(result).write_bytes(pickle.dumps(first))


def _read_outputs(folder: Path, outs: Sequence[_Arg]) -> list[np.ndarray]:
    """The outputs the harness wrote: `manifest.txt` lines `index dtype rank dims... file`."""
    manifest = (folder / "manifest.txt").read_text().splitlines()
    if len(manifest) != len(outs):
        raise SanitizerError(f"the harness wrote {len(manifest)} outputs, expected {len(outs)}")
    results = []
    for line, arg in zip(manifest, outs, strict=True):
        words = line.split()
        code, rank = int(words[1]), int(words[2])
        shape = tuple(int(w) for w in words[3 : 3 + rank])
        if code != arg.code:
            raise SanitizerError(f"output '{arg.name}' has dtype {code}, expected {arg.code}")
        data = (folder / words[3 + rank]).read_bytes()
        results.append(np.frombuffer(data, dtype=arg.dtype).reshape(shape).copy())
    return results


# ---- rung compile -------------------------------------------------------------------------------

STAGES = ("import", "lower-to-core", "lower-to-kernel", "C generation", "C compile")

RUNTIME_STAGE = "runtime object (once)"
"""The timing of `compile_model` that the first compile on a machine (or with a new
compiler or rung) has: building the runtime object (`runtime_object`)."""


@dataclass
class CompileResult:
    """What `compile_model` wrote, and how long each stage took."""

    outdir: Path
    prefix: str
    files: list[Path]
    """Every file written into `outdir`, in the order written."""
    library: Path | None
    """`lib<prefix>.so`, or None with `emit_only`."""
    harness: Path | None
    """`<prefix>_harness` (debug builds only)."""
    arena_bytes: int
    weights_bytes: int
    timings: dict[str, float] = field(default_factory=dict)
    """Seconds per stage (see STAGES); `C compile` is absent with `emit_only`."""
    program: CProgram | None = None

    def summary(self) -> str:
        """One line: the files, the arena and the weights."""
        names = ", ".join(f.name for f in self.files)
        return (
            f"wrote {len(self.files)} files to {self.outdir}: {names} "
            f"(arena {self.arena_bytes} bytes, weights {self.weights_bytes} bytes)"
        )


def default_prefix(model: object) -> str:
    """A C identifier from the model file's name (`my-net.v2.onnx` → `my_net_v2`)."""
    if isinstance(model, str | os.PathLike):
        stem = Path(model).name
        for suffix in (".onnxtxt", ".onnx", ".mlir"):
            if stem.endswith(suffix) and stem != suffix:
                stem = stem[: -len(suffix)]
                break
        name = re.sub(r"[^A-Za-z0-9_]", "_", stem).strip("_")
        if name:
            clashes = name[0].isdigit() or name.lower().startswith("rung_")
            return f"m_{name}" if clashes else name
    return "model"


def _check_prefix(prefix: str) -> None:
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", prefix):
        raise RungError(
            f"invalid prefix '{prefix}': use a C identifier of ASCII letters, digits and '_', "
            "starting with a letter"
        )
    if prefix.lower().startswith("rung_"):
        raise RungError(
            f"invalid prefix '{prefix}': names that start with 'rung_' are the runtime's "
            "(its headers and functions)"
        )


def owned_files(prefix: str, debug: bool) -> list[str]:
    """Names `compile_model` may write into the output folder for `prefix`."""
    names = [f"{prefix}.c", f"{prefix}.h", *(h.name for h in runtime_headers())]
    names += [f"{prefix}.weights", f"lib{prefix}.so"]
    if debug:
        names += [HARNESS, f"{prefix}_harness"]
    return names


def _prepare_outdir(outdir: Path, prefix: str, debug: bool, force: bool) -> None:
    """Refuse an unusable output folder, or one holding files we would overwrite."""
    if outdir.exists() and not outdir.is_dir():
        raise RungError(f"'{outdir}' exists and is not a folder")
    parent = outdir.resolve().parent
    if not parent.is_dir():
        raise RungError(f"cannot create '{outdir}': folder '{parent}' does not exist")
    if outdir.is_dir() and not force:
        same = {h.name: h for h in runtime_headers()}
        if debug:
            same[HARNESS] = harness_source()
        clash = [
            n
            for n in owned_files(prefix, debug)
            if (outdir / n).exists() and not (n in same and _same_file(outdir / n, same[n]))
        ]
        if clash:
            raise RungError(
                f"'{outdir}' already holds {', '.join(clash)}; use --force to overwrite them, "
                "or choose another output folder or --prefix"
            )


def _same_file(a: Path, b: Path) -> bool:
    """Whether two files have the same bytes (then writing one over the other loses nothing)."""
    try:
        return a.is_file() and b.is_file() and a.read_bytes() == b.read_bytes()
    except OSError:
        return False


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def compile_model(
    model: ModelProto | str | os.PathLike[str] | ModuleOp,
    outdir: str | os.PathLike[str],
    *,
    prefix: str | None = None,
    debug: bool = False,
    emit_only: bool = False,
    force: bool = False,
    threads: int = 0,
    progress: Progress | None = None,
) -> CompileResult:
    """Compile a model (`.onnx`, `.onnxtxt`, `.mlir` at any level) into C and a library.

    Writes `<prefix>.c`, `<prefix>.h`, the runtime headers, `<prefix>.weights`
    (if constants are too large to inline) and `lib<prefix>.so` into `outdir`;
    with `debug`, a sanitizer build plus the harness executable `<prefix>_harness`.
    Everything is built in a temporary folder beside `outdir` and moved in at
    the end, so a failure leaves `outdir` as it was. Files of this prefix already
    in `outdir` are an error unless `force` (then stale ones of the prefix go too);
    identical runtime headers are not, so several models can share one folder.
    `threads` (> 0) becomes the library's default OpenMP thread count, set when it is
    loaded (`<prefix>_set_num_threads` still changes it). `progress` is told each stage.
    """
    from .levels import lower_reporting
    from .loading import load_module

    prefix = default_prefix(model) if prefix is None else prefix
    _check_prefix(prefix)
    if threads < 0:
        raise RungError(f"the thread count must not be negative, got {threads}")
    out = Path(outdir)
    _prepare_outdir(out, prefix, debug, force)
    if not emit_only:
        compiler()  # no compiler: say so before spending time on the model
    where = f"'{model}'" if isinstance(model, str | os.PathLike) else "the model"
    timings: dict[str, float] = {}

    with rare_full_collections():
        start = time.perf_counter()
        if progress is not None:
            progress("import", 0, None)
        module = load_module(model)
        timings["import"] = time.perf_counter() - start
        # Lowering works in place: a module the caller gave is lowered as a copy.
        copy = isinstance(model, ModuleOp)
        module = lower_reporting(
            module, "kernel", where=where, timings=timings, copy=copy, progress=progress
        )

        from rung.lowering.kernel_to_c import generate_c

        start = time.perf_counter()
        if progress is not None:
            progress("C generation", 0, None)
        program = generate_c(module, prefix)
        if threads > 0:
            program = _with_default_threads(program, threads)
        timings["C generation"] = time.perf_counter() - start

    with staging(lambda: _temporary_folder(out)) as tmp:
        written = write_sources(program, tmp)
        library = harness = None
        if debug:
            shutil.copyfile(harness_source(), tmp / HARNESS)
            written.append(tmp / HARNESS)
        if not emit_only and not debug:
            # Built once per machine, compiler and flags: a stage of its own when it runs.
            start, built = time.perf_counter(), STATS.runtime_builds
            if progress is not None:
                progress(RUNTIME_STAGE, 0, None)
            runtime_object(program.uses_openmp)
            if STATS.runtime_builds != built:
                timings[RUNTIME_STAGE] = time.perf_counter() - start
        if not emit_only:
            start = time.perf_counter()
            units = 2 if debug else 1
            if progress is not None:
                progress("C compile", 0, units)
            library = build_library(program, tmp, debug)
            written.append(library)
            if progress is not None:
                progress("C compile", 1, units)
            if debug:
                harness = build_harness(program, tmp, debug)
                written.append(harness)
                if progress is not None:
                    progress("C compile", 2, units)
            timings["C compile"] = time.perf_counter() - start
        names = [f.name for f in written]
        _move_into(tmp, out, names, owned_files(prefix, debug), force)
    return CompileResult(
        outdir=out,
        prefix=prefix,
        files=[out / n for n in names],
        library=out / library.name if library else None,
        harness=out / harness.name if harness else None,
        arena_bytes=program.arena_bytes,
        weights_bytes=len(program.weights),
        timings={s: timings[s] for s in (*STAGES[:-1], RUNTIME_STAGE, STAGES[-1]) if s in timings},
        program=program,
    )


def _with_default_threads(program: CProgram, threads: int) -> CProgram:
    """`program` whose library sets `threads` OpenMP threads when it is loaded.

    A constructor runs at load time in the loading thread, the one that usually
    runs the model too; the header says so, so that a user knows what the
    library does to the process's OpenMP setting.
    """
    import dataclasses

    p = program.prefix
    source = (
        program.source
        + f"""
/* The default thread count, from `rung compile --threads {threads}`: set when the
 * library is loaded, in the loading thread; {p}_set_num_threads changes it. */
__attribute__((constructor)) static void {p}_default_threads(void) {{
  {p}_set_num_threads({threads});
}}
"""
    )
    note = (
        f"/* Built with `rung compile --threads {threads}`: loading this library sets\n"
        f" * {threads} OpenMP thread(s) in the loading thread. */\n"
    )
    return dataclasses.replace(program, source=source, header=note + program.header)


def _temporary_folder(out: Path) -> Path:
    """A new staging folder beside `out` (inside it, if `out` exists and its parent is
    read-only), after removing stale ones a killed compile left in either place."""
    name = out.resolve().name or "rung"
    if out.is_dir():
        remove_stale_staging(out)
    try:
        tmp = new_staging_folder(out.resolve().parent, name)
    except PermissionError:
        if not out.is_dir():
            raise RungError(f"cannot create '{out}': permission denied") from None
        try:
            tmp = new_staging_folder(out, "rung")
        except PermissionError:
            raise RungError(f"cannot write into '{out}': permission denied") from None
    os.chmod(tmp, 0o777 & ~_umask())
    return tmp


def _move_into(tmp: Path, out: Path, names: list[str], owned: list[str], force: bool) -> None:
    """Move the finished files from `tmp` into `out` (a rename if `out` is new)."""
    if not out.exists():
        try:
            tmp.rename(out)
            return
        except OSError:
            if not out.is_dir():  # something else appeared there meanwhile
                raise RungError(f"cannot create the output folder '{out}'") from None
    if not force:
        clash = [n for n in owned if (out / n).exists() and not _same_file(out / n, tmp / n)]
        if clash:
            raise RungError(f"'{out}' already holds {', '.join(clash)}; use --force to overwrite")
    for name in owned:
        if name not in names and (out / name).exists():
            (out / name).unlink()  # a stale file of the same prefix (only with force)
    for name in names:
        os.replace(tmp / name, out / name)


__all__ = [
    "DEBUG_FLAGS",
    "OPT_FLAGS",
    "STAGES",
    "STATS",
    "CompileError",
    "CompileResult",
    "NativeModel",
    "STAGING_TAG",
    "SanitizerError",
    "build_harness",
    "build_library",
    "cached_build",
    "cached_harness",
    "compile_model",
    "default_threads",
    "compile_program",
    "compiler",
    "default_prefix",
    "evaluate",
    "evaluate_sanitized",
    "finding",
    "load",
    "new_staging_folder",
    "remove_stale_staging",
    "run_in_harness",
    "run_sanitized_library",
    "runtime_object",
    "staging",
    "write_sources",
]
