"""Control flow, lists, optionals and ZipMap back to ONNX.

core.if and core.loop have ONNX's own semantics (core.loop's body takes and
yields what an ONNX Loop body does), so their regions move as they are into
If / Loop and their ops are converted in place. Lists are ONNX sequences,
optionals ONNX optionals.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import IntegerType, TensorType, UnrankedTensorType
from xdsl.ir import Region, SSAValue

from rung.dialects import core
from rung.dialects.onnx import OnnxOp

from .emitter import Emitter, element, exports, onnx_type


def _moved(op: core.IfOp | core.LoopOp) -> list[Region]:
    return [op.detach_region(r) for r in list(op.regions)]


@exports(core.IfOp)
def if_(e: Emitter, op: core.IfOp) -> Sequence[SSAValue]:
    regions = _moved(op)
    new = e.build("If", [op.cond], [onnx_type(r.type) for r in op.results], regions=regions)
    for region in new.regions:
        e.convert_region(region)
    return list(new.results)


@exports(core.LoopOp)
def loop(e: Emitter, op: core.LoopOp) -> Sequence[SSAValue]:
    regions = _moved(op)
    new = e.build(
        "Loop",
        [op.max_trips, op.cond, *op.carried],
        [onnx_type(r.type) for r in op.results],
        regions=regions,
    )
    for region in new.regions:
        e.convert_region(region)
    return list(new.results)


@exports(core.ListOp)
def list_(e: Emitter, op: core.ListOp) -> Sequence[SSAValue]:
    from rung.importers.onnx.export import onnx_element_type

    out = onnx_type(op.result.type)
    if op.elements:
        return [e.node("SequenceConstruct", list(op.elements), out)]
    bound = op.result.type.element_type
    assert isinstance(bound, TensorType | UnrankedTensorType)
    return [e.node("SequenceEmpty", [], out, dtype=onnx_element_type(bound.element_type))]


@exports(core.ListLengthOp)
def list_length(e: Emitter, op: core.ListLengthOp) -> Sequence[SSAValue]:
    return [e.node("SequenceLength", [op.input], op.result.type)]


@exports(core.ListGetOp)
def list_get(e: Emitter, op: core.ListGetOp) -> Sequence[SSAValue]:
    return [e.node("SequenceAt", [op.input, op.index], op.result.type)]


@exports(core.ListInsertOp)
def list_insert(e: Emitter, op: core.ListInsertOp) -> Sequence[SSAValue]:
    out = onnx_type(op.result.type)
    return [e.node("SequenceInsert", [op.input, op.element, op.index], out)]


@exports(core.ListEraseOp)
def list_erase(e: Emitter, op: core.ListEraseOp) -> Sequence[SSAValue]:
    return [e.node("SequenceErase", [op.input, op.index], onnx_type(op.result.type))]


@exports(core.ListConcatOp, core.ListStackOp)
def list_join(e: Emitter, op: core.ListConcatOp | core.ListStackOp) -> Sequence[SSAValue]:
    new_axis = 1 if isinstance(op, core.ListStackOp) else 0
    return [
        e.node(
            "ConcatFromSequence",
            [op.input],
            op.result.type,
            axis=op.axis.value.data,
            new_axis=new_axis,
        )
    ]


@exports(core.OptionalOp)
def optional(e: Emitter, op: core.OptionalOp) -> Sequence[SSAValue]:
    out = onnx_type(op.result.type)
    if op.value is not None:
        return [e.node("Optional", [op.value], out)]
    return [e.node("Optional", [], out, type=onnx_type(op.result.type.element_type))]


@exports(core.OptionalHasOp)
def optional_has(e: Emitter, op: core.OptionalHasOp) -> Sequence[SSAValue]:
    return [e.node("OptionalHasElement", [op.input], op.result.type)]


@exports(core.OptionalGetOp)
def optional_get(e: Emitter, op: core.OptionalGetOp) -> Sequence[SSAValue]:
    return [e.node("OptionalGetElement", [op.input], op.result.type)]


@exports(core.ZipMapOp)
def zip_map(e: Emitter, op: core.ZipMapOp) -> Sequence[SSAValue]:
    """ai.onnx.ml ZipMap takes its keys as an attribute: they must be a constant."""
    from rung.importers.onnx.export import constant_array

    source = op.keys.owner
    if not (isinstance(source, OnnxOp) and source.SCHEMA.op_type == "Constant"):
        raise e.fail("keys computed at run time (ZipMap takes them as an attribute)")
    keys = constant_array(source.properties["value"], e.module).reshape(-1)
    if isinstance(element(op.keys), IntegerType):
        attrs = {"classlabels_int64s": [int(k) for k in keys]}
    else:
        attrs = {"classlabels_strings": [str(k) for k in keys]}
    new = e.build("ZipMap", [op.values], [op.result.type], attrs, domain="ai.onnx.ml")
    return list(new.results)
