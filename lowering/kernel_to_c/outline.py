"""Outlining: the body of a large `_run` split into `static` functions of bounded size.

gcc -O3 spends time superlinear in the size of one function (its SSA
updates and loop passes revisit the whole function), and `_run` holds the
whole model: a generated model of 2,000 nodes took over three times as long
to build as one of 1,000. So when the body of `_run` passes `above_lines`
lines (`OUTLINE_ABOVE_LINES`), `split` cuts its top-level ops into runs of
about `part_lines` lines (`PART_LINES`), each a `static int <prefix>_partN(...)`
that `_run` calls in order and whose status it checks. `_run` keeps only the
binding of the inputs, the calls and the copying of the outputs, and no
function grows with the model.

The ops are emitted once, as for one function; outlining moves their lines
unchanged, so a part must declare every name they read from outside. Those
come from the IR, not the text: the values that the part's ops (and the ops
nested in them) use and that top-level ops outside the part define, spelled
as `Emitter.names` and `Emitter.buffers` spell them.

- Pure declarations (arena buffers, views, subviews, dims, weights,
  constants; `rederived`) are not moved but repeated, the same lines, in each
  part that needs them: `float *const b = (float *)(arena + 512);`, so that
  gcc still sees that two arena buffers are disjoint.
- Other values (inputs, heap buffers, scalars) are parameters under their
  own names. A heap buffer is `restrict` when every pointer the part receives
  is an input or a heap buffer, which is what gcc knows of fresh memory.
- What a part defines and later code reads (a heap buffer it allocates, a
  scalar, the result of a loop) it hands back through pointers to variables
  of the same names that `_run` declares before the call, after its last op.
- `arena` and the heap are parameters of every part. The heap is copied into
  a local `heap` and back, so `&heap` in the moved lines means what it meant
  in `_run`; `RUNG_FAIL`'s `goto done` leaves through the part's own `done:`,
  which returns the status `_run` checks before it jumps to its cleanup.

Parts are static functions called once, which gcc may inline back: it does
not, past its limits on the growth of a large function, which `_run` soon is.

Cold parts: a top-level op whose `work` (scalar ops it executes: loop trips
times the ops of the body, a matmul's multiply-adds) is below `cold_work`
takes microseconds however well it is compiled, yet costs gcc -O3 as much
time per line as a hot one (unrolling and vectorizing its short loops). A
run of such ops of at least `cold_lines` lines is a part of its own, marked
`RUNG_COLD` (gcc's `cold`: optimized for size, not speed, and, with gcc,
`optimize("Og")`), which gcc builds in a fraction of the time: a 20,000-node
graph of small ops took 28 s of C compile at -O3 and `cold`, 22 s at -O1, and
takes 8 s at -Og, and it runs 8% slower than at -O1 (0.140 against 0.130 ms
at 2,000 nodes). The zoo's and the bench's models have no cold part. Such a
run splits `_run` even when it is shorter
than `above_lines`. Shorter runs stay in the parts around them, so a few
small ops between large ones change nothing.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerType, MemRefType
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue

from rung.dialects import kernel

from .c_types import is_float, scalar_type, storage_type
from .emitter import Emitter

OUTLINE_ABOVE_LINES = 800
"""A `_run` body of more lines is split into parts. gcc's time per line grows with
the size of the function past a few thousand lines: split, the 2,800 lines of
Inception v1 built in 9 s of CPU instead of 14 and the 7,700 of DenseNet-121 in 17
instead of 36. And parts are what a parallel build shares among the cores
(`rung.runtime.native.parallel_flags`): ResNet-50's 2,200 lines, in six parts, built
in 1.6 s instead of 2.3 on two. Below this, one function builds as fast and reads
more easily."""

PART_LINES = 400
"""About how many lines of moved ops one part holds (an op larger than this is a
part of its own). gcc built a 2,000-node model in 21 s of CPU in parts of 200 or
400 lines, 25 s in parts of 1,000, 30 s of 2,000 (72 s as one function). Parts of
100 lines ran 5% more instructions on a model of tiny ops (the calls, and values
no longer forwarded from one loop to the next); parts of 400, none more."""

COLD_WORK = 1 << 14
"""A top-level op of less `work` than this is cold. In the zoo's models (ResNet-50,
DenseNet-121, Inception, ShuffleNet, SqueezeNet) such ops are under 0.02% of the
work; a generated model of 1,000 tiny nodes built in 3 s of CPU with its parts
cold instead of 12 (and ran in 0.10 ms instead of 0.06)."""

COLD_LINES = PART_LINES
"""The fewest lines of consecutive cold ops that make a cold part: fewer would
only cut the hot parts around them into more pieces."""

HEAP_PARAM = "heap_io"
"""A part's parameter for `_run`'s heap (reserved in `c_names`, as `heap` is)."""

COLD_ATTRIBUTE = "RUNG_COLD"
"""The runtime header's macro before a cold part (gcc's and clang's `cold` attribute)."""


@dataclass(frozen=True)
class Outlining:
    """When `_run` is split, and into how large parts (in lines of C); which runs
    of ops are cold parts. `above_lines=None` never splits, `cold_work=None`
    makes no part cold."""

    above_lines: int | None = OUTLINE_ABOVE_LINES
    part_lines: int = PART_LINES
    cold_work: int | None = COLD_WORK
    cold_lines: int = COLD_LINES


DEFAULT_OUTLINING = Outlining()
"""Outlining at the sizes above, for `generate_c`."""


@dataclass
class Piece:
    """The lines of `_run` that one top-level op wrote; `op` is None for the binding of
    the inputs and the `func.return` for the copying of the outputs."""

    op: Operation | None
    lines: list[str]


@dataclass
class Body:
    """`_run`'s body and the parts, each a complete C function, to define before it."""

    lines: list[str]
    functions: list[str] = field(default_factory=list)
    cold: int = 0
    """How many of the functions are cold parts."""


def split(e: Emitter, pieces: list[Piece], outlining: Outlining) -> Body:
    """The body of `_run` from the pieces, in parts if it has more lines than allowed
    or cold ops enough for a cold part."""
    lines = [line for piece in pieces for line in piece.lines]
    if outlining.above_lines is None:
        return Body(lines)
    if len(lines) <= outlining.above_lines:
        if outlining.cold_work is None or len(lines) < outlining.cold_lines:
            return Body(lines)
        layout = _Layout(e, pieces)
        if not any(layout.cold(outlining.cold_work, outlining.cold_lines).values()):
            return Body(lines)
        return layout.split(outlining)
    return _Layout(e, pieces).split(outlining)


# ---- where each top-level op goes -------------------------------------------------------------

REDERIVED = (kernel.ViewOp, kernel.SubviewOp, kernel.DimOp, kernel.ConstantOp, arith.ConstantOp)
"""Ops whose lines only declare constant names from their operands, with no effect:
any code after them may repeat those lines instead of receiving the names (so may
a `kernel.alloc` in the arena)."""


def rederived(op: Operation) -> bool:
    """Whether `op`'s lines may be repeated wherever its results are needed."""
    if isinstance(op, kernel.AllocOp):
        return op.offset is not None
    return isinstance(op, REDERIVED)


def _heap_buffer(v: SSAValue) -> bool:
    """Whether `v` is a buffer of the run's heap: fresh memory, no other buffer's."""
    return (
        isinstance(v, OpResult) and isinstance(v.owner, kernel.AllocOp) and v.owner.offset is None
    )


def outside_uses(op: Operation) -> list[SSAValue]:
    """The values that `op` and the ops nested in it use but do not define, in order."""
    inner: set[SSAValue] = set()
    for o in op.walk():
        inner.update(o.results)
        for region in o.regions:
            for block in region.blocks:
                inner.update(block.args)
    uses: dict[SSAValue, None] = {}
    for o in op.walk():
        for v in o.operands:
            if v not in inner:
                uses[v] = None
    return list(uses)


CHEAP_DIALECTS = ("arith", "math", "cf")
"""Dialects whose ops are one scalar operation (or a check) each."""

CHEAP_OPS = (
    kernel.LoadOp,
    kernel.StoreOp,
    kernel.YieldOp,
    kernel.AllocOp,
    kernel.DeallocOp,
    kernel.ConstantOp,
    kernel.DimOp,
    kernel.ViewOp,
    kernel.SubviewOp,
)
"""Kernel ops that do one scalar operation or none (a pointer, a size)."""


def work(op: Operation) -> float:
    """About how many scalar operations `op` executes: a loop its trips times its
    body's work, a matmul its multiply-adds, another op on buffers their elements;
    `math.inf` where that depends on run-time sizes or is not known."""
    if isinstance(op, kernel.LoopOp):
        trips = 1
        for bound, step in zip(op.bounds(), op.step_sizes, strict=True):
            if not isinstance(bound, int):
                return math.inf
            trips *= -(-bound // step)
        return trips * sum(work(o) for o in op.body.block.ops)
    if isinstance(op, kernel.MatmulOp):
        lhs, out = _static_shape(op.lhs), _static_shape(op.out)
        if lhs is None or out is None:
            return math.inf
        return math.prod(out) * lhs[-1]
    if isinstance(op, CHEAP_OPS) or op.dialect_name() in CHEAP_DIALECTS:
        return 1 + sum(work(o) for region in op.regions for o in region.ops)
    if op.regions:
        return math.inf
    total = 1
    for v in (*op.operands, *op.results):
        shape = _static_shape(v)
        if shape is None:
            return math.inf
        total += math.prod(shape)
    return total


def _neutral(op: Operation) -> bool:
    """Whether `op` is one statement that goes with the op after it (an allocation, a
    check), whether that op is cold or not."""
    return not op.regions and (isinstance(op, CHEAP_OPS) or op.dialect_name() in CHEAP_DIALECTS)


def _static_shape(v: SSAValue) -> tuple[int, ...] | None:
    """`v`'s shape if it is a buffer of static shape, () if it is a scalar, else None."""
    t = v.type
    if isinstance(t, MemRefType):
        shape = t.get_shape()
        return None if any(d < 0 for d in shape) else shape
    return () if isinstance(t, IntegerType | IndexType) or is_float(t) else None


class _Layout:
    """The pieces of one `_run` and what each needs from the others."""

    def __init__(self, e: Emitter, pieces: list[Piece]) -> None:
        self.e = e
        self.pieces = pieces
        self.index = {p.op: i for i, p in enumerate(pieces) if p.op is not None}
        self.top = {o: i for i, p in enumerate(pieces) if p.op is not None for o in p.op.walk()}
        self.weights = {w.name for w in e.weights}
        self.uses = [outside_uses(p.op) if p.op is not None else [] for p in pieces]
        self.declared: set[str] = set()
        """The names `_run` declares (its inputs, what parts hand back, re-derived ones)."""

    # -- the layout ----------------------------------------------------------------------------

    def split(self, outlining: Outlining) -> Body:
        """`_run`: the inputs, a call of each part (after declaring the names it hands
        back), then the outputs."""
        last = len(self.pieces) - 1
        block = self.pieces[last].op.parent_block()  # type: ignore[union-attr]
        assert block is not None
        self.declared.update(n for arg in block.args for n, _ in self._variables(arg))
        body = Body(list(self.pieces[0].lines))
        cold = self.cold(outlining.cold_work, outlining.cold_lines)
        for run in self._runs(outlining.part_lines, cold):
            name = self._unique(f"{self.e.prefix}_part{len(body.functions) + 1}")
            function, lines = self._part(name, run, cold[run[0]])
            body.cold += cold[run[0]]
            body.functions.append(function)
            body.lines.extend(lines)
        derived, _ = self._needs(self.uses[last], set())
        for i in derived:
            body.lines.extend(self.pieces[i].lines)
        body.lines.extend(self.pieces[last].lines)
        return body

    def _moved(self) -> list[int]:
        """The pieces that parts hold (not the inputs' and outputs', nor re-derived ones)."""
        return [
            i
            for i in range(1, len(self.pieces) - 1)
            if not rederived(self.pieces[i].op)  # type: ignore[arg-type]
        ]

    def cold(self, cold_work: int | None, cold_lines: int) -> dict[int, bool]:
        """Whether each moved piece goes into a cold part: its op's work is below
        `cold_work` (a neutral op's: the next op's), in a run of such pieces
        (re-derived ones between them count) of at least `cold_lines` lines."""
        moved = self._moved()
        cold: dict[int, bool] = {}
        following = cold_work is None  # the temperature of the next op that has one
        for i in reversed(moved):
            op = self.pieces[i].op
            assert op is not None
            if not _neutral(op):
                following = cold_work is not None and work(op) < cold_work
            cold[i] = following
        start = 0
        while start < len(moved):
            end = start + 1
            while end < len(moved) and cold[moved[end]] == cold[moved[start]]:
                end += 1
            if cold[moved[start]]:
                first, last = moved[start], moved[end - 1]
                lines = sum(len(p.lines) for p in self.pieces[first : last + 1])
                if lines < cold_lines:
                    for i in moved[start:end]:
                        cold[i] = False
            start = end
        return cold

    def _runs(self, part_lines: int, cold: dict[int, bool]) -> list[list[int]]:
        """The runs of consecutive top-level pieces, each a part: about `part_lines` lines,
        counting the re-derived declarations among them (mostly of the buffers of the ops
        that follow), which are repeated where needed rather than moved; all cold or all
        not."""
        runs: list[list[int]] = []
        size = pending = 0
        for i, piece in enumerate(self.pieces[1:-1], start=1):
            n = len(piece.lines)
            if rederived(piece.op):  # type: ignore[arg-type]
                pending += n
                continue
            if not runs or size + pending + n > part_lines or cold[i] != cold[runs[-1][0]]:
                runs.append([])
                size = 0
            runs[-1].append(i)
            size += pending + n
            pending = 0
        return runs

    def _unique(self, name: str) -> str:
        """`name`, or with `_` added until it is clear of the names in use (a local of
        `_run` would hide a part's name; a part's local, its parameter's)."""
        while name in self.e.used:
            name += "_"
        self.e.used.add(name)
        return name

    def _part(self, function: str, run: list[int], cold: bool) -> tuple[str, list[str]]:
        """The function of the pieces `run` (`cold`: marked so), and the lines of `_run`
        that declare what it hands back and call it."""
        inside = set(run)
        uses = dict.fromkeys(v for i in run for v in self.uses[i])
        derived, received = self._needs(uses, inside)
        params = self._params(received)
        given = {name for name, _ in params}
        back = [
            (name, ctype, self._unique(f"{name}_out"))
            for v in self._escaping(run)
            for name, ctype in self._variables(v)
            if name not in given and name not in self.declared
        ]
        signature = ", ".join(
            ["char *const arena", f"rung_heap *const {HEAP_PARAM}"]
            + [f"{ctype}{name}" for name, ctype in params]
            + [f"{_spaced(ctype)}*const {out}" for _, ctype, out in back]
        )
        lines = [
            f"{COLD_ATTRIBUTE + ' ' if cold else ''}static int {function}({signature}) {{",
            f"  rung_heap heap = *{HEAP_PARAM};",
            "  int rc = 0;",
        ]
        for i in sorted({*derived, *run}):  # in the order of `_run`, declarations by their use
            lines.extend(self.pieces[i].lines)
        lines += [f"  *{out} = {name};" for name, _, out in back]
        lines += ["done: RUNG_UNUSED;", f"  *{HEAP_PARAM} = heap;", "  return rc;", "}"]
        args = ", ".join(
            ["arena", "&heap"] + [name for name, _ in params] + [f"&{name}" for name, _, _ in back]
        )
        calls = [f"  {_spaced(ctype)}{name} = 0;" for name, ctype, _ in back]
        calls.append(f"  if ((rc = {function}({args})) != 0) goto done;")
        self.declared.update(name for name, _, _ in back)
        return "\n".join(lines), calls

    # -- what a piece of code needs ------------------------------------------------------------

    def _defined_by(self, v: SSAValue) -> int:
        """The piece that declares `v`'s names (0, the inputs', for an argument)."""
        if isinstance(v, BlockArgument):
            return 0
        assert isinstance(v, OpResult)
        return self.index[v.owner]

    def _needs(
        self, uses: Iterable[SSAValue], inside: set[int]
    ) -> tuple[list[int], list[SSAValue]]:
        """For code of the pieces `inside` reading `uses`: the re-derived pieces to repeat
        (in order, with what they read in turn) and the values it must receive."""
        derived: set[int] = set()
        received: dict[SSAValue, None] = {}
        work = list(uses)
        while work:
            v = work.pop()
            i = self._defined_by(v)
            if i in inside:
                continue
            if i == 0 or not rederived(self.pieces[i].op):  # type: ignore[arg-type]
                received[v] = None
            elif i not in derived:
                derived.add(i)
                work.extend(self.uses[i])
        return sorted(derived), sorted(received, key=self._position)

    def _escaping(self, run: list[int]) -> list[SSAValue]:
        """The results of the pieces `run` that code after it reads (directly, or through
        re-derived pieces that code after it needs)."""
        inside = set(run)
        needed: dict[int, bool] = {}

        def read_after(v: SSAValue) -> bool:
            for use in v.uses:
                i = self.top.get(use.operation)
                if i is None or i in inside:  # None: an op no longer in the function
                    continue
                op = self.pieces[i].op
                assert op is not None
                if not rederived(op):
                    return True
                if i not in needed:
                    needed[i] = False  # a piece's results do not feed the piece itself
                    needed[i] = any(read_after(r) for r in op.results)
                if needed[i]:
                    return True
            return False

        return [r for i in run for r in self.pieces[i].op.results if read_after(r)]  # type: ignore[union-attr]

    def _position(self, v: SSAValue) -> tuple[int, int]:
        """Where `v` is declared, to order the parameters as `_run` declares them."""
        return self._defined_by(v), v.index if isinstance(v, BlockArgument | OpResult) else 0

    def _params(self, received: list[SSAValue]) -> list[tuple[str, str]]:
        """(name, C type with its qualifiers) of each variable the values are spelled with."""
        pointers = [v for v in received if isinstance(v.type, MemRefType)]
        distinct = all(isinstance(v, BlockArgument) or _heap_buffer(v) for v in pointers)
        params: dict[str, str] = {}
        for v in received:
            for name, ctype in self._variables(v):
                if ctype.endswith("*"):
                    ctype += "restrict const " if distinct and _heap_buffer(v) else "const "
                else:
                    ctype = f"const {ctype} "
                params.setdefault(name, ctype)
        return list(params.items())

    def _variables(self, v: SSAValue) -> list[tuple[str, str]]:
        """The variables that spell `v`: a scalar's, or a buffer's pointer and run-time
        dims (weights are file-scope, constants and static dims literals)."""
        t = v.type
        if isinstance(t, MemRefType):
            buf = self.e.buffer(v)
            out = []
            if buf.ptr not in self.weights:
                out.append((buf.ptr, f"{storage_type(t.element_type)} *"))
            return out + [(d, "int64_t") for d in buf.dims if d.isidentifier()]
        if isinstance(v, OpResult) and isinstance(v.owner, arith.ConstantOp):
            return []
        name = self.e.value(v)
        return [(name, scalar_type(t))] if name.isidentifier() else []


def _spaced(ctype: str) -> str:
    """`ctype` ready for a name or `*` to follow: `float *`, `int64_t `."""
    return ctype if ctype.endswith("*") else f"{ctype} "
