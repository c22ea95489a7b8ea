"""Fault injection for `rung compare`'s tests: lowerings and a level that get one node wrong.

* `register(registry)` (what `--load-plugin` calls): the ONNX → core lowering
  of Sigmoid, as rung's own, plus 0.5 for the node named `ONNX_FAULT`; every
  level from core down then computes that node wrongly.
* `register_kernel_fault(registry)`: the core → kernel lowering of `core.unary`,
  as rung's own, plus 0.5 for the op located at `KERNEL_FAULT`; only the kernel
  level is wrong.
* `register_levels(register_level)` (what `--load-level` calls): a level
  `onnx-faulty`, the onnx level's evaluator with 0.5 added to the results of
  the node `ONNX_FAULT`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp, NameLoc
from xdsl.ir import Operation, SSAValue

ONNX_FAULT = "blk7_Sigmoid"
KERNEL_FAULT = "blk11_Sigmoid"
FAULTY_LEVEL = "onnx-faulty"


def _located_at(op: Operation, name: str) -> bool:
    return isinstance(op.location, NameLoc) and op.location.desc.data == name


def _faulty_sigmoid(b: Any, op: Any) -> list[SSAValue]:
    y = b.unary("sigmoid", op.X)
    if _located_at(op, ONNX_FAULT):
        y = b.binary("add", y, b.splat(0.5, y))
    return [y]


def unary_fault(node: str) -> Callable[[Any, Any], list[SSAValue]]:
    """A core → kernel lowering of `core.unary` that adds 0.5 at the op located at `node`."""

    def lower(b: Any, op: Any) -> list[SSAValue]:
        from rung.lowering.core_to_kernel.elementwise import map_elements, unary

        if not _located_at(op, node):
            return unary(b, op)
        fn = op.fn.data
        element = op.result.type.element_type

        def wrong(b: Any, x: SSAValue) -> SSAValue:
            return b.binary("add", b.unary(fn, x), b.const(0.5, element))

        return map_elements(b, op, [b.buffer(op.input)], wrong)

    return lower


def register(registry: Any) -> None:
    """The ONNX → core fault (seen at levels core and kernel)."""
    from rung.dialects.onnx import generated_ops as onnx

    registry.add_lowering(onnx.SigmoidOp, _faulty_sigmoid, replace=True)


def register_kernel_fault(registry: Any, node: str = KERNEL_FAULT) -> None:
    """The core → kernel fault (seen at level kernel only)."""
    from rung.dialects import core

    registry.add_lowering(core.UnaryOp, unary_fault(node), replace=True)


def _faulty_evaluate(module: ModuleOp, inputs: Sequence[object]) -> list[object]:
    from rung.runtime.onnx_eval import OnnxEvaluator

    class Faulty(OnnxEvaluator):
        def eval_op(self, op: Operation, env: dict[SSAValue, object]) -> list[object]:
            results = super().eval_op(op, env)
            if _located_at(op, ONNX_FAULT):
                return [np.asarray(r + np.float32(0.5), dtype=r.dtype) for r in results]  # type: ignore[operator, union-attr]
            return results

    return Faulty(module).run(inputs)


def register_levels(register_level: Callable[..., Any]) -> None:
    """The onnx level with the fault in its evaluator."""
    register_level(
        FAULTY_LEVEL,
        lowering=None,
        evaluator=_faulty_evaluate,
        from_level="onnx",
        description="the onnx level, with node blk7_Sigmoid off by 0.5 (a test fault)",
    )
