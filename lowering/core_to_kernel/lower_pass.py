"""The `convert-core-to-kernel` pass: bufferize each function and lower every core op.

Tensors become buffers here, so the pass rebuilds each function rather than
rewriting it in place: arguments and results become memrefs of the same shape
(`?` dims stay `?`, their sizes read at run time with `kernel.dim`), and each
core op, in order, is replaced by what its handler emits. Every result gets a
buffer of its own; the memory plan later lets buffers whose lifetimes do not
overlap share storage.

Before anything is built, every op of the function is checked: ops with no
handler, and values of types the kernel level cannot hold (unranked tensors,
unsupported element types), are reported together, each with its location.
Lists and optionals become `!kernel.list` and `!kernel.optional` values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import FunctionType, ModuleOp, NameLoc, StringAttr, UnknownLoc
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from rung.dialects import core
from rung.lowering.generic.walk import ops_of_type
from rung.lowering.kit.progress import OpCounter

from .builder import KernelBuilder, KernelLoweringError
from .elements import kernel_type_of
from .registry import lowering_for


def describe(op: Operation, module: ModuleOp) -> str:
    """`'core.sort' at model.onnx:node 'TopK_3'` for diagnostics."""
    source = module.attributes.get("onnx.source")
    file = source.data if isinstance(source, StringAttr) else "<module>"
    loc = op.location
    node = f"node '{loc.desc.data}'" if isinstance(loc, NameLoc) else "an unnamed node"
    return f"'{op.name}' at {file}:{node}"


def _problems(func: FuncOp, module: ModuleOp) -> list[str]:
    """Why each op of `func` cannot be lowered, before anything is built."""
    lines = []
    for arg in func.body.block.args:
        try:
            kernel_type_of(arg.type)
        except KernelLoweringError as err:
            lines.append(f"function '{func.sym_name.data}' argument #{arg.index}: {err.message}")
    for op in ops_of_type(func, Operation):
        if op is func or isinstance(op, ReturnOp | core.YieldOp):
            continue
        if lowering_for(op) is None:
            lines.append(f"failed to lower {describe(op, module)}: no lowering to kernel")
            continue
        for r in op.results:
            try:
                kernel_type_of(r.type)
            except KernelLoweringError as err:
                lines.append(f"failed to lower {describe(op, module)}: {err.message}")
                break
    return lines


def lower_ops(
    b: KernelBuilder,
    ops: Sequence[Operation],
    module: ModuleOp,
    counter: OpCounter | None = None,
) -> None:
    """Lower core ops in order, recording each result's buffer in `b.buffers`."""
    for op in ops:
        if counter is not None:
            counter.tick()
        handler = lowering_for(op)
        assert handler is not None  # `_problems` has checked every op
        last = b.block.last_op
        try:
            results = handler(b, op)
        except KernelLoweringError as err:
            raise PassFailedException(
                f"failed to lower {describe(op, module)}: {err.message}"
            ) from None
        if len(results) != len(op.results):
            raise PassFailedException(
                f"the kernel lowering of {describe(op, module)} gave {len(results)} buffers "
                f"for {len(op.results)} results"
            )
        for result, buf in zip(op.results, results, strict=True):
            if buf.name_hint is None and result.name_hint is not None:
                buf.name_hint = result.name_hint  # the C and the IR keep the model's names
        b.buffers.update(zip(op.results, results, strict=True))
        _locate_allocations(b.block, last, op)


def _locate_allocations(block: Block, last: Operation | None, op: Operation) -> None:
    """Give the ops made for `op` its location (those that have none of their own).

    A size the run cannot allocate is then reported with the node's name, and
    the kernel level stays traceable to the model's nodes: `rung compare` and
    `rung view` find a node's kernel ops by it.
    """
    if isinstance(op.location, UnknownLoc):
        return
    new = block.first_op if last is None else last.next_op
    while new is not None:
        for inner in ops_of_type(new, Operation):
            if isinstance(inner.location, UnknownLoc):
                inner.location = op.location
        new = new.next_op


def lower_region_block(
    b: KernelBuilder, block: Block, args: Sequence[SSAValue], module: ModuleOp
) -> list[SSAValue]:
    """Lower the ops of a core region's block into `b`'s block; gives the yielded buffers.

    For control-flow patterns: `args` are the buffers of the block arguments.
    """
    b.buffers.update(zip(block.args, args, strict=True))
    ops = list(block.ops)
    term = ops[-1]
    lower_ops(b, ops[:-1], module)
    return [b.buffer(v) for v in term.operands]


def lower_function(func: FuncOp, module: ModuleOp) -> FuncOp:
    """The kernel-level version of a core-level function (inserted before it)."""
    old = func.body.block
    arg_types = [kernel_type_of(a.type) for a in old.args]
    ret = old.last_op
    assert isinstance(ret, ReturnOp)
    result_types = [kernel_type_of(v.type) for v in ret.arguments]
    block = Block(arg_types=arg_types)
    for new_arg, old_arg in zip(block.args, old.args, strict=True):
        new_arg.name_hint = old_arg.name_hint
    new = FuncOp(
        func.sym_name.data,
        FunctionType.from_lists(arg_types, result_types),
        Region(block),
        visibility=func.sym_visibility,
        arg_attrs=func.arg_attrs,
        res_attrs=func.res_attrs,
    )
    for key, value in func.attributes.items():
        new.attributes.setdefault(key, value)
    module.body.block.insert_op_before(new, func)
    b = KernelBuilder(block, dict(zip(old.args, block.args, strict=True)), module)
    ops = list(old.ops)[:-1]
    lower_ops(b, ops, module, OpCounter(CoreToKernelPass.name, len(ops)))
    b.insert(ReturnOp(*[b.buffer(v) for v in ret.arguments]))
    return new


@dataclass(frozen=True)
class CoreToKernelPass(ModulePass):
    """Lower the core dialect to the kernel dialect: buffers and loop nests."""

    name = "convert-core-to-kernel"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        funcs = [f for f in op.body.block.ops if isinstance(f, FuncOp)]
        lines = [line for f in funcs for line in _problems(f, op)]
        if lines:
            more = f" (and {len(lines) - 20} more)" if len(lines) > 20 else ""
            raise PassFailedException("\n".join(lines[:20]) + more)
        for func in funcs:
            lower_function(func, op)
            func.detach()
            func.erase()


__all__ = ["CoreToKernelPass", "describe", "lower_ops", "lower_region_block"]
