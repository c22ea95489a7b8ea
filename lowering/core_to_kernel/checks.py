"""core → kernel: `core.check` becomes a `cf.assert`, which the C code turns into a failed run.

The checked value keeps its buffer (no copy). The condition is loaded (it
usually has one element) or reduced with `and` over its elements, and the
message names the node, so the error the caller sees says which op got a bad
run-time value. A check with a culprit becomes a `kernel.check` instead,
whose reduction also keeps the culprit's first failing element, so the error
quotes the bad value itself.
"""

from __future__ import annotations

from xdsl.dialects import cf
from xdsl.dialects.builtin import NameLoc
from xdsl.ir import Operation, SSAValue

from rung.dialects import core, kernel
from rung.dialects.dtypes import f64, i1, i64

from .builder import KernelBuilder, is_float
from .registry import lowers


def _node(op: Operation) -> str:
    loc = op.location
    return f"node '{loc.desc.data}'" if isinstance(loc, NameLoc) else "an unnamed node"


@lowers(core.CheckOp)
def check(b: KernelBuilder, op: core.CheckOp) -> list[SSAValue]:
    cond = b.buffer(op.cond)
    dims = b.dims(cond)
    message = f"{_node(op)}: {op.message.data}"
    if op.culprit is not None:
        _check_quoting(b, cond, b.buffer(op.culprit), message)
        return [b.buffer(op.input)]
    if all(d == 1 for d in dims):
        holds = b.load(cond, [0] * len(dims))
    else:

        def step(b: KernelBuilder, ivs: list[SSAValue], acc: list[SSAValue]) -> list[SSAValue]:
            return [b.binary("and", acc[0], b.load(cond, ivs))]

        (holds,) = b.reduce_loop(dims, [b.const(True, i1)], step)
    b.insert(cf.AssertOp(holds, message))
    return [b.buffer(op.input)]


def _check_quoting(b: KernelBuilder, cond: SSAValue, culprit: SSAValue, message: str) -> None:
    """`kernel.check` of `cond`'s conjunction, quoting the culprit where it first fails.

    The culprit is as an `i64` or `f64` (the C code's two formats); one of a
    single element is quoted for every failing element.
    """
    dims = b.dims(cond)
    to = f64 if is_float(culprit.type.element_type) else i64  # type: ignore[attr-defined]
    shape = culprit.type.get_shape()  # type: ignore[attr-defined]
    single = all(d == 1 for d in shape)

    def got_at(b: KernelBuilder, ivs: list[SSAValue] | list[int]) -> SSAValue:
        where = [0] * len(shape) if single else ivs
        return b.cast(b.load(culprit, where), to)

    if all(d == 1 for d in dims):
        holds, got = b.load(cond, [0] * len(dims)), got_at(b, [0] * len(dims))
    else:

        def step(b: KernelBuilder, ivs: list[SSAValue], acc: list[SSAValue]) -> list[SSAValue]:
            ok = b.load(cond, ivs)
            first = b.binary("and", acc[0], b.compare("eq", ok, b.const(False, i1)))
            return [b.binary("and", acc[0], ok), b.select(first, got_at(b, ivs), acc[1])]

        holds, got = b.reduce_loop(dims, [b.const(True, i1), b.const(0, to)], step)
    b.insert(kernel.CheckOp(holds, got, message))


__all__ = ["check"]
