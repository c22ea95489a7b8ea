"""Upgrade rules for recurrent ops: GRU, LSTM, RNN, and Scan-8's batch axis."""

from __future__ import annotations

from onnx import GraphProto, NodeProto, TensorProto, ValueInfoProto, helper

from .context import Ctx
from .protos import get_attr, input_at, ints, pop_attr, set_attr
from .registry import Out, always, upgrades


@upgrades(("GRU", 3), ("LSTM", 1), ("RNN", 1), converter_wrong=always)
def _drop_output_sequence(ctx: Ctx, node: NodeProto) -> None:
    """`output_sequence` only said whether Y is produced; optional outputs say that now."""
    pop_attr(node, "output_sequence")


@upgrades(("GRU", 1), converter_wrong=always)
def _gru_1(ctx: Ctx, node: NodeProto) -> None:
    """GRU-1 spelled the default direction 'foward'."""
    if get_attr(node, "direction") == "foward":
        set_attr(node, "direction", "forward")


@upgrades(("Scan", 8), converter_wrong=always)
def _scan_8(ctx: Ctx, node: NodeProto) -> Out:
    """Scan-8 had a leading batch axis on every input and output; Scan-9 has none.

    An outer Scan over the batch axis, whose body runs the original scan on one
    batch item, is exactly the old meaning. onnx's adapter just drops the batch
    axis from the metadata, so the new Scan iterates over the batch instead.
    """
    if input_at(node, 0):
        raise ctx.error(
            node,
            8,
            "sequence_lens has no Scan-9 equivalent; remove it if all sequences are full length",
        )
    body = get_attr(node, "body")
    assert isinstance(body, GraphProto)
    m = int(get_attr(node, "num_scan_inputs"))
    directions = get_attr(node, "directions")
    inputs = list(node.input[1:])
    n_state = len(inputs) - m
    hint = node.output[0] if node.output else "scan"

    def slot(v: ValueInfoProto) -> ValueInfoProto:
        elem = v.type.tensor_type.elem_type if v.type.HasField("tensor_type") else TensorProto.FLOAT
        return helper.make_tensor_value_info(ctx.fresh(f"{hint}_{v.name}"), elem, None)

    outer_in = [slot(v) for v in body.input]
    outer_out = [slot(v) for v in body.output]
    inner_attrs: dict[str, object] = {"body": body, "num_scan_inputs": m}
    if directions:
        inner_attrs["scan_input_directions"] = ints(directions)
    inner = helper.make_node(
        "Scan",
        [v.name for v in outer_in],
        [v.name for v in outer_out],
        name=ctx.fresh(hint + "_item"),
        **inner_attrs,
    )
    outer_body = helper.make_graph([inner], ctx.fresh(hint + "_batch_item"), outer_in, outer_out)
    outer = helper.make_node(
        "Scan", inputs, list(node.output), name=node.name or ctx.fresh(hint + "_batch"),
        body=outer_body, num_scan_inputs=n_state + m,
    )  # fmt: skip
    return Out([outer])
