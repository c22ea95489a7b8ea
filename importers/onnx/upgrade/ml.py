"""Upgrade rules for ai.onnx.ml: LabelEncoder-1, and TreeEnsembleRegressor → TreeEnsemble."""

from __future__ import annotations

import numpy as np
from onnx import NodeProto, TensorProto, helper, numpy_helper

from .context import Ctx
from .history import ML
from .protos import get_attr, ints, pop_attr, set_attr
from .registry import Out, upgrades


@upgrades(("LabelEncoder", 1), domain=ML)
def _label_encoder_1(ctx: Ctx, node: NodeProto) -> None:
    """LabelEncoder-2 maps explicit keys to values; version 1 mapped list index <-> string.

    The direction came from which default was set (int64 default: strings to
    ints), falling back to the input type.
    """
    classes = list(pop_attr(node, "classes_strings", []))
    default_int = pop_attr(node, "default_int64")
    default_str = pop_attr(node, "default_string")
    to_int: bool | None = None
    if (default_int is None) != (default_str is None):
        to_int = default_int is not None
    else:
        elem = ctx.elem_type(node.input[0])
        if elem is not None:
            to_int = elem == TensorProto.STRING
    if to_int is None:
        raise ctx.error(
            node,
            1,
            "cannot tell whether it maps strings to ints or back; set one default_* attribute",
        )
    indices = list(range(len(classes)))
    if to_int:
        set_attr(node, "keys_strings", classes)
        set_attr(node, "values_int64s", indices)
        set_attr(node, "default_int64", -1 if default_int is None else int(default_int))
    else:
        set_attr(node, "keys_int64s", indices)
        set_attr(node, "values_strings", classes)
        set_attr(node, "default_string", "_Unused" if default_str is None else str(default_str))


_TREE_MODES = {
    "BRANCH_LEQ": 0, "BRANCH_LT": 1, "BRANCH_GTE": 2, "BRANCH_GT": 3, "BRANCH_EQ": 4, "BRANCH_NEQ": 5,
}  # fmt: skip


_TREE_AGGREGATES = {"AVERAGE": 0, "SUM": 1, "MIN": 2, "MAX": 3}


def _tensor_or_list(node: NodeProto, name: str) -> np.ndarray | None:
    """`name_as_tensor` (double) if present, else the float list `name`."""
    value = get_attr(node, name + "_as_tensor")
    if value is not None:
        return numpy_helper.to_array(value).astype(np.float64).reshape(-1)
    value = get_attr(node, name)
    return None if value is None else np.array(value, dtype=np.float32)


@upgrades(("TreeEnsembleRegressor", 3), domain=ML)
def _tree_ensemble_regressor_3(ctx: Ctx, node: NodeProto) -> Out:
    """ai.onnx.ml 5 replaced TreeEnsembleRegressor with TreeEnsemble.

    TreeEnsemble lists interior nodes and leaves separately, gives each leaf one
    (target, weight), has no base values and computes in the input's type.
    Leaves voting for several targets become one tree copy per target (SUM and
    AVERAGE only); base values, the post transform and the float output of the
    old op become explicit nodes after it. (The post transform goes after the
    base values, and TreeEnsemble's own enum is read differently by onnxruntime,
    so Softmax/Sigmoid nodes are used instead.)
    """
    treeids = ints(get_attr(node, "nodes_treeids", []))
    nodeids = ints(get_attr(node, "nodes_nodeids", []))
    modes = list(get_attr(node, "nodes_modes", []))
    features = ints(get_attr(node, "nodes_featureids", []))
    true_ids = ints(get_attr(node, "nodes_truenodeids", []))
    false_ids = ints(get_attr(node, "nodes_falsenodeids", []))
    missing = ints(get_attr(node, "nodes_missing_value_tracks_true", [])) or [0] * len(treeids)
    values = _tensor_or_list(node, "nodes_values")
    weights = _tensor_or_list(node, "target_weights")
    base = _tensor_or_list(node, "base_values")
    n_targets = int(get_attr(node, "n_targets", 1))
    aggregate = get_attr(node, "aggregate_function", "SUM")
    post = get_attr(node, "post_transform", "NONE")
    x, hint = node.input[0], node.output[0]
    if values is None or weights is None or aggregate not in _TREE_AGGREGATES:
        raise ctx.error(
            node, 3, "it lacks node values or target weights, or has an unknown aggregate"
        )
    wide = (
        values.dtype == np.float64
        or weights.dtype == np.float64
        or (base is not None and base.dtype == np.float64)
    )
    dtype = np.float64 if wide or ctx.elem_type(x) == TensorProto.DOUBLE else np.float32

    index = {(t, n): i for i, (t, n) in enumerate(zip(treeids, nodeids, strict=True))}
    votes: dict[tuple[int, int], dict[int, list[float]]] = {}
    for t, n, target, w in zip(
        ints(get_attr(node, "target_treeids", [])),
        ints(get_attr(node, "target_nodeids", [])),
        ints(get_attr(node, "target_ids", [])),
        weights.tolist(),
        strict=True,
    ):
        votes.setdefault((t, n), {}).setdefault(target, []).append(w)
    combine = {"MIN": min, "MAX": max}.get(aggregate, sum)
    multi = any(len(v) > 1 for v in votes.values())
    if aggregate in ("MIN", "MAX") and n_targets != 1:
        # A target no reached leaf votes for is 0 in onnxruntime and the float limit in
        # onnx's reference: there is no agreed meaning to carry over.
        raise ctx.error(node, 3, f"{aggregate} over {n_targets} targets is ambiguous")
    trees = sorted(set(treeids))
    copies = list(range(n_targets)) if multi else [None]

    nodes: dict[str, list] = {
        k: []
        for k in (
            "modes",
            "features",
            "splits",
            "missing",
            "true",
            "false",
            "true_leaf",
            "false_leaf",
        )
    }
    leaf_targets: list[int] = []
    leaf_weights: list[float] = []
    roots: list[int] = []

    def leaf(key: tuple[int, int], target: int | None) -> int:
        by_target = votes.get(key, {})
        if target is None:
            if len(by_target) == 0 and aggregate in ("MIN", "MAX"):
                raise ctx.error(node, 3, f"a leaf without a vote has no {aggregate} equivalent")
            target = next(iter(by_target), 0)
        weight = combine(by_target.get(target, [0.0]))
        if aggregate == "AVERAGE" and multi:
            weight /= len(trees)  # copies multiply the tree count TreeEnsemble averages over
        leaf_targets.append(target)
        leaf_weights.append(weight)
        return len(leaf_targets) - 1

    def interior(i: int, tree: int, target: int | None) -> int:
        k = len(nodes["modes"])
        for field_name in nodes:
            nodes[field_name].append(0)
        nodes["modes"][k] = _TREE_MODES[modes[i]]
        nodes["features"][k] = features[i]
        nodes["splits"][k] = float(values[i])
        nodes["missing"][k] = missing[i]
        for side, child in (("true", true_ids[i]), ("false", false_ids[i])):
            c = index[(tree, child)]
            if modes[c] == "LEAF":
                nodes[side][k], nodes[side + "_leaf"][k] = leaf((tree, child), target), 1
            else:
                nodes[side][k], nodes[side + "_leaf"][k] = interior(c, tree, target), 0
        return k

    for target in copies:
        for tree in trees:
            root = index.get((tree, 0), min(i for i, t in enumerate(treeids) if t == tree))
            if modes[root] == "LEAF":
                # A one-leaf tree: a split whose branches reach equal leaves. (Not the
                # spec's "both branches name the same leaf", which onnx's reference
                # evaluator decodes wrongly.)
                k = len(nodes["modes"])
                a, b = leaf((tree, nodeids[root]), target), leaf((tree, nodeids[root]), target)
                for field_name, v in zip(nodes, (0, 0, 0.0, 0, a, b, 1, 1), strict=True):
                    nodes[field_name].append(v)
                roots.append(k)
            else:
                roots.append(interior(root, tree, target))

    helpers: list[NodeProto] = []
    x_in = x
    if ctx.elem_type(x) != helper.np_dtype_to_tensor_dtype(np.dtype(dtype)):
        cast_in = ctx.make(
            "Cast", [x], hint + "_x", to=helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
        )
        helpers.append(cast_in)
        x_in = cast_in.output[0]
    if post not in ("NONE", "SOFTMAX", "LOGISTIC"):
        raise ctx.error(node, 3, f"post_transform {post} has no standard-op equivalent")
    attrs: dict[str, object] = {
        "tree_roots": roots,
        "nodes_modes": numpy_helper.from_array(np.array(nodes["modes"], np.uint8)),
        "nodes_featureids": nodes["features"],
        "nodes_splits": numpy_helper.from_array(np.array(nodes["splits"], dtype)),
        "nodes_truenodeids": nodes["true"],
        "nodes_trueleafs": nodes["true_leaf"],
        "nodes_falsenodeids": nodes["false"],
        "nodes_falseleafs": nodes["false_leaf"],
        "leaf_targetids": leaf_targets,
        "leaf_weights": numpy_helper.from_array(np.array(leaf_weights, dtype)),
        "n_targets": n_targets,
        "aggregate_function": _TREE_AGGREGATES["SUM" if multi else aggregate],
    }  # fmt: skip
    if any(missing):
        attrs["nodes_missing_value_tracks_true"] = nodes["missing"]
    trees_node = helper.make_node(
        "TreeEnsemble",
        [x_in],
        [ctx.fresh(hint + "_trees")],
        name=node.name or ctx.fresh(hint + "_trees"),
        domain=ML,
        **attrs,
    )
    out = [*helpers, trees_node]
    y = trees_node.output[0]
    if base is not None:
        add = ctx.make(
            "Add", [y, ctx.add_const(hint + "_base", base.astype(dtype).reshape(1, -1))], hint
        )
        out.append(add)
        y = add.output[0]
    if post != "NONE":
        post_node = ctx.make(
            "Softmax" if post == "SOFTMAX" else "Sigmoid",
            [y],
            hint,
            **({"axis": -1} if post == "SOFTMAX" else {}),
        )
        out.append(post_node)
        y = post_node.output[0]
    if dtype != np.float32:
        to_float = ctx.make("Cast", [y], hint, to=TensorProto.FLOAT)  # the old output was float
        out.append(to_float)
        y = to_float.output[0]
    out[-1].output[0] = node.output[0]
    return Out(out)
