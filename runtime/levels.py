"""The execution levels, their order, and the one driver that lowers a module between them.

A level is a name, the dialect of the modules it runs, the level it is lowered
*from*, a *lowering* that takes a module of that level to this one, and an
*evaluator* that runs a module of this level on numpy inputs:

    Lowering  = Callable[[ModuleOp], ModuleOp]
    Evaluator = Callable[[ModuleOp, Sequence[object]], list[object]]

rung's levels form a ladder, each lowered from the one above it:

    onnx ──lower-to-core──▶ core ──core-to-kernel──▶ kernel

`lower(module, "kernel")` finds the level the module is at (`level_of`, from
its ops' dialects), chooses the stages from there down to the target
(`stages`), runs them, and reports how long each took under the stage's name,
`lower-to-<level>`. A stage that cannot lower an op fails with
`UnsupportedOpError` naming it. `InferenceSession`, `rung compile` and the
kernel evaluator all lower through it.

- The lowering gets a module the caller owns (it may change it in place) and
  returns the lowered module. A lowering that cannot handle an op raises
  `UnsupportedOpError` (or xDSL's `PassFailedException`, which `lower` turns
  into one), naming the op.
- The evaluator gets the inputs positionally, in the order of the main
  function's arguments (numpy arrays; lists for sequences, None for empty
  optionals, dicts for maps) and returns the outputs in the order of its
  results. It raises `UnsupportedOpError` for an op it has no implementation
  of, and `EvaluationError` when an op fails on the given inputs.

Registering a level (what `core` and `kernel` do):

    # runtime/kernel_level.py -- found automatically, see below
    from rung.runtime.levels import pipeline_lowering, register_level

    register_level(
        "kernel",
        from_level="core",
        lowering=pipeline_lowering("core-to-kernel"),
        evaluator="rung.runtime.native:evaluate",
        dialect="kernel",
        description="...",
    )

A level lowered from `onnx` (the default of `from_level`) may also finish the
way from another dialect: `from_dialects={"core": lowering}` takes a module of
core ops to it directly. Both callables may be given as `"module:function"`
strings, imported on first use, so that registering costs nothing (`rung
--help` stays fast).

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
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from rung.errors import EvaluationError, RungError, UnsupportedOpError

from .collection import rare_full_collections

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

Lowering = Callable[["ModuleOp"], "ModuleOp"]
"""Takes a module of the level a level is lowered from to that level."""

Evaluator = Callable[["ModuleOp", Sequence[object]], list[object]]
"""Runs a module of the level's dialect on positional inputs; returns its outputs."""

Check = Callable[["ModuleOp", str], None]
"""Refuses (with RungError) a module that is not valid IR of the level; gets `where`."""

Progress = Callable[[str, int, "int | None"], None]
"""Called as (stage, done, total) as a long job goes: `done` of `total` steps of `stage`
finished (total None: a stage without a count); see `rung.runtime.native.STAGES`."""

_NOT_OPS = frozenset({"builtin", "func"})
"""Dialects every level uses, which therefore say nothing about a module's level."""


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
    """Takes a module of level `from_level` to this one (None: runs such modules as they are)."""
    evaluator_ref: Evaluator | str
    description: str = ""
    dialect: str | None = None
    """Ops of this dialect mean a module is already at this level (no lowering needed)."""
    from_dialects: dict[str, Lowering | str] = field(default_factory=dict)
    """Lowerings that take a module of another dialect to this level directly: a
    module of `core` ops (say) is taken on to this level by `from_dialects["core"]`."""
    from_level: str | None = "onnx"
    """The level this one is lowered from; None for the top of the ladder (onnx)."""
    check_ref: Check | str | None = None
    """Refuses a module that has this level's ops but also ops no level knows."""
    _cache: dict[str, Callable] = field(default_factory=dict, repr=False)

    def _get(self, key: str, ref: Callable | str, what: str) -> Callable:
        if key not in self._cache:
            self._cache[key] = _resolve(ref, what)
        return self._cache[key]

    @property
    def step(self) -> Lowering | None:
        """The lowering from `from_level` to this level, if there is anything to do."""
        if self.lowering_ref is None:
            return None
        return self._get("step", self.lowering_ref, f"lowering of level '{self.name}'")  # type: ignore[return-value]

    def lowering_from(self, dialect: str) -> Lowering | None:
        """The lowering that takes a module of `dialect` ops straight to this level, if any."""
        ref = self.from_dialects.get(dialect)
        if ref is None:
            return None
        what = f"lowering of level '{self.name}' from {dialect}"
        return self._get(f"from:{dialect}", ref, what)  # type: ignore[return-value]

    @property
    def lowering(self) -> Lowering | None:
        """A lowering that takes an onnx-dialect module all the way to this level, if needed.

        For a level lowered straight from the top of the ladder this is the
        registered lowering itself; further down it runs every stage on the way.
        """
        if self.from_level is None:
            return None
        if len(chain(self)) == 2:
            return self.step

        def lower_all_the_way(module: ModuleOp) -> ModuleOp:
            return lower(module, self)

        return lower_all_the_way

    @property
    def evaluator(self) -> Evaluator:
        return self._get("evaluator", self.evaluator_ref, f"evaluator of level '{self.name}'")  # type: ignore[return-value]

    def check(self, module: ModuleOp, where: str) -> None:
        """Refuse a module that is not valid IR of this level (if the level says how)."""
        if self.check_ref is not None:
            self._get("check", self.check_ref, f"check of level '{self.name}'")(module, where)


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
    from_level: str | None = "onnx",
    check: Check | str | None = None,
    replace: bool = False,
) -> Level:
    """Make a level available to sessions, `rung run --level` and `rung conformance`.

    `lowering` takes a module of level `from_level` (by default onnx) to this
    level (None: the level runs such modules as they are); `evaluator` runs the
    result. Either may be a `"module:function"` string, imported on first use.
    `from_dialects` maps the dialect of an intermediate rung (`"core"`) to a
    lowering that takes a module of that dialect the rest of the way. `check`
    refuses a module of this level's dialect that is not valid IR of it.
    Registering a name that is taken is an error unless `replace` is true (or it
    is the same registration).
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
    if from_level is not None and (not isinstance(from_level, str) or from_level == name):
        raise RungError(f"level '{name}' must be lowered from another level, not {from_level!r}")
    level = Level(
        name,
        lowering,
        evaluator,
        description,
        dialect,
        dict(from_dialects or {}),
        from_level,
        check,
    )
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
    # The package is always imported before this module; looking it up rather
    # than importing it keeps `rung.runtime` -> ... -> `levels` from being a cycle.
    package = sys.modules[__package__]
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if info.name.endswith("_level"):
            importlib.import_module(f"{__package__}.{info.name}")
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
    """A lowering that runs a named pipeline (e.g. `"lower-to-core"`) of rung's registry."""

    def lower(module: ModuleOp) -> ModuleOp:
        from rung.dialects import context
        from rung.lowering.pipelines import default_registry

        default_registry().build(pipeline).apply(context(), module)
        return module

    lower.__qualname__ = f"pipeline_lowering({pipeline!r})"
    lower.pipeline = pipeline  # type: ignore[attr-defined]
    return lower


# ---- the driver -----------------------------------------------------------------------------


def _level(level: Level | str) -> Level:
    return level if isinstance(level, Level) else get_level(level)


def chain(level: Level | str) -> list[Level]:
    """The levels from the top of the ladder down to `level`, following `from_level`."""
    found = [_level(level)]
    while found[-1].from_level is not None:
        above = get_level(found[-1].from_level)
        if above in found:
            loop = " → ".join(lv.name for lv in [above, *reversed(found)])
            raise RungError(f"levels are lowered from each other in a loop: {loop}")
        found.append(above)
    return found[::-1]


def stage_name(level: Level) -> str:
    """The name a stage reaching `level` is timed under: `lower-to-<level>`."""
    return f"lower-to-{level.name}"


@dataclass(frozen=True)
class Stage:
    """One lowering run on the way down: from the level above (or a dialect) to `level`."""

    name: str
    """`lower-to-<level>`, the key of its seconds in `lower(..., timings=)`."""
    level: Level
    lowering: Lowering

    @property
    def pipeline(self) -> str | None:
        """The named pipeline the stage runs, if it was built by `pipeline_lowering`."""
        return getattr(self.lowering, "pipeline", None)


def _home_levels() -> dict[str, Level]:
    """The level each dialect stands for: the first registered with it (onnx, core, kernel)."""
    _discover()
    homes: dict[str, Level] = {}
    for level in _LEVELS.values():
        if level.dialect is not None:
            homes.setdefault(level.dialect, level)
    return homes


def _top() -> Level:
    """The top of the ladder: where a module without ops of any level's dialect starts."""
    return next(lv for lv in _LEVELS.values() if lv.from_level is None)


def level_of(module: ModuleOp, where: str = "the model") -> Level:
    """The level a module is at, from the dialects of its ops.

    A module without ops of any level's dialect is at the top (onnx). Ops of
    several levels in one module are an error: no stage lowers half a module.
    """
    homes = _home_levels()
    present = {op.name.split(".", 1)[0] for op in module.walk()} - _NOT_OPS
    at = [level for dialect, level in homes.items() if dialect in present]
    if len(at) > 1:
        mixed = _listing([lv.dialect for lv in at], "and")  # type: ignore[misc]
        raise RungError(
            f"{where} mixes {mixed} ops; a module must be at one level "
            f"({_listing(list(homes), 'or')})"
        )
    return at[0] if at else _top()


def _listing(words: Sequence[str], last: str) -> str:
    """`a`, `a or b`, `a, b or c`."""
    if len(words) < 2:
        return "".join(words)
    return f"{', '.join(words[:-1])} {last} {words[-1]}"


def _accepted(target: Level) -> list[str]:
    """The dialects of the modules `lower` can take to `target`."""
    found: list[str] = []
    for level in chain(target):
        for dialect in [level.dialect, *level.from_dialects]:
            if dialect is not None and dialect not in found:
                found.append(dialect)
    return found


def _needs(target: Level) -> str:
    dialects = _accepted(target)
    listed = _listing([f"{d}-" for d in dialects[:-1]] + dialects[-1:], "or") or "its"
    return f"level '{target.name}' needs {listed}-dialect IR"


def stages(start: Level | str, to: Level | str) -> list[Stage]:
    """The stages that take a module at level `start` down to level `to`.

    Walking up from `to`, the first level that `start` already is ends the way:
    `start` itself, or a level of the same dialect (below the top of the ladder,
    where every module begins). A level with a lowering from `start`'s dialect
    (`from_dialects`) is a shortcut onto the ladder. Levels without a lowering
    add no stage. RungError if `to` cannot be reached from `start`.
    """
    start, target = _level(start), _level(to)
    found = _plan(start, target)
    if found is None:
        raise RungError(f"level '{start.name}' is {start.dialect}-dialect IR; {_needs(target)}")
    return found


def _plan(start: Level, target: Level) -> list[Stage] | None:
    """`stages`, or None if `target` cannot be reached from `start`."""
    ladder = chain(target)
    below_top = start.from_level is not None and start.dialect is not None
    for i in range(len(ladder) - 1, -1, -1):
        level = ladder[i]
        rest = [Stage(stage_name(lv), lv, lv.step) for lv in ladder[i + 1 :] if lv.step]  # type: ignore[arg-type]
        if level is start or (below_top and level.dialect == start.dialect):
            return rest
        shortcut = level.lowering_from(start.dialect) if start.dialect else None
        if shortcut is not None:
            return [Stage(stage_name(level), level, shortcut), *rest]
    return None


def lower(
    module: ModuleOp,
    to: Level | str,
    *,
    where: str = "the model",
    timings: dict[str, float] | None = None,
    copy: bool = False,
) -> ModuleOp:
    """Lower `module`, at whichever level it is, to level `to`; returns the lowered module.

    Lowering works in place unless `copy`, which lowers a copy (with its
    weights) when there is anything to do. `timings` gets the seconds of every
    stage on the ladder down to `to`, as `lower-to-<level>`: 0.0 for those the
    module was already past, so the names do not depend on the input. A stage
    that cannot lower an op raises UnsupportedOpError, other failures RungError,
    both naming `where` and the level.
    """
    target = _level(to)
    start = level_of(module, where)
    try:
        start.check(module, where)
    except RungError as err:
        raise RungError(f"{err.message}; {_needs(target)}") from None
    todo = _plan(start, target)
    if todo is None:
        raise RungError(f"{where} is {start.dialect}-dialect IR; {_needs(target)}")
    if timings is not None:
        for level in chain(target):
            if level.step is not None:
                timings[stage_name(level)] = 0.0
    if todo and copy:
        module = owned_copy(module)
    with rare_full_collections():
        for stage in todo:
            begin = time.perf_counter()
            module = _run_stage(stage, module, where, target)
            if timings is not None:
                timings[stage.name] = time.perf_counter() - begin
    return module


def _run_stage(stage: Stage, module: ModuleOp, where: str, target: Level) -> ModuleOp:
    """Run one stage, turning xDSL's pass failures into rung's errors."""
    from xdsl.utils.exceptions import DiagnosticException, PassFailedException

    try:
        return stage.lowering(module)
    except RungError:
        raise
    except PassFailedException as err:
        raise UnsupportedOpError(f"cannot lower {where} to level '{target.name}': {err}") from None
    except DiagnosticException as err:
        raise RungError(f"cannot lower {where} to level '{target.name}': {err}") from None


def owned_copy(module: ModuleOp) -> ModuleOp:
    """A copy of `module` with its weights, for lowering without changing the caller's module."""
    from rung.dialects.resources import store_of

    copy = module.clone()
    store_of(copy).blobs.update(store_of(module).blobs)
    store_of(copy).alignment.update(store_of(module).alignment)
    return copy


# The onnx level: onnx-dialect modules, evaluated op by op with onnx.reference.
register_level(
    "onnx",
    lowering=None,
    evaluator="rung.runtime.onnx_eval:evaluate",
    dialect="onnx",
    from_level=None,
    check="rung.importers.onnx.export:check_onnx_module",
    description="the onnx dialect, each op evaluated by onnx.reference",
)


def lower_reporting(
    module: ModuleOp,
    to: Level | str,
    *,
    where: str = "the model",
    timings: dict[str, float] | None = None,
    copy: bool = False,
    progress: Progress | None = None,
    replace: Mapping[str, str] | None = None,
) -> ModuleOp:
    """`rung.runtime.levels.lower`, with named pipelines replaced (see `OPTIMIZATION_PIPELINES`)
    and each stage's progress reported to `progress` as (stage, done, total).

    A stage counts its passes until its op-by-op conversion (a frontend to core,
    core to kernel) starts; from then on it counts the ops converted, which is
    where a large model's time goes and a number the user can relate to the model.
    """
    from rung.lowering.kit.progress import reporting_ops
    from rung.lowering.pipelines import pipeline_options

    if progress is None and not replace:
        return lower(module, to, where=where, timings=timings, copy=copy)
    try:
        planned = stages(level_of(module, where), to)
    except RungError:
        planned = []  # `lower` refuses the module, with its own message
    stage_of = {stage.pipeline: stage.name for stage in planned if stage.pipeline is not None}
    report = report_ops = None
    if progress is not None:
        current: list[str] = []  # the stages begun, the running one last
        counting_ops: set[str] = set()  # the stages that have begun counting ops

        def report(text: str, done: int, total: int) -> None:
            if text not in stage_of:
                return
            if not current or current[-1] != stage_of[text]:
                current.append(stage_of[text])
            if stage_of[text] not in counting_ops:
                progress(stage_of[text], done, total)

        def report_ops(pass_name: str, done: int, total: int) -> None:
            if current and total:
                counting_ops.add(current[-1])
                progress(current[-1], done, total)

    with pipeline_options(replace, report), reporting_ops(report_ops):
        return lower(module, to, where=where, timings=timings, copy=copy)


__all__ = [
    "EvaluationError",
    "Evaluator",
    "Level",
    "Lowering",
    "Progress",
    "Stage",
    "UnsupportedOpError",
    "chain",
    "get_level",
    "level_names",
    "level_of",
    "load_level_plugin",
    "lower",
    "lower_reporting",
    "owned_copy",
    "pipeline_lowering",
    "register_level",
    "stages",
    "unregister_level",
]
