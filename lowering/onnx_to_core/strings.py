"""ONNX ops on string tensors → core: StringNormalizer.

StringNormalizer drops the elements of a [C] or [1, C] string tensor that are
stopwords, and changes the case of the others (`core.unary lower` or
`upper`, which map ASCII letters only). What it keeps is known at run time
only: the elements to keep feed a `core.nonzero`, whose indices gather them.
When every element is dropped the result is one empty string; an extra
candidate, the empty string, kept only then, gives that without control flow:

    %keep  = ... not a stopword ...                      : tensor<?xi1>
    %none  = not(reduce or(%keep))                       : tensor<1xi1>
    %picks = core.nonzero(concat(%keep, %none))          : tensor<1x?xi64>
    %y     = core.gather(concat(%changed, [""]), %picks) : tensor<?x!onnx.string>

Stopwords match whole elements, bytewise, or with ASCII letters of either
case alike when `is_case_sensitive` is 0 (onnxruntime's behaviour; `locale`
is not used).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from rung.dialects import core
from rung.dialects.dtypes import i1, i64
from rung.dialects.onnx import generated_ops as onnx
from rung.lowering.kit import (
    CoreBuilder,
    DimOf,
    LoweringError,
    element_of,
    ranked_shape,
    tensor,
)

from .registry import Results, lowers


def _spread(b: CoreBuilder, v: SSAValue, dims: Sequence[int], words: SSAValue, n: int) -> SSAValue:
    """`v` broadcast to [C, n] (C the length of the [C] `words`), its dims going to `dims`."""
    out = [ranked_shape(words)[0], n]
    operands = [v]
    if out[0] < 0:
        operands.append(b.shape_vector([DimOf(words, 0), n]))
    new = core.BroadcastOp.create(
        operands=operands,
        result_types=[tensor(element_of(v.type), out)],
        properties={"dims": core.ints(dims)},
    )
    return b.insert(new).results[0]


def _stopwords_hit(b: CoreBuilder, words: SSAValue, stops: list[str], sensitive: bool) -> SSAValue:
    """Which elements of the [C] `words` are stopwords: an i1 [C]."""
    table = b.constant(np.array(stops, dtype=object))
    if not sensitive:
        words, table = b.unary("lower", words), b.unary("lower", table)
    grid_words = _spread(b, words, [0], words, len(stops))
    grid_stops = _spread(b, table, [1], words, len(stops))
    return b.reduce("or", b.compare("eq", grid_words, grid_stops), [1])


@lowers(onnx.StringNormalizerOp)
def string_normalizer(b: CoreBuilder, op: onnx.StringNormalizerOp) -> Results:
    x = op.X
    shape = ranked_shape(x)
    if len(shape) not in (1, 2) or (len(shape) == 2 and shape[0] not in (1, -1)):
        raise LoweringError(f"StringNormalizer takes a [C] or [1, C] tensor, got {x.type}")
    if len(shape) == 2 and shape[0] < 0:
        first = b.gather(b.shape_of(x), b.constant(np.array(0, np.int64)), 0)
        ok = b.compare("eq", first, b.scalar(1, i64))
        x = b.check(x, ok, "StringNormalizer takes a [C] or [1, C] tensor")
    words = x if len(shape) == 1 else b.reshape_to(x, [DimOf(x, 1)])
    action = str(op.attr("case_change_action") or "NONE")
    if action not in ("NONE", "LOWER", "UPPER"):
        raise LoweringError(f"unknown case_change_action '{action}'")
    changed = words if action == "NONE" else b.unary(action.lower(), words)
    stops = [str(s) for s in op.attr("stopwords") or ()]  # type: ignore[union-attr]
    every = tensor(i1, ranked_shape(words))
    if stops:
        sensitive = bool(op.attr("is_case_sensitive"))
        keep = b.unary("not", _stopwords_hit(b, words, stops, sensitive))
    else:
        keep = b.broadcast_to(b.scalar(True, i1), every, like=words)
    kept_any = b.reduce("or", keep, [0])
    none = b.reshape(b.unary("not", kept_any), tensor(i1, [1]))
    candidates = b.concat([changed, b.constant(np.array([""], dtype=object))], 0)
    found = core.NonZeroOp.create(
        operands=[b.concat([keep, none], 0)], result_types=[tensor(i64, [1, -1])]
    )
    hits = b.insert(found).results[0]
    picked = b.gather(candidates, b.reshape_to(hits, [DimOf(hits, 1)]), 0)
    if len(shape) == 2:
        picked = b.reshape_to(picked, [1, DimOf(picked, 0)])
    return [b.retype(picked, op.Y.type)]


__all__ = ["string_normalizer"]
