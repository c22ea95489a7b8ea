"""The `convert-core-to-onnx` pass: every core op becomes the ONNX nodes that compute it.

Ops are converted in block order, so each handler sees its operands already
converted; regions of core.if / core.loop move into the new If / Loop and
are converted in place. A core op without a mapping stops the pass with its
name and location: a model that only almost matches is worse than none.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import (
    DictionaryAttr,
    FunctionType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    i64,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Operation, Region
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.transforms.dead_code_elimination import region_dce

from rung.dialects import core
from rung.dialects.onnx import CustomOp, OnnxOp, YieldOp

from .emitter import TABLE, Emitter, ExportError, describe, onnx_type

MIN_OPSET = 17
"""The oldest ai.onnx opset an exported model declares (newer when its ops need it)."""


class _Converter:
    """Converts the blocks of one module, keeping node names unique across it."""

    def __init__(self, module: ModuleOp) -> None:
        self.module = module
        self.names: set[str] = set()
        source = module.attributes.get("onnx.source")
        self.source = source.data if isinstance(source, StringAttr) else None

    def region(self, region: Region) -> None:
        for block in region.blocks:
            self.block(block)

    def block(self, block: Block) -> None:
        for arg in list(block.args):
            new_type = onnx_type(arg.type)
            if new_type != arg.type:
                Rewriter.replace_value_with_new_type(arg, new_type)
        for op in list(block.ops):
            self.op(op)

    def op(self, op: Operation) -> None:
        if isinstance(op, core.YieldOp):
            Rewriter.replace_op(op, YieldOp(list(op.values)))
            return
        if isinstance(op, FuncOp):
            self.function(op)
            return
        if isinstance(op, ReturnOp | OnnxOp | CustomOp):
            return
        handler = TABLE.get(type(op))
        if handler is None:
            where = f" in {self.source}" if self.source else ""
            what = "no ONNX equivalent" if op.name.startswith("core.") else "not core-dialect IR"
            raise ExportError(f"cannot export {describe(op)}{where} to ONNX: {what}")
        emitter = Emitter(op, self.module, self.names, self.region)
        try:
            results = handler(emitter, op)
        except ExportError as err:
            if self.source and self.source not in err.message:
                raise ExportError(f"{err.message} (in {self.source})") from None
            raise
        for old, new in zip(op.results, results, strict=True):
            old.replace_all_uses_with(new)
        Rewriter.erase_op(op)

    def function(self, func: FuncOp) -> None:
        self.region(func.body)
        ins = [onnx_type(t) for t in func.function_type.inputs.data]
        outs = [onnx_type(t) for t in func.function_type.outputs.data]
        func.function_type = FunctionType.from_lists(ins, outs)


def _opset_imports(module: ModuleOp) -> dict[str, int]:
    """The newest op version each domain's ops need (ai.onnx at least MIN_OPSET).

    Each onnx-dialect op holds its latest version, so an opset at least that
    new selects exactly that version for every op.
    """
    found: dict[str, int] = {"ai.onnx": MIN_OPSET}
    for op in module.walk():
        if isinstance(op, OnnxOp):
            domain = op.SCHEMA.domain or "ai.onnx"
            found[domain] = max(found.get(domain, 1), op.SCHEMA.version)
    return found


def convert_core_to_onnx(module: ModuleOp) -> None:
    """Convert a core-dialect module to the onnx dialect, in place, and record its opsets."""
    from onnx import helper

    converter = _Converter(module)
    for op in list(module.body.block.ops):
        converter.op(op)
    for op in module.body.block.ops:
        if isinstance(op, FuncOp):
            region_dce(op.body)
    opsets = _opset_imports(module)
    module.attributes["onnx.opset_import"] = DictionaryAttr(
        {k: IntegerAttr(v, i64) for k, v in sorted(opsets.items())}
    )
    ids = [helper.make_opsetid("" if k == "ai.onnx" else k, v) for k, v in opsets.items()]
    ir_version = helper.find_min_ir_version_for(ids, ignore_unknown=True)
    module.attributes["onnx.ir_version"] = IntegerAttr(ir_version, i64)
    module.attributes.pop("onnx.original_opset_import", None)


@dataclass(frozen=True)
class CoreToOnnxPass(ModulePass):
    """Convert the core dialect back to the onnx dialect (to export it as ONNX)."""

    name = "convert-core-to-onnx"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        convert_core_to_onnx(op)


__all__ = ["MIN_OPSET", "CoreToOnnxPass", "convert_core_to_onnx"]
