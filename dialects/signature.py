"""The names a model gives its inputs and outputs, whichever frontend imported it.

A framework dialect records, on each argument and result of the function a
model runs, the name the source gave it and the names of its symbolic dims:
`onnx.name` / `onnx.dim_params` for ONNX, `torch.name` / `torch.dim_params`
for PyTorch. Every level below keeps these attributes; code that needs a
name (the C signature, `InferenceSession.get_inputs()`) reads them here.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute

from rung.errors import RungError

FRONTENDS = ("onnx", "torch")
"""The prefixes of the frontends' signature attributes, in the order they are looked up."""


def io_attribute(attrs: ArrayAttr | None, index: int, key: str) -> Attribute | None:
    """`<frontend>.<key>` of one entry of a function's arg_attrs / res_attrs, if any."""
    if attrs is None or index >= len(attrs.data):
        return None
    entry = attrs.data[index]
    if not isinstance(entry, DictionaryAttr):
        return None
    for frontend in FRONTENDS:
        value = entry.data.get(f"{frontend}.{key}")
        if value is not None:
            return value
    return None


def io_name(attrs: ArrayAttr | None, index: int) -> str | None:
    """The source's name of one input or output, if it recorded one."""
    attr = io_attribute(attrs, index, "name")
    return attr.data if isinstance(attr, StringAttr) else None


def io_dim_params(attrs: ArrayAttr | None, index: int) -> list[str]:
    """The symbolic dim names of one input or output ('' where a dim has none)."""
    attr = io_attribute(attrs, index, "dim_params")
    if not isinstance(attr, ArrayAttr):
        return []
    return [a.data if isinstance(a, StringAttr) else "" for a in attr.data]


def io_names(func: FuncOp) -> tuple[list[str], list[str]]:
    """The source's names of a function's inputs and outputs (else `input_<i>`, `output_<i>`)."""
    ins = [io_name(func.arg_attrs, i) or f"input_{i}" for i in range(len(func.args))]
    outs = [
        io_name(func.res_attrs, i) or f"output_{i}"
        for i in range(len(func.function_type.outputs.data))
    ]
    return ins, outs


def main_function(module: ModuleOp) -> FuncOp:
    """The function a model runs: the module's only (or first public) `func.func`."""
    funcs = [op for op in module.body.block.ops if isinstance(op, FuncOp)]
    if not funcs:
        raise RungError("the module has no func.func to run")
    public = [f for f in funcs if f.sym_visibility is None or f.sym_visibility.data == "public"]
    return (public or funcs)[0]


__all__ = [
    "FRONTENDS",
    "io_attribute",
    "io_dim_params",
    "io_name",
    "io_names",
    "main_function",
]
