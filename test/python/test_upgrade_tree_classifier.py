"""TreeEnsembleClassifier (ai.onnx.ml 1/3) upgraded to TreeEnsemble plus standard ops.

Oracle: onnxruntime runs both the original model (its legacy kernel) and the
upgraded one; they must agree exactly on labels and closely on scores. The
cases cover onnxruntime's two-class forms: which classes get votes, 0, 1 or 2
base values, positive or mixed weights, and every post transform the rule
rewrites.
"""

from __future__ import annotations

import itertools

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx import numpy_helper

from rung.errors import RungError
from rung.importers.onnx.upgrade import upgrade_model

ort.set_default_logger_severity(3)
ORT_OPSET = 21  # the default-domain opset the helper ops are written at (onnxruntime runs it)

# One tree over one feature: x <= 0 reaches leaf 1, else leaf 2 (NaN goes false).
NODES = {
    "nodes_treeids": [0, 0, 0],
    "nodes_nodeids": [0, 1, 2],
    "nodes_modes": ["BRANCH_LEQ", "LEAF", "LEAF"],
    "nodes_featureids": [0, 0, 0],
    "nodes_values": [0.0, 0.0, 0.0],
    "nodes_truenodeids": [1, 0, 0],
    "nodes_falsenodeids": [2, 0, 0],
}
X = np.array([[-1.0], [1.0], [0.0], [np.nan], [-0.25]], np.float32)

# (leaf, class, weight) votes
VOTES = {
    "class_0_mixed": [(1, 0, 0.3), (2, 0, -0.8)],
    "class_0_positive": [(1, 0, 0.3), (2, 0, 0.8)],
    "class_1_positive": [(1, 1, 0.3), (2, 1, 0.8)],
    "class_1_mixed": [(1, 1, 0.3), (2, 1, -0.8)],
    "both_mixed": [(1, 0, 0.3), (2, 0, -0.8), (1, 1, 0.5), (2, 1, 0.6)],
    "both_positive": [(1, 0, 0.3), (2, 0, 0.8), (1, 1, 0.7), (2, 1, 0.2)],
}


def classifier(
    votes: list[tuple[int, int, float]],
    labels: list[int] | list[str] = (3, 7),
    base: list[float] | None = None,
    post: str = "NONE",
    ml_opset: int = 3,
    **extra: object,
) -> onnx.ModelProto:
    attrs: dict[str, object] = {
        **NODES,
        "class_treeids": [0] * len(votes),
        "class_nodeids": [leaf for leaf, _, _ in votes],
        "class_ids": [c for _, c, _ in votes],
        "class_weights": [w for _, _, w in votes],
        "post_transform": post,
        **extra,
    }
    if isinstance(labels[0], str):
        attrs["classlabels_strings"], label_type = list(labels), TP.STRING
    else:
        attrs["classlabels_int64s"], label_type = list(labels), TP.INT64
    if base is not None:
        attrs["base_values"] = base
    node = oh.make_node(
        "TreeEnsembleClassifier", ["x"], ["label", "scores"], domain="ai.onnx.ml", **attrs
    )
    graph = oh.make_graph(
        [node],
        "g",
        [oh.make_tensor_value_info("x", TP.FLOAT, ["N", 1])],
        [
            oh.make_tensor_value_info("label", label_type, ["N"]),
            oh.make_tensor_value_info("scores", TP.FLOAT, ["N", len(labels)]),
        ],
    )
    imports = [oh.make_opsetid("", 17), oh.make_opsetid("ai.onnx.ml", ml_opset)]
    return oh.make_model(graph, opset_imports=imports, ir_version=8)


def run(model: onnx.ModelProto, x: np.ndarray) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})


def check_upgrade(model: onnx.ModelProto, x: np.ndarray = X) -> onnx.ModelProto:
    expected = run(model, x)
    upgraded, _ = upgrade_model(model, target_opset=ORT_OPSET)
    onnx.checker.check_model(upgraded, full_check=True)
    assert "TreeEnsembleClassifier" not in {n.op_type for n in upgraded.graph.node}
    label, scores = run(upgraded, x)
    np.testing.assert_array_equal(label, expected[0])
    np.testing.assert_allclose(scores, expected[1], rtol=1e-6, atol=1e-7)
    return upgraded


@pytest.mark.parametrize(
    ("votes", "base", "post"),
    list(itertools.product(VOTES, [None, [0.25], [0.25, -0.5]], ["NONE", "LOGISTIC", "SOFTMAX"])),
)
def test_two_classes_match_onnxruntime(votes: str, base: list[float] | None, post: str) -> None:
    check_upgrade(classifier(VOTES[votes], base=base, post=post))


@pytest.mark.parametrize("post", ["NONE", "LOGISTIC", "SOFTMAX"])
@pytest.mark.parametrize("base", [None, [0.1, 0.2, 0.3], [0.0, 0.0, 0.0]])
def test_three_classes_match_onnxruntime(post: str, base: list[float] | None) -> None:
    """Class 2 gets no vote: onnxruntime's label skips it unless base values (even
    zeros) give it a score."""
    votes = [(1, 0, -0.5), (1, 1, -0.2), (2, 0, -0.1), (2, 1, -0.3)]
    check_upgrade(classifier(votes, [5, 6, 7], base=base, post=post))


def test_version_1_and_string_labels() -> None:
    check_upgrade(classifier(VOTES["class_0_mixed"], ml_opset=1))
    upgraded = check_upgrade(classifier(VOTES["both_mixed"], ["no", "yes"]))
    assert {n.op_type for n in upgraded.graph.node} >= {"TreeEnsemble", "Where"}


def test_double_attributes() -> None:
    """*_as_tensor attributes make the whole computation double, as in onnxruntime."""
    votes = VOTES["both_mixed"]
    model = classifier(
        votes,
        base=[0.125, 0.25],
        nodes_values_as_tensor=numpy_helper.from_array(np.array([1e-9, 0, 0], np.float64)),
        class_weights_as_tensor=numpy_helper.from_array(np.array([w for *_, w in votes])),
    )
    for a in list(model.graph.node[0].attribute):
        if a.name in ("nodes_values", "class_weights"):
            model.graph.node[0].attribute.remove(a)
    model.graph.input[0].type.tensor_type.elem_type = TP.DOUBLE
    x = np.array([[0.0], [5e-10], [2e-9], [-1.0]])  # around a threshold float32 cannot hold
    upgraded = check_upgrade(model, x)
    trees = next(n for n in upgraded.graph.node if n.op_type == "TreeEnsemble")
    splits = next(a for a in trees.attribute if a.name == "nodes_splits")
    assert splits.t.data_type == TP.DOUBLE


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (
            classifier([(1, 0, 0.3), (2, 1, 0.8)]),
            "class 0 gets votes from some leaves of each tree but not all",
        ),
        (classifier(VOTES["class_0_mixed"], post="PROBIT"), "PROBIT has no standard-op"),
        (classifier(VOTES["class_0_mixed"], labels=[3]), "1 class labels"),
        (classifier([(1, 2, 0.3), (2, 2, 0.8)]), "class_id outside the 2 class labels"),
        (classifier(VOTES["both_mixed"], [4, 5, 6], base=[0.5]), "1 base values for 3 classes"),
    ],
)
def test_refused_forms(model: onnx.ModelProto, message: str) -> None:
    with pytest.raises(RungError, match=message):
        upgrade_model(model)
