"""The `kernel-tile` pass: tile loop nests whose reads jump through memory, for cache reuse.

Tiling splits chosen dims of a nest into a *tile* dim (step `T`) in an outer
nest and a *point* dim (`0 <= p < min(T, N - t)`) in an inner one, the
original index being `t + p`. The inner nest then touches a block of each
buffer small enough to stay in cache while it is reused:

    kernel.loop (%i, %j) in (2048, 2048) [parallel, parallel] {
      %v = kernel.load %x[%j, %i] ...; kernel.store %v, %y[%i, %j] ...
    }
    ==>
    kernel.loop (%ti, %tj) in (2048, 2048) step (32, 32) [parallel, parallel] {
      kernel.loop (%pi, %pj) in (32, 32) [parallel, parallel] {
        %i = arith.addi %ti, %pi : index
        %j = arith.addi %tj, %pj : index
        ...
      }
    }

Bounds divisible by `T` give static point bounds (which vectorize best);
others give `arith.minsi(T, N - t)`. Dims before the first tiled dim stay
whole in the outer nest; the others (tiled or not) run inside, in order.

Which nests are tiled: *transposes*, all-parallel nests whose innermost dim
walks one access with unit stride and reads another by jumps, where the
jumping read walks its last index with another dim `d`. `d` and the
innermost dim are tiled by `TRANSPOSE_TILE` when the nest moves at least
`MIN_TRANSPOSE_ELEMENTS` (2048 x 2048 f32: 2.5x faster on one core).

Matmul-like nests are not tiled here: `kernel-interchange` (which runs
first) makes them accumulate in memory along a unit-stride innermost dim,
and on top of that, tiling the reduction and the inner dims (for sizes
256 to 1024, blocks of 16 to 256) measured no faster, or slower: the
reused operand streams from L2/L3 with hardware prefetch, and the load and
store of the accumulator per step, not memory, bound the loop. Tiling the
outer dims of a nest around a register reduction that reads by jumps did
not pay either. `tile` itself is general (any dims of a nest, ragged
bounds, run-time bounds) for patterns that do.

Only all-parallel nests are tiled, so every order of their iterations is
legal; nests with `iter_args`, steps other than 1, or bodies with ops other
than loads, stores, nests, `scf.if` and scalar ops are left alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Block, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from rung.dialects import kernel
from rung.lowering.generic.walk import rewrite_each

from .analysis import (
    accesses,
    loop_like,
    move_body,
    simple_body,
    static_bound,
    trip_counts,
)

TRANSPOSE_TILE = 32
"""32 x 32 elements: the lines of a source block and a result block fit in L1 together.
Measured best of 16/32/64 for f64, f32 and i8 transposes of 2048 x 2048."""

MIN_TRANSPOSE_ELEMENTS = 1 << 16
"""Below 256 x 256 elements the gain is small; tiny nests are not worth the loop overhead."""


# ---- the transformation ----------------------------------------------------------------------


def _index(block: Block, value: int) -> SSAValue:
    op = arith.ConstantOp(IntegerAttr(value, IndexType()))
    block.add_op(op)
    return op.result


def tile(loop: kernel.LoopOp, tiles: dict[int, int]) -> kernel.LoopOp:
    """`loop` tiled by `tiles` (dim -> tile size): an outer nest holding the point nest.

    Only for nests without iter_args whose tiled dims have step 1, and whose
    iterations may run in any order (all-parallel): tiling reorders them.
    The body moves into the point nest; the caller puts the result in
    `loop`'s place.
    """
    bounds, kinds = loop.bounds(), loop.kinds
    first = min(tiles)
    outer_dims = [d for d in range(loop.rank) if d < first or d in tiles]
    inner_dims = [d for d in range(loop.rank) if d >= first]
    outer = Block(arg_types=[IndexType()] * len(outer_dims))
    outer_iv = dict(zip(outer_dims, outer.args, strict=True))
    inner_bounds: list[int | SSAValue] = []
    for d in inner_dims:
        size, n = tiles.get(d), static_bound(bounds[d])
        if size is None:
            inner_bounds.append(bounds[d])
        elif n is not None and n % size == 0:
            inner_bounds.append(size)
        else:
            bound = bounds[d]
            total = bound if isinstance(bound, SSAValue) else _index(outer, bound)
            left = arith.SubiOp(total, outer_iv[d])
            smaller = arith.MinSIOp(_index(outer, size), left.result)
            outer.add_ops([left, smaller])
            inner_bounds.append(smaller.result)
    inner = Block(arg_types=[IndexType()] * len(inner_dims))
    inner_iv = dict(zip(inner_dims, inner.args, strict=True))
    ivs: list[SSAValue] = []
    for d in range(loop.rank):
        if d in tiles:
            add = arith.AddiOp(outer_iv[d], inner_iv[d])
            inner.add_op(add)
            ivs.append(add.result)
        else:
            ivs.append(outer_iv[d] if d < first else inner_iv[d])
    steps = loop.step_sizes
    move_body(loop, ivs, inner)
    point = kernel.LoopOp(
        inner_bounds, [kinds[d] for d in inner_dims], Region(inner), steps=[1] * len(inner_dims)
    )
    outer.add_ops([point, kernel.YieldOp()])
    return loop_like(
        loop,
        [bounds[d] for d in outer_dims],
        [kinds[d] for d in outer_dims],
        [tiles.get(d, steps[d]) for d in outer_dims],
        outer,
    )


# ---- which nests, which tiles ----------------------------------------------------------------


def _tileable(loop: kernel.LoopOp) -> bool:
    """All-parallel, no iter_args, unit steps, a body the pass understands, not yet tiled."""
    if loop.inits or loop.rank < 2 or any(k != "parallel" for k in loop.kinds):
        return False
    if any(s != 1 for s in loop.step_sizes) or not simple_body(loop):
        return False
    parent = loop.parent_op()
    return not (isinstance(parent, kernel.LoopOp) and any(s != 1 for s in parent.step_sizes))


def _long(trip: int | None, size: int) -> bool:
    """A dim worth tiling by `size`: run-time sized, or at least two tiles long."""
    return trip is None or trip >= 2 * size


def transpose_tiles(loop: kernel.LoopOp) -> dict[int, int] | None:
    """Tiles for a transpose-like nest (see the module doc), or None."""
    if not _tileable(loop):
        return None
    inner = loop.rank - 1
    trips = trip_counts(loop)
    if None not in trips:
        moved = 1
        for t in trips:
            moved *= t  # type: ignore[operator]
        if moved < MIN_TRANSPOSE_ELEMENTS:
            return None
    found = accesses(loop)
    if not any(a.stride_class(inner) == 1 for a in found):
        return None
    for a in found:
        d = a.unit
        if a.is_store or a.stride_class(inner) != -1 or d is None or d == inner:
            continue
        if _long(trips[d], TRANSPOSE_TILE) and _long(trips[inner], TRANSPOSE_TILE):
            return {d: TRANSPOSE_TILE, inner: TRANSPOSE_TILE}
    return None


class TileTranspose(RewritePattern):
    """Tile the two dims of a transpose-like nest, so reads by jumps stay in cache."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: kernel.LoopOp, rewriter: PatternRewriter) -> None:
        tiles = transpose_tiles(op)
        if tiles is not None:
            rewriter.replace(op, tile(op, tiles), [])


@dataclass(frozen=True)
class TilePass(ModulePass):
    """Tile transposes so that reads by jumps stay in cache."""

    name = "kernel-tile"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_each(op, kernel.LoopOp, TileTranspose())


__all__ = ["TilePass", "TileTranspose", "tile", "transpose_tiles"]
