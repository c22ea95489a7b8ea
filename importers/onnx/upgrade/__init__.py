"""Bring an ONNX model of any opset to the single op form rung's onnx dialect holds.

The dialect knows one version of every op: its newest schema. Rather than teach
the importer every historical variant, models are rewritten up front, as a pure
`ModelProto -> ModelProto` transform:

1. `onnx.version_converter` does the bulk of the default domain, because it is
   fast (C++) and maintained upstream.
2. Nodes the converter has no adapter for, or that it converts wrongly (all
   verified, see `CONVERTER_WRONG`), are hidden from it in a private domain,
   and upgraded afterwards by our own node-level rules (`RULES`), one small
   function per `(op_type, version it upgrades from)`.
3. If the converter fails anyway, our rules upgrade the whole model alone;
   they cover every transition in the schema history, so they never need it.
4. What the converter leaves behind (deprecated ops such as `Scatter` or
   `Upsample` that are still valid at its target, the local functions and graph
   metadata it drops, an `ir_version` too old for the new opset) is fixed after.

A transition neither in `RULES` nor reviewed as compatible (`COMPATIBLE`)
raises `RungError`: silently keeping an op whose meaning changed is worse than
failing.

What the converter (onnx 1.23, convert.h and adapters/) does not do right, and
so never sees here:

* no adapter: And/Or/Xor/Equal/Greater/Less-1, Cast-1, Tile-1, Pad-1, Split-1,
  GlobalLpPool-1, LpPool-1, GRU-1/3, LSTM-1, RNN-1; Scan-8 with sequence_lens;
* wrong results: legacy `axis` broadcasting (appends rank(A) - rank(B) dims
  whatever the axis), PRelu-6 per-channel slopes and Hardmax-11 (both treated
  as compatible), Resize-10 and Upsample (Resize-11's half_pixel default kept),
  Upsample-1 'bilinear' (not renamed), GroupNormalization-18 (left unchanged),
  Scan-8 (batch axis only dropped from the metadata), BatchNormalization-9
  training outputs (kept without training_mode);
* invalid output: Pad-2 / Clip-6 constants always float32;
* refusals: is_test=0, spatial=0, and adapters needing static shapes fail.

Layout: this module drives the upgrade; `converter` runs the round trip
through onnx's converter; `registry` holds the rule tables, `compatible` the
reviewed transitions, `history` the schema versions, `context` and `protos`
what rules work with. The rules themselves sit by op family: `math`,
`tensor`, `reduce`, `nn`, `image`, `rnn`, `ml` and `experimental`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import onnx
from onnx import FunctionProto, GraphProto, ModelProto, NodeProto, helper

from rung.errors import RungError

# Importing the rule modules registers their rules.
from . import experimental, image, math, ml, nn, reduce, rnn, tensor  # noqa: F401
from .compatible import COMPATIBLE
from .context import Ctx, Scope
from .converter import UNPENDING, try_converter
from .experimental import EXPERIMENTAL_UNSUPPORTED
from .history import DEFAULT, ML, canon_domain, latest_opset, schema_histories
from .protos import subgraphs
from .registry import EXPERIMENTAL, RULES

# ---- driving the rules -------------------------------------------------------------------


def _label(node: NodeProto, index: int) -> str:
    return f"node '{node.name}'" if node.name else f"node #{index} ({node.op_type})"


def _start_version(ctx: Ctx, node: NodeProto, domain: str, opset: int) -> int | None:
    """The version `node` is at in a graph importing `opset`; None for experimental ops."""
    hist = schema_histories()[domain].get(node.op_type)
    version = hist.at(opset) if hist is not None else None
    if version is not None:
        return version
    if domain == DEFAULT and node.op_type in EXPERIMENTAL:
        return None
    domain_name = "ai.onnx" if domain == DEFAULT else domain
    if domain == DEFAULT and node.op_type in EXPERIMENTAL_UNSUPPORTED:
        raise RungError(
            f"op '{node.op_type}' at {ctx.node_label} (opset {opset}) was an experimental ONNX op "
            "that onnx removed; rung cannot upgrade it — re-export the model with standard ops"
        )
    if hist is None:
        kind = "an ONNX operator" if domain == DEFAULT else "an ONNX-ML operator"
        raise RungError(
            f"unknown op '{node.op_type}' in domain '{domain_name}' (opset {opset}) at "
            f"{ctx.node_label}; it is not {kind} — is the domain wrong?"
        )
    raise RungError(
        f"op '{node.op_type}' at {ctx.node_label} does not exist in {domain_name} opset {opset} "
        f"(it was added in opset {hist.versions[0]}); fix the model's opset_import"
    )


def _upgrade_node(ctx: Ctx, node: NodeProto, version: int | None, domain: str) -> list[NodeProto]:
    """Walk one node from `version` up to the target, rule by rule."""
    target = ctx.targets[domain]
    out = [node]
    if version is None:  # experimental op without schema
        res = EXPERIMENTAL[node.op_type](ctx, node)
        out = [*ctx.pending, *res.nodes]
        ctx.pending.clear()
        if not any(n is node for n in out):
            return out
        version = (
            res.version
            if res.version is not None
            else schema_histories()[domain][node.op_type].at(target)
        )
    histories = schema_histories()[domain]
    steps = 0
    while True:
        hist = histories[node.op_type]
        assert version is not None
        steps += 1
        if steps > 64:
            raise AssertionError(f"upgrade rules for {node.op_type} do not terminate")
        deprecated = version == hist.removed
        nxt = version if deprecated else hist.after(version, target)
        if nxt is None:
            return out
        rule = RULES.get((domain, node.op_type, version))
        if rule is None:
            if not deprecated and version in COMPATIBLE[domain].get(node.op_type, ()):
                version = nxt
                continue
            if deprecated or nxt == hist.removed:
                what = (
                    f"the op was removed in opset {hist.removed} and rung has no rule "
                    f"replacing it; keep a target opset below {hist.removed}"
                )
            else:
                what = f"rung has no rule for the change to version {nxt}; add one in rung.importers.onnx.upgrade"
            raise ctx.error(node, version, what)
        op_before = node.op_type
        res = rule(ctx, node)
        replacement = [*ctx.pending, *(res.nodes if res is not None else [node])]
        ctx.pending.clear()
        i = next(k for k, n in enumerate(out) if n is node)
        out[i : i + 1] = replacement
        if not any(n is node for n in replacement):
            return out
        if res is not None and res.version is not None:
            version = res.version
        elif node.op_type != op_before:
            version = histories[node.op_type].at(nxt)
        else:
            version = nxt


@dataclass
class _Plan:
    """Per default-domain source opset: where each node starts from."""

    opsets: dict[str, int]  # domain -> opset the graph's nodes were written against
    converted: bool  # default-domain nodes (not pending) are already at the target


def _upgrade_nodes(
    ctx: Ctx, nodes: list[NodeProto], plan: _Plan, graph_name: str
) -> list[NodeProto] | None:
    """Upgrade a node list; returns the new list, or None if nothing changed."""
    changed = False
    result: list[NodeProto] = []
    for index, node in enumerate(nodes):
        ctx.node_label = _label(node, index) + (f" in graph '{graph_name}'" if graph_name else "")
        pending = node.domain in UNPENDING
        if pending:
            node.domain = UNPENDING[node.domain]
            changed = True
        domain = canon_domain(node.domain)
        sub_plan = plan
        if plan.converted and (pending or domain != DEFAULT):
            # The converter only enters subgraphs of the default-domain nodes it converts.
            sub_plan = _Plan(plan.opsets, converted=False)
        for sub in subgraphs(node):
            _upgrade_graph(ctx, sub, sub_plan)
        ctx.node_label = _label(node, index) + (f" in graph '{graph_name}'" if graph_name else "")
        if domain not in ctx.targets or domain not in plan.opsets:
            result.append(node)
            continue
        opset = (
            ctx.targets[domain]
            if (domain == DEFAULT and plan.converted and not pending)
            else plan.opsets[domain]
        )
        version = _start_version(ctx, node, domain, opset)
        hist = schema_histories()[domain].get(node.op_type)
        if (
            version is not None
            and hist is not None
            and version != hist.removed
            and hist.after(version, ctx.targets[domain]) is None
        ):
            result.append(node)  # already in its target form: the common case, kept cheap
            continue
        result.extend(_upgrade_node(ctx, node, version, domain))
        changed = True
    return result if changed else None


def _upgrade_graph(ctx: Ctx, graph: GraphProto, plan: _Plan) -> None:
    outer = ctx.scope
    ctx.scope = Scope(graph, outer)
    try:
        new = _upgrade_nodes(ctx, list(graph.node), plan, graph.name if outer is not None else "")
        if new is not None:
            del graph.node[:]
            graph.node.extend(new)
    finally:
        ctx.scope = outer


def _upgrade_function(ctx: Ctx, fn: FunctionProto) -> None:
    opsets = {canon_domain(o.domain): o.version for o in fn.opset_import}
    outer = ctx.scope
    ctx.scope = Scope(None, None, function=fn)
    try:
        new = _upgrade_nodes(
            ctx, list(fn.node), _Plan(opsets, converted=False), f"function {fn.name}"
        )
        if new is not None:
            del fn.node[:]
            fn.node.extend(new)
    finally:
        ctx.scope = outer
    _retarget_opsets(fn.opset_import, ctx.targets)


def _retarget_opsets(imports: Any, targets: dict[str, int]) -> None:
    """Point the imports of upgraded domains at their targets."""
    for imp in imports:
        domain = canon_domain(imp.domain)
        if domain in targets:
            imp.version = targets[domain]


# ---- public API --------------------------------------------------------------------------


def _needs_work(model: ModelProto, opsets: dict[str, int], targets: dict[str, int]) -> bool:
    """Cheap scan: does any node need more than its current form?"""
    if any(opsets.get(d, targets[d]) != targets[d] for d in targets if d in opsets):
        return True
    histories = schema_histories()

    def scan(nodes: Any, local: dict[str, int]) -> bool:
        for node in nodes:
            domain = canon_domain(node.domain)
            if domain in targets and domain in local:
                hist = histories[domain].get(node.op_type)
                version = hist.at(local[domain]) if hist is not None else None
                if version is None or version == hist.removed:
                    return True  # unknown/experimental/deprecated: let the slow path say what
            for sub in subgraphs(node):
                if scan(sub.node, local):
                    return True
        return False

    if scan(model.graph.node, opsets):
        return True
    for fn in model.functions:
        local = {canon_domain(o.domain): o.version for o in fn.opset_import}
        if any(local[d] != targets[d] for d in targets if d in local) or scan(fn.node, local):
            return True
    return False


def upgrade_model(
    model: ModelProto,
    target_opset: int | None = None,
    target_ml_opset: int | None = None,
) -> tuple[ModelProto, dict[str, int]]:
    """Return (upgraded copy of model, original opset_import as {domain: version}).

    The default domain ("" or "ai.onnx") is brought to `target_opset` (default:
    the newest onnx knows) and "ai.onnx.ml" to `target_ml_opset` (default: its
    newest); other domains are left alone. A model already at the targets is
    returned as is, without copying. Raises `RungError` for ops that are not
    ONNX ops or whose change of meaning has no rule.
    """
    original = {imp.domain: imp.version for imp in model.opset_import}
    targets = {
        DEFAULT: latest_opset(DEFAULT) if target_opset is None else target_opset,
        ML: latest_opset(ML) if target_ml_opset is None else target_ml_opset,
    }
    opsets: dict[str, int] = {}
    for domain, version in original.items():
        canon = canon_domain(domain)
        if canon in targets:
            if canon in opsets and opsets[canon] != version:
                raise RungError(
                    f"the model imports {canon or 'ai.onnx'} twice, at opsets {opsets[canon]} and {version}"
                )
            opsets[canon] = version
    for domain, target in targets.items():
        name = "ai.onnx" if domain == DEFAULT else domain
        if not 1 <= target <= latest_opset(domain):
            raise RungError(
                f"target opset {target} for {name} is outside 1..{latest_opset(domain)}, what this onnx knows"
            )
        if domain in opsets and opsets[domain] > latest_opset(domain):
            raise RungError(
                f"the model uses {name} opset {opsets[domain]}, newer than onnx "
                f"{onnx.__version__} knows ({latest_opset(domain)}); upgrade the onnx package"
            )
        if domain in opsets and opsets[domain] > target:
            raise RungError(
                f"the model uses {name} opset {opsets[domain]}, newer than the target {target}; rung does not downgrade"
            )

    if not _needs_work(model, opsets, targets):
        return model, original

    source = opsets.get(DEFAULT)
    work: ModelProto | None = None
    if source is not None and source < targets[DEFAULT]:
        work = try_converter(model, source, targets[DEFAULT])
    converted = work is not None
    if work is None:
        work = ModelProto()
        work.CopyFrom(model)
    ctx = Ctx(targets=targets, source=model, work=work)
    _upgrade_graph(ctx, work.graph, _Plan(opsets, converted))
    _retarget_opsets(work.opset_import, targets)
    for fn in work.functions:
        _upgrade_function(ctx, fn)
    ids = [helper.make_opsetid(o.domain, o.version) for o in work.opset_import]
    try:
        work.ir_version = max(
            work.ir_version, helper.find_min_ir_version_for(ids, ignore_unknown=True)
        )
    except ValueError:
        pass  # an opset onnx has no IR mapping for: keep what the model said
    inputs = {v.name for v in work.graph.input}
    if work.ir_version < 4 and any(t.name not in inputs for t in work.graph.initializer):
        work.ir_version = 4  # IR 3 wanted every initializer listed as an input too
    return work, original


__all__ = ["upgrade_model"]
