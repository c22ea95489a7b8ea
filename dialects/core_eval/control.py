"""`core.if` and `core.loop`: ops whose regions run in the scope of the op.

A region's block reads values defined outside it, so it runs in a copy of
the enclosing environment extended with its own arguments (`Scope.run_region`).
"""

from __future__ import annotations

import numpy as np

from rung.dialects import core

from .interpreter import Args, Scope, Value, evaluates, result_dtype


@evaluates(core.IfOp)
def if_(ev: Scope, op: core.IfOp, args: Args) -> list[Value]:
    region = op.then_region if bool(np.asarray(args[0])) else op.else_region
    return ev.run_region(region.block)


@evaluates(core.LoopOp)
def loop(ev: Scope, op: core.LoopOp, args: Args) -> list[Value]:
    """ONNX's Loop: runs while the trip count is under `max_trips` (if given) and the
    condition (if given) holds. The body gets (trip, condition, carried…) and yields
    (condition, carried…, scanned…); each scanned value is stacked over the trips, and is
    empty when there were none."""
    max_trips, cond, *carried = args
    n_carried = len(carried)
    scans: list[list[Value]] = []
    trip = 0
    limit = None if max_trips is None else int(np.asarray(max_trips))
    keep_going = True if cond is None else bool(np.asarray(cond))
    block = op.body.block
    while keep_going and (limit is None or trip < limit):
        body_args = [np.array(trip, dtype=np.int64), np.array(keep_going), *carried]
        outs = ev.run_region(block, body_args)
        keep_going = bool(np.asarray(outs[0]))
        carried = outs[1 : 1 + n_carried]
        per_iter = outs[1 + n_carried :]
        if not scans:
            scans = [[] for _ in per_iter]
        for acc, v in zip(scans, per_iter, strict=True):
            acc.append(v)
        trip += 1
    stacked: list[Value] = []
    for i, result in enumerate(op.results[n_carried:]):
        if scans and scans[i]:
            stacked.append(np.stack(scans[i]))
        else:
            shape = [0 if d < 0 else d for d in result.type.get_shape()]  # type: ignore[attr-defined]
            stacked.append(np.zeros(shape, dtype=result_dtype(result)))
    return [*carried, *stacked]


__all__: list[str] = []
