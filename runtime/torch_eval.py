"""Runs a torch-dialect module op by op with torch's own kernels (the `torch` level).

Each ATen op calls `torch.ops.<ns>.<op>.<overload>` with its arguments by
schema name; `torch.constant` reads its resource; `torch.sym.*` and
`arith.constant` compute sizes as Python numbers. Inputs and outputs are
numpy arrays, as at every level.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.arith import ConstantOp as ArithConstantOp
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, DenseResourceAttr, ModuleOp
from xdsl.dialects.func import ReturnOp
from xdsl.ir import Attribute, SSAValue

from rung.dialects.dtypes import numpy_dtype
from rung.dialects.resources import resource_bytes
from rung.dialects.signature import main_function
from rung.dialects.torch import ConstantOp, SymBinaryOp, SymUnaryOp, TorchOp
from rung.errors import RungError
from rung.runtime.levels import EvaluationError

_BINARY = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "floordiv": operator.floordiv,
    "truediv": operator.truediv,
    "mod": operator.mod,
    "pow": operator.pow,
    "max": max,
    "min": min,
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
    "and": lambda a, b: bool(a) and bool(b),
    "or": lambda a, b: bool(a) or bool(b),
}
_UNARY = {
    "neg": operator.neg,
    "not": operator.not_,
    "float": float,
    "int": int,
    "ceil": math.ceil,
    "floor": math.floor,
}


def torch_dtype(element: Attribute) -> Any:
    import torch

    dtype = numpy_dtype(element)
    if dtype == np.bool_:
        return torch.bool
    return torch.from_numpy(np.zeros(0, dtype)).dtype


def _tensor(value: object) -> Any:
    import torch

    array = np.ascontiguousarray(np.asarray(value))
    return torch.from_numpy(array.copy())


def _constant(op: ConstantOp, module: ModuleOp) -> Any:
    import torch

    attr = op.value
    element = attr.get_type().get_element_type()  # type: ignore[union-attr]
    shape = list(attr.get_type().get_shape())  # type: ignore[union-attr]
    dtype = torch_dtype(element)
    if isinstance(attr, DenseResourceAttr):
        raw = resource_bytes(attr, module)
        flat = (
            torch.frombuffer(bytearray(raw), dtype=torch.uint8)
            if raw
            else torch.empty(0, dtype=torch.uint8)
        )
        return flat.view(dtype).reshape(shape).clone()
    assert isinstance(attr, DenseIntOrFPElementsAttr)
    values = np.asarray(attr.get_values(), dtype=numpy_dtype(element)).reshape(shape)
    return _tensor(values)


def _call(op: TorchOp, values: dict[SSAValue, Any]) -> list[Any]:
    import torch

    schema = op.SCHEMA
    packet = getattr(getattr(torch.ops, schema.namespace), schema.op)
    overload = getattr(packet, schema.overload or "default")
    kwargs: dict[str, Any] = {}

    def plain(v: object) -> object:
        if isinstance(v, SSAValue):
            return values[v]
        if isinstance(v, list):
            return [plain(x) for x in v]
        if isinstance(v, Attribute):  # a ScalarType
            return torch_dtype(v)
        return v

    for arg in schema.args:
        if arg.is_tensor:
            if arg.type in ("Tensor[]", "Tensor?[]"):
                kwargs[arg.name] = [None if v is None else values[v] for v in _group(op, arg)]
            else:
                value = getattr(op, arg.field)
                kwargs[arg.name] = None if value is None else values[value]
            continue
        if arg.name not in op.properties:
            continue
        value = op.arg(arg.name)
        if arg.base == "Device":
            value = torch.device(value)  # type: ignore[arg-type]
        elif arg.base in ("Layout", "MemoryFormat") and isinstance(value, str):
            value = getattr(torch, value.removeprefix("torch."))
        kwargs[arg.name] = plain(value)
    positional = []
    for a in schema.args:  # by position up to the first argument left out, then by name
        if a.kwarg_only or a.name not in kwargs:
            break
        positional.append(kwargs.pop(a.name))
    out = overload(*positional, **kwargs)
    if len(schema.returns) == 1 and schema.returns[0].type == "Tensor[]":
        return list(out)
    if len(schema.returns) > 1:
        return list(out)
    return [out] if schema.returns else []


def _group(op: TorchOp, arg: object) -> list[SSAValue | None]:
    for a, group in zip(op.SCHEMA.tensor_args, op.tensor_args(), strict=True):
        if a is arg:
            return group  # type: ignore[return-value]
    return []


def evaluate(module: ModuleOp, inputs: Sequence[object]) -> list[object]:
    """The torch level's evaluator: run the module's main function op by op with torch."""
    import torch

    func = main_function(module)
    values: dict[SSAValue, Any] = {}
    for arg, value in zip(func.args, inputs, strict=True):
        values[arg] = _tensor(value)
    with torch.no_grad():
        for op in func.body.block.ops:
            try:
                if isinstance(op, ReturnOp):
                    return [_numpy(values[v]) for v in op.arguments]
                if isinstance(op, ConstantOp):
                    results = [_constant(op, module)]
                elif isinstance(op, ArithConstantOp):
                    results = [op.value.value.data]  # type: ignore[union-attr]
                elif isinstance(op, SymBinaryOp):
                    results = [_BINARY[op.fn.data](values[op.lhs], values[op.rhs])]
                elif isinstance(op, SymUnaryOp):
                    results = [_UNARY[op.fn.data](values[op.x])]
                elif isinstance(op, TorchOp):
                    results = _call(op, values)
                else:
                    raise RungError(f"the torch level cannot run '{op.name}'")
            except RungError:
                raise
            except Exception as err:
                text = str(err).strip().splitlines()[0] if str(err).strip() else ""
                raise EvaluationError(
                    f"torch failed on '{op.name}': {type(err).__name__}: {text}"
                ) from err
            for result, value in zip(op.results, results, strict=True):
                values[result] = value.item() if isinstance(value, torch.SymInt) else value
    raise RungError("the main function has no return")


def _numpy(value: Any) -> np.ndarray:
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    return np.asarray(value)


__all__ = ["evaluate", "torch_dtype"]
