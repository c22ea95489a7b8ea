"""`CoreBuilder`: what every lowering to core builds with.

A handler gets a `CoreBuilder` positioned before the op it lowers. Each
method inserts core ops there (carrying the op's location) and returns the
new value, so a lowering reads as the formula it implements. The builder
takes care of what core leaves explicit: constants of the right element
type, numpy-style broadcasting, run-time shapes for dynamic dims, 1-D and
batched matmul, quantization as float arithmetic. Before adding a helper to
a pattern file, look here.
"""

from __future__ import annotations

from collections.abc import Sequence

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from rung.dialects import core
from rung.dialects.dtypes import f32, f64, i1, i64, numpy_dtype, saturation_bound
from rung.dialects.resources import owning_module

from .errors import LoweringError
from .folding import constant_array
from .shapes import (
    DimOf,
    Size,
    acc_type,
    element_of,
    int_attr,
    is_static,
    ranked_shape,
    shape_of_type,
    static_size,
    tensor,
)


class CoreBuilder:
    """Inserts core ops before `op`, carrying its location."""

    def __init__(self, rewriter: PatternRewriter, op: Operation) -> None:
        self.rewriter = rewriter
        self.op = op
        self._module: ModuleOp | None = None

    @property
    def module(self) -> ModuleOp:
        """The module being lowered (large constants become its resource blobs)."""
        if self._module is None:
            self._module = owning_module(self.op)
        return self._module

    def insert(self, new: Operation) -> Operation:
        """Insert any op before the one being lowered, at its location."""
        new.location = self.op.location
        self.rewriter.insert(new, InsertPoint.before(self.op))
        return new

    def replace(self, results: Sequence[SSAValue | None]) -> None:
        """Replace the op being lowered by `results` (None for its absent outputs)."""
        present = [r for r in results if r is not None]
        self.rewriter.replace(self.op, [], present)

    # ---- constants ---------------------------------------------------------------

    def constant(self, value: np.ndarray | float | int, like: Attribute | None = None) -> SSAValue:
        """A `core.constant` of `value` (dtype of `like`'s elements when given)."""
        array = np.asarray(value)
        if like is not None:
            array = array.astype(numpy_dtype(element_of(like)))
        return self.insert(core.ConstantOp.from_array(array, self.module)).results[0]

    def scalar(self, value: float | int, element: Attribute) -> SSAValue:
        """A rank-0 constant of the given element type."""
        return self.constant(np.asarray(value, dtype=numpy_dtype(element)))

    def splat(self, value: float | int, like: SSAValue) -> SSAValue:
        """A tensor shaped like `like` (static) or broadcast to it (dynamic), full of `value`."""
        scalar = self.scalar(value, element_of(like.type))
        return self.broadcast_to(scalar, like.type, like)

    # ---- elementwise -----------------------------------------------------------------

    def unary(self, fn: str, x: SSAValue, result: Attribute | None = None) -> SSAValue:
        op = core.UnaryOp.create(
            operands=[x], result_types=[result or x.type], properties={"fn": StringAttr(fn)}
        )
        return self.insert(op).results[0]

    def binary(self, fn: str, a: SSAValue, b: SSAValue) -> SSAValue:
        """`fn` of two operands of one type (broadcast them first: core does not)."""
        op = core.BinaryOp.create(
            operands=[a, b], result_types=[a.type], properties={"fn": StringAttr(fn)}
        )
        return self.insert(op).results[0]

    def compare(self, pred: str, a: SSAValue, b: SSAValue) -> SSAValue:
        result = tensor(i1, shape_of_type(a.type) or ())
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

    # ---- shapes --------------------------------------------------------------------

    def shape_of(self, x: SSAValue) -> SSAValue:
        """The run-time shape of `x`, a 1-D i64 tensor."""
        rank = len(shape_of_type(x.type) or ())
        op = core.ShapeOfOp.create(operands=[x], result_types=[tensor(i64, [rank])])
        return self.insert(op).results[0]

    def dims(self, x: SSAValue) -> list[Size]:
        """The sizes of `x`: numbers where static, `DimOf(x, i)` where dynamic."""
        return [d if d >= 0 else DimOf(x, i) for i, d in enumerate(ranked_shape(x))]

    def shape_vector(self, sizes: Sequence[Size]) -> SSAValue:
        """A 1-D i64 shape holding `sizes`; each `DimOf` is read from its value's shape.

        The dims taken from one value are one gather from its `shape_of`; a
        select merges them with the numbers (and with the dims of other values).
        """
        consts = np.array([0 if isinstance(s, DimOf) else s for s in sizes], dtype=np.int64)
        sources: list[SSAValue] = []
        for s in sizes:
            if isinstance(s, DimOf) and not any(s.value is v for v in sources):
                sources.append(s.value)
        if not sources:
            return self.constant(consts)
        acc: SSAValue | None = None
        for source in sources:
            mine = [isinstance(s, DimOf) and s.value is source for s in sizes]
            picks = [s.axis if isinstance(s, DimOf) and s.value is source else 0 for s in sizes]
            dims = self.gather(self.shape_of(source), self.constant(np.array(picks, np.int64)), 0)
            if acc is None and all(mine):
                acc = dims
            else:
                mask = self.constant(np.array(mine))
                acc = self.select(mask, dims, self.constant(consts) if acc is None else acc)
        assert acc is not None
        return acc

    def reshape(self, x: SSAValue, result: Attribute, shape: SSAValue | None = None) -> SSAValue:
        """`x` with the shape of `result`; a dynamic result takes its shape from `shape`."""
        if x.type == result and is_static(result):
            return x
        operands = [x] if shape is None or is_static(result) else [x, shape]
        new = core.ReshapeOp.create(operands=operands, result_types=[result])
        return self.insert(new).results[0]

    def reshape_to(self, x: SSAValue, sizes: Sequence[Size]) -> SSAValue:
        """`x` reshaped to `sizes`; dynamic ones are read at run time (see `DimOf`)."""
        out = [static_size(s) for s in sizes]
        result = tensor(element_of(x.type), out)
        if all(d >= 0 for d in out):
            return self.reshape(x, result)
        return self.reshape(x, result, self.shape_vector(sizes))

    def transpose(self, x: SSAValue, perm: Sequence[int]) -> SSAValue:
        if list(perm) == list(range(len(perm))):
            return x
        shape = ranked_shape(x)
        result = tensor(element_of(x.type), [shape[p] for p in perm])
        op = core.TransposeOp.create(
            operands=[x], result_types=[result], properties={"perm": core.ints(perm)}
        )
        return self.insert(op).results[0]

    def reduce(self, fn: str, x: SSAValue, axes: Sequence[int]) -> SSAValue:
        """core.reduce over `axes`, which leave the result."""
        shape = ranked_shape(x)
        axes = sorted(set(axes))
        result = tensor(element_of(x.type), [d for i, d in enumerate(shape) if i not in axes])
        op = core.ReduceOp.create(
            operands=[x],
            result_types=[result],
            properties={"fn": StringAttr(fn), "axes": core.ints(axes)},
        )
        return self.insert(op).results[0]

    def reduce_keep(self, fn: str, x: SSAValue, axes: Sequence[int]) -> SSAValue:
        """Reduce `axes` and broadcast the result back over them (keepdims, then expand)."""
        kept = [i for i in range(len(ranked_shape(x))) if i not in set(axes)]
        return self.broadcast_in_dim(self.reduce(fn, x, axes), kept, x)

    def softmax(self, x: SSAValue, axis: int) -> SSAValue:
        """exp(x - max) / sum(exp(x - max)) along `axis`.

        A term whose exponential falls below the smallest normal float is 0
        rather than a subnormal: attention masks of -100 (Swin's shifted
        windows) otherwise fill the probabilities with subnormals, and every
        product with them takes the CPU's slow path (a 12x slower attn @ V).
        The error is under 1.2e-38 absolute per probability.
        """
        shifted = self.binary("sub", x, self.reduce_keep("max", x, [axis]))
        element = element_of(x.type)
        if element in (f32, f64):
            # The exponential of such a term is not computed at all (exp(0)
            # stands in): computing a subnormal is itself the slow path.
            floor = float(np.log(np.finfo(numpy_dtype(element)).tiny))
            tiny = self.compare("lt", shifted, self.splat(floor, shifted))
            zero = self.splat(0, shifted)
            e = self.select(tiny, zero, self.unary("exp", self.select(tiny, zero, shifted)))
        else:
            e = self.unary("exp", shifted)
        return self.binary("div", e, self.reduce_keep("sum", e, [axis]))

    def log_softmax(self, x: SSAValue, axis: int) -> SSAValue:
        """(x - max) - log(sum(exp(x - max))) along `axis`."""
        shifted = self.binary("sub", x, self.reduce_keep("max", x, [axis]))
        total = self.reduce_keep("sum", self.unary("exp", shifted), [axis])
        return self.binary("sub", shifted, self.unary("log", total))

    def count(self, x: SSAValue, axes: Sequence[int], like: SSAValue) -> SSAValue:
        """How many elements of `x` a reduction over `axes` combines, shaped like `like`.

        Means divide by it. Over static dims it is a constant; over dynamic ones
        it is the product of their run-time sizes cast to `like`'s element type,
        so one compiled library serves every size.
        """
        shape = ranked_shape(x)
        reduced = [shape[a] for a in axes]
        if all(d >= 0 for d in reduced):
            return self.splat(int(np.prod(reduced, dtype=np.int64)), like)
        mask = np.array([i in axes for i in range(len(shape))])
        ones = np.ones(len(shape), np.int64)
        dims = self.select(self.constant(mask), self.shape_of(x), self.constant(ones))
        n = self.cast(self.reduce("prod", dims, [0]), element_of(like.type))
        return self.broadcast_to(n, like.type, like)

    # ---- broadcasting ----------------------------------------------------------------

    def broadcast_in_dim(self, x: SSAValue, dims: Sequence[int], like: SSAValue) -> SSAValue:
        """Broadcast `x` into the shape of `like`; `dims[i]` is the result dim of x's dim i."""
        out = ranked_shape(like)
        result = tensor(element_of(x.type), out)
        if x.type == result and list(dims) == list(range(len(out))):
            return x
        operands = [x]
        if any(d < 0 for d in out):
            operands.append(self.shape_of(like))
        op = core.BroadcastOp.create(
            operands=operands, result_types=[result], properties={"dims": core.ints(dims)}
        )
        return self.insert(op).results[0]

    def broadcast_to(
        self,
        x: SSAValue,
        target: Attribute,
        like: SSAValue | None = None,
        shape: SSAValue | None = None,
        always: bool = False,
    ) -> SSAValue:
        """numpy broadcasting of `x` to the shape of `target`.

        Dims are right-aligned. A dynamic target takes its runtime shape from
        `shape` (a 1-D i64 tensor) or from `like`, a value of that shape. When
        `x` already has the target's type nothing is emitted, unless `always`
        asks for a run-time broadcast (its `?` dims may be 1 where the target's
        are not).
        """
        if x.type == target and not always:
            return x
        src = shape_of_type(x.type)
        out = shape_of_type(target)
        if src is None or out is None:
            raise LoweringError("broadcasting needs ranked tensors")
        offset = len(out) - len(src)
        if offset < 0:
            raise LoweringError(f"cannot broadcast rank {len(src)} to rank {len(out)}")
        if src == out[offset:] and offset == 0 and not (always and any(d < 0 for d in src)):
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
        """Broadcast every operand of an elementwise op to its result's shape.

        A `?` dim may turn out to be 1 at run time while another operand's is
        not, so with a dynamic result every operand is broadcast to the run-time
        broadcast shape unless its dims alone decide the result's (see
        `decides_its_dims`). Declared types are claims; this keeps the result right
        when they are vague (exporters often type every dim of an attention mask `?`).
        """
        out = shape_of_type(result)
        if out is None:
            if all(v.type == values[0].type for v in values):
                return list(values)  # same unranked type: nothing to broadcast
            raise LoweringError(
                "elementwise operands of different types need a ranked result to broadcast to"
            )
        if all(d >= 0 for d in out):
            return [self.broadcast_to(v, tensor(element_of(v.type), out)) for v in values]
        alone = [decides_its_dims(i, values, out) for i in range(len(values))]
        full = next((v for v, ok in zip(values, alone, strict=True) if ok), None)
        shape = self.shape_of(full) if full is not None else self.broadcast_shape(values, out)
        return [
            v
            if ok
            else self.broadcast_to(v, tensor(element_of(v.type), out), shape=shape, always=True)
            for v, ok in zip(values, alone, strict=True)
        ]

    def broadcast_shape(self, values: Sequence[SSAValue], out: Sequence[int]) -> SSAValue:
        """The runtime broadcast shape of `values`, right-aligned.

        Each operand's shape is left-padded with ones to the result rank; numpy
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
            acc = dims if acc is None else self.broadcast_merge(acc, dims)
        assert acc is not None
        return acc

    def broadcast_merge(self, acc: SSAValue, dims: SSAValue) -> SSAValue:
        """numpy's rule on two run-time shapes of one rank: a dim of 1 yields to the other's.

        Where neither is 1 they must be equal, so either will do; taking the
        other's where `acc` is 1 keeps a 0-sized dim, where a max would not.
        Sizes that break the rule fail the run (`check`).
        """
        rank = ranked_shape(acc)[0]
        one = self.constant(np.ones(rank, dtype=np.int64))
        acc_is_one = self.compare("eq", acc, one)
        merged = self.select(acc_is_one, dims, acc)
        # Sizes that are neither 1 nor equal would make the kernels read past the
        # smaller operand: the run fails instead, naming the node.
        fits = self.binary(
            "or",
            self.binary("or", acc_is_one, self.compare("eq", dims, one)),
            self.compare("eq", acc, dims),
        )
        return self.check(merged, fits, "operand shapes cannot be broadcast together")

    # ---- data movement ---------------------------------------------------------------

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

    def wrap_indices(
        self, idx: SSAValue, dims: SSAValue | Size, what: str | None = None
    ) -> SSAValue:
        """`select(idx < 0, idx + dim, idx)`: core's gathers want non-negative indices.

        `dims` is one dim size (a number, or a `DimOf` read at run time), or a
        tensor of sizes already shaped like `idx`. Constant indices are wrapped
        at compile time, and need nothing at all when none is negative.

        With `what` (the op, for messages), indices must lie in [-dim, dim): a
        constant one outside is refused now, and the run checks the others
        before any is used, so that a bad index fails the run instead of reading
        or writing outside a buffer.
        """
        data = constant_array(idx)
        if what is not None and data is not None and isinstance(dims, int):
            bad = data[(data < -dims) | (data >= dims)]
            if bad.size:
                raise LoweringError(
                    f"{what}: index {int(bad.flat[0])} is out of range for a dim of {dims}"
                )
            what = None  # all checked now
        if what is None and data is not None and not (data < 0).any():
            return idx
        if isinstance(dims, int):
            if data is not None:
                return self.constant(np.where(data < 0, data + dims, data).astype(data.dtype))
            dim_v = self.splat(dims, idx)
        elif isinstance(dims, DimOf):
            dim_v = self.sizes_like([dims], idx)
        else:
            dim_v = dims
        zero = self.splat(0, idx)
        negative = self.compare("lt", idx, zero)
        wrapped = self.select(negative, self.binary("add", idx, dim_v), idx)
        if what is None:
            return wrapped
        fits = self.binary(
            "and", self.compare("ge", wrapped, zero), self.compare("lt", wrapped, dim_v)
        )
        return self.check(
            wrapped, fits, f"{what}: an index is out of range of the dim it indexes", culprit=idx
        )

    def sizes_like(self, sizes: Sequence[Size], idx: SSAValue) -> SSAValue:
        """`sizes` (read at run time where dynamic) in `idx`'s element type, broadcast
        right-aligned to its shape; one size becomes a scalar first, so it applies to
        every index."""
        vector = self.shape_vector(sizes)
        if len(sizes) == 1:
            vector = self.reshape(vector, tensor(i64, []))
        if element_of(idx.type) != i64:
            vector = self.cast(vector, element_of(idx.type))
        return self.broadcast_to(vector, idx.type, like=idx)

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

    def check(
        self, value: SSAValue, cond: SSAValue, message: str, culprit: SSAValue | None = None
    ) -> SSAValue:
        """`value`, once every element of `cond` (i1) holds at run time; else the run
        fails with `message` and the node's name. Use the result: that orders the
        check before whatever the value guards.

        `culprit` (numbers shaped like `cond`, or one number) is what the error
        quotes: the first element whose condition failed, so that the user sees
        the bad index, axis or size, not just that there was one."""
        new = core.CheckOp.create(
            operands=[value, cond] if culprit is None else [value, cond, culprit],
            result_types=[value.type],
            properties={"message": StringAttr(message)},
        )
        return self.insert(new).results[0]

    def retype(self, v: SSAValue, target: Attribute) -> SSAValue:
        """Give a computed value the op's declared type (static where either one is).

        The users of the op were typed by the frontend's shape inference; a
        core.reshape with a constant shape operand keeps their types valid. An
        unranked declared type is left alone: the computed type is more precise.
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

    # ---- linear algebra ----------------------------------------------------------------

    def matmul(
        self,
        lhs: SSAValue,
        rhs: SSAValue,
        element: Attribute | None = None,
        acc: Attribute | None = None,
    ) -> SSAValue:
        """numpy's matmul as `core.matmul`: 1-D operands get a unit dim (dropped again
        afterwards) and batch dims are broadcast explicitly, dynamic ones included.

        `element` is the result's element type (lhs's by default), `acc` the
        type products are summed in (`acc_type(element)` by default).
        """
        element = element or element_of(lhs.type)
        acc = acc or acc_type(element)
        lhs_vector, rhs_vector = len(ranked_shape(lhs)) == 1, len(ranked_shape(rhs)) == 1
        if lhs_vector:
            lhs = self.reshape_to(lhs, [1, *self.dims(lhs)])
        if rhs_vector:
            rhs = self.reshape_to(rhs, [*self.dims(rhs), 1])
        lhs_batch, rhs_batch = _broadcast_batches(lhs, rhs)
        shared = self._run_time_batch(lhs, rhs) if None in lhs_batch else None
        rows, cols = self.dims(lhs)[-2], self.dims(rhs)[-1]
        lhs = self._with_batch(lhs, lhs_batch, shared)
        rhs = self._with_batch(rhs, rhs_batch, shared)
        out = [*(_static_or_dynamic(d) for d in lhs_batch), static_size(rows), static_size(cols)]
        mm = core.MatmulOp.create(
            operands=[lhs, rhs], result_types=[tensor(element, out)], properties={"acc": acc}
        )
        value = self.insert(mm).results[0]
        if not (lhs_vector or rhs_vector):
            return value
        rank = len(out)
        kept: list[Size] = [DimOf(value, i) for i in range(rank - 2)]
        for i, dropped in ((rank - 2, lhs_vector), (rank - 1, rhs_vector)):
            if not dropped:
                kept.append(out[i] if out[i] >= 0 else DimOf(value, i))
        return self.reshape_to(value, kept)

    def _with_batch(
        self, x: SSAValue, batch: Sequence[Size | None], shared: SSAValue | None
    ) -> SSAValue:
        """`x` (a stack of matrices) broadcast to the batch dims `batch`.

        A None in `batch` is a dim only the run time decides: then `shared`
        holds the run-time batch shape of both operands, and `x` is broadcast
        to it even when its type already fits (its `?` dims may be 1).
        """
        shape = ranked_shape(x)
        matrix = self.dims(x)[-2:]
        static = [*(_static_or_dynamic(s) for s in batch), *(static_size(s) for s in matrix)]
        run_time = shared is not None and None in batch
        if list(shape) == static and not run_time:
            return x
        rank = len(static)
        dims = list(range(rank - len(shape), rank))
        operands = [x]
        if any(d < 0 for d in static):
            if run_time:
                assert shared is not None
                operands.append(self.concat([shared, self.shape_vector(matrix)], 0))
            else:
                sizes = [s for s in batch if s is not None]
                operands.append(self.shape_vector([*sizes, *matrix]))
        op = core.BroadcastOp.create(
            operands=operands,
            result_types=[tensor(element_of(x.type), static)],
            properties={"dims": core.ints(dims)},
        )
        return self.insert(op).results[0]

    def _run_time_batch(self, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        """The batch shape of a matmul's operands broadcast at run time (numpy rules)."""
        lhs_batch, rhs_batch = self.dims(lhs)[:-2], self.dims(rhs)[:-2]
        rank = max(len(lhs_batch), len(rhs_batch))
        padded = [[*([1] * (rank - len(b))), *b] for b in (lhs_batch, rhs_batch)]
        return self.broadcast_merge(self.shape_vector(padded[0]), self.shape_vector(padded[1]))

    # ---- quantization ------------------------------------------------------------------

    def quantize(
        self,
        x: SSAValue,
        scale: SSAValue,
        zero_point: SSAValue | None,
        element: Attribute,
        saturate: bool = False,
    ) -> SSAValue:
        """`saturate(round(x / scale) + zero_point)` in `element`.

        `scale` and `zero_point` are shaped like `x`. The arithmetic is in f32
        (f64 if an operand is f64); rounding is half to even for integer
        results, and the clamp to `element`'s range happens in float, before
        the cast, so the cast never sees an out-of-range value.
        """
        compute = _compute_element(x, scale)
        value = self.binary("div", self.cast(x, compute), self.cast(scale, compute))
        dtype = numpy_dtype(element)
        integer = _is_integer(dtype)
        if integer:
            value = self.unary("round", value)
        if zero_point is not None:
            value = self.binary("add", value, self.cast(zero_point, compute))
        if integer or saturate:
            low, high = _range(dtype)
            value = self.binary("max", value, self.splat(low, value))
            value = self.binary("min", value, self.splat(high, value))
        return self.cast(value, element)

    def dequantize(
        self, x: SSAValue, scale: SSAValue, zero_point: SSAValue | None, element: Attribute
    ) -> SSAValue:
        """`(x - zero_point) * scale` in f32 (f64 for an f64 scale), then cast to `element`.

        `scale` and `zero_point` are shaped like `x`.
        """
        compute = _compute_element(scale)
        value = self.cast(x, compute)
        if zero_point is not None:
            value = self.binary("sub", value, self.cast(zero_point, compute))
        value = self.binary("mul", value, self.cast(scale, compute))
        return self.cast(value, element)


def _broadcast_batches(lhs: SSAValue, rhs: SSAValue) -> tuple[list[Size | None], list[Size | None]]:
    """The batch dims each matmul operand is broadcast to (numpy rules, right-aligned).

    Where both operands have a dim that is equal for certain (one static size,
    or two `?` dims of one origin, see `dim_origin`), each keeps its own; where
    one has 1 (or nothing), it takes the other's, a run-time dim included. A `?`
    facing a static size other than 1 must be 1 or that size, so both take the
    static one. Two `?` dims that may differ are None for both operands: only
    the run time can tell which one (if either) is 1.
    """
    lhs_dims, rhs_dims = _batch_sizes(lhs), _batch_sizes(rhs)
    rank = max(len(lhs_dims), len(rhs_dims))
    lhs_dims = [*([1] * (rank - len(lhs_dims))), *lhs_dims]
    rhs_dims = [*([1] * (rank - len(rhs_dims))), *rhs_dims]
    lhs_out: list[Size | None] = []
    rhs_out: list[Size | None] = []
    for a, b in zip(lhs_dims, rhs_dims, strict=True):
        sa, sb = static_size(a), static_size(b)
        if sa == sb and (sa >= 0 or _same_dim(a, b)):
            lhs_out.append(a)
            rhs_out.append(b)
        elif sa == 1 or sb == 1:
            wider = b if sa == 1 else a
            lhs_out.append(wider)
            rhs_out.append(wider)
        elif sa < 0 and sb < 0:
            lhs_out.append(None)
            rhs_out.append(None)
        elif sa < 0 or sb < 0:
            lhs_out.append(max(sa, sb))
            rhs_out.append(max(sa, sb))
        else:
            raise LoweringError(f"matmul batch dims {sa} and {sb} cannot be broadcast")
    return lhs_out, rhs_out


def _batch_sizes(x: SSAValue) -> list[Size]:
    """The batch dims of a stack of matrices: numbers where static, `DimOf` where not."""
    shape = ranked_shape(x)
    return [d if d >= 0 else DimOf(x, i) for i, d in enumerate(shape[:-2])]


def _same_dim(a: Size, b: Size) -> bool:
    """Whether two run-time dims are equal for certain: they have one origin."""
    if not (isinstance(a, DimOf) and isinstance(b, DimOf)):
        return False
    return dim_origin(a.value, a.axis) == dim_origin(b.value, b.axis)


def _static_or_dynamic(size: Size | None) -> int:
    """A batch size as a static number; -1 where the run time decides it (None included)."""
    return -1 if size is None else static_size(size)


def _compute_element(*values: SSAValue) -> Attribute:
    """f64 if any operand is f64, else f32: the precision ONNX's reference computes in."""
    if any(element_of(v.type) == f64 for v in values):
        return f64
    return f32


def _is_integer(dtype: np.dtype) -> bool:
    try:
        ml_dtypes.iinfo(dtype)
    except (ValueError, TypeError):
        return False
    return True


def _range(dtype: np.dtype) -> tuple[float, float]:
    """The representable range of a quantized type (the finite range of a float type)."""
    info = ml_dtypes.iinfo(dtype) if _is_integer(dtype) else ml_dtypes.finfo(dtype)
    return float(info.min), float(info.max)


__all__ = ["CoreBuilder"]


def decides_its_dims(i: int, values: Sequence[SSAValue], out: Sequence[int]) -> bool:
    """Whether operand `i` of an elementwise op has the result's shape for certain.

    Right-aligned, at every result dim: a static dim other than 1 is the result's
    (broadcasting allows nothing else), and a `?` dim is the result's when every
    other operand has 1, nothing, or a `?` dim of the same origin there (see
    `dim_origin`). Anything else (a missing dim, a 1 that may be broadcast, two `?`
    dims that may differ) needs a run-time broadcast.
    """
    shapes = [ranked_shape(v) for v in values]
    mine = shapes[i]
    if len(mine) != len(out):
        return False
    for p, d in enumerate(mine):
        if d >= 0:
            if d != out[p] and not (out[p] < 0 and d != 1):
                return False
            continue
        origin = dim_origin(values[i], p)
        for j, s in enumerate(shapes):
            q = p - len(out) + len(s)
            if j == i or q < 0 or s[q] == 1:
                continue
            if s[q] >= 0 or dim_origin(values[j], q) != origin:
                return False
    return True


_SAME_SHAPE = (core.UnaryOp, core.BinaryOp, core.CompareOp, core.SelectOp, core.CastOp)
"""Core ops whose operands and result all have one shape, at run time too."""


def dim_origin(value: SSAValue, axis: int) -> tuple[SSAValue, int]:
    """The value and axis a run-time dim was first taken from.

    Elementwise core ops keep their operands' shape, and a broadcast to the
    shape of a value of the same rank takes that value's dims, so two `?` dims
    with one origin are equal at run time without a check.
    """
    for _ in range(256):
        owner = value.owner
        if isinstance(owner, _SAME_SHAPE):
            value = owner.operands[0]
            continue
        if isinstance(owner, core.BroadcastOp) and owner.shape:
            source = owner.shape[0].owner
            if isinstance(source, core.ShapeOfOp):
                rank = len(ranked_shape(value))
                if len(shape_of_type(source.input.type) or ()) == rank:
                    value = source.input
                    continue
        break
    return value, axis
