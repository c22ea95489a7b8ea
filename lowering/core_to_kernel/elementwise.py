"""Elementwise core ops, constants, shapes, broadcasts and reshapes → kernel.

Each elementwise op becomes one all-parallel loop nest over its result that
loads its operands at the same indices; `kernel-fuse-elementwise` later
merges chains of them into one nest. A broadcast is a nest that loads its
input at indices with the expanded dims pinned to 0, so it fuses the same
way. A reshape is a free view of its input's storage.
"""

from __future__ import annotations

from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    TensorType,
    f32,
    i64,
)
from xdsl.ir import SSAValue

from rung.dialects import core, kernel
from rung.dialects.dtypes import numpy_dtype
from rung.dialects.dtypes import saturation_bound as small_float_bound

from .builder import Dim, KernelBuilder, KernelLoweringError, memref_of
from .registry import lowers


def map_elements(
    b: KernelBuilder, op: core.CoreOp, inputs: list[SSAValue], fn: object
) -> list[SSAValue]:
    """One parallel nest: `out[i] = fn(b, *loaded inputs at i)`. Public for plugins that
    lower their own elementwise op (or perturb one, as a test of `rung compare`)."""
    dims = b.dims(inputs[0])
    out = b.alloc_for(op.results[0], dims)

    def body(b: KernelBuilder, ivs: list[SSAValue]) -> None:
        values = [b.load(x, ivs) for x in inputs]
        b.store(fn(b, *values), out, ivs)  # type: ignore[operator]

    b.parallel(b.dims(out), body)
    return [out]


@lowers(core.ConstantOp)
def constant(b: KernelBuilder, op: core.ConstantOp) -> list[SSAValue]:
    return [b.insert(kernel.ConstantOp(op.value, memref_of(op.result.type))).results[0]]


@lowers(core.UnaryOp)
def unary(b: KernelBuilder, op: core.UnaryOp) -> list[SSAValue]:
    fn = op.fn.data
    return map_elements(b, op, [b.buffer(op.input)], lambda b, x: b.unary(fn, x))


@lowers(core.BinaryOp)
def binary(b: KernelBuilder, op: core.BinaryOp) -> list[SSAValue]:
    fn = op.fn.data
    return map_elements(
        b, op, [b.buffer(op.lhs), b.buffer(op.rhs)], lambda b, x, y: b.binary(fn, x, y)
    )


@lowers(core.CompareOp)
def compare(b: KernelBuilder, op: core.CompareOp) -> list[SSAValue]:
    pred = op.pred.data
    return map_elements(
        b, op, [b.buffer(op.lhs), b.buffer(op.rhs)], lambda b, x, y: b.compare(pred, x, y)
    )


@lowers(core.SelectOp)
def select(b: KernelBuilder, op: core.SelectOp) -> list[SSAValue]:
    inputs = [b.buffer(op.cond), b.buffer(op.on_true), b.buffer(op.on_false)]
    return map_elements(b, op, inputs, lambda b, c, x, y: b.select(c, x, y))


@lowers(core.CastOp)
def cast(b: KernelBuilder, op: core.CastOp) -> list[SSAValue]:
    to = op.result.type.element_type  # type: ignore[attr-defined]
    top = saturation_bound(op)
    if top is None:
        return map_elements(b, op, [b.buffer(op.input)], lambda b, x: b.cast(x, to))

    def saturating(b: KernelBuilder, x: SSAValue) -> SSAValue:
        # Clamp (NaN passes through) to the largest finite value, then convert; in f32 at
        # least (float8e8m0's bound is beyond f16's range).
        if not isinstance(x.type, Float32Type | Float64Type):
            x = b.cast(x, f32)
        x = b.binary("min", x, b.const(top, x.type))
        x = b.binary("max", x, b.const(-top, x.type))
        return b.cast(x, to)

    return map_elements(b, op, [b.buffer(op.input)], saturating)


def saturation_bound(op: core.CastOp) -> float | None:
    """The largest finite value of a saturating cast's small-float target, else None."""
    if op.saturate is None or not op.saturate.value.data:
        return None
    return small_float_bound(numpy_dtype(op.result.type.element_type))  # type: ignore[attr-defined]


def shape_operand_dims(b: KernelBuilder, result: SSAValue, shape: SSAValue | None) -> list[Dim]:
    """The sizes of a result whose `?` dims come from a 1-D i64 shape operand."""
    t = result.type
    assert isinstance(t, TensorType)
    dims: list[Dim] = []
    shape_buf = b.buffer(shape) if shape is not None else None
    for i, d in enumerate(t.get_shape()):
        if d >= 0:
            dims.append(d)
        elif shape_buf is None:
            raise KernelLoweringError(f"a dynamic result ({t}) needs a shape operand")
        else:
            dims.append(b.load_dim(shape_buf, i))
    return dims


@lowers(core.BroadcastOp)
def broadcast(b: KernelBuilder, op: core.BroadcastOp) -> list[SSAValue]:
    x = b.buffer(op.input)
    in_dims = b.dims(x)
    out_dims = shape_operand_dims(b, op.result, op.shape[0] if op.shape else None)
    out = b.alloc_for(op.result, out_dims)
    mapping = core.ints_of(op.dims)  # noqa: SLF001
    x_shape = x.type.get_shape()  # type: ignore[attr-defined]

    def body(b: KernelBuilder, ivs: list[SSAValue]) -> None:
        index: list[Dim] = []
        for i, d in enumerate(mapping):
            if x_shape[i] == 1:
                index.append(0)
            elif x_shape[i] >= 0:
                index.append(ivs[d])
            else:  # a run-time size that may be 1: index 0 then
                ones = b.icmp("eq", in_dims[i], 1)
                index.append(b.select_index(ones, 0, ivs[d]))
        b.store(b.load(x, index), out, ivs)

    b.parallel(b.dims(out), body)
    return [out]


@lowers(core.IotaOp)
def iota(b: KernelBuilder, op: core.IotaOp) -> list[SSAValue]:
    t = op.result.type
    assert isinstance(t, TensorType)
    dynamic = iter(op.dynamic_dims)
    dims: list[Dim] = []
    for d in t.get_shape():
        if d >= 0:
            dims.append(d)
        else:
            size = b.buffer(next(dynamic))
            dims.append(b.to_index(b.load(size, [0] * len(size.type.get_shape()))))  # type: ignore[attr-defined]
    out = b.alloc_for(op.result, dims)
    axis = op.dim.value.data
    element = t.element_type

    def body(b: KernelBuilder, ivs: list[SSAValue]) -> None:
        i = ivs[axis]
        if isinstance(element, IntegerType | IndexType):
            value = b.from_index(i, element)
        else:
            value = b.cast(b.from_index(i, IntegerType(64)), element)
        b.store(value, out, ivs)

    b.parallel(b.dims(out), body)
    return [out]


@lowers(core.ShapeOfOp)
def shape_of(b: KernelBuilder, op: core.ShapeOfOp) -> list[SSAValue]:
    x = b.buffer(op.input)
    dims = b.dims(x)
    if all(isinstance(d, int) for d in dims):
        value = DenseIntOrFPElementsAttr.from_list(
            TensorType(i64, [len(dims)]),
            [int(d) for d in dims],  # type: ignore[arg-type]
        )
        return [b.insert(kernel.ConstantOp(value, memref_of(op.result.type))).results[0]]
    out = b.alloc(IntegerType(64), [len(dims)])
    for i, d in enumerate(dims):
        b.store(b.from_index(d, IntegerType(64)), out, [i])
    b.shape_values[out] = dims
    return [out]


@lowers(core.ReshapeOp)
def reshape(b: KernelBuilder, op: core.ReshapeOp) -> list[SSAValue]:
    x = b.buffer(op.input)
    dims = shape_operand_dims(b, op.result, op.shape[0] if op.shape else None)
    return [b.view(x, dims)]
