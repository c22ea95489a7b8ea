"""`torch.compile(model, backend="rung")`: each graph torch captures, compiled by rung.

torch finds the backend through the `torch_dynamo_backends` entry point that
rung's package declares, so no import is needed. For each graph torch's
dynamo hands over, the backend exports it with `torch.export`, imports it,
lowers it to `kernel` (compiled C) and returns a function that runs the
library. A graph rung cannot take (an op without a lowering, symbolic sizes
dynamo introduced, an export failure) runs eagerly instead, with one warning
that names the reason, op and source line included: a model always runs.
Calls that need gradients run eagerly too, since rung's code computes no
backward pass.

    compiled = torch.compile(model, backend="rung")
    compiled(x)                                  # rung's code, under torch.no_grad()
    torch.compile(model, backend="rung", options={"level": "core"})
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rung.errors import RungError


class RungFallbackWarning(UserWarning):
    """A graph that rung could not compile runs eagerly in torch."""


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def compile_graph(gm: Any, example_inputs: Sequence[Any], level: str = "kernel") -> Callable:
    """The function that runs `gm` (an FX graph from torch.compile) through rung."""
    import torch

    from .session import InferenceSession

    if not all(isinstance(t, torch.Tensor) for t in example_inputs):
        raise RungError("the graph takes symbolic sizes as inputs (dynamic shapes from dynamo)")
    try:
        program = torch.export.export(gm, tuple(example_inputs), strict=False)
    except Exception as err:  # torch cannot export the graph: one line
        raise RungError(f"torch.export failed on the graph: {_first_line(err)}") from None
    session = InferenceSession(program, level=level)
    names = [i.name for i in session.get_inputs()]
    out_spec = program.call_spec.out_spec

    def run(*args: Any) -> Any:
        feed = {n: a.detach().cpu().numpy() for n, a in zip(names, args, strict=True)}
        outputs = [torch.from_numpy(np.array(o, copy=True)) for o in session.run(None, feed)]
        if out_spec is None:
            return outputs
        return torch.utils._pytree.tree_unflatten(outputs, out_spec)

    return run


def rung_backend(gm: Any, example_inputs: Sequence[Any], **kwargs: Any) -> Callable:
    """The `torch.compile` backend: rung's compiled graph, or eager with one warning."""
    import torch

    options = kwargs.get("options") or {}
    level = str(options.get("level", "kernel"))
    try:
        compiled = compile_graph(gm, example_inputs, level)
    except RungError as err:
        warnings.warn(
            f"rung: running this graph eagerly: {err.message}", RungFallbackWarning, stacklevel=2
        )
        return gm.forward

    warned: list[bool] = []

    def call(*args: Any) -> Any:
        needs_grad = torch.is_grad_enabled() and any(
            isinstance(a, torch.Tensor) and a.requires_grad for a in args
        )
        if needs_grad:
            if not warned:
                warned.append(True)
                warnings.warn(
                    "rung: gradients are required, so this graph runs eagerly "
                    "(call the model under torch.no_grad() or torch.inference_mode())",
                    RungFallbackWarning,
                    stacklevel=2,
                )
            return gm.forward(*args)
        return compiled(*args)

    return call


__all__ = ["RungFallbackWarning", "compile_graph", "rung_backend"]
