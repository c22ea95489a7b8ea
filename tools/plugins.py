"""Plugins: add dialects, passes, pipelines and lowerings to rung without forking it.

A plugin is a Python callable `register(registry)`. It comes either

* from a file, loaded with `opt --load-plugin my_patterns.py` (repeatable):
  the file is run as a fresh module and its top-level `register` is called; or
* from an installed package, through an entry point in the group
  `rung.plugins` whose value is the callable, loaded by every `opt` run::

      [project.entry-points."rung.plugins"]
      my_patterns = "my_package.rung_plugin:register"

`registry` is a `PluginRegistry`, which offers:

* `registry.add_dialect(dialect)` — an xDSL `Dialect`; its ops and attributes
  then parse in `opt` and in every `rung.dialects.context()`;
* `registry.add_pass(pass_class)` — an xDSL `ModulePass` subclass (a frozen
  dataclass with a `name`); `-p <name>` then runs it, options included
  (`-p 'my-pass{factor=2}'`);
* `registry.add_pipeline(name, pipeline_text, help)` — a named pipeline such as
  `add_pipeline("my-cleanup", "canonicalize,cse", "tidy up")`, usable in `-p`
  and as its own flag, `opt --my-cleanup`;
* `registry.add_lowering(op, handler, replace=False)` — a lowering, used by
  `convert-onnx-to-core` (and so `--lower-to-core`, `--lower-to-kernel`) when
  `op` is an onnx op class (`generated_ops.GeluOp`) or a custom op's
  `(domain, op_type)` such as `("com.example", "Twice")`, and by
  `convert-core-to-kernel` when `op` is a core op class. Handlers are written
  as rung's own are (see `rung.lowering.kit` and the `registry` modules of
  `rung.lowering.onnx_to_core` and `rung.lowering.core_to_kernel`). An op
  that already has a lowering keeps it unless `replace=True`.

Example plugin file::

    from dataclasses import dataclass
    from xdsl.passes import ModulePass

    @dataclass(frozen=True)
    class MyPass(ModulePass):
        name = "my-pass"
        def apply(self, ctx, op): ...

    def twice(b, op):  # onnx.Custom "com.example" "Twice": y = x + x
        (x,) = op.inputs
        return [b.binary("add", x, x)]

    def register(registry):
        registry.add_pass(MyPass)
        registry.add_pipeline("my-cleanup", "my-pass,canonicalize,cse", "tidy up")
        registry.add_lowering(("com.example", "Twice"), twice)

A plugin that fails to load (a missing file, an exception while running it or
its `register`, no `register` at all, or a name that clashes with an existing
pass) stops the command with `cannot load plugin '<which>': <reason>`:
silently running without a user's passes would be worse.

Passes and pipelines go into a `rung.lowering.pipelines.Registry` (one per
command run, so plugins never leak between runs in one process); dialects go
to `rung.dialects.register_dialect`, since every context rung creates must
know them, and lowerings to the lowering passes' handler tables: both are
global to the process. A plugin loaded again in the same process replaces
what it added before; `remove_lowering` takes a lowering away.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import sys
import traceback
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xdsl.ir import Dialect, Operation
from xdsl.passes import ModulePass

from rung.errors import RungError
from rung.lowering.pipelines import Registry

if TYPE_CHECKING:  # (importing them costs start-up time: see `lowering_table`)
    from rung.lowering.kit import HandlerTable, Key

ENTRY_POINT_GROUP = "rung.plugins"

_PLUGIN_DIALECTS: dict[str, tuple[str, str]] = {}
"""Dialects added by plugins in this process: name -> (plugin key, plugin label)."""

_PLUGIN_LOWERINGS: dict[tuple[str, Key], tuple[str, str, Callable[..., Any] | None]] = {}
"""Lowerings added by plugins in this process: (table, op key) -> (plugin key, plugin
label, the handler it replaced)."""


class PluginRegistry:
    """What a plugin's `register(registry)` receives: the three ways to extend rung."""

    def __init__(self, registry: Registry, origin: str, key: str | None = None) -> None:
        """`origin` names the plugin in messages; `key` identifies it (a resolved path)."""
        self._registry = registry
        self._origin = origin
        self._key = key or origin
        self.dialects: list[Dialect] = []
        self.lowerings: list[Key] = []

    def add_dialect(self, dialect: Dialect) -> None:
        """Make `dialect` parse and print in opt and in every rung context."""
        if not isinstance(dialect, Dialect):
            raise RungError(f"add_dialect expects an xdsl.ir.Dialect, got {type(dialect).__name__}")
        from rung.dialects import context, register_dialect

        name = dialect.name
        owner = _PLUGIN_DIALECTS.get(name)
        if owner is None and name in context().registered_dialect_names:
            raise RungError(f"cannot add dialect '{name}': rung already has a dialect of that name")
        if owner is not None and owner[0] != self._key:
            raise RungError(f"cannot add dialect '{name}': {owner[1]} already added one")
        # A plugin loaded again (a later run in the same process) replaces its dialect.
        _PLUGIN_DIALECTS[name] = (self._key, self._origin)
        register_dialect(name, lambda: dialect)
        self.dialects.append(dialect)

    def add_pass(self, pass_class: type[ModulePass]) -> None:
        """Make `pass_class` runnable as `-p <pass_class.name>`."""
        self._registry.add_pass(pass_class, origin=self._origin)

    def add_pipeline(self, name: str, pipeline_text: str, help: str = "") -> None:
        """Name a pipeline: usable in `-p` and as `opt --<name>`."""
        self._registry.add_pipeline(name, pipeline_text, help, origin=self._origin)

    def add_lowering(self, op: Key, handler: Callable[..., Any], *, replace: bool = False) -> None:
        """Lower `op` with `handler`: to core for an onnx op class or a custom op's
        `(domain, op_type)`, to kernel for a core op class."""
        table = lowering_table(op)
        key = (table.what, op)
        owner = _PLUGIN_LOWERINGS.get(key)
        if owner is not None and owner[0] != self._key:
            raise RungError(
                f"cannot add a lowering for {_key_name(op)}: {owner[1]} already added one"
            )
        # A plugin loaded again (a later run in the same process) replaces its lowering.
        replaced = table.add(op, handler, replace=replace or owner is not None)
        previous = owner[2] if owner is not None else replaced
        _PLUGIN_LOWERINGS[key] = (self._key, self._origin, previous)
        self.lowerings.append(op)


def lowering_table(op: object) -> HandlerTable[Any]:
    """The handler table a lowering of `op` belongs to (see `PluginRegistry.add_lowering`).

    The dialects and lowering packages are imported here, when a plugin adds a
    lowering, so that `opt` runs without plugins start as fast as before.
    """
    from rung.dialects import core
    from rung.dialects.onnx import CustomOp, OnnxOp

    if isinstance(op, tuple) or (isinstance(op, type) and issubclass(op, OnnxOp | CustomOp)):
        from rung.lowering.onnx_to_core.registry import TABLE

        return TABLE
    if isinstance(op, type) and issubclass(op, core.CoreOp):
        from rung.lowering.core_to_kernel.registry import TABLE

        return TABLE
    what = f"class {op.__name__}" if isinstance(op, type) else repr(op)
    hint = f" ('{op.name}')" if isinstance(op, type) and issubclass(op, Operation) else ""
    raise RungError(
        f"add_lowering expects an onnx op class, a custom op's (domain, op_type) or a "
        f"core op class, not {what}{hint}"
    )


def _key_name(op: Key) -> str:
    from rung.lowering.kit import key_name

    return key_name(op)


def remove_lowering(op: Key) -> None:
    """Take away a lowering a plugin added; a lowering of rung's own that it replaced
    comes back."""
    table = lowering_table(op)
    table.remove(op)
    owner = _PLUGIN_LOWERINGS.pop((table.what, op), None)
    if owner is not None and owner[2] is not None:
        table.add(op, owner[2])


def load_plugin_file(registry: Registry, path: str) -> None:
    """Run the plugin file at `path` and call its `register`."""
    label = f"cannot load plugin '{path}'"
    file = Path(path)
    if not file.is_file():
        reason = "it is a directory" if file.is_dir() else "no such file"
        raise RungError(f"{label}: {reason}")
    resolved = file.resolve()
    digest = hashlib.sha1(str(resolved).encode()).hexdigest()[:12]
    stem = "".join(c if c.isalnum() else "_" for c in resolved.stem)
    module_name = f"rung_plugin_{stem}_{digest}"
    spec = importlib.util.spec_from_file_location(module_name, resolved)
    if spec is None or spec.loader is None:
        raise RungError(f"{label}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    # Dataclasses (every ModulePass) look their module up in sys.modules.
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as err:  # noqa: BLE001 - any failure in user code is a load error
        del sys.modules[module_name]
        raise RungError(f"{label}: {_reason(err, resolved)}") from None
    register = getattr(module, "register", None)
    if not callable(register):
        raise RungError(f"{label}: it defines no function 'register(registry)'")
    _call(register, PluginRegistry(registry, f"plugin '{path}'", str(resolved)), label, resolved)


def load_entry_points(registry: Registry) -> None:
    """Load every plugin installed under the `rung.plugins` entry-point group."""
    for entry in _entry_points():
        label = f"cannot load plugin '{entry.name}' (entry point '{entry.value}')"
        try:
            register = entry.load()
        except Exception as err:  # noqa: BLE001 - a broken installed plugin
            raise RungError(f"{label}: {_reason(err, None)}") from None
        if not callable(register):
            raise RungError(f"{label}: it is a {type(register).__name__}, not a callable")
        _call(
            register,
            PluginRegistry(registry, f"plugin '{entry.name}'", f"entry point {entry.value}"),
            label,
            None,
        )


def load_plugins(
    registry: Registry, files: Iterable[str] = (), *, entry_points: bool = True
) -> None:
    """Installed plugins first (unless `entry_points` is False), then `files` in order.

    A file named twice is loaded once.
    """
    if entry_points:
        load_entry_points(registry)
    seen: set[Path] = set()
    for path in files:
        key = Path(path).resolve()
        if key in seen:
            continue
        seen.add(key)
        load_plugin_file(registry, path)


def _entry_points() -> list[importlib.metadata.EntryPoint]:
    """The installed `rung.plugins` entry points, sorted by name for a stable order."""
    found = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    return sorted(found, key=lambda e: e.name)


def _call(
    register: Callable[[PluginRegistry], Any],
    plugin_registry: PluginRegistry,
    label: str,
    file: Path | None,
) -> None:
    try:
        register(plugin_registry)
    except RungError as err:
        raise RungError(f"{label}: {err}") from None
    except Exception as err:  # noqa: BLE001 - any failure in user code is a load error
        raise RungError(f"{label}: {_reason(err, file)}") from None


def _reason(err: BaseException, file: Path | None) -> str:
    """The error in one line, with the plugin's own line number where we have it."""
    text = str(err).strip().splitlines()
    message = f"{type(err).__name__}: {text[0]}" if text else type(err).__name__
    if isinstance(err, SyntaxError):
        return f"SyntaxError: {err.msg} (line {err.lineno})"
    if file is not None:
        for frame in reversed(traceback.extract_tb(err.__traceback__)):
            if frame.filename and Path(frame.filename) == file:
                return f"{message} (line {frame.lineno})"
    return message


__all__ = [
    "ENTRY_POINT_GROUP",
    "PluginRegistry",
    "load_entry_points",
    "load_plugin_file",
    "load_plugins",
    "lowering_table",
    "remove_lowering",
]
