"""rung as an ONNX backend (`onnx.backend.base.Backend`), so ONNX's own test harness can drive it.

    import rung.runtime.backend as backend

    rep = backend.prepare(model)                 # compiled at level kernel
    outputs = rep.run([x, y])                    # a tuple, in the model's output order
    backend.run_node(node, [x, y])               # one node, wrapped in a one-node model

Models run through `InferenceSession` at the `kernel` level (another level can
be asked for with `prepare(model, level="core")`). Only the CPU is supported.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import ModelProto, NodeProto, helper
from onnx.backend.base import Backend, BackendRep, Device, DeviceType, namedtupledict

from rung.errors import RungError

from .session import InferenceSession

DEFAULT_LEVEL = "kernel"

_IGNORED_OPTIONS = ("rtol", "atol")
"""Options ONNX's test runner may pass to `prepare`; they concern its comparison, not us."""


class RungBackendRep(BackendRep):
    """A prepared model: `run(inputs)` feeds them positionally (or by name) to the session."""

    def __init__(self, session: InferenceSession) -> None:
        self.session = session
        self.input_names = [i.name for i in session.get_inputs()]
        self.output_names = [o.name for o in session.get_outputs()]

    def run(self, inputs: Any, **kwargs: Any) -> tuple[Any, ...]:
        if kwargs:
            raise RungError(f"unknown run options: {', '.join(sorted(kwargs))}")
        feed = self._feed(inputs)
        outputs = self.session.run(None, feed)
        return namedtupledict("Outputs", self.output_names)(*outputs)

    def _feed(self, inputs: Any) -> dict[str, object]:
        if isinstance(inputs, Mapping):
            return dict(inputs)
        if isinstance(inputs, np.ndarray):
            inputs = [inputs]
        if not isinstance(inputs, Sequence):
            raise RungError(
                f"inputs must be a list of arrays or a dict of name -> array, "
                f"got {type(inputs).__name__}"
            )
        if len(inputs) > len(self.input_names):
            raise RungError(f"the model takes {len(self.input_names)} inputs, got {len(inputs)}")
        # Inputs left out at the end are optional ones (the session reports any that are not).
        return dict(zip(self.input_names, inputs, strict=False))


class RungBackend(Backend):
    """The ONNX backend API over `InferenceSession` (compiled code at level kernel)."""

    @classmethod
    def is_compatible(cls, model: ModelProto, device: str = "CPU", **kwargs: Any) -> bool:
        return cls.supports_device(device)

    @classmethod
    def prepare(
        cls, model: ModelProto | str | os.PathLike[str], device: str = "CPU", **kwargs: Any
    ) -> RungBackendRep:
        level = kwargs.pop("level", DEFAULT_LEVEL)
        unknown = sorted(k for k in kwargs if k not in _IGNORED_OPTIONS)
        if unknown:
            raise RungError(f"unknown prepare options: {', '.join(unknown)}")
        if not cls.supports_device(device):
            raise RungError(f"rung runs on the CPU only, not on '{device}'")
        if isinstance(model, ModelProto):
            super().prepare(model, device)  # onnx.checker, as every backend does
        return RungBackendRep(InferenceSession(model, level=level))

    @classmethod
    def run_model(
        cls, model: ModelProto, inputs: Any, device: str = "CPU", **kwargs: Any
    ) -> tuple[Any, ...]:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(
        cls,
        node: NodeProto,
        inputs: Any,
        device: str = "CPU",
        outputs_info: Sequence[tuple[np.dtype, tuple[int, ...]]] | None = None,
        **kwargs: Any,
    ) -> tuple[Any, ...]:
        """Run one node: it becomes a one-node model whose inputs are the given arrays."""
        super().run_node(node, inputs, device, outputs_info, **kwargs)
        opset = kwargs.pop("opset_version", None)
        model = node_model(node, inputs, outputs_info, opset)
        return cls.run_model(model, _positional(node, inputs), device, **kwargs)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        try:
            return Device(device).type == DeviceType.CPU
        except (AttributeError, ValueError):
            return False


def _positional(node: NodeProto, inputs: Any) -> list[object]:
    if isinstance(inputs, Mapping):
        return [inputs[name] for name in node.input if name]
    return list(inputs)


def node_model(
    node: NodeProto,
    inputs: Any,
    outputs_info: Sequence[tuple[np.dtype, tuple[int, ...]]] | None = None,
    opset: int | None = None,
) -> ModelProto:
    """A model of one node; its input types come from the arrays, output types from
    `outputs_info` or ONNX shape inference."""
    names = [name for name in node.input if name]
    values = _positional(node, inputs)
    if len(values) != len(names):
        raise RungError(f"node '{node.op_type}' has {len(names)} inputs, got {len(values)} values")
    graph_inputs = []
    for name, value in zip(names, values, strict=True):
        array = np.asarray(value)
        elem = helper.np_dtype_to_tensor_dtype(array.dtype)
        graph_inputs.append(helper.make_tensor_value_info(name, elem, list(array.shape)))
    outs = [name for name in node.output if name]
    if outputs_info is not None:
        graph_outputs = [
            helper.make_tensor_value_info(
                name, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), list(shape)
            )
            for name, (dtype, shape) in zip(outs, outputs_info, strict=True)
        ]
    else:
        graph_outputs = [helper.make_empty_tensor_value_info(name) for name in outs]
    domain = node.domain if node.domain not in ("", "ai.onnx") else ""
    if opset is None:
        opset = onnx.defs.onnx_opset_version() if domain == "" else 1
    graph = helper.make_graph([node], f"{node.op_type}_node", graph_inputs, graph_outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(domain, opset)])
    if outputs_info is None:
        model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
        inferred = {v.name: v for v in model.graph.value_info}
        graph_outputs = list(model.graph.output)
        typed = [inferred.get(n, out) for n, out in zip(outs, graph_outputs, strict=True)]
        del model.graph.output[:]
        model.graph.output.extend(typed)
    return model


prepare = RungBackend.prepare
run_model = RungBackend.run_model
run_node = RungBackend.run_node
supports_device = RungBackend.supports_device
is_compatible = RungBackend.is_compatible

__all__ = [
    "RungBackend",
    "RungBackendRep",
    "is_compatible",
    "node_model",
    "prepare",
    "run_model",
    "run_node",
    "supports_device",
]
