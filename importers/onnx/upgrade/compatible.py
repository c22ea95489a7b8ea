"""Op versions whose next version changes nothing a valid node means.

Reviewed by hand against the ONNX changelog; a transition neither here nor
covered by a rule is refused.
"""

from __future__ import annotations

from .history import DEFAULT, ML

# Transitions reviewed as not changing the meaning of any valid node: only
# types were added, an attribute or optional input was added whose default is
# the old behaviour, or negative axes became legal. Keyed by the version a node
# upgrades *from*. Anything not here and not in `RULES` is refused.
# fmt: off
COMPATIBLE: dict[str, dict[str, tuple[int, ...]]] = {
    DEFAULT: {
        "Abs": (6,), "Acos": (7,), "Acosh": (9,), "Add": (7, 13), "ArgMax": (1, 11, 12),
        "ArgMin": (1, 11, 12), "Asin": (7,), "Asinh": (9,), "Atan": (7,), "Atanh": (9,),
        "Attention": (23, 24), "AveragePool": (1, 7, 10, 11, 19), "BatchNormalization": (14,),
        "Bernoulli": (15,), "BitShift": (11,), "Cast": (6, 9, 13, 19, 21, 23, 24, 25),
        "CastLike": (15, 19, 21, 23, 24), "Ceil": (6,), "Celu": (12,), "Clip": (11, 12),
        "Compress": (9, 11), "Concat": (4, 11), "Constant": (1, 9, 11, 12, 13, 19, 21, 23, 24),
        "ConstantOfShape": (9, 20, 21, 23, 24), "Conv": (1, 11), "ConvTranspose": (1, 11),
        "Cos": (7,), "Cosh": (9,), "CumSum": (11,), "DeformConv": (19,),
        "DepthToSpace": (1, 11, 13), "DequantizeLinear": (10, 13, 19, 21, 23, 24, 25),
        "Det": (11,), "Div": (7, 13), "Dropout": (12, 13), "Einsum": (12,), "Elu": (6,),
        "Equal": (7, 11, 13), "Erf": (9,), "Exp": (6,), "Expand": (8,), "EyeLike": (9,),
        "Flatten": (1, 9, 11, 13, 21, 23, 24), "Floor": (6,), "GRU": (7, 14), "Gather": (1, 11),
        "GatherElements": (11,), "GatherND": (11, 12), "Gemm": (1, 7, 9, 11),
        "GlobalAveragePool": (1,), "GlobalLpPool": (2,), "GlobalMaxPool": (1,),
        "Greater": (7, 9), "GreaterOrEqual": (12,), "GridSample": (20,), "HardSigmoid": (6,),
        "HardSwish": (14,), "Hardmax": (1,), "Identity": (1, 13, 14, 16, 19, 21, 23, 24),
        "If": (1, 11, 13, 16, 19, 21, 23, 24), "InstanceNormalization": (6,), "IsInf": (10,),
        "IsNaN": (9, 13), "LRN": (1,), "LSTM": (7, 14), "LeakyRelu": (6,), "Less": (7, 9),
        "LessOrEqual": (12,), "Log": (6,), "LogSoftmax": (1,),
        "Loop": (1, 11, 13, 16, 19, 21, 23, 24), "LpNormalization": (1,), "LpPool": (2, 11, 18),
        "MatMul": (1, 9), "Max": (6, 8, 12), "MaxPool": (1, 8, 10, 11, 12), "MaxRoiPool": (1,),
        "MaxUnpool": (9, 11), "Mean": (6, 8), "MeanVarianceNormalization": (9,),
        "Min": (6, 8, 12), "Mish": (18,), "Mod": (10, 13), "Mul": (7, 13), "Multinomial": (7,),
        "Neg": (6,), "NegativeLogLikelihoodLoss": (12, 13), "NonMaxSuppression": (10,),
        "NonZero": (9,), "OneHot": (9, 11), "Optional": (15,), "OptionalGetElement": (15, 18),
        "OptionalHasElement": (15, 18), "PRelu": (7, 9), "Pad": (11, 13, 18, 19, 21, 23, 24),
        "Pow": (7, 12, 13), "QLinearMatMul": (10,), "QuantizeLinear": (10, 13, 19, 21, 23, 24, 25),
        "RNN": (7, 14), "RandomNormal": (1,), "RandomNormalLike": (1,), "RandomUniform": (1,),
        "RandomUniformLike": (1,), "Range": (11,), "Reciprocal": (6,), "ReduceL1": (1, 11),
        "ReduceL2": (1, 11), "ReduceLogSum": (1, 11), "ReduceLogSumExp": (1, 11),
        "ReduceMax": (1, 11, 12, 18), "ReduceMean": (1, 11), "ReduceMin": (1, 11, 12, 18),
        "ReduceProd": (1, 11), "ReduceSum": (1,), "ReduceSumSquare": (1, 11),
        "Relu": (6, 13), "Reshape": (5, 13, 14, 19, 21, 23, 24), "Resize": (11, 13, 18),
        "ReverseSequence": (10,), "RoiAlign": (16,), "Round": (11,),
        "Scan": (9, 11, 16, 19, 21, 23, 24), "ScatterElements": (11, 13, 16),
        "ScatterND": (11, 13, 16), "Selu": (6,), "Shape": (1, 13, 15, 19, 21, 23, 24),
        "Sigmoid": (6,), "Sign": (9,), "Sin": (7,), "Sinh": (9,),
        "Size": (1, 13, 19, 21, 23, 24), "Slice": (10, 11), "Softmax": (1,),
        "SoftmaxCrossEntropyLoss": (12,), "Softplus": (1,), "Softsign": (1,),
        "SpaceToDepth": (1, 13), "Split": (2,), "SplitToSequence": (11,), "Sqrt": (6,),
        "Squeeze": (1, 13, 21, 23, 24), "Sub": (7, 13), "Sum": (6, 8), "Tan": (7,),
        "Tanh": (6,), "ThresholdedRelu": (10,), "Tile": (6,), "TopK": (10, 11),
        "Transpose": (1, 13, 21, 23, 24), "Unique": (11,), "Unsqueeze": (1, 13, 21, 23, 24),
        "Where": (9,),
    },
    ML: {
        "LabelEncoder": (2,),
        "TreeEnsembleClassifier": (1,),
        "TreeEnsembleRegressor": (1,),
    },
}
# fmt: on
