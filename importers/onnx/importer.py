"""Building onnx-dialect IR from an ONNX ModelProto.

The graph becomes a `func.func` whose arguments and results keep their ONNX
names and types; each node becomes one op of the onnx dialect (or
`onnx.Custom` for domains the dialect does not model), located at its node
name; initializers become `onnx.Constant` ops whose data lives in resources;
graph attributes become regions that end in `onnx.Yield`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from onnx import GraphProto, ModelProto, NodeProto, TensorProto, TypeProto, ValueInfoProto
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    IntegerAttr,
    ModuleOp,
    NameLoc,
    NoneAttr,
    StringAttr,
    i64,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from rung.dialects.onnx import OPS_BY_TYPE, CustomOp, YieldOp
from rung.dialects.onnx.base import OnnxOp
from rung.dialects.onnx.generated_ops import ConstantOp
from rung.dialects.resources import store_of
from rung.errors import RungError

from .convert import attribute, dim_params, mlir_type, tensor_attr
from .loader import (
    LoadedModel,
    check,
    infer_shapes,
    inline_functions,
    load,
    read_external_data,
    validate_external_data,
)
from .validate import validate_model

MODELED_DOMAINS = {"": "", "ai.onnx": "", "ai.onnx.ml": "ai.onnx.ml"}

_NAME = re.compile(r"[^\w$.-]")


def value_name_hint(name: str) -> str | None:
    """A readable SSA name for an ONNX value name, or None for numeric names.

    Purely numeric ONNX names (`123`, common in exported models) are left to
    the printer's own numbering rather than turned into noise like `%v123`.
    """
    hint = _NAME.sub("_", name)
    if not hint or hint[0].isdigit():
        return None
    return hint


def domain_key(domain: str) -> str:
    """How the module's opset attributes spell a domain ('' is ai.onnx)."""
    return domain or "ai.onnx"


def import_model(
    model: ModelProto | str | os.PathLike[str],
    *,
    base_dir: str | os.PathLike[str] | None = None,
    upgrade: bool = True,
) -> ModuleOp:
    """Import an ONNX model (a ModelProto or a path) as a verified onnx-dialect module.

    `base_dir` resolves external data of a ModelProto given in memory; for a
    path it is the model's folder. Every op is brought to the dialect's
    canonical (latest) opset unless `upgrade` is False.
    """
    if isinstance(model, ModelProto):
        loaded = LoadedModel(model, "<model>", Path(base_dir) if base_dir else None)
    else:
        loaded = load(model)
    return import_loaded(loaded, upgrade=upgrade)


def import_loaded(loaded: LoadedModel, *, upgrade: bool = True) -> ModuleOp:
    model = loaded.model
    source = loaded.source
    validate_model(model, source)  # before anything else reads the proto
    model = inline_functions(model)
    validate_external_data(model, loaded.base_dir, source)
    check(model, source)
    original = {domain_key(o.domain): o.version for o in model.opset_import}
    if upgrade:
        from .upgrade import upgrade_model

        try:
            model, _ = upgrade_model(model)
        except RungError as err:
            raise RungError(f"'{source}': {err.message}", location=err.location) from None
    model = infer_shapes(model, source)
    return GraphImporter(model, loaded, original).run()


class _Scope:
    """Values visible in a graph: its own, then those of the enclosing graphs."""

    def __init__(self, parent: _Scope | None = None) -> None:
        self.values: dict[str, SSAValue] = {}
        self.types: dict[str, TypeProto] = {}
        self.parent = parent

    def lookup(self, name: str) -> SSAValue | None:
        scope: _Scope | None = self
        while scope is not None:
            if name in scope.values:
                return scope.values[name]
            scope = scope.parent
        return None

    def type_of(self, name: str) -> TypeProto | None:
        scope: _Scope | None = self
        while scope is not None:
            if name in scope.types:
                return scope.types[name]
            scope = scope.parent
        return None


class GraphImporter:
    """Turns one ModelProto into a module; one instance per import."""

    def __init__(self, model: ModelProto, loaded: LoadedModel, original: dict[str, int]) -> None:
        self.model = model
        self.loaded = loaded
        self.source = loaded.source
        self.original = original
        self.module = ModuleOp([])
        self.store = store_of(self.module)
        self.opsets = {domain_key(o.domain): o.version for o in model.opset_import}

    # ---- entry ------------------------------------------------------------

    def run(self) -> ModuleOp:
        graph = self.model.graph
        func = self.import_main(graph)
        self.module.body.block.add_op(func)
        self.module.attributes.update(self.module_attributes())
        try:
            self.module.verify()
        except VerifyException as err:
            raise RungError(f"'{self.source}': imported IR does not verify: {err}") from None
        return self.module

    def module_attributes(self) -> dict[str, Attribute]:
        m = self.model
        attrs: dict[str, Attribute] = {
            "onnx.ir_version": IntegerAttr(self.loaded.model.ir_version, i64),
            "onnx.opset_import": _int_dict(self.opsets),
            "onnx.original_opset_import": _int_dict(self.original),
        }
        if m.producer_name:
            producer = m.producer_name + (f" {m.producer_version}" if m.producer_version else "")
            attrs["onnx.producer"] = StringAttr(producer)
        if self.source != "<model>":
            attrs["onnx.source"] = StringAttr(os.path.basename(self.source))
        if m.metadata_props:
            attrs["onnx.metadata"] = DictionaryAttr(
                {p.key: StringAttr(p.value) for p in m.metadata_props}
            )
        return attrs

    def import_main(self, graph: GraphProto) -> FuncOp:
        scope = _Scope()
        self.collect_types(graph, scope)
        initializer_names = {t.name for t in graph.initializer}
        inputs = [vi for vi in graph.input if vi.name not in initializer_names]
        arg_types = [self.value_type(vi.type, f"graph input '{vi.name}'") for vi in inputs]
        block = Block(arg_types=arg_types)
        for arg, vi in zip(block.args, inputs, strict=True):
            arg.name_hint = value_name_hint(vi.name)
            scope.values[vi.name] = arg
        self.import_initializers(graph, scope, block)
        self.import_nodes(graph.node, scope, block)
        results = [self.output_value(vi.name, scope, "graph output") for vi in graph.output]
        block.add_op(ReturnOp(*results))
        name = graph.name if re.fullmatch(r"[A-Za-z_][\w$.]*", graph.name or "") else "main"
        func = FuncOp(
            name,
            FunctionType.from_lists(arg_types, [r.type for r in results]),
            Region(block),
        )
        func.arg_attrs = ArrayAttr([self.io_attrs(vi) for vi in inputs])
        func.res_attrs = ArrayAttr([self.io_attrs(vi) for vi in graph.output])
        return func

    def io_attrs(self, vi: ValueInfoProto) -> DictionaryAttr:
        attrs: dict[str, Attribute] = {"onnx.name": StringAttr(vi.name)}
        params = dim_params(vi.type)
        if any(params):
            attrs["onnx.dim_params"] = ArrayAttr([StringAttr(p) for p in params])
        return DictionaryAttr(attrs)

    # ---- values -------------------------------------------------------------

    def collect_types(self, graph: GraphProto, scope: _Scope) -> None:
        for vi in (*graph.input, *graph.value_info, *graph.output):
            if vi.HasField("type"):
                scope.types[vi.name] = vi.type

    def value_type(self, tp: TypeProto | None, where: str) -> Attribute:
        try:
            return mlir_type(tp, where)
        except RungError as err:
            raise RungError(f"'{self.source}': {err.message}") from None

    def output_value(self, name: str, scope: _Scope, what: str) -> SSAValue:
        value = scope.lookup(name)
        if value is None:
            raise RungError(f"'{self.source}': {what} '{name}' is not produced by any node")
        return value

    def blob(self, hint: str, data: bytes) -> str:
        return self.store.add(hint, data)

    def read_external(self, tensor: TensorProto) -> bytes:
        return read_external_data(tensor, self.loaded.base_dir, self.source)

    def import_initializers(self, graph: GraphProto, scope: _Scope, block: Block) -> None:
        for tensor in graph.initializer:
            where = f"'{self.source}': initializer '{tensor.name}'"
            value = tensor_attr(tensor, where, self.blob, self.read_external)
            op = ConstantOp.build(
                result_types=[value.type],  # type: ignore[attr-defined]
                properties={"value": value},
            )
            op.location = NameLoc(StringAttr(tensor.name), NoneAttr())
            op.results[0].name_hint = value_name_hint(tensor.name)
            block.add_op(op)
            scope.values[tensor.name] = op.results[0]
        for sparse in graph.sparse_initializer:
            raise RungError(
                f"'{self.source}': sparse initializer '{sparse.values.name}' is not supported; "
                "densify it first (onnx.numpy_helper / a Constant node)"
            )

    # ---- nodes --------------------------------------------------------------

    def import_nodes(self, nodes: Sequence[NodeProto], scope: _Scope, block: Block) -> None:
        for index, node in enumerate(nodes):
            op = self.import_node(node, index, scope)
            block.add_op(op)

    def node_label(self, node: NodeProto, index: int) -> str:
        return f"node '{node.name}'" if node.name else f"node #{index} ({node.op_type})"

    def import_node(self, node: NodeProto, index: int, scope: _Scope) -> Operation:
        label = self.node_label(node, index)
        where = f"'{self.source}': {label}"
        inputs: list[SSAValue | None] = []
        for name in node.input:
            if not name:
                inputs.append(None)
                continue
            value = scope.lookup(name)
            if value is None:
                raise RungError(
                    f"{where} ({node.op_type}) uses '{name}', which no earlier node, input "
                    "or initializer defines"
                )
            inputs.append(value)
        output_types: list[Attribute | None] = [
            None if not name else self.value_type(scope.type_of(name), f"{label} output '{name}'")
            for name in node.output
        ]
        attributes: dict[str, Attribute] = {}
        graphs: dict[str, Region] = {}
        for attr in node.attribute:
            if attr.ref_attr_name:
                raise RungError(f"{where}: attribute '{attr.name}' refers to a function attribute")
            if attr.type == attr.GRAPH:
                graphs[attr.name] = self.import_subgraph(attr.g, scope, f"{label} '{attr.name}'")
            elif attr.type == attr.GRAPHS:
                raise RungError(f"{where}: attribute '{attr.name}' holds a list of graphs")
            else:
                attributes[attr.name] = attribute(
                    attr, f"{where} attribute '{attr.name}'", self.blob, self.read_external
                )
        domain = MODELED_DOMAINS.get(node.domain)
        op_class = OPS_BY_TYPE.get((domain, node.op_type)) if domain is not None else None
        if op_class is None:
            if domain is not None:
                raise RungError(
                    f"{where}: unknown op '{node.op_type}' in domain '{node.domain or 'ai.onnx'}'"
                )
            op: Operation = CustomOp(
                node.domain, node.op_type, inputs, output_types, attributes, graphs
            )
        else:
            op = self.build_op(op_class, inputs, output_types, attributes, graphs, where)
        op.location = NameLoc(StringAttr(node.name or f"{node.op_type}#{index}"), NoneAttr())
        results = iter(op.results)
        for name, type in zip(node.output, output_types, strict=True):
            if type is None:
                continue
            result = next(results)
            result.name_hint = value_name_hint(name)
            scope.values[name] = result
        return op

    def build_op(
        self,
        op_class: type[OnnxOp],
        inputs: list[SSAValue | None],
        output_types: list[Attribute | None],
        attributes: dict[str, Attribute],
        graphs: dict[str, Region],
        where: str,
    ) -> OnnxOp:
        schema = op_class.SCHEMA
        known = {a.name for a in schema.attributes}
        unknown = [k for k in attributes if k not in known]
        if unknown:
            raise RungError(
                f"{where} ({schema.op_type}-{schema.version}): unknown attribute "
                f"'{unknown[0]}'; allowed: {', '.join(sorted(known)) or 'none'}"
            )
        missing = [name for name in schema.regions if name not in graphs]
        if missing:
            raise RungError(f"{where} ({schema.op_type}): missing graph attribute '{missing[0]}'")
        try:
            return op_class.from_positions(
                inputs, output_types, attributes, {}, [graphs[n] for n in schema.regions]
            )
        except ValueError as err:
            raise RungError(f"{where} ({schema.op_type}): {err}") from None

    def import_subgraph(self, graph: GraphProto, parent: _Scope, label: str) -> Region:
        scope = _Scope(parent)
        self.collect_types(graph, scope)
        arg_types = [self.value_type(vi.type, f"{label} input '{vi.name}'") for vi in graph.input]
        block = Block(arg_types=arg_types)
        for arg, vi in zip(block.args, graph.input, strict=True):
            arg.name_hint = value_name_hint(vi.name)
            scope.values[vi.name] = arg
        self.import_initializers(graph, scope, block)
        self.import_nodes(graph.node, scope, block)
        outputs = [self.output_value(vi.name, scope, f"{label} output") for vi in graph.output]
        block.add_op(YieldOp(outputs))
        return Region(block)


def _int_dict(values: dict[str, int]) -> DictionaryAttr:
    return DictionaryAttr({k: IntegerAttr(v, i64) for k, v in sorted(values.items())})
