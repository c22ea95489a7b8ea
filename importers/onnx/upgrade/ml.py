"""Upgrade rules for ai.onnx.ml: LabelEncoder-1, and TreeEnsembleRegressor and
TreeEnsembleClassifier → TreeEnsemble."""

from __future__ import annotations

from dataclasses import dataclass

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


Votes = dict[tuple[int, int], dict[int, list[float]]]
"""Per leaf (tree id, node id): the weights it gives each target or class."""


@dataclass
class _OldTrees:
    """The node tables of TreeEnsembleRegressor and TreeEnsembleClassifier, and the
    votes of their leaves (the regressor's `target_*` or the classifier's `class_*`)."""

    treeids: list[int]
    nodeids: list[int]
    modes: list[str]
    features: list[int]
    true_ids: list[int]
    false_ids: list[int]
    missing: list[int]
    values: np.ndarray
    weights: np.ndarray  # every vote's weight, in attribute order
    votes: Votes

    @staticmethod
    def read(ctx: Ctx, node: NodeProto, version: int, prefix: str) -> _OldTrees:
        """The tables of `node`, whose vote attributes start with `prefix`."""
        values = _tensor_or_list(node, "nodes_values")
        weights = _tensor_or_list(node, prefix + "_weights")
        if values is None or weights is None:
            raise ctx.error(node, version, f"it lacks nodes_values or {prefix}_weights")
        votes: Votes = {}
        for t, n, target, w in zip(
            ints(get_attr(node, prefix + "_treeids", [])),
            ints(get_attr(node, prefix + "_nodeids", [])),
            ints(get_attr(node, prefix + "_ids", [])),
            weights.tolist(),
            strict=True,
        ):
            votes.setdefault((t, n), {}).setdefault(target, []).append(w)
        treeids = ints(get_attr(node, "nodes_treeids", []))
        return _OldTrees(
            treeids=treeids,
            nodeids=ints(get_attr(node, "nodes_nodeids", [])),
            modes=list(get_attr(node, "nodes_modes", [])),
            features=ints(get_attr(node, "nodes_featureids", [])),
            true_ids=ints(get_attr(node, "nodes_truenodeids", [])),
            false_ids=ints(get_attr(node, "nodes_falsenodeids", [])),
            missing=ints(get_attr(node, "nodes_missing_value_tracks_true", []))
            or [0] * len(treeids),
            values=values,
            weights=weights,
            votes=votes,
        )

    def leaves(self) -> dict[int, list[tuple[int, int]]]:
        """The leaves of each tree, as vote keys."""
        by_tree: dict[int, list[tuple[int, int]]] = {}
        for t, n, mode in zip(self.treeids, self.nodeids, self.modes, strict=True):
            if mode == "LEAF":
                by_tree.setdefault(t, []).append((t, n))
        return by_tree


def _tree_dtype(ctx: Ctx, x: str, *arrays: np.ndarray | None) -> type[np.floating]:
    """The type the old ops computed in: double when any attribute came as a double
    tensor or the input is double, else float."""
    wide = any(a is not None and a.dtype == np.float64 for a in arrays)
    return np.float64 if wide or ctx.elem_type(x) == TensorProto.DOUBLE else np.float32


def _tree_input(
    ctx: Ctx, x: str, dtype: type[np.floating], hint: str
) -> tuple[list[NodeProto], str]:
    """`x` cast to `dtype` if needed: TreeEnsemble computes in its input's type."""
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    if ctx.elem_type(x) == elem:
        return [], x
    cast = ctx.make("Cast", [x], hint + "_x", to=elem)
    return [cast], cast.output[0]


def _tree_ensemble(
    ctx: Ctx,
    node: NodeProto,
    version: int,
    trees: _OldTrees,
    n_targets: int,
    aggregate: str,
    dtype: type[np.floating],
    x: str,
    hint: str,
) -> NodeProto:
    """A TreeEnsemble node giving the old op's per-target aggregate, before base values.

    TreeEnsemble lists interior nodes and leaves separately and gives each leaf
    one (target, weight). Leaves voting for several targets become one tree copy
    per target (SUM and AVERAGE only).
    """
    index = {(t, n): i for i, (t, n) in enumerate(zip(trees.treeids, trees.nodeids, strict=True))}
    votes = trees.votes
    combine = {"MIN": min, "MAX": max}.get(aggregate, sum)
    multi = any(len(v) > 1 for v in votes.values())
    tree_ids = sorted(set(trees.treeids))
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
                raise ctx.error(
                    node, version, f"a leaf without a vote has no {aggregate} equivalent"
                )
            target = next(iter(by_target), 0)
        weight = combine(by_target.get(target, [0.0]))
        if aggregate == "AVERAGE" and multi:
            weight /= len(tree_ids)  # copies multiply the tree count TreeEnsemble averages over
        leaf_targets.append(target)
        leaf_weights.append(weight)
        return len(leaf_targets) - 1

    def interior(i: int, tree: int, target: int | None) -> int:
        k = len(nodes["modes"])
        for field_name in nodes:
            nodes[field_name].append(0)
        nodes["modes"][k] = _TREE_MODES[trees.modes[i]]
        nodes["features"][k] = trees.features[i]
        nodes["splits"][k] = float(trees.values[i])
        nodes["missing"][k] = trees.missing[i]
        for side, child in (("true", trees.true_ids[i]), ("false", trees.false_ids[i])):
            c = index[(tree, child)]
            if trees.modes[c] == "LEAF":
                nodes[side][k], nodes[side + "_leaf"][k] = leaf((tree, child), target), 1
            else:
                nodes[side][k], nodes[side + "_leaf"][k] = interior(c, tree, target), 0
        return k

    for target in copies:
        for tree in tree_ids:
            root = index.get((tree, 0), min(i for i, t in enumerate(trees.treeids) if t == tree))
            if trees.modes[root] == "LEAF":
                # A one-leaf tree: a split whose branches reach equal leaves. (Not the
                # spec's "both branches name the same leaf", which onnx's reference
                # evaluator decodes wrongly.)
                k = len(nodes["modes"])
                key = (tree, trees.nodeids[root])
                a, b = leaf(key, target), leaf(key, target)
                for field_name, v in zip(nodes, (0, 0, 0.0, 0, a, b, 1, 1), strict=True):
                    nodes[field_name].append(v)
                roots.append(k)
            else:
                roots.append(interior(root, tree, target))

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
    if any(trees.missing):
        attrs["nodes_missing_value_tracks_true"] = nodes["missing"]
    return helper.make_node(
        "TreeEnsemble",
        [x],
        [ctx.fresh(hint + "_trees")],
        name=node.name or ctx.fresh(hint + "_trees"),
        domain=ML,
        **attrs,
    )


@upgrades(("TreeEnsembleRegressor", 3), domain=ML)
def _tree_ensemble_regressor_3(ctx: Ctx, node: NodeProto) -> Out:
    """ai.onnx.ml 5 replaced TreeEnsembleRegressor with TreeEnsemble.

    TreeEnsemble has no base values and computes in the input's type: base
    values, the post transform and the float output of the old op become
    explicit nodes after it. (The post transform goes after the base values,
    and TreeEnsemble's own enum is read differently by onnxruntime, so
    Softmax/Sigmoid nodes are used instead.)
    """
    trees = _OldTrees.read(ctx, node, 3, "target")
    base = _tensor_or_list(node, "base_values")
    n_targets = int(get_attr(node, "n_targets", 1))
    aggregate = get_attr(node, "aggregate_function", "SUM")
    post = get_attr(node, "post_transform", "NONE")
    x, hint = node.input[0], node.output[0]
    if aggregate not in _TREE_AGGREGATES:
        raise ctx.error(node, 3, f"unknown aggregate_function {aggregate}")
    if aggregate in ("MIN", "MAX") and n_targets != 1:
        # A target no reached leaf votes for is 0 in onnxruntime and the float limit in
        # onnx's reference: there is no agreed meaning to carry over.
        raise ctx.error(node, 3, f"{aggregate} over {n_targets} targets is ambiguous")
    dtype = _tree_dtype(ctx, x, trees.values, trees.weights, base)
    out, x_in = _tree_input(ctx, x, dtype, hint)
    if post not in ("NONE", "SOFTMAX", "LOGISTIC"):
        raise ctx.error(node, 3, f"post_transform {post} has no standard-op equivalent")
    trees_node = _tree_ensemble(ctx, node, 3, trees, n_targets, aggregate, dtype, x_in, hint)
    out.append(trees_node)
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


# ---- TreeEnsembleClassifier ------------------------------------------------------------------


class _Emit:
    """Standard-op nodes after a rewritten node, each named from `hint`."""

    def __init__(self, ctx: Ctx, hint: str, dtype: type[np.floating]) -> None:
        self.ctx, self.hint, self.dtype = ctx, hint, dtype
        self.nodes: list[NodeProto] = []

    def __call__(self, op_type: str, inputs: list[str], **attrs: object) -> str:
        made = self.ctx.make(op_type, inputs, self.hint, **attrs)
        self.nodes.append(made)
        return made.output[0]

    def const(self, value: object, dtype: object = None) -> str:
        """A constant, in the scores' type unless `dtype` says otherwise."""
        dtype = self.dtype if dtype is None else dtype
        return self.ctx.add_const(self.hint + "_c", np.asarray(value, dtype))

    def column(self, x: str, k: int) -> str:
        """Column k of a matrix, kept as a [N, 1] matrix."""
        return self("Gather", [x, self.const([k], np.int64)], axis=1)

    def transform(self, scores: str, post: str) -> str:
        """onnxruntime's post transform of a row of several scores."""
        if post == "LOGISTIC":
            return self("Sigmoid", [scores])
        if post == "SOFTMAX":
            return self("Softmax", [scores], axis=1)
        return scores

    def bind(self, value: str, name: str) -> None:
        """Make `value` appear under the old output's `name`."""
        if not name:
            return
        producer = next((n for n in self.nodes if value in n.output), None)
        if producer is None or any(value in n.input for n in self.nodes):
            self.nodes.append(helper.make_node("Identity", [value], [name], name=name))
            return
        producer.output[list(producer.output).index(value)] = name


def _voted_classes(ctx: Ctx, node: NodeProto, trees: _OldTrees, classes: int) -> list[bool]:
    """Whether each class has a score, which must not depend on the row: onnxruntime's
    label and scores treat a class no reached leaf voted for apart.

    A class has one in every row when every leaf of some tree votes for it, and
    in none when no leaf does.
    """
    leaves = list(trees.leaves().values())
    voted = []
    for c in range(classes):
        if any(all(c in trees.votes.get(k, {}) for k in keys) for keys in leaves):
            voted.append(True)
        elif not any(c in v for v in trees.votes.values()):
            voted.append(False)
        else:
            raise ctx.error(
                node,
                3,
                f"class {c} gets votes from some leaves of each tree but not all, so whether "
                "it has a score depends on the row; onnxruntime's label and scores depend on that",
            )
    return voted


@upgrades(("TreeEnsembleClassifier", 3), domain=ML)
def _tree_ensemble_classifier_3(ctx: Ctx, node: NodeProto) -> Out:
    """ai.onnx.ml 5 replaced TreeEnsembleClassifier with TreeEnsemble, which only sums
    the class scores: base values, the label and the post transform become standard
    ops after it, computing what onnxruntime computes (the spec leaves the
    two-class forms open).

    A class no reached leaf voted for has no score in onnxruntime: the label
    skips it, and with two classes it decides the form of the result (see
    `_two_classes`). Which classes have one must be known without running.
    """
    int_labels = get_attr(node, "classlabels_int64s")
    labels = (
        np.array(int_labels, np.int64)
        if int_labels
        else np.array(get_attr(node, "classlabels_strings") or [], object)
    )
    classes = labels.size
    trees = _OldTrees.read(ctx, node, 3, "class")
    base = _tensor_or_list(node, "base_values")
    base = base if base is not None and base.size else None
    post = get_attr(node, "post_transform", "NONE")
    if classes < 2:
        raise ctx.error(node, 3, f"{classes} class labels; rung needs at least two")
    if post not in ("NONE", "SOFTMAX", "LOGISTIC"):
        raise ctx.error(node, 3, f"post_transform {post} has no standard-op equivalent")
    if any(not 0 <= c < classes for v in trees.votes.values() for c in v):
        raise ctx.error(node, 3, f"a class_id outside the {classes} class labels")
    base_count = 0 if base is None else base.size
    if base_count not in (0, classes) and not (classes == 2 and base_count == 1):
        raise ctx.error(node, 3, f"{base_count} base values for {classes} classes")
    voted = _voted_classes(ctx, node, trees, classes)
    x, hint = node.input[0], node.output[1] or node.output[0]
    dtype = _tree_dtype(ctx, x, trees.values, trees.weights, base)
    out, x_in = _tree_input(ctx, x, dtype, hint)
    trees_node = _tree_ensemble(ctx, node, 3, trees, classes, "SUM", dtype, x_in, hint)
    emit = _Emit(ctx, hint, dtype)
    sums = trees_node.output[0]
    if classes > 2:
        label, scores = _many_classes(emit, sums, base, voted, labels, post)
    else:
        label, scores = _two_classes(ctx, node, emit, sums, trees, base, voted, labels, post)
    if dtype != np.float32:
        scores = emit("Cast", [scores], to=TensorProto.FLOAT)  # the old scores were float
    emit.bind(label, node.output[0])
    emit.bind(scores, node.output[1])
    return Out([*out, trees_node, *emit.nodes])


def _many_classes(
    emit: _Emit,
    sums: str,
    base: np.ndarray | None,
    voted: list[bool],
    labels: np.ndarray,
    post: str,
) -> tuple[str, str]:
    """The label and scores of more than two classes: the best of the scores (class
    sums plus base values) among the classes that have one, and the scores through
    the post transform. Base values give every class a score."""
    scores = sums
    if base is not None and base.any():
        scores = emit("Add", [sums, emit.const(base.reshape(1, -1))])
    best = scores
    if base is None and not all(voted):  # onnxruntime's argmax skips classes without a score
        scored = emit.const(np.array([voted]), bool)
        best = emit("Where", [scored, scores, emit.const(-np.inf)])
    table = emit.const(labels, labels.dtype)
    label = emit("Gather", [table, emit("ArgMax", [best], axis=1, keepdims=0)], axis=0)
    return label, emit.transform(scores, post)


def _two_classes(
    ctx: Ctx,
    node: NodeProto,
    emit: _Emit,
    sums: str,
    trees: _OldTrees,
    base: np.ndarray | None,
    voted: list[bool],
    labels: np.ndarray,
    post: str,
) -> tuple[str, str]:
    """The label and scores of a two-class TreeEnsembleClassifier, as onnxruntime
    computes them from the class sums s0, s1 (and base values b).

    The scores are s + b, except with two base values and votes for class 1:
    [-(s0 + b1), s0 + b1] (onnxruntime uses s0 there). A class keeps its score
    only when leaves vote for it; class 1's slot is dropped when it keeps none,
    unless there are two base values. The deciding score is class 1's if kept,
    else class 0's.

    With votes for one class only ("binary"), the label is the second class when
    the deciding score is above 0.5 (all weights non-negative) or 0; with both
    classes voted for, onnxruntime returns the raw label 1 or 0 by its sign (for
    string labels, the second or first label). When class 1 keeps no score, the
    scores are [1 - p, p] (all weights non-negative) or [-p, p] for the deciding
    score p, with p = sigmoid(p) first under LOGISTIC; otherwise they are the two
    scores (0 where none is kept) through the post transform.
    """
    base_count = 0 if base is None else base.size
    binary = len({c for v in trees.votes.values() for c in v}) == 1
    positive = bool((trees.weights >= 0).all())
    if not any(voted):
        raise ctx.error(node, 3, "no leaf votes for any class")
    if base_count == 2 and voted[1]:
        both = emit("Add", [emit.column(sums, 0), emit.const(base[1])])
        both = emit("Mul", [both, emit.const([[-1, 1]])])
    elif base_count:
        bias = np.zeros((1, 2), emit.dtype)
        bias[0, :base_count] = base
        both = emit("Add", [sums, emit.const(bias)])
    else:
        both = sums
    kept = voted  # base values do not give a score in onnxruntime's two-class form
    pair = base_count == 2 or voted[1]  # onnxruntime drops class 1's slot otherwise
    deciding = emit.column(both, 1 if pair and kept[1] else 0)
    threshold = 0.5 if binary and positive else 0.0
    win = emit("Greater", [deciding, emit.const(threshold)])
    if binary or labels.dtype == object:
        high, low = labels[1], labels[0]
    else:
        high, low = 1, 0
    label = emit("Where", [win, emit.const(high, labels.dtype), emit.const(low, labels.dtype)])
    label = emit("Reshape", [label, emit.const([-1], np.int64)])
    if pair:
        if not all(kept):
            both = emit("Where", [emit.const([kept], bool), both, emit.const(0)])
        return label, emit.transform(both, post)
    assert binary  # both classes are voted for somewhere, so class 1 is in every row
    p = emit("Sigmoid", [deciding]) if post == "LOGISTIC" else deciding
    scores = emit("Mul", [p, emit.const([[-1, 1]])])
    if positive or post == "LOGISTIC":
        scores = emit("Add", [scores, emit.const([[1, 0]])])
    return label, scores
