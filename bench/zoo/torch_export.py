"""Exporting a torch model of the zoo with either of `torch.onnx.export`'s exporters.

`torchscript` traces the model (`dynamo=False`) and is told the dynamic axes
of inputs and outputs; `dynamo` captures it with `torch.export` (`dynamo=True`)
and is given a `torch.export.Dim` per named axis, shared between inputs, so
that axes with one name are one symbol. Both get the same example inputs.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .spec import ModelSpec

if TYPE_CHECKING:
    import torch

TORCHSCRIPT_OPSET = 17
DYNAMO_OPSET = 18


def example_inputs(spec: ModelSpec) -> tuple[torch.Tensor, ...]:
    """The export's example tensors, at sizes no exporter specializes (see EXAMPLE_SIZES)."""
    import torch

    feeds = spec.feeds(spec.example_sizes())
    return tuple(torch.from_numpy(np.ascontiguousarray(feeds[i.name])) for i in spec.inputs)


def export(spec: ModelSpec, module: torch.nn.Module, path: Path) -> None:
    """Write `module` as ONNX to `path` with the spec's exporter."""
    import torch

    args = example_inputs(spec)
    input_names = [i.name for i in spec.inputs]
    output_names = [o.name for o in spec.outputs]
    # The TorchScript exporter traces with gradients on: under torch.no_grad()
    # nn.MultiheadAttention takes its fused fast path, which it cannot export.
    # torch.export does better without gradients (T5's attention fails with them).
    grad = torch.enable_grad() if spec.exporter == "torchscript" else torch.no_grad()
    with warnings.catch_warnings(), grad:
        warnings.simplefilter("ignore")
        if spec.exporter == "torchscript":
            axes = {i.name: i.dynamic_axes() for i in spec.inputs if i.dynamic_axes()}
            axes.update({o.name: o.axes for o in spec.outputs if o.axes})
            torch.onnx.export(
                module,
                args,
                str(path),
                dynamo=False,
                input_names=input_names,
                output_names=output_names,
                dynamic_axes=axes,
                opset_version=TORCHSCRIPT_OPSET,
            )
        elif spec.exporter == "dynamo":
            torch.onnx.export(
                module,
                args,
                str(path),
                dynamo=True,
                input_names=input_names,
                output_names=output_names,
                dynamic_shapes=_dynamic_shapes(spec, module),
                opset_version=DYNAMO_OPSET,
                external_data=False,
                verbose=False,
            )
        else:
            raise ValueError(f"unknown torch exporter '{spec.exporter}'")


def _dynamic_shapes(spec: ModelSpec, module: torch.nn.Module) -> tuple[object, ...] | None:
    """One `Dim` per axis name, shared by the inputs (None for inputs with no dynamic axis)."""
    import torch

    if not spec.dynamic_axes:
        return None
    dims = {name: torch.export.Dim(name) for name in spec.dynamic_axes}
    shapes = [
        {axis: dims[name] for axis, name in i.dynamic_axes().items()} or None for i in spec.inputs
    ]
    return _by_parameter(module, shapes)


def _by_parameter(module: torch.nn.Module, shapes: list[object]) -> tuple[object, ...]:
    """Per-input shapes grouped as `forward`'s parameters: a `*args` takes a tuple of the rest."""
    import inspect

    params = list(inspect.signature(module.forward).parameters.values())
    for i, param in enumerate(params):
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            return (*shapes[:i], tuple(shapes[i:]))
    return tuple(shapes)
