"""ExportedProgram → torch dialect.

`import_program(ep)` decomposes the program to the Core ATen opset (torch's
default decomposition table), then walks its FX graph once:

* user inputs become the function's arguments, symbolic sizes `?` dims whose
  symbol names (`s0`) are kept in `torch.dim_params`, and the program's range
  constraints in the module's `torch.ranges`;
* parameters, buffers and lifted constants become `torch.constant` ops whose
  data is a resource, as ONNX initializers are;
* each ATen call becomes the op of its overload, its arguments bound by name
  from the schema, its result types from the node's fake tensors; arithmetic
  on symbolic sizes (`operator.mul` ...) becomes `torch.sym.*`;
* each op is located at its FX node and the user's source line that made it:
  `loc("view"("model.py":7:0))`;
* the outputs, flattened in the program's order, are named after their nodes.

A node whose op the dialect does not hold fails the import with one line
naming the op, the node and the source line. torch is imported only here.
"""

from __future__ import annotations

import operator
import os
import re
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xdsl.dialects.arith import ConstantOp as ArithConstantOp
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    BFloat16Type,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    DictionaryAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    NameLoc,
    NoneAttr,
    Signedness,
    StringAttr,
    TensorType,
    f64,
    i1,
    i64,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from rung.dialects.resources import store_of
from rung.dialects.torch import OPS_BY_NAME, ConstantOp, SymBinaryOp, SymUnaryOp
from rung.dialects.torch.extras import SYM_BINARY
from rung.errors import RungError

if TYPE_CHECKING:
    import torch
    from torch.export import ExportedProgram

_ELEMENT_TYPES: dict[str, Attribute] = {
    "float32": Float32Type(),
    "float64": Float64Type(),
    "float16": Float16Type(),
    "bfloat16": BFloat16Type(),
    "int64": i64,
    "int32": IntegerType(32),
    "int16": IntegerType(16),
    "int8": IntegerType(8),
    "uint8": IntegerType(8, Signedness.UNSIGNED),
    "bool": i1,
}
"""Element types by torch dtype name (`torch.float32` → `float32`)."""

_SYM_FUNCTIONS: dict[object, str] = {
    operator.add: "add",
    operator.sub: "sub",
    operator.mul: "mul",
    operator.floordiv: "floordiv",
    operator.truediv: "truediv",
    operator.mod: "mod",
    operator.pow: "pow",
    operator.eq: "eq",
    operator.ne: "ne",
    operator.lt: "lt",
    operator.le: "le",
    operator.gt: "gt",
    operator.ge: "ge",
    operator.and_: "and",
    operator.or_: "or",
}
_SYM_UNARY_FUNCTIONS: dict[object, str] = {operator.neg: "neg", operator.not_: "not"}

_TORCH_FILES = re.compile(r"[/\\](torch|torchvision|transformers|timm)[/\\]")
"""Frames inside these libraries are not the user's line; the nearest frame outside is."""


def element_type(dtype: torch.dtype, where: str) -> Attribute:
    """The element type of a torch dtype; a clear error for those rung does not hold."""
    name = str(dtype).removeprefix("torch.")
    found = _ELEMENT_TYPES.get(name)
    if found is None:
        raise RungError(f"{where}: element type {dtype} is not supported")
    return found


def _dims(shape: Sequence[object]) -> tuple[list[int], list[str]]:
    """Static dims (`?` where symbolic) and the symbol names ('' for static dims)."""
    dims: list[int] = []
    names: list[str] = []
    for d in shape:
        if isinstance(d, int):
            dims.append(d)
            names.append("")
        else:
            dims.append(DYNAMIC_INDEX)
            names.append(str(d))
    return dims, names


def source_location(node: Any) -> tuple[str, int] | None:
    """The user's file and line that made `node`: the innermost frame outside torch's libraries."""
    trace = node.meta.get("stack_trace") if hasattr(node, "meta") else None
    if not trace:
        return None
    frames = re.findall(r'File "([^"]+)", line (\d+)', trace)
    if not frames:
        return None
    for file, line in reversed(frames):
        if not _TORCH_FILES.search(file) and "site-packages" not in file:
            return file, int(line)
    return None  # made by torch itself (a size read, a run-time assert): no user line


def node_location(node: Any) -> Attribute:
    """`loc("name"("file.py":line:0))`, or `loc("name")` when the node has no stack trace."""
    from xdsl.dialects.builtin import FileLineColLoc, NameLoc

    where = source_location(node)
    if where is None:
        return NameLoc(StringAttr(node.name), NoneAttr())
    file, line = where
    return NameLoc(
        StringAttr(node.name),
        FileLineColLoc(StringAttr(file), IntAttr(line), IntAttr(0)),
    )


def describe_node(node: Any) -> str:
    """`node 'view' (model.py:7)` for diagnostics."""
    where = source_location(node)
    line = f" ({os.path.basename(where[0])}:{where[1]})" if where else ""
    return f"node '{node.name}'{line}"


def qualified_name(target: Any) -> str:
    """`aten::add.Tensor` for `torch.ops.aten.add.Tensor`, `aten::relu` for its default."""
    schema = getattr(target, "_schema", None)
    if schema is not None:
        name = schema.name + (f".{schema.overload_name}" if schema.overload_name else "")
        return name
    return getattr(target, "__name__", str(target))


class _Importer:
    def __init__(self, program: ExportedProgram, source: str) -> None:
        self.program = program
        self.source = source
        self.module = ModuleOp([])
        self.store = store_of(self.module)
        self.values: dict[Any, Any] = {}  # fx node → SSA value, or a tuple / list of them
        self.block: Block | None = None

    # ---- entry ------------------------------------------------------------

    def run(self) -> ModuleOp:
        import torch
        from torch.export.graph_signature import InputKind, TensorArgument

        graph = self.program.graph_module.graph
        signature = self.program.graph_signature
        user_inputs = []
        for spec in signature.input_specs:
            if spec.kind != InputKind.USER_INPUT:
                continue
            if isinstance(spec.arg, TensorArgument):
                user_inputs.append(spec.arg.name)
            elif hasattr(spec.arg, "value"):
                continue  # a Python constant torch specialized into the graph
            else:
                raise RungError(
                    f"{self.source}: input '{spec.arg.name}' is a {type(spec.arg).__name__}; "
                    "only tensor inputs are supported"
                )
        placeholders = [n for n in graph.nodes if n.op == "placeholder"]
        by_name = {n.name: n for n in placeholders}
        arg_types: list[Attribute] = []
        arg_attrs: list[DictionaryAttr] = []
        inputs = []
        for name in user_inputs:
            node = by_name.get(name)
            value = node.meta.get("val") if node is not None else None
            if not isinstance(value, torch.Tensor):
                raise RungError(
                    f"{self.source}: input '{name}' is not a tensor "
                    f"({type(value).__name__}); only tensor inputs are supported"
                )
            arg_types.append(self.tensor_type(value, f"input '{name}'"))
            arg_attrs.append(self.io_attrs(name, value.shape))
            inputs.append(node)
        block = Block(arg_types=arg_types)
        self.block = block
        for node, arg in zip(inputs, block.args, strict=True):
            arg.name_hint = _name_hint(node.name)
            self.values[node] = arg
        self.import_weights(placeholders, signature)
        output_node = None
        for node in graph.nodes:
            if node.op == "call_function":
                self.import_call(node)
            elif node.op == "output":
                output_node = node
            elif node.op == "get_attr":
                self.import_get_attr(node)
            elif node.op != "placeholder":
                raise RungError(
                    f"{self.source}: {describe_node(node)}: unsupported FX op '{node.op}'"
                )
        results, names, shapes = self.outputs(output_node, signature)
        block.add_op(ReturnOp(*results))
        func = FuncOp(
            "main",
            (arg_types, [r.type for r in results]),
            Region(block),
        )
        func.arg_attrs = ArrayAttr(arg_attrs)
        func.res_attrs = ArrayAttr(
            [self.io_attrs(n, s) for n, s in zip(names, shapes, strict=True)]
        )
        self.module.body.block.add_op(func)
        self.module.attributes.update(self.module_attributes())
        try:
            self.module.verify()
        except VerifyException as err:
            raise RungError(f"{self.source}: imported IR does not verify: {err}") from None
        return self.module

    def module_attributes(self) -> dict[str, Attribute]:
        import torch

        attrs: dict[str, Attribute] = {
            "torch.version": StringAttr(torch.__version__.split("+")[0]),
        }
        if self.source != "<program>":
            attrs["torch.source"] = StringAttr(os.path.basename(self.source))
        ranges = {}
        for symbol, bounds in self.program.range_constraints.items():
            lower, upper = bounds.lower, bounds.upper
            ranges[str(symbol)] = ArrayAttr(
                [IntegerAttr(_bound(lower, 0), i64), IntegerAttr(_bound(upper, -1), i64)]
            )
        if ranges:
            attrs["torch.ranges"] = DictionaryAttr(ranges)
        return attrs

    def io_attrs(self, name: str, shape: Sequence[object]) -> DictionaryAttr:
        attrs: dict[str, Attribute] = {"torch.name": StringAttr(name)}
        _, names = _dims(shape)
        if any(names):
            attrs["torch.dim_params"] = ArrayAttr([StringAttr(n) for n in names])
        return DictionaryAttr(attrs)

    def tensor_type(self, value: torch.Tensor, where: str) -> TensorType:
        dims, _ = _dims(value.shape)
        return TensorType(element_type(value.dtype, f"{self.source}: {where}"), dims)

    # ---- weights ----------------------------------------------------------

    def import_weights(self, placeholders: list[Any], signature: Any) -> None:
        from torch.export.graph_signature import InputKind

        state = self.program.state_dict
        constants = self.program.constants
        nodes = {n.name: n for n in placeholders}
        for spec in signature.input_specs:
            if spec.kind == InputKind.USER_INPUT:
                continue
            node = nodes.get(spec.arg.name)
            if node is None:
                continue
            if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR):
                target = spec.target
                tensor = state.get(target) if target in state else constants.get(target)
                if tensor is None:
                    raise RungError(f"{self.source}: the program holds no data for '{target}'")
                self.values[node] = self.constant(tensor, target, node)
            else:
                raise RungError(
                    f"{self.source}: input '{spec.arg.name}' of kind {spec.kind.name} "
                    "is not supported"
                )

    def constant(self, tensor: torch.Tensor, target: str, node: Any) -> SSAValue:
        import torch

        data = tensor.detach().to("cpu").contiguous()
        ttype = TensorType(element_type(data.dtype, f"{self.source}: '{target}'"), list(data.shape))
        raw = data.reshape(-1).view(torch.uint8).numpy().tobytes() if data.numel() else b""
        if not target:  # a number the graph holds inline: a dense value, named by its node
            op = ConstantOp(DenseIntOrFPElementsAttr(ttype, BytesAttr(raw)))
            op.location = node_location(node)
            return self.add(op).results[0]
        handle = self.store.add(target, raw)
        op = ConstantOp(DenseResourceAttr.from_params(handle, ttype))
        op.result.name_hint = _name_hint(node.name)
        op.location = NameLoc(StringAttr(target), NoneAttr())
        return self.add(op).results[0]

    def import_get_attr(self, node: Any) -> None:
        import torch

        value = getattr(self.program.graph_module, node.target, None)
        if not isinstance(value, torch.Tensor):
            raise RungError(
                f"{self.source}: {describe_node(node)}: attribute '{node.target}' is not a tensor"
            )
        self.values[node] = self.constant(value, str(node.target), node)

    # ---- calls ------------------------------------------------------------

    def add(self, op: Operation) -> Operation:
        assert self.block is not None
        self.block.add_op(op)
        return op

    def import_call(self, node: Any) -> None:
        target = node.target
        if target is operator.getitem:
            source, index = node.args
            self.values[node] = self.values[source][index]
            return
        if target in _SYM_FUNCTIONS or target in _SYM_UNARY_FUNCTIONS:
            self.import_sym(node)
            return
        name = qualified_name(target)
        op_class = OPS_BY_NAME.get(name)
        if op_class is None:
            raise RungError(f"{self.source}: unsupported op '{name}' at {describe_node(node)}")
        if name == "aten::as_strided":
            self.check_contiguous(node)
        values = self.bind_arguments(node, op_class)
        result_types, shape = self.result_types(node, op_class)
        try:
            op = op_class.from_args(values, result_types)
        except ValueError as err:
            raise RungError(f"{self.source}: '{name}' at {describe_node(node)}: {err}") from None
        op.location = node_location(node)
        self.add(op)
        self.bind_results(node, op, op_class, shape)

    def check_contiguous(self, node: Any) -> None:
        """`as_strided` reads its input's storage: rung holds it only for a contiguous input."""
        import torch

        source = node.args[0]
        value = source.meta.get("val") if hasattr(source, "meta") else None
        if isinstance(value, torch.Tensor) and not value.is_contiguous():
            raise RungError(
                f"{self.source}: 'aten::as_strided' at {describe_node(node)} views a tensor "
                "that is not contiguous, whose storage rung does not model"
            )

    def bind_arguments(self, node: Any, op_class: Any) -> dict[str, object]:
        schema = op_class.SCHEMA
        values: dict[str, object] = {}
        positional = [a for a in schema.args if not a.kwarg_only]
        if len(node.args) > len(positional):
            raise RungError(
                f"{self.source}: {describe_node(node)}: {len(node.args)} arguments for "
                f"'{schema.qualified_name}', which takes {len(positional)} positionally"
            )
        by_name = {a.name: a for a in schema.args}
        given = [*zip(positional, node.args, strict=False)]
        given += [(by_name[k], v) for k, v in node.kwargs.items() if k in by_name]
        for arg, value in given:
            if arg.is_tensor and isinstance(value, bool | int | float):
                values[arg.name] = self.wrapped_number(value, node)
                continue
            found = self.argument(value, node)
            if arg.is_tensor and isinstance(found, SSAValue) and found.type in (i64, f64, i1):
                found = self.scalar_tensor(found, node)  # `y * x.item()`: a 0-d tensor
            values[arg.name] = found
        for key, value in node.kwargs.items():
            if key not in by_name:
                values[key] = self.argument(value, node)  # from_args names the unknown one
        return values

    def scalar_tensor(self, symbol: SSAValue, node: Any) -> SSAValue:
        """A run-time number (a SymInt, SymFloat) where the schema has a Tensor: 0-d, as
        torch wraps it (floats as f32, the default dtype)."""
        element: Attribute = {i64: i64, i1: i1}.get(symbol.type, Float32Type())  # type: ignore[arg-type]
        op_class = OPS_BY_NAME["aten::scalar_tensor"]
        op = op_class.from_args({"s": symbol, "dtype": element}, [TensorType(element, [])])
        op.location = node_location(node)
        return self.add(op).results[0]

    def wrapped_number(self, value: bool | int | float, node: Any) -> SSAValue:
        """A Python number where the schema has a Tensor (`mul.Tensor(x, 2)`): a 0-d constant.

        As torch's wrapped numbers, floats are f32 (the default dtype), ints i64."""
        import torch

        dtype = (
            torch.bool
            if isinstance(value, bool)
            else (torch.int64 if isinstance(value, int) else torch.float32)
        )
        return self.constant(torch.tensor(value, dtype=dtype), "", node)

    def argument(self, value: object, node: Any) -> object:
        import torch
        import torch.fx

        if isinstance(value, torch.fx.Node):
            found = self.values.get(value)
            if found is None:
                raise RungError(
                    f"{self.source}: {describe_node(node)} uses '{value.name}', which has no value"
                )
            return found
        if isinstance(value, list | tuple):
            return [self.argument(v, node) for v in value]
        if isinstance(value, torch.dtype):
            return element_type(value, f"{self.source}: {describe_node(node)}")
        if isinstance(value, torch.device | torch.layout | torch.memory_format):
            return str(value)
        if isinstance(value, bool | int | float | str) or value is None:
            return value
        raise RungError(
            f"{self.source}: {describe_node(node)}: argument {value!r} "
            f"({type(value).__name__}) is not supported"
        )

    def result_types(self, node: Any, op_class: Any) -> tuple[list[Attribute], list[int] | None]:
        """The op's result types from the node's value; for a `Tensor[]` return, its length."""
        val = node.meta.get("val")
        returns = op_class.SCHEMA.returns
        where = describe_node(node)
        if len(returns) == 1 and returns[0].type == "Tensor[]":
            items = list(val or ())
            return [self.value_type(v, where) for v in items], [len(items)]
        if not returns:  # a run-time assert: no results
            return [], None
        vals = list(val) if len(returns) > 1 else [val]
        if len(vals) != len(returns):
            raise RungError(
                f"{self.source}: {where}: {len(vals)} results for {len(returns)} returns"
            )
        return [self.value_type(v, where) for v in vals], None

    def value_type(self, value: object, where: str) -> Attribute:
        import torch

        if isinstance(value, torch.Tensor):
            return self.tensor_type(value, where)
        if isinstance(value, torch.SymBool | bool):
            return i1
        if isinstance(value, torch.SymInt | int):
            return i64
        if isinstance(value, torch.SymFloat | float):
            return f64
        raise RungError(f"{self.source}: {where}: a result of type {type(value).__name__}")

    def bind_results(
        self, node: Any, op: Operation, op_class: Any, shape: list[int] | None
    ) -> None:
        results = list(op.results)
        if shape is not None:
            self.values[node] = results
        elif len(results) == 1:
            self.values[node] = results[0]
            results[0].name_hint = _name_hint(node.name)
        else:
            self.values[node] = tuple(results)

    def import_sym(self, node: Any) -> None:
        """`operator.mul(s, 2)` and friends on symbolic sizes: `torch.sym.*` ops."""
        where = describe_node(node)
        result = self.value_type(node.meta.get("val"), where)
        operands = [self.sym_operand(a, node) for a in node.args]
        if node.target in _SYM_UNARY_FUNCTIONS:
            op: Operation = SymUnaryOp(_SYM_UNARY_FUNCTIONS[node.target], operands[0], result)
        else:
            fn = _SYM_FUNCTIONS[node.target]
            assert fn in SYM_BINARY
            op = SymBinaryOp(fn, operands[0], operands[1], result)
        op.location = node_location(node)
        self.add(op)
        op.results[0].name_hint = _name_hint(node.name)
        self.values[node] = op.results[0]

    def sym_operand(self, value: object, node: Any) -> SSAValue:
        import torch.fx

        if isinstance(value, torch.fx.Node):
            found = self.values.get(value)
            if not isinstance(found, SSAValue):
                raise RungError(
                    f"{self.source}: {describe_node(node)}: '{value.name}' is not a size"
                )
            return found
        if isinstance(value, bool):
            attr: Attribute = IntegerAttr(int(value), i1)
        elif isinstance(value, int):
            attr = IntegerAttr(value, i64)
        elif isinstance(value, float):
            attr = FloatAttr(value, f64)
        else:
            raise RungError(f"{self.source}: {describe_node(node)}: a size of {value!r}")
        return self.add(ArithConstantOp(attr)).results[0]  # type: ignore[arg-type]

    # ---- outputs ----------------------------------------------------------

    def outputs(
        self, node: Any, signature: Any
    ) -> tuple[list[SSAValue], list[str], list[Sequence[object]]]:
        from torch.export.graph_signature import OutputKind

        if node is None:
            raise RungError(f"{self.source}: the program has no output")
        flat = list(node.args[0]) if isinstance(node.args[0], list | tuple) else [node.args[0]]
        specs = list(signature.output_specs)
        results: list[SSAValue] = []
        names: list[str] = []
        shapes: list[Sequence[object]] = []
        for spec, item in zip(specs, flat, strict=True):
            if spec.kind != OutputKind.USER_OUTPUT:
                continue  # buffer mutations (batch-norm statistics in training mode)
            value = self.argument(item, node)
            if not isinstance(value, SSAValue) or not isinstance(value.type, TensorType):
                raise RungError(f"{self.source}: output '{spec.arg.name}' is not a tensor")
            results.append(value)
            names.append(spec.arg.name)
            shapes.append(item.meta["val"].shape)
        return results, names, shapes


def _bound(value: object, fallback: int) -> int:
    try:
        number = int(value)  # type: ignore[call-overload]
    except Exception:  # sympy's infinity (an unbounded range) and its friends
        return fallback
    return number if abs(number) < 2**62 else fallback


def _name_hint(name: str) -> str | None:
    return name if re.fullmatch(r"[A-Za-z_][\w$.]*", name) else None


def load_program(path: str | os.PathLike[str]) -> ExportedProgram:
    """An ExportedProgram from a `.pt2` file written by `torch.export.save`."""
    import torch

    file = Path(path)
    if not file.is_file():
        raise RungError(f"no such file: '{file}'")
    import logging

    quiet = logging.getLogger("torch.export")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)  # torch logs its own traceback before raising
    try:
        with warnings.catch_warnings():
            # torch's own deserializer warns about its own deprecated internals: nothing the
            # user of the .pt2 can act on.
            warnings.simplefilter("ignore", FutureWarning)
            return torch.export.load(str(file))
    except Exception as err:  # a corrupt or foreign archive: one line, no traceback
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise RungError(f"'{file}': cannot load the exported program: {first}") from None
    finally:
        quiet.setLevel(level)


def import_program(
    program: ExportedProgram | str | os.PathLike[str], *, decompose: bool = True
) -> ModuleOp:
    """The program as a verified module in the torch dialect.

    `program` is a `torch.export.ExportedProgram` or the path of a `.pt2`
    file. It is decomposed to the Core ATen opset first, unless `decompose`
    is False (the program is then taken as it is).
    """
    source = "<program>"
    if isinstance(program, str | os.PathLike):
        source = str(program)
        program = load_program(program)
    if not hasattr(program, "graph_module") or not hasattr(program, "graph_signature"):
        raise RungError(
            f"expected a torch.export.ExportedProgram or a .pt2 path, got {type(program).__name__}"
        )
    if decompose:
        program = decomposed(program, source)
    return _Importer(program, source).run()


def decomposed(program: ExportedProgram, source: str) -> ExportedProgram:
    """The program in the Core ATen opset, by torch's default decompositions.

    With symbolic sizes, torch's retracing can give a reshape's output strides
    under which a following `view` is refused ("Cannot view a tensor with
    shape [s0, s1, 64] and strides ..."), although eager ran it. Where that
    happens, views are retraced as reshapes, which mean the same on values, on
    a copy of the program.
    """
    import copy

    import torch

    try:
        return program.run_decompositions()
    except Exception as err:  # torch's own failure
        first_error = err
    try:
        retry = copy.deepcopy(program)
        for node in retry.graph.nodes:
            if node.target is torch.ops.aten.view.default:
                node.target = torch.ops.aten.reshape.default
        retry.graph_module.recompile()
        return retry.run_decompositions()
    except Exception:
        text = str(first_error).strip()
        first = text.splitlines()[0] if text else type(first_error).__name__
        raise RungError(f"{source}: torch could not decompose the program: {first}") from None


__all__ = ["describe_node", "element_type", "import_program", "load_program", "node_location"]
