"""Generate `dialects/onnx/generated_ops.py` from the installed ONNX schemas.

One op class per op of the `ai.onnx` and `ai.onnx.ml` domains, at its latest
version. The output is static Python source: importing it costs no schema
look-ups at start-up, and type checkers see every accessor. Verifiers,
syntax and defaults are written by hand in `dialects/onnx/base.py` and driven
by the `SCHEMA` table each class carries.

    python -m rung.tools.gen_onnx_dialect            # rewrite the file
    python -m rung.tools.gen_onnx_dialect --check    # exit 1 if it is stale
"""

from __future__ import annotations

import argparse
import keyword
import re
import sys
import textwrap
from pathlib import Path

import onnx
import onnx.defs
from onnx import AttributeProto, helper

DOMAINS = {"": ("onnx.", ""), "ai.onnx.ml": ("onnx.ml.", "Ml")}

OUTPUT = Path(__file__).resolve().parent.parent / "dialects" / "onnx" / "generated_ops.py"

# Names a generated field must not take: they belong to IRDLOperation or OnnxOp.
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
    "attr",
    "graph_regions",
    "onnx_inputs",
    "onnx_outputs",
    "onnx_attributes",
    "SCHEMA",
    "irdl_options",
    "body",
    "get",
    "walk",
    "dialect_name",
    "result",
    "ops",
}


# Ops whose results are not a function of their inputs: CSE and DCE must keep them.
IMPURE_OPS = {
    "Bernoulli",
    "Dropout",
    "Multinomial",
    "RandomNormal",
    "RandomNormalLike",
    "RandomUniform",
    "RandomUniformLike",
}

_ARITY = {
    onnx.defs.OpSchema.FormalParameterOption.Single: "SINGLE",
    onnx.defs.OpSchema.FormalParameterOption.Optional: "OPTIONAL",
    onnx.defs.OpSchema.FormalParameterOption.Variadic: "VARIADIC",
}


def latest_schemas() -> list[onnx.defs.OpSchema]:
    """The newest version of every op in the domains the dialect models."""
    latest: dict[tuple[str, str], onnx.defs.OpSchema] = {}
    for schema in onnx.defs.get_all_schemas_with_history():
        if schema.domain not in DOMAINS:
            continue
        key = (schema.domain, schema.name)
        if key not in latest or latest[key].since_version < schema.since_version:
            latest[key] = schema
    return [latest[k] for k in sorted(latest)]


def _field_name(name: str, taken: set[str], suffix: str) -> str:
    field = re.sub(r"\W", "_", name)
    if field[0].isdigit():
        field = "_" + field
    if keyword.iskeyword(field) or field in _RESERVED:
        field += "_"
    while field in taken:
        field += suffix
    taken.add(field)
    return field


def _summary(doc: str) -> str:
    """The first paragraph of an ONNX doc string, as plain text."""
    text = (doc or "").strip()
    paragraph = re.split(r"\n\s*\n", text)[0] if text else ""
    paragraph = re.sub(r"<[^>]+>", "", paragraph)
    paragraph = re.sub(r"\s+", " ", paragraph).strip()
    paragraph = paragraph.replace("\\", "\\\\").replace('"""', "'''")
    return paragraph or "(no description)"


def _default(attr: onnx.defs.OpSchema.Attribute) -> str:
    proto = attr.default_value
    if proto is None or proto.type == AttributeProto.UNDEFINED:
        return "None"
    if proto.type in (AttributeProto.TENSOR, AttributeProto.GRAPH, AttributeProto.SPARSE_TENSOR):
        return "None"
    value = helper.get_attribute_value(proto)
    if isinstance(value, bytes):
        value = value.decode("utf-8")
    if isinstance(value, list):
        value = tuple(v.decode("utf-8") if isinstance(v, bytes) else v for v in value)
    return repr(value)


def _class_name(schema: onnx.defs.OpSchema) -> str:
    return f"{DOMAINS[schema.domain][1]}{schema.name}Op"


def render_op(schema: onnx.defs.OpSchema) -> str:
    prefix, _ = DOMAINS[schema.domain]
    taken: set[str] = set()
    lines: list[str] = []
    cls = _class_name(schema)
    lines.append("@irdl_op_definition")
    lines.append(f"class {cls}(OnnxOp):")
    doc = _summary(schema.doc)
    deprecated = " Deprecated in ONNX." if schema.deprecated else ""
    domain = schema.domain or "ai.onnx"
    wrapped = textwrap.fill(doc, width=92, initial_indent="    ", subsequent_indent="    ").lstrip()
    lines.append(f'    """{wrapped}')
    lines.append("")
    lines.append(f"    ONNX: {domain} {schema.name}-{schema.since_version}.{deprecated}")
    lines.append('    """')
    lines.append("")
    lines.append(f'    name = "{prefix}{schema.name}"')
    lines.append("")

    def params(formals: list, kind: str, suffix: str) -> list[str]:
        out = []
        for p in formals:
            field = _field_name(p.name, taken, suffix)
            arity = _ARITY[p.option]
            fn = {
                "SINGLE": f"{kind}_def",
                "OPTIONAL": f"opt_{kind}_def",
                "VARIADIC": f"var_{kind}_def",
            }[arity]
            lines.append(f"    {field} = {fn}()")
            out.append(
                f"Param({p.name!r}, {field!r}, Arity.{arity}, {p.type_str!r}, "
                f"{bool(p.is_homogeneous)!r}, {int(p.min_arity)})"
            )
        return out

    inputs = params(list(schema.inputs), "operand", "_in")
    outputs = params(list(schema.outputs), "result", "_out")

    attrs: list[str] = []
    regions: list[str] = []
    # Alphabetical, except that If reads then → else.
    for name in sorted(schema.attributes, key=lambda n: (n != "then_branch", n)):
        attr = schema.attributes[name]
        kind = attr.type.name
        if kind in ("GRAPH", "GRAPHS"):
            if kind == "GRAPHS" or not attr.required:
                raise SystemExit(
                    f"{schema.name}: graph attribute '{name}' is not a single required graph"
                )
            field = _field_name(name, taken, "_graph")
            lines.append(f"    {field} = region_def()")
            regions.append(name)
            continue
        field = _field_name(name, taken, "_attr")
        # Any attribute passes IRDL; OnnxOp's verifier checks the ONNX kind and
        # says which attribute is wrong in ONNX's terms.
        fn = "prop_def" if attr.required else "opt_prop_def"
        lines.append(f"    {field} = {fn}(AnyAttr(), prop_name={name!r})")
        attrs.append(
            f"AttrInfo({name!r}, {field!r}, {kind!r}, {bool(attr.required)!r}, {_default(attr)})"
        )

    def count_groups(formals: list) -> int:
        return sum(1 for p in formals if _ARITY[p.option] != "SINGLE")

    options = []
    if count_groups(list(schema.inputs)) > 1:
        options.append("AttrSizedOperandSegments(as_property=True)")
    if count_groups(list(schema.outputs)) > 1:
        options.append("AttrSizedResultSegments(as_property=True)")
    if options:
        lines.append(f"    irdl_options = ({', '.join(options)},)")
    if schema.name not in IMPURE_OPS and regions:
        # As pure as the graphs they run.
        lines.append("    traits = traits_def(RecursiveMemoryEffect())")
    elif schema.name not in IMPURE_OPS:
        lines.append("    traits = traits_def(Pure())")

    constraints = {c.type_param_str: tuple(c.allowed_type_strs) for c in schema.type_constraints}
    lines.append("")
    lines.append("    SCHEMA: ClassVar[OpSchema] = OpSchema(")
    lines.append(f"        domain={schema.domain!r},")
    lines.append(f"        op_type={schema.name!r},")
    lines.append(f"        version={schema.since_version},")
    lines.append(_tuple_field("inputs", inputs))
    lines.append(_tuple_field("outputs", outputs))
    lines.append(_tuple_field("attributes", attrs))
    lines.append(f"        regions={tuple(regions)!r},")
    lines.append("        type_constraints={")
    for key, allowed in constraints.items():
        lines.append(f"            {key!r}: {allowed!r},")
    lines.append("        },")
    lines.append("    )")
    return "\n".join(lines)


def _tuple_field(name: str, items: list[str]) -> str:
    if not items:
        return f"        {name}=(),"
    body = "".join(f"            {item},\n" for item in items)
    return f"        {name}=(\n{body}        ),"


HEADER = '''\
# GENERATED FILE - DO NOT EDIT.
# Generated by tools/gen_onnx_dialect.py from the schemas of onnx {version}.
# Regenerate with: python -m rung.tools.gen_onnx_dialect
"""The generated op classes of the onnx dialect, one per ONNX op at its latest version."""

from typing import ClassVar

from xdsl.irdl import (
    AnyAttr,
    AttrSizedOperandSegments,
    AttrSizedResultSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    opt_result_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import Pure, RecursiveMemoryEffect

from .base import Arity, AttrInfo, OnnxOp, OpSchema, Param

ONNX_VERSION = {version!r}
OPSET_VERSIONS = {opsets!r}
'''


def render() -> str:
    schemas = latest_schemas()
    opsets = {
        domain: max(s.since_version for s in schemas if s.domain == domain) for domain in DOMAINS
    }
    # The dialect's canonical opset is the newest the library knows, even where
    # no op changed in it.
    opsets[""] = max(opsets[""], onnx.defs.onnx_opset_version())
    parts = [HEADER.format(version=onnx.__version__, opsets=opsets)]
    for schema in schemas:
        parts.append("\n\n" + render_op(schema))
    names = ", ".join(_class_name(s) for s in schemas)
    parts.append(
        "\n\n\nGENERATED_OPS: tuple[type[OnnxOp], ...] = (\n"
        + textwrap.fill(names + ",", width=96, initial_indent="    ", subsequent_indent="    ")
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
                f"{args.output} is out of date; run python -m rung.tools.gen_onnx_dialect",
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
