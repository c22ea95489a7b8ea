"""Asking ONNX again about one onnx-dialect op: the types of its results.

ONNX shape inference runs once, at import, on the whole graph. Passes that
run later may know more about an op's operands than the import did (static
shapes, constant values). Writing the op alone as a one-node model, with the
known operand values as initializers, and running ONNX's inference on it
again gives its results the types ONNX derives from that knowledge.

The op goes out through `export` and the inferred types come back through
`convert`: the importer's own translations, in both directions.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import numpy as np
import onnx
from onnx import FunctionProto, ModelProto, NodeProto, TypeProto, helper, numpy_helper
from xdsl.ir import Attribute, SSAValue

from rung.dialects.onnx import OPSET_VERSIONS, OnnxOp
from rung.dialects.resources import owning_module
from rung.errors import RungError

from .convert import mlir_type
from .export import GraphExporter, type_proto, value_info
from .validate import einsum_syntax_error

ConstantOf = Callable[[SSAValue], np.ndarray | None]
"""The value of an operand when the caller knows it is a constant, else None."""


def _opsets(op: OnnxOp) -> dict[str, int]:
    opsets = {"": OPSET_VERSIONS[""]}
    domain = op.SCHEMA.domain
    opsets[domain] = OPSET_VERSIONS.get(domain, op.SCHEMA.version)
    return opsets


class NodeModel:
    """One onnx op as a NodeProto, its operands named `in0, in1, ...`.

    Operands whose value `constant_of` knows become initializers, so that
    ONNX's inference and data propagation see their contents; the others
    are graph inputs of the op's types.
    """

    def __init__(self, op: OnnxOp, constant_of: ConstantOf | None = None) -> None:
        self.op = op
        self.names: dict[SSAValue, str] = {}
        self.inputs: list[onnx.ValueInfoProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.input_types: list[TypeProto] = []
        for value in op.onnx_inputs():
            if value is None or value in self.names:
                self.input_types.append(TypeProto())
                continue
            name = f"in{len(self.names)}"
            self.names[value] = name
            tp = type_proto(value.type)
            self.input_types.append(tp if tp is not None else TypeProto())
            array = constant_of(value) if constant_of is not None else None
            if array is not None and array.dtype != object:
                self.initializers.append(numpy_helper.from_array(array, name))
            else:
                self.inputs.append(value_info(name, value.type))
        counter = itertools.count()

        def namer(value: SSAValue) -> str:
            if value not in self.names:
                self.names[value] = f"out{next(counter)}"
            return self.names[value]

        self.node: NodeProto = GraphExporter(owning_module(op), namer).node(op)

    def model(self, extra_functions: Sequence[FunctionProto] = ()) -> ModelProto:
        """The one-node model, at the dialect's opsets (and those of `extra_functions`)."""
        outputs = [
            value_info(self.names[v], v.type) for v in self.op.onnx_outputs() if v is not None
        ]
        graph = helper.make_graph(
            [self.node], "node", self.inputs, outputs, initializer=self.initializers
        )
        opsets = _opsets(self.op)
        for fn in extra_functions:
            # The checker wants a function's opsets to be the model's.
            opsets.update({o.domain: o.version for o in fn.opset_import})
            opsets[fn.domain] = 1
        return helper.make_model(
            graph,
            opset_imports=[helper.make_opsetid(d, v) for d, v in sorted(opsets.items())],
            functions=list(extra_functions),
        )


def infer_result_types(op: OnnxOp, constant_of: ConstantOf | None = None) -> list[Attribute | None]:
    """The types ONNX infers for `op`'s outputs, by ONNX position, when asked about it alone.

    None where an output is absent, or where ONNX infers nothing the dialect
    can spell. Inference is best effort: if ONNX fails on the node, every
    entry is None.
    """
    outputs = op.onnx_outputs()
    found: list[Attribute | None] = [None] * len(outputs)
    if _hangs_inference(op):
        return found
    try:
        node = NodeModel(op, constant_of)
        inferred = onnx.shape_inference.infer_shapes(
            node.model(), check_type=False, strict_mode=False, data_prop=True
        )
    except Exception:  # noqa: BLE001  (re-inference is best effort)
        return found
    types = {vi.name: vi.type for vi in (*inferred.graph.output, *inferred.graph.value_info)}
    for i, (result, name) in enumerate(zip(outputs, node.node.output, strict=False)):
        if result is None or name not in types:
            continue
        try:
            found[i] = mlir_type(types[name], name)
        except RungError:
            continue
    return found


def _hangs_inference(op: OnnxOp) -> bool:
    """Whether ONNX's inference of `op` would never return: an Einsum equation with a
    stray '.', '-' or '>' sends it into an endless loop."""
    if op.SCHEMA.op_type != "Einsum" or op.SCHEMA.domain != "":
        return False
    return einsum_syntax_error(str(op.attr("equation"))) is not None


__all__ = ["ConstantOf", "NodeModel", "infer_result_types"]
