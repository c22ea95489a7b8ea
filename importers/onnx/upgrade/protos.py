"""Small NodeProto helpers the rules share: attributes, inputs, subgraphs, dtypes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from onnx import AttributeProto, GraphProto, NodeProto, TensorProto, helper

from rung.errors import RungError


def find_attr(node: NodeProto, name: str) -> AttributeProto | None:
    for a in node.attribute:
        if a.name == name:
            return a
    return None


def get_attr(node: NodeProto, name: str, default: Any = None) -> Any:
    """An attribute's Python value, or `default` when absent."""
    a = find_attr(node, name)
    if a is None:
        return default
    if a.ref_attr_name:
        raise RungError(
            f"attribute '{name}' of {node.op_type} refers to function attribute "
            f"'{a.ref_attr_name}'; its value is needed to upgrade the op — inline the function first"
        )
    value = helper.get_attribute_value(a)
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, list) and value and isinstance(value[0], bytes):
        return [v.decode() for v in value]
    return value


def pop_attr(node: NodeProto, name: str, default: Any = None) -> Any:
    """Remove an attribute, returning its value (or `default` if it was absent)."""
    value = get_attr(node, name, default)
    for i, a in enumerate(node.attribute):
        if a.name == name:
            del node.attribute[i]
            break
    return value


def set_attr(node: NodeProto, name: str, value: object) -> None:
    pop_attr(node, name)
    node.attribute.append(helper.make_attribute(name, value))


def ints(value: Any) -> list[int]:
    return [int(v) for v in value]


def input_at(node: NodeProto, i: int) -> str:
    """Input `i`, or "" when the optional input is absent."""
    return node.input[i] if i < len(node.input) else ""


def set_input(node: NodeProto, i: int, name: str) -> None:
    while len(node.input) <= i:
        node.input.append("")
    node.input[i] = name
    while node.input and not node.input[-1]:
        node.input.pop()


def subgraphs(node: NodeProto) -> Iterator[GraphProto]:
    for a in node.attribute:
        if a.type == AttributeProto.GRAPH:
            yield a.g
        elif a.type == AttributeProto.GRAPHS:
            yield from a.graphs


def np_dtype(elem_type: int) -> np.dtype:
    return np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))


FLOAT_TYPES = frozenset(
    {TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BFLOAT16}
)
