"""Linear-algebra and transformer ONNX ops → core: Einsum.

Einsum becomes what a matmul unit runs: operands are folded left to right;
each pair is transposed into `[batch, free, contracted]` order, reshaped to
a rank-3 `core.matmul`, and reshaped back. Indices that only one operand
carries and nobody needs later are summed out first with `core.reduce`;
repeated indices in one operand (diagonals) become a `core.gather` on the
merged pair of axes. Static shapes only: the reshapes need the numbers.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from rung.dialects import core
from rung.dialects.onnx import generated_ops as onnx
from rung.lowering.kit import (
    CoreBuilder,
    LoweringError,
    element_of,
    is_static,
    ranked_shape,
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
    def sizes(self) -> dict[str, int]:
        return dict(zip(self.letters, ranked_shape(self.value), strict=True))


def _parse(equation: str, ranks: Sequence[int]) -> tuple[list[str], str]:
    """Operand letter strings and the output letters, with `...` spelled out."""
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
            raise LoweringError(f"Einsum: term {t!r} does not match rank {r}")
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
        if shape[q] != n:
            raise LoweringError("Einsum: a repeated index has different sizes")
        rest = [i for i in range(len(letters)) if i not in (p, q)]
        x = b.transpose(term.value, [*rest, p, q])
        el = element_of(x.type)
        rest_shape = [shape[i] for i in rest]
        x = b.reshape(x, tensor(el, [*rest_shape, n * n]))
        idx = b.constant(np.arange(n, dtype=np.int64) * (n + 1))
        diagonal = b.gather(x, idx, len(rest))
        term = _Term(diagonal, "".join(letters[i] for i in rest) + dup)


def _sum_out(b: CoreBuilder, term: _Term, keep: set[str]) -> _Term:
    axes = [i for i, c in enumerate(term.letters) if c not in keep]
    if not axes:
        return term
    letters = "".join(c for c in term.letters if c in keep)
    return _Term(b.reduce("sum", term.value, axes), letters)


def _arrange(b: CoreBuilder, term: _Term, order: str, sizes: dict[str, int]) -> SSAValue:
    """Transpose `term` to `order` and broadcast size-1 dims up to `sizes`."""
    x = b.transpose(term.value, [term.letters.index(c) for c in order])
    target = [sizes[c] for c in order]
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


def _contract(b: CoreBuilder, lhs: _Term, rhs: _Term, keep: set[str]) -> _Term:
    """lhs ⋅ rhs over their shared letters not in `keep`, as one batched matmul."""
    lhs = _sum_out(b, lhs, keep | set(rhs.letters))
    rhs = _sum_out(b, rhs, keep | set(lhs.letters))
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


@lowers(onnx.EinsumOp)
def einsum(b: CoreBuilder, op: onnx.EinsumOp) -> Results:
    """Fold the operands pairwise into batched matmuls; sum and transpose to the output."""
    inputs = list(op.Inputs)
    if not inputs or not all(is_static(v.type) for v in inputs):
        raise LoweringError("Einsum needs static input shapes")
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
