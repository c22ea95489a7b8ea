"""The `kernel-fuse-matmul-epilogue` pass: move the elementwise nest after a matmul into its epilogue.

A conv lowered to a GEMM is followed by its bias, BatchNorm and activation,
a Linear layer by its bias, a ResNet block's last conv by the residual add
and ReLU: after `kernel-fuse-elementwise`, one nest that reads the whole
product back from memory and writes another buffer. When that nest is a
chain of binary float ops from the product to a store, each with one operand
loaded per row, per column, per element or once, the chain becomes the
matmul's `epilogue` (see `kernel.MatmulOp`), which the microkernel applies to
each tile of the product in registers, before the tile's one store, in place
(one thread, against the separate nest: ResNet-50 4% faster, MobileNetV3-Large
5%, the small CNN and a transformer block unchanged). A `kernel.call` of a conv
routine that takes an epilogue (`kernel.CallOp.EPILOGUE_OUT`: the conv by
shifted rows, by row blocks, the depthwise conv) takes it the same way, its
output `[1, O, spatial…]` seen as the product `[1, O, points]`:

    kernel.matmul %w, %x, %c : ...                    kernel.matmul %w, %x, %c
    kernel.loop (%i, %j) in (64, 784) [parallel] {        epilogue ["mul:row" %s, "max:scalar" %z]
      %v = kernel.load %c[%zero, %i, %j]          ==>       : ...
      %a = kernel.load %s[%i]                         (uses of %y now use %c's buffer)
      %m = arith.mulf %v, %a : f32
      %b = kernel.load %z[]
      %r = arith.maximumf %m, %b : f32
      kernel.store %r, %y[%zero, %i, %j]
    }

The chain may end in an activation, the product's `activation`, which the
runtime applies to each stored tile while it is in L1: SiLU (`x * (1 / (1 +
exp(-x)))`, a Sigmoid then a Mul by its input), GELU (`x * (erf(x / sqrt(2)) +
1) * 0.5`, as torch exports it) or HardSwish (`x * max(min(x / 6 + 0.5, 1),
0)`), each recognized as the exact ops and constants it lowers to, so that the
fused activation rounds as the nest did. One thread: EfficientNet-B0 5% faster
(its SiLU passes after each conv read and wrote the whole map again),
MobileNetV3-Large 1%; GELU after a transformer's MLP product measured the same
(the product's time dominates).

What it takes (else the nest stays):
- the matmul (or call) has a batch of 1, static sizes, no epilogue yet, and
  writes a buffer of its block that nothing but the nest reads (through views);
- the nest is all-parallel with static bounds, holds only the loads, the
  chain's ops (`addf`, `mulf`, `subf`, `divf`, `maximumf`, `minimumf`, the
  product on either side) and one store, and visits the product's elements in
  order: its loads of the product and its store index both buffers (unit dims
  aside) by its ivs, over bounds that are those buffers' dims and
  hold M x N elements; a row (column) operand is indexed by the ivs whose
  bounds multiply to M (N), a full one by all of them, a scalar by zeros;
- the nest's buffer is allocated in the block with the product buffer's type,
  so the product's buffer takes its place;
- nothing between the two touches the product or the nest's buffer, or writes
  an operand, and each operand exists before the matmul.

The steps round as the nest did, one op at a time, except that gcc may have
contracted a multiply and an add of the nest into one fused multiply-add.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, MemRefType, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint

from rung.dialects import kernel
from rung.dialects.constants import constant_value
from rung.dialects.resources import owning_module
from rung.lowering.generic.walk import rewrite_each

from .analysis import ancestor_in, ops_between, reads, root, writes

STEP_OPS: dict[type[Operation], tuple[str, str]] = {
    arith.AddfOp: ("add", "add"),
    arith.MulfOp: ("mul", "mul"),
    arith.SubfOp: ("sub", "rsub"),
    arith.DivfOp: ("div", "rdiv"),
    arith.MaximumfOp: ("max", "rmax"),
    arith.MinimumfOp: ("min", "rmin"),
}
"""Each op the chain may hold: its step with the product on the left, and on the right."""


@dataclass(frozen=True)
class Plan:
    """A matmul and the nest whose chain becomes its epilogue."""

    matmul: kernel.MatmulOp | kernel.CallOp
    nest: kernel.LoopOp
    steps: list[tuple[str, SSAValue]]
    activation: str | None
    product: kernel.AllocOp
    target: kernel.AllocOp
    hoisted: list[Operation]
    """Ops between the two that define operands, to move above the matmul, in order."""


def _zero(v: SSAValue) -> bool:
    owner = v.owner
    return (
        isinstance(owner, arith.ConstantOp)
        and isinstance(owner.value, IntegerAttr)
        and owner.value.value.data == 0
    )


def _shape(v: SSAValue) -> list[int]:
    t = v.type
    assert isinstance(t, MemRefType)
    return list(t.get_shape())


def _indexed_by(
    buffer: SSAValue, indices: Sequence[SSAValue], ivs: Sequence[SSAValue], bounds: Sequence[int]
) -> bool:
    """Whether `buffer[indices]` visits the buffer's elements in order as the ivs (of those
    bounds) count: unit dims aside (a zero, or an iv of bound 1, indexes them), the
    buffer's dims are the bounds and its indices the ivs."""
    unit = {iv for iv, b in zip(ivs, bounds, strict=True) if b == 1}
    shape = _shape(buffer)
    if len(shape) != len(indices):
        return False
    kept = [(d, i) for d, i in zip(shape, indices, strict=True) if not _unit_index(d, i, unit)]
    wanted = [(b, iv) for iv, b in zip(ivs, bounds, strict=True) if b != 1]
    return kept == wanted


def _unit_index(dim: int, index: SSAValue, unit: set[SSAValue]) -> bool:
    return dim == 1 and (index in unit or _zero(index))


def _index_kind(
    load: kernel.LoadOp, ivs: Sequence[SSAValue], bounds: Sequence[int], split: int | None
) -> str | None:
    """How an operand load reads its buffer in terms of the product's (row, column)."""
    indices = list(load.indices)
    shape = _shape(load.buffer)
    if any(d < 0 for d in shape):
        return None
    unit = {iv for iv, b in zip(ivs, bounds, strict=True) if b == 1}
    if all(_unit_index(d, i, unit) for d, i in zip(shape, indices, strict=True)):
        return "scalar"
    if _indexed_by(load.buffer, indices, ivs, bounds):
        return "full"
    if split is not None:
        if _indexed_by(load.buffer, indices, ivs[:split], bounds[:split]):
            return "row"
        if _indexed_by(load.buffer, indices, ivs[split:], bounds[split:]):
            return "col"
    return None


def _aliases(buffer: SSAValue) -> list[SSAValue]:
    """`buffer` and every view of it, transitively."""
    found, pending = [], [buffer]
    while pending:
        v = pending.pop()
        found.append(v)
        for use in v.uses:
            if isinstance(use.operation, kernel.ViewOp):
                pending.append(use.operation.results[0])
    return found


def _available_before(v: SSAValue, op: Operation) -> bool:
    """Whether `v` is defined before `op` (in its block or an enclosing one), or is one of
    the module's constants, which any function may use."""
    owner = v.owner
    if isinstance(owner, Operation) and isinstance(owner.parent_op(), ModuleOp):
        return True
    holder = op
    while holder is not None:
        block = holder.parent
        if block is None:
            return False
        if isinstance(owner, Block):
            if owner is block:
                return True
        elif owner.parent is block:
            return owner is not holder and owner.is_before_in_block(holder)
        holder = block.parent_op()
    return False


SQRT2 = float(np.float32(math.sqrt(2.0)))
SIXTH = float(np.float32(1.0 / 6.0))
"""The float32 constants of GELU (x / sqrt(2)) and HardSwish (x / 6 as x * 1/6)."""


def _scalar(v: SSAValue, block: Block, used: list[Operation]) -> float | None:
    """The value of a float constant: an `arith.constant`, or a load in `block`, used once,
    of a one-element `kernel.constant` (the load is added to `used`)."""
    owner = v.owner
    if isinstance(owner, arith.ConstantOp):
        return owner.value.value.data if isinstance(owner.value, FloatAttr) else None
    if not isinstance(owner, kernel.LoadOp) or owner.parent is not block or len(list(v.uses)) != 1:
        return None
    source = root(owner.buffer).owner
    if not isinstance(source, kernel.ConstantOp):
        return None
    array = constant_value(source.value, owning_module(source))
    if array is None or array.size != 1 or array.dtype != np.float32:
        return None
    used.append(owner)
    return float(array.reshape(-1)[0])


def _sole_user(v: SSAValue, block: Block) -> Operation | None:
    uses = list(v.uses)
    if len(uses) != 1 or uses[0].operation.parent is not block:
        return None
    return uses[0].operation


def _other(op: Operation, v: SSAValue) -> SSAValue | None:
    """A binary op's operand that is not `v` (None if both are)."""
    lhs, rhs = op.operands
    return rhs if lhs is v and rhs is not v else lhs if rhs is v and lhs is not v else None


def _users(x: SSAValue, block: Block) -> list[Operation] | None:
    users = [use.operation for use in x.uses]
    return users if len(users) == 2 and all(u.parent is block for u in users) else None


Match = tuple[SSAValue, list[Operation]]
"""An activation's value, and the ops of the nest it replaces (constants aside)."""


def _silu(x: SSAValue, block: Block) -> Match | None:
    """`x * (1 / (1 + exp(-x)))`: a Sigmoid then a Mul by x (either operand order of the
    add and the multiply)."""
    users = _users(x, block)
    if users is None:
        return None
    neg = next((u for u in users if isinstance(u, arith.NegfOp)), None)
    mul = next((u for u in users if isinstance(u, arith.MulfOp)), None)
    if neg is None or mul is None:
        return None
    used: list[Operation] = []
    exp = _sole_user(neg.result, block)
    if not isinstance(exp, mathd.ExpOp):
        return None
    add = _sole_user(exp.result, block)
    if (
        not isinstance(add, arith.AddfOp)
        or _scalar(_other(add, exp.result) or x, block, used) != 1.0
    ):
        return None
    div = _sole_user(add.result, block)
    if (
        not isinstance(div, arith.DivfOp)
        or div.rhs is not add.result
        or _scalar(div.lhs, block, used) != 1.0
    ):
        return None
    if _sole_user(div.result, block) is not mul or _other(mul, x) is not div.result:
        return None
    return mul.result, [neg, exp, add, div, mul, *used]


def _gelu(x: SSAValue, block: Block) -> Match | None:
    """`x * (erf(x / sqrt(2)) + 1) * 0.5`, as torch's GELU exports (Div, Erf, Add, Mul,
    Mul), in that order."""
    users = _users(x, block)
    if users is None:
        return None
    div = next((u for u in users if isinstance(u, arith.DivfOp) and u.lhs is x), None)
    mul = next((u for u in users if isinstance(u, arith.MulfOp)), None)
    if div is None or mul is None:
        return None
    used: list[Operation] = []
    if _scalar(div.rhs, block, used) != SQRT2:
        return None
    erf = _sole_user(div.result, block)
    if not isinstance(erf, mathd.ErfOp):
        return None
    add = _sole_user(erf.result, block)
    if (
        not isinstance(add, arith.AddfOp)
        or _scalar(_other(add, erf.result) or x, block, used) != 1.0
    ):
        return None
    if _sole_user(add.result, block) is not mul or _other(mul, x) is not add.result:
        return None
    half = _sole_user(mul.result, block)
    if (
        not isinstance(half, arith.MulfOp)
        or _scalar(_other(half, mul.result) or x, block, used) != 0.5
    ):
        return None
    return half.result, [div, erf, add, mul, half, *used]


def _hardswish(x: SSAValue, block: Block) -> Match | None:
    """`x * max(min(x * (1/6) + 0.5, 1), 0)`, as HardSwish lowers (NaN-propagating min and
    max, in that order)."""
    users = _users(x, block)
    if users is None or not all(isinstance(u, arith.MulfOp) for u in users):
        return None
    used: list[Operation] = []
    scale = next((u for u in users if _scalar(_other(u, x) or x, block, used) == SIXTH), None)
    if scale is None:
        return None
    (outer,) = [u for u in users if u is not scale]
    add = _sole_user(scale.result, block)
    if (
        not isinstance(add, arith.AddfOp)
        or _scalar(_other(add, scale.result) or x, block, used) != 0.5
    ):
        return None
    low = _sole_user(add.result, block)
    if not isinstance(low, arith.MinimumfOp) or low.lhs is not add.result:
        return None
    if _scalar(low.rhs, block, used) != 1.0:
        return None
    high = _sole_user(low.result, block)
    if not isinstance(high, arith.MaximumfOp) or high.lhs is not low.result:
        return None
    if _scalar(high.rhs, block, used) != 0.0:
        return None
    if _sole_user(high.result, block) is not outer or _other(outer, x) is not high.result:
        return None
    return outer.result, [scale, add, low, high, outer, *used]


ACTIVATIONS: dict[str, Callable[[SSAValue, Block], Match | None]] = {
    "silu": _silu,
    "gelu": _gelu,
    "hardswish": _hardswish,
}
"""The activations `_chain` recognizes at its end, by `kernel.MatmulOp.ACTIVATIONS` name."""


def _chain(
    nest: kernel.LoopOp, start: SSAValue, bounds: list[int], split: int | None
) -> tuple[list[tuple[str, SSAValue]], tuple[str | None, list[Operation]], kernel.StoreOp] | None:
    """The steps from the product's value `start` to the nest's store, and the activation
    that ends them, if any, with the ops it replaces; or None."""
    steps: list[tuple[str, SSAValue]] = []
    value = start
    ivs = list(nest.ivs)
    activation: str | None = None
    replaced: list[Operation] = []
    while True:
        for name, match in ACTIVATIONS.items() if activation is None else ():
            if (found := match(value, nest.body.block)) is not None:
                (value, replaced), activation = found, name
                break
        uses = list(value.uses)
        if len(uses) != 1:
            return None
        user = uses[0].operation
        if isinstance(user, kernel.StoreOp):
            if user.value is not value or not _indexed_by(user.buffer, user.indices, ivs, bounds):
                return None
            return steps, (activation, replaced), user
        if activation is not None:
            return None  # the activation comes last
        names = STEP_OPS.get(type(user))
        if names is None or user.parent is not nest.body.block:
            return None
        lhs, rhs = user.operands
        other = rhs if lhs is value else lhs
        if other is value:
            return None
        load = other.owner
        if not isinstance(load, kernel.LoadOp) or load.parent is not nest.body.block:
            return None
        if len(list(other.uses)) != 1:
            return None
        kind = _index_kind(load, ivs, bounds, split)
        if kind is None:
            return None
        steps.append((f"{names[0] if lhs is value else names[1]}:{kind}", load.buffer))
        value = user.results[0]


def _split(bounds: Sequence[int], m: int) -> int | None:
    """The number of leading dims whose bounds multiply to m (the rows), if there is one."""
    size = 1
    for i, b in enumerate(bounds):
        if size == m:
            return i
        size *= b
    return len(bounds) if size == m else None


Producer = kernel.MatmulOp | kernel.CallOp
"""An op that takes an epilogue: a matmul, or a call of a conv routine of
`kernel.CallOp.EPILOGUE_OUT`."""


def _product(op: Producer) -> tuple[int, int, int] | None:
    """The product's output operand index, M and N, when `op` may take an epilogue (batch 1,
    static sizes, none yet)."""
    if op.epilogue is not None or op.activation is not None:
        return None
    if isinstance(op, kernel.MatmulOp):
        index, out = 2, _shape(op.out)
        if len(out) != 3:
            return None
    else:
        found = kernel.CallOp.EPILOGUE_OUT.get(op.callee.data)
        if found is None or found >= len(op.data_buffers):
            return None
        index, out = found, _shape(op.data_buffers[found])
        if len(out) < 2:
            return None
    if out[0] != 1 or any(d < 0 for d in out):
        return None
    return index, out[1], math.prod(out[2:])


def plan(mm: Producer) -> Plan | None:
    """What to fuse into `mm`, or None (see the module doc)."""
    found = _product(mm)
    if found is None:
        return None
    out_index, m, n = found
    block = mm.parent
    product = root(mm.operands[out_index])
    alloc = product.owner
    if block is None or not isinstance(alloc, kernel.AllocOp) or alloc.parent is not block:
        return None
    loads: list[kernel.LoadOp] = []
    for v in _aliases(product):
        for use in v.uses:
            user = use.operation
            if isinstance(user, kernel.ViewOp | kernel.DimOp):
                continue
            if user is mm and use.index == out_index:
                continue
            if not isinstance(user, kernel.LoadOp):
                return None
            loads.append(user)
    if len(loads) != 1:
        return None
    (load,) = loads
    nest = ancestor_in(load, block)
    if not isinstance(nest, kernel.LoopOp) or not mm.is_before_in_block(nest):
        return None
    if nest.inits or any(k != "parallel" for k in nest.kinds) or load.parent is not nest.body.block:
        return None
    if any(s != 1 for s in nest.step_sizes):
        return None
    bounds = [b for b in nest.bounds() if isinstance(b, int)]
    if len(bounds) != len(nest.ivs) or math.prod(bounds) != m * n:
        return None
    if not _indexed_by(load.buffer, load.indices, list(nest.ivs), bounds):
        return None
    found = _chain(nest, load.result, bounds, _split(bounds, m))
    if found is None:
        return None
    steps, (activation, replaced), store = found
    if not (steps or activation) or len(steps) > kernel.MatmulOp.EPILOGUE_STEPS:
        return None
    # The nest holds only the product's load, the operands' loads, the steps, the
    # activation's ops and the store (and constants).
    body = [
        op for op in nest.body.block.ops if not isinstance(op, kernel.YieldOp | arith.ConstantOp)
    ]
    if len(body) != 2 + 2 * len(steps) + len(replaced) or store is not body[-1]:
        return None
    target = root(store.buffer)
    talloc = target.owner
    if (
        not isinstance(talloc, kernel.AllocOp)
        or talloc.parent is not block
        or talloc is alloc
        or target.type != product.type
    ):
        return None
    operands = [v for _, v in steps]
    hoisted: list[Operation] = []
    if not all(_hoistable(v, mm, nest, hoisted) for v in operands):
        return None
    if not _legal(mm, nest, product, target, {root(v) for v in operands}, alloc):
        return None
    return Plan(mm, nest, steps, activation, alloc, talloc, hoisted)


HOISTABLE = (kernel.ConstantOp, kernel.ViewOp)
"""Ops that may move above the matmul to define an operand there: they only name storage."""


def _hoistable(v: SSAValue, mm: Operation, nest: Operation, moves: list[Operation]) -> bool:
    """Whether `v` exists before `mm`, or is made between `mm` and `nest` by ops that can
    move above `mm` (added to `moves`, operands first)."""
    if _available_before(v, mm):
        return True
    owner = v.owner
    if (
        not isinstance(owner, HOISTABLE)
        or owner.parent is not mm.parent
        or not mm.is_before_in_block(owner)
        or not owner.is_before_in_block(nest)
    ):
        return False
    if owner in moves:
        return True
    if not all(_hoistable(w, mm, nest, moves) for w in owner.operands):
        return False
    moves.append(owner)
    return True


def _legal(
    mm: Producer,
    nest: kernel.LoopOp,
    product: SSAValue,
    target: SSAValue,
    operands: set[SSAValue],
    alloc: kernel.AllocOp,
) -> bool:
    """Nothing between the matmul and the nest touches the product or the nest's buffer, or
    writes an operand; the operands are not those buffers; every use of the nest's buffer
    comes after the product's allocation (which takes its place)."""
    if operands & {product, target}:
        return False
    mine = {product, target}
    for op in list(ops_between(mm, nest))[:-1]:
        written, seen = writes(op), reads(op)
        if written is None or seen is None or written & (mine | operands) or seen & mine:
            return False
    block = alloc.parent
    assert block is not None
    for v in _aliases(target):
        for use in v.uses:
            holder = ancestor_in(use.operation, block)
            if holder is None or not alloc.is_before_in_block(holder):
                return False
    return True


class FuseMatmulEpilogue(RewritePattern):
    """Make the elementwise nest after a matmul its epilogue (see the module doc)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, Producer):
            return
        p = plan(op)
        if p is None:
            return
        fused: Operation
        if isinstance(op, kernel.MatmulOp):
            fused = kernel.MatmulOp(
                op.lhs,
                op.rhs,
                op.out,
                accumulate=op.accumulate is not None,
                transpose_rhs=op.transpose_rhs is not None,
                epilogue=p.steps,
                activation=p.activation,
            )
        else:
            fused = kernel.CallOp(
                op.callee.data,
                op.data_buffers,
                kernel.ints_of(op.args),
                epilogue=p.steps,
                activation=p.activation,
            )
        fused.attributes.update(op.attributes)
        for moved in p.hoisted:
            moved.detach()
            rewriter.insert(moved, InsertPoint.before(op))
        rewriter.replace_op(op, fused)
        views = [v.owner for v in (*_aliases(p.product.result)[1:], *_aliases(p.target.result)[1:])]
        rewriter.erase(p.nest)
        p.target.result.replace_all_uses_with(p.product.result)
        rewriter.erase(p.target)
        for view in reversed(views):  # the views the nest used, now unused
            if isinstance(view, kernel.ViewOp) and not view.results[0].uses:
                rewriter.erase(view)


@dataclass(frozen=True)
class FuseMatmulEpiloguePass(ModulePass):
    """Move the elementwise nest after each matmul into the matmul's epilogue."""

    name = "kernel-fuse-matmul-epilogue"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_each(op, (kernel.MatmulOp, kernel.CallOp), FuseMatmulEpilogue())


__all__ = ["STEP_OPS", "FuseMatmulEpilogue", "FuseMatmulEpiloguePass", "Plan", "plan"]
