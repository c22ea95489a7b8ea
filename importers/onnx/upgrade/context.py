"""What a rule sees besides its node: targets, fresh names, constants and types.

One `Ctx` serves a whole upgrade. Names, uses and inferred types are
computed once, the first time a rule asks; constants resolve through the
enclosing graphs (`Scope`), as ONNX's outer-scope references do.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import (
    FunctionProto,
    GraphProto,
    ModelProto,
    NodeProto,
    TensorProto,
    TypeProto,
    helper,
    numpy_helper,
)

from rung.errors import RungError

from .history import DEFAULT, canon_domain, schema_histories
from .protos import ints, np_dtype, subgraphs


@dataclass
class Scope:
    """One graph (or function body) being rewritten; constants resolve outward."""

    graph: GraphProto | None
    parent: Scope | None
    function: FunctionProto | None = None
    _consts: dict[str, TensorProto] | None = None

    def consts(self) -> dict[str, TensorProto]:
        if self._consts is None:
            found: dict[str, TensorProto] = {}
            if self.graph is not None:
                found.update((t.name, t) for t in self.graph.initializer)
            nodes = self.graph.node if self.graph is not None else self.function.node
            for n in nodes:
                if n.op_type == "Constant" and canon_domain(n.domain) == DEFAULT and n.output:
                    t = _constant_node_tensor(n)
                    if t is not None:
                        found[n.output[0]] = t
            self._consts = found
        return self._consts


def _constant_node_tensor(node: NodeProto) -> TensorProto | None:
    for a in node.attribute:
        if a.ref_attr_name:
            return None
        if a.name == "value":
            return a.t
        if a.name in ("value_float", "value_int", "value_floats", "value_ints"):
            value = helper.get_attribute_value(a)
            dtype = np.float32 if "float" in a.name else np.int64
            return numpy_helper.from_array(np.array(value, dtype=dtype))
    return None


@dataclass
class Ctx:
    """What rules need besides the node: targets, fresh names, constants, types."""

    targets: dict[str, int]
    source: ModelProto  # unmodified input model; type inference runs on it lazily
    work: ModelProto  # model being rewritten
    scope: Scope | None = None
    node_label: str = ""
    pending: list[NodeProto] = field(default_factory=list)
    _names: set[str] | None = None
    _uses: set[str] | None = None
    _types: dict[str, TypeProto] | None = None

    # --- errors -----------------------------------------------------------
    def error(self, node: NodeProto, version: int, what: str) -> RungError:
        return RungError(
            f"cannot upgrade {node.op_type} (version {version}) at {self.node_label} "
            f"to opset {self.targets.get(canon_domain(node.domain), '?')}: {what}"
        )

    # --- names ------------------------------------------------------------
    def fresh(self, hint: str) -> str:
        """A value/node name not used anywhere in the model."""
        if self._names is None:
            self._names = _all_names(self.work)
        base = hint or "v"
        name, i = base, 0
        while name in self._names:
            i += 1
            name = f"{base}_{i}"
        self._names.add(name)
        return name

    def is_used(self, name: str) -> bool:
        """Whether any node or graph output reads `name` (legacy outputs are often dead)."""
        if self._uses is None:
            self._uses = _all_uses(self.work)
        return name in self._uses

    # --- constants --------------------------------------------------------
    def const_tensor(self, name: str) -> TensorProto | None:
        scope = self.scope
        while scope is not None:
            t = scope.consts().get(name)
            if t is not None:
                return t
            scope = scope.parent
        return None

    def const(self, name: str) -> np.ndarray | None:
        """The value of `name` if it is an initializer or a Constant output."""
        if not name:
            return None
        t = self.const_tensor(name)
        if t is None or t.data_location == TensorProto.EXTERNAL:
            return None
        return numpy_helper.to_array(t)

    def add_const(self, hint: str, value: np.ndarray) -> str:
        """A new constant input: an initializer in graphs, a Constant node in functions."""
        name = self.fresh(hint)
        tensor = numpy_helper.from_array(np.asarray(value), name)
        scope = self.scope
        assert scope is not None
        if scope.graph is not None:
            scope.graph.initializer.append(tensor)
        else:
            self.pending.append(helper.make_node("Constant", [], [name], name=name, value=tensor))
        scope.consts()[name] = tensor
        return name

    def ints_input(self, hint: str, values: object) -> str:
        return self.add_const(hint, np.array(ints(values), dtype=np.int64))

    def scalar_like(self, hint: str, value: float, like: str) -> str:
        """A scalar constant with the element type of value `like`.

        Old attributes were always float; the inputs replacing them must match
        the data type, which only type inference knows. If it does not, a
        CastLike (opset 15+) defers the choice to run time.
        """
        elem = self.elem_type(like)
        if elem is not None:
            return self.add_const(hint, np.array(value, dtype=np_dtype(elem)))
        f32 = self.add_const(hint, np.array(value, dtype=np.float32))
        if self.targets[DEFAULT] < 15:
            return f32  # no CastLike yet; float is what these attributes meant
        out = self.fresh(hint + "_cast")
        self.pending.append(helper.make_node("CastLike", [f32, like], [out], name=out))
        return out

    # --- nodes ------------------------------------------------------------
    def make(
        self, op_type: str, inputs: list[str], hint: str, n_out: int = 1, **attrs: object
    ) -> NodeProto:
        """A helper node in the target form of `op_type` (default domain)."""
        hist = schema_histories()[DEFAULT].get(op_type)
        if hist is None or hist.at(self.targets[DEFAULT]) is None:
            raise RungError(
                f"upgrading {self.node_label} needs {op_type}, which opset "
                f"{self.targets[DEFAULT]} does not have; upgrade to a newer opset"
            )
        outputs = [self.fresh(f"{hint}_{op_type.lower()}") for _ in range(n_out)]
        return helper.make_node(op_type, inputs, outputs, name=outputs[0], **attrs)

    def unsqueeze(self, x: str, axes: list[int], hint: str) -> NodeProto:
        if self.targets[DEFAULT] >= 13:
            return self.make("Unsqueeze", [x, self.ints_input(hint + "_axes", axes)], hint)
        return self.make("Unsqueeze", [x], hint, axes=axes)

    # --- types ------------------------------------------------------------
    def type_of(self, name: str) -> TypeProto | None:
        if self.scope is not None and self.scope.function is not None:
            return None  # function bodies have their own names; graph types would mislead
        if self._types is None:
            self._types = _infer_types(self.source)
        return self._types.get(name)

    def elem_type(self, name: str) -> int | None:
        t = self.type_of(name)
        if t is not None and t.HasField("tensor_type") and t.tensor_type.elem_type:
            return t.tensor_type.elem_type
        c = self.const_tensor(name) if name else None
        return c.data_type if c is not None else None

    def shape(self, name: str) -> list[int | None] | None:
        """Static dims (None where symbolic), or None if even the rank is unknown."""
        c = self.const_tensor(name) if name else None
        if c is not None:
            return list(c.dims)
        t = self.type_of(name)
        if t is None or not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
            return None
        return [d.dim_value if d.HasField("dim_value") else None for d in t.tensor_type.shape.dim]

    def rank(self, name: str) -> int | None:
        s = self.shape(name)
        return None if s is None else len(s)


def _all_names(model: ModelProto) -> set[str]:
    names: set[str] = set()

    def graph_names(g: GraphProto) -> None:
        names.update(v.name for v in g.input)
        names.update(v.name for v in g.output)
        names.update(v.name for v in g.value_info)
        names.update(t.name for t in g.initializer)
        for n in g.node:
            names.update(n.input)
            names.update(n.output)
            names.add(n.name)
            for sub in subgraphs(n):
                graph_names(sub)

    graph_names(model.graph)
    for f in model.functions:
        names.update(f.input)
        names.update(f.output)
        for n in f.node:
            names.update(n.input)
            names.update(n.output)
            names.add(n.name)
            for sub in subgraphs(n):
                graph_names(sub)
    return names


def _all_uses(model: ModelProto) -> set[str]:
    uses: set[str] = set()

    def graph_uses(g: GraphProto) -> None:
        uses.update(v.name for v in g.output)
        for n in g.node:
            uses.update(n.input)
            for sub in subgraphs(n):
                graph_uses(sub)

    graph_uses(model.graph)
    for f in model.functions:
        uses.update(f.output)
        for n in f.node:
            uses.update(n.input)
            for sub in subgraphs(n):
                graph_uses(sub)
    return uses


def _infer_types(model: ModelProto) -> dict[str, TypeProto]:
    """Types of all values (nested graphs too) as onnx shape inference sees them."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - best effort: rules fall back to run-time forms
        inferred = model
    types: dict[str, TypeProto] = {}

    def collect(g: GraphProto) -> None:
        for v in (*g.input, *g.output, *g.value_info):
            if v.HasField("type"):
                types.setdefault(v.name, v.type)
        for n in g.node:
            for sub in subgraphs(n):
                collect(sub)

    collect(inferred.graph)
    return types
