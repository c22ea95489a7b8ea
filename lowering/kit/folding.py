"""Constant operands as numpy, folding the small computations that produce them.

Exporters compute shapes, pads, axes and ranges with chains such as
Shape → Gather → Concat; once lowered they are small core ops on constants.
Evaluating them with the core interpreter (the dialect's executable spec)
lets every handler that needs a constant operand see one, and lets the
`core-fold-constants` pass replace them.
"""

from __future__ import annotations

import weakref

import numpy as np
from xdsl.ir import Operation, SSAValue

from rung.dialects.constants import constant_value
from rung.dialects.resources import owning_module
from rung.errors import RungError

from .shapes import is_static, shape_of_type

FOLD_LIMIT = 1 << 16
"""Largest result (in elements) evaluated at compile time to find a constant."""


def _constant_data(owner: Operation) -> np.ndarray | None:
    """The data of a constant op of any dialect: no operands, a tensor `value` property.

    (`core.constant`, and a frontend's own constant op such as `onnx.Constant`,
    which the lowering may not have reached yet.)
    """
    attr = owner.properties.get("value")
    if attr is None or owner.operands or owner.regions or len(owner.results) != 1:
        return None
    try:
        return constant_value(attr, owning_module(owner))
    except RungError:
        return None


def constant_array(value: SSAValue | None) -> np.ndarray | None:
    """The data of `value` if it is a constant or computed from constants, else None."""
    array = _Folder().array(value, 0)
    if array is None or value is None or value.owner not in _EVALUATED:
        return array
    return array.copy()  # the cache's own stays as it was computed


_EVALUATED: weakref.WeakKeyDictionary[Operation, list[np.ndarray]] = weakref.WeakKeyDictionary()
"""Every op evaluated so far, with its results. An op's values never change (rewrites
keep what values mean), so a cone evaluated for one node is not evaluated again for the
next: Swin-T's masks, whose cones hold hundreds of ops, were evaluated for each of the
nodes that read them, the longest part of its lowering. Only successes are kept: an op
not evaluable now (an operand not lowered yet) may be later."""


class _Folder:
    """One evaluation of a constant cone, each op evaluated once.

    Exporters' shape chains are DAGs that share subexpressions (the same
    `Shape` feeds many `Gather`s); walking them as trees costs exponential
    time on a transformer's graph.
    """

    def __init__(self) -> None:
        self.done: dict[Operation, list[np.ndarray] | None] = {}

    def array(self, value: SSAValue | None, depth: int) -> np.ndarray | None:
        if value is None:
            return None
        owner = value.owner
        if not isinstance(owner, Operation):
            return None
        if not owner.operands and "value" in owner.properties:
            return _constant_data(owner)
        if owner not in self.done:
            outs = _EVALUATED.get(owner)
            if outs is None:
                outs = self._evaluate(owner, depth)
                if outs is not None:
                    for out in outs:  # shared from now on: nothing may write to it
                        out.flags.writeable = False
                    _EVALUATED[owner] = outs
            self.done[owner] = outs
        outs = self.done[owner]
        return None if outs is None else outs[list(owner.results).index(value)]

    def _evaluate(self, owner: Operation, depth: int) -> list[np.ndarray] | None:
        if depth > 64 or not owner.name.startswith("core."):
            return None
        if owner.regions or not all(is_static(r.type) for r in owner.results):
            return None
        if any(int(np.prod(shape_of_type(r.type) or ())) > FOLD_LIMIT for r in owner.results):
            return None
        args = [self.array(v, depth + 1) for v in owner.operands]
        if any(a is None for a in args):
            return None
        from rung.dialects.core_eval import CoreInterpreter

        try:
            interp = CoreInterpreter(owning_module(owner))
            outs = interp.eval(owner, dict(zip(owner.operands, args, strict=True)))
        except Exception:  # noqa: BLE001  (folding is best effort: no constant, no folding)
            return None
        return [np.asarray(o) for o in outs]


def constant_ints(value: SSAValue | None) -> list[int] | None:
    """The data of a constant operand as a flat list of ints (axes, pads, shapes)."""
    array = constant_array(value)
    return None if array is None else [int(v) for v in array.reshape(-1)]


__all__ = ["FOLD_LIMIT", "constant_array", "constant_ints"]
