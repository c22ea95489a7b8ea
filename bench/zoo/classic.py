"""scikit-learn models of the zoo, converted by skl2onnx.

Each model is fitted on a small seeded synthetic problem (8 float features; 3
classes for classifiers) and converted with a dynamic batch. Classifiers
output a label and probabilities: as a plain tensor (`zipmap=False`) or, by
skl2onnx's default, as a ZipMap (a sequence of class → probability maps).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .spec import Input, ModelSpec

FEATURES = 8
CLASSES = 3
SAMPLES = 200
TARGET_OPSET = {"": 17, "ai.onnx.ml": 3}
SIZES: tuple[dict[str, int], ...] = ({"batch": 1}, {"batch": 7})


def _data(labels: str = "int") -> tuple[np.ndarray, np.ndarray]:
    """Features and targets: class ids, class names (`str`) or a real value (`float`)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((SAMPLES, FEATURES)).astype(np.float32)
    w = rng.standard_normal((FEATURES, CLASSES))
    score = x @ w + 0.3 * rng.standard_normal((SAMPLES, CLASSES))
    if labels == "float":
        return x, score[:, 0] + 0.5 * score[:, 1] ** 2
    y = score.argmax(axis=1)
    if labels == "str":
        return x, np.array(["cat", "dog", "emu"])[y]
    return x, y


def _convert(
    make: Callable[[], object], labels: str = "int", zipmap: bool = False
) -> Callable[[], object]:
    """A builder: fit the estimator `make()` returns, convert it with skl2onnx."""

    def build() -> object:
        from skl2onnx import to_onnx

        estimator = make()
        x, y = _data(labels)
        estimator.fit(x, y)  # type: ignore[attr-defined]
        options = None
        if labels != "float":
            options = {"zipmap": zipmap}
        return to_onnx(
            estimator,
            x[:1],
            target_opset=TARGET_OPSET,
            options=options,
            final_types=None,
        )

    return build


def _logreg() -> object:
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(max_iter=500)


def _forest_cls() -> object:
    from sklearn.ensemble import RandomForestClassifier

    return RandomForestClassifier(n_estimators=10, max_depth=6, random_state=0)


def _forest_reg() -> object:
    from sklearn.ensemble import RandomForestRegressor

    return RandomForestRegressor(n_estimators=10, max_depth=6, random_state=0)


def _boost_cls() -> object:
    from sklearn.ensemble import GradientBoostingClassifier

    return GradientBoostingClassifier(n_estimators=20, max_depth=3, random_state=0)


def _boost_reg() -> object:
    from sklearn.ensemble import GradientBoostingRegressor

    return GradientBoostingRegressor(n_estimators=20, max_depth=3, random_state=0)


def _svc() -> object:
    from sklearn.svm import SVC

    return SVC(random_state=0)


def _svr() -> object:
    from sklearn.svm import SVR

    return SVR()


def _knn() -> object:
    from sklearn.neighbors import KNeighborsClassifier

    return KNeighborsClassifier(n_neighbors=5)


def _knn_reg() -> object:
    from sklearn.neighbors import KNeighborsRegressor

    return KNeighborsRegressor(n_neighbors=5)


def _pipeline() -> object:
    from sklearn.decomposition import PCA
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    mlp = MLPClassifier(hidden_layer_sizes=(16,), max_iter=300, random_state=0)
    return make_pipeline(StandardScaler(), PCA(n_components=4, random_state=0), mlp)


_MODELS: tuple[tuple[str, Callable[[], object], str, bool, bool], ...] = (
    # name, estimator, labels, zipmap, fast
    ("logistic_regression", _logreg, "int", False, True),
    ("logistic_regression_zipmap", _logreg, "int", True, True),
    ("logistic_regression_str_labels", _logreg, "str", False, True),
    ("random_forest_classifier", _forest_cls, "int", False, True),
    ("random_forest_regressor", _forest_reg, "float", False, True),
    ("gradient_boosting_classifier", _boost_cls, "int", False, True),
    ("gradient_boosting_regressor", _boost_reg, "float", False, True),
    ("svc", _svc, "int", False, True),
    ("svr", _svr, "float", False, True),
    ("knn_classifier", _knn, "int", False, True),
    ("knn_regressor", _knn_reg, "float", False, True),
    ("scaler_pca_mlp_pipeline", _pipeline, "int", False, True),
    ("random_forest_str_labels_zipmap", _forest_cls, "str", True, True),
)


def specs() -> list[ModelSpec]:
    return [
        ModelSpec(
            name=f"{name}/skl2onnx",
            source="scikit-learn",
            exporter="skl2onnx",
            build=_convert(make, labels, zipmap),
            inputs=(Input("X", ("batch", FEATURES)),),
            outputs=(),
            sizes=SIZES,
            fast=fast,
            note="ZipMap" if zipmap else "",
        )
        for name, make, labels, zipmap, fast in _MODELS
    ]
