"""Which loop nests gcc must see as one vectorizable row: small reduction windows.

A depthwise conv or a pool sums its window (3x3 to 7x7 taps) per output point in
a carried value, inside the loop over the output row. gcc vectorizes only
innermost loops, and unrolls a constant nest completely before its vectorizer
only when asked (`#pragma GCC unroll`), so the emitter asks.
"""

from __future__ import annotations

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


def _depends_on(value: SSAValue, iv: SSAValue, budget: int = 16) -> bool:
    """Whether an index is computed from `iv` (through a few arith ops): loads along the row."""
    if value is iv:
        return True
    owner = value.owner
    if budget == 0 or not isinstance(owner, Operation) or isinstance(owner, kernel.LoopOp):
        return False
    return any(_depends_on(v, iv, budget - 1) for v in owner.operands)
