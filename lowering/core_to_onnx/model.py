"""A core-dialect module as a checked ONNX ModelProto: convert, rebuild, check.

`module_to_model` (the importer run backwards) writes the converted module;
here its top-level Constant nodes become initializers, as weights are in
ONNX files, and onnx.checker confirms the model is valid before anyone
writes it.
"""

from __future__ import annotations

import onnx
from onnx import ModelProto, helper
from xdsl.dialects.builtin import ModuleOp

from rung.errors import RungError

from .lower_pass import convert_core_to_onnx

PRODUCER = "rung"


def constants_to_initializers(model: ModelProto) -> None:
    """Move the main graph's Constant nodes holding a tensor into its initializers."""
    graph = model.graph
    keep = []
    for node in graph.node:
        attrs = {a.name: a for a in node.attribute}
        if (
            node.op_type == "Constant"
            and node.domain in ("", "ai.onnx")
            and set(attrs) == {"value"}
        ):
            tensor = onnx.TensorProto()
            tensor.CopyFrom(attrs["value"].t)
            tensor.name = node.output[0]
            graph.initializer.append(tensor)
            continue
        keep.append(node)
    del graph.node[:]
    graph.node.extend(keep)
    outputs = {o.name for o in graph.output}
    infos = [vi for vi in graph.value_info if vi.name not in {t.name for t in graph.initializer}]
    del graph.value_info[:]
    graph.value_info.extend(vi for vi in infos if vi.name not in outputs)


def onnx_module_to_model(module: ModuleOp, check: bool = True) -> ModelProto:
    """An onnx-dialect module as a ModelProto with weights as initializers, checked."""
    from rung.importers.onnx.export import module_to_model

    model = module_to_model(module)
    constants_to_initializers(model)
    needed = helper.find_min_ir_version_for(list(model.opset_import), ignore_unknown=True)
    model.ir_version = max(model.ir_version, needed)
    model.producer_name = PRODUCER
    if check:
        check_model(model)
    return model


def core_module_to_model(module: ModuleOp, check: bool = True) -> ModelProto:
    """Convert a core-dialect module (in place) and write it as an ONNX model."""
    from xdsl.utils.exceptions import VerifyException

    convert_core_to_onnx(module)
    try:
        module.verify()
    except VerifyException as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else ""
        raise RungError(f"the exported model is not valid ONNX: {first}") from None
    return onnx_module_to_model(module, check)


def check_model(model: ModelProto) -> None:
    """onnx.checker on the model (its 2 GB protobuf limit aside); a failure is rung's bug."""
    if model.ByteSize() >= 2**31 - 1:
        raise RungError("the exported model is larger than 2 GB, which one ONNX file cannot hold")
    try:
        onnx.checker.check_model(model)
    except onnx.checker.ValidationError as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else ""
        raise RungError(f"the exported model fails onnx.checker: {first}") from None


__all__ = [
    "PRODUCER",
    "check_model",
    "constants_to_initializers",
    "core_module_to_model",
    "onnx_module_to_model",
]
