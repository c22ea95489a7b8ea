"""Writing onnx-dialect IR back as ONNX protos: types, tensors, attributes, nodes, models.

This is the importer run backwards (`convert` reads protos into the dialect;
this module writes them again), and the bridge to ONNX's own tools: shape
inference re-run on a single op (`reinfer`), the onnx-level evaluator that
turns each op into a NodeProto for `onnx.reference`, and `module_to_model`,
which rebuilds a whole ModelProto (for onnx.checker, onnxruntime, or to
compare with the model a module came from).

- `numpy_dtype` / `onnx_element_type`: MLIR element type → numpy dtype / ONNX code.
- `type_proto`: MLIR type → TypeProto (tensors, `!onnx.seq`, `!onnx.opt`, `!onnx.map`).
- `constant_array` / `tensor_proto`: a constant attribute (`dense<>`, `dense_resource<>`,
  `#onnx.strings`) → numpy / TensorProto.
- `attribute_proto`: an op attribute → AttributeProto (graph attributes come from regions).
- `GraphExporter`: ops → NodeProtos and regions → GraphProtos, with a value namer.
- `module_to_model`: a whole onnx-dialect module → ModelProto.

A region is a graph whose block arguments are its inputs and whose `onnx.Yield`
operands are its outputs. Values it uses from outside are outer-scope
references, written by the name the enclosing graph gives them.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Sequence

import numpy as np
import onnx
from onnx import (
    AttributeProto,
    GraphProto,
    ModelProto,
    NodeProto,
    SparseTensorProto,
    TensorProto,
    TypeProto,
    ValueInfoProto,
    helper,
    numpy_helper,
)
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    DictionaryAttr,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    NameLoc,
    StringAttr,
    TensorType,
    UnrankedTensorType,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Operation, Region, SSAValue, TypeAttribute

from rung.dialects.onnx import (
    OPSET_VERSIONS,
    CustomOp,
    MapType,
    OnnxOp,
    OptType,
    SeqType,
    SparseTensorAttr,
    StringTensorAttr,
    YieldOp,
)
from rung.dialects.onnx.dtypes import NAME_FROM_MLIR, ONNX_FROM_MLIR
from rung.dialects.resources import resource_bytes
from rung.dialects.signature import io_dim_params, io_names, main_function
from rung.errors import RungError

# ---- element types and value types -------------------------------------------------


def onnx_element_type(element: Attribute) -> int:
    """The ONNX `TensorProto.DataType` code of an MLIR element type."""
    code = ONNX_FROM_MLIR.get(element)
    if code is None:
        raise RungError(f"element type {element} has no ONNX equivalent")
    return code


def numpy_dtype(element: Attribute) -> np.dtype:
    """The numpy dtype ONNX uses for an MLIR element type (ml_dtypes for the small floats)."""
    return np.dtype(helper.tensor_dtype_to_np_dtype(onnx_element_type(element)))


def element_name(element: Attribute) -> str:
    """The ONNX name of an element type (`float`, `int64`, `string`)."""
    name = NAME_FROM_MLIR.get(element)
    if name is None:
        raise RungError(f"element type {element} has no ONNX equivalent")
    return name


def type_proto(type: Attribute, dim_params: Sequence[str] = ()) -> TypeProto | None:
    """The ONNX type of an MLIR type; None where nothing is known (`!onnx.unknown`, `none`).

    `dim_params` names the dynamic dims of a tensor (`''` where a dim has no name).
    """
    tp = TypeProto()
    if isinstance(type, TensorType):
        tensor = tp.tensor_type
        tensor.elem_type = onnx_element_type(type.element_type)
        shape = tensor.shape
        shape.SetInParent()
        for i, dim in enumerate(type.get_shape()):
            d = shape.dim.add()
            if dim >= 0:
                d.dim_value = dim
            elif i < len(dim_params) and dim_params[i]:
                d.dim_param = dim_params[i]
        return tp
    if isinstance(type, UnrankedTensorType):
        tp.tensor_type.elem_type = onnx_element_type(type.element_type)
        return tp
    if isinstance(type, SeqType):
        inner = type_proto(type.element_type)
        if inner is None:
            return None
        tp.sequence_type.elem_type.CopyFrom(inner)
        return tp
    if isinstance(type, OptType):
        inner = type_proto(type.element_type)
        if inner is None:
            return None
        tp.optional_type.elem_type.CopyFrom(inner)
        return tp
    if isinstance(type, MapType):
        tp.map_type.key_type = onnx_element_type(type.key_type)
        value = type.value_type
        if value in ONNX_FROM_MLIR:
            # ONNX spells a map's scalar values as tensors without a shape.
            tp.map_type.value_type.tensor_type.elem_type = onnx_element_type(value)
        else:
            inner = type_proto(value)
            if inner is None:
                return None
            tp.map_type.value_type.CopyFrom(inner)
        return tp
    return None


def value_info(name: str, type: Attribute, dim_params: Sequence[str] = ()) -> ValueInfoProto:
    """A ValueInfoProto for a value of MLIR type `type` (without a type when unknown)."""
    vi = ValueInfoProto()
    vi.name = name
    tp = type_proto(type, dim_params)
    if tp is not None:
        vi.type.CopyFrom(tp)
    return vi


def ort_type_string(type: Attribute) -> str:
    """The type as onnxruntime's NodeArg spells it: `tensor(float)`, `seq(tensor(int64))`,
    `map(int64,tensor(float))`, `optional(tensor(float))`."""
    if isinstance(type, TensorType | UnrankedTensorType):
        return f"tensor({element_name(type.element_type)})"
    if isinstance(type, SeqType):
        return f"seq({ort_type_string(type.element_type)})"
    if isinstance(type, OptType):
        return f"optional({ort_type_string(type.element_type)})"
    if isinstance(type, MapType):
        value = type.value_type
        inner = (
            f"tensor({element_name(value)})" if value in ONNX_FROM_MLIR else ort_type_string(value)
        )
        return f"map({element_name(type.key_type)},{inner})"
    return "unknown"


# ---- constants ------------------------------------------------------------------------

ConstantAttr = DenseIntOrFPElementsAttr | DenseResourceAttr | StringTensorAttr


def constant_array(attr: Attribute, module: ModuleOp | None) -> np.ndarray:
    """A constant tensor attribute as numpy, with ONNX's dtype for its element type.

    `module` owns the blobs of `dense_resource` attributes.
    """
    if isinstance(attr, StringTensorAttr):
        shape = tuple(attr.type.get_shape())  # type: ignore[union-attr]
        return np.array([s.data for s in attr.values.data], dtype=object).reshape(shape)
    if isinstance(attr, DenseResourceAttr):
        if module is None:
            raise RungError(f"dense_resource<{attr.resource_handle.data}> outside a module")
        ttype = attr.type
        shape = tuple(ttype.get_shape())  # type: ignore[attr-defined]
        raw = resource_bytes(attr, module)
        return _from_bytes(raw, ttype.element_type, shape)  # type: ignore[attr-defined]
    if isinstance(attr, DenseIntOrFPElementsAttr):
        shape = tuple(attr.type.get_shape())
        return _from_bytes(attr.data.data, attr.type.element_type, shape)
    raise RungError(f"not a constant tensor: {attr}")


def _from_bytes(raw: bytes, element: Attribute, shape: tuple[int, ...]) -> np.ndarray:
    dtype = numpy_dtype(element)
    count = int(np.prod(shape)) if shape else 1
    if isinstance(element, IntegerType) and element.width.data == 1:
        # xDSL stores `true` as 0xFF, the importer as 0x01: any non-zero byte is true.
        flat = np.frombuffer(raw, dtype=np.uint8) != 0
    else:
        flat = np.frombuffer(raw, dtype=dtype)
    if flat.size == 1 and count != 1:
        flat = np.repeat(flat, count)
    if flat.size != count:
        raise RungError(f"constant of shape {list(shape)} holds {flat.size} elements of {element}")
    return flat.reshape(shape).copy()


def tensor_proto(attr: Attribute, module: ModuleOp | None, name: str = "") -> TensorProto:
    """A constant tensor attribute as a TensorProto (a resource keeps its handle as name)."""
    if not name and isinstance(attr, DenseResourceAttr):
        name = attr.resource_handle.data
    array = constant_array(attr, module)
    try:
        tensor = numpy_helper.from_array(array, name)
    except (TypeError, ValueError) as err:
        raise RungError(f"cannot write constant {attr} as an ONNX tensor: {err}") from None
    tensor.data_type = onnx_element_type(attr.type.element_type)  # type: ignore[union-attr]
    return tensor


def _sparse_proto(attr: SparseTensorAttr, module: ModuleOp | None) -> SparseTensorProto:
    sparse = SparseTensorProto()
    sparse.values.CopyFrom(tensor_proto(attr.values, module))
    sparse.indices.CopyFrom(tensor_proto(attr.indices, module))
    sparse.dims.extend(d.data for d in attr.dims.data)
    return sparse


# ---- attributes -----------------------------------------------------------------------

_TENSOR_ATTRS = (DenseIntOrFPElementsAttr, DenseResourceAttr, StringTensorAttr)


def attribute_kind(attr: Attribute) -> str:
    """The ONNX attribute kind of an attribute as the dialect stores it (for ops without a
    schema, i.e. `onnx.Custom`). An empty list is taken as STRINGS."""
    if isinstance(attr, IntegerAttr):
        return "INT"
    if isinstance(attr, FloatAttr):
        return "FLOAT"
    if isinstance(attr, StringAttr):
        return "STRING"
    if isinstance(attr, DenseArrayBase):
        return "FLOATS" if isinstance(attr.elt_type, Float32Type) else "INTS"
    if isinstance(attr, _TENSOR_ATTRS):
        return "TENSOR"
    if isinstance(attr, SparseTensorAttr):
        return "SPARSE_TENSOR"
    if isinstance(attr, TypeAttribute):
        return "TYPE_PROTO"
    if isinstance(attr, ArrayAttr):
        items = attr.data
        if items and all(isinstance(a, _TENSOR_ATTRS) for a in items):
            return "TENSORS"
        if items and all(isinstance(a, SparseTensorAttr) for a in items):
            return "SPARSE_TENSORS"
        if items and all(isinstance(a, TypeAttribute) for a in items):
            return "TYPE_PROTOS"
        if all(isinstance(a, StringAttr) for a in items):
            return "STRINGS"
    raise RungError(f"attribute {attr} has no ONNX attribute kind")


def attribute_proto(
    name: str, attr: Attribute, module: ModuleOp | None, kind: str | None = None
) -> AttributeProto:
    """An ONNX attribute (anything but a graph) from the dialect's attribute.

    `kind` is the schema's kind (`INTS`, `TENSOR`…); without it the kind follows
    from the attribute's class.
    """
    kind = kind or attribute_kind(attr)
    A = AttributeProto
    proto = AttributeProto()
    proto.name = name
    try:
        match kind:
            case "INT":
                proto.type = A.INT
                proto.i = attr.value.data  # type: ignore[attr-defined]
            case "FLOAT":
                proto.type = A.FLOAT
                proto.f = attr.value.data  # type: ignore[attr-defined]
            case "STRING":
                proto.type = A.STRING
                proto.s = attr.data.encode("utf-8")  # type: ignore[attr-defined]
            case "INTS":
                proto.type = A.INTS
                proto.ints.extend(int(v) for v in attr.get_values())  # type: ignore[attr-defined]
            case "FLOATS":
                proto.type = A.FLOATS
                proto.floats.extend(float(v) for v in attr.get_values())  # type: ignore[attr-defined]
            case "STRINGS":
                proto.type = A.STRINGS
                proto.strings.extend(s.data.encode("utf-8") for s in attr.data)  # type: ignore[attr-defined]
            case "TENSOR":
                proto.type = A.TENSOR
                proto.t.CopyFrom(tensor_proto(attr, module))
            case "TENSORS":
                proto.type = A.TENSORS
                proto.tensors.extend(tensor_proto(a, module) for a in attr.data)  # type: ignore[attr-defined]
            case "SPARSE_TENSOR":
                proto.type = A.SPARSE_TENSOR
                proto.sparse_tensor.CopyFrom(_sparse_proto(attr, module))  # type: ignore[arg-type]
            case "SPARSE_TENSORS":
                proto.type = A.SPARSE_TENSORS
                proto.sparse_tensors.extend(_sparse_proto(a, module) for a in attr.data)  # type: ignore[attr-defined]
            case "TYPE_PROTO":
                proto.type = A.TYPE_PROTO
                proto.tp.CopyFrom(_required_type(attr))
            case "TYPE_PROTOS":
                proto.type = A.TYPE_PROTOS
                proto.type_protos.extend(_required_type(a) for a in attr.data)  # type: ignore[attr-defined]
            case _:
                raise RungError(f"attribute '{name}': unsupported ONNX attribute kind {kind}")
    except (AttributeError, TypeError) as err:
        raise RungError(f"attribute '{name}' = {attr} is not an ONNX {kind}: {err}") from None
    return proto


def _required_type(type: Attribute) -> TypeProto:
    tp = type_proto(type)
    if tp is None:
        raise RungError(f"type {type} has no ONNX equivalent")
    return tp


# ---- ops and graphs -------------------------------------------------------------------


def op_domain_type(op: Operation) -> tuple[str, str]:
    """The ONNX (domain, op_type) of an onnx-dialect op."""
    if isinstance(op, CustomOp):
        return op.domain.data, op.op_type.data
    if isinstance(op, OnnxOp):
        return op.SCHEMA.domain, op.SCHEMA.op_type
    raise RungError(f"'{op.name}' is not an onnx-dialect op")


def op_label(op: Operation) -> str:
    """How diagnostics name an op: `onnx.Add 'node_3'`."""
    loc = op.location
    if isinstance(loc, NameLoc):
        return f"{op.name} '{loc.desc.data}'"
    return op.name


def onnx_inputs(op: Operation) -> list[SSAValue | None]:
    return op.onnx_inputs()  # type: ignore[attr-defined]


def onnx_outputs(op: Operation) -> list[SSAValue | None]:
    return op.onnx_outputs()  # type: ignore[attr-defined]


def _trim(values: list[SSAValue | None]) -> list[SSAValue | None]:
    """ONNX leaves trailing absent inputs and outputs out."""
    end = len(values)
    while end and values[end - 1] is None:
        end -= 1
    return values[:end]


def op_attributes(op: Operation, module: ModuleOp | None) -> list[AttributeProto]:
    """The op's ONNX attributes (graphs excluded), in the order the op holds them."""
    if isinstance(op, CustomOp):
        return [
            attribute_proto(name, attr, module)
            for name, attr in op.attributes.items()
            if "." not in name
        ]
    assert isinstance(op, OnnxOp)
    out = []
    for name, attr in op.onnx_attributes().items():
        info = op.SCHEMA.attribute(name)
        out.append(attribute_proto(name, attr, module, info.kind if info else None))
    return out


def op_graphs(op: Operation) -> list[tuple[str, Region]]:
    """The op's graph attributes, by name, in the op's order."""
    if isinstance(op, CustomOp):
        return list(zip(op.graph_name_list(), op.graphs, strict=True))
    assert isinstance(op, OnnxOp)
    return list(op.graph_regions().items())


Namer = Callable[[SSAValue], str]


class GraphExporter:
    """Writes ops as NodeProtos and regions as GraphProtos, naming values with `name`.

    `name(value)` must give each value one ONNX name, unique in the model.
    """

    def __init__(self, module: ModuleOp | None, name: Namer) -> None:
        self.module = module
        self.name = name

    def node(self, op: Operation) -> NodeProto:
        domain, op_type = op_domain_type(op)
        node = NodeProto()
        node.op_type = op_type
        node.domain = domain
        loc = op.location
        if isinstance(loc, NameLoc):
            node.name = loc.desc.data
        node.input.extend("" if v is None else self.name(v) for v in _trim(onnx_inputs(op)))
        node.output.extend("" if v is None else self.name(v) for v in _trim(onnx_outputs(op)))
        try:
            node.attribute.extend(op_attributes(op, self.module))
        except RungError as err:
            raise RungError(f"{op_label(op)}: {err.message}") from None
        for name, region in op_graphs(op):
            attr = node.attribute.add()
            attr.name = name
            attr.type = AttributeProto.GRAPH
            attr.g.CopyFrom(self.graph(region, name))
        return node

    def graph(self, region: Region, name: str) -> GraphProto:
        """A graph attribute: block args are its inputs, the `onnx.Yield` its outputs."""
        block = region.block
        graph = GraphProto()
        graph.name = name
        graph.input.extend(value_info(self.name(arg), arg.type) for arg in block.args)
        for op in block.ops:
            if isinstance(op, YieldOp):
                graph.output.extend(value_info(self.name(v), v.type) for v in op.values)
                continue
            graph.node.append(self.node(op))
            graph.value_info.extend(self.value_infos(op))
        return graph

    def value_infos(self, op: Operation) -> Iterable[ValueInfoProto]:
        for result in op.results:
            if type_proto(result.type) is not None:
                yield value_info(self.name(result), result.type)


def io_attribute(attrs: ArrayAttr | None, index: int, key: str) -> Attribute | None:
    """One entry of a function's arg_attrs / res_attrs (e.g. `onnx.name`)."""
    if attrs is None or index >= len(attrs.data):
        return None
    entry = attrs.data[index]
    if isinstance(entry, DictionaryAttr):
        return entry.data.get(key)
    return None


def _printed_names(module: ModuleOp) -> dict[SSAValue, str]:
    """The names the MLIR printer gives values, so exported names read like the IR."""
    from xdsl.printer import Printer

    printer = Printer(stream=io.StringIO())
    printer.print_op(module)
    return dict(getattr(printer, "_ssa_values", {}))


def _int_dict(attr: Attribute | None) -> dict[str, int]:
    if not isinstance(attr, DictionaryAttr):
        return {}
    return {k: v.value.data for k, v in attr.data.items() if isinstance(v, IntegerAttr)}


def module_opsets(module: ModuleOp) -> dict[str, int]:
    """ONNX opset versions by domain ('' for ai.onnx) for the module's ops.

    From the module's `onnx.opset_import`; domains it does not list get the
    dialect's version (`onnx.Custom` domains: 1).
    """
    recorded = _int_dict(module.attributes.get("onnx.opset_import"))
    opsets = {("" if k == "ai.onnx" else k): v for k, v in recorded.items()}
    for op in module.walk():
        if isinstance(op, CustomOp):
            opsets.setdefault(op.domain.data, 1)
        elif isinstance(op, OnnxOp):
            opsets.setdefault(op.SCHEMA.domain, OPSET_VERSIONS.get(op.SCHEMA.domain, 1))
    return opsets


def opset_protos(opsets: dict[str, int]) -> list[onnx.OperatorSetIdProto]:
    return [helper.make_opsetid(domain, version) for domain, version in sorted(opsets.items())]


def check_onnx_module(module: ModuleOp, what: str = "the module") -> None:
    """Refuse a module that is not onnx-dialect IR (one function of onnx ops)."""
    others = sorted(
        {
            op.name
            for op in module.walk()
            if op is not module
            and not isinstance(op, FuncOp | ReturnOp | OnnxOp | CustomOp | YieldOp)
        }
    )
    if others:
        listed = ", ".join(f"'{n}'" for n in others[:5])
        raise RungError(
            f"{what} is not onnx-dialect IR: it has {listed}"
            f"{' and more' if len(others) > 5 else ''}"
        )


def module_to_model(module: ModuleOp) -> ModelProto:
    """Rebuild a ModelProto from an onnx-dialect module.

    Graph inputs and outputs take their names from the `onnx.name` arg/result
    attributes (and symbolic dims from `onnx.dim_params`); other values are
    named as the MLIR printer names them. Leading `onnx.Constant` ops that the
    importer made from initializers become initializers again, every other op
    a node. The module's `onnx.opset_import`, `onnx.ir_version`, producer and
    metadata are restored.
    """
    check_onnx_module(module)
    func = main_function(module)
    block = func.body.block
    in_names, out_names = io_names(func)
    ret = block.last_op
    if not isinstance(ret, ReturnOp):
        raise RungError(f"function '{func.sym_name.data}' does not end in func.return")

    # Names: graph inputs and outputs are fixed; the rest follow the printer.
    fixed: dict[SSAValue, str] = {}
    for arg, name in zip(block.args, in_names, strict=True):
        fixed[arg] = name
    renames: list[tuple[SSAValue, str]] = []  # outputs that need an Identity node
    for value, name in zip(ret.operands, out_names, strict=True):
        if value in fixed:
            if fixed[value] != name:
                renames.append((value, name))
        else:
            fixed[value] = name
    taken = set(fixed.values()) | {name for _, name in renames}
    printed = _printed_names(module)
    names: dict[SSAValue, str] = dict(fixed)

    def namer(value: SSAValue) -> str:
        name = names.get(value)
        if name is None:
            base = printed.get(value) or value.name_hint or "v"
            name = base
            counter = 0
            while name in taken:
                counter += 1
                name = f"{base}__{counter}"
            taken.add(name)
            names[value] = name
        return name

    exporter = GraphExporter(module, namer)
    graph = GraphProto()
    graph.name = func.sym_name.data
    for i, arg in enumerate(block.args):
        graph.input.append(value_info(in_names[i], arg.type, io_dim_params(func.arg_attrs, i)))
    outputs = set(out_names)
    leading = True
    for op in block.ops:
        if isinstance(op, ReturnOp):
            break
        if leading and _is_initializer(op, namer):
            graph.initializer.append(
                tensor_proto(op.properties["value"], module, namer(op.results[0]))
            )
            continue
        leading = False
        graph.node.append(exporter.node(op))
        graph.value_info.extend(vi for vi in exporter.value_infos(op) if vi.name not in outputs)
    for value, name in renames:
        graph.node.append(helper.make_node("Identity", [namer(value)], [name]))
    for i, value in enumerate(ret.operands):
        graph.output.append(value_info(out_names[i], value.type, io_dim_params(func.res_attrs, i)))

    attrs = module.attributes
    ir = attrs.get("onnx.ir_version")
    opsets = module_opsets(module)
    if renames or not opsets:
        opsets.setdefault("", OPSET_VERSIONS[""])
    model = helper.make_model(graph, opset_imports=opset_protos(opsets))
    model.ir_version = ir.value.data if isinstance(ir, IntegerAttr) else onnx.IR_VERSION
    producer = attrs.get("onnx.producer")
    if isinstance(producer, StringAttr):
        model.producer_name = producer.data
    metadata = attrs.get("onnx.metadata")
    if isinstance(metadata, DictionaryAttr):
        for key, value in metadata.data.items():
            if isinstance(value, StringAttr):
                prop = model.metadata_props.add()
                prop.key = key
                prop.value = value.data
    return model


def _is_initializer(op: Operation, namer: Namer) -> bool:
    """Whether a leading constant is one the importer made from an initializer:
    its node name, its value's name (and its resource's handle) all agree."""
    from rung.dialects.onnx.generated_ops import ConstantOp

    if not isinstance(op, ConstantOp) or set(op.onnx_attributes()) != {"value"}:
        return False
    value = op.properties["value"]
    if not isinstance(value, _TENSOR_ATTRS):
        return False
    loc = op.location
    if not isinstance(loc, NameLoc):
        return False
    name = namer(op.results[0])
    if loc.desc.data != name:
        return False
    if isinstance(value, DenseResourceAttr):
        return value.resource_handle.data == name
    return True


__all__ = [
    "GraphExporter",
    "attribute_kind",
    "attribute_proto",
    "check_onnx_module",
    "constant_array",
    "element_name",
    "io_dim_params",
    "io_names",
    "main_function",
    "module_opsets",
    "module_to_model",
    "numpy_dtype",
    "onnx_element_type",
    "op_domain_type",
    "op_label",
    "opset_protos",
    "ort_type_string",
    "tensor_proto",
    "type_proto",
    "value_info",
]
