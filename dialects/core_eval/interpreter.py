"""The interpreter proper: the table of op handlers, and the walk over blocks that uses it.

A handler restates one core op in numpy. It gets the `Scope` the op runs in,
the op, and its operand values, and returns one value per result:

    @evaluates(core.MatmulOp)
    def matmul(ev: Scope, op: core.MatmulOp, args: Args) -> list[Value]:
        ...

Values are numpy arrays, except that a `core.list` is a Python list of arrays
(never changed in place) and a `core.optional` is its value or None, as ONNX
runtimes pass them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, TypeVar

import numpy as np
from xdsl.dialects.builtin import BFloat16Type, Float16Type, ModuleOp, NameLoc, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, SSAValue

from rung.dialects import core
from rung.dialects.dtypes import numpy_dtype
from rung.errors import EvaluationError, RungError, UnsupportedOpError

Value = Any
"""An array, a list of arrays (`core.list`), or an array or None (`core.optional`)."""

Args = list[Value]
Env = dict[SSAValue, Value]


class Scope(NamedTuple):
    """Where an op runs: the interpreter, and every value visible there.

    Ops with regions need the values in scope, since their blocks read values
    defined outside them; the others only read `ev.module` at most.
    """

    interpreter: CoreInterpreter
    env: Env

    @property
    def module(self) -> ModuleOp:
        return self.interpreter.module

    def run_region(self, block: Block, bindings: Sequence[Value] = ()) -> list[Value]:
        """Runs a nested block, its arguments bound to `bindings`, up to its `core.yield`."""
        inner = dict(self.env)
        inner.update(zip(block.args, bindings, strict=True))
        return self.interpreter.run_ops(block, inner, core.YieldOp)


Handler = Callable[[Scope, Any, Args], list[Value]]
H = TypeVar("H", bound=Handler)

HANDLERS: dict[type[Operation], Handler] = {}
"""The semantics of each core op, by op class."""


def evaluates(*op_types: type[Operation]) -> Callable[[H], H]:
    """Register a handler as the semantics of core op classes."""

    def register(handler: H) -> H:
        for cls in op_types:
            if cls in HANDLERS:
                raise ValueError(f"two interpreter handlers for {cls.name}")
            HANDLERS[cls] = handler
        return handler

    return register


class CoreInterpreter:
    """Evaluates the functions of a core-dialect module on numpy inputs."""

    def __init__(self, module: ModuleOp) -> None:
        self.module = module

    def run(self, func: FuncOp, args: Sequence[Value]) -> list[Value]:
        return self.run_block(func.body.block, args, ReturnOp)

    def run_block(self, block: Block, args: Sequence[Value], terminator: type) -> list[Value]:
        env: Env = dict(zip(block.args, args, strict=True))
        return self.run_ops(block, env, terminator)

    def run_ops(self, block: Block, env: Env, terminator: type) -> list[Value]:
        """Runs `block`'s ops in `env` (which it extends) and gives the terminator's operands."""
        for op in block.ops:
            if isinstance(op, terminator):
                return [env[v] for v in op.operands]
            results = self.eval(op, env)
            for value, result in zip(op.results, results, strict=True):
                env[value] = result
        raise RungError("block has no terminator")

    def eval(self, op: Operation, env: Env) -> list[Value]:
        """The values of `op`'s results, its operands read from `env`."""
        handler = HANDLERS.get(type(op))
        if handler is None:
            raise UnsupportedOpError(f"the core interpreter cannot run '{op.name}'")
        try:
            return handler(Scope(self, env), op, [env[v] for v in op.operands])
        except (ValueError, IndexError, MemoryError, OverflowError) as err:
            # numpy's refusals of run-time values the IR did not check (a size too large
            # to allocate, say): the run fails, naming the node, as the kernel level does.
            if isinstance(err, RungError):
                raise
            loc = op.location
            node = f"node '{loc.desc.data}'" if isinstance(loc, NameLoc) else "an unnamed node"
            detail = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            raise EvaluationError(f"{node}: '{op.name}' failed: {detail}") from None


# ---- helpers the handlers share -------------------------------------------------------


def result_dtype(value: SSAValue) -> np.dtype:
    return numpy_dtype(value.type.element_type)  # type: ignore[attr-defined]


def static_shape(value: SSAValue) -> tuple[int, ...] | None:
    t = value.type
    if isinstance(t, TensorType) and all(d >= 0 for d in t.get_shape()):
        return tuple(t.get_shape())
    return None


def ints(attr: Attribute | None) -> tuple[int, ...]:
    return core.ints_of(attr)


def accumulator(element: Attribute) -> np.dtype:
    """The dtype sums of `element` are taken in: f32 for f16/bf16, as the kernel level
    does (rounding each partial sum to 11 or 8 bits loses whole terms), else itself."""
    if isinstance(element, Float16Type | BFloat16Type):
        return np.dtype(np.float32)
    return numpy_dtype(element)


def lowest(dtype: np.dtype) -> np.ndarray:
    """The identity of max: -inf, the smallest integer, or false."""
    if dtype == np.bool_:
        return np.array(False)
    if np.issubdtype(dtype, np.integer):
        return np.array(np.iinfo(dtype).min, dtype=dtype)
    return np.array(-np.inf).astype(dtype)


def highest(dtype: np.dtype) -> np.ndarray:
    """The identity of min: +inf, the largest integer, or true."""
    if dtype == np.bool_:
        return np.array(True)
    if np.issubdtype(dtype, np.integer):
        return np.array(np.iinfo(dtype).max, dtype=dtype)
    return np.array(np.inf).astype(dtype)


__all__ = [
    "HANDLERS",
    "Args",
    "CoreInterpreter",
    "Env",
    "Scope",
    "Value",
    "accumulator",
    "evaluates",
    "highest",
    "ints",
    "lowest",
    "result_dtype",
    "static_shape",
]
