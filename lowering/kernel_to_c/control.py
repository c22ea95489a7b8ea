"""Emitters of control flow: `kernel.loop`, `scf.if`, `scf.while` and `cf.assert`.

A `kernel.loop` is a `for` nest whose carried values are variables declared
before it. The results of `scf.if` and the values an `scf.while` carries are
assigned in several places, so they are mutable variables rather than the
`const` ones other values get. Terminators (`kernel.yield`, `scf.yield`,
`scf.condition`) have no emitter: the op that owns the region reads them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from xdsl.dialects import cf, scf
from xdsl.dialects.builtin import Float64Type, MemRefType
from xdsl.ir import Block, SSAValue

from rung.dialects import kernel

from .c_types import c_string_literal, paren, scalar_type, storage_type
from .emitter import Emitter, emits
from .scalar import calls_rung_math
from .windows import UNROLL_LIMIT, simd_reductions, unrolled_window

OMP_MIN_SHARES = 16
"""Iterations the threads of an OpenMP nest share out at least, where the nest has them:
three input channels on two threads leave one thread a third idle; collapsed with the
kernel offsets below them, 27 iterations split 14 and 13."""


def omp_collapse(op: kernel.LoopOp) -> int:
    """How many leading dims of an OpenMP nest its threads share: the first, and the parallel
    dims of static extent after it while the shared iterations are fewer than
    `OMP_MIN_SHARES` (the nest's dims are perfectly nested and rectangular in C)."""
    bounds = op.bounds()
    count, shares = 1, bounds[0]
    while (
        isinstance(shares, int)
        and shares < OMP_MIN_SHARES
        and count < op.rank
        and op.kinds[count] == "parallel"
        and isinstance(bounds[count], int)
    ):
        shares *= bounds[count]
        count += 1
    return count


WIDE_MATH_LANES = 16
"""Floats per step of a row loop that calls a rung_math.h function: 512 bits where the CPU
has them. gcc's cost model otherwise picks 256-bit vectors, and such a loop is bound by
arithmetic, not memory: GELU's row (erf) runs 31% faster at 16 lanes."""


def _wide_math_rows(op: kernel.LoopOp) -> bool:
    """An all-parallel innermost nest without carried values whose body calls an exp, tanh,
    erf or log of floats, its row a whole number of wide vectors: iterations are
    independent, so `omp simd` may widen it. A row with a remainder (Softmax over 197)
    stays at gcc's choice, whose narrower vectors leave a shorter scalar tail."""
    row = op.bounds()[-1] if op.ivs else None
    return (
        isinstance(row, int)
        and row % WIDE_MATH_LANES == 0
        and op.step_sizes[-1] == 1
        and not op.inits
        and all(k == "parallel" for k in op.kinds)
        and not any(isinstance(inner, kernel.LoopOp) for inner in op.body.walk())
        and calls_rung_math(op)
    )


@emits(kernel.LoopOp)
def loop(e: Emitter, op: kernel.LoopOp) -> None:
    """`for (int64_t i = 0; i < n; i++)` per dim, `#pragma omp` on request; carried values
    are variables declared before the nest and assigned at the end of the body."""
    carried = []
    for init, arg, result in zip(op.inits, op.iter_args, op.results, strict=True):
        name = e.fresh(arg.name_hint or result.name_hint, "acc")
        e.emit(f"{scalar_type(init.type)} {name} = {e.value(init)};")
        e.names[arg] = name
        e.names[result] = name
        carried.append(name)
    unroll = unrolled_window(op)
    simd = simd_reductions(op)
    wide = _wide_math_rows(op) and not unroll and not simd
    if op.omp is not None:
        e.uses_openmp = True
        # Collapsed loops must be perfectly nested: no pragma between their `for`s.
        collapse = 1 if unroll or simd or wide else omp_collapse(op)
        clause = f" collapse({collapse})" if collapse > 1 else ""
        if wide and len(op.ivs) == 1:  # the row is the parallel loop itself
            clause = f" simd simdlen({WIDE_MATH_LANES})"
            wide = False
        e.emit(f"#pragma omp parallel for{clause} schedule(static)")
    opened = 0
    for k, (iv, bound, step) in enumerate(zip(op.ivs, op.bounds(), op.step_sizes, strict=True)):
        name = e.fresh(iv.name_hint, "i")
        e.names[iv] = name
        limit = str(bound) if isinstance(bound, int) else e.value(bound)
        inc = f"{name}++" if step == 1 else f"{name} += {step}"
        if unroll:
            e.emit(f"#pragma GCC unroll {UNROLL_LIMIT}")
        if simd and k == len(op.ivs) - 1:
            clauses = {
                kind: [n for n, c in zip(carried, simd, strict=True) if c == kind] for kind in simd
            }
            e.emit(
                "#pragma omp simd "
                + " ".join(
                    f"reduction({kind}:{', '.join(names)})" for kind, names in clauses.items()
                )
            )
        if wide and k == len(op.ivs) - 1:
            e.emit(f"#pragma omp simd simdlen({WIDE_MATH_LANES})")
        e.emit(f"for (int64_t {name} = 0; {name} < {limit}; {inc}) {{")
        e.depth += 1
        opened += 1
    body = op.body.block
    e.block(body, skip_last=True)
    term = body.last_op
    assert isinstance(term, kernel.YieldOp)
    for name, v in zip(carried, term.values, strict=True):
        e.emit(f"{name} = {e.value(v)};")
    for _ in range(opened):
        e.depth -= 1
        e.emit("}")


@emits(scf.IfOp)
def if_(e: Emitter, op: scf.IfOp) -> None:
    """`if`/`else`; results are variables declared before and assigned in each branch."""
    for r in op.results:
        _mutable(e, r)
    e.emit(f"if ({e.value(op.cond)}) {{")
    _branch(e, op.true_region.block, op.results)
    if op.false_region.blocks and (op.results or len(op.false_region.block.ops) > 1):
        e.emit("} else {")
        _branch(e, op.false_region.block, op.results)
    e.emit("}")


@emits(scf.WhileOp)
def while_(e: Emitter, op: scf.WhileOp) -> None:
    """`for (;;)`: the before-region, `break` on a false condition, then the after-region.

    The carried values are variables initialized from the operands; the
    after-region's yield assigns them all at once. When `scf.condition`
    forwards the before-region's arguments, the after-region's arguments
    and the results are those same variables.
    """
    before, after = op.before_region.block, op.after_region.block
    cond, term = before.last_op, after.last_op
    assert isinstance(cond, scf.ConditionOp) and isinstance(term, scf.YieldOp)
    for arg, init in zip(before.args, op.arguments, strict=True):
        _mutable(e, arg, init)
    forwards = list(cond.args) == list(before.args)
    if forwards:
        for result, after_arg, arg in zip(op.res, after.args, before.args, strict=True):
            _alias(e, result, arg)
            _alias(e, after_arg, arg)
    else:
        for result, after_arg in zip(op.res, after.args, strict=True):
            _mutable(e, result)
            _alias(e, after_arg, result)
    e.emit("for (;;) {")
    with e.indented():
        e.block(before, skip_last=True)
        if not forwards:
            _assign(e, list(op.res), list(cond.args))
        e.emit(f"if (!{paren(e.value(cond.condition))}) break;")
        e.block(after, skip_last=True)
        _assign(e, list(before.args), list(term.arguments))
    e.emit("}")


@emits(cf.AssertOp)
def assert_(e: Emitter, op: cf.AssertOp) -> None:
    """A run-time check: a false condition ends the run with the message (`RUNG_FAIL`)."""
    e.emit(f"if (!{paren(e.value(op.arg))}) RUNG_FAIL({c_string_literal(op.msg.data)});")


@emits(kernel.CheckOp)
def check(e: Emitter, op: kernel.CheckOp) -> None:
    """A run-time check that quotes the bad value (`RUNG_FAIL_GOT_I64` / `_F64`)."""
    kind = "F64" if isinstance(op.value.type, Float64Type) else "I64"
    message = c_string_literal(op.message.data)
    e.emit(f"if (!{paren(e.value(op.cond))}) RUNG_FAIL_GOT_{kind}({message}, {e.value(op.value)});")


# ---- mutable variables ------------------------------------------------------------------------


def _mutable(e: Emitter, v: SSAValue, init: SSAValue | None = None) -> None:
    """Declare non-const variables for `v` (pointer and `?` dims, or a scalar) and bind it."""
    t = v.type
    values = e.parts(init, t) if init is not None else None
    if isinstance(t, MemRefType):
        ptr = e.fresh(v.name_hint, "b")
        ctype = storage_type(t.element_type)
        e.emit(f"{ctype} *{ptr} = {values[0] if values else '0'};")
        dims, k = [], 1
        for i, d in enumerate(t.get_shape()):
            if d >= 0:
                dims.append(str(d))
                continue
            name = f"{ptr}_d{i}"
            e.used.add(name)
            e.emit(f"int64_t {name} = {values[k] if values else '0'};")
            dims.append(name)
            k += 1
        e.bind_buffer(v, ptr, dims)
        return
    name = e.fresh(v.name_hint)
    e.emit(f"{scalar_type(t)} {name} = {values[0] if values else '0'};")
    e.names[v] = name


def _alias(e: Emitter, v: SSAValue, like: SSAValue) -> None:
    """Bind `v` to the variables of `like` (a block argument or result sharing them)."""
    if isinstance(v.type, MemRefType):
        buf = e.buffer(like)
        e.bind_buffer(v, buf.ptr, list(buf.dims))
    else:
        e.names[v] = e.names[like]


def _vars(e: Emitter, v: SSAValue) -> list[tuple[str, str]]:
    """The (name, C type) of each mutable variable bound to `v`."""
    t = v.type
    if not isinstance(t, MemRefType):
        return [(e.names[v], scalar_type(t))]
    buf = e.buffer(v)
    out = [(buf.ptr, f"{storage_type(t.element_type)} *")]
    out += [(buf.dims[i], "int64_t") for i, d in enumerate(t.get_shape()) if d < 0]
    return out


def _assign(e: Emitter, targets: Sequence[SSAValue], values: Sequence[SSAValue]) -> None:
    """Assign `values` to the variables of `targets` as if all at once.

    An assignment whose expression reads a variable that another one
    writes (carried buffers swapped each iteration) goes through a
    temporary, computed before any variable is written.
    """
    pairs: list[tuple[str, str, str]] = []
    for target, value in zip(targets, values, strict=True):
        exprs = e.parts(value, target.type)
        for (name, ctype), expr in zip(_vars(e, target), exprs, strict=True):
            if name != expr:
                pairs.append((name, ctype, expr))
    written = {name for name, _, _ in pairs}
    final = []
    for name, ctype, expr in pairs:
        if set(re.findall(r"[A-Za-z_]\w*", expr)) & (written - {name}):
            tmp = e.fresh(f"{name}_next")
            sep = "" if ctype.endswith("*") else " "
            e.emit(f"{ctype}{sep}{tmp} = {expr};")
            expr = tmp
        final.append((name, expr))
    for name, expr in final:
        e.emit(f"{name} = {expr};")


def _branch(e: Emitter, block: Block, results: Sequence[SSAValue]) -> None:
    """The body of one `if` branch; its `scf.yield` assigns the results."""
    with e.indented():
        e.block(block, skip_last=True)
        term = block.last_op
        if results:
            assert isinstance(term, scf.YieldOp)
            _assign(e, results, list(term.arguments))
