"""`rung view`: a model at any level as one self-contained HTML page.

The page is for reading a graph, as netron does for ONNX files, but at every
rung of the ladder: the same drawing works for onnx, torch, core and kernel IR,
because it is built from the IR's structure alone (ops, SSA def-use edges,
types, locations), not from any dialect's meaning.

    module ──graph_json──▶ dict ──render_html──▶ one .html (data, layout library, script)

- Nodes are the ops of the main function's body. Constant ops (`onnx.Constant`,
  `core.constant`, `kernel.constant`, `arith.constant`, …: no operands, no
  regions) are not drawn; they are listed in the panel of each op that uses
  them, as netron shows initializers. The terminator (`func.return`, `*.yield`)
  becomes the graph's output nodes. So an imported ONNX graph draws one node
  per ONNX node that is not a `Constant`.
- Edges are SSA def-use. At buffer level (kernel), where ops write into buffers
  instead of returning values, an edge into an op that uses a buffer (or a
  view of it) comes from the op that last wrote that buffer, so the drawing
  still shows data flowing from the inputs to the outputs.
- Ops with regions (`onnx.If`/`Loop`/`Scan`, `core.if`/`loop`, `kernel.loop`,
  `scf.if`) are drawn collapsed with a `+`; opening one shows its regions as
  graphs of their own, where values captured from outside appear as inputs.
- The page lays the graph out in the browser with dagre (vendored in
  `view_assets/`, see its README), so it needs no network and no Graphviz.
  dagre runs in a Web Worker made from the page's own text (the dagre script
  element, `id="rung-dagre"`, and the layout function), since a page opened
  from file:// cannot load a worker file: a 1,500-node kernel graph takes
  seconds to lay out, and the page must stay usable meanwhile. Browsers
  without workers lay out on the main thread.
- The data travels as JSON in a `<script type="application/json">`, with `<`,
  `>` and `&` escaped so that no attribute text can close the element.
  Constants never carry their data, only their type (and values, up to 16
  elements), so a page stays small whatever the weights weigh.

`marks` (from `rung compare`) highlights nodes by name (their location's
name, e.g. the ONNX node name), lists them in a banner and centres on the first.
"""

from __future__ import annotations

import html
import io
import json
import os
from collections.abc import Mapping
from importlib import resources
from typing import Any

from xdsl.dialects.builtin import (
    ArrayAttr,
    CallSiteLoc,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    DictionaryAttr,
    FusedLoc,
    MemRefType,
    ModuleOp,
    NameLoc,
    StringAttr,
    TensorType,
    UnknownLoc,
    VectorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.printer import Printer
from xdsl.traits import (
    IsTerminator,
    MemoryAllocEffect,
    MemoryFreeEffect,
    MemoryReadEffect,
    MemoryWriteEffect,
    Pure,
    RecursiveMemoryEffect,
)

from rung.dialects.signature import io_names, main_function
from rung.errors import RungError
from rung.files import write_atomically

SMALL_CONSTANT = 16
"""Constants with at most this many elements show their values; larger ones only their type."""

MAX_TEXT = 300
"""Attribute texts are cut after this many characters: the panel is for reading, not data."""

MAX_ELEMENTS_PRINTED = 64
"""Array attributes longer than this are summarised rather than printed element by element."""

_ASSETS = "view_assets"

_DECLARED_EFFECTS = (
    Pure,
    MemoryReadEffect,
    MemoryWriteEffect,
    MemoryAllocEffect,
    MemoryFreeEffect,
    RecursiveMemoryEffect,
    IsTerminator,
)
"""Traits that say what an op does to memory; an op with none of them may do anything."""


# ---- graph extraction ----------------------------------------------------------------------


def graph_json(module: ModuleOp) -> dict[str, Any]:
    """The module's main function as the page's data: graphs of nodes and edges.

    `graphs[0]` is the main function's body; every op region that the page can
    open is another entry, named by the op that holds it (`parent`).
    """
    return _Extractor(module).run()


def is_folded(op: Operation) -> bool:
    """Whether `op` is a constant that the page lists with its users instead of drawing."""
    short = op.name.rsplit(".", 1)[-1].lower()
    return short == "constant" and not op.operands and not op.regions and len(op.results) == 1


def location_name(op: Operation) -> str:
    """The name the source gave the op (e.g. the ONNX node name), or ''."""
    loc = op.location
    while True:
        if isinstance(loc, NameLoc):
            return loc.desc.data
        if isinstance(loc, CallSiteLoc):
            loc = loc.callee
            continue
        if isinstance(loc, FusedLoc):
            names = [location_name_of(sub) for sub in loc.locations.data]
            return next((name for name in names if name), "")
        return ""


def location_name_of(loc: Attribute) -> str:
    """`location_name` for a location attribute rather than an op."""
    if isinstance(loc, NameLoc):
        return loc.desc.data
    return ""


def location_text(op: Operation) -> str:
    """The op's location as MLIR prints it (`loc("conv1")`), or '' if unknown."""
    loc = op.location
    if loc is None or isinstance(loc, UnknownLoc):
        return ""
    return _cut(_print(loc))


def type_text(type: Attribute) -> str:
    """A short type for drawing: `1x64x56x56 f32`, `memref 2x3 f32`, or the printed type."""
    if isinstance(type, TensorType | MemRefType | VectorType):
        dims = "x".join("?" if d < 0 else str(d) for d in type.get_shape())
        prefix = "" if isinstance(type, TensorType) else type.name.split(".")[-1] + " "
        element = _print(type.element_type)
        return f"{prefix}{dims} {element}" if dims else f"{prefix}{element}"
    return _cut(_print(type), 60)


def attribute_text(attr: Attribute) -> str:
    """An attribute as the panel shows it: MLIR text, large data summarised, long text cut."""
    if isinstance(attr, DenseIntOrFPElementsAttr):
        count = _element_count(attr.get_type())
        if count > SMALL_CONSTANT:
            return f"dense<…{count} elements…> : {_print(attr.get_type())}"
    if isinstance(attr, DenseResourceAttr):
        return f"dense_resource<{attr.resource_handle.data}> : {_print(attr.type)}"
    if isinstance(attr, DenseArrayBase):
        count = len(attr)
        if count > MAX_ELEMENTS_PRINTED:
            return f"array<{_print(attr.elt_type)}: …{count} elements…>"
    if isinstance(attr, ArrayAttr) and len(attr.data) > MAX_ELEMENTS_PRINTED:
        return f"[…{len(attr.data)} elements…]"
    if isinstance(attr, DictionaryAttr):
        return _cut("{" + ", ".join(f"{k} = {attribute_text(v)}" for k, v in attr.data.items()))
    return _cut(_print(attr))


def _element_count(type: Attribute) -> int:
    if isinstance(type, TensorType | MemRefType | VectorType):
        count = 1
        for dim in type.get_shape():
            count *= max(dim, 0)
        return count
    return 0


def _print(attr: Attribute) -> str:
    stream = io.StringIO()
    Printer(stream=stream).print_attribute(attr)
    return stream.getvalue()


def _cut(text: str, limit: int = MAX_TEXT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short_name(op: Operation) -> str:
    """The op's name without its dialect, plus its function where the op names one.

    `core.binary` with `fn = "add"` reads `binary add`, `core.pool` with
    `kind = "max"` reads `pool max`: the generic op name alone would say little.
    """
    short = op.name.split(".", 1)[-1] if "." in op.name else op.name
    for key in ("fn", "kind"):
        value = op.properties.get(key) or op.attributes.get(key)
        if isinstance(value, StringAttr) and len(value.data) <= 24:
            return f"{short} {value.data}"
    return short


class _Extractor:
    """Walks the main function once, numbering nodes and graphs for the page."""

    def __init__(self, module: ModuleOp) -> None:
        self.module = module
        self.graphs: list[dict[str, Any]] = []
        self.value_names: dict[SSAValue, str] = {}
        self.next_node = 0
        self.next_value = 0
        self.aliases: dict[SSAValue, SSAValue] = {}
        for op in module.walk():
            if op.has_trait(Pure) and op.results:
                buffers = [v for v in op.operands if isinstance(v.type, MemRefType)]
                for result in op.results:
                    if buffers and isinstance(result.type, MemRefType):
                        self.aliases[result] = buffers[0]

    def root(self, value: SSAValue) -> SSAValue:
        """The buffer a view is of (itself if it is no view)."""
        while value in self.aliases:
            value = self.aliases[value]
        return value

    def written(self, op: Operation) -> set[SSAValue]:
        """The buffers `op` (or an op in its regions) writes.

        An op with a write effect writes its last buffer operand (the destination, as in
        `kernel.store`, `kernel.copy` and `kernel.matmul`); an op that declares no effects
        at all might write any of its buffers.
        """
        found: set[SSAValue] = set()
        for inner in op.walk():
            buffers = [v for v in inner.operands if isinstance(v.type, MemRefType)]
            if not buffers:
                continue
            if inner.has_trait(MemoryWriteEffect):
                found.add(self.root(buffers[-1]))
            elif not any(inner.has_trait(t) for t in _DECLARED_EFFECTS):
                found.update(self.root(v) for v in buffers)
        return found

    def run(self) -> dict[str, Any]:
        func = main_function(self.module)
        ins, outs = io_names(func)
        source = self.module.attributes.get("onnx.source")
        self.graph(
            func.body.block,
            title=f"@{func.sym_name.data}",
            parent=None,
            input_names=ins,
            output_names=outs,
        )
        return {
            "function": func.sym_name.data,
            "source": source.data if isinstance(source, StringAttr) else "",
            "inputs": [
                {"name": name, "type": type_text(arg.type)}
                for name, arg in zip(ins, func.args, strict=True)
            ],
            "outputs": [
                {"name": name, "type": type_text(t)}
                for name, t in zip(outs, func.function_type.outputs.data, strict=True)
            ],
            "graphs": self.graphs,
        }

    def node_id(self) -> str:
        self.next_node += 1
        return f"n{self.next_node}"

    def value_name(self, value: SSAValue) -> str:
        name = self.value_names.get(value)
        if name is None:
            if value.name_hint:
                name = f"%{value.name_hint}"
            else:
                name = f"%{self.next_value}"
                self.next_value += 1
            self.value_names[value] = name
        return name

    def graph(
        self,
        block: Block,
        *,
        title: str,
        parent: str | None,
        input_names: list[str] | None = None,
        output_names: list[str] | None = None,
    ) -> int:
        """Adds the graph of one block (and, first, those of its ops' regions); its index."""
        index = len(self.graphs)
        nodes: list[dict[str, Any]] = []
        edges: dict[tuple[str, str], list[str]] = {}
        graph: dict[str, Any] = {"title": title, "parent": parent, "nodes": nodes, "edges": []}
        self.graphs.append(graph)
        producer: dict[SSAValue, str] = {}
        captured: dict[SSAValue, str] = {}
        constants: dict[SSAValue, Operation] = {}
        last_writer: dict[SSAValue, str] = {}  # buffer -> the node that wrote it last

        for i, arg in enumerate(block.args):
            name = input_names[i] if input_names and i < len(input_names) else None
            node_id = self.node_id()
            nodes.append(
                {
                    "id": node_id,
                    "kind": "input",
                    "label": name or self.value_name(arg),
                    "name": name or self.value_name(arg),
                    "type": type_text(arg.type),
                    "results": [[self.value_name(arg), _print(arg.type)]],
                }
            )
            producer[arg] = node_id

        def source_of(value: SSAValue) -> str | None:
            """The node a value comes from in this graph (a capture node if from outside)."""
            if value in producer:
                return producer[value]
            if value in constants:
                return None
            if value in captured:
                return captured[value]
            owner = value.owner
            if isinstance(owner, Operation) and is_folded(owner):
                return None
            node_id = self.node_id()
            nodes.append(
                {
                    "id": node_id,
                    "kind": "capture",
                    "label": self.value_name(value),
                    "name": self.value_name(value),
                    "type": type_text(value.type),
                    "results": [[self.value_name(value), _print(value.type)]],
                }
            )
            captured[value] = node_id
            return node_id

        def add_edge(source: str | None, target: str, value: SSAValue) -> None:
            if source is None or source == target:
                return
            edges.setdefault((source, target), []).append(
                f"{self.value_name(value)}: {type_text(value.type)}"
            )

        ops = list(block.ops)
        terminator = ops[-1] if ops and ops[-1].has_trait(IsTerminator) else None
        for op in ops:
            if op is terminator:
                break
            if is_folded(op):
                constants[op.results[0]] = op
                continue
            node_id = self.node_id()
            node = self.op_node(op, node_id, constants)
            nodes.append(node)
            regions = []
            for r, region in enumerate(op.regions):
                if not region.blocks:
                    continue
                region_title = f"{node['label']} {node['name']}".strip()
                label = _region_name(op, r)
                first = region.blocks.first
                assert first is not None
                sub = self.graph(first, title=f"{region_title}: {label}", parent=node_id)
                regions.append({"name": label, "graph": sub})
            if regions:
                node["regions"] = regions
            for value in _used_values(op):
                add_edge(last_writer.get(self.root(value)) or source_of(value), node_id, value)
            for root in self.written(op):
                last_writer[root] = node_id
            for result in op.results:
                producer[result] = node_id

        if terminator is not None:
            returned = list(terminator.operands)
            for i, value in enumerate(returned):
                name = output_names[i] if output_names and i < len(output_names) else None
                node_id = self.node_id()
                out = {
                    "id": node_id,
                    "kind": "output",
                    "label": name or f"{terminator.name.split('.')[-1]} #{i}",
                    "name": name or "",
                    "type": type_text(value.type),
                    "operands": [self.operand(value, constants)],
                }
                nodes.append(out)
                add_edge(last_writer.get(self.root(value)) or source_of(value), node_id, value)
        graph["edges"] = [[s, t, "\n".join(labels)] for (s, t), labels in edges.items()]
        return index

    def op_node(
        self, op: Operation, node_id: str, constants: Mapping[SSAValue, Operation]
    ) -> dict[str, Any]:
        attrs = [[k, attribute_text(v)] for k, v in op.properties.items()]
        attrs += [[k, attribute_text(v)] for k, v in op.attributes.items()]
        results = [[self.value_name(r), _print(r.type)] for r in op.results]
        node: dict[str, Any] = {
            "id": node_id,
            "kind": "op",
            "op": op.name,
            "label": _short_name(op),
            "name": location_name(op),
            "loc": location_text(op),
            "type": ", ".join(type_text(r.type) for r in op.results[:3])
            + (", …" if len(op.results) > 3 else ""),
            "attrs": attrs,
            "operands": [self.operand(v, constants) for v in op.operands],
            "results": results,
        }
        return node

    def operand(self, value: SSAValue, constants: Mapping[SSAValue, Operation]) -> list[str]:
        """[name, type, what it is]: a constant's value (small) or type, else its producer."""
        what = ""
        owner = value.owner
        const = constants.get(value)
        if const is None and isinstance(owner, Operation) and is_folded(owner):
            const = owner
        if const is not None:
            value_attr = const.properties.get("value") or const.attributes.get("value")
            what = "constant " + (attribute_text(value_attr) if value_attr is not None else "")
            name = location_name(const)
            if name:
                what += f" ({name})"
        return [self.value_name(value), _print(value.type), what.strip()]


def _used_values(op: Operation) -> list[SSAValue]:
    """The values an op reads: its operands, then those its regions take from outside."""
    used: list[SSAValue] = list(op.operands)
    seen = set(used)
    if not op.regions:
        return used
    inside: set[Operation] = set(op.walk())
    for inner in op.walk():
        for value in inner.operands:
            if value in seen:
                continue
            owner = value.owner
            defined_by = owner if isinstance(owner, Operation) else owner.parent_op()
            if defined_by in inside:
                continue  # defined in the regions (or a region argument): not a capture
            seen.add(value)
            used.append(value)
    return used


def _region_name(op: Operation, index: int) -> str:
    """The region's name in the op's definition (`then_branch`, `body`), else `region <i>`."""
    try:
        regions = op.get_irdl_definition().regions  # type: ignore[attr-defined]
        if index < len(regions):
            return regions[index][0]
    except (AttributeError, NotImplementedError):
        pass
    return f"region {index}"


# ---- HTML ----------------------------------------------------------------------------------


def _asset(name: str) -> str:
    return resources.files("rung.runtime").joinpath(_ASSETS, name).read_text(encoding="utf-8")


def _script_safe_json(data: object) -> str:
    """JSON that cannot end the `<script>` element it sits in, whatever strings it holds."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for raw, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, escaped)
    return text


def _script_safe_code(code: str) -> str:
    """A vendored script without its source-map comment and unable to close `<script>`."""
    lines = [ln for ln in code.splitlines() if not ln.startswith("//# sourceMappingURL=")]
    return "\n".join(lines).replace("</script", "<\\/script")


def render_html(
    module: ModuleOp,
    *,
    title: str = "",
    level: str = "",
    marks: Mapping[str, str] | None = None,
) -> str:
    """The page for `module`: one HTML document with its data, dagre and rung's script inline.

    `level` names the level on the page (default: the level the module's ops are at).
    """
    data = graph_json(module)
    data["title"] = title or data["source"] or f"@{data['function']}"
    data["level"] = level or _level_name(module)
    data["marks"] = dict(marks or {})
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(data['title'])} · rung view</title>\n"
        f"<style>\n{_asset('view.css')}\n</style>\n"
        "</head>\n<body>\n"
        f'<script type="application/json" id="rung-data">{_script_safe_json(data)}</script>\n'
        f'<script id="rung-dagre">\n{_script_safe_code(_asset("dagre.min.js"))}\n</script>\n'
        f"<script>\n{_script_safe_code(_asset('view.js'))}\n</script>\n"
        "</body>\n</html>\n"
    )


def _level_name(module: ModuleOp) -> str:
    """The level the module is at, for the page's badge ('' if it mixes levels)."""
    from rung.runtime.levels import level_of

    try:
        return level_of(module).name
    except RungError:
        return ""


def write_html(
    module: ModuleOp,
    path: str | os.PathLike[str],
    *,
    title: str = "",
    level: str = "",
    marks: Mapping[str, str] | None = None,
    force: bool = False,
) -> None:
    """Writes the page for `module` to `path`, all at once or not at all.

    An existing file is kept unless `force` (a command's `--force`).
    """
    text = render_html(module, title=title, level=level, marks=marks)
    data = text.encode("utf-8")
    write_atomically(os.fspath(path), lambda f: f.write(data), force=force)


__all__ = [
    "SMALL_CONSTANT",
    "attribute_text",
    "graph_json",
    "is_folded",
    "location_name",
    "render_html",
    "type_text",
    "write_html",
]
