"""The `kernel-parallelize` pass: mark outer parallel loops for OpenMP where the work pays for the threads.

A top-level nest (one not inside another `kernel.loop`) gets the `omp` unit
property, which code generation turns into `#pragma omp parallel for` on its
outermost dim, when:
- its outermost dim is `parallel` and runs more than once (or a run-time
  number of times), and the nest has no `iter_args`;
- its body holds only loads, stores, nests, `scf.if` and scalar ops: no
  allocation, call or microkernel, whose runtime code need not be
  thread-safe (and `kernel.matmul` parallelizes itself);
- its work, iterations times scalar ops of the body (inner nests counted with
  their trip counts), is at least `MIN_WORK`, or is known only at run time.

`MIN_WORK` is 65536 scalar ops. Waking the (spinning) OpenMP team and
joining it costs about 0.5 us here (AMD EPYC, gcc 12, libgomp, 2 threads);
a vectorized elementwise nest over 16K floats, 65K ops by this count (load,
multiply, add, store per element), takes about as long on one thread as on
two, and larger nests gain. Heavier bodies (exp, division) break even
earlier, so the count errs on the serial side only for cheap ones.

A nest whose outermost dim is a `reduction` but that has a `parallel` dim
further in gets that dim moved outermost first, when the nest has the work
for threads: dims marked `parallel` are independent, so they may go anywhere,
and the reduction dims keep their order. A pooling written per window offset,
`(kh, kw, c)` after interchange, becomes `(c, kh, kw)` and shares its channels
among the threads, where it used to run on one. A parallel dim that is the
innermost dim of a nest with no inner nest stays where it is: it is the one
the C compiler vectorizes. Nests with no parallel dim (scans, scatters that
may hit one element twice) stay serial. The number of threads is OpenMP's
business (`OMP_NUM_THREADS`).

Before deciding, dims with a static trip count of 1 are dropped from every
nest (their index is 0), so that a batch dim of 1 does not take the place
of the outermost dim that should be shared out.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp, UnitAttr
from xdsl.ir import Block, Region
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from rung.dialects import kernel
from rung.lowering.generic.walk import rewrite_each

from .analysis import inside_loop, loop_work, simple_body, trip_counts
from .interchange import permute

MIN_WORK = 1 << 16
"""Scalar ops a nest must execute for OpenMP threads to pay off (see the module doc)."""


class DropUnitDims(RewritePattern):
    """Remove dims that run once (a static bound within one step): their index is 0.

    A nest keeps at least one dim.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: kernel.LoopOp, rewriter: PatternRewriter) -> None:
        drop_unit_dims(op, rewriter)


def drop_unit_dims(op: kernel.LoopOp, rewriter: PatternRewriter) -> kernel.LoopOp:
    """`DropUnitDims` on `op`: the nest in its place (`op` itself if nothing changed)."""
    trips = trip_counts(op)
    keep = [d for d in range(op.rank) if trips[d] != 1] or [op.rank - 1]
    if len(keep) == op.rank:
        return op
    block = op.body.block
    new_block = Block(arg_types=[IndexType()] * len(keep) + [a.type for a in op.iter_args])
    kept = iter(new_block.args[: len(keep)])
    for d, arg in enumerate(op.ivs):
        if d in keep:
            arg.replace_all_uses_with(next(kept))
        elif arg.uses:
            zero = arith.ConstantOp(IntegerAttr(0, IndexType()))
            rewriter.insert(zero, InsertPoint.before(op))
            arg.replace_all_uses_with(zero.result)
    for old, new in zip(op.iter_args, new_block.args[len(keep) :], strict=True):
        old.replace_all_uses_with(new)
    for inner in list(block.ops):
        inner.detach()
        new_block.add_op(inner)
    bounds, kinds, steps = op.bounds(), op.kinds, op.step_sizes
    new = kernel.LoopOp(
        [bounds[d] for d in keep],
        [kinds[d] for d in keep],
        Region(new_block),
        inits=list(op.inits),
        steps=[steps[d] for d in keep],
    )
    if op.omp is not None and new.kinds[0] == "parallel":
        new.properties["omp"] = op.omp
    new.attributes.update(op.attributes)
    rewriter.replace(op, new, new.results)
    return new


def parallel_dim_to_hoist(loop: kernel.LoopOp) -> int | None:
    """The parallel dim to move outermost in a nest whose outermost dim is a reduction, if it
    has one that is not its vectorized innermost dim and the nest has the work for threads."""
    if loop.inits or loop.kinds[0] == "parallel" or inside_loop(loop) or not simple_body(loop):
        return None
    trips = trip_counts(loop)
    nested = any(isinstance(op, kernel.LoopOp) for op in loop.body.block.ops)
    for d, kind in enumerate(loop.kinds):
        if kind != "parallel" or trips[d] == 1 or (d == loop.rank - 1 and not nested):
            continue
        work = loop_work(loop)
        return d if work is None or work >= MIN_WORK else None
    return None


class HoistParallelDim(RewritePattern):
    """Move a parallel dim outermost in a nest that starts with reduction dims (see the
    module doc), so that the nest can run on threads."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: kernel.LoopOp, rewriter: PatternRewriter) -> None:
        hoist_parallel_dim(op, rewriter)


def hoist_parallel_dim(op: kernel.LoopOp, rewriter: PatternRewriter) -> kernel.LoopOp:
    """`HoistParallelDim` on `op`: the nest in its place (`op` itself if nothing changed)."""
    d = parallel_dim_to_hoist(op)
    if d is None:
        return op
    order = [d, *(i for i in range(op.rank) if i != d)]
    new = permute(op, order)
    rewriter.replace(op, new, new.results)
    return new


def worth_threads(loop: kernel.LoopOp) -> bool:
    """Whether `loop` should run its outermost dim on OpenMP threads (see the module doc)."""
    if loop.omp is not None or loop.inits or loop.kinds[0] != "parallel":
        return False
    if trip_counts(loop)[0] == 1 or inside_loop(loop) or not simple_body(loop):
        return False
    work = loop_work(loop)
    return work is None or work >= MIN_WORK


class MarkParallelLoop(RewritePattern):
    """Set `omp` on a top-level nest whose outermost dim is parallel and has enough work."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: kernel.LoopOp, rewriter: PatternRewriter) -> None:
        if worth_threads(op):
            op.properties["omp"] = UnitAttr()
            rewriter.notify_op_modified(op)


@dataclass(frozen=True)
class ParallelizePass(ModulePass):
    """Mark outer parallel loops for OpenMP where the work pays for the threads."""

    name = "kernel-parallelize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_each(op, kernel.LoopOp, ParallelizeNest())


class ParallelizeNest(RewritePattern):
    """`DropUnitDims`, then `HoistParallelDim` and `MarkParallelLoop`, on one nest: the
    last two look only at top-level nests, which come before the nests they hold, and
    whose work and shape do not change when an inner nest drops a dim that runs once;
    so one sweep gives what a sweep of each pattern in turn gave."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: kernel.LoopOp, rewriter: PatternRewriter) -> None:
        nest = hoist_parallel_dim(drop_unit_dims(op, rewriter), rewriter)
        MarkParallelLoop().match_and_rewrite(nest, rewriter)


__all__ = [
    "MIN_WORK",
    "DropUnitDims",
    "HoistParallelDim",
    "MarkParallelLoop",
    "ParallelizeNest",
    "ParallelizePass",
    "parallel_dim_to_hoist",
    "worth_threads",
]
