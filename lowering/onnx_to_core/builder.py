"""The shared toolkit of ONNX → core patterns: building core ops, broadcasting, constants.

Patterns stay small because everything they have in common lives here: a
`CoreBuilder` inserts core ops before the op being lowered (at its location),
turns numpy arrays into `core.constant`, applies ONNX's multidirectional
broadcasting explicitly, and reads constant operands (axes, pads, shapes)
back as numpy. Before adding a helper to a pattern file, look here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from rung.dialects import core
from rung.dialects.constants import constant_attr, constant_value
from rung.dialects.dtypes import element_type, numpy_dtype, saturation_bound
from rung.dialects.onnx import OnnxOp
from rung.dialects.onnx.generated_ops import ConstantOp as OnnxConstantOp
from rung.dialects.resources import owning_module
from rung.errors import RungError


class LoweringError(RungError):
    """An op has a form this lowering does not (yet) handle; the legality check reports it."""


def element_type_of(dtype: np.dtype) -> Attribute:
    return element_type(dtype)


def shape_of_type(t: Attribute) -> tuple[int, ...] | None:
    """The static shape of a ranked tensor type, -1 for `?` dims; None if unranked."""
    if isinstance(t, TensorType):
        return tuple(-1 if d == DYNAMIC_INDEX else d for d in t.get_shape())
    return None


def tensor(element: Attribute, shape: Sequence[int]) -> TensorType:
    return TensorType(element, [DYNAMIC_INDEX if d < 0 else d for d in shape])


def is_static(t: Attribute) -> bool:
    shape = shape_of_type(t)
    return shape is not None and all(d >= 0 for d in shape)


class CoreBuilder:
    """Inserts core ops before `op`, carrying its location."""

    def __init__(self, rewriter: PatternRewriter, op: Operation) -> None:
        self.rewriter = rewriter
        self.op = op
        self._module: ModuleOp | None = None

    @property
    def module(self) -> ModuleOp:
        if self._module is None:
            self._module = owning_module(self.op)
        return self._module

    def insert(self, new: Operation) -> Operation:
        new.location = self.op.location
        self.rewriter.insert(new, InsertPoint.before(self.op))
        return new

    # ---- constants ---------------------------------------------------------------

    def constant(self, value: np.ndarray | float | int, like: Attribute | None = None) -> SSAValue:
        """A `core.constant` of `value` (dtype of `like`'s elements when given)."""
        array = np.asarray(value)
        if like is not None:
            array = array.astype(numpy_dtype(element_of(like)))
        attr = constant_attr(array, self.module)
        const = core.ConstantOp.create(properties={"value": attr}, result_types=[attr.type])
        return self.insert(const).results[0]

    def scalar(self, value: float | int, element: Attribute) -> SSAValue:
        """A rank-0 constant of the given element type."""
        return self.constant(np.asarray(value, dtype=numpy_dtype(element)))

    def splat(self, value: float | int, like: SSAValue) -> SSAValue:
        """A tensor shaped like `like` (static) or broadcast to it (dynamic), full of `value`."""
        scalar = self.scalar(value, element_of(like.type))
        return self.broadcast_to(scalar, like.type, like)

    # ---- core ops ------------------------------------------------------------------

    def unary(self, fn: str, x: SSAValue, result: Attribute | None = None) -> SSAValue:
        op = core.UnaryOp.create(
            operands=[x], result_types=[result or x.type], properties={"fn": StringAttr(fn)}
        )
        return self.insert(op).results[0]

    def binary(self, fn: str, a: SSAValue, b: SSAValue) -> SSAValue:
        op = core.BinaryOp.create(
            operands=[a, b], result_types=[a.type], properties={"fn": StringAttr(fn)}
        )
        return self.insert(op).results[0]

    def compare(self, pred: str, a: SSAValue, b: SSAValue) -> SSAValue:
        result = tensor(IntegerType(1), shape_of_type(a.type) or ())
        op = core.CompareOp.create(
            operands=[a, b], result_types=[result], properties={"pred": StringAttr(pred)}
        )
        return self.insert(op).results[0]

    def select(self, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        op = core.SelectOp.create(operands=[cond, a, b], result_types=[a.type])
        return self.insert(op).results[0]

    def cast(self, x: SSAValue, element: Attribute, saturate: bool = False) -> SSAValue:
        """Convert elements; `saturate` clamps to the range of small float types."""
        if element_of(x.type) == element:
            return x
        result = tensor(element, shape_of_type(x.type) or ())
        small_float = saturation_bound(numpy_dtype(element)) is not None
        props = {"saturate": int_attr(1)} if saturate and small_float else {}
        op = core.CastOp.create(operands=[x], result_types=[result], properties=props)
        return self.insert(op).results[0]

    def shape_of(self, x: SSAValue) -> SSAValue:
        rank = len(shape_of_type(x.type) or ())
        op = core.ShapeOfOp.create(operands=[x], result_types=[tensor(i64, [rank])])
        return self.insert(op).results[0]

    def reshape(self, x: SSAValue, result: Attribute, shape: SSAValue | None = None) -> SSAValue:
        if x.type == result and is_static(result):
            return x
        operands = [x] if shape is None or is_static(result) else [x, shape]
        return self.insert(core.ReshapeOp.create(operands=operands, result_types=[result])).results[
            0
        ]

    def transpose(self, x: SSAValue, perm: Sequence[int]) -> SSAValue:
        if list(perm) == list(range(len(perm))):
            return x
        shape = shape_of_type(x.type)
        assert shape is not None
        result = tensor(element_of(x.type), [shape[p] for p in perm])
        op = core.TransposeOp.create(
            operands=[x], result_types=[result], properties={"perm": core.ints(perm)}
        )
        return self.insert(op).results[0]

    def reduce(self, fn: str, x: SSAValue, axes: Sequence[int]) -> SSAValue:
        shape = shape_of_type(x.type)
        assert shape is not None
        axes = sorted(set(axes))
        result = tensor(element_of(x.type), [d for i, d in enumerate(shape) if i not in axes])
        op = core.ReduceOp.create(
            operands=[x],
            result_types=[result],
            properties={"fn": StringAttr(fn), "axes": core.ints(axes)},
        )
        return self.insert(op).results[0]

    def broadcast_to(
        self,
        x: SSAValue,
        target: Attribute,
        like: SSAValue | None = None,
        shape: SSAValue | None = None,
    ) -> SSAValue:
        """ONNX (numpy) broadcasting of `x` to the shape of `target`.

        Dims are right-aligned. A dynamic target takes its runtime shape from
        `shape` (a 1-D i64 tensor) or from `like`, a value of that shape.
        """
        if x.type == target:
            return x
        src = shape_of_type(x.type)
        out = shape_of_type(target)
        if src is None or out is None:
            raise LoweringError("broadcasting needs ranked tensors")
        offset = len(out) - len(src)
        if offset < 0:
            raise LoweringError(f"cannot broadcast rank {len(src)} to rank {len(out)}")
        if src == out[offset:] and offset == 0:
            return x
        dims = list(range(offset, len(out)))
        result = tensor(element_of(x.type), out)
        operands = [x]
        if any(d < 0 for d in out):
            if shape is None:
                if like is None:
                    raise LoweringError("broadcast to a dynamic shape needs a value of that shape")
                shape = self.shape_of(like)
            operands.append(shape)
        op = core.BroadcastOp.create(
            operands=operands, result_types=[result], properties={"dims": core.ints(dims)}
        )
        return self.insert(op).results[0]

    def broadcast_all(self, values: Sequence[SSAValue], result: Attribute) -> list[SSAValue]:
        """Broadcast every operand of an elementwise op to its result's shape."""
        out = shape_of_type(result)
        if out is None:
            if all(v.type == values[0].type for v in values):
                return list(values)  # same unranked type: nothing to broadcast
            raise LoweringError(
                "elementwise operands of different types need a ranked result to broadcast to"
            )
        shape: SSAValue | None = None
        if any(d < 0 for d in out):
            full = next((v for v in values if shape_of_type(v.type) == out), None)
            shape = self.shape_of(full) if full is not None else self.broadcast_shape(values, out)
        return [self.broadcast_to(v, tensor(element_of(v.type), out), shape=shape) for v in values]

    def broadcast_shape(self, values: Sequence[SSAValue], out: Sequence[int]) -> SSAValue:
        """The runtime broadcast shape of `values`, right-aligned.

        Each operand's shape is left-padded with ones to the result rank; ONNX
        requires every dim to be 1 or the common size, so a dim of 1 yields to
        the other operand's (which keeps a 0-sized dim, where a max would not).
        """
        rank = len(out)
        acc: SSAValue | None = None
        for v in values:
            src = shape_of_type(v.type)
            if src is None:
                raise LoweringError("broadcasting needs ranked tensors")
            dims = self.shape_of(v)
            if len(src) < rank:
                ones = self.constant(np.ones(rank - len(src), dtype=np.int64))
                dims = self.insert(
                    core.ConcatOp.create(
                        operands=[ones, dims],
                        result_types=[tensor(i64, [rank])],
                        properties={"axis": int_attr(0)},
                    )
                ).results[0]
            if acc is None:
                acc = dims
            else:
                one = self.constant(np.ones(rank, dtype=np.int64))
                acc = self.select(self.compare("eq", acc, one), dims, acc)
        assert acc is not None
        return acc

    def slice(
        self,
        x: SSAValue,
        start: Sequence[int],
        size: Sequence[int],
        stride: Sequence[int] | None = None,
    ) -> SSAValue:
        """A core.slice; `size[d] == -1` keeps the whole (possibly dynamic) dim d.

        With a static input the static form is used. Otherwise the dynamic form
        gets its sizes as `constant sizes + shape_of(x) * keep-mask`.
        """
        stride = [1] * len(size) if stride is None else stride
        shape = ranked_shape(x)
        element = element_of(x.type)
        full = [s < 0 for s in size]
        if all(d >= 0 for d in shape):
            sizes = [n if f else s for n, s, f in zip(shape, size, full, strict=True)]
            if (
                list(start) == [0] * len(shape)
                and list(stride) == [1] * len(shape)
                and list(sizes) == list(shape)
            ):
                return x
            new = core.SliceOp.create(
                operands=[x],
                result_types=[tensor(element, sizes)],
                properties={"start": core.ints(start), "stride": core.ints(stride)},
            )
            return self.insert(new).results[0]
        if any(f and st != 1 for f, st in zip(full, stride, strict=True)):
            raise LoweringError("a whole-dim slice must have stride 1")
        rank = len(shape)
        fixed = self.constant(
            np.array([0 if f else s for s, f in zip(size, full, strict=True)], np.int64)
        )
        mask = self.constant(np.array([1 if f else 0 for f in full], np.int64))
        sizes_v = self.binary("add", fixed, self.binary("mul", self.shape_of(x), mask))
        result_shape = [n if f else s for n, s, f in zip(shape, size, full, strict=True)]
        new = core.SliceOp.create(
            operands=[
                x,
                self.constant(np.array(start, np.int64).reshape(rank)),
                sizes_v,
                self.constant(np.array(stride, np.int64).reshape(rank)),
            ],
            result_types=[tensor(element, result_shape)],
        )
        return self.insert(new).results[0]

    def gather(self, x: SSAValue, indices: SSAValue, axis: int) -> SSAValue:
        """core.gather of non-negative, in-range `indices`: x[:axis] + indices + x[axis+1:]."""
        shape = ranked_shape(x)
        out = [*shape[:axis], *ranked_shape(indices), *shape[axis + 1 :]]
        new = core.GatherOp.create(
            operands=[x, indices],
            result_types=[tensor(element_of(x.type), out)],
            properties={"axis": int_attr(axis)},
        )
        return self.insert(new).results[0]

    def concat(self, values: Sequence[SSAValue], axis: int) -> SSAValue:
        """core.concat along `axis` (a dynamic dim in any operand makes the result's `?`)."""
        if len(values) == 1:
            return values[0]
        shapes = [ranked_shape(v) for v in values]
        out = list(shapes[0])
        out[axis] = -1 if any(s[axis] < 0 for s in shapes) else sum(s[axis] for s in shapes)
        new = core.ConcatOp.create(
            operands=list(values),
            result_types=[tensor(element_of(values[0].type), out)],
            properties={"axis": int_attr(axis)},
        )
        return self.insert(new).results[0]

    def retype(self, v: SSAValue, target: Attribute) -> SSAValue:
        """Give a computed value the op's declared type (static where either one is).

        The users of the op were typed by ONNX shape inference; a core.reshape
        with a constant shape operand keeps their types valid. An unranked
        declared type is left alone: the computed type is more precise.
        """
        if v.type == target:
            return v
        shape = ranked_shape(v)
        out = shape_of_type(target)
        if out is None:
            return v
        if len(out) != len(shape) or any(
            o >= 0 and d >= 0 and o != d for o, d in zip(out, shape, strict=True)
        ):
            raise LoweringError(f"computed type {v.type} does not fit the declared {target}")
        if all(d >= 0 for d in out):
            shape_v = self.constant(np.array(out, np.int64))
        elif all(d >= 0 for d in shape):
            shape_v = self.constant(np.array(shape, np.int64))
        else:
            shape_v = self.shape_of(v)
        new = core.ReshapeOp.create(operands=[v, shape_v], result_types=[target])
        return self.insert(new).results[0]

    def replace(self, results: Sequence[SSAValue | None]) -> None:
        """Replace the op being lowered by `results` (None for its absent outputs)."""
        present = [r for r in results if r is not None]
        self.rewriter.replace(self.op, [], present)


def as_onnx(op: Operation) -> OnnxOp:
    """The op being lowered, as the onnx op the handler table promises it is."""
    assert isinstance(op, OnnxOp)
    return op


def ranked_shape(v: SSAValue | Attribute) -> tuple[int, ...]:
    """The shape of a value or type (-1 for `?`); unranked ones are a LoweringError."""
    t = v.type if isinstance(v, SSAValue) else v
    shape = shape_of_type(t)
    if shape is None:
        raise LoweringError("needs a ranked tensor")
    return shape


def element_of(t: Attribute) -> Attribute:
    element = getattr(t, "element_type", None)
    if element is None:
        raise LoweringError(f"expected a tensor, got {t}")
    return element


FOLD_LIMIT = 1 << 16
"""Largest result (in elements) evaluated at compile time to find a constant."""


def constant_array(value: SSAValue | None, _depth: int = 0) -> np.ndarray | None:
    """The data of `value` if it is a constant or computed from constants, else None.

    Exporters compute shapes, pads, axes and ranges with chains such as
    Shape → Gather → Concat; once lowered they are small core ops on
    constants. Evaluating them with the core interpreter (the executable spec)
    lets every handler that needs a constant operand see one.
    """
    if value is None:
        return None
    owner = value.owner
    if isinstance(owner, core.ConstantOp | OnnxConstantOp):
        attr = owner.properties.get("value")
        if attr is None:
            return None
        try:
            return constant_value(attr, owning_module(owner))
        except RungError:
            return None
    if _depth > 64 or not isinstance(owner, Operation) or not owner.name.startswith("core."):
        return None
    if owner.regions or not all(is_static(r.type) for r in owner.results):
        return None
    if any(int(np.prod(shape_of_type(r.type) or ())) > FOLD_LIMIT for r in owner.results):
        return None
    args = [constant_array(v, _depth + 1) for v in owner.operands]
    if any(a is None for a in args):
        return None
    from rung.dialects.core_eval import CoreInterpreter

    try:
        interp = CoreInterpreter(owning_module(owner))
        outs = interp.eval(owner, dict(zip(owner.operands, args, strict=True)))
    except Exception:  # noqa: BLE001  (folding is best effort: no constant, no folding)
        return None
    return np.asarray(outs[list(owner.results).index(value)])


def constant_ints(value: SSAValue | None) -> list[int] | None:
    array = constant_array(value)
    return None if array is None else [int(v) for v in array.reshape(-1)]


def normalize_axis(axis: int, rank: int) -> int:
    if not -rank <= axis < max(rank, 1):
        raise LoweringError(f"axis {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def int_attr(value: int) -> IntegerAttr:
    return IntegerAttr(value, i64)


__all__ = [
    "CoreBuilder",
    "as_onnx",
    "ranked_shape",
    "LoweringError",
    "constant_array",
    "constant_ints",
    "element_of",
    "int_attr",
    "is_static",
    "normalize_axis",
    "shape_of_type",
    "tensor",
]
