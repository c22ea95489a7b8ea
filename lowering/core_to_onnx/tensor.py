"""Constants, shapes and data movement back to ONNX.

Core spells out what ONNX leaves implicit (explicit broadcast dims, slices
with a size per dim, non-negative indices); going back only has to restate
it: `broadcast` is Unsqueeze + Expand, a slice's sizes become ends, `iota`
is a Range expanded to the result shape.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import Float32Type, IntegerType, TensorType
from xdsl.ir import Attribute, SSAValue

from rung.dialects import core
from rung.dialects.core import ints_of
from rung.dialects.onnx import OnnxOp

from .emitter import I1, INT64_MIN, Emitter, element, exports, shape, tensor

I64 = core.i64


@exports(core.ConstantOp)
def constant(e: Emitter, op: core.ConstantOp) -> Sequence[SSAValue]:
    return [e.node("Constant", [], op.result.type, value=op.value)]


@exports(core.ShapeOfOp)
def shape_of(e: Emitter, op: core.ShapeOfOp) -> Sequence[SSAValue]:
    return [e.node("Shape", [op.input], op.result.type)]


def _dims_value(e: Emitter, dims: Sequence[int], dynamic: Sequence[SSAValue]) -> SSAValue:
    """A 1-D i64 shape from static dims, `?` dims taken in order from rank-0 operands."""
    if all(d >= 0 for d in dims):
        return e.i64s(dims)
    parts: list[SSAValue] = []
    given = iter(dynamic)
    for d in dims:
        if d >= 0:
            parts.append(e.i64s([d]))
        else:
            value = next(given)
            parts.append(e.node("Reshape", [value, e.i64s([1])], tensor(element(value), [1])))
    return e.node("Concat", parts, tensor(I64, [len(dims)]), axis=0)


@exports(core.IotaOp)
def iota(e: Emitter, op: core.IotaOp) -> Sequence[SSAValue]:
    """Range(0, n) along `dim`, reshaped to [1…, n, …1] and expanded to the result."""
    dims = shape(op.result)
    assert dims is not None
    dim = op.dim.value.data
    elem = element(op.result)
    full = _dims_value(e, dims, list(op.dynamic_dims))
    if dims[dim] >= 0:
        count = e.const(np.array(dims[dim], dtype=np.int64))
    else:
        picked = e.node("Gather", [full, e.const(np.array(dim, dtype=np.int64))], tensor(I64, []))
        count = picked
    line = e.node(
        "Range",
        [e.const(np.array(0, dtype=np.int64)), count, e.const(np.array(1, dtype=np.int64))],
        tensor(I64, [dims[dim]]),
    )
    view = [1] * len(dims)
    view[dim] = -1
    shaped = e.node(
        "Reshape",
        [line, e.i64s(view)],
        tensor(I64, [d if i == dim else 1 for i, d in enumerate(dims)]),
    )
    expanded = e.node("Expand", [shaped, full], tensor(I64, dims))
    return [e.cast(expanded, elem)] if elem != I64 else [expanded]


@exports(core.BroadcastOp)
def broadcast(e: Emitter, op: core.BroadcastOp) -> Sequence[SSAValue]:
    """Unsqueeze the result dims the input lacks, then Expand to the result shape."""
    out = shape(op.result)
    ins = shape(op.input)
    if out is None or ins is None:
        raise e.fail("unranked operands")
    dims = ints_of(op.dims)
    # Expand takes no 8-bit floats or sub-byte integers (and runtimes rarely move them):
    # broadcast a wider type that holds every value exactly, then cast back.
    wide = _expandable(element(op.input))
    x = op.input if wide is None else e.cast(op.input, wide)
    missing = [d for d in range(len(out)) if d not in dims]
    if missing:
        view = [1] * len(out)
        for i, d in enumerate(dims):
            view[d] = ins[i]
        folded = _reshaped_constant(e, x, view)
        if folded is not None:
            x = folded
        else:
            x = e.node("Unsqueeze", [x, e.i64s(missing)], tensor(element(x), view))
    if shape(x) == out and all(d >= 0 for d in out):
        if x is op.input:
            return [e.node("Identity", [x], op.result.type)]
        return [e.cast(x, element(op.input))]
    target = e.shape_tensor(out, op.shape[0] if op.shape else None)
    if wide is None:
        return [e.node("Expand", [x, target], op.result.type)]
    expanded = e.node("Expand", [x, target], tensor(wide, out))
    return [e.cast(expanded, element(op.input))]


def _expandable(elem: Attribute) -> Attribute | None:
    """None if Expand takes `elem`, else a wider type that holds its values exactly."""
    from rung.dialects.onnx import OPS_BY_TYPE
    from rung.dialects.onnx.dtypes import type_string

    allowed = OPS_BY_TYPE[("", "Expand")].SCHEMA.type_constraints["T"]
    if type_string(TensorType(elem, [1])) in allowed:
        return None
    if isinstance(elem, IntegerType):
        return IntegerType(8, elem.signedness.data)
    return Float32Type()


def _reshaped_constant(e: Emitter, value: SSAValue, view: Sequence[int]) -> SSAValue | None:
    """A constant's data in the shape `view` (static), in place of an Unsqueeze of it."""
    from rung.importers.onnx.export import constant_array

    owner = value.owner
    if not (isinstance(owner, OnnxOp) and owner.SCHEMA.op_type == "Constant"):
        return None
    attr = owner.properties.get("value")
    if attr is None or any(d < 0 for d in view):
        return None
    return e.const(constant_array(attr, e.module).reshape(view), "cst")


@exports(core.ReshapeOp)
def reshape(e: Emitter, op: core.ReshapeOp) -> Sequence[SSAValue]:
    """allowzero=1: a 0 in core's shape is a size, never "copy the input's dim"."""
    out = shape(op.result)
    if out is None:
        raise e.fail("an unranked result")
    target = e.shape_tensor(out, op.shape[0] if op.shape else None)
    return [e.node("Reshape", [op.input, target], op.result.type, allowzero=1)]


@exports(core.TransposeOp)
def transpose(e: Emitter, op: core.TransposeOp) -> Sequence[SSAValue]:
    return [e.node("Transpose", [op.input], op.result.type, perm=list(ints_of(op.perm)))]


@exports(core.SliceOp)
def slice_(e: Emitter, op: core.SliceOp) -> Sequence[SSAValue]:
    """ends = start + size * stride; an end below 0 (a reversed window reaching index 0)
    becomes INT64_MIN, since ONNX reads a negative end from the back."""
    out = shape(op.result)
    if out is None:
        raise e.fail("an unranked result")
    rank = len(out)
    axes = e.i64s(range(rank))
    if op.dynamic:
        start, size, stride = op.dynamic
        vec = tensor(I64, [rank])
        ends = e.node("Add", [start, e.node("Mul", [size, stride], vec)], vec)
        zero = e.i64s([0] * rank)
        below = e.node("Less", [ends, zero], tensor(I1, [rank]))
        ends = e.node("Where", [below, e.i64s([INT64_MIN] * rank), ends], vec)
        return [e.node("Slice", [op.input, start, ends, axes, stride], op.result.type)]
    starts, strides = ints_of(op.start), ints_of(op.stride)
    if any(d < 0 for d in out):
        raise e.fail("a static slice whose result size is unknown")
    ends = [s + n * st for s, n, st in zip(starts, out, strides, strict=True)]
    ends = [INT64_MIN if x < 0 else x for x in ends]
    return [
        e.node(
            "Slice",
            [op.input, e.i64s(starts), e.i64s(ends), axes, e.i64s(strides)],
            op.result.type,
        )
    ]


@exports(core.ConcatOp)
def concat(e: Emitter, op: core.ConcatOp) -> Sequence[SSAValue]:
    if len(op.inputs) == 1:
        return [e.node("Identity", [op.inputs[0]], op.result.type)]
    return [e.node("Concat", list(op.inputs), op.result.type, axis=op.axis.value.data)]


@exports(core.PadOp)
def pad(e: Emitter, op: core.PadOp) -> Sequence[SSAValue]:
    """ONNX Pad takes [all lows, all highs] as core does; negative pads crop in both."""
    if op.pads:
        pads = op.pads[0]
    else:
        pads = e.i64s([*ints_of(op.pad_low), *ints_of(op.pad_high)])
    mode = op.mode.data
    value = op.value if mode == "constant" else None
    return [e.node("Pad", [op.input, pads, value], op.result.type, mode=mode)]


@exports(core.GatherOp)
def gather(e: Emitter, op: core.GatherOp) -> Sequence[SSAValue]:
    return [e.node("Gather", [op.input, op.indices], op.result.type, axis=op.axis.value.data)]


@exports(core.GatherElementsOp)
def gather_elements(e: Emitter, op: core.GatherElementsOp) -> Sequence[SSAValue]:
    return [
        e.node("GatherElements", [op.input, op.indices], op.result.type, axis=op.axis.value.data)
    ]


@exports(core.GatherNDOp)
def gather_nd(e: Emitter, op: core.GatherNDOp) -> Sequence[SSAValue]:
    return [
        e.node(
            "GatherND", [op.input, op.indices], op.result.type, batch_dims=op.batch_dims.value.data
        )
    ]


@exports(core.ScatterElementsOp)
def scatter_elements(e: Emitter, op: core.ScatterElementsOp) -> Sequence[SSAValue]:
    return [
        e.node(
            "ScatterElements",
            [op.input, op.indices, op.updates],
            op.result.type,
            axis=op.axis.value.data,
            reduction=op.reduction.data,
        )
    ]


@exports(core.ScatterNDOp)
def scatter_nd(e: Emitter, op: core.ScatterNDOp) -> Sequence[SSAValue]:
    return [
        e.node(
            "ScatterND",
            [op.input, op.indices, op.updates],
            op.result.type,
            reduction=op.reduction.data,
        )
    ]


@exports(core.NonZeroOp)
def nonzero(e: Emitter, op: core.NonZeroOp) -> Sequence[SSAValue]:
    return [e.node("NonZero", [op.input], op.result.type)]


@exports(core.CheckOp)
def check(e: Emitter, op: core.CheckOp) -> Sequence[SSAValue]:
    """ONNX has no assertion: the checked value passes through unchanged (Identity).

    The check guarded rung's own code against out-of-range values; an ONNX
    runtime validates those inputs itself where its op needs them.
    """
    return [e.node("Identity", [op.input], op.result.type)]
