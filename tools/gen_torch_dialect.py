"""Generate `dialects/torch/generated_ops.py` from the schemas torch reports.

One op class per ATen overload of the Core ATen opset (the ops tagged
`core`, which `torch.export`'s default decompositions produce), the ops those
decompositions leave (`EXTRA_ATEN`), and the prims. Each class is static
Python source built from `torch.ops.<ns>.<op>.<overload>._schema`, so the
dialect imports without torch; the syntax, verifier and accessors come from
`dialects/torch/base.py`, driven by the `SCHEMA` table each class carries.

    python -m rung.tools.gen_torch_dialect            # rewrite the file
    python -m rung.tools.gen_torch_dialect --check    # exit 1 if it is stale
"""

from __future__ import annotations

import argparse
import keyword
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

OUTPUT = Path(__file__).resolve().parent.parent / "dialects" / "torch" / "generated_ops.py"

EXTRA_ATEN = (
    "_assert_scalar.default",
    "_assert_tensor_metadata.default",
    "sym_constrain_range.default",
    "sym_constrain_range_for_size.default",
    "lift_fresh_copy.default",
    "alias.default",
    "detach.default",
    "dropout.default",
    "linear.default",
    "matmul.default",
    "t.default",
    "transpose.int",
    "reshape.default",
    "flatten.using_ints",
    "contiguous.default",
    "softmax.int",
    "log_softmax.int",
    "layer_norm.default",
    "batch_norm.default",
    "conv2d.default",
    "conv1d.default",
    "adaptive_avg_pool2d.default",
    "max_pool2d.default",
    "silu.default",
    "hardswish.default",
    "hardsigmoid.default",
    "relu6.default",
    "scaled_dot_product_attention.default",
    "unbind.int",
    "split.Tensor",
    "chunk.default",
    "to.dtype",
    "type_as.default",
    "zeros.default",
    "ones.default",
    "zeros_like.default",
    "ones_like.default",
    "arange.default",
    "arange.start",
    "masked_fill.Scalar",
    "sub.Tensor",
    "rsub.Scalar",
    "sum.default",
    "var_mean.correction",
    "where.ScalarOther",
    "baddbmm.default",
    "einsum.default",
    "index_select.default",
    "native_batch_norm.default",
    "_native_batch_norm_legit_functional.default",
    "upsample_nearest2d.default",
    "upsample_bilinear2d.default",
    "select_scatter.default",
    "item.default",
    "sort.stable",
    "max.default",
    "min.default",
    "round.decimals",
    "scatter.reduce",
    "scatter.value_reduce",
)
"""ATen overloads that are not tagged core but that exported programs still hold."""

# Names a generated field must not take: they belong to IRDLOperation or TorchOp.
_RESERVED = {
    "name",
    "operands",
    "results",
    "regions",
    "attributes",
    "properties",
    "parent",
    "location",
    "verify",
    "verify_",
    "print",
    "parse",
    "build",
    "create",
    "clone",
    "erase",
    "detach",
    "traits",
    "result_types",
    "operand_types",
    "successors",
    "arg",
    "tensor_args",
    "scalar_properties",
    "from_args",
    "SCHEMA",
    "irdl_options",
    "symbols",
    "get",
    "walk",
    "dialect_name",
    "result",
    "ops",
    "self",
}

# Overloads whose results are not a function of their arguments: CSE and DCE keep them.
_IMPURE = re.compile(
    r"^(rand|randn|randperm|bernoulli|native_dropout|dropout|normal|uniform|empty|_assert|sym_constrain)"
)

_SCALAR_TYPE_CODES = {
    0: "ui8",
    1: "i8",
    2: "i16",
    3: "i32",
    4: "i64",
    5: "f16",
    6: "f32",
    7: "f64",
    11: "i1",
    15: "bf16",
}
"""c10::ScalarType codes, as the element type names a default is written with."""


@dataclass(frozen=True)
class Overload:
    namespace: str
    op: str
    overload: str
    schema: object  # torchgen.model.FunctionSchema
    c_schema: object  # torch._C.FunctionSchema


def _accepted(schema: object) -> bool:
    """Whether the dialect can hold the overload: functional, with argument types it knows."""
    from rung.dialects.torch.base import SCALAR_BASES, TENSOR_KINDS

    args = schema.arguments.flat_all  # type: ignore[attr-defined]
    if schema.is_mutable or schema.kind().name != "functional":  # type: ignore[attr-defined]
        return False
    for a in args:
        text = str(a.type)
        if text in TENSOR_KINDS:
            continue
        base = text.rstrip("?").removesuffix("[]").rstrip("?")
        if re.fullmatch(r".*\[\d+\]\??", text):
            base = re.sub(r"\[\d+\]\??$", "", text)
        if base not in SCALAR_BASES:
            return False
    for r in schema.returns:  # type: ignore[attr-defined]
        if str(r.type) not in (
            "Tensor",
            "Tensor[]",
            "SymInt",
            "SymFloat",
            "SymBool",
            "int",
            "float",
            "Scalar",
            "bool",
        ):
            return False
    return True


def overloads() -> list[Overload]:
    """Every overload the dialect holds, sorted by namespace, op and overload."""
    import torch
    from torchgen.model import FunctionSchema

    found: dict[tuple[str, str, str], Overload] = {}

    def add(namespace: str, packet_name: str, overload: str) -> None:
        packet = getattr(getattr(torch.ops, namespace), packet_name)
        op = getattr(packet, overload)
        text = str(op._schema).split("::", 1)[1]
        try:
            schema = FunctionSchema.parse(text)
        except Exception:  # a schema torchgen cannot read: not held
            return
        if not _accepted(schema):
            return
        name = "" if overload == "default" else overload
        found[(namespace, packet_name, name)] = Overload(
            namespace, packet_name, name, schema, op._schema
        )

    # Every registered op, not `dir(torch.ops.aten)`, which lists only those looked up so far.
    registered = torch._C._dispatch_get_all_op_names()
    packets: dict[str, set[str]] = {"aten": set(), "prims": set()}
    for qualified in registered:
        namespace, _, rest = qualified.partition("::")
        if namespace in packets:
            packets[namespace].add(rest.split(".", 1)[0])
    for packet_name in sorted(packets["aten"]):
        packet = getattr(torch.ops.aten, packet_name, None)
        if packet is None or not hasattr(packet, "overloads"):
            continue
        for overload in packet.overloads():
            if torch.Tag.core in getattr(packet, overload).tags:
                add("aten", packet_name, overload)
    for qualified in EXTRA_ATEN:
        packet_name, overload = qualified.rsplit(".", 1)
        add("aten", packet_name, overload)
    import torch._prims

    # The prims torch defines itself; others (inductor's) appear only once their module loads.
    for packet_name in sorted(set(packets["prims"]) & set(torch._prims.__all__)):
        packet = getattr(torch.ops.prims, packet_name, None)
        if packet is None or not hasattr(packet, "overloads"):
            continue
        for overload in packet.overloads():
            add("prims", packet_name, overload)
    return [found[k] for k in sorted(found)]


def _camel(text: str) -> str:
    lead = "_" if text.startswith("_") else ""
    return lead + "".join(p[:1].upper() + p[1:] for p in text.split("_") if p)


def class_name(o: Overload) -> str:
    return f"{_camel(o.namespace)}{_camel(o.op)}{_camel(o.overload)}Op"


def op_name(o: Overload) -> str:
    return f"torch.{o.namespace}.{o.op}" + (f".{o.overload}" if o.overload else "")


def _field(name: str) -> str:
    field = re.sub(r"\W", "_", name)
    if keyword.iskeyword(field) or field in _RESERVED:
        field += "_"
    return field


def _default(arg_type: str, c_arg: object) -> tuple[bool, object]:
    """(required, default as a Python value) of one argument."""
    if not c_arg.has_default_value():  # type: ignore[attr-defined]
        return True, None
    value = c_arg.default_value  # type: ignore[attr-defined]
    if value is None or isinstance(value, bool | int | float | str):
        if "ScalarType" in arg_type and isinstance(value, int) and not isinstance(value, bool):
            if value not in _SCALAR_TYPE_CODES:
                raise SystemExit(f"unknown ScalarType code {value} in {c_arg}")
            return False, _SCALAR_TYPE_CODES[value]  # base.py reads it as an element type
        return False, value
    if isinstance(value, list | tuple) and all(isinstance(v, bool | int | float) for v in value):
        return False, list(value)
    return False, str(value)  # a layout or memory format: by its name


def render_op(o: Overload) -> str:
    schema = o.schema
    c_args = {a.name: a for a in o.c_schema.arguments}  # type: ignore[attr-defined]
    args = []
    defs = []
    props = []
    for a in schema.arguments.flat_all:  # type: ignore[attr-defined]
        text = str(a.type)
        text = re.sub(r"\[\d+\]", "[]", text)
        field = _field(a.name)
        required, default = _default(text, c_args[a.name])
        kwarg_only = a in schema.arguments.flat_kwarg_only  # type: ignore[attr-defined]
        extra = ""
        if not required:
            extra += f", default={default!r}, required=False"
        if kwarg_only:
            extra += ", kwarg_only=True"
        args.append(f"Arg({a.name!r}, {field!r}, {text!r}{extra})")
        if text in ("Tensor",):
            defs.append(f"    {field} = operand_def(TensorType)")
        elif text == "Tensor?":
            defs.append(f"    {field} = opt_operand_def(TensorType)")
        elif text in ("Tensor[]", "Tensor?[]"):
            defs.append(f"    {field} = var_operand_def(TensorType)")
            if text == "Tensor?[]":
                props.append(
                    f"    {field}_present = opt_prop_def(Attribute, prop_name={a.name + '_present'!r})"
                )
        else:
            props.append(f"    {field} = opt_prop_def(Attribute, prop_name={a.name!r})")
    defs.append("    symbols = var_operand_def()")
    rets = []
    for i, r in enumerate(schema.returns):  # type: ignore[attr-defined]
        rname = r.name or ("result" if len(schema.returns) == 1 else f"result{i}")  # type: ignore[attr-defined]
        field = _field(rname) if rname != "result" else "result"
        rtype = str(r.type)
        rets.append(f"Ret({(r.name or '')!r}, {field!r}, {rtype!r})")
        if rtype == "Tensor[]":
            defs.append(f"    {field} = var_result_def()")
        else:
            defs.append(f"    {field} = result_def()")
    lines = [
        "@irdl_op_definition",
        f"class {class_name(o)}(TorchOp):",
        f'    """`{o.namespace}::{o.op}{"." + o.overload if o.overload else ""}`: '
        f'{_doc_signature(o)}"""',
        "",
        f"    name = {op_name(o)!r}",
        "",
        *defs,
        *props,
        "    irdl_options = (AttrSizedOperandSegments(as_property=True),)",
    ]
    if not _IMPURE.match(o.op):
        lines.append("    traits = traits_def(Pure())")
    lines += [
        "",
        "    SCHEMA: ClassVar[OpSchema] = OpSchema(",
        f"        namespace={o.namespace!r},",
        f"        op={o.op!r},",
        f"        overload={o.overload!r},",
        _tuple_field("args", args),
        _tuple_field("returns", rets),
        "    )",
    ]
    return "\n".join(lines)


def _doc_signature(o: Overload) -> str:
    text = str(o.c_schema).split("(", 1)[1]
    text = "(" + text
    text = text.replace('"""', "'''").replace("\\", "\\\\")
    return textwrap.shorten(text, width=400, placeholder=" ...")


def _tuple_field(name: str, items: list[str]) -> str:
    if not items:
        return f"        {name}=(),"
    body = "".join(f"            {item},\n" for item in items)
    return f"        {name}=(\n{body}        ),"


HEADER = '''\
# GENERATED FILE - DO NOT EDIT.
# Generated by tools/gen_torch_dialect.py from the schemas of torch {version}.
# Regenerate with: python -m rung.tools.gen_torch_dialect
"""The generated op classes of the torch dialect, one per ATen or prims overload."""

from typing import ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import Pure

from .base import Arg, OpSchema, Ret, TorchOp

TORCH_VERSION = {version!r}
'''


def render() -> str:
    import torch

    version = torch.__version__.split("+")[0]
    found = overloads()
    parts = [HEADER.format(version=version)]
    names = [class_name(o) for o in found]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise SystemExit(f"class names clash: {sorted(duplicates)}")
    for o in found:
        parts.append("\n\n\n" + render_op(o))
    parts.append(
        "\n\n\nGENERATED_OPS: tuple[type[TorchOp], ...] = (\n"
        + textwrap.fill(
            ", ".join(names) + ",", width=96, initial_indent="    ", subsequent_indent="    "
        )
        + "\n)\n"
    )
    return "".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is out of date")
    parser.add_argument("-o", "--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = args.output.read_text() if args.output.exists() else ""
        if current != text:
            print(
                f"{args.output} is out of date; run python -m rung.tools.gen_torch_dialect",
                file=sys.stderr,
            )
            return 1
        return 0
    tmp = args.output.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.replace(args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
