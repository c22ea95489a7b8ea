"""Zoo models that do not pass today, each with its status and reason.

`test/python/test_zoo.py` marks them as strict xfails that must fail with the
same status, so a fix shows up as an unexpected pass and its entry must go.
The statuses are those of `zoo.check`; the reasons are the errors' gist.
"""

from __future__ import annotations

COMPILE = "compile-error"
EXPORT = "export-fails"

DYNAMIC_MATMUL = "MatMul batch dims with a dynamic dim cannot be broadcast"
DYNAMIC_LAYERNORM = "LayerNormalization: a mean over a dynamic dim"
TREE_CLASSIFIER = "TreeEnsembleClassifier (ai.onnx.ml 3) has no upgrade to ai.onnx.ml 5"
FEATURE_EXTRACTOR = "ArrayFeatureExtractor needs a static number of indices"

KNOWN_FAILURES: dict[str, tuple[str, str]] = {
    "shufflenet_v2_x0_5/torchscript": (COMPILE, "Conv with dynamic spatial dims"),
    "swin_2x32/torchscript": (COMPILE, DYNAMIC_LAYERNORM),
    "ssdlite320_mobilenet_v3_large/torchscript": (COMPILE, "TopK along a dynamic dim"),
    "ssdlite320_mobilenet_v3_large/dynamo": (
        EXPORT,
        "torch.export: data-dependent guard in the detection post-processing",
    ),
    "mobilevit_xxs/torchscript": (COMPILE, DYNAMIC_LAYERNORM),
    "t5_encoder/torchscript": (COMPILE, DYNAMIC_MATMUL),
    "t5_decoder/torchscript": (COMPILE, DYNAMIC_MATMUL),
    "llama_kv_cache/torchscript": (COMPILE, DYNAMIC_MATMUL),
    "logistic_regression_zipmap/skl2onnx": (COMPILE, "ZipMap has no lowering"),
    "logistic_regression_str_labels/skl2onnx": (
        COMPILE,
        "LinearClassifier with string class labels",
    ),
    "random_forest_classifier/skl2onnx": (COMPILE, TREE_CLASSIFIER),
    "random_forest_str_labels_zipmap/skl2onnx": (COMPILE, TREE_CLASSIFIER),
    "gradient_boosting_classifier/skl2onnx": (COMPILE, TREE_CLASSIFIER),
    "svc/skl2onnx": (COMPILE, "SVMClassifier has no lowering"),
    "knn_classifier/skl2onnx": (COMPILE, FEATURE_EXTRACTOR),
    "knn_regressor/skl2onnx": (COMPILE, FEATURE_EXTRACTOR),
    "scaler_pca_mlp_pipeline/skl2onnx": (COMPILE, FEATURE_EXTRACTOR),
}
