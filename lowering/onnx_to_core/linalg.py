"""Linear-algebra and transformer ONNX ops → core: Einsum.

Einsum becomes what a matmul unit runs: operands are folded left to right;
each pair is transposed into `[batch, free, contracted]` order, reshaped to
a rank-3 `core.matmul`, and reshaped back. Indices that only one operand
carries and nobody needs later are summed out first with `core.reduce`;
repeated indices in one operand (diagonals) become a `core.gather` on the
merged pair of axes. Dynamic dims are read at run time (`DimOf`): a merged
dim's size is then a product computed by core ops, and a letter whose sizes
in two operands are not both static must have equal sizes there (checked at
run time, so a `?` dim broadcast from 1 is refused by the run).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from rung.dialects import core
from rung.dialects.dtypes import i64
from rung.dialects.onnx import generated_ops as onnx
from rung.importers.onnx.validate import einsum_syntax_error
from rung.lowering.kit import (
    CoreBuilder,
    DimOf,
    LoweringError,
    Size,
    element_of,
    int_attr,
    is_static,
    ranked_shape,
    shape_of_type,
    static_size,
    tensor,
)

from .registry import Results, lowers

_ELLIPSIS_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


class _Term:
    """A value with one einsum letter per dim."""

    def __init__(self, value: SSAValue, letters: str) -> None:
        self.value = value
        self.letters = letters

    @property
    def sizes(self) -> dict[str, Size]:
        """Each letter's size: a number, or `DimOf` the value where it is dynamic."""
        dims = [
            d if d >= 0 else DimOf(self.value, i) for i, d in enumerate(ranked_shape(self.value))
        ]
        return dict(zip(self.letters, dims, strict=True))


def _product(b: CoreBuilder, sizes: Sequence[Size]) -> SSAValue:
    """The product of `sizes` at run time, as a 1-element i64 tensor."""
    total = b.reduce("prod", b.shape_vector(sizes), [0])
    return b.reshape(total, tensor(i64, [1]))


def _reshape_groups(b: CoreBuilder, x: SSAValue, groups: Sequence[Sequence[Size]]) -> SSAValue:
    """`x` reshaped to one dim per group of sizes, each dim the product of its group."""
    el = element_of(x.type)
    if all(isinstance(s, int) for group in groups for s in group):
        return b.reshape(x, tensor(el, [int(np.prod(group, dtype=np.int64)) for group in groups]))
    if all(len(group) == 1 for group in groups):
        sizes = [group[0] for group in groups]
        if [static_size(s) for s in sizes] == list(ranked_shape(x)):
            return x  # one dim per group already, of the checked sizes
        return b.reshape_to(x, sizes)
    parts = [
        b.constant(np.array([np.prod(group, dtype=np.int64)], np.int64))
        if all(isinstance(s, int) for s in group)
        else _product(b, group)
        for group in groups
    ]
    static = [
        int(np.prod(group, dtype=np.int64)) if all(isinstance(s, int) for s in group) else -1
        for group in groups
    ]
    return b.reshape(x, tensor(el, static), b.concat(parts, 0))


def _same_size(b: CoreBuilder, x: SSAValue, a: Size, c: Size, what: str) -> SSAValue:
    """`x` once the run has checked that sizes `a` and `c` are equal (nothing if both are
    numbers)."""
    if isinstance(a, int) and isinstance(c, int):
        if a != c:
            raise LoweringError(f"Einsum: {what} has sizes {a} and {c}")
        return x
    equal = b.compare("eq", b.shape_vector([a]), b.shape_vector([c]))
    return b.check(x, equal, f"Einsum: {what} has different sizes")


def _run_time_diagonal(b: CoreBuilder, x: SSAValue, n: Size, flat: int) -> SSAValue:
    """The diagonal of a dynamic `n x n` pair of dims merged into dim `flat` of `x`."""
    count = b.reshape(b.shape_vector([n]), tensor(i64, []))
    iota = core.IotaOp.create(
        operands=[count], result_types=[tensor(i64, [-1])], properties={"dim": int_attr(0)}
    )
    positions = b.insert(iota).results[0]
    step = b.binary("add", count, b.scalar(1, i64))
    idx = b.binary("mul", positions, b.broadcast_to(step, positions.type, like=positions))
    return b.gather(x, idx, flat)


def _parse(equation: str, ranks: Sequence[int]) -> tuple[list[str], str]:
    """Operand letter strings and the output letters, with `...` spelled out."""
    problem = einsum_syntax_error(equation)
    if problem is not None:
        shown = equation if len(equation) <= 60 else equation[:60] + "..."
        raise LoweringError(f"Einsum: equation {shown!r} is malformed: {problem}")
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise LoweringError(f"Einsum: {len(terms)} terms for {len(ranks)} inputs")
    used = set(eq)
    spare = [c for c in _ELLIPSIS_LETTERS if c not in used]
    ell_rank = 0
    for t, r in zip(terms, ranks, strict=True):
        if "..." in t:
            ell_rank = max(ell_rank, r - (len(t) - 3))
    if ell_rank > len(spare):
        raise LoweringError("Einsum: too many ellipsis dims")
    ell = "".join(spare[:ell_rank])
    expanded = []
    for t, r in zip(terms, ranks, strict=True):
        if "..." in t:
            n = r - (len(t) - 3)
            t = t.replace("...", ell[ell_rank - n :])
        if len(t) != r:
            shown = t if len(t) <= 60 else t[:60] + "..."
            raise LoweringError(f"Einsum: term {shown!r} does not match rank {r}")
        expanded.append(t)
    if arrow:
        output = out.replace("...", ell)
    else:
        counts: dict[str, int] = {}
        for t in terms:
            for c in t.replace("...", ""):
                counts[c] = counts.get(c, 0) + 1
        output = ell + "".join(sorted(c for c, n in counts.items() if n == 1))
    return expanded, output


def _diagonal(b: CoreBuilder, term: _Term) -> _Term:
    """Take the diagonal for a letter repeated within one operand."""
    while True:
        letters = term.letters
        dup = next((c for c in letters if letters.count(c) > 1), None)
        if dup is None:
            return term
        p = letters.index(dup)
        q = letters.index(dup, p + 1)
        shape = ranked_shape(term.value)
        n = shape[p]
        rest = [i for i in range(len(letters)) if i not in (p, q)]
        if n >= 0 and shape[q] >= 0:
            if shape[q] != n:
                raise LoweringError("Einsum: a repeated index has different sizes")
            x = b.transpose(term.value, [*rest, p, q])
            el = element_of(x.type)
            rest_shape = [shape[i] for i in rest]
            x = b.reshape(x, tensor(el, [*rest_shape, n * n]))
            idx = b.constant(np.arange(n, dtype=np.int64) * (n + 1))
            diagonal = b.gather(x, idx, len(rest))
        else:
            sizes = b.dims(term.value)
            value = _same_size(b, term.value, sizes[p], sizes[q], f"repeated index {dup!r}")
            x = b.transpose(value, [*rest, p, q])
            x = _reshape_groups(b, x, [*([sizes[i]] for i in rest), [sizes[p], sizes[q]]])
            diagonal = _run_time_diagonal(b, x, sizes[p], len(rest))
        term = _Term(diagonal, "".join(letters[i] for i in rest) + dup)


def _sum_out(b: CoreBuilder, term: _Term, keep: set[str]) -> _Term:
    axes = [i for i, c in enumerate(term.letters) if c not in keep]
    if not axes:
        return term
    letters = "".join(c for c in term.letters if c in keep)
    return _Term(b.reduce("sum", term.value, axes), letters)


def _arrange(b: CoreBuilder, term: _Term, order: str, sizes: dict[str, Size]) -> SSAValue:
    """Transpose `term` to `order` and broadcast size-1 dims up to `sizes`."""
    x = b.transpose(term.value, [term.letters.index(c) for c in order])
    target = [sizes[c] for c in order]
    if not all(isinstance(t, int) for t in target):
        return _arrange_dynamic(b, x, target)
    if list(ranked_shape(x)) != target:
        # A size-1 (ellipsis-broadcast) dim: drop it, then broadcast back to full size.
        src = ranked_shape(x)
        keep = [i for i, (s, t) in enumerate(zip(src, target, strict=True)) if s == t]
        el = element_of(x.type)
        x = b.reshape(x, tensor(el, [src[i] for i in keep]))
        op = core.BroadcastOp.create(
            operands=[x], result_types=[tensor(el, target)], properties={"dims": core.ints(keep)}
        )
        x = b.insert(op).results[0]
    return x


def _arrange_dynamic(b: CoreBuilder, x: SSAValue, target: list[Size]) -> SSAValue:
    """`_arrange`'s broadcast where some target sizes are known only at run time: the
    dims of `x` that are a static 1 below a larger target are broadcast."""
    src = ranked_shape(x)
    keep = [i for i, (s, t) in enumerate(zip(src, target, strict=True)) if s != 1 or t == 1]
    if len(keep) == len(src):
        return x
    el = element_of(x.type)
    x = b.reshape(x, tensor(el, [src[i] for i in keep]))
    result = tensor(el, [static_size(t) for t in target])
    op = core.BroadcastOp.create(
        operands=[x, b.shape_vector(target)],
        result_types=[result],
        properties={"dims": core.ints(keep)},
    )
    return b.insert(op).results[0]


def _merge_sizes(
    b: CoreBuilder, lhs: _Term, rhs: _Term, contracted: set[str]
) -> tuple[_Term, dict[str, Size]]:
    """Each letter's size in the product of `lhs` and `rhs`, with `lhs` checked at run
    time where the two operands' sizes of a letter must agree but are not both static."""
    sa, sb = lhs.sizes, rhs.sizes
    sizes: dict[str, Size] = {}
    value = lhs.value
    for c in [*lhs.letters, *(c for c in rhs.letters if c not in sa)]:
        da, db = sa.get(c, 1), sb.get(c, 1)
        if isinstance(da, int) and isinstance(db, int):
            if da != db and 1 not in (da, db):
                raise LoweringError(f"Einsum: index {c!r} has sizes {da} and {db}")
            if c in contracted and da != db:
                raise LoweringError(f"Einsum: contracted index {c!r} broadcasts")
            sizes[c] = max(da, db)
        elif c not in contracted and (da == 1 or db == 1):
            sizes[c] = db if da == 1 else da
        else:
            value = _same_size(b, value, da, db, f"index {c!r}")
            sizes[c] = da if isinstance(da, int) else db
    return _Term(value, lhs.letters), sizes


def _contract(b: CoreBuilder, lhs: _Term, rhs: _Term, keep: set[str]) -> _Term:
    """lhs ⋅ rhs over their shared letters not in `keep`, as one batched matmul."""
    lhs = _sum_out(b, lhs, keep | set(rhs.letters))
    rhs = _sum_out(b, rhs, keep | set(lhs.letters))
    if not (is_static(lhs.value.type) and is_static(rhs.value.type)):
        return _contract_dynamic(b, lhs, rhs, keep)
    sa, sb = lhs.sizes, rhs.sizes
    sizes: dict[str, int] = {}
    for c in set(sa) | set(sb):
        da, db = sa.get(c, 1), sb.get(c, 1)
        if da != db and 1 not in (da, db):
            raise LoweringError(f"Einsum: index {c!r} has sizes {da} and {db}")
        sizes[c] = max(da, db)
    shared = [c for c in lhs.letters if c in sb]
    batch = "".join(c for c in shared if c in keep)
    contracted = "".join(c for c in shared if c not in keep)
    for c in contracted:
        if sa[c] != sb[c]:
            raise LoweringError(f"Einsum: contracted index {c!r} broadcasts")
    free_a = "".join(c for c in lhs.letters if c not in sb)
    free_b = "".join(c for c in rhs.letters if c not in sa)

    def prod(s: str) -> int:
        return int(np.prod([sizes[c] for c in s], dtype=np.int64))

    el = element_of(lhs.value.type)
    a = _arrange(b, lhs, batch + free_a + contracted, sizes)
    c_ = _arrange(b, rhs, batch + contracted + free_b, sizes)
    a = b.reshape(a, tensor(el, [prod(batch), prod(free_a), prod(contracted)]))
    c_ = b.reshape(
        c_, tensor(element_of(rhs.value.type), [prod(batch), prod(contracted), prod(free_b)])
    )
    out = b.matmul(a, c_, el)
    letters = batch + free_a + free_b
    out = b.reshape(out, tensor(el, [sizes[c] for c in letters]))
    return _Term(out, letters)


def _contract_dynamic(b: CoreBuilder, lhs: _Term, rhs: _Term, keep: set[str]) -> _Term:
    """`_contract` where some dims are known only at run time."""
    shared = [c for c in lhs.letters if c in rhs.letters]
    batch = "".join(c for c in shared if c in keep)
    contracted = "".join(c for c in shared if c not in keep)
    lhs, sizes = _merge_sizes(b, lhs, rhs, set(contracted))
    free_a = "".join(c for c in lhs.letters if c not in rhs.letters)
    free_b = "".join(c for c in rhs.letters if c not in lhs.letters)

    def group(letters: str) -> list[Size]:
        return [sizes[c] for c in letters]

    a = _arrange(b, lhs, batch + free_a + contracted, sizes)
    c_ = _arrange(b, rhs, batch + contracted + free_b, sizes)
    a = _reshape_groups(b, a, [group(batch), group(free_a), group(contracted)])
    c_ = _reshape_groups(b, c_, [group(batch), group(contracted), group(free_b)])
    out = b.matmul(a, c_, element_of(lhs.value.type))
    letters = batch + free_a + free_b
    if all(len(g) == 1 for g in (batch, free_a, free_b)):
        return _Term(out, letters)  # already one dim per letter
    return _Term(b.reshape_to(out, group(letters)), letters)


@lowers(onnx.EinsumOp)
def einsum(b: CoreBuilder, op: onnx.EinsumOp) -> Results:
    """Fold the operands pairwise into batched matmuls; sum and transpose to the output."""
    inputs = list(op.Inputs)
    if not inputs or any(shape_of_type(v.type) is None for v in inputs):
        raise LoweringError("Einsum needs inputs of known rank")
    terms_s, output = _parse(str(op.attr("equation")), [len(ranked_shape(v)) for v in inputs])
    if len(set(output)) != len(output):
        raise LoweringError("Einsum: repeated output index")
    terms = [_diagonal(b, _Term(v, t)) for v, t in zip(inputs, terms_s, strict=True)]
    acc = terms[0]
    for i in range(1, len(terms)):
        later = set(output).union(*(set(t.letters) for t in terms[i + 1 :]))
        acc = _contract(b, acc, terms[i], later)
    acc = _sum_out(b, acc, set(output))
    missing = [c for c in output if c not in acc.letters]
    if missing:
        raise LoweringError(f"Einsum: output indices {missing} appear in no input")
    sizes = acc.sizes
    result = _arrange(b, acc, output, sizes)
    return [b.retype(result, op.Output.type)]
