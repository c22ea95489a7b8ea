"""Asking ONNX itself about one op: its result types, and its function body.

Two things make many more models lower than hand-written patterns alone:

* **Shape refinement.** ONNX shape inference ran once, at import, on the
  whole graph. Where it could not see through a computation (a Reshape
  whose shape comes from a Shape → Gather → Concat chain, axes given as a
  tensor), results stay `?` or unranked. Once the producers are lowered and
  their core values turn out static or constant, re-running ONNX's own
  inference on the single node, with those operands as initializers, gives
  the exact result types: the lowering then sees static shapes.
* **Function expansion.** Many ONNX ops (RMSNormalization, Attention,
  SoftmaxCrossEntropyLoss, CenterCropPad, ...) are defined by ONNX as a
  function of simpler ops. An op without a handler is replaced by that body,
  imported through the ordinary importer (so it is upgraded, inferred and
  verified like any model), and the body's ops are lowered in turn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import onnx
from onnx import FunctionProto, ModelProto, NodeProto
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseResourceAttr,
    ModuleOp,
    NameLoc,
    NoneAttr,
    StringAttr,
    TensorType,
    UnrankedTensorType,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from rung.dialects.onnx import OPSET_VERSIONS, OnnxOp
from rung.dialects.onnx.generated_ops import ConstantOp as OnnxConstantOp
from rung.dialects.resources import BlobStore, owning_module, store_of
from rung.errors import RungError
from rung.lowering.kit import constant_array, is_static

if TYPE_CHECKING:
    from rung.importers.onnx.reinfer import NodeModel

EXPAND_DOMAIN = "rung.expand"
"""The private domain the expanded function is called through while it is inlined."""


# ---- shape refinement ----------------------------------------------------------


def needs_refinement(op: Operation) -> bool:
    """Worth asking ONNX: a result is unranked and every operand is now ranked, or
    a result is not static and every operand now is.

    (Dynamic-batch models, whose results were ranked at import and whose
    operands stay dynamic, are not asked again: it would cost time and gain nothing.)
    """
    if not isinstance(op, OnnxOp):
        return False
    results = [r.type for r in op.onnx_outputs() if r is not None]
    if all(is_static(t) for t in results):
        return False
    operands = [v.type for v in op.onnx_inputs() if v is not None]
    if not all(isinstance(t, TensorType) for t in operands):
        return False
    return all(is_static(t) for t in operands) or any(
        isinstance(t, UnrankedTensorType) for t in results
    )


def refine_result_types(op: OnnxOp) -> None:
    """Give `op`'s results the (more precise) types ONNX infers for this node alone.

    Only refinements are taken: an inferred type that contradicts the declared
    one is ignored (the handler then sees the declared type and decides).
    """
    from rung.importers.onnx.reinfer import infer_result_types

    inferred = infer_result_types(op, constant_array)
    for result, new in zip(op.onnx_outputs(), inferred, strict=True):
        if result is None or new is None:
            continue
        better = _refined(result.type, new)
        if better is not None:
            result._type = better  # pyright: ignore[reportPrivateUsage]


def _refined(old: Attribute, new: Attribute) -> Attribute | None:
    """`new` where it is compatible with and more precise than `old`, else None."""
    if not isinstance(new, TensorType):
        return None
    if isinstance(old, UnrankedTensorType):
        return new if old.element_type == new.element_type else None
    if not isinstance(old, TensorType) or old.element_type != new.element_type:
        return None
    a, b = old.get_shape(), new.get_shape()
    if len(a) != len(b) or a == b:
        return None
    dims = []
    for x, y in zip(a, b, strict=True):
        if x != DYNAMIC_INDEX and y != DYNAMIC_INDEX and x != y:
            return None
        dims.append(x if x != DYNAMIC_INDEX else y)
    return TensorType(old.element_type, dims)


# ---- function expansion ------------------------------------------------------


def function_body(op: OnnxOp) -> FunctionProto | None:
    """ONNX's definition of `op` as a function of simpler ops, if it has one."""
    schema_info = op.SCHEMA
    try:
        schema = onnx.defs.get_schema(
            schema_info.op_type, OPSET_VERSIONS.get(schema_info.domain, 1), schema_info.domain
        )
    except onnx.defs.SchemaError:
        return None
    if schema.has_function:
        return schema.function_body
    if not schema.has_context_dependent_function:
        return None
    from rung.importers.onnx.reinfer import NodeModel

    node = NodeModel(op)
    present = [t for v, t in zip(op.onnx_inputs(), node.input_types, strict=True) if v is not None]
    if any(t.WhichOneof("value") is None for t in present):
        return None  # ONNX cannot build the body for inputs of unknown (or core-only) type
    try:
        raw = schema.get_context_dependent_function(
            node.node.SerializeToString(), [t.SerializeToString() for t in node.input_types]
        )
    except Exception:  # noqa: BLE001  (ONNX refuses some contexts; then there is no body)
        return None
    fn = FunctionProto()
    fn.ParseFromString(raw)
    if not fn.node:
        # The builder signals a context it cannot serve by an empty body, e.g. when a
        # size it turns into an attribute (CausalConvWithState's channel count, its
        # Conv's `group`) is only known at run time.
        shapes = ", ".join(str(v.type) for v in op.onnx_inputs() if v is not None)
        raise RungError(f"ONNX builds no body for operands of types ({shapes})")
    return fn


def _with_defaults(node: NodeProto, op: OnnxOp) -> None:
    """Spell out the op's attribute defaults: the body's ops may default differently."""
    schema = onnx.defs.get_schema(
        op.SCHEMA.op_type, OPSET_VERSIONS.get(op.SCHEMA.domain, 1), op.SCHEMA.domain
    )
    present = {a.name for a in node.attribute}
    for name, attr in schema.attributes.items():
        if name not in present and attr.default_value.type != onnx.AttributeProto.UNDEFINED:
            node.attribute.append(attr.default_value)


def expanded_module(op: OnnxOp) -> tuple[ModuleOp, NodeModel] | None:
    """The function body of `op` imported as an onnx-dialect module, or None.

    Operands with constant values go in as initializers, so the body's shapes
    are inferred from them; the module holds them as `onnx.Constant` ops named
    after the operand, which the caller maps back to the operands themselves.
    """
    from rung.importers.onnx import import_model
    from rung.importers.onnx.reinfer import NodeModel

    fn = function_body(op)
    if fn is None:
        return None
    fn = FunctionProto.FromString(fn.SerializeToString())
    fn.domain = EXPAND_DOMAIN
    fn.name = op.SCHEMA.op_type
    node = NodeModel(op, constant_array)
    node.node.domain = EXPAND_DOMAIN
    node.node.op_type = fn.name
    _with_defaults(node.node, op)
    model = node.model([fn])
    _unsized_outputs(model)
    try:
        module = import_model(model)
    except RungError:
        return None
    return module, node


def _unsized_outputs(model: ModelProto) -> None:
    """Keep only the rank of the one-node model's output types: the body computes the sizes.

    The op's result types come from ONNX's inference of the op as a whole, which
    can be wrong where the inputs are dynamic (a 3-D Attention output gets a
    last dim of 0), and a declared size would override the body's own.
    """
    for vi in model.graph.output:
        tp = vi.type
        if tp.HasField("tensor_type") and tp.tensor_type.HasField("shape"):
            for dim in tp.tensor_type.shape.dim:
                dim.Clear()


def inline_expansion(op: OnnxOp, rewriter: PatternRewriter) -> list[Operation] | None:
    """Replace `op` by its function body; returns the inserted ops (None: no body)."""
    expanded = expanded_module(op)
    if expanded is None:
        return None
    module, node = expanded
    func = next(o for o in module.body.block.ops if isinstance(o, FuncOp))
    block = func.body.block
    outputs = [r for r in op.onnx_outputs() if r is not None]
    terminator = block.last_op
    if not isinstance(terminator, ReturnOp) or len(terminator.arguments) != len(outputs):
        return None
    operand_of = {name: value for value, name in node.names.items()}
    mapping: dict[SSAValue, SSAValue] = {
        arg: operand_of[vi.name] for arg, vi in zip(block.args, node.inputs, strict=True)
    }
    constant_names = {t.name for t in node.initializers}
    source, target = store_of(module), store_of(owning_module(op))
    label = op.location.desc.data if isinstance(op.location, NameLoc) else op.SCHEMA.op_type
    inserted: list[Operation] = []
    returned: list[SSAValue] = []
    for inner in list(block.ops):
        if isinstance(inner, ReturnOp):
            returned = [mapping.get(v, v) for v in inner.arguments]
            break
        loc = inner.location
        inner_name = loc.desc.data if isinstance(loc, NameLoc) else inner.name
        if isinstance(inner, OnnxConstantOp) and inner_name in constant_names:
            mapping[inner.results[0]] = operand_of[inner_name]
            continue
        clone = inner.clone(value_mapper=mapping)
        _copy_resources(clone, source, target)
        clone.location = NameLoc(StringAttr(f"{label}/{inner_name}"), NoneAttr())
        rewriter.insert(clone, InsertPoint.before(op))
        inserted.append(clone)
    clones = set(inserted)
    for old, new in zip(outputs, returned, strict=True):
        if new.owner in clones and old.name_hint:
            new.name_hint = old.name_hint  # the op's results keep their names
    rewriter.replace(op, [], returned)
    return inserted


def _copy_resources(op: Operation, source: BlobStore, target: BlobStore) -> None:
    """Copy the blobs of `op`'s dense_resource attributes (and its nested ops') over."""
    for inner in op.walk():
        for key, attr in list(inner.properties.items()) + list(inner.attributes.items()):
            if isinstance(attr, DenseResourceAttr):
                handle = target.add("cst", source.get(attr.resource_handle.data))
                new = DenseResourceAttr.from_params(handle, attr.type)
                if key in inner.properties:
                    inner.properties[key] = new
                else:
                    inner.attributes[key] = new


__all__ = [
    "expanded_module",
    "function_body",
    "inline_expansion",
    "needs_refinement",
    "refine_result_types",
]
