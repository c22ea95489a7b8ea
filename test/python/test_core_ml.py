"""ai.onnx.ml ops at level core against onnxruntime and the ONNX reference (level onnx).

Each case is a one-node model built with onnx.helper at an ai.onnx.ml opset
onnxruntime runs; rung upgrades it on import and lowers it to core. Where the
two runtimes disagree (see `lowering/onnx_to_core/ml.py`) the case is checked
against onnxruntime only. A few classifier cases also run compiled (level kernel).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from rung.errors import RungError
from rung.runtime import InferenceSession

F, D, I64, I32 = TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT64, TensorProto.INT32


@dataclass
class Case:
    """One ML node: its attributes, typed inputs and outputs, and a feed."""

    op: str
    attrs: dict[str, object]
    inputs: list[tuple[str, int, Sequence[int | str]]]
    outputs: list[tuple[str, int, Sequence[int | str] | None]]
    feed: dict[str, np.ndarray]
    ml_opset: int = 3
    reference: bool = True
    ort: bool = True
    expected: list[np.ndarray] | None = None

    def model(self) -> onnx.ModelProto:
        node = helper.make_node(
            self.op,
            [n for n, _, _ in self.inputs],
            [n for n, _, _ in self.outputs],
            domain="ai.onnx.ml",
            **self.attrs,
        )
        graph = helper.make_graph(
            [node],
            "g",
            [helper.make_tensor_value_info(n, t, s) for n, t, s in self.inputs],
            [helper.make_tensor_value_info(n, t, s) for n, t, s in self.outputs],
        )
        return helper.make_model(
            graph,
            opset_imports=[
                helper.make_opsetid("", 21),
                helper.make_opsetid("ai.onnx.ml", self.ml_opset),
            ],
            ir_version=10,
        )


RNG = np.random.default_rng(0)
X34 = RNG.standard_normal((3, 4)).astype(np.float32)
X34_POS = (np.abs(X34) + 0.1).astype(np.float32)


def _rows(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def run_ort(model: onnx.ModelProto, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feed)


def check(case: Case, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    model = case.model()
    got = InferenceSession(model, level="core").run(None, case.feed)
    expected = [case.expected] if case.expected is not None else []
    if case.ort:
        expected.append(run_ort(model, case.feed))
    if case.reference:
        expected.append(InferenceSession(model, level="onnx").run(None, case.feed))
    for want in expected:
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            w = np.asarray(w)
            assert g.dtype == w.dtype, (g.dtype, w.dtype)
            assert g.shape == w.shape, (g.shape, w.shape)
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


CASES = {
    "binarizer": Case(
        "Binarizer", {"threshold": 0.25}, [("x", F, ["N", 4])], [("y", F, ["N", 4])], {"x": X34}
    ),
    "scaler_per_feature": Case(
        "Scaler",
        {"offset": [0.5, -1.0, 0.0, 2.0], "scale": [2.0, 0.5, 1.0, -1.0]},
        [("x", F, [3, 4])],
        [("y", F, [3, 4])],
        {"x": X34},
    ),
    "scaler_shared_double": Case(
        "Scaler",
        {"offset": [0.5], "scale": [3.0]},
        [("x", D, ["N", 4])],
        [("y", F, ["N", 4])],
        {"x": X34.astype(np.float64)},
        reference=False,  # the reference keeps the input type; the schema says float
    ),
    "normalizer_max": Case(
        "Normalizer", {"norm": "MAX"}, [("x", F, ["N", 4])], [("y", F, ["N", 4])], {"x": X34_POS}
    ),
    "normalizer_max_signed": Case(
        "Normalizer",
        {"norm": "MAX"},
        [("x", F, [3, 4])],
        [("y", F, [3, 4])],
        {"x": X34},
        reference=False,  # the reference divides by the largest magnitude
    ),
    "normalizer_l1": Case(
        "Normalizer", {"norm": "L1"}, [("x", F, [3, 4])], [("y", F, [3, 4])], {"x": X34}
    ),
    "normalizer_l2_int": Case(
        "Normalizer",
        {"norm": "L2"},
        [("x", I64, [2, 3])],
        [("y", F, [2, 3])],
        {"x": np.array([[1, -2, 2], [0, 0, 0]], np.int64)},
        reference=False,  # the reference floors a zero norm at 1e-30; the spec keeps the row
    ),
    "imputer_nan": Case(
        "Imputer",
        {"imputed_value_floats": [1.0, 2.0, 3.0, 4.0], "replaced_value_float": float("nan")},
        [("x", F, ["N", 4])],
        [("y", F, ["N", 4])],
        {"x": np.where(X34 > 0.5, np.nan, X34).astype(np.float32)},
    ),
    "imputer_int": Case(
        "Imputer",
        {"imputed_value_int64s": [7], "replaced_value_int64": -1},
        [("x", I64, [2, 3])],
        [("y", I64, [2, 3])],
        {"x": np.array([[1, -1, 2], [-1, 0, 5]], np.int64)},
    ),
    "array_feature_extractor": Case(
        "ArrayFeatureExtractor",
        {},
        [("x", F, ["N", 4]), ("i", I64, [3])],
        [("y", F, ["N", 3])],
        {"x": X34, "i": np.array([3, 0, 3], np.int64)},
    ),
    "array_feature_extractor_vector": Case(
        "ArrayFeatureExtractor",
        {},
        [("x", I64, [5]), ("i", I64, [1, 2])],
        [("y", I64, [1, 2])],
        {"x": np.arange(5, dtype=np.int64) * 10, "i": np.array([[4, 1]], np.int64)},
    ),
    # Indices of any rank, with a run-time number of them (KNN's [N, k] neighbour ids).
    "array_feature_extractor_dynamic_indices": Case(
        "ArrayFeatureExtractor",
        {},
        [("x", F, ["N", 4]), ("i", I64, ["K", 2])],
        [("y", F, ["N", "M"])],
        {"x": X34, "i": np.array([[3, 0], [1, 1], [2, 3]], np.int64)},
    ),
    "array_feature_extractor_vector_dynamic_indices": Case(
        "ArrayFeatureExtractor",
        {},
        [("x", I64, [5]), ("i", I64, ["N", "K"])],
        [("y", I64, [1, "M"])],
        {"x": np.arange(5, dtype=np.int64) * 10, "i": np.array([[4, 1, 0], [2, 2, 3]], np.int64)},
    ),
    "array_feature_extractor_3d_indices": Case(
        "ArrayFeatureExtractor",
        {},
        [("x", F, [2, 3, 4]), ("i", I64, [2, 1, "K"])],
        [("y", F, [2, 3, "M"])],
        {"x": _rows(2, 3, 4), "i": np.array([[[0, 3]], [[2, 1]]], np.int64)},
    ),
    "one_hot_encoder": Case(
        "OneHotEncoder",
        {"cats_int64s": [1, 3, 5, 8]},
        [("x", I64, ["N", 2])],
        [("y", F, ["N", 2, 4])],
        {"x": np.array([[1, 3], [5, 9], [8, 8]], np.int64)},
    ),
    "one_hot_encoder_float": Case(
        "OneHotEncoder",
        {"cats_int64s": [1, 3, 5]},
        [("x", F, [3])],
        [("y", F, [3, 3])],
        {"x": np.array([1.0, 5.0, 4.0], np.float32)},
    ),
    "label_encoder_int_float": Case(
        "LabelEncoder",
        {"keys_int64s": [3, 1, 7], "values_floats": [0.5, 1.5, 2.5], "default_float": -4.0},
        [("x", I64, ["N"])],
        [("y", F, ["N"])],
        {"x": np.array([3, 1, 2, 7, 7, 0], np.int64)},
        ml_opset=2,
    ),
    "label_encoder_float_int_nan": Case(
        "LabelEncoder",
        {"keys_floats": [0.5, float("nan"), -2.0], "values_int64s": [10, 20, 30]},
        [("x", F, [2, 3])],
        [("y", I64, [2, 3])],
        {"x": np.array([[0.5, np.nan, 1.0], [-2.0, 0.5, 3.0]], np.float32)},
        ml_opset=4,
        # Since LabelEncoder-4 a NaN key matches NaN; neither runtime does so yet.
        ort=False,
        reference=False,
        expected=[np.array([[10, 20, -1], [30, 10, -1]], np.int64)],
    ),
    "label_encoder_repeated_key": Case(
        "LabelEncoder",
        {"keys_int64s": [3, 1, 3], "values_int64s": [5, 6, 7]},
        [("x", I64, [3])],
        [("y", I64, [3])],
        {"x": np.array([3, 1, 0], np.int64)},
        ml_opset=4,
        ort=False,  # onnxruntime keeps the first value; the spec says the last
        expected=[np.array([7, 6, -1], np.int64)],
    ),
    "label_encoder_tensors": Case(
        "LabelEncoder",
        {
            "keys_tensor": helper.make_tensor("k", I32, [3], [1, 2, 3]),
            "values_tensor": helper.make_tensor("v", TensorProto.INT16, [3], [-1, -2, -3]),
            "default_tensor": helper.make_tensor("d", TensorProto.INT16, [1], [99]),
        },
        [("x", I32, [5])],
        [("y", TensorProto.INT16, [5])],
        {"x": np.array([3, 2, 1, 0, 3], np.int32)},
        ml_opset=4,
        ort=False,  # onnxruntime has no int32 → int16 LabelEncoder
        expected=[np.array([-3, -2, -1, 99, -3], np.int16)],
    ),
    "feature_vectorizer": Case(
        "FeatureVectorizer",
        {"inputdimensions": [2, 3, 1]},
        [("a", F, ["N", 2]), ("b", F, ["N", 2]), ("c", F, ["N", 4])],
        [("y", F, ["N", 6])],
        {"a": _rows(3, 2), "b": _rows(3, 2), "c": _rows(3, 4)},
    ),
    "feature_vectorizer_int_vectors": Case(
        "FeatureVectorizer",
        {"inputdimensions": [3, 1]},
        [("a", I64, [3]), ("b", I64, [2])],
        [("y", F, [1, 4])],
        {"a": np.array([1, 2, 3], np.int64), "b": np.array([4, 5], np.int64)},
        reference=False,  # the reference takes a vector as a column; the spec, as a row
    ),
    "linear_regressor": Case(
        "LinearRegressor",
        {
            "coefficients": [0.5, -1.0, 2.0, 0.25, 1.0, 1.0, -1.0, 0.0],
            "intercepts": [0.5, -0.5],
            "targets": 2,
        },
        [("x", F, ["N", 4])],
        [("y", F, ["N", 2])],
        {"x": X34},
    ),
    "linear_regressor_vector": Case(
        "LinearRegressor",
        {"coefficients": [0.5, -1.0, 2.0, 0.25, 1.0, 1.0, -1.0, 0.0], "targets": 2},
        [("x", F, [4])],
        [("y", F, [1, 2])],
        {"x": X34[0]},
        reference=False,  # the reference gives a vector; onnxruntime one row
    ),
    "linear_regressor_one_target": Case(
        "LinearRegressor",
        {"coefficients": [0.5, -1.0, 2.0, 0.25], "intercepts": [0.5]},
        [("x", F, [3, 4])],
        [("y", F, [3, 1])],
        {"x": X34},
    ),
    "linear_regressor_softmax": Case(
        "LinearRegressor",
        {
            "coefficients": [0.5, -1.0, 2.0, 0.25, 1.0, 1.0, -1.0, 0.0],
            "targets": 2,
            "post_transform": "SOFTMAX",
        },
        [("x", F, [3, 4])],
        [("y", F, [3, 2])],
        {"x": X34},
        reference=False,  # the reference has only NONE
    ),
    "linear_regressor_one_target_logistic": Case(
        "LinearRegressor",
        {"coefficients": [0.5, -1.0, 2.0, 0.25], "post_transform": "LOGISTIC"},
        [("x", F, [3, 4])],
        [("y", F, [3, 1])],
        {"x": X34},
        reference=False,  # onnxruntime transforms a single score only with PROBIT
    ),
    **{
        f"linear_regressor_{transform.lower()}": Case(
            "LinearRegressor",
            {
                "coefficients": [0.1, 0.2, 0.05, 0.1, 0.3, 0.1, 0.2, 0.0, 0.0, 0.1, 0.1, 0.1],
                "intercepts": [0.1, 0.0, 0.2],
                "targets": 3,
                "post_transform": transform,
            },
            [("x", F, [3, 4])],
            [("y", F, [3, 3])],
            {"x": X34_POS * np.float32(0.5)},
            reference=False,
        )
        for transform in ("LOGISTIC", "SOFTMAX_ZERO", "PROBIT")
    },
    **{
        f"svm_regressor_{kernel.lower()}": Case(
            "SVMRegressor",
            {
                "kernel_type": kernel,
                "kernel_params": [0.3, 0.5, 2.0],
                "n_supports": 3,
                "support_vectors": list(_rows(12).astype(float)),
                "coefficients": [0.5, -1.0, 0.75],
                "rho": [0.2],
            },
            [("x", F, ["N", 4])],
            [("y", F, ["N", 1])],
            {"x": X34},
        )
        for kernel in ("LINEAR", "POLY", "RBF", "SIGMOID")
    },
    "svm_regressor_linear_one_class": Case(
        "SVMRegressor",
        {
            "coefficients": [0.5, -1.0, 0.75, 0.1],
            "rho": [0.2],
            "one_class": 1,
            "kernel_params": [0.0, 0.0, 0.0],
        },
        [("x", F, [3, 4])],
        [("y", F, [3, 1])],
        {"x": X34},
    ),
    "linear_classifier_multi": Case(
        "LinearClassifier",
        {
            "coefficients": list(_rows(12).astype(float)),
            "intercepts": [0.1, 0.2, -0.3],
            "classlabels_ints": [5, 6, 7],
        },
        [("x", F, ["N", 4])],
        [("label", I64, ["N"]), ("scores", F, ["N", 3])],
        {"x": X34},
    ),
    "linear_classifier_softmax": Case(
        "LinearClassifier",
        {
            "coefficients": list(_rows(12).astype(float)),
            "intercepts": [0.0, 0.5, 0.0],
            "classlabels_ints": [0, 1, 2],
            "post_transform": "SOFTMAX",
        },
        [("x", D, [3, 4])],
        [("label", I64, [3]), ("scores", F, [3, 3])],
        {"x": X34.astype(np.float64)},
        reference=False,  # the reference keeps double scores; the schema says float
    ),
    "linear_classifier_logistic": Case(
        "LinearClassifier",
        {
            "coefficients": list(_rows(12).astype(float)),
            "intercepts": [0.0, 0.5, 0.0],
            "classlabels_ints": [0, 1, 2],
            "post_transform": "LOGISTIC",
        },
        [("x", F, [3, 4])],
        [("label", I64, [3]), ("scores", F, [3, 3])],
        {"x": X34},
    ),
    "linear_classifier_binary_logistic": Case(
        "LinearClassifier",
        {
            "coefficients": [0.5, -1.0, 2.0, 0.25],
            "intercepts": [0.1],
            "classlabels_ints": [3, 9],
            "post_transform": "LOGISTIC",
        },
        [("x", F, ["N", 4])],
        [("label", I64, ["N"]), ("scores", F, ["N", 2])],
        {"x": X34},
    ),
    "linear_classifier_binary": Case(
        "LinearClassifier",
        {"coefficients": [0.5, -1.0, 2.0, 0.25], "intercepts": [0.1], "classlabels_ints": [3, 9]},
        [("x", F, [3, 4])],
        [("label", I64, [3]), ("scores", F, [3, 2])],
        {"x": X34},
        reference=False,  # the reference gives the scores [-s, s]
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_ml_op_matches_onnxruntime(name: str) -> None:
    check(CASES[name])


REFUSED = {
    "binary softmax": (
        Case(
            "LinearClassifier",
            {
                "coefficients": [1.0, 2.0],
                "intercepts": [0.5],
                "classlabels_ints": [0, 1],
                "post_transform": "SOFTMAX",
            },
            [("x", F, [2, 2])],
            [("label", I64, [2]), ("scores", F, [2, 2])],
            {},
        ),
        "onnxruntime and the ONNX reference disagree",
    ),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_unsupported_forms_are_refused_with_a_reason(name: str) -> None:
    case, reason = REFUSED[name]
    with pytest.raises(RungError, match=reason):
        InferenceSession(case.model(), level="core")


# ---- tree ensembles ------------------------------------------------------------------------


@dataclass
class Forest:
    """Random trees in TreeEnsemble's (ai.onnx.ml 5) encoding."""

    features: int
    targets: int
    nodes: dict[str, list[int] | list[float]]
    leaves: dict[str, list[int] | list[float]]
    roots: list[int]

    @classmethod
    def random(
        cls,
        seed: int,
        trees: int,
        features: int,
        targets: int,
        modes: Sequence[int] = (0,),
        depth: int = 4,
        missing: bool = False,
    ) -> Forest:
        rng = np.random.default_rng(seed)
        nodes: dict[str, list] = {
            k: []
            for k in (
                "featureids",
                "modes",
                "splits",
                "truenodeids",
                "trueleafs",
                "falsenodeids",
                "falseleafs",
                "missing_value_tracks_true",
            )
        }
        leaves: dict[str, list] = {"targetids": [], "weights": []}

        def leaf() -> int:
            leaves["targetids"].append(int(rng.integers(targets)))
            leaves["weights"].append(float(np.round(rng.standard_normal(), 3)))
            return len(leaves["weights"]) - 1

        def node(level: int) -> int:
            i = len(nodes["featureids"])
            for k in nodes:
                nodes[k].append(0)
            nodes["featureids"][i] = int(rng.integers(features))
            nodes["modes"][i] = int(rng.choice(modes))
            nodes["splits"][i] = float(np.round(rng.standard_normal(), 2))
            nodes["missing_value_tracks_true"][i] = int(missing and rng.integers(2))
            for side in ("true", "false"):
                if level >= depth or rng.random() < 0.3:
                    nodes[f"{side}nodeids"][i], nodes[f"{side}leafs"][i] = leaf(), 1
                else:
                    nodes[f"{side}nodeids"][i], nodes[f"{side}leafs"][i] = node(level + 1), 0
            return i

        roots = [node(1) for _ in range(trees)]
        return cls(features, targets, nodes, leaves, roots)

    def attrs(self, dtype: int, aggregate: int = 1, transform: int = 0) -> dict[str, object]:
        n = self.nodes
        return {
            "aggregate_function": aggregate,
            "post_transform": transform,
            "n_targets": self.targets,
            "tree_roots": self.roots,
            "nodes_featureids": n["featureids"],
            "nodes_modes": helper.make_tensor(
                "m", TensorProto.UINT8, [len(n["modes"])], n["modes"]
            ),
            "nodes_splits": helper.make_tensor("s", dtype, [len(n["splits"])], n["splits"]),
            "nodes_truenodeids": n["truenodeids"],
            "nodes_trueleafs": n["trueleafs"],
            "nodes_falsenodeids": n["falsenodeids"],
            "nodes_falseleafs": n["falseleafs"],
            "nodes_missing_value_tracks_true": n["missing_value_tracks_true"],
            "leaf_targetids": self.leaves["targetids"],
            "leaf_weights": helper.make_tensor(
                "w", dtype, [len(self.leaves["weights"])], self.leaves["weights"]
            ),
        }

    def legacy_attrs(self, aggregate: str = "SUM") -> dict[str, object]:
        """The same trees in TreeEnsembleRegressor's encoding (node ids per tree)."""
        n = self.nodes
        attrs: dict[str, list] = {
            k: []
            for k in (
                "nodes_treeids",
                "nodes_nodeids",
                "nodes_featureids",
                "nodes_modes",
                "nodes_values",
                "nodes_truenodeids",
                "nodes_falsenodeids",
                "nodes_missing_value_tracks_true",
                "target_treeids",
                "target_nodeids",
                "target_ids",
                "target_weights",
            )
        }
        names = ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"]
        for tree, root in enumerate(self.roots):
            order: list[tuple[bool, int]] = []
            pending = [(False, root)]
            while pending:  # depth first, true branch first
                is_leaf, i = pending.pop()
                order.append((is_leaf, i))
                if not is_leaf:
                    pending.append((bool(n["falseleafs"][i]), int(n["falsenodeids"][i])))
                    pending.append((bool(n["trueleafs"][i]), int(n["truenodeids"][i])))
            where = {key: k for k, key in enumerate(order)}
            for k, (is_leaf, i) in enumerate(order):
                attrs["nodes_treeids"].append(tree)
                attrs["nodes_nodeids"].append(k)
                if is_leaf:
                    for key in (
                        "featureids",
                        "values",
                        "truenodeids",
                        "falsenodeids",
                        "missing_value_tracks_true",
                    ):
                        attrs[f"nodes_{key}"].append(0)
                    attrs["nodes_modes"].append("LEAF")
                    attrs["target_treeids"].append(tree)
                    attrs["target_nodeids"].append(k)
                    attrs["target_ids"].append(self.leaves["targetids"][i])
                    attrs["target_weights"].append(self.leaves["weights"][i])
                    continue
                attrs["nodes_featureids"].append(n["featureids"][i])
                attrs["nodes_modes"].append(names[int(n["modes"][i])])
                attrs["nodes_values"].append(n["splits"][i])
                attrs["nodes_missing_value_tracks_true"].append(n["missing_value_tracks_true"][i])
                for side in ("true", "false"):
                    key = (bool(n[f"{side}leafs"][i]), int(n[f"{side}nodeids"][i]))
                    attrs[f"nodes_{side}nodeids"].append(where[key])
        return {**attrs, "n_targets": self.targets, "aggregate_function": aggregate}


def tree_case(
    forest: Forest,
    dtype: int = F,
    rows: int = 16,
    aggregate: int = 1,
    transform: int = 0,
    nan: bool = False,
    reference: bool = True,
) -> Case:
    np_type = helper.tensor_dtype_to_np_dtype(dtype)
    x = np.round(RNG.standard_normal((rows, forest.features)), 2).astype(np_type)
    if nan:
        x[RNG.random(x.shape) < 0.2] = np.nan
    return Case(
        "TreeEnsemble",
        forest.attrs(dtype, aggregate, transform),
        [("x", dtype, ["N", forest.features])],
        [("y", dtype, ["N", forest.targets])],
        {"x": x},
        ml_opset=5,
        reference=reference,
    )


TREES = {
    "sum": tree_case(Forest.random(1, trees=5, features=4, targets=3)),
    "average_double": tree_case(Forest.random(2, trees=4, features=3, targets=2), D, aggregate=0),
    # Targets no leaf reaches are 0 in onnxruntime; the reference starts MIN/MAX at ±max.
    "min": tree_case(
        Forest.random(3, trees=3, features=3, targets=4), aggregate=2, reference=False
    ),
    "max": tree_case(
        Forest.random(4, trees=3, features=3, targets=4), aggregate=3, reference=False
    ),
    "all_modes": tree_case(Forest.random(5, trees=6, features=4, targets=2, modes=range(6))),
    "missing_tracks_true": tree_case(
        Forest.random(6, trees=4, features=3, targets=2, missing=True), nan=True
    ),
    "deep": tree_case(Forest.random(7, trees=2, features=5, targets=1, depth=9), rows=64),
    # The reference ignores post_transform; onnxruntime swaps the codes of SOFTMAX (1) and
    # LOGISTIC (2), so only SOFTMAX_ZERO and PROBIT are checked against it.
    "softmax_zero": tree_case(
        Forest.random(8, trees=3, features=3, targets=3), transform=3, reference=False
    ),
}


@pytest.mark.parametrize("name", list(TREES))
def test_tree_ensemble_matches_onnxruntime(name: str) -> None:
    check(TREES[name], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("aggregate", ["SUM", "AVERAGE"])
def test_upgraded_tree_ensemble_regressor_matches_onnxruntime(aggregate: str) -> None:
    """TreeEnsembleRegressor (ai.onnx.ml 3) imports as TreeEnsemble; it runs at core."""
    forest = Forest.random(11, trees=4, features=3, targets=2, modes=range(6))
    x = np.round(RNG.standard_normal((16, 3)) * 2, 1).astype(np.float32)
    case = Case(
        "TreeEnsembleRegressor",
        forest.legacy_attrs(aggregate),
        [("x", F, ["N", 3])],
        [("y", F, ["N", 2])],
        {"x": x},
    )
    check(case, rtol=1e-5, atol=1e-5)


# ---- tree ensemble classifiers (ai.onnx.ml 3, upgraded to TreeEnsemble) -----------------------


def classifier_attrs(
    forest: Forest,
    labels: Sequence[int],
    votes: str,
    post: str = "NONE",
    base: Sequence[float] | None = None,
    positive: bool = False,
    seed: int = 0,
) -> dict[str, object]:
    """`forest`'s trees in TreeEnsembleClassifier's encoding, the leaves voting as
    exporters make them: "all" (every leaf for every class, like random forests),
    "per_tree:k" (tree t for class t % k, like gradient boosting) or "class:c"
    (every leaf for class c only)."""
    rng = np.random.default_rng(seed)
    legacy = forest.legacy_attrs()
    attrs = {k: v for k, v in legacy.items() if k.startswith("nodes_")}
    kind, _, arg = votes.partition(":")
    tree_ids, node_ids, class_ids, weights = [], [], [], []
    for tree, node in zip(legacy["target_treeids"], legacy["target_nodeids"], strict=True):
        if kind == "all":
            chosen = list(range(len(labels)))
        elif kind == "per_tree":
            chosen = [int(tree) % int(arg)]
        else:
            chosen = [int(arg)]
        for c in chosen:
            # Positive weights are probabilities spread over the trees, as in random forests.
            w = rng.uniform(0, 1 / len(forest.roots)) if positive else rng.standard_normal()
            tree_ids.append(tree)
            node_ids.append(node)
            class_ids.append(c)
            weights.append(float(np.round(w, 3)))
    attrs |= {
        "class_treeids": tree_ids,
        "class_nodeids": node_ids,
        "class_ids": class_ids,
        "class_weights": weights,
        "classlabels_int64s": list(labels),
        "post_transform": post,
    }
    if base is not None:
        attrs["base_values"] = list(base)
    return attrs


def classifier_case(attrs: dict[str, object], ml_opset: int = 3) -> Case:
    classes = len(attrs["classlabels_int64s"])  # type: ignore[arg-type]
    rows = np.random.default_rng(1).standard_normal((16, 4))  # not RNG: cases stay put
    x = np.round(rows * 1.5, 1).astype(np.float32)
    return Case(
        "TreeEnsembleClassifier",
        attrs,
        [("x", F, ["N", 4])],
        [("label", I64, ["N"]), ("scores", F, ["N", classes])],
        {"x": x},
        ml_opset=ml_opset,
        reference=False,  # the reference guesses at the two-class forms and the base values
    )


def _forest(seed: int) -> Forest:
    return Forest.random(seed, trees=4, features=4, targets=1, modes=range(6))


TREE_CLASSIFIERS = {
    "forest_multi": classifier_case(classifier_attrs(_forest(21), [5, 6, 7], "all")),
    "boosting_multi_softmax": classifier_case(
        classifier_attrs(
            _forest(22), [0, 1, 2], "per_tree:3", post="SOFTMAX", base=[0.25, -0.125, 0.0]
        )
    ),
    # Class 3 has no votes: onnxruntime's label skips it, its score is 0.
    "unvoted_class_logistic": classifier_case(
        classifier_attrs(_forest(23), [1, 2, 3, 4], "per_tree:3", post="LOGISTIC")
    ),
    "binary_forest": classifier_case(
        classifier_attrs(_forest(24), [3, 7], "class:0", positive=True)
    ),
    "binary_forest_class_1": classifier_case(
        classifier_attrs(_forest(25), [3, 7], "class:1", positive=True)
    ),
    "binary_boosting_logistic": classifier_case(
        classifier_attrs(_forest(26), [3, 7], "class:0", post="LOGISTIC", base=[0.25])
    ),
    "binary_mixed": classifier_case(classifier_attrs(_forest(27), [3, 7], "class:0")),
    "binary_two_base_values": classifier_case(
        classifier_attrs(_forest(28), [3, 7], "class:0", post="SOFTMAX", base=[0.5, -0.5])
    ),
    # Votes for both classes: onnxruntime's label is the raw 1 or 0, not a class label.
    "two_classes_raw_label": classifier_case(classifier_attrs(_forest(29), [3, 7], "all")),
    "two_classes_two_base_values": classifier_case(
        classifier_attrs(_forest(30), [3, 7], "all", base=[0.5, 0.25])
    ),
    "version_1": classifier_case(classifier_attrs(_forest(31), [5, 6, 7], "all"), ml_opset=1),
}


@pytest.mark.parametrize("name", list(TREE_CLASSIFIERS))
def test_tree_ensemble_classifier_matches_onnxruntime(name: str) -> None:
    """Every case's labels vary and, where onnxruntime returns class labels, hit both
    ends of the label list: the forms above are really exercised."""
    case = TREE_CLASSIFIERS[name]
    label = run_ort(case.model(), case.feed)[0]
    assert len(set(label.tolist())) > 1
    check(case, rtol=1e-5, atol=1e-5)


# ---- support vector classifiers -----------------------------------------------------------


def svc_case(
    per_class: Sequence[int],
    kernel: str = "RBF",
    post: str = "NONE",
    proba: bool = False,
    labels: Sequence[int] | None = None,
    seed: int = 0,
) -> Case:
    """libsvm's one-vs-one form (support vectors per class), as skl2onnx exports SVC."""
    rng = np.random.default_rng(seed)
    classes, count = len(per_class), sum(per_class)
    pairs = classes * (classes - 1) // 2
    vectors = rng.standard_normal((count, 4))
    # A vector of class c weighs for c in its pairs with later classes (rows c and up),
    # against c in those with earlier ones, as libsvm's dual coefficients do.
    owner = np.repeat(np.arange(classes), per_class)
    sign = np.where(np.arange(classes - 1)[:, None] >= owner[None, :], 1.0, -1.0)
    attrs: dict[str, object] = {
        "kernel_type": kernel,
        "kernel_params": [0.3, 0.5, 3.0],
        "vectors_per_class": list(per_class),
        "support_vectors": list(vectors.reshape(-1)),
        "coefficients": list((sign * rng.uniform(0.2, 1, sign.shape)).reshape(-1)),
        "rho": list(rng.uniform(-0.1, 0.1, pairs)),
        "classlabels_ints": list(labels or range(10, 10 + classes)),
        "post_transform": post,
    }
    if proba:
        attrs["prob_a"] = list(rng.uniform(-3, -1, pairs))
        attrs["prob_b"] = list(rng.uniform(-0.2, 0.2, pairs))
    scores = classes if proba or classes == 2 else pairs
    return Case(
        "SVMClassifier",
        attrs,
        [("x", F, ["N", 4])],
        [("label", I64, ["N"]), ("scores", F, ["N", scores])],
        {
            "x": (
                vectors[rng.integers(count, size=12)] + 0.5 * rng.standard_normal((12, 4))
            ).astype(np.float32)
        },
        reference=False,  # the reference's binary and probability forms differ from onnxruntime
    )


def linear_svc_case(
    classes: int, post: str = "NONE", positive: bool = False, proba: bool = False
) -> Case:
    """liblinear's form: no support vectors, one row of coefficients per class."""
    rng = np.random.default_rng(classes)
    coefficients = (
        rng.uniform(0, 0.3, classes * 4) if positive else rng.standard_normal(classes * 4)
    )
    attrs: dict[str, object] = {
        "coefficients": list(coefficients),
        "rho": [0.125 if positive else -0.75],  # makes both scores <= 0 in some rows
        "kernel_params": [0.0, 0.0, 0.0],  # onnxruntime wants them even here
        "classlabels_ints": list(range(3, 3 + classes)),
        "post_transform": post,
    }
    if proba:
        attrs["prob_a"], attrs["prob_b"] = [-1.5], [0.1]
    x = rng.standard_normal((12, 4)).astype(np.float32)
    x = np.abs(x) if positive else x
    return Case(
        "SVMClassifier",
        attrs,
        [("x", F, ["N", 4])],
        [("label", I64, ["N"]), ("scores", F, ["N", classes])],
        {"x": x},
        reference=False,
    )


SVM_CLASSIFIERS = {
    **{
        f"ovo_{kernel.lower()}": svc_case([2, 3, 2], kernel, seed=i)
        for i, kernel in enumerate(("LINEAR", "POLY", "RBF", "SIGMOID"))
    },
    **{
        f"ovo_{post.lower()}": svc_case([3, 2, 2, 2], post=post) for post in ("LOGISTIC", "SOFTMAX")
    },
    "ovo_softmax_zero": svc_case([2, 2, 3], post="SOFTMAX_ZERO", seed=5),
    "ovo_probabilities": svc_case([3, 2, 3], proba=True, seed=6),
    "ovo_probabilities_four_classes": svc_case([2, 3, 2, 2], "POLY", proba=True, seed=7),
    "ovo_probabilities_probit": svc_case([2, 3, 2], post="PROBIT", proba=True, seed=8),
    "binary": svc_case([3, 4], seed=9),
    "binary_logistic": svc_case([3, 4], post="LOGISTIC", seed=10),
    "binary_softmax": svc_case([4, 3], post="SOFTMAX", seed=12),
    "binary_probabilities": svc_case([3, 4], "SIGMOID", proba=True, seed=11),
    "linear_multi_softmax": linear_svc_case(3, "SOFTMAX"),
    "linear_binary": linear_svc_case(2),
    "linear_binary_positive": linear_svc_case(2, positive=True),
    "linear_binary_logistic": linear_svc_case(2, "LOGISTIC"),
    "linear_binary_probabilities": linear_svc_case(2, "LOGISTIC", proba=True),
}


@pytest.mark.parametrize("name", list(SVM_CLASSIFIERS))
def test_svm_classifier_matches_onnxruntime(name: str) -> None:
    case = SVM_CLASSIFIERS[name]
    assert len(set(run_ort(case.model(), case.feed)[0].tolist())) > 1  # labels vary
    check(case, rtol=1e-4, atol=1e-5)


KERNEL_CASES = {
    "array_feature_extractor_vector_dynamic_indices": CASES[
        "array_feature_extractor_vector_dynamic_indices"
    ],
    "array_feature_extractor_dynamic_indices": CASES["array_feature_extractor_dynamic_indices"],
    "svm_probabilities": SVM_CLASSIFIERS["ovo_probabilities_four_classes"],
    "svm_binary_logistic": SVM_CLASSIFIERS["binary_logistic"],
    "svm_linear": SVM_CLASSIFIERS["linear_binary_positive"],
    "trees_multi": TREE_CLASSIFIERS["boosting_multi_softmax"],
    "trees_binary": TREE_CLASSIFIERS["binary_boosting_logistic"],
}


@pytest.mark.parametrize("name", list(KERNEL_CASES))
def test_ml_classifiers_at_kernel_level(name: str) -> None:
    """The same models compiled to C (the loop of the probability coupling, run-time
    index counts) against onnxruntime, at two batch sizes from one session."""
    case = KERNEL_CASES[name]
    model = case.model()
    session = InferenceSession(model, level="kernel")
    first_rows = {k: v[:1] if v.ndim > 1 else v for k, v in case.feed.items()}
    for feed in (case.feed, first_rows):
        got = session.run(None, feed)
        for g, w in zip(got, run_ort(model, feed), strict=True):
            assert g.dtype == w.dtype and g.shape == w.shape, (g.shape, w.shape)
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
