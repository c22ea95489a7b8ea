"""Which loop nests gcc must be told how to vectorize: small reduction windows, and
reductions along a row.

A depthwise conv or a pool sums its window (3x3 to 7x7 taps) per output point in
a carried value, inside the loop over the output row. gcc vectorizes only
innermost loops, and unrolls a constant nest completely before its vectorizer
only when asked (`#pragma GCC unroll`), so the emitter asks.

A sum, max or min folded along an innermost loop keeps C's order of steps unless
the loop says it is a reduction (`#pragma omp simd reduction`); `simd_reductions`
says which loops are, and with which identifier.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import Float32Type, Float64Type
from xdsl.ir import Operation, SSAValue

from rung.dialects import kernel

UNROLL_LIMIT = 64
"""Most iterations of a small reduction nest unrolled whole (a 7x7 window has 49)."""


def unrolled_window(op: kernel.LoopOp) -> bool:
    """A small, static reduction nest inside a loop that walks a row it reads: unrolled in full,
    so that the row loop vectorizes."""
    if not op.inits or not isinstance(op.parent_op(), kernel.LoopOp):
        return False
    bounds = op.bounds()
    if not all(isinstance(b, int) for b in bounds):
        return False
    trips = 1
    for b in bounds:
        assert isinstance(b, int)
        trips *= b
    if trips > UNROLL_LIMIT:
        return False
    inner_ops = [inner for inner in op.body.walk() if inner is not op]
    if any(isinstance(inner, kernel.LoopOp) for inner in inner_ops):
        return False
    parent = op.parent_op()
    assert isinstance(parent, kernel.LoopOp)
    row = parent.ivs[-1]
    return any(
        isinstance(inner, kernel.LoadOp) and inner.indices and _depends_on(inner.indices[-1], row)
        for inner in inner_ops
    )


SIMD_REDUCTIONS: dict[type[Operation], str] = {
    arith.AddfOp: "+",
    arith.MaximumfOp: "rung_max",
    arith.MinimumfOp: "rung_min",
}
"""The `#pragma omp simd reduction` identifier of each op a carried value may be folded
with: `rung_max` and `rung_min` are the NaN-propagating max and min that `maximumf` and
`minimumf` are, declared in `rung_runtime.h` (OpenMP's own `max` lets a NaN go)."""


def simd_reductions(op: kernel.LoopOp) -> list[str] | None:
    """The reduction identifier of each carried value of a float reduction along an
    innermost loop, or None when the loop is not one: each carried value is only
    `acc + x` (a global average pool, ReduceMean/Sum, the means and variances of a
    normalization, Softmax's denominator) or `maximumf`/`minimumf(acc, x)` (a global
    max pool, ReduceMax, Softmax's row max), and nothing else reads it.

    C fixes the order of the steps, so gcc folds one element after another and the
    loop runs at the latency of an add or a compare and blend (Softmax's row max took
    four times its exponentials in ViT-B/16); `#pragma omp simd reduction` lets it keep a
    vector of partial results instead. A max or min is the same in any order; a sum is
    then in another, equally valid order. Only the final value may be read: a partial
    sum stored in the loop (a CumSum) would come out wrong.
    """
    if not op.inits or op.omp is not None or unrolled_window(op):
        return None
    if any(inner.regions for inner in op.body.block.ops):
        return None
    term = op.body.block.last_op
    assert isinstance(term, kernel.YieldOp)
    kinds = []
    for arg, value in zip(op.iter_args, term.values, strict=True):
        step = value.owner
        kind = SIMD_REDUCTIONS.get(type(step)) if isinstance(step, Operation) else None
        if kind is None or arg not in step.operands:
            return None
        if not isinstance(arg.type, Float32Type | Float64Type) or arg.uses.get_length() != 1:
            return None
        if step.operands[0] is step.operands[1] or step.results[0].uses.get_length() != 1:
            return None  # a running value that is also stored (a CumSum) is not a reduction
        kinds.append(kind)
    return kinds


def _depends_on(value: SSAValue, iv: SSAValue, budget: int = 16) -> bool:
    """Whether an index is computed from `iv` (through a few arith ops): loads along the row."""
    if value is iv:
        return True
    owner = value.owner
    if budget == 0 or not isinstance(owner, Operation) or isinstance(owner, kernel.LoopOp):
        return False
    return any(_depends_on(v, iv, budget - 1) for v in owner.operands)
