"""Compiling generated C into a shared library, caching it, loading it, running it.

    program = generate_c(kernel_module)          # rung.lowering.kernel_to_c
    model = compile_program(program)             # cc, cached by content hash
    outputs = model.run([x, y])                  # numpy in, numpy out

The compiler is `$CC`, else `cc`. Libraries are cached under `$RUNG_CACHE_DIR`
(default `~/.cache/rung`) in a folder named by the hash of everything that
goes into the build (sources, runtime header, weights, compiler and flags),
so compiling the same model twice costs one hash. Builds write to a temporary
folder that is renamed into place, so a cache entry is always complete, even
with several processes compiling at once.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shlex
import shutil
import subprocess
import tempfile
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rung.errors import RungError

from .levels import EvaluationError

MAX_RANK = 8

OPT_FLAGS = ("-O3", "-march=native", "-fno-math-errno")
DEBUG_FLAGS = ("-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=address,undefined",
               "-fno-sanitize-recover=all")


class CompileError(RungError):
    """The C compiler failed or is missing."""


class RungTensor(ctypes.Structure):
    """`rung_tensor` of the generated header."""

    _fields_ = [
        ("data", ctypes.c_void_p),
        ("dtype", ctypes.c_int32),
        ("rank", ctypes.c_int32),
        ("shape", ctypes.c_int64 * MAX_RANK),
    ]


def cache_dir() -> Path:
    root = os.environ.get("RUNG_CACHE_DIR")
    return Path(root) if root else Path.home() / ".cache" / "rung"


def compiler() -> list[str]:
    cc = os.environ.get("CC") or "cc"
    words = shlex.split(cc)
    if not words or shutil.which(words[0]) is None:
        raise CompileError(
            f"no C compiler: '{cc}' was not found (set $CC to a C compiler such as gcc or clang)"
        )
    return words


def build_flags(openmp: bool, debug: bool = False) -> list[str]:
    flags = ["-std=gnu11", "-fPIC", "-shared"]
    flags += list(DEBUG_FLAGS if debug else OPT_FLAGS)
    if openmp:
        flags.append("-fopenmp")
    return flags


def runtime_headers() -> list[Path]:
    """The C runtime's headers, which every generated file needs beside it."""
    from rung.lowering.kernel_to_c.emit import RUNTIME_HEADER

    return sorted(RUNTIME_HEADER.parent.glob("*.h"))


def write_sources(program: object, folder: Path) -> list[Path]:
    """Write `<prefix>.c`, `<prefix>.h`, the runtime headers and `<prefix>.weights` (if any)."""
    p = program.prefix  # type: ignore[attr-defined]
    folder.mkdir(parents=True, exist_ok=True)
    files = [folder / f"{p}.c", folder / f"{p}.h"]
    files[0].write_text(program.source)  # type: ignore[attr-defined]
    files[1].write_text(program.header)  # type: ignore[attr-defined]
    for header in runtime_headers():
        files.append(folder / header.name)
        shutil.copyfile(header, files[-1])
    if program.weights:  # type: ignore[attr-defined]
        files.append(folder / f"{p}.weights")
        files[-1].write_bytes(program.weights)  # type: ignore[attr-defined]
    return files


def build_library(program: object, folder: Path, debug: bool = False) -> Path:
    """Compile the sources written in `folder` into `lib<prefix>.so` there."""
    p = program.prefix  # type: ignore[attr-defined]
    out = folder / f"lib{p}.so"
    cmd = [
        *compiler(),
        *build_flags(program.uses_openmp, debug),  # type: ignore[attr-defined]
        str(folder / f"{p}.c"),
        "-o",
        str(out),
        "-lm",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        errors = "\n".join(proc.stderr.strip().splitlines()[:20])
        raise CompileError(f"the C compiler failed on {folder / (p + '.c')}:\n{errors}")
    return out


def _digest(program: object, debug: bool) -> str:
    h = hashlib.sha256()
    for part in (
        program.source,  # type: ignore[attr-defined]
        program.header,  # type: ignore[attr-defined]
        *(header.read_text() for header in runtime_headers()),
        " ".join(compiler() + build_flags(program.uses_openmp, debug)),  # type: ignore[attr-defined]
    ):
        h.update(part.encode())
        h.update(b"\0")
    h.update(hashlib.sha256(program.weights).digest())  # type: ignore[attr-defined]
    return h.hexdigest()[:24]


def cached_build(program: object, debug: bool = False) -> Path:
    """The folder holding the built library of `program`, compiling it if not cached."""
    folder = cache_dir() / _digest(program, debug)
    lib = folder / f"lib{program.prefix}.so"  # type: ignore[attr-defined]
    if lib.exists():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=folder.parent))
    try:
        write_sources(program, tmp)
        build_library(program, tmp, debug)
        try:
            tmp.rename(folder)
        except OSError:
            if not lib.exists():  # lost a race to an incomplete entry: should not happen
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return folder


@dataclass
class _Arg:
    name: str
    dtype: np.dtype
    code: int
    shape: list[int]


class NativeModel:
    """A loaded model library: feed numpy arrays, get numpy arrays."""

    def __init__(self, folder: Path, program: object) -> None:
        from rung.dialects.onnx.dtypes import ONNX_FROM_MLIR
        from rung.runtime.core_eval import numpy_dtype

        p = program.prefix  # type: ignore[attr-defined]
        sig = program.signature  # type: ignore[attr-defined]
        self.folder = folder
        self.lib = ctypes.CDLL(str(folder / f"lib{p}.so"))
        self.inputs = [_Arg(n, numpy_dtype(t), ONNX_FROM_MLIR[t], s) for n, t, s in sig.inputs]
        self.outputs = [_Arg(n, numpy_dtype(t), ONNX_FROM_MLIR[t], s) for n, t, s in sig.outputs]
        self._run = getattr(self.lib, f"{p}_run")
        self._run.argtypes = [ctypes.POINTER(RungTensor), ctypes.POINTER(RungTensor), ctypes.c_void_p]
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
        self._lock = threading.Lock()
        self._arena = np.empty(self.arena_bytes + 64, dtype=np.uint8)

    def run(self, inputs: Sequence[object]) -> list[np.ndarray]:
        if len(inputs) != len(self.inputs):
            raise EvaluationError(f"expected {len(self.inputs)} inputs, got {len(inputs)}")
        arrays = []
        ins = (RungTensor * max(len(self.inputs), 1))()
        for i, (arg, value) in enumerate(zip(self.inputs, inputs, strict=True)):
            a = np.ascontiguousarray(np.asarray(value))
            if a.dtype != arg.dtype:
                raise EvaluationError(
                    f"input {i} ('{arg.name}') must be of {arg.dtype}, got {a.dtype}"
                )
            if a.ndim != len(arg.shape) or any(
                d >= 0 and d != n for d, n in zip(arg.shape, a.shape, strict=True)
            ):
                want = "x".join("?" if d < 0 else str(d) for d in arg.shape) or "a scalar"
                raise EvaluationError(
                    f"input {i} ('{arg.name}') must have shape {want}, got {list(a.shape)}"
                )
            arrays.append(a)
            ins[i].data = a.ctypes.data
            ins[i].dtype = arg.code
            ins[i].rank = a.ndim
            for d, n in enumerate(a.shape):
                ins[i].shape[d] = n
        outs = (RungTensor * max(len(self.outputs), 1))()
        with self._lock:
            base = self._arena.ctypes.data
            aligned = (base + 63) // 64 * 64
            rc = self._run(ins, outs, aligned)
            if rc != 0:
                raise EvaluationError(f"the compiled model failed: {self._error().decode()}")
        results = []
        for i, arg in enumerate(self.outputs):
            t = outs[i]
            shape = tuple(int(t.shape[d]) for d in range(t.rank))
            count = int(np.prod(shape)) if shape else 1
            nbytes = count * arg.dtype.itemsize
            raw = ctypes.string_at(t.data, nbytes) if nbytes else b""
            self._free(t.data)
            results.append(np.frombuffer(raw, dtype=arg.dtype).reshape(shape).copy())
        return results


def compile_program(program: object, debug: bool = False) -> NativeModel:
    """Build (or find in the cache) and load the library of a generated program."""
    return NativeModel(cached_build(program, debug), program)


_LOADED: weakref.WeakKeyDictionary[object, NativeModel] = weakref.WeakKeyDictionary()


def evaluate(module: object, inputs: Sequence[object]) -> list[object]:
    """The `kernel` level's evaluator: generate C, compile (cached), run."""
    from rung.lowering.kernel_to_c import generate_c

    model = _LOADED.get(module)
    if model is None:
        model = compile_program(generate_c(module))  # type: ignore[arg-type]
        _LOADED[module] = model
    return model.run(inputs)  # type: ignore[return-value]
