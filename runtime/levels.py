"""The execution levels `InferenceSession`, `rung run` and `rung conformance` can run at.

A level is a name, a *lowering* that takes the model's onnx-dialect module down
to the level's dialect (None for the onnx level itself), and an *evaluator*
that runs a module of that dialect on numpy inputs:

    Lowering  = Callable[[ModuleOp], ModuleOp]
    Evaluator = Callable[[ModuleOp, Sequence[object]], list[object]]

- The lowering gets a module the session owns (it may change it in place) and
  returns the lowered module. A lowering that cannot handle an op raises
  `UnsupportedOpError` (or xDSL's `PassFailedException`, which the session
  turns into one), naming the op.
- The evaluator gets the inputs positionally, in the order of the main
  function's arguments (numpy arrays; lists for sequences, None for empty
  optionals, dicts for maps) and returns the outputs in the order of its
  results. It raises `UnsupportedOpError` for an op it has no implementation
  of, and `EvaluationError` when an op fails on the given inputs.

Registering a level (what `core` and `kernel` do):

    # runtime/core_level.py -- found automatically, see below
    from rung.runtime.levels import pipeline_lowering, register_level

    register_level(
        "core",
        lowering=pipeline_lowering("lower-to-core"),
        evaluator="rung.dialects.core_eval:evaluate",
        dialect="core",
        description="numpy interpreter of the core dialect",
    )

Both callables may be given as `"module:function"` strings, imported on first
use, so that registering costs nothing (`rung --help` stays fast).

Where levels come from, on the first lookup: the built-in `onnx` level; every
module `rung.runtime.<name>_level` (a file `runtime/<name>_level.py`), imported
so that it can call `register_level`; installed entry points of group
`rung.levels` (each loaded, and called if it is a function); and files or
modules given to `load_level_plugin` (`--load-level` on the command line),
which either call `register_level` when imported or define
`register_levels(register_level)`.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from rung.errors import EvaluationError, RungError, UnsupportedOpError

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

Lowering = Callable[["ModuleOp"], "ModuleOp"]
"""Takes an onnx-dialect module to the level's dialect."""

Evaluator = Callable[["ModuleOp", Sequence[object]], list[object]]
"""Runs a module of the level's dialect on positional inputs; returns its outputs."""


def _resolve(ref: Callable | str, what: str) -> Callable:
    """A callable, or one named `"package.module:function"`, imported now."""
    if callable(ref):
        return ref
    module_name, _, attr = ref.partition(":")
    if not module_name or not attr:
        raise RungError(f"{what} '{ref}' must be a callable or 'module:function'")
    module = importlib.import_module(module_name)
    try:
        target = getattr(module, attr)
    except AttributeError:
        raise RungError(f"{what} '{ref}': module '{module_name}' has no '{attr}'") from None
    if not callable(target):
        raise RungError(f"{what} '{ref}' is not callable")
    return target


@dataclass
class Level:
    """One execution level, as registered."""

    name: str
    lowering_ref: Lowering | str | None
    evaluator_ref: Evaluator | str
    description: str = ""
    dialect: str | None = None
    """Ops of this dialect mean a module is already at this level (no lowering needed)."""
    from_dialects: dict[str, Lowering | str] = field(default_factory=dict)
    """Lowerings that finish the way down from a lower rung than onnx: a module of
    `core` ops (say) is taken on to this level by `from_dialects["core"]`."""
    _cache: dict[str, Callable] = field(default_factory=dict, repr=False)

    def lowering_from(self, dialect: str) -> Lowering | None:
        """The lowering that takes a module of `dialect` ops to this level, if any."""
        ref = self.from_dialects.get(dialect)
        if ref is None:
            return None
        key = f"from:{dialect}"
        if key not in self._cache:
            self._cache[key] = _resolve(ref, f"lowering of level '{self.name}' from {dialect}")
        return self._cache[key]  # type: ignore[return-value]

    @property
    def lowering(self) -> Lowering | None:
        if self.lowering_ref is None:
            return None
        if "lowering" not in self._cache:
            self._cache["lowering"] = _resolve(
                self.lowering_ref, f"lowering of level '{self.name}'"
            )
        return self._cache["lowering"]  # type: ignore[return-value]

    @property
    def evaluator(self) -> Evaluator:
        if "evaluator" not in self._cache:
            self._cache["evaluator"] = _resolve(
                self.evaluator_ref, f"evaluator of level '{self.name}'"
            )
        return self._cache["evaluator"]  # type: ignore[return-value]


_LEVELS: dict[str, Level] = {}
_discovered = False


def register_level(
    name: str,
    *,
    lowering: Lowering | str | None,
    evaluator: Evaluator | str,
    description: str = "",
    dialect: str | None = None,
    from_dialects: dict[str, Lowering | str] | None = None,
    replace: bool = False,
) -> Level:
    """Make a level available to sessions, `rung run --level` and `rung conformance`.

    `lowering` takes an onnx-dialect module to the level (None: the level runs
    onnx-dialect modules as they are); `evaluator` runs the result. Either may be
    a `"module:function"` string, imported on first use. `from_dialects` maps
    the dialect of an intermediate rung (`"core"`) to a lowering that takes a
    module of that dialect the rest of the way. Registering a name that
    is taken is an error unless `replace` is true (or it is the same registration).
    """
    if (
        not name
        or not isinstance(name, str)
        or not name.replace("-", "").replace("_", "").isalnum()
    ):
        raise RungError(f"invalid level name {name!r}: use letters, digits, '-' or '_'")
    if lowering is not None and not (callable(lowering) or isinstance(lowering, str)):
        raise RungError(f"lowering of level '{name}' must be a callable, a string or None")
    if not (callable(evaluator) or isinstance(evaluator, str)):
        raise RungError(f"evaluator of level '{name}' must be a callable or a string")
    level = Level(name, lowering, evaluator, description, dialect, dict(from_dialects or {}))
    existing = _LEVELS.get(name)
    if existing is not None and not replace:
        same = (existing.lowering_ref, existing.evaluator_ref) == (lowering, evaluator)
        if not same:
            raise RungError(f"level '{name}' is already registered")
        return existing
    _LEVELS[name] = level
    return level


def unregister_level(name: str) -> None:
    """Remove a level (tests use this to clean up)."""
    _LEVELS.pop(name, None)


def _discover() -> None:
    """Import the level modules of rung itself and of installed packages, once."""
    global _discovered
    if _discovered:
        return
    _discovered = True
    import rung.runtime as runtime

    for info in sorted(pkgutil.iter_modules(runtime.__path__), key=lambda i: i.name):
        if info.name.endswith("_level"):
            importlib.import_module(f"rung.runtime.{info.name}")
    try:
        from importlib.metadata import entry_points

        found = entry_points(group="rung.levels")
    except Exception:  # pragma: no cover - broken metadata must not break rung
        found = ()
    for entry in found:
        try:
            target = entry.load()
        except Exception as err:
            raise RungError(f"cannot load level plugin '{entry.value}': {err}") from None
        if callable(target):
            target(register_level)


def get_level(name: str) -> Level:
    """The level called `name`; RungError naming the known levels if there is none."""
    _discover()
    level = _LEVELS.get(name)
    if level is None:
        raise RungError(f"unknown level '{name}'; known levels: {', '.join(level_names())}")
    return level


def level_names() -> list[str]:
    """The names of all levels, in registration order (onnx first)."""
    _discover()
    return list(_LEVELS)


def load_level_plugin(spec: str) -> None:
    """Load levels from a Python file (`my_level.py`) or an importable module name.

    The file or module registers its levels when imported, or defines
    `register_levels(register_level)`, which is then called.
    """
    path = Path(spec)
    if spec.endswith(".py") or path.exists():
        if not path.is_file():
            raise RungError(f"no such level plugin file: '{spec}'")
        name = f"rung_level_plugin_{abs(hash(str(path.resolve())))}"
        module = sys.modules.get(name)
        if module is None:
            loader_spec = importlib.util.spec_from_file_location(name, path)
            if loader_spec is None or loader_spec.loader is None:
                raise RungError(f"cannot load level plugin '{spec}'")
            module = importlib.util.module_from_spec(loader_spec)
            sys.modules[name] = module
            try:
                loader_spec.loader.exec_module(module)
            except RungError:
                del sys.modules[name]
                raise
            except Exception as err:
                del sys.modules[name]
                raise RungError(
                    f"level plugin '{spec}' failed to load: {type(err).__name__}: {err}"
                ) from None
    else:
        try:
            module = importlib.import_module(spec)
        except ImportError as err:
            raise RungError(f"cannot import level plugin '{spec}': {err}") from None
    register = getattr(module, "register_levels", None)
    if callable(register):
        register(register_level)


def pipeline_lowering(pipeline: str) -> Lowering:
    """A lowering that runs pass-pipeline text (e.g. `"lower-to-core"`) from rung's registry."""

    def lower(module: ModuleOp) -> ModuleOp:
        from rung.dialects import context
        from rung.lowering.pipelines import default_registry

        default_registry().build(pipeline).apply(context(), module)
        return module

    lower.__qualname__ = f"pipeline_lowering({pipeline!r})"
    return lower


# The onnx level: onnx-dialect modules, evaluated op by op with onnx.reference.
register_level(
    "onnx",
    lowering=None,
    evaluator="rung.runtime.onnx_eval:evaluate",
    dialect="onnx",
    description="the onnx dialect, each op evaluated by onnx.reference",
)

__all__ = [
    "EvaluationError",
    "Evaluator",
    "Level",
    "Lowering",
    "UnsupportedOpError",
    "get_level",
    "level_names",
    "load_level_plugin",
    "pipeline_lowering",
    "register_level",
    "unregister_level",
]
