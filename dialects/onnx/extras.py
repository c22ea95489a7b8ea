"""Hand-written onnx-dialect ops that no ONNX schema describes.

- `onnx.Yield` ends the region of a graph attribute (If, Loop, Scan, …) and
  returns the graph's outputs; it is defined in `regions.py`, beside the
  check every graph attribute passes, and listed here with the other extras.
- `onnx.Custom` holds a node of any domain the dialect does not model
  (`com.microsoft`, custom domains, preview domains), so such nodes are never
  dropped: users can write patterns that match on its domain and op type.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, NoneType, StringAttr, i64
from xdsl.ir import Attribute, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    var_operand_def,
    var_region_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from .base import parse_signature, print_location, print_signature, trim_absent
from .regions import YieldOp, verify_graph_region


@irdl_op_definition
class CustomOp(IRDLOperation):
    """A node of a domain the onnx dialect does not model, kept as it was.

    `domain` and `op_type` name the ONNX op; its ONNX attributes are the op's
    attributes; graph attributes are regions, named by `graph_names`. Absent
    optional inputs and outputs are remembered by position so that the node can
    be written back exactly. Syntax:

        %y = onnx.Custom "com.microsoft" "FusedMatMul"(%a, %b) {alpha = 1.0 : f32}
               : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    """

    name = "onnx.Custom"

    inputs = var_operand_def()
    outputs = var_result_def()
    domain = prop_def(StringAttr)
    op_type = prop_def(StringAttr)
    absent_inputs = opt_prop_def(DenseArrayBase)
    absent_outputs = opt_prop_def(DenseArrayBase)
    graph_names = opt_prop_def(ArrayAttr[StringAttr])
    graphs = var_region_def()

    def __init__(
        self,
        domain: str,
        op_type: str,
        inputs: Sequence[SSAValue | None],
        output_types: Sequence[Attribute | None],
        attributes: dict[str, Attribute] | None = None,
        graphs: dict[str, Region] | None = None,
    ) -> None:
        properties: dict[str, Attribute] = {
            "domain": StringAttr(domain),
            "op_type": StringAttr(op_type),
        }
        absent_in = [i for i, v in enumerate(inputs) if v is None]
        absent_out = [i for i, t in enumerate(output_types) if t is None]
        if absent_in:
            properties["absent_inputs"] = DenseArrayBase.from_list(i64, absent_in)
        if absent_out:
            properties["absent_outputs"] = DenseArrayBase.from_list(i64, absent_out)
        if graphs:
            properties["graph_names"] = ArrayAttr([StringAttr(n) for n in graphs])
        super().__init__(
            operands=[[v for v in inputs if v is not None]],
            result_types=[[t for t in output_types if t is not None]],
            properties=properties,
            attributes=attributes or {},
            regions=[list((graphs or {}).values())],
        )

    def graph_name_list(self) -> list[str]:
        names = self.graph_names
        if names is None:
            return []
        return [a.data for a in names.data]

    def _by_position(self, values: Sequence[SSAValue], absent: Attribute | None) -> list:
        holes = set() if absent is None else set(absent.get_values())  # type: ignore[union-attr]
        out: list[SSAValue | None] = []
        it = iter(values)
        total = len(values) + len(holes)
        for pos in range(total):
            out.append(None if pos in holes else next(it))
        return out

    def onnx_inputs(self) -> list[SSAValue | None]:
        """Inputs by ONNX position; None where the node left an input empty."""
        return self._by_position(self.inputs, self.absent_inputs)

    def onnx_outputs(self) -> list[SSAValue | None]:
        """Outputs by ONNX position; None where the node left an output empty."""
        return self._by_position(self.outputs, self.absent_outputs)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.domain.data)
        printer.print_string(" ")
        printer.print_string_literal(self.op_type.data)
        print_signature(
            printer,
            trim_absent(self.onnx_inputs()),
            {},
            self.attributes,
            trim_absent(self.onnx_outputs()),
        )
        for name, region in zip(self.graph_name_list(), self.graphs, strict=True):
            printer.print_string(" ")
            printer.print_string_literal(name)
            printer.print_string(" ")
            printer.print_region(region)
        print_location(printer, self)

    @classmethod
    def parse(cls, parser: Parser) -> CustomOp:
        domain = parser.parse_str_literal()
        op_type = parser.parse_str_literal()
        operands, attrs, result_types = parse_signature(parser, cls.name)
        graphs: dict[str, Region] = {}
        while (name := parser.parse_optional_str_literal()) is not None:
            graphs[name] = parser.parse_region()
        return cls(
            domain,
            op_type,
            operands,
            [None if isinstance(t, NoneType) else t for t in result_types],
            attrs,
            graphs,
        )

    def verify_(self) -> None:
        for what, absent, present in (
            ("inputs", self.absent_inputs, len(self.inputs)),
            ("outputs", self.absent_outputs, len(self.outputs)),
        ):
            if absent is None:
                continue
            holes = absent.get_values()
            total = present + len(holes)
            if len(set(holes)) != len(holes) or any(not 0 <= h < total for h in holes):
                raise VerifyException(
                    f"onnx.Custom: absent_{what} {list(holes)} must be distinct positions "
                    f"below {total} (the op has {present} {what})"
                )
        names = self.graph_name_list()
        if len(names) != len(self.graphs):
            raise VerifyException(
                f"onnx.Custom: {len(self.graphs)} regions but {len(names)} graph names"
            )
        for name, region in zip(names, self.graphs, strict=True):
            verify_graph_region(self, name, region)


EXTRA_OPS: tuple[type[IRDLOperation], ...] = (YieldOp, CustomOp)
