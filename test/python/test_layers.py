"""rung's imports point down the ladder, and no module imports itself back.

`dialects` ← `importers` ← `lowering` ← `runtime` ← `tools`: each may import
only what is to its left. Below core, nothing imports a frontend's lowering
package (`onnx_to_core`, `torch_to_core`). Every import statement counts,
module-level or inside a function, so that a lazy import cannot hide a loop.
The graph is read from the source with `ast`; cycles are found by the
standard library's `graphlib`.
"""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LADDER = ["dialects", "importers", "lowering", "runtime", "tools"]
FRONTENDS = ("rung.lowering.onnx_to_core", "rung.lowering.torch_to_core")
BELOW_CORE = tuple(
    f"rung.lowering.{p}" for p in ("kit", "core_opt", "core_to_kernel", "kernel_opt", "kernel_to_c")
)


def _modules() -> dict[str, Path]:
    """Every module of rung by import name (`rung.lowering.kit`), from the source tree."""
    found: dict[str, Path] = {}
    for top in [*LADDER, "rung"]:
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if top == "rung":
                parts = parts[1:]
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(["rung", *parts])] = path
    return found


def _imports(name: str, path: Path, known: set[str]) -> list[tuple[str, int]]:
    """The rung modules that `path` imports, anywhere in it, with line numbers."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            targets = [base, *(f"{base}.{a.name}" for a in node.names)]
        out += [(t, node.lineno) for t in targets if t in known and t != name]
    return out


MODULES = _modules()
EDGES = {name: _imports(name, path, set(MODULES)) for name, path in MODULES.items()}


def _rung(name: str) -> int | None:
    """The module's place on the ladder (None for the top package `rung`, which all share)."""
    parts = name.split(".")
    return LADDER.index(parts[1]) if len(parts) > 1 and parts[1] in LADDER else None


def test_the_source_tree_is_found() -> None:
    assert "rung.lowering.pipelines" in MODULES
    assert "rung.runtime.session" in MODULES
    assert any(t == "rung.errors" for t, _ in EDGES["rung.dialects.core_eval"])


def test_imports_point_down_the_ladder() -> None:
    bad = []
    for name, targets in EDGES.items():
        here = _rung(name)
        for target, line in targets:
            there = _rung(target)
            if here is not None and there is not None and there > here:
                bad.append(f"{MODULES[name].relative_to(ROOT)}:{line}: imports {target}")
    assert not bad, "imports that point up the ladder:\n" + "\n".join(bad)


def test_nothing_below_core_imports_a_frontend() -> None:
    bad = []
    for name, targets in EDGES.items():
        if not name.startswith(BELOW_CORE):
            continue
        for target, line in targets:
            if target.startswith(FRONTENDS):
                bad.append(f"{MODULES[name].relative_to(ROOT)}:{line}: imports {target}")
    assert not bad, "lowering below core imports a frontend package:\n" + "\n".join(bad)


def test_no_import_cycles() -> None:
    graph = {name: {t for t, _ in targets} for name, targets in EDGES.items()}
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as err:
        cycle = " -> ".join(err.args[1])
        raise AssertionError(f"import cycle: {cycle}") from None


def test_the_checks_can_fail() -> None:
    """The cycle check sees a two-module loop, and the ladder check an upward import."""
    loop = {"a": {"b"}, "b": {"a"}}
    try:
        graphlib.TopologicalSorter(loop).prepare()
    except graphlib.CycleError:
        pass
    else:  # pragma: no cover
        raise AssertionError("graphlib missed a cycle")
    assert _rung("rung.runtime.session") > _rung("rung.lowering.kit")  # type: ignore[operator]
