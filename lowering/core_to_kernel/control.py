"""core.if and core.loop → scf.if and scf.while over buffers.

Regions stay regions: each core region is lowered into the block of an scf
op with `lower_region_block`, and the values they exchange are buffers.

    %r = scf.if %c -> (memref<?xf32>) {          // core.if
      ... then branch ...
      %v = kernel.view %a(%n) : memref<3xf32> -> memref<?xf32>
      scf.yield %v : memref<?xf32>
    } else { ... }

core.loop (ONNX Loop) becomes an `scf.while` carrying the trip count (i64),
the condition (i1) and the carried buffers. Its before-region tests
`trip < max_trips && cond` and forwards its arguments; its after-region
stores the trip count and condition into 0-d buffers for the body, lowers
the body, copies each per-iteration scan output into row `trip` of a buffer
allocated before the loop (`kernel.subview` + `kernel.copy`) and yields
`trip + 1`, the new condition and the new carried buffers. Scan results are
those buffers viewed with the final trip count as first dim; a scan output
nobody reads is not filled at all.

Scan buffers are allocated before the loop, so they need a bound and row
sizes known there. A loop ended only by its condition (a constant trip count
above `MAX_STATIC_TRIPS`, as ONNX's absent M becomes) with scan outputs is
refused. A row of run-time shape (the batch of a Scan's state) is sized
before the loop by recomputing its dims there, from loop-invariant values
and the initial carried buffers (`_RowSizer`):

    %n = kernel.dim %x[0] : memref<?x8xf32>
    %rows = kernel.alloc(%n) : memref<200x?xf32>
    ... scf.while (..., %state = %x) ...

A carried dim is taken from the initial value when the body provably yields
the same dim, or, failing a proof, when the body's types say the carried
value keeps its shape; then a `cf.assert` in the loop checks each row, so
that a shape that changes anyway fails the run rather than writing past the
buffer. Rows whose size depends on the iteration (the trip count, a value
computed in the body) are refused.

Buffer types flowing around a loop may differ in static vs `?` dims (a value
that grows each iteration); the carried buffers then take the most general
type of all of them, and `kernel.view` casts in and out, which costs nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import arith, cf, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerType, MemRefType, i1, i64
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue

from rung.dialects import core, kernel

from .builder import Dim, KernelBuilder, KernelLoweringError, memref_of, static_value
from .constants import constant_array
from .elements import kernel_type_of
from .lower_pass import describe, lower_region_block
from .registry import lowers
from .sequence import cast_value, join_types

MAX_STATIC_TRIPS = 2**24
"""A constant trip count above this, for a loop with scan outputs, is taken to mean
'no limit' (ONNX's absent M): the scan buffers could not be allocated up front."""


def _memref(v: SSAValue) -> MemRefType:
    t = v.type
    assert isinstance(t, MemRefType)
    return t


def _view_as(b: KernelBuilder, buf: SSAValue, t: MemRefType, dims: Sequence[Dim]) -> SSAValue:
    """`buf` seen as type `t`, whose `?` dims take their sizes from `dims`."""
    sizes = [b.index(dims[i]) for i, d in enumerate(t.get_shape()) if d < 0]
    return b.insert(kernel.ViewOp(buf, t, sizes)).results[0]


def _cast(b: KernelBuilder, buf: SSAValue, t: Attribute) -> SSAValue:
    """The same buffer with static dims made `?` (or `?` dims asserted static); lists and
    optionals as `sequence.cast_value` makes them stand for another kernel type."""
    if buf.type == t:
        return buf
    if not isinstance(t, MemRefType) or not isinstance(buf.type, MemRefType):
        return cast_value(b, buf, t, "a value around control flow")
    src = _memref(buf)
    shape, target = src.get_shape(), t.get_shape()
    mismatch = src.element_type != t.element_type or len(shape) != len(target)
    if mismatch or any(x >= 0 and y >= 0 and x != y for x, y in zip(shape, target, strict=True)):
        raise KernelLoweringError(f"a buffer of type {src} cannot stand for one of type {t}")
    return _view_as(b, buf, t, b.dims(buf))


def _join(types: Sequence[Attribute], what: str) -> Attribute:
    """The most specific buffer type all of `types` fit: dims that differ become `?`.
    Lists and optionals join as `sequence.join_types` says."""
    buffers = [t for t in types if isinstance(t, MemRefType)]
    if len(buffers) != len(types):
        return join_types(types, what)
    first = buffers[0]
    shapes = [t.get_shape() for t in buffers]
    if any(t.element_type != first.element_type for t in buffers):
        raise KernelLoweringError(f"{what} changes element type: {', '.join(map(str, types))}")
    if len({len(s) for s in shapes}) != 1:
        raise KernelLoweringError(f"{what} changes rank: {', '.join(map(str, types))}")
    dims = [
        d[0] if len(set(d)) == 1 and d[0] >= 0 else DYNAMIC_INDEX for d in zip(*shapes, strict=True)
    ]
    return kernel.memref_type(first.element_type, dims)


def _load_scalar(b: KernelBuilder, buf: SSAValue) -> SSAValue:
    """The one element of a scalar tensor's buffer."""
    return b.load(buf, [0] * len(_memref(buf).get_shape()))


def _scalar_buffer(b: KernelBuilder, t: MemRefType) -> SSAValue:
    """A buffer for a one-element tensor type (rank 0, or all dims 1)."""
    if any(d not in (1, DYNAMIC_INDEX) for d in t.get_shape()):
        raise KernelLoweringError(f"{t} holds more than one element where a scalar is expected")
    return b.alloc(t.element_type, [1] * len(t.get_shape()))


def _root(buf: SSAValue) -> SSAValue:
    """The buffer whose storage `buf` shares (through views and subviews)."""
    while isinstance(buf.owner, kernel.ViewOp | kernel.SubviewOp):
        buf = buf.owner.source
    return buf


@lowers(core.IfOp)
def if_(b: KernelBuilder, op: core.IfOp) -> list[SSAValue]:
    """scf.if on the loaded condition; each branch yields its buffers cast to the result types."""
    module = b.module
    assert module is not None
    cond = _load_scalar(b, b.buffer(op.cond))
    types = [kernel_type_of(r.type) for r in op.results]
    blocks = [Block(), Block()]
    # In place before the branches are filled: their patterns may read constants back,
    # which needs the module they are in.
    new = b.insert(scf.IfOp(cond, types, Region(blocks[0]), Region(blocks[1])))
    for region, block in zip((op.then_region, op.else_region), blocks, strict=True):
        inner = b.nested(block)
        yielded = lower_region_block(inner, region.block, [], module) if region.blocks else []
        if len(yielded) != len(types):
            raise KernelLoweringError(
                f"a branch yields {len(yielded)} values for {len(types)} results"
            )
        values = [_cast(inner, v, t) for v, t in zip(yielded, types, strict=True)]
        inner.insert(scf.YieldOp(*values))
    return list(new.results)


@lowers(core.LoopOp)
def loop(b: KernelBuilder, op: core.LoopOp) -> list[SSAValue]:
    """scf.while carrying (trip, cond, carried...); scans fill rows of preallocated buffers."""
    module = b.module
    assert module is not None
    body = op.body.block
    term = body.last_op
    assert term is not None
    n = len(op.carried)
    if len(body.args) != 2 + n or len(term.operands) != 1 + len(op.results):
        raise KernelLoweringError("the body's arguments or yielded values do not match the loop")
    scan_results = list(op.results[n:])
    scan_yields = list(term.operands[1 + n :])
    live = [bool(r.uses) for r in scan_results]  # unused scan outputs are not filled

    # The bounds: max trips (a number when constant) and the initial condition.
    max_buf = b.buffer(op.max_trips)
    max_const = constant_array(max_buf)
    if not isinstance(_memref(max_buf).element_type, IntegerType):
        raise KernelLoweringError(f"the trip count must be an integer, not {max_buf.type}")
    if max_const is not None:
        max_trips: int | None = int(max_const.reshape(-1)[0])
        max_value = b.const(max_trips, i64)
    else:
        max_trips = None
        max_value = b.cast(_load_scalar(b, max_buf), i64)
    cond_buf = b.buffer(op.cond)
    cond0 = _load_scalar(b, cond_buf)
    cond_const = constant_array(cond_buf)
    forwards_cond = term.operands[0] is body.args[1]
    always = forwards_cond and cond_const is not None and bool(np.all(cond_const))

    # Carried buffers take a type every value around the loop fits.
    iter_types = [
        _join(
            [
                b.buffer(init).type,
                kernel_type_of(arg.type),
                kernel_type_of(out.type),
                kernel_type_of(result.type),
            ],
            f"loop-carried value #{i}",
        )
        for i, (init, arg, out, result) in enumerate(
            zip(op.carried, body.args[2:], term.operands[1 : 1 + n], op.results[:n], strict=True)
        )
    ]
    inits = [_cast(b, b.buffer(v), t) for v, t in zip(op.carried, iter_types, strict=True)]

    # The body reads its iteration number and condition from buffers.
    trip_buf = _scalar_buffer(b, memref_of(body.args[0].type))
    cond_arg_buf = _scalar_buffer(b, memref_of(body.args[1].type))
    trip_buf.name_hint = f"{body.args[0].name_hint or 'trip'}_buf"
    cond_arg_buf.name_hint = f"{body.args[1].name_hint or 'cond'}_buf"

    cap = _capacity(b, max_trips, max_value) if any(live) else 0
    start = b.const(0, i64)

    # The loop is in place before its regions are filled: patterns lowering the body
    # may read constants back, which needs the module they are in.
    types: list[Attribute] = [i64, i1, *iter_types]
    names = [body.args[0].name_hint or "trip", body.args[1].name_hint or "cond"]
    names += [a.name_hint for a in body.args[2:]]
    before, after = Block(arg_types=types), Block(arg_types=types)
    for block in (before, after):
        for arg, name in zip(block.args, names, strict=True):
            arg.name_hint = name
    loop_op = b.insert(scf.WhileOp([start, cond0, *inits], types, Region(before), Region(after)))

    bb = b.nested(before)
    go = bb.icmp("slt", before.args[0], max_value)
    if not always:
        go = bb.op1(arith.AndIOp, go, before.args[1])
    bb.insert(scf.ConditionOp(go, *before.args))

    ab = b.nested(after)
    trip, cond, *carried = after.args
    ab.store(ab.cast(trip, _memref(trip_buf).element_type), trip_buf, [0] * _rank(trip_buf))
    ab.store(
        ab.cast(cond, _memref(cond_arg_buf).element_type), cond_arg_buf, [0] * _rank(cond_arg_buf)
    )
    args = [
        trip_buf,
        cond_arg_buf,
        *(
            _cast(ab, c, kernel_type_of(a.type))
            for c, a in zip(carried, body.args[2:], strict=True)
        ),
    ]
    yielded = lower_region_block(ab, body, args, module)
    new_cond = cond if forwards_cond else ab.cast(_load_scalar(ab, yielded[0]), i1)
    new_carried = []
    for v, t in zip(yielded[1 : 1 + n], iter_types, strict=True):
        if _root(v) in (trip_buf, cond_arg_buf):  # rewritten next iteration: keep a copy
            fresh = ab.alloc(_memref(v).element_type, ab.dims(v))
            ab.copy(v, fresh)
            v = fresh
        new_carried.append(_cast(ab, v, t))

    # Scan buffers (allocated before the loop, once the rows' types are known): one row
    # per iteration, at most max_trips rows. Run-time row sizes are recomputed before
    # the loop from what they depend on there.
    pre = b.nested(Block())
    per_iteration = {trip_buf: "the iteration number", cond_arg_buf: "the condition"}
    sizer = _RowSizer(pre, loop_op, inits, new_carried, body, per_iteration)
    scan_bufs: list[tuple[SSAValue, list[Dim]]] = []
    trip_index = ab.to_index(trip) if any(live) else None
    for result, out, v, used in zip(scan_results, scan_yields, yielded[1 + n :], live, strict=True):
        if not used:
            continue
        row = sizer.row(memref_of(result.type), memref_of(out.type), v)
        buf = pre.alloc(_memref(v).element_type, [cap, *row])
        if result.name_hint:
            buf.name_hint = f"{result.name_hint}_rows"
        scan_bufs.append((buf, row))
        if sizer.needs_check:
            _check_row(ab, v, row, describe(op, module))
        ab.copy(v, ab.insert(kernel.SubviewOp(buf, [trip_index])).results[0])
    for pre_op in list(pre.block.ops):
        pre_op.detach()
        b.block.insert_op_before(pre_op, loop_op)
    next_trip = ab.op1(arith.AddiOp, trip, ab.const(1, i64))
    ab.insert(scf.YieldOp(next_trip, new_cond, *new_carried))

    final_trip, _, *finals = loop_op.results

    results = [
        _cast(b, v, kernel_type_of(r.type)) for v, r in zip(finals, op.results[:n], strict=True)
    ]
    trips: Dim | None = None
    bufs = iter(scan_bufs)
    for result, used in zip(scan_results, live, strict=True):
        t = memref_of(result.type)
        if not used:  # a placeholder, which dead-buffer elimination removes
            zeros = [b.index(0) for d in t.get_shape() if d < 0]
            results.append(b.insert(kernel.AllocOp(t, zeros)).results[0])
            continue
        buf, row = next(bufs)
        if all(d >= 0 for d in t.get_shape()):
            results.append(_cast(b, buf, t))
            continue
        rows = t.get_shape()[0]
        if rows >= 0:  # the type fixes the number of rows
            results.append(buf if _memref(buf) == t else _view_as(b, buf, t, [rows, *row]))
            continue
        if trips is None:
            trips = b.to_index(final_trip)
        results.append(_view_as(b, buf, t, [trips, *row]))
    return results


def _rank(buf: SSAValue) -> int:
    return len(_memref(buf).get_shape())


def _capacity(b: KernelBuilder, max_trips: int | None, max_value: SSAValue) -> Dim:
    """How many rows the scan buffers need: max_trips, at least 0."""
    if max_trips is None:
        return b.imax(b.to_index(max_value), 0)
    if max_trips > MAX_STATIC_TRIPS:
        raise KernelLoweringError(
            f"a loop with scan outputs and a trip count of {max_trips} (above "
            f"{MAX_STATIC_TRIPS}; a loop ended only by its condition) is not supported: "
            "the scan outputs cannot be allocated before the loop"
        )
    return max(max_trips, 0)


class _Varies(Exception):
    """A run-time row size that cannot be computed before the loop; the message says why."""


_Origin = int | SSAValue | tuple[SSAValue, int]
"""Where a size comes from: a number, an index value, or a dim of a buffer made elsewhere."""


def _dim_origin(buf: SSAValue, i: int) -> _Origin:
    """Dim `i` of a buffer, traced back through views, subviews and allocations."""
    while True:
        shape = _memref(buf).get_shape()
        if shape[i] >= 0:
            return shape[i]
        owner = buf.owner
        if isinstance(owner, kernel.ViewOp | kernel.AllocOp):
            return _value_origin(owner.dynamic_sizes[sum(1 for d in shape[:i] if d < 0)])
        if not isinstance(owner, kernel.SubviewOp):
            return (buf, i)
        buf, i = owner.source, i + len(owner.indices)


def _value_origin(v: SSAValue) -> _Origin:
    """An index value, traced back to the dim it reads if it is a `kernel.dim`."""
    s = static_value(v)
    if s is not None:
        return s
    if isinstance(v.owner, kernel.DimOp):
        return _dim_origin(v.owner.buffer, v.owner.dim.value.data)
    return v


class _RowSizer:
    """Sizes of the scan rows, computed before the loop from what they depend on there.

    A run-time row size is rebuilt before the loop when it depends only on
    values defined outside the loop, index arithmetic and dims of carried
    buffers. A carried dim is read from the initial value: it is known to stay
    the same when the body yields a buffer with that very dim; otherwise the
    body's types must say the carried value keeps its shape, and the rows are
    checked at run time (`needs_check`), so that a shape that changes anyway
    fails the run instead of writing past the stacked buffer.
    """

    def __init__(
        self,
        pre: KernelBuilder,
        loop: scf.WhileOp,
        inits: Sequence[SSAValue],
        carried_out: Sequence[SSAValue],
        body: Block,
        per_iteration: dict[SSAValue, str],
    ) -> None:
        self.pre = pre  # appends to the ops moved before the loop
        self.loop = loop
        self.inits = inits
        self.carried_out = carried_out  # the buffers the body yields for the carried values
        self.after = loop.after_region.block
        self.body = body
        assert body.last_op is not None
        self.yield_types = [v.type for v in body.last_op.operands]
        self.per_iteration = per_iteration  # the buffers holding the trip count and condition
        # Body values recomputed before the loop, each with whether it rests on a checked dim.
        self.hoisted: dict[SSAValue, tuple[SSAValue, bool]] = {}
        self.needs_check = False
        self.written: dict[SSAValue, bool] = {}  # by buffer defined before the loop

    def row(self, result: MemRefType, out: MemRefType, value: SSAValue) -> list[Dim]:
        """The sizes of one row: static where any type says so, else computed before the loop."""
        self.needs_check = False
        shapes = [result.get_shape()[1:], out.get_shape(), _memref(value).get_shape()]
        if len({len(s) for s in shapes}) != 1:
            raise KernelLoweringError(
                f"a scan output of type {out} does not fit the stacked result {result}"
            )
        row: list[Dim] = []
        for i, dims in enumerate(zip(*shapes, strict=True)):
            known = {d for d in dims if d >= 0}
            if len(known) > 1:
                raise KernelLoweringError(
                    f"a scan output of type {out} does not fit the stacked result {result}"
                )
            if known:
                row.append(known.pop())
                continue
            try:
                row.append(self._size(_dim_origin(value, i)))
            except _Varies as why:
                raise KernelLoweringError(
                    f"a scan output of type {out} has a run-time shape that {why}, so its "
                    "stacked buffer cannot be allocated before the loop"
                ) from None
        return row

    def _size(self, origin: _Origin) -> Dim:
        if isinstance(origin, int):
            return origin
        if isinstance(origin, tuple):
            return self._dim(*origin)
        return self._value(origin)

    def _dim(self, buf: SSAValue, i: int) -> Dim:
        if not self.loop.is_ancestor(buf.owner):
            return self.pre.dims(buf)[i]
        carried = list(self.after.args[2:])
        if buf not in carried:
            raise _Varies(f"depends on a buffer made inside the loop (by {_maker(buf)})")
        k = carried.index(buf)
        if _dim_origin(self.carried_out[k], i) != (buf, i):
            before, after = self.body.args[2 + k].type, self.yield_types[1 + k]
            if before != after:
                raise _Varies(
                    f"depends on loop-carried value #{k}, whose shape changes through the "
                    f"loop ({before} -> {after})"
                )
            self.needs_check = True
        return self._size(_dim_origin(self.inits[k], i))

    def _value(self, v: SSAValue) -> Dim:
        if not self.loop.is_ancestor(v.owner):
            return v
        if v in self.hoisted:
            value, checked = self.hoisted[v]
            self.needs_check |= checked
            return value
        if isinstance(v, BlockArgument):
            if v.block is self.after and v.index < 2:
                raise _Varies(f"depends on {('the iteration number', 'the condition')[v.index]}")
            raise _Varies("depends on a loop index inside the loop body")
        owner = v.owner
        assert isinstance(owner, Operation)
        if isinstance(owner, kernel.DimOp):
            return self._size(_dim_origin(owner.buffer, owner.dim.value.data))
        if isinstance(owner, kernel.LoadOp):
            root = _root(owner.buffer)
            if root in self.per_iteration:
                raise _Varies(f"depends on {self.per_iteration[root]}")
            if self._inside(root) or self._written_in_loop(root):
                raise _Varies("is read from a buffer inside the loop")
            # A buffer filled before the loop (a shape computed there) and only read in it.
            outer, self.needs_check = self.needs_check, False
            at = {x: self.pre.index(self._size(_value_origin(x))) for x in owner.indices}
            at[owner.buffer] = self._outer_view(owner.buffer)
            clone = self.pre.insert(owner.clone(value_mapper=at))
            self.hoisted[v] = (clone.results[0], self.needs_check)
            self.needs_check |= outer
            return clone.results[0]
        if not owner.name.startswith("arith.") or owner.regions:
            raise _Varies(f"is computed inside the loop (by '{owner.name}')")
        outer, self.needs_check = self.needs_check, False
        operands = {x: self.pre.index(self._size(_value_origin(x))) for x in owner.operands}
        clone = self.pre.insert(owner.clone(value_mapper=operands))
        for old, new in zip(owner.results, clone.results, strict=True):
            self.hoisted[old] = (new, self.needs_check)
        self.needs_check |= outer
        return self.hoisted[v][0]

    def _inside(self, v: SSAValue) -> bool:
        owner = v.owner
        op = owner if isinstance(owner, Operation) else owner.parent_op()
        return op is not None and self.loop.is_ancestor(op)

    def _written_in_loop(self, root: SSAValue) -> bool:
        """Whether any op of the loop but a read (a load, a dim, a view) uses `root`'s
        storage: then its contents may change from one iteration to the next."""
        if root not in self.written:
            readers = (kernel.LoadOp, kernel.DimOp, kernel.ViewOp, kernel.SubviewOp)
            self.written[root] = any(
                not isinstance(op, readers) and any(_root(x) is root for x in op.operands)
                for op in self.loop.walk()
            )
        return self.written[root]

    def _outer_view(self, buf: SSAValue) -> SSAValue:
        """`buf`, or the view of its storage it reads, rebuilt before the loop."""
        if not self._inside(buf):
            return buf
        owner = buf.owner
        assert isinstance(owner, Operation)
        mapping = {
            x: self._outer_view(x)
            if isinstance(x.type, MemRefType)
            else self.pre.index(self._size(_value_origin(x)))
            for x in owner.operands
        }
        return self.pre.insert(owner.clone(value_mapper=mapping)).results[0]


def _maker(buf: SSAValue) -> str:
    owner = buf.owner
    return f"'{owner.name}'" if isinstance(owner, Operation) else "a block argument"


def _check_row(b: KernelBuilder, v: SSAValue, row: Sequence[Dim], what: str) -> None:
    """Fail the run if this iteration's row is not the size its stacked buffer was made for."""
    ok: SSAValue | None = None
    for d, size in zip(b.dims(v), row, strict=True):
        if static_value(d) is not None and static_value(d) == static_value(size):
            continue
        same = b.icmp("eq", d, size)
        ok = same if ok is None else b.op1(arith.AndIOp, ok, same)
    if ok is not None:
        b.insert(
            cf.AssertOp(
                ok,
                f"{what}: a scan output changed shape between iterations (its stacked "
                "buffer is sized before the loop)",
            )
        )
