"""Bring an ONNX model of any opset to the single op form rung's onnx dialect holds.

The dialect knows one version of every op: its newest schema. Rather than teach
the importer every historical variant, models are rewritten up front, as a pure
`ModelProto -> ModelProto` transform:

1. `onnx.version_converter` does the bulk of the default domain, because it is
   fast (C++) and maintained upstream.
2. Nodes the converter has no adapter for, or that it converts wrongly (all
   verified, see `_CONVERTER_WRONG`), are hidden from it in a private domain,
   and upgraded afterwards by our own node-level rules (`_RULES`), one small
   function per `(op_type, version it upgrades from)`.
3. If the converter fails anyway, our rules upgrade the whole model alone;
   they cover every transition in the schema history, so they never need it.
4. What the converter leaves behind (deprecated ops such as `Scatter` or
   `Upsample` that are still valid at its target, the local functions and graph
   metadata it drops, an `ir_version` too old for the new opset) is fixed after.

A transition neither in `_RULES` nor reviewed as compatible (`_COMPATIBLE`)
raises `RungError`: silently keeping an op whose meaning changed is worse than
failing.

What the converter (onnx 1.23, convert.h and adapters/) does not do right, and
so never sees here:

* no adapter: And/Or/Xor/Equal/Greater/Less-1, Cast-1, Tile-1, Pad-1, Split-1,
  GlobalLpPool-1, LpPool-1, GRU-1/3, LSTM-1, RNN-1; Scan-8 with sequence_lens;
* wrong results: legacy `axis` broadcasting (appends rank(A) - rank(B) dims
  whatever the axis), PRelu-6 per-channel slopes and Hardmax-11 (both treated
  as compatible), Resize-10 and Upsample (Resize-11's half_pixel default kept),
  Upsample-1 'bilinear' (not renamed), GroupNormalization-18 (left unchanged),
  Scan-8 (batch axis only dropped from the metadata), BatchNormalization-9
  training outputs (kept without training_mode);
* invalid output: Pad-2 / Clip-6 constants always float32;
* refusals: is_test=0, spatial=0, and adapters needing static shapes fail.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from google.protobuf.message import Message
from onnx import (
    AttributeProto,
    FunctionProto,
    GraphProto,
    ModelProto,
    NodeProto,
    TensorProto,
    TypeProto,
    ValueInfoProto,
    helper,
    numpy_helper,
)

from rung.errors import RungError

__all__ = ["upgrade_model"]

_DEFAULT = ""
_ML = "ai.onnx.ml"
_DEFAULT_SPELLINGS = ("", "ai.onnx")
# Nodes our rules must upgrade are parked in these domains while the converter
# runs: it leaves foreign domains alone. One per spelling, to restore it exactly.
_PENDING = {"": "rung.upgrade.pending", "ai.onnx": "rung.upgrade.pending.ai.onnx"}
_UNPENDING = {v: k for k, v in _PENDING.items()}
# Initializers larger than this are kept out of the converter round trip (it
# serializes the whole model twice); shape inference only needs their type.
_CONVERTER_MAX_INITIALIZER_ELEMENTS = 1024
_INT64_MAX = 2**63 - 1


# --------------------------------------------------------------------------
# Schema history
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _OpHistory:
    versions: tuple[int, ...]  # since_versions, ascending
    # The since_version of a final "deprecated" schema: the op was removed there
    # (Upsample-10, Scatter-11). Older schemas superseded by a newer one are
    # flagged deprecated too (GroupNormalization-18); that means nothing here.
    removed: int | None

    def at(self, opset: int) -> int | None:
        """The since_version in force at `opset`, or None if the op did not exist yet."""
        i = bisect.bisect_right(self.versions, opset)
        return self.versions[i - 1] if i else None

    def after(self, version: int, limit: int) -> int | None:
        """The next since_version after `version` that is still <= `limit`."""
        i = bisect.bisect_right(self.versions, version)
        if i < len(self.versions) and self.versions[i] <= limit:
            return self.versions[i]
        return None


@functools.cache
def _histories() -> dict[str, dict[str, _OpHistory]]:
    """Per domain, per op: all schema versions onnx knows. Cached: costs ~15 ms."""
    raw: dict[str, dict[str, list[tuple[int, bool]]]] = {_DEFAULT: {}, _ML: {}}
    for schema in onnx.defs.get_all_schemas_with_history():
        if schema.domain in raw:
            raw[schema.domain].setdefault(schema.name, []).append(
                (schema.since_version, schema.deprecated)
            )
    histories: dict[str, dict[str, _OpHistory]] = {}
    for domain, ops in raw.items():
        histories[domain] = {}
        for op, entries in ops.items():
            entries.sort()
            last, last_deprecated = entries[-1]
            histories[domain][op] = _OpHistory(
                tuple(v for v, _ in entries), last if last_deprecated else None
            )
    return histories


@functools.cache
def _latest(domain: str) -> int:
    if domain == _DEFAULT:
        return onnx.defs.onnx_opset_version()
    return max(v for h in _histories()[domain].values() for v in h.versions)


def _canon(domain: str) -> str:
    return _DEFAULT if domain in _DEFAULT_SPELLINGS else domain


# Transitions reviewed as not changing the meaning of any valid node: only
# types were added, an attribute or optional input was added whose default is
# the old behaviour, or negative axes became legal. Keyed by the version a node
# upgrades *from*. Anything not here and not in `_RULES` is refused.
# fmt: off
_COMPATIBLE: dict[str, dict[str, tuple[int, ...]]] = {
    _DEFAULT: {
        "Abs": (6,), "Acos": (7,), "Acosh": (9,), "Add": (7, 13), "ArgMax": (1, 11, 12),
        "ArgMin": (1, 11, 12), "Asin": (7,), "Asinh": (9,), "Atan": (7,), "Atanh": (9,),
        "Attention": (23, 24), "AveragePool": (1, 7, 10, 11, 19), "BatchNormalization": (14,),
        "Bernoulli": (15,), "BitShift": (11,), "Cast": (6, 9, 13, 19, 21, 23, 24, 25),
        "CastLike": (15, 19, 21, 23, 24), "Ceil": (6,), "Celu": (12,), "Clip": (11, 12),
        "Compress": (9, 11), "Concat": (4, 11), "Constant": (1, 9, 11, 12, 13, 19, 21, 23, 24),
        "ConstantOfShape": (9, 20, 21, 23, 24), "Conv": (1, 11), "ConvTranspose": (1, 11),
        "Cos": (7,), "Cosh": (9,), "CumSum": (11,), "DeformConv": (19,),
        "DepthToSpace": (1, 11, 13), "DequantizeLinear": (10, 13, 19, 21, 23, 24, 25),
        "Det": (11,), "Div": (7, 13), "Dropout": (12, 13), "Einsum": (12,), "Elu": (6,),
        "Equal": (7, 11, 13), "Erf": (9,), "Exp": (6,), "Expand": (8,), "EyeLike": (9,),
        "Flatten": (1, 9, 11, 13, 21, 23, 24), "Floor": (6,), "GRU": (7, 14), "Gather": (1, 11),
        "GatherElements": (11,), "GatherND": (11, 12), "Gemm": (1, 7, 9, 11),
        "GlobalAveragePool": (1,), "GlobalLpPool": (2,), "GlobalMaxPool": (1,),
        "Greater": (7, 9), "GreaterOrEqual": (12,), "GridSample": (20,), "HardSigmoid": (6,),
        "HardSwish": (14,), "Hardmax": (1,), "Identity": (1, 13, 14, 16, 19, 21, 23, 24),
        "If": (1, 11, 13, 16, 19, 21, 23, 24), "InstanceNormalization": (6,), "IsInf": (10,),
        "IsNaN": (9, 13), "LRN": (1,), "LSTM": (7, 14), "LeakyRelu": (6,), "Less": (7, 9),
        "LessOrEqual": (12,), "Log": (6,), "LogSoftmax": (1,),
        "Loop": (1, 11, 13, 16, 19, 21, 23, 24), "LpNormalization": (1,), "LpPool": (2, 11, 18),
        "MatMul": (1, 9), "Max": (6, 8, 12), "MaxPool": (1, 8, 10, 11, 12), "MaxRoiPool": (1,),
        "MaxUnpool": (9, 11), "Mean": (6, 8), "MeanVarianceNormalization": (9,),
        "Min": (6, 8, 12), "Mish": (18,), "Mod": (10, 13), "Mul": (7, 13), "Multinomial": (7,),
        "Neg": (6,), "NegativeLogLikelihoodLoss": (12, 13), "NonMaxSuppression": (10,),
        "NonZero": (9,), "OneHot": (9, 11), "Optional": (15,), "OptionalGetElement": (15, 18),
        "OptionalHasElement": (15, 18), "PRelu": (7, 9), "Pad": (11, 13, 18, 19, 21, 23, 24),
        "Pow": (7, 12, 13), "QLinearMatMul": (10,), "QuantizeLinear": (10, 13, 19, 21, 23, 24, 25),
        "RNN": (7, 14), "RandomNormal": (1,), "RandomNormalLike": (1,), "RandomUniform": (1,),
        "RandomUniformLike": (1,), "Range": (11,), "Reciprocal": (6,), "ReduceL1": (1, 11),
        "ReduceL2": (1, 11), "ReduceLogSum": (1, 11), "ReduceLogSumExp": (1, 11),
        "ReduceMax": (1, 11, 12, 18), "ReduceMean": (1, 11), "ReduceMin": (1, 11, 12, 18),
        "ReduceProd": (1, 11), "ReduceSum": (1,), "ReduceSumSquare": (1, 11),
        "Relu": (6, 13), "Reshape": (5, 13, 14, 19, 21, 23, 24), "Resize": (11, 13, 18),
        "ReverseSequence": (10,), "RoiAlign": (16,), "Round": (11,),
        "Scan": (9, 11, 16, 19, 21, 23, 24), "ScatterElements": (11, 13, 16),
        "ScatterND": (11, 13, 16), "Selu": (6,), "Shape": (1, 13, 15, 19, 21, 23, 24),
        "Sigmoid": (6,), "Sign": (9,), "Sin": (7,), "Sinh": (9,),
        "Size": (1, 13, 19, 21, 23, 24), "Slice": (10, 11), "Softmax": (1,),
        "SoftmaxCrossEntropyLoss": (12,), "Softplus": (1,), "Softsign": (1,),
        "SpaceToDepth": (1, 13), "Split": (2,), "SplitToSequence": (11,), "Sqrt": (6,),
        "Squeeze": (1, 13, 21, 23, 24), "Sub": (7, 13), "Sum": (6, 8), "Tan": (7,),
        "Tanh": (6,), "ThresholdedRelu": (10,), "Tile": (6,), "TopK": (10, 11),
        "Transpose": (1, 13, 21, 23, 24), "Unique": (11,), "Unsqueeze": (1, 13, 21, 23, 24),
        "Where": (9,),
    },
    _ML: {
        "LabelEncoder": (2,),
        "TreeEnsembleClassifier": (1,),
        "TreeEnsembleRegressor": (1,),
    },
}
# fmt: on


# --------------------------------------------------------------------------
# Small proto helpers
# --------------------------------------------------------------------------


def _attr(node: NodeProto, name: str) -> AttributeProto | None:
    for a in node.attribute:
        if a.name == name:
            return a
    return None


def _get(node: NodeProto, name: str, default: Any = None) -> Any:
    """An attribute's Python value, or `default` when absent."""
    a = _attr(node, name)
    if a is None:
        return default
    if a.ref_attr_name:
        raise RungError(
            f"attribute '{name}' of {node.op_type} refers to function attribute "
            f"'{a.ref_attr_name}'; its value is needed to upgrade the op — inline the function first"
        )
    value = helper.get_attribute_value(a)
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, list) and value and isinstance(value[0], bytes):
        return [v.decode() for v in value]
    return value


def _pop(node: NodeProto, name: str, default: Any = None) -> Any:
    """Remove an attribute, returning its value (or `default` if it was absent)."""
    value = _get(node, name, default)
    for i, a in enumerate(node.attribute):
        if a.name == name:
            del node.attribute[i]
            break
    return value


def _set(node: NodeProto, name: str, value: object) -> None:
    _pop(node, name)
    node.attribute.append(helper.make_attribute(name, value))


def _ints(value: Any) -> list[int]:
    return [int(v) for v in value]


def _input(node: NodeProto, i: int) -> str:
    """Input `i`, or "" when the optional input is absent."""
    return node.input[i] if i < len(node.input) else ""


def _set_input(node: NodeProto, i: int, name: str) -> None:
    while len(node.input) <= i:
        node.input.append("")
    node.input[i] = name
    while node.input and not node.input[-1]:
        node.input.pop()


def _subgraphs(node: NodeProto) -> Iterator[GraphProto]:
    for a in node.attribute:
        if a.type == AttributeProto.GRAPH:
            yield a.g
        elif a.type == AttributeProto.GRAPHS:
            yield from a.graphs


def _label(node: NodeProto, index: int) -> str:
    return f"node '{node.name}'" if node.name else f"node #{index} ({node.op_type})"


def _np_dtype(elem_type: int) -> np.dtype:
    return np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))


_FLOAT_TYPES = frozenset(
    {TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BFLOAT16}
)


# --------------------------------------------------------------------------
# Rewriting context
# --------------------------------------------------------------------------


@dataclass
class _Scope:
    """One graph (or function body) being rewritten; constants resolve outward."""

    graph: GraphProto | None
    parent: _Scope | None
    function: FunctionProto | None = None
    _consts: dict[str, TensorProto] | None = None

    def consts(self) -> dict[str, TensorProto]:
        if self._consts is None:
            found: dict[str, TensorProto] = {}
            if self.graph is not None:
                found.update((t.name, t) for t in self.graph.initializer)
            nodes = self.graph.node if self.graph is not None else self.function.node
            for n in nodes:
                if n.op_type == "Constant" and _canon(n.domain) == _DEFAULT and n.output:
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
class _Ctx:
    """What rules need besides the node: targets, fresh names, constants, types."""

    targets: dict[str, int]
    source: ModelProto  # unmodified input model; type inference runs on it lazily
    work: ModelProto  # model being rewritten
    scope: _Scope | None = None
    node_label: str = ""
    pending: list[NodeProto] = field(default_factory=list)
    _names: set[str] | None = None
    _uses: set[str] | None = None
    _types: dict[str, TypeProto] | None = None

    # --- errors -----------------------------------------------------------
    def error(self, node: NodeProto, version: int, what: str) -> RungError:
        return RungError(
            f"cannot upgrade {node.op_type} (version {version}) at {self.node_label} "
            f"to opset {self.targets.get(_canon(node.domain), '?')}: {what}"
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
        return self.add_const(hint, np.array(_ints(values), dtype=np.int64))

    def scalar_like(self, hint: str, value: float, like: str) -> str:
        """A scalar constant with the element type of value `like`.

        Old attributes were always float; the inputs replacing them must match
        the data type, which only type inference knows. If it does not, a
        CastLike (opset 15+) defers the choice to run time.
        """
        elem = self.elem_type(like)
        if elem is not None:
            return self.add_const(hint, np.array(value, dtype=_np_dtype(elem)))
        f32 = self.add_const(hint, np.array(value, dtype=np.float32))
        if self.targets[_DEFAULT] < 15:
            return f32  # no CastLike yet; float is what these attributes meant
        out = self.fresh(hint + "_cast")
        self.pending.append(helper.make_node("CastLike", [f32, like], [out], name=out))
        return out

    # --- nodes ------------------------------------------------------------
    def make(
        self, op_type: str, inputs: list[str], hint: str, n_out: int = 1, **attrs: object
    ) -> NodeProto:
        """A helper node in the target form of `op_type` (default domain)."""
        hist = _histories()[_DEFAULT].get(op_type)
        if hist is None or hist.at(self.targets[_DEFAULT]) is None:
            raise RungError(
                f"upgrading {self.node_label} needs {op_type}, which opset "
                f"{self.targets[_DEFAULT]} does not have; upgrade to a newer opset"
            )
        outputs = [self.fresh(f"{hint}_{op_type.lower()}") for _ in range(n_out)]
        return helper.make_node(op_type, inputs, outputs, name=outputs[0], **attrs)

    def unsqueeze(self, x: str, axes: list[int], hint: str) -> NodeProto:
        if self.targets[_DEFAULT] >= 13:
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
            for sub in _subgraphs(n):
                graph_names(sub)

    graph_names(model.graph)
    for f in model.functions:
        names.update(f.input)
        names.update(f.output)
        for n in f.node:
            names.update(n.input)
            names.update(n.output)
            names.add(n.name)
            for sub in _subgraphs(n):
                graph_names(sub)
    return names


def _all_uses(model: ModelProto) -> set[str]:
    uses: set[str] = set()

    def graph_uses(g: GraphProto) -> None:
        uses.update(v.name for v in g.output)
        for n in g.node:
            uses.update(n.input)
            for sub in _subgraphs(n):
                graph_uses(sub)

    graph_uses(model.graph)
    for f in model.functions:
        uses.update(f.output)
        for n in f.node:
            uses.update(n.input)
            for sub in _subgraphs(n):
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
            for sub in _subgraphs(n):
                collect(sub)

    collect(inferred.graph)
    return types


# --------------------------------------------------------------------------
# Rules
# --------------------------------------------------------------------------


@dataclass
class _Out:
    """A rule's replacement for a node.

    `nodes` replaces the node in order. If the original node object is among
    them it keeps being upgraded, from `version` when given, otherwise from the
    next version of its (possibly new) op type.
    """

    nodes: list[NodeProto]
    version: int | None = None


_Rule = Callable[[_Ctx, NodeProto], "_Out | None"]
_RULES: dict[tuple[str, str, int], _Rule] = {}
# (domain, op, from_version) -> predicate: True if the converter must not touch
# the node (no adapter, or an adapter that is wrong for it).
_CONVERTER_WRONG: dict[tuple[str, int], Callable[[NodeProto], bool]] = {}


def _always(_node: NodeProto) -> bool:
    return True


def _rule(
    *keys: tuple[str, int],
    domain: str = _DEFAULT,
    converter_wrong: Callable[[NodeProto], bool] | None = None,
) -> Callable[[_Rule], _Rule]:
    """Register a rule for `(op_type, from_version)` keys.

    `converter_wrong` marks nodes `onnx.version_converter` mishandles or cannot
    handle; they are hidden from it and go through this rule instead.
    """

    def register(fn: _Rule) -> _Rule:
        for op, version in keys:
            _RULES[(domain, op, version)] = fn
            if converter_wrong is not None:
                _CONVERTER_WRONG[(op, version)] = converter_wrong
        return fn

    return register


# --- legacy attributes that simply went away ------------------------------

_CONSUMED_INPUTS_OPS = (
    "Abs", "Add", "BatchNormalization", "Ceil", "Clip", "Div", "Dropout", "Elu", "Exp",
    "Floor", "HardSigmoid", "InstanceNormalization", "LeakyRelu", "Log", "Max", "Mean",
    "Min", "Mul", "Neg", "PRelu", "Reciprocal", "Relu", "Sigmoid", "Sqrt", "Sub", "Sum",
    "Tanh",
)  # fmt: skip


@_rule(*((op, 1) for op in _CONSUMED_INPUTS_OPS))
def _drop_consumed_inputs(ctx: _Ctx, node: NodeProto) -> None:
    """`consumed_inputs` was an in-place hint for Caffe2, never semantics."""
    _pop(node, "consumed_inputs")


@_rule(
    ("Selu", 1), converter_wrong=lambda n: _attr(n, "alpha") is None or _attr(n, "gamma") is None
)
def _selu_1(ctx: _Ctx, node: NodeProto) -> None:
    """Selu-6 changed the default alpha/gamma (more digits); pin the old ones."""
    _pop(node, "consumed_inputs")
    if _attr(node, "alpha") is None:
        _set(node, "alpha", 1.6732)
    if _attr(node, "gamma") is None:
        _set(node, "gamma", 1.0507)


@_rule(("Concat", 1))
def _concat_1(ctx: _Ctx, node: NodeProto) -> None:
    """Concat-4 made `axis` required; Concat-1 defaulted it to 1."""
    if _attr(node, "axis") is None:
        _set(node, "axis", 1)


@_rule(("GRU", 3), ("LSTM", 1), ("RNN", 1), converter_wrong=_always)
def _drop_output_sequence(ctx: _Ctx, node: NodeProto) -> None:
    """`output_sequence` only said whether Y is produced; optional outputs say that now."""
    _pop(node, "output_sequence")


@_rule(("GRU", 1), converter_wrong=_always)
def _gru_1(ctx: _Ctx, node: NodeProto) -> None:
    """GRU-1 spelled the default direction 'foward'."""
    if _get(node, "direction") == "foward":
        _set(node, "direction", "forward")


@_rule(("GlobalLpPool", 1), ("LpPool", 1), converter_wrong=_always)
def _lppool_1(ctx: _Ctx, node: NodeProto) -> _Out | None:
    """`p` became an int in version 2; a fractional p has no equivalent."""
    p = _get(node, "p")
    if p is not None:
        if float(p) != int(p):
            raise ctx.error(node, 1, f"p={p} is not an integer, which LpPool-2 requires")
        _set(node, "p", int(p))
    if node.op_type == "LpPool" and _attr(node, "kernel_shape") is None:
        raise ctx.error(node, 1, "LpPool-2 requires kernel_shape; use GlobalLpPool")
    return None


@_rule(("RoiAlign", 10))
def _roialign_10(ctx: _Ctx, node: NodeProto) -> None:
    """RoiAlign-10 behaved like what version 16 calls 'output_half_pixel'."""
    if _attr(node, "coordinate_transformation_mode") is None:
        _set(node, "coordinate_transformation_mode", "output_half_pixel")


@_rule(("Cast", 1), converter_wrong=_always)
def _cast_1(ctx: _Ctx, node: NodeProto) -> None:
    """Cast-1 named the target type as a string ('FLOAT'); later versions use the enum."""
    to = _get(node, "to")
    if isinstance(to, str):
        try:
            _set(node, "to", TensorProto.DataType.Value(to.upper()))
        except ValueError:
            raise ctx.error(node, 1, f"unknown type name to='{to}'") from None


@_rule(("Gemm", 6), converter_wrong=_always)
def _gemm_6(ctx: _Ctx, node: NodeProto) -> None:
    """Gemm-7 always broadcasts C, which is all `broadcast=1` asked for."""
    _pop(node, "broadcast")


# --- legacy broadcasting ----------------------------------------------------

_LEGACY_BROADCAST = (
    ("Add", 6), ("Sub", 6), ("Mul", 6), ("Div", 6), ("Pow", 1), ("And", 1), ("Or", 1),
    ("Xor", 1), ("Equal", 1), ("Greater", 1), ("Less", 1),
)  # fmt: skip


@_rule(*_LEGACY_BROADCAST, converter_wrong=_always)
def _legacy_broadcast(ctx: _Ctx, node: NodeProto) -> _Out | None:
    """Before opset 7, B was matched against A starting at `axis`; numpy matches from the end.

    Appending size-1 dims to B (as many as A has after the matched span) makes
    numpy broadcasting line it up the same way. onnx's adapter appends
    rank(A) - rank(B) dims whatever the axis (wrong unless axis == 0), and needs
    static shapes; here the run-time fallback covers unknown ranks.
    """
    version = 6 if node.op_type in ("Add", "Sub", "Mul", "Div") else 1
    broadcast = _pop(node, "broadcast", 0)
    axis = _pop(node, "axis")
    if not broadcast or axis is None:
        return None  # suffix matching (or equal shapes) is what numpy does anyway
    axis = int(axis)
    a, b = node.input[0], node.input[1]
    rank_a, rank_b = ctx.rank(a), ctx.rank(b)
    if rank_b is not None and (rank_a is not None or axis < 0):
        trailing = (-axis if axis < 0 else rank_a - axis) - rank_b
        if trailing < 0:
            raise ctx.error(node, version, f"B (rank {rank_b}) does not fit in A at axis {axis}")
        if trailing == 0:
            return None
        value = ctx.const(b)
        if value is not None:
            node.input[1] = ctx.add_const(
                b + "_bcast", value.reshape(value.shape + (1,) * trailing)
            )
            return None
        unsq = ctx.unsqueeze(b, list(range(rank_b, rank_b + trailing)), b + "_bcast")
        node.input[1] = unsq.output[0]
        return _Out([unsq, node])
    # Ranks unknown: reshape B to shape(B) ++ ones(rank(A) - axis - rank(B)) at run time.
    hint = b + "_bcast"
    shape_b = ctx.make("Shape", [b], hint)
    rank_b_node = ctx.make("Shape", [shape_b.output[0]], hint + "_rank")
    helpers = [shape_b, rank_b_node]
    if axis < 0:
        span = ctx.ints_input(hint + "_span", [-axis])
    else:
        shape_a = ctx.make("Shape", [a], hint + "_a")
        rank_a_node = ctx.make("Shape", [shape_a.output[0]], hint + "_arank")
        sub_axis = ctx.make(
            "Sub", [rank_a_node.output[0], ctx.ints_input(hint + "_axis", [axis])], hint
        )
        helpers += [shape_a, rank_a_node, sub_axis]
        span = sub_axis.output[0]
    count = ctx.make("Sub", [span, rank_b_node.output[0]], hint + "_count")
    ones = ctx.make(
        "ConstantOfShape", [count.output[0]], hint,
        value=numpy_helper.from_array(np.array([1], dtype=np.int64)),
    )  # fmt: skip
    new_shape = ctx.make("Concat", [shape_b.output[0], ones.output[0]], hint, axis=0)
    reshape = ctx.make("Reshape", [b, new_shape.output[0]], hint)
    node.input[1] = reshape.output[0]
    return _Out([*helpers, count, ones, new_shape, reshape, node])


@_rule(("PRelu", 6), converter_wrong=_always)
def _prelu_6(ctx: _Ctx, node: NodeProto) -> _Out | None:
    """PRelu-6 applied a 1-D slope per channel (axis 1); PRelu-7 broadcasts numpy-style.

    onnx's converter treats the change as compatible, which turns a per-channel
    slope into a per-last-axis one (or a shape error).
    """
    x, slope = node.input[0], node.input[1]
    rank_x, slope_shape = ctx.rank(x), ctx.shape(slope)
    if slope_shape is None:
        raise ctx.error(
            node, 6, "the shape of the slope is unknown, so per-channel use cannot be ruled out"
        )
    if len(slope_shape) != 1 or slope_shape[0] == 1:
        return None  # scalar-like or full-shaped slopes broadcast the same way
    if rank_x is None:
        raise ctx.error(
            node, 6, "the rank of X is unknown, so the per-channel slope cannot be placed"
        )
    if rank_x <= 2:
        return None
    extra = rank_x - 2
    value = ctx.const(slope)
    if value is not None:
        node.input[1] = ctx.add_const(
            slope + "_per_channel", value.reshape(value.shape + (1,) * extra)
        )
        return None
    unsq = ctx.unsqueeze(slope, list(range(1, 1 + extra)), slope + "_per_channel")
    node.input[1] = unsq.output[0]
    return _Out([unsq, node])


# --- attributes that became inputs -----------------------------------------


@_rule(("Reshape", 1))
def _reshape_1(ctx: _Ctx, node: NodeProto) -> None:
    """Reshape-5 takes the shape as an input."""
    _pop(node, "consumed_inputs")
    shape = _pop(node, "shape")
    if shape is None:
        raise ctx.error(node, 1, "it has no 'shape' attribute")
    _set_input(node, 1, ctx.ints_input(node.output[0] + "_shape", shape))


@_rule(("Pad", 1), converter_wrong=_always)
def _pad_1(ctx: _Ctx, node: NodeProto) -> None:
    """Pad-2 renamed `paddings` to `pads` (same layout)."""
    paddings = _pop(node, "paddings")
    if paddings is not None:
        _set(node, "pads", _ints(paddings))


@_rule(("Pad", 2), converter_wrong=_always)
def _pad_2(ctx: _Ctx, node: NodeProto) -> None:
    """Pad-11 takes pads and the fill value as inputs.

    onnx's adapter always makes the fill value float32, which is invalid for
    any other data type; here it gets the data's type.
    """
    pads = _pop(node, "pads")
    value = float(_pop(node, "value", 0.0))
    if pads is None:
        raise ctx.error(node, 2, "it has no 'pads' attribute")
    _set_input(node, 1, ctx.ints_input(node.output[0] + "_pads", pads))
    if _get(node, "mode", "constant") == "constant" and value != 0.0:
        _set_input(node, 2, ctx.scalar_like(node.output[0] + "_value", value, node.input[0]))


@_rule(("Slice", 1))
def _slice_1(ctx: _Ctx, node: NodeProto) -> None:
    """Slice-10 takes starts/ends/axes as inputs."""
    hint = node.output[0]
    starts, ends, axes = _pop(node, "starts"), _pop(node, "ends"), _pop(node, "axes")
    if starts is None or ends is None:
        raise ctx.error(node, 1, "it lacks 'starts' or 'ends'")
    _set_input(node, 1, ctx.ints_input(hint + "_starts", starts))
    _set_input(node, 2, ctx.ints_input(hint + "_ends", ends))
    if axes is not None:
        _set_input(node, 3, ctx.ints_input(hint + "_axes", axes))


_REDUCE_18 = (
    "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
    "ReduceMin", "ReduceProd", "ReduceSumSquare",
)  # fmt: skip


@_rule(("ReduceSum", 11), ("Squeeze", 11), ("Unsqueeze", 11), *((op, 13) for op in _REDUCE_18))
def _axes_to_input(ctx: _Ctx, node: NodeProto) -> None:
    """`axes` became an optional input (ReduceSum/Squeeze/Unsqueeze at 13, the rest at 18).

    Absent axes still means "all axes" (reductions) or "all size-1 dims"
    (Squeeze), so nothing is added then.
    """
    axes = _pop(node, "axes")
    if axes is not None and len(axes) > 0:
        _set_input(node, 1, ctx.ints_input(node.output[0] + "_axes", axes))
    elif node.op_type == "Unsqueeze":
        raise ctx.error(node, 11, "it has no 'axes'")


@_rule(("ReduceLogSum", 18), ("ReduceLogSumExp", 18), converter_wrong=_always)
def _reduce_log_18(ctx: _Ctx, node: NodeProto) -> _Out | None:
    """Version 28 dropped integer inputs; compute in double and cast back, as before."""
    elem = ctx.elem_type(node.input[0])
    if elem is None or elem in _FLOAT_TYPES:
        return None
    hint = node.output[0]
    to_double = ctx.make("Cast", [node.input[0]], hint, to=TensorProto.DOUBLE)
    node.input[0] = to_double.output[0]
    result = node.output[0]
    node.output[0] = ctx.fresh(hint + "_double")
    back = ctx.make("Cast", [node.output[0]], hint, to=elem)
    back.output[0] = result
    return _Out([to_double, node, back])


@_rule(("Split", 1), converter_wrong=_always)
def _split_1(ctx: _Ctx, node: NodeProto) -> _Out | None:
    """Split-1 could take the sizes as a second input; Split-2 only as an attribute."""
    sizes = _input(node, 1)
    if not sizes:
        return None
    value = ctx.const(sizes)
    if value is not None:
        _set_input(node, 1, "")
        _set(node, "split", _ints(value.reshape(-1)))
        return None
    if ctx.targets[_DEFAULT] >= 13:
        return _Out([node], version=13)  # Split-13 takes the sizes as an input again
    raise ctx.error(node, 1, "its split sizes are computed at run time; upgrade to opset 13+")


@_rule(("Split", 11))
def _split_11(ctx: _Ctx, node: NodeProto) -> None:
    """Split-13 takes the sizes as an input."""
    split = _pop(node, "split")
    if split is not None:
        _set_input(node, 1, ctx.ints_input(node.output[0] + "_split", split))


@_rule(("Split", 13))
def _split_13(ctx: _Ctx, node: NodeProto) -> None:
    """Split-18 wants `num_outputs` when no sizes are given (it used to count outputs)."""
    if not _input(node, 1) and _attr(node, "num_outputs") is None:
        _set(node, "num_outputs", len(node.output))


@_rule(("TopK", 1))
def _topk_1(ctx: _Ctx, node: NodeProto) -> None:
    """TopK-10 takes k as a 1-element int64 input."""
    k = _pop(node, "k")
    if k is None:
        raise ctx.error(node, 1, "it has no 'k'")
    _set_input(node, 1, ctx.ints_input(node.output[0] + "_k", [k]))


@_rule(("Clip", 6), converter_wrong=_always)
def _clip_6(ctx: _Ctx, node: NodeProto) -> None:
    """Clip-11 takes min/max as optional inputs of the data's type.

    onnx's adapter makes them float32 whatever the data type.
    """
    lo, hi = _pop(node, "min"), _pop(node, "max")
    x, hint = node.input[0], node.output[0]
    if lo is not None:
        _set_input(node, 1, ctx.scalar_like(hint + "_min", float(lo), x))
    if hi is not None:
        _set_input(node, 2, ctx.scalar_like(hint + "_max", float(hi), x))


@_rule(("DFT", 17))
def _dft_17(ctx: _Ctx, node: NodeProto) -> None:
    """DFT-20 takes the axis as input 2; DFT-17 defaulted it to 1 (20 defaults to -2)."""
    axis = _pop(node, "axis", 1)
    _set_input(node, 2, ctx.add_const(node.output[0] + "_axis", np.array(axis, dtype=np.int64)))


@_rule(("Tile", 1), converter_wrong=_always)
def _tile_1(ctx: _Ctx, node: NodeProto) -> _Out | None:
    """Tile-1 repeated along one `axis` `tiles` times; Tile-6 takes a repeat per dim."""
    x, tiles, axis = node.input[0], node.input[1], node.input[2]
    hint = node.output[0] + "_repeats"
    tiles_v, axis_v, rank = ctx.const(tiles), ctx.const(axis), ctx.rank(x)
    if tiles_v is not None and axis_v is not None and rank is not None:
        repeats = np.ones(rank, dtype=np.int64)
        repeats[int(axis_v.reshape(-1)[0])] = int(tiles_v.reshape(-1)[0])
        del node.input[1:]
        node.input.append(ctx.add_const(hint, repeats))
        return None
    # Run time: ones(rank(x)) with `tiles` scattered in at `axis`.
    flat = ctx.ints_input(hint + "_flat", [1])
    shape = ctx.make("Shape", [x], hint)
    rank_node = ctx.make("Shape", [shape.output[0]], hint + "_rank")
    ones = ctx.make(
        "ConstantOfShape", [rank_node.output[0]], hint,
        value=numpy_helper.from_array(np.array([1], dtype=np.int64)),
    )  # fmt: skip
    axis_i = ctx.make("Cast", [axis], hint + "_axis", to=TensorProto.INT64)
    axis_1 = ctx.make("Reshape", [axis_i.output[0], flat], hint + "_axis")
    tiles_i = ctx.make("Cast", [tiles], hint + "_tiles", to=TensorProto.INT64)
    tiles_1 = ctx.make("Reshape", [tiles_i.output[0], flat], hint + "_tiles")
    repeats = ctx.make(
        "ScatterElements", [ones.output[0], axis_1.output[0], tiles_1.output[0]], hint
    )
    del node.input[1:]
    node.input.append(repeats.output[0])
    return _Out([shape, rank_node, ones, axis_i, axis_1, tiles_i, tiles_1, repeats, node])


# --- Dropout / BatchNormalization -------------------------------------------


@_rule(("Dropout", 6), ("BatchNormalization", 6), converter_wrong=lambda n: _get(n, "is_test") == 0)
def _drop_is_test(ctx: _Ctx, node: NodeProto) -> None:
    """`is_test` went away in version 7; the inference behaviour is what rung compiles."""
    _pop(node, "is_test")


@_rule(("Dropout", 7), converter_wrong=lambda n: len(n.output) > 1 and bool(n.output[1]))
def _dropout_7(ctx: _Ctx, node: NodeProto) -> _Out | None:
    """Dropout-10 made the mask bool; cast it back to the data's type for old consumers.

    The mask of an inference model is rarely read; an unread one is dropped.
    """
    if len(node.output) < 2 or not node.output[1]:
        return None
    mask = node.output[1]
    if not ctx.is_used(mask):
        del node.output[1:]
        return None
    node.output[1] = ctx.fresh(mask + "_bool")
    elem = ctx.elem_type(node.input[0])
    if elem is not None:
        cast = ctx.make("Cast", [node.output[1]], mask, to=elem)
    else:
        cast = ctx.make("CastLike", [node.output[1], node.input[0]], mask)
    cast.output[0] = mask
    return _Out([node, cast])


@_rule(("Dropout", 10))
def _dropout_10(ctx: _Ctx, node: NodeProto) -> None:
    """Dropout-12 takes the ratio as an input; without training_mode it is identity."""
    ratio = _pop(node, "ratio")
    if ratio is not None:
        _set_input(node, 1, ctx.add_const(node.output[0] + "_ratio", np.array(ratio, np.float32)))


@_rule(("BatchNormalization", 7), converter_wrong=lambda n: _get(n, "spatial", 1) != 1)
def _bn_7(ctx: _Ctx, node: NodeProto) -> _Out | None:
    """BatchNormalization-9 dropped `spatial`; spatial=0 (per-element statistics) is spelled out.

    With spatial=0 the statistics have shape (C, D1, ...), which numpy-style
    broadcasting lines up against (N, C, D1, ...), so plain arithmetic does it.
    """
    spatial = _pop(node, "spatial", 1)
    if spatial == 1:
        return None
    if len([o for o in node.output if o]) > 1:
        raise ctx.error(node, 7, "spatial=0 in training mode has no equivalent")
    x, scale, bias, mean, var = node.input[:5]
    hint = node.output[0]
    eps = ctx.scalar_like(hint + "_eps", float(_get(node, "epsilon", 1e-5)), x)
    centered = ctx.make("Sub", [x, mean], hint)
    var_eps = ctx.make("Add", [var, eps], hint)
    std = ctx.make("Sqrt", [var_eps.output[0]], hint)
    normed = ctx.make("Div", [centered.output[0], std.output[0]], hint)
    scaled = ctx.make("Mul", [normed.output[0], scale], hint)
    out = ctx.make("Add", [scaled.output[0], bias], hint)
    out.output[0] = node.output[0]
    return _Out([centered, var_eps, std, normed, scaled, out])


@_rule(("BatchNormalization", 9), converter_wrong=lambda n: len(n.output) > 1)
def _bn_9(ctx: _Ctx, node: NodeProto) -> None:
    """BatchNormalization-14 spells training as `training_mode=1` and drops saved_mean/var.

    In version 9 the outputs a node declares decide its mode: with more than Y
    it normalizes with the batch's own statistics, whether or not anything
    reads them. onnx's adapter keeps the outputs without setting
    training_mode, which silently switches to inference.
    """
    outputs = list(node.output)
    training = any(outputs[1:])
    for i in (3, 4):
        if i < len(outputs) and outputs[i] and ctx.is_used(outputs[i]):
            raise ctx.error(node, 9, "saved_mean/saved_var outputs no longer exist; remove them")
    del node.output[3:]
    if training:
        # Version 14 in training mode must declare its running statistics.
        _set(node, "training_mode", 1)
        while len(node.output) < 3:
            node.output.append("")
        for i in (1, 2):
            if not node.output[i]:
                node.output[i] = ctx.fresh(f"{node.output[0]}_running_{('', 'mean', 'var')[i]}")


# --- Softmax family ----------------------------------------------------------


@_rule(
    ("Softmax", 11),
    ("LogSoftmax", 11),
    ("Hardmax", 11),
    converter_wrong=lambda n: n.op_type == "Hardmax",
)
def _softmax_11(ctx: _Ctx, node: NodeProto) -> _Out | None:
    """Before 13 these coerced the input to 2-D at `axis` and normalized each row.

    Flatten at the old axis, normalize the last axis, and reshape back. onnx's
    converter does this for Softmax/LogSoftmax but treats Hardmax as compatible.
    """
    axis = int(_get(node, "axis", 1))
    x = node.input[0]
    rank = ctx.rank(x)
    if axis == -1 or (rank is not None and axis in (rank - 1, -1)):
        _set(node, "axis", -1)
        return None
    hint = node.output[0]
    shape = ctx.make("Shape", [x], hint)
    flat = ctx.make("Flatten", [x], hint, axis=axis)
    node.input[0] = flat.output[0]
    _set(node, "axis", -1)
    result = node.output[0]
    node.output[0] = ctx.fresh(hint + "_2d")
    back = ctx.make("Reshape", [node.output[0], shape.output[0]], hint)
    back.output[0] = result
    return _Out([shape, flat, node, back])


# --- Resize / Upsample -------------------------------------------------------


@_rule(("Upsample", 1), converter_wrong=_always)
def _upsample_1(ctx: _Ctx, node: NodeProto) -> None:
    """Upsample-7 takes a scale per dim and calls 'bilinear' 'linear'."""
    h, w = _pop(node, "height_scale"), _pop(node, "width_scale")
    if h is None or w is None:
        raise ctx.error(node, 1, "it lacks height_scale/width_scale")
    _set(node, "scales", [1.0, 1.0, float(h), float(w)])
    if _get(node, "mode") == "bilinear":
        _set(node, "mode", "linear")


@_rule(("Upsample", 7), converter_wrong=_always)
def _upsample_7(ctx: _Ctx, node: NodeProto) -> None:
    """Upsample-9 takes the scales as an input."""
    scales = _pop(node, "scales")
    if scales is None:
        raise ctx.error(node, 7, "it has no 'scales'")
    _set_input(node, 1, ctx.add_const(node.output[0] + "_scales", np.array(scales, np.float32)))


@_rule(("Upsample", 9), ("Upsample", 10), converter_wrong=_always)
def _upsample_9(ctx: _Ctx, node: NodeProto) -> _Out | None:
    """Upsample became Resize. Its scales are >= 1, where onnxruntime's legacy nearest floors.

    The result is Resize-11 with the legacy sampling spelled out (onnx's
    adapters leave Resize-11's half_pixel default, which changes linear).
    """
    node.op_type = "Resize"
    if ctx.targets[_DEFAULT] < 11:
        return _Out([node], version=10)
    mode = _get(node, "mode", "nearest")
    _to_resize_11(ctx, node, node.input[1], "floor" if mode == "nearest" else None)
    return _Out([node], version=11)


def _to_resize_11(ctx: _Ctx, node: NodeProto, scales: str, nearest_mode: str | None) -> None:
    """Rewrite a Resize-10 style node (X, scales) to Resize-11 inputs and explicit sampling."""
    if ctx.targets[_DEFAULT] >= 13:
        roi = ""
    else:
        roi = ctx.add_const(node.output[0] + "_roi", np.zeros(0, np.float32))
    del node.input[1:]
    node.input.extend([roi, scales])
    _set(node, "coordinate_transformation_mode", "asymmetric")
    if nearest_mode is not None:
        _set(node, "nearest_mode", nearest_mode)


@_rule(("Resize", 10), converter_wrong=_always)
def _resize_10(ctx: _Ctx, node: NodeProto) -> _Out | None:
    """Resize-10 sampled at x_out / scale ('asymmetric'); nearest floored when upsampling
    and took the ceiling when downsampling (onnxruntime, the reference for this version).

    Resize-11 has one nearest_mode for all axes, so mixed up/down scales become
    two Resizes (nearest is separable per axis).
    """
    mode = _get(node, "mode", "nearest")
    scales = node.input[1]
    if mode != "nearest":
        _to_resize_11(ctx, node, scales, None)
        return _Out([node], version=11)
    value = ctx.const(scales)
    hint = node.output[0]
    if value is not None:
        up, down = bool((value > 1).any()), bool((value < 1).any())
        if not (up and down):
            _to_resize_11(ctx, node, scales, "ceil" if down else "floor")
            return _Out([node], version=11)
        up_scales = ctx.add_const(hint + "_up_scales", np.maximum(value, 1).astype(np.float32))
        down_scales = ctx.add_const(hint + "_down_scales", np.minimum(value, 1).astype(np.float32))
        helpers: list[NodeProto] = []
    else:
        one = ctx.add_const(hint + "_one", np.array(1.0, np.float32))
        up_node = ctx.make("Max", [scales, one], hint + "_up")
        down_node = ctx.make("Min", [scales, one], hint + "_down")
        up_scales, down_scales = up_node.output[0], down_node.output[0]
        helpers = [up_node, down_node]
    first = helper.make_node("Resize", [node.input[0], up_scales], [ctx.fresh(hint + "_up")])
    first.name = ctx.fresh(hint + "_up")
    first.attribute.extend(node.attribute)
    _to_resize_11(ctx, first, up_scales, "floor")
    _to_resize_11(ctx, node, down_scales, "ceil")
    node.input[0] = first.output[0]
    return _Out([*helpers, first, node], version=11)


# --- renamed ops / attribute values ------------------------------------------


@_rule(("Scatter", 9), ("Scatter", 11))
def _scatter(ctx: _Ctx, node: NodeProto) -> _Out:
    """Scatter was renamed ScatterElements (same semantics) in opset 11."""
    node.op_type = "ScatterElements"
    return _Out([node], version=11)


@_rule(("GridSample", 16))
def _gridsample_16(ctx: _Ctx, node: NodeProto) -> None:
    """GridSample-20 renamed modes: bilinear -> linear, bicubic -> cubic."""
    mode = _get(node, "mode")
    if mode in ("bilinear", "bicubic"):
        _set(node, "mode", {"bilinear": "linear", "bicubic": "cubic"}[mode])


@_rule(("GroupNormalization", 18), converter_wrong=_always)
def _groupnorm_18(ctx: _Ctx, node: NodeProto) -> _Out | None:
    """GroupNormalization-21 takes scale/bias per channel, not per group: repeat each.

    The statistics were computed in the input type before; stash_type says so.
    onnx has an adapter for this, but its converter never applies it (the node
    comes out unchanged, per-group scale and all).
    """
    groups = int(_get(node, "num_groups"))
    x, hint = node.input[0], node.output[0]
    elem = ctx.elem_type(x)
    if elem in _FLOAT_TYPES:
        _set(node, "stash_type", elem)
    shape = ctx.shape(x)
    channels = shape[1] if shape is not None and len(shape) > 1 else None
    values = [ctx.const(node.input[i]) for i in (1, 2)]
    if channels is not None and all(v is not None for v in values):
        for i, v in zip((1, 2), values, strict=True):
            node.input[i] = ctx.add_const(
                f"{hint}_{i}_per_channel", np.repeat(v, channels // groups)
            )
        return None
    # Run time: reshape to (G, 1), expand to (G, C/G), flatten.
    c = ctx.make("Shape", [x], hint + "_c", start=1, end=2)
    per_group = ctx.make("Div", [c.output[0], ctx.ints_input(hint + "_groups", [groups])], hint)
    one = ctx.ints_input(hint + "_one", [1])
    expand_shape = ctx.make("Concat", [one, per_group.output[0]], hint, axis=0)
    col = ctx.ints_input(hint + "_col", [-1, 1])
    flat = ctx.ints_input(hint + "_flat", [-1])
    helpers = [c, per_group, expand_shape]
    for i in (1, 2):
        r0 = ctx.make("Reshape", [node.input[i], col], hint)
        ex = ctx.make("Expand", [r0.output[0], expand_shape.output[0]], hint)
        r1 = ctx.make("Reshape", [ex.output[0], flat], hint)
        helpers += [r0, ex, r1]
        node.input[i] = r1.output[0]
    return _Out([*helpers, node])


# --- Scan-8 ----------------------------------------------------------------


@_rule(("Scan", 8), converter_wrong=_always)
def _scan_8(ctx: _Ctx, node: NodeProto) -> _Out:
    """Scan-8 had a leading batch axis on every input and output; Scan-9 has none.

    An outer Scan over the batch axis, whose body runs the original scan on one
    batch item, is exactly the old meaning. onnx's adapter just drops the batch
    axis from the metadata, so the new Scan iterates over the batch instead.
    """
    if _input(node, 0):
        raise ctx.error(
            node,
            8,
            "sequence_lens has no Scan-9 equivalent; remove it if all sequences are full length",
        )
    body = _get(node, "body")
    assert isinstance(body, GraphProto)
    m = int(_get(node, "num_scan_inputs"))
    directions = _get(node, "directions")
    inputs = list(node.input[1:])
    n_state = len(inputs) - m
    hint = node.output[0] if node.output else "scan"

    def slot(v: ValueInfoProto) -> ValueInfoProto:
        elem = v.type.tensor_type.elem_type if v.type.HasField("tensor_type") else TensorProto.FLOAT
        return helper.make_tensor_value_info(ctx.fresh(f"{hint}_{v.name}"), elem, None)

    outer_in = [slot(v) for v in body.input]
    outer_out = [slot(v) for v in body.output]
    inner_attrs: dict[str, object] = {"body": body, "num_scan_inputs": m}
    if directions:
        inner_attrs["scan_input_directions"] = _ints(directions)
    inner = helper.make_node(
        "Scan",
        [v.name for v in outer_in],
        [v.name for v in outer_out],
        name=ctx.fresh(hint + "_item"),
        **inner_attrs,
    )
    outer_body = helper.make_graph([inner], ctx.fresh(hint + "_batch_item"), outer_in, outer_out)
    outer = helper.make_node(
        "Scan", inputs, list(node.output), name=node.name or ctx.fresh(hint + "_batch"),
        body=outer_body, num_scan_inputs=n_state + m,
    )  # fmt: skip
    return _Out([outer])


# --- ai.onnx.ml ----------------------------------------------------------------


@_rule(("LabelEncoder", 1), domain=_ML)
def _label_encoder_1(ctx: _Ctx, node: NodeProto) -> None:
    """LabelEncoder-2 maps explicit keys to values; version 1 mapped list index <-> string.

    The direction came from which default was set (int64 default: strings to
    ints), falling back to the input type.
    """
    classes = list(_pop(node, "classes_strings", []))
    default_int = _pop(node, "default_int64")
    default_str = _pop(node, "default_string")
    to_int: bool | None = None
    if (default_int is None) != (default_str is None):
        to_int = default_int is not None
    else:
        elem = ctx.elem_type(node.input[0])
        if elem is not None:
            to_int = elem == TensorProto.STRING
    if to_int is None:
        raise ctx.error(
            node,
            1,
            "cannot tell whether it maps strings to ints or back; set one default_* attribute",
        )
    indices = list(range(len(classes)))
    if to_int:
        _set(node, "keys_strings", classes)
        _set(node, "values_int64s", indices)
        _set(node, "default_int64", -1 if default_int is None else int(default_int))
    else:
        _set(node, "keys_int64s", indices)
        _set(node, "values_strings", classes)
        _set(node, "default_string", "_Unused" if default_str is None else str(default_str))


_TREE_MODES = {
    "BRANCH_LEQ": 0, "BRANCH_LT": 1, "BRANCH_GTE": 2, "BRANCH_GT": 3, "BRANCH_EQ": 4, "BRANCH_NEQ": 5,
}  # fmt: skip
_TREE_AGGREGATES = {"AVERAGE": 0, "SUM": 1, "MIN": 2, "MAX": 3}


def _tensor_or_list(node: NodeProto, name: str) -> np.ndarray | None:
    """`name_as_tensor` (double) if present, else the float list `name`."""
    value = _get(node, name + "_as_tensor")
    if value is not None:
        return numpy_helper.to_array(value).astype(np.float64).reshape(-1)
    value = _get(node, name)
    return None if value is None else np.array(value, dtype=np.float32)


@_rule(("TreeEnsembleRegressor", 3), domain=_ML)
def _tree_ensemble_regressor_3(ctx: _Ctx, node: NodeProto) -> _Out:
    """ai.onnx.ml 5 replaced TreeEnsembleRegressor with TreeEnsemble.

    TreeEnsemble lists interior nodes and leaves separately, gives each leaf one
    (target, weight), has no base values and computes in the input's type.
    Leaves voting for several targets become one tree copy per target (SUM and
    AVERAGE only); base values, the post transform and the float output of the
    old op become explicit nodes after it. (The post transform goes after the
    base values, and TreeEnsemble's own enum is read differently by onnxruntime,
    so Softmax/Sigmoid nodes are used instead.)
    """
    treeids = _ints(_get(node, "nodes_treeids", []))
    nodeids = _ints(_get(node, "nodes_nodeids", []))
    modes = list(_get(node, "nodes_modes", []))
    features = _ints(_get(node, "nodes_featureids", []))
    true_ids = _ints(_get(node, "nodes_truenodeids", []))
    false_ids = _ints(_get(node, "nodes_falsenodeids", []))
    missing = _ints(_get(node, "nodes_missing_value_tracks_true", [])) or [0] * len(treeids)
    values = _tensor_or_list(node, "nodes_values")
    weights = _tensor_or_list(node, "target_weights")
    base = _tensor_or_list(node, "base_values")
    n_targets = int(_get(node, "n_targets", 1))
    aggregate = _get(node, "aggregate_function", "SUM")
    post = _get(node, "post_transform", "NONE")
    x, hint = node.input[0], node.output[0]
    if values is None or weights is None or aggregate not in _TREE_AGGREGATES:
        raise ctx.error(
            node, 3, "it lacks node values or target weights, or has an unknown aggregate"
        )
    wide = (
        values.dtype == np.float64
        or weights.dtype == np.float64
        or (base is not None and base.dtype == np.float64)
    )
    dtype = np.float64 if wide or ctx.elem_type(x) == TensorProto.DOUBLE else np.float32

    index = {(t, n): i for i, (t, n) in enumerate(zip(treeids, nodeids, strict=True))}
    votes: dict[tuple[int, int], dict[int, list[float]]] = {}
    for t, n, target, w in zip(
        _ints(_get(node, "target_treeids", [])),
        _ints(_get(node, "target_nodeids", [])),
        _ints(_get(node, "target_ids", [])),
        weights.tolist(),
        strict=True,
    ):
        votes.setdefault((t, n), {}).setdefault(target, []).append(w)
    combine = {"MIN": min, "MAX": max}.get(aggregate, sum)
    multi = any(len(v) > 1 for v in votes.values())
    if aggregate in ("MIN", "MAX") and n_targets != 1:
        # A target no reached leaf votes for is 0 in onnxruntime and the float limit in
        # onnx's reference: there is no agreed meaning to carry over.
        raise ctx.error(node, 3, f"{aggregate} over {n_targets} targets is ambiguous")
    trees = sorted(set(treeids))
    copies = list(range(n_targets)) if multi else [None]

    nodes: dict[str, list] = {
        k: []
        for k in (
            "modes",
            "features",
            "splits",
            "missing",
            "true",
            "false",
            "true_leaf",
            "false_leaf",
        )
    }
    leaf_targets: list[int] = []
    leaf_weights: list[float] = []
    roots: list[int] = []

    def leaf(key: tuple[int, int], target: int | None) -> int:
        by_target = votes.get(key, {})
        if target is None:
            if len(by_target) == 0 and aggregate in ("MIN", "MAX"):
                raise ctx.error(node, 3, f"a leaf without a vote has no {aggregate} equivalent")
            target = next(iter(by_target), 0)
        weight = combine(by_target.get(target, [0.0]))
        if aggregate == "AVERAGE" and multi:
            weight /= len(trees)  # copies multiply the tree count TreeEnsemble averages over
        leaf_targets.append(target)
        leaf_weights.append(weight)
        return len(leaf_targets) - 1

    def interior(i: int, tree: int, target: int | None) -> int:
        k = len(nodes["modes"])
        for field_name in nodes:
            nodes[field_name].append(0)
        nodes["modes"][k] = _TREE_MODES[modes[i]]
        nodes["features"][k] = features[i]
        nodes["splits"][k] = float(values[i])
        nodes["missing"][k] = missing[i]
        for side, child in (("true", true_ids[i]), ("false", false_ids[i])):
            c = index[(tree, child)]
            if modes[c] == "LEAF":
                nodes[side][k], nodes[side + "_leaf"][k] = leaf((tree, child), target), 1
            else:
                nodes[side][k], nodes[side + "_leaf"][k] = interior(c, tree, target), 0
        return k

    for target in copies:
        for tree in trees:
            root = index.get((tree, 0), min(i for i, t in enumerate(treeids) if t == tree))
            if modes[root] == "LEAF":
                # A one-leaf tree: a split whose branches reach equal leaves. (Not the
                # spec's "both branches name the same leaf", which onnx's reference
                # evaluator decodes wrongly.)
                k = len(nodes["modes"])
                a, b = leaf((tree, nodeids[root]), target), leaf((tree, nodeids[root]), target)
                for field_name, v in zip(nodes, (0, 0, 0.0, 0, a, b, 1, 1), strict=True):
                    nodes[field_name].append(v)
                roots.append(k)
            else:
                roots.append(interior(root, tree, target))

    helpers: list[NodeProto] = []
    x_in = x
    if ctx.elem_type(x) != helper.np_dtype_to_tensor_dtype(np.dtype(dtype)):
        cast_in = ctx.make(
            "Cast", [x], hint + "_x", to=helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
        )
        helpers.append(cast_in)
        x_in = cast_in.output[0]
    if post not in ("NONE", "SOFTMAX", "LOGISTIC"):
        raise ctx.error(node, 3, f"post_transform {post} has no standard-op equivalent")
    attrs: dict[str, object] = {
        "tree_roots": roots,
        "nodes_modes": numpy_helper.from_array(np.array(nodes["modes"], np.uint8)),
        "nodes_featureids": nodes["features"],
        "nodes_splits": numpy_helper.from_array(np.array(nodes["splits"], dtype)),
        "nodes_truenodeids": nodes["true"],
        "nodes_trueleafs": nodes["true_leaf"],
        "nodes_falsenodeids": nodes["false"],
        "nodes_falseleafs": nodes["false_leaf"],
        "leaf_targetids": leaf_targets,
        "leaf_weights": numpy_helper.from_array(np.array(leaf_weights, dtype)),
        "n_targets": n_targets,
        "aggregate_function": _TREE_AGGREGATES["SUM" if multi else aggregate],
    }  # fmt: skip
    if any(missing):
        attrs["nodes_missing_value_tracks_true"] = nodes["missing"]
    trees_node = helper.make_node(
        "TreeEnsemble",
        [x_in],
        [ctx.fresh(hint + "_trees")],
        name=node.name or ctx.fresh(hint + "_trees"),
        domain=_ML,
        **attrs,
    )
    out = [*helpers, trees_node]
    y = trees_node.output[0]
    if base is not None:
        add = ctx.make(
            "Add", [y, ctx.add_const(hint + "_base", base.astype(dtype).reshape(1, -1))], hint
        )
        out.append(add)
        y = add.output[0]
    if post != "NONE":
        post_node = ctx.make(
            "Softmax" if post == "SOFTMAX" else "Sigmoid",
            [y],
            hint,
            **({"axis": -1} if post == "SOFTMAX" else {}),
        )
        out.append(post_node)
        y = post_node.output[0]
    if dtype != np.float32:
        to_float = ctx.make("Cast", [y], hint, to=TensorProto.FLOAT)  # the old output was float
        out.append(to_float)
        y = to_float.output[0]
    out[-1].output[0] = node.output[0]
    return _Out(out)


# --- experimental ops onnx removed (no schema left) ------------------------------


def _experimental_image_scaler(ctx: _Ctx, node: NodeProto) -> _Out:
    """ImageScaler: y = scale * x + bias[c] (NCHW)."""
    x, hint = node.input[0], node.output[0]
    dtype = _np_dtype(ctx.elem_type(x) or TensorProto.FLOAT)
    scale = ctx.add_const(hint + "_scale", np.array(_get(node, "scale", 1.0), dtype))
    bias = np.array(_get(node, "bias", [0.0]), dtype).reshape(-1, 1, 1)
    mul = ctx.make("Mul", [x, scale], hint)
    add = ctx.make("Add", [mul.output[0], ctx.add_const(hint + "_bias", bias)], hint)
    add.output[0] = node.output[0]
    return _Out([mul, add])


def _experimental_affine(ctx: _Ctx, node: NodeProto, alpha_default: float = 1.0) -> _Out:
    """Affine: y = alpha * x + beta."""
    x, hint = node.input[0], node.output[0]
    alpha = ctx.scalar_like(hint + "_alpha", float(_get(node, "alpha", alpha_default)), x)
    beta = ctx.scalar_like(hint + "_beta", float(_get(node, "beta", 0.0)), x)
    mul = ctx.make("Mul", [x, alpha], hint)
    add = ctx.make("Add", [mul.output[0], beta], hint)
    add.output[0] = node.output[0]
    return _Out([mul, add])


def _experimental_scale(ctx: _Ctx, node: NodeProto) -> _Out:
    """Scale: y = scale * x."""
    x, hint = node.input[0], node.output[0]
    mul = ctx.make(
        "Mul", [x, ctx.scalar_like(hint + "_scale", float(_get(node, "scale", 1.0)), x)], hint
    )
    mul.output[0] = node.output[0]
    return _Out([mul])


def _experimental_scaled_tanh(ctx: _Ctx, node: NodeProto) -> _Out:
    """ScaledTanh: y = alpha * tanh(beta * x)."""
    x, hint = node.input[0], node.output[0]
    beta = ctx.scalar_like(hint + "_beta", float(_get(node, "beta", 1.0)), x)
    alpha = ctx.scalar_like(hint + "_alpha", float(_get(node, "alpha", 1.0)), x)
    inner = ctx.make("Mul", [x, beta], hint)
    tanh = ctx.make("Tanh", [inner.output[0]], hint)
    out = ctx.make("Mul", [tanh.output[0], alpha], hint)
    out.output[0] = node.output[0]
    return _Out([inner, tanh, out])


def _experimental_parametric_softplus(ctx: _Ctx, node: NodeProto) -> _Out:
    """ParametricSoftplus: y = alpha * ln(exp(beta * x) + 1)."""
    x, hint = node.input[0], node.output[0]
    beta = ctx.scalar_like(hint + "_beta", float(_get(node, "beta", 1.0)), x)
    alpha = ctx.scalar_like(hint + "_alpha", float(_get(node, "alpha", 1.0)), x)
    inner = ctx.make("Mul", [x, beta], hint)
    soft = ctx.make("Softplus", [inner.output[0]], hint)
    out = ctx.make("Mul", [soft.output[0], alpha], hint)
    out.output[0] = node.output[0]
    return _Out([inner, soft, out])


def _experimental_thresholded_relu(ctx: _Ctx, node: NodeProto) -> _Out:
    """ThresholdedRelu was experimental before opset 10, with the same meaning."""
    return _Out([node], version=10)


def _experimental_dynamic_slice(ctx: _Ctx, node: NodeProto) -> _Out:
    """DynamicSlice(data, starts, ends, axes) is Slice-10 without steps."""
    node.op_type = "Slice"
    return _Out([node], version=10)


def _experimental_crop(ctx: _Ctx, node: NodeProto) -> _Out:
    """Crop(border=[left, top, right, bottom], scale=[h, w]) on NCHW is a Slice of H and W."""
    border = _ints(_get(node, "border", []))
    if len(border) != 4:
        raise RungError(f"Crop at {ctx.node_label} needs a 4-element 'border'")
    left, top, right, bottom = border
    scale = _ints(_get(node, "scale", []))
    if scale:
        ends = [top + scale[0], left + scale[1]]
    else:
        ends = [-bottom if bottom else _INT64_MAX, -right if right else _INT64_MAX]
    hint = node.output[0]
    inputs = [
        node.input[0],
        ctx.ints_input(hint + "_starts", [top, left]),
        ctx.ints_input(hint + "_ends", ends),
        ctx.ints_input(hint + "_axes", [2, 3]),
    ]
    out = ctx.make("Slice", inputs, hint)
    out.output[0] = node.output[0]
    return _Out([out])


_EXPERIMENTAL: dict[str, Callable[[_Ctx, NodeProto], _Out]] = {
    "ImageScaler": _experimental_image_scaler,
    "Affine": _experimental_affine,
    "Scale": _experimental_scale,
    "ScaledTanh": _experimental_scaled_tanh,
    "ParametricSoftplus": _experimental_parametric_softplus,
    "ThresholdedRelu": _experimental_thresholded_relu,
    "DynamicSlice": _experimental_dynamic_slice,
    "Crop": _experimental_crop,
}
_EXPERIMENTAL_UNSUPPORTED = frozenset(
    {"ConstantFill", "GivenTensorFill", "GRUUnit", "ATen", "MeanVarianceNormalization"}
)


# --------------------------------------------------------------------------
# Driving the rules
# --------------------------------------------------------------------------


def _start_version(ctx: _Ctx, node: NodeProto, domain: str, opset: int) -> int | None:
    """The version `node` is at in a graph importing `opset`; None for experimental ops."""
    hist = _histories()[domain].get(node.op_type)
    version = hist.at(opset) if hist is not None else None
    if version is not None:
        return version
    if domain == _DEFAULT and node.op_type in _EXPERIMENTAL:
        return None
    domain_name = "ai.onnx" if domain == _DEFAULT else domain
    if domain == _DEFAULT and node.op_type in _EXPERIMENTAL_UNSUPPORTED:
        raise RungError(
            f"op '{node.op_type}' at {ctx.node_label} (opset {opset}) was an experimental ONNX op "
            "that onnx removed; rung cannot upgrade it — re-export the model with standard ops"
        )
    if hist is None:
        kind = "an ONNX operator" if domain == _DEFAULT else "an ONNX-ML operator"
        raise RungError(
            f"unknown op '{node.op_type}' in domain '{domain_name}' (opset {opset}) at "
            f"{ctx.node_label}; it is not {kind} — is the domain wrong?"
        )
    raise RungError(
        f"op '{node.op_type}' at {ctx.node_label} does not exist in {domain_name} opset {opset} "
        f"(it was added in opset {hist.versions[0]}); fix the model's opset_import"
    )


def _upgrade_node(ctx: _Ctx, node: NodeProto, version: int | None, domain: str) -> list[NodeProto]:
    """Walk one node from `version` up to the target, rule by rule."""
    target = ctx.targets[domain]
    out = [node]
    if version is None:  # experimental op without schema
        res = _EXPERIMENTAL[node.op_type](ctx, node)
        out = [*ctx.pending, *res.nodes]
        ctx.pending.clear()
        if not any(n is node for n in out):
            return out
        version = (
            res.version
            if res.version is not None
            else _histories()[domain][node.op_type].at(target)
        )
    histories = _histories()[domain]
    steps = 0
    while True:
        hist = histories[node.op_type]
        assert version is not None
        steps += 1
        if steps > 64:
            raise AssertionError(f"upgrade rules for {node.op_type} do not terminate")
        deprecated = version == hist.removed
        nxt = version if deprecated else hist.after(version, target)
        if nxt is None:
            return out
        rule = _RULES.get((domain, node.op_type, version))
        if rule is None:
            if not deprecated and version in _COMPATIBLE[domain].get(node.op_type, ()):
                version = nxt
                continue
            if deprecated or nxt == hist.removed:
                what = (
                    f"the op was removed in opset {hist.removed} and rung has no rule "
                    f"replacing it; keep a target opset below {hist.removed}"
                )
            else:
                what = f"rung has no rule for the change to version {nxt}; add one in upgrade.py"
            raise ctx.error(node, version, what)
        op_before = node.op_type
        res = rule(ctx, node)
        replacement = [*ctx.pending, *(res.nodes if res is not None else [node])]
        ctx.pending.clear()
        i = next(k for k, n in enumerate(out) if n is node)
        out[i : i + 1] = replacement
        if not any(n is node for n in replacement):
            return out
        if res is not None and res.version is not None:
            version = res.version
        elif node.op_type != op_before:
            version = histories[node.op_type].at(nxt)
        else:
            version = nxt


@dataclass
class _Plan:
    """Per default-domain source opset: where each node starts from."""

    opsets: dict[str, int]  # domain -> opset the graph's nodes were written against
    converted: bool  # default-domain nodes (not pending) are already at the target


def _upgrade_nodes(
    ctx: _Ctx, nodes: list[NodeProto], plan: _Plan, graph_name: str
) -> list[NodeProto] | None:
    """Upgrade a node list; returns the new list, or None if nothing changed."""
    changed = False
    result: list[NodeProto] = []
    for index, node in enumerate(nodes):
        ctx.node_label = _label(node, index) + (f" in graph '{graph_name}'" if graph_name else "")
        pending = node.domain in _UNPENDING
        if pending:
            node.domain = _UNPENDING[node.domain]
            changed = True
        domain = _canon(node.domain)
        sub_plan = plan
        if plan.converted and (pending or domain != _DEFAULT):
            # The converter only enters subgraphs of the default-domain nodes it converts.
            sub_plan = _Plan(plan.opsets, converted=False)
        for sub in _subgraphs(node):
            _upgrade_graph(ctx, sub, sub_plan)
        ctx.node_label = _label(node, index) + (f" in graph '{graph_name}'" if graph_name else "")
        if domain not in ctx.targets or domain not in plan.opsets:
            result.append(node)
            continue
        opset = (
            ctx.targets[domain]
            if (domain == _DEFAULT and plan.converted and not pending)
            else plan.opsets[domain]
        )
        version = _start_version(ctx, node, domain, opset)
        hist = _histories()[domain].get(node.op_type)
        if (
            version is not None
            and hist is not None
            and version != hist.removed
            and hist.after(version, ctx.targets[domain]) is None
        ):
            result.append(node)  # already in its target form: the common case, kept cheap
            continue
        result.extend(_upgrade_node(ctx, node, version, domain))
        changed = True
    return result if changed else None


def _upgrade_graph(ctx: _Ctx, graph: GraphProto, plan: _Plan) -> None:
    outer = ctx.scope
    ctx.scope = _Scope(graph, outer)
    try:
        new = _upgrade_nodes(ctx, list(graph.node), plan, graph.name if outer is not None else "")
        if new is not None:
            del graph.node[:]
            graph.node.extend(new)
    finally:
        ctx.scope = outer


def _upgrade_function(ctx: _Ctx, fn: FunctionProto) -> None:
    opsets = {_canon(o.domain): o.version for o in fn.opset_import}
    outer = ctx.scope
    ctx.scope = _Scope(None, None, function=fn)
    try:
        new = _upgrade_nodes(
            ctx, list(fn.node), _Plan(opsets, converted=False), f"function {fn.name}"
        )
        if new is not None:
            del fn.node[:]
            fn.node.extend(new)
    finally:
        ctx.scope = outer
    _retarget_opsets(fn.opset_import, ctx.targets)


def _retarget_opsets(imports: Any, targets: dict[str, int]) -> None:
    """Point the imports of upgraded domains at their targets."""
    for imp in imports:
        domain = _canon(imp.domain)
        if domain in targets:
            imp.version = targets[domain]


# --------------------------------------------------------------------------
# The converter round trip
# --------------------------------------------------------------------------


def _node_needs_rules(node: NodeProto, start: int | None, target: int) -> bool:
    """True if the converter cannot (or would wrongly) upgrade `node` from `start`."""
    if start is None:
        return True  # experimental: no schema for the converter to look up
    hist = _histories()[_DEFAULT][node.op_type]
    version: int | None = start
    while version is not None:
        if version == hist.removed:
            return True
        wrong = _CONVERTER_WRONG.get((node.op_type, version))
        if wrong is not None and wrong(node):
            return True
        version = hist.after(version, target)
    return False


def _park_for_rules(graph: GraphProto, source: int, target: int) -> None:
    """Move nodes the converter must not touch into a private domain (it skips them)."""
    histories = _histories()[_DEFAULT]
    for node in graph.node:
        if node.domain not in _DEFAULT_SPELLINGS:
            continue
        hist = histories.get(node.op_type)
        start = hist.at(source) if hist is not None else None
        if _node_needs_rules(node, start, target) or hist is None:
            node.domain = _PENDING[node.domain]
            continue  # the converter does not enter foreign nodes' subgraphs either
        for sub in _subgraphs(node):
            _park_for_rules(sub, source, target)


def _copy_fields(dst: Any, src: Any, skip: tuple[str, ...]) -> None:
    """Copy the set fields of proto `src` into `dst`, except those named in `skip`."""
    for desc, value in src.ListFields():
        if desc.name in skip:
            continue
        if isinstance(value, Message):
            getattr(dst, desc.name).CopyFrom(value)
        elif hasattr(value, "extend"):  # repeated field
            getattr(dst, desc.name).extend(value)
        else:
            setattr(dst, desc.name, value)


def _skeleton(model: ModelProto) -> tuple[ModelProto, set[str]]:
    """A copy for the converter with large initializers swapped for typed graph inputs.

    The converter serializes the model into C++ and back; weights only cost
    time there, and shape inference needs just their types. Returns the copy
    and the names of the swapped initializers.
    """
    work = ModelProto()
    _copy_fields(work, model, skip=("graph", "functions"))
    # Before IR 4 the converter ignores initializers that are not also inputs,
    # which many old exporters omit; the result gets a newer IR version anyway.
    work.ir_version = max(work.ir_version, 4)
    g, src = work.graph, model.graph
    _copy_fields(g, src, skip=("initializer",))
    input_names = {v.name for v in src.input}
    swapped: set[str] = set()
    for t in src.initializer:
        n_elements = int(np.prod(t.dims)) if t.dims else 1
        if (
            n_elements <= _CONVERTER_MAX_INITIALIZER_ELEMENTS
            and t.data_location != TensorProto.EXTERNAL
        ):
            g.initializer.append(t)
            continue
        swapped.add(t.name)
        if t.name not in input_names:
            g.input.append(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
    return work, swapped


def _valid_ssa(graph: GraphProto) -> bool:
    """Every value defined once (the converter names new values `_v_N` without checking)."""
    defined: set[str] = set()
    for name in (*(v.name for v in graph.input), *(t.name for t in graph.initializer)):
        defined.add(name)
    for node in graph.node:
        for out in node.output:
            if out and out in defined:
                return False
            defined.add(out)
        for sub in _subgraphs(node):
            if not _valid_ssa(sub):
                return False
    return True


# GraphProto fields describing the graph rather than its computation; the
# converter's output keeps the computation, these come from the input.
_GRAPH_ANNOTATIONS = (
    "name",
    "doc_string",
    "metadata_props",
    "quantization_annotation",
    "sparse_initializer",
)
_GRAPH_STRUCTURE = tuple(
    f.name for f in GraphProto.DESCRIPTOR.fields if f.name not in _GRAPH_ANNOTATIONS
)


def _try_converter(model: ModelProto, source: int, target: int) -> ModelProto | None:
    """Run onnx's converter on everything it handles correctly; None if it fails."""
    work, swapped = _skeleton(model)
    _park_for_rules(work.graph, source, target)
    work.opset_import.extend(helper.make_opsetid(d, 1) for d in _PENDING.values())
    try:
        converted = onnx.version_converter.convert_version(work, target)
    except Exception:  # noqa: BLE001 - any converter failure means: our rules do it all
        return None
    if not _valid_ssa(converted.graph):
        return None
    # Rebuild the model around the converted graph: the converter drops local
    # functions and graph metadata, and never saw the large initializers.
    result = ModelProto()
    _copy_fields(result, model, skip=("graph",))
    g, src = result.graph, model.graph
    g.CopyFrom(converted.graph)
    for name in _GRAPH_ANNOTATIONS:  # the converter drops some of these
        g.ClearField(name)
    _copy_fields(g, src, skip=_GRAPH_STRUCTURE)
    if swapped:
        original_inputs = {v.name for v in src.input}
        kept = [v for v in g.input if v.name not in swapped or v.name in original_inputs]
        del g.input[:]
        g.input.extend(kept)
        g.initializer.extend(t for t in src.initializer if t.name in swapped)
    for imp in result.opset_import:
        if imp.domain in _DEFAULT_SPELLINGS:
            imp.version = target
    return result


# --------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------


def _needs_work(model: ModelProto, opsets: dict[str, int], targets: dict[str, int]) -> bool:
    """Cheap scan: does any node need more than its current form?"""
    if any(opsets.get(d, targets[d]) != targets[d] for d in targets if d in opsets):
        return True
    histories = _histories()

    def scan(nodes: Any, local: dict[str, int]) -> bool:
        for node in nodes:
            domain = _canon(node.domain)
            if domain in targets and domain in local:
                hist = histories[domain].get(node.op_type)
                version = hist.at(local[domain]) if hist is not None else None
                if version is None or version == hist.removed:
                    return True  # unknown/experimental/deprecated: let the slow path say what
            for sub in _subgraphs(node):
                if scan(sub.node, local):
                    return True
        return False

    if scan(model.graph.node, opsets):
        return True
    for fn in model.functions:
        local = {_canon(o.domain): o.version for o in fn.opset_import}
        if any(local[d] != targets[d] for d in targets if d in local) or scan(fn.node, local):
            return True
    return False


def upgrade_model(
    model: ModelProto,
    target_opset: int | None = None,
    target_ml_opset: int | None = None,
) -> tuple[ModelProto, dict[str, int]]:
    """Return (upgraded copy of model, original opset_import as {domain: version}).

    The default domain ("" or "ai.onnx") is brought to `target_opset` (default:
    the newest onnx knows) and "ai.onnx.ml" to `target_ml_opset` (default: its
    newest); other domains are left alone. A model already at the targets is
    returned as is, without copying. Raises `RungError` for ops that are not
    ONNX ops or whose change of meaning has no rule.
    """
    original = {imp.domain: imp.version for imp in model.opset_import}
    targets = {
        _DEFAULT: _latest(_DEFAULT) if target_opset is None else target_opset,
        _ML: _latest(_ML) if target_ml_opset is None else target_ml_opset,
    }
    opsets: dict[str, int] = {}
    for domain, version in original.items():
        canon = _canon(domain)
        if canon in targets:
            if canon in opsets and opsets[canon] != version:
                raise RungError(
                    f"the model imports {canon or 'ai.onnx'} twice, at opsets {opsets[canon]} and {version}"
                )
            opsets[canon] = version
    for domain, target in targets.items():
        name = "ai.onnx" if domain == _DEFAULT else domain
        if not 1 <= target <= _latest(domain):
            raise RungError(
                f"target opset {target} for {name} is outside 1..{_latest(domain)}, what this onnx knows"
            )
        if domain in opsets and opsets[domain] > _latest(domain):
            raise RungError(
                f"the model uses {name} opset {opsets[domain]}, newer than onnx "
                f"{onnx.__version__} knows ({_latest(domain)}); upgrade the onnx package"
            )
        if domain in opsets and opsets[domain] > target:
            raise RungError(
                f"the model uses {name} opset {opsets[domain]}, newer than the target {target}; rung does not downgrade"
            )

    if not _needs_work(model, opsets, targets):
        return model, original

    source = opsets.get(_DEFAULT)
    work: ModelProto | None = None
    if source is not None and source < targets[_DEFAULT]:
        work = _try_converter(model, source, targets[_DEFAULT])
    converted = work is not None
    if work is None:
        work = ModelProto()
        work.CopyFrom(model)
    ctx = _Ctx(targets=targets, source=model, work=work)
    _upgrade_graph(ctx, work.graph, _Plan(opsets, converted))
    _retarget_opsets(work.opset_import, targets)
    for fn in work.functions:
        _upgrade_function(ctx, fn)
    ids = [helper.make_opsetid(o.domain, o.version) for o in work.opset_import]
    try:
        work.ir_version = max(
            work.ir_version, helper.find_min_ir_version_for(ids, ignore_unknown=True)
        )
    except ValueError:
        pass  # an opset onnx has no IR mapping for: keep what the model said
    inputs = {v.name for v in work.graph.input}
    if work.ir_version < 4 and any(t.name not in inputs for t in work.graph.initializer):
        work.ir_version = 4  # IR 3 wanted every initializer listed as an input too
    return work, original
