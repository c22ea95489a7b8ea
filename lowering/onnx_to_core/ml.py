"""ai.onnx.ml ops with numeric tensor results → core.

Classical-ML ops (scalers, encoders, linear models, tree ensembles) carry
their parameters as attributes, so each lowering turns them into constants
and composes elementwise ops, gathers, reductions and matmuls. Tree ensembles
are walked for all rows at once: every node's comparison is evaluated with
one gather of the features, then a fixed number of gather steps (the deepest
path) moves each row from its roots to its leaves.

Where the ONNX reference implementation and onnxruntime disagree (score
post-transforms, binary classifiers, Normalizer's MAX, OneHotEncoder on
floats) these lowerings follow onnxruntime, the runtime such models are
produced for, unless the spec says otherwise (LabelEncoder's repeated and
NaN keys); each handler says where. String keys, labels and categories are
constants of strings, compared bytewise; ZipMap's sequence of maps is one
`core.zip_map`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import Float32Type, IntegerType, StringAttr, i64
from xdsl.ir import Attribute, Block, Region, SSAValue

from rung.dialects import core
from rung.dialects.constants import constant_value
from rung.dialects.dtypes import numpy_dtype
from rung.dialects.onnx import OnnxOp
from rung.dialects.onnx import generated_ops as onnx
from rung.dialects.onnx.types import StringType
from rung.errors import RungError
from rung.lowering.kit import (
    CoreBuilder,
    LoweringError,
    constant_array,
    element_of,
    int_attr,
    ranked_shape,
    shape_of_type,
    tensor,
)

from .registry import Results, lowers
from .rnn import BodyBuilder

F32 = Float32Type()

# ---- helpers ----------------------------------------------------------------------------


def _numeric(v: SSAValue) -> SSAValue:
    """`v`, checked to be a numeric tensor: string tensors have no core lowering."""
    if isinstance(element_of(v.type), StringType):
        raise LoweringError("string tensors have no core lowering")
    return v


def _floats(op: OnnxOp, name: str) -> list[float]:
    return [float(v) for v in op.attr(name) or ()]  # type: ignore[union-attr]


def _ints(op: OnnxOp, name: str) -> list[int]:
    return [int(v) for v in op.attr(name) or ()]  # type: ignore[union-attr]


def _tensor_attr(b: CoreBuilder, op: OnnxOp, name: str, strings: bool = False) -> np.ndarray | None:
    """A TENSOR attribute as numpy; string tensors are refused unless `strings`."""
    attr = op.attr(name)
    if attr is None:
        return None
    try:
        array = constant_value(attr, b.module)  # type: ignore[arg-type]
    except RungError as err:
        raise LoweringError(f"attribute '{name}': {err.message}") from err
    if array.dtype.kind in "OUS" and not strings:
        raise LoweringError("string tensors have no core lowering")
    return array


def _class_labels(op: OnnxOp, ints: str = "classlabels_ints") -> list[int] | list[str]:
    """A classifier's labels: `classlabels_strings` when it has them, else the ints."""
    strings = op.attr("classlabels_strings")
    if strings:
        return [str(s) for s in strings]  # type: ignore[union-attr]
    return _ints(op, ints)


def _label_element(labels: Sequence[object]) -> Attribute:
    """The element type of a label tensor: strings or int64."""
    return StringType() if labels and isinstance(labels[0], str) else i64


def _labels_constant(b: CoreBuilder, labels: Sequence[object]) -> SSAValue:
    dtype = object if _label_element(labels) == StringType() else np.int64
    return b.constant(np.array(labels, dtype=dtype))


def _is_int(element: Attribute) -> bool:
    return isinstance(element, IntegerType)


def _create(
    b: CoreBuilder,
    cls: type[core.CoreOp],
    operands: Sequence[SSAValue],
    result: Attribute,
    **props: Attribute,
) -> SSAValue:
    op = cls.create(operands=list(operands), result_types=[result], properties=props)
    return b.insert(op).results[0]


def _gather_elements(b: CoreBuilder, x: SSAValue, indices: SSAValue, axis: int) -> SSAValue:
    out = tensor(element_of(x.type), ranked_shape(indices))
    return _create(b, core.GatherElementsOp, [x, indices], out, axis=int_attr(axis))


def _shape_vector(b: CoreBuilder, x: SSAValue, keep: int, tail: Sequence[int]) -> SSAValue:
    """The 1-D shape `x.shape[:keep] + tail`, computed at run time."""
    head = b.shape_of(x)
    if keep != len(ranked_shape(x)):
        head = b.gather(head, b.constant(np.arange(keep, dtype=np.int64)), 0)
    return b.concat([head, b.constant(np.array(tail, np.int64))], 0) if tail else head


def _expand(
    b: CoreBuilder,
    x: SSAValue,
    dims: Sequence[int],
    out: Sequence[int],
    shape: SSAValue | None = None,
) -> SSAValue:
    """Broadcast `x` to `out`; `dims[i]` is the result dim of x's dim i.

    A dynamic `out` takes its run-time shape from `shape`, a 1-D i64 value.
    """
    result = tensor(element_of(x.type), out)
    if x.type == result and list(dims) == list(range(len(out))):
        return x
    operands = [x]
    if any(d < 0 for d in out):
        assert shape is not None, "a dynamic broadcast needs its shape"
        operands.append(shape)
    return _create(b, core.BroadcastOp, operands, result, dims=core.ints(dims))


def _expand_like(b: CoreBuilder, x: SSAValue, dims: Sequence[int], like: SSAValue) -> SSAValue:
    out = ranked_shape(like)
    shape = b.shape_of(like) if any(d < 0 for d in out) else None
    return _expand(b, x, dims, out, shape)


def _row_reduce(b: CoreBuilder, fn: str, x: SSAValue) -> SSAValue:
    """Reduce the last axis and broadcast the result back over it."""
    rank = len(ranked_shape(x))
    return _expand_like(b, b.reduce(fn, x, [rank - 1]), list(range(rank - 1)), x)


def _along_last(b: CoreBuilder, values: np.ndarray, like: SSAValue, what: str) -> SSAValue:
    """Per-feature constants (1 or F of them) broadcast over `like` [..., F]."""
    flat = np.asarray(values).reshape(-1)
    if flat.size == 1:
        return b.splat(flat.item(), like)
    features = ranked_shape(like)[-1] if ranked_shape(like) else 1
    if features >= 0 and flat.size != features:
        raise LoweringError(f"{what} has {flat.size} values for {features} features")
    const = b.constant(flat, like=like.type)
    return _expand_like(b, const, [len(ranked_shape(like)) - 1], like)


def _rows(b: CoreBuilder, x: SSAValue) -> SSAValue:
    """`x` as a [N, F] matrix: a vector is one row."""
    shape = ranked_shape(x)
    if len(shape) == 2:
        return x
    if len(shape) == 1:
        runtime = None
        if shape[0] < 0:
            runtime = b.concat([b.constant(np.array([1], np.int64)), b.shape_of(x)], 0)
        return b.reshape(x, tensor(element_of(x.type), [1, shape[0]]), runtime)
    raise LoweringError(f"expects a [N, F] matrix or a vector, got rank {len(shape)}")


def _fit(b: CoreBuilder, v: SSAValue, declared: Attribute) -> SSAValue:
    """Give `v` the op's declared element type and shape (ONNX typed the users)."""
    if shape_of_type(declared) is not None and element_of(v.type) != element_of(declared):
        v = b.cast(v, element_of(declared))
    return b.retype(v, declared)


def _linear(
    b: CoreBuilder, x: SSAValue, coefficients: np.ndarray, intercepts: np.ndarray | None
) -> SSAValue:
    """x [N, F] × coefficientsᵀ ([C, F]) + intercepts, in the element type of x."""
    rows, features = ranked_shape(x)
    count, width = coefficients.shape
    if features >= 0 and width != features:
        raise LoweringError(f"coefficients are for {width} features, the input has {features}")
    weights = b.constant(coefficients.T.copy(), like=x.type)
    element = element_of(x.type)
    y = _create(b, core.MatmulOp, [x, weights], tensor(element, [rows, count]), acc=element)
    if intercepts is not None:
        y = b.binary("add", y, _along_last(b, intercepts, y, "intercepts"))
    return y


# ---- score post-transforms ------------------------------------------------------------------


def _softmax(b: CoreBuilder, x: SSAValue) -> SSAValue:
    e = b.unary("exp", b.binary("sub", x, _row_reduce(b, "max", x)))
    return b.binary("div", e, _row_reduce(b, "sum", e))


def _softmax_zero(b: CoreBuilder, x: SSAValue) -> SSAValue:
    """Softmax that leaves (near-)zero scores out: they are scaled by exp(-max), not exp'd."""
    top = _row_reduce(b, "max", x)
    nonzero = b.compare("gt", b.unary("abs", x), b.splat(1e-7, x))
    e = b.select(
        nonzero,
        b.unary("exp", b.binary("sub", x, top)),
        b.binary("mul", x, b.unary("exp", b.unary("neg", top))),
    )
    total = _row_reduce(b, "sum", b.select(nonzero, e, b.splat(0, e)))
    return b.binary("div", e, total)


def _probit(b: CoreBuilder, x: SSAValue) -> SSAValue:
    """sqrt(2)·erfinv(2x - 1), with the closed-form erfinv estimate onnxruntime uses."""

    def c(value: float) -> SSAValue:
        return b.splat(value, x)

    p = b.binary("sub", b.binary("mul", x, c(2)), c(1))
    sign = b.select(b.compare("lt", p, c(0)), c(-1), c(1))
    log = b.unary("log", b.binary("mul", b.binary("sub", c(1), p), b.binary("add", c(1), p)))
    v = b.binary("add", c(2 / (math.pi * 0.147)), b.binary("mul", c(0.5), log))
    v2 = b.binary("mul", c(1 / 0.147), log)
    v3 = b.binary("sub", b.unary("sqrt", b.binary("sub", b.binary("mul", v, v), v2)), v)
    return b.binary("mul", b.binary("mul", sign, b.unary("sqrt", v3)), c(math.sqrt(2)))


_TRANSFORMS = ("NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT")
"""post_transform names by the integer code of TreeEnsemble."""


def _post_transform(b: CoreBuilder, scores: SSAValue, kind: str) -> SSAValue:
    """Transform each row of scores [N, C] as onnxruntime does.

    With a single score per row onnxruntime applies only PROBIT; the others
    are defined over a vector of class scores.
    """
    if kind == "NONE":
        return scores
    if kind == "PROBIT":
        return _probit(b, scores)
    if kind not in _TRANSFORMS:
        raise LoweringError(f"unknown post_transform '{kind}'")
    if ranked_shape(scores)[-1] == 1:
        return scores
    if kind == "LOGISTIC":
        return b.unary("sigmoid", scores)
    if kind == "SOFTMAX":
        return _softmax(b, scores)
    return _softmax_zero(b, scores)


# ---- elementwise preprocessing ----------------------------------------------------------------


@lowers(onnx.MlBinarizerOp)
def binarizer(b: CoreBuilder, op: onnx.MlBinarizerOp) -> Results:
    """1 where x > threshold, else 0 (NaN gives 0), in x's type."""
    x = _numeric(op.X)
    threshold = float(op.attr("threshold"))  # type: ignore[arg-type]
    if _is_int(element_of(x.type)):
        # For integers x > t is x > floor(t); clamp so the constant fits the type.
        info = np.iinfo(numpy_dtype(element_of(x.type)))
        threshold = min(max(math.floor(threshold), info.min), info.max)
    above = b.compare("gt", x, b.splat(threshold, x))
    return [b.cast(above, element_of(x.type))]


@lowers(onnx.MlScalerOp)
def scaler(b: CoreBuilder, op: onnx.MlScalerOp) -> Results:
    """(x - offset) * scale in float32, per feature (last axis) or for all."""
    x = b.cast(_numeric(op.X), element_of(_numeric(op.Y).type))
    offset, scale = _floats(op, "offset"), _floats(op, "scale")
    if offset:
        x = b.binary("sub", x, _along_last(b, np.array(offset), x, "offset"))
    if scale:
        x = b.binary("mul", x, _along_last(b, np.array(scale), x, "scale"))
    return [x]


@lowers(onnx.MlNormalizerOp)
def normalizer(b: CoreBuilder, op: onnx.MlNormalizerOp) -> Results:
    """Each row divided by its max, L1 or L2 norm; a row whose divisor is 0 is kept.

    MAX divides by the row's largest value (not largest magnitude), as the
    spec's formula and onnxruntime do.
    """
    norm = str(op.attr("norm"))
    x = b.cast(_numeric(op.X), element_of(_numeric(op.Y).type))
    rank = len(ranked_shape(x))
    if not rank:
        raise LoweringError("Normalizer needs at least a vector")
    last = [rank - 1]
    if norm == "MAX":
        divisor = b.reduce("max", x, last)
    elif norm == "L1":
        divisor = b.reduce("sum", b.unary("abs", x), last)
    elif norm == "L2":
        divisor = b.unary("sqrt", b.reduce("sum", b.binary("mul", x, x), last))
    else:
        raise LoweringError(f"unknown norm '{norm}'")
    divisor = _expand_like(b, divisor, list(range(rank - 1)), x)
    zero = b.compare("eq", divisor, b.splat(0, divisor))
    return [b.select(zero, x, b.binary("div", x, divisor))]


@lowers(onnx.MlImputerOp)
def imputer(b: CoreBuilder, op: onnx.MlImputerOp) -> Results:
    """Replace elements equal to the replaced value (or NaN) by per-feature values."""
    x = _numeric(op.X)
    if _is_int(element_of(x.type)):
        values: list[float] | list[int] = _ints(op, "imputed_value_int64s")
        replaced: float = int(op.attr("replaced_value_int64"))  # type: ignore[call-overload]
        what = "imputed_value_int64s"
    else:
        values = _floats(op, "imputed_value_floats")
        replaced = float(op.attr("replaced_value_float"))  # type: ignore[arg-type]
        what = "imputed_value_floats"
    if not values:
        raise LoweringError(f"Imputer on {element_of(x.type)} needs {what}")
    if isinstance(replaced, float) and math.isnan(replaced):
        missing = b.unary("isnan", x, tensor(IntegerType(1), ranked_shape(x)))
    else:
        missing = b.compare("eq", x, b.splat(replaced, x))
    return [b.select(missing, _along_last(b, np.array(values), x, what), x)]


# ---- feature extraction and encoding ------------------------------------------------------------


@lowers(onnx.MlArrayFeatureExtractorOp)
def array_feature_extractor(b: CoreBuilder, op: onnx.MlArrayFeatureExtractorOp) -> Results:
    """x[..., indices] with the indices flattened: x.shape[:-1] + [number of indices];
    a vector input gives one row (as onnxruntime and the reference do).

    Negative indices wrap by the number of features, read at run time when it is
    dynamic; so is the number of indices (KNN's [N, k] neighbour ids). The
    features may be strings.
    """
    x, indices = op.X, _numeric(op.Y)
    shape = ranked_shape(x)
    if not shape:
        raise LoweringError("ArrayFeatureExtractor needs at least a vector")
    flat = _flatten(b, b.cast(indices, i64) if element_of(indices.type) != i64 else indices)
    known = constant_array(flat)
    features = shape[-1]
    if known is not None and features >= 0:
        if ((known < -features) | (known >= features)).any():
            raise LoweringError(f"indices {known.tolist()} out of range for {features} features")
    flat = b.wrap_indices(flat, b.dims(x)[-1])
    picked = b.gather(x, flat, len(shape) - 1)
    if len(shape) == 1:
        picked = b.reshape_to(picked, [1, *b.dims(picked)])
    return [_fit(b, picked, op.Z.type)]


def _flatten(b: CoreBuilder, x: SSAValue) -> SSAValue:
    """`x` as a vector; its length is computed at run time when a dim is dynamic."""
    shape = ranked_shape(x)
    if len(shape) == 1:
        return x
    if all(d >= 0 for d in shape):
        return b.reshape(x, tensor(element_of(x.type), [int(np.prod(shape, dtype=np.int64))]))
    size = b.reshape(b.reduce("prod", b.shape_of(x), [0]), tensor(i64, [1]))
    return b.reshape(x, tensor(element_of(x.type), [-1]), size)


@lowers(onnx.MlOneHotEncoderOp)
def one_hot_encoder(b: CoreBuilder, op: onnx.MlOneHotEncoderOp) -> Results:
    """[..., C] float32 indicators of x among `cats_int64s` (non-integers truncate first)
    or `cats_strings`.

    `zeros=0` asks for a run-time error on unknown values, which core cannot
    raise: such values give all-zero rows.
    """
    x = op.X
    strings = isinstance(element_of(x.type), StringType)
    cats: list[int] | list[str] = (
        [str(c) for c in op.attr("cats_strings") or ()]  # type: ignore[union-attr]
        if strings
        else _ints(op, "cats_int64s")
    )
    if not cats:
        raise LoweringError(f"OneHotEncoder needs {'cats_strings' if strings else 'cats_int64s'}")
    shape = ranked_shape(x)
    out = [*shape, len(cats)]
    dynamic = any(d < 0 for d in shape)
    runtime_shape = _shape_vector(b, x, len(shape), [len(cats)]) if dynamic else None
    keys = x if strings else b.cast(x, i64)
    values = _expand(b, keys, list(range(len(shape))), out, runtime_shape)
    table = _expand(b, _labels_constant(b, cats), [len(shape)], out, runtime_shape)
    hot = b.cast(b.compare("eq", values, table), element_of(_numeric(op.Y).type))
    return [_fit(b, hot, _numeric(op.Y).type)]


@dataclass
class _Mapping:
    """A LabelEncoder's table: keys in the input's type, values and default in the output's."""

    keys: np.ndarray
    values: np.ndarray
    default: np.ndarray


def _label_mapping(
    b: CoreBuilder, op: onnx.MlLabelEncoderOp, key_type: np.dtype, value_type: np.dtype
) -> _Mapping:
    """The keys, values and default of a LabelEncoder, in the input and output types
    (strings as object arrays of `str`)."""
    keys = _tensor_attr(b, op, "keys_tensor", strings=True)
    if keys is None:
        keys = np.array(
            op.attr("keys_int64s") or op.attr("keys_floats") or op.attr("keys_strings") or ()
        )
    values = _tensor_attr(b, op, "values_tensor", strings=True)
    default = _tensor_attr(b, op, "default_tensor", strings=True)
    if values is None:
        if op.attr("values_int64s"):
            values, default = np.array(op.attr("values_int64s")), np.array(op.attr("default_int64"))
        elif op.attr("values_strings"):
            values = np.array(op.attr("values_strings"), dtype=object)
            default = np.array(op.attr("default_string"), dtype=object)
        else:
            values = np.array(op.attr("values_floats") or ())
            default = np.array(op.attr("default_float"))
    elif default is None:
        kind = values.dtype.kind
        default = np.array("_Unused" if kind in "OUS" else -1 if kind in "iu" else -0.0)
    keys, values = keys.reshape(-1), values.reshape(-1)
    if keys.size != values.size:
        raise LoweringError(f"LabelEncoder has {keys.size} keys but {values.size} values")
    return _Mapping(
        keys.astype(key_type),
        values.astype(value_type),
        default.reshape(-1)[:1].astype(value_type).reshape(()),
    )


@lowers(onnx.MlLabelEncoderOp)
def label_encoder(b: CoreBuilder, op: onnx.MlLabelEncoderOp) -> Results:
    """Map each element through numeric keys → values; unknown elements get the default.

    Every element is compared with all keys; the matching key's position
    picks the value with a gather. A repeated key keeps its last value, and
    a NaN key matches NaN inputs. Keys and values may be strings (compared
    bytewise).
    """
    x, out = op.X, op.Y
    m = _label_mapping(b, op, numpy_dtype(element_of(x.type)), numpy_dtype(element_of(out.type)))
    return [_fit(b, _apply_mapping(b, x, m, element_of(out.type)), out.type)]


@lowers(onnx.MlCategoryMapperOp)
def category_mapper(b: CoreBuilder, op: onnx.MlCategoryMapperOp) -> Results:
    """Strings → int64 through `cats_strings[i]` → `cats_int64s[i]`, or back, as
    LabelEncoder maps; unknown elements get `default_int64` or `default_string`."""
    x, out = op.X, op.Y
    strings = [str(v) for v in op.attr("cats_strings") or ()]  # type: ignore[union-attr]
    ints = _ints(op, "cats_int64s")
    if len(strings) != len(ints):
        raise LoweringError(f"CategoryMapper has {len(strings)} strings but {len(ints)} ints")
    text, number = np.array(strings, dtype=object), np.array(ints, dtype=np.int64)
    if isinstance(element_of(x.type), StringType):
        m = _Mapping(text, number, np.array(op.attr("default_int64"), np.int64))
    else:
        m = _Mapping(number, text, np.array(str(op.attr("default_string")), dtype=object))
    return [_fit(b, _apply_mapping(b, x, m, element_of(out.type)), out.type)]


@lowers(onnx.MlZipMapOp)
def zip_map(b: CoreBuilder, op: onnx.MlZipMapOp) -> Results:
    """`core.zip_map` of the class labels and the rows of X [N, C] (a vector is one row):
    the sequence of {label: score} maps classifiers return."""
    labels = _class_labels(op, "classlabels_int64s")
    x = _rows(b, _numeric(op.X))
    columns = ranked_shape(x)[1]
    if columns >= 0 and columns != len(labels):
        raise LoweringError(f"ZipMap has {len(labels)} class labels for {columns} columns")
    new = core.ZipMapOp.create(operands=[_labels_constant(b, labels), x], result_types=[op.Z.type])
    return [b.insert(new).results[0]]


def _apply_mapping(b: CoreBuilder, x: SSAValue, m: _Mapping, element: Attribute) -> SSAValue:
    """Each element of `x` mapped through `m`: compared with all keys, the matching key's
    position picks the value; a repeated key keeps its last value, a NaN key matches NaN."""
    table: dict[object, object] = {}
    nan_value = None
    for k, v in zip(m.keys.tolist(), m.values.tolist(), strict=True):
        if isinstance(k, float) and math.isnan(k):
            nan_value = v
        else:
            table[k] = v
    shape = ranked_shape(x)
    y = _full(b, m.default.item(), element, x)
    if table:
        keys = np.array(list(table), dtype=m.keys.dtype)
        values = np.array(list(table.values()), dtype=m.values.dtype)
        full = [*shape, keys.size]
        runtime_shape = (
            _shape_vector(b, x, len(shape), [keys.size]) if any(d < 0 for d in shape) else None
        )
        spread = _expand(b, x, list(range(len(shape))), full, runtime_shape)
        hits = b.compare(
            "eq", spread, _expand(b, b.constant(keys), [len(shape)], full, runtime_shape)
        )
        found = b.reduce("or", hits, [len(shape)])
        position = _arg_max(b, b.cast(hits, IntegerType(32)), len(shape))
        y = b.select(found, b.gather(b.constant(values), position, 0), y)
    if nan_value is not None:
        is_nan = b.unary("isnan", x, tensor(IntegerType(1), shape))
        y = b.select(is_nan, b.splat(nan_value, y), y)
    return y


def _full(b: CoreBuilder, value: float | int | str, element: Attribute, like: SSAValue) -> SSAValue:
    """A tensor of `element` shaped like `like`, full of `value`."""
    scalar = b.scalar(value, element)
    return b.broadcast_to(scalar, tensor(element, ranked_shape(like)), like)


def _arg_max(b: CoreBuilder, x: SSAValue, axis: int) -> SSAValue:
    """Index of the first maximum along `axis` (which the result drops)."""
    shape = ranked_shape(x)
    out = tensor(i64, [d for i, d in enumerate(shape) if i != axis])
    return _create(
        b, core.ArgReduceOp, [x], out, fn=StringAttr("max"), axis=int_attr(axis), last=int_attr(0)
    )


@lowers(onnx.MlFeatureVectorizerOp)
def feature_vectorizer(b: CoreBuilder, op: onnx.MlFeatureVectorizerOp) -> Results:
    """Concatenate the inputs' feature columns as float32, each cut or zero-padded to
    its `inputdimensions` entry; a vector is one row, higher ranks flatten per row."""
    inputs = [_numeric(v) for v in op.X]
    widths = _ints(op, "inputdimensions")
    if len(widths) != len(inputs):
        raise LoweringError(f"inputdimensions has {len(widths)} entries for {len(inputs)} inputs")
    element = element_of(_numeric(op.Y).type)
    columns = [
        _feature_columns(b, b.cast(x, element), width)
        for x, width in zip(inputs, widths, strict=True)
    ]
    return [_fit(b, b.concat(columns, 1), _numeric(op.Y).type)]


def _feature_columns(b: CoreBuilder, x: SSAValue, width: int) -> SSAValue:
    shape = ranked_shape(x)
    element = element_of(x.type)
    if len(shape) > 2:
        if any(d < 0 for d in shape[1:]):
            raise LoweringError("FeatureVectorizer needs static feature dims")
        size = int(np.prod(shape[1:]))
        runtime = _shape_vector(b, x, 1, [size]) if shape[0] < 0 else None
        x = b.reshape(x, tensor(element, [shape[0], size]), runtime)
    else:
        x = _rows(b, x)
    rows, have = ranked_shape(x)
    if have < 0:
        raise LoweringError("FeatureVectorizer needs a static number of features per input")
    if have == width:
        return x
    low, high = [0, 0], [0, width - have]
    operands = [x, b.scalar(0, element)]
    return _create(
        b,
        core.PadOp,
        operands,
        tensor(element, [rows, width]),
        mode=StringAttr("constant"),
        pad_low=core.ints(low),
        pad_high=core.ints(high),
    )


# ---- linear models ----------------------------------------------------------------------------


@lowers(onnx.MlLinearRegressorOp)
def linear_regressor(b: CoreBuilder, op: onnx.MlLinearRegressorOp) -> Results:
    """x · coefficientsᵀ + intercepts in float32, then the post-transform.

    Intercepts count only when there is one per target (as in onnxruntime).
    """
    x = _rows(b, b.cast(_numeric(op.X), F32))
    targets = int(op.attr("targets"))  # type: ignore[call-overload]
    coefficients = np.array(_floats(op, "coefficients"), np.float32)
    if targets < 1 or coefficients.size % targets:
        raise LoweringError(f"{coefficients.size} coefficients for {targets} targets")
    intercepts = np.array(_floats(op, "intercepts"), np.float32)
    scores = _linear(
        b, x, coefficients.reshape(targets, -1), intercepts if intercepts.size == targets else None
    )
    scores = _post_transform(b, scores, str(op.attr("post_transform")))
    return [_fit(b, scores, _numeric(op.Y).type)]


@lowers(onnx.MlLinearClassifierOp)
def linear_classifier(b: CoreBuilder, op: onnx.MlLinearClassifierOp) -> Results:
    """Scores x · coefficientsᵀ + intercepts; the label of the best raw score.

    With one row of coefficients (binary), the label is the second class
    when the score is positive; with two class labels the scores become
    [1 - s, s] (s after LOGISTIC), as onnxruntime computes them. The
    reference implementation gives [-s, s] there instead, so the binary forms
    whose scores the two runtimes disagree on are refused.
    """
    labels = _class_labels(op)
    x = _rows(b, b.cast(_numeric(op.X), F32))
    features = ranked_shape(x)[1]
    coefficients = np.array(_floats(op, "coefficients"), np.float32)
    if features < 0:
        raise LoweringError("LinearClassifier needs a static number of features")
    if coefficients.size % max(features, 1):
        raise LoweringError(f"{coefficients.size} coefficients for {features} features")
    classes = coefficients.size // max(features, 1)
    intercepts = np.array(_floats(op, "intercepts"), np.float32)
    if intercepts.size not in (0, classes):
        raise LoweringError(f"{intercepts.size} intercepts for {classes} classes")
    scores = _linear(
        b, x, coefficients.reshape(classes, features), intercepts if intercepts.size else None
    )
    transform = str(op.attr("post_transform"))
    if classes == 1:
        label, scores = _binary_linear_classifier(b, scores, labels, transform)
    else:
        if len(labels) != classes:
            raise LoweringError(f"{len(labels)} class labels for {classes} classes")
        best = _arg_max(b, scores, 1)
        label = b.gather(_labels_constant(b, labels), best, 0)
        scores = _post_transform(b, scores, transform)
    return [_fit(b, label, op.Y.type), _fit(b, scores, _numeric(op.Z).type)]


def _binary_linear_classifier(
    b: CoreBuilder, score: SSAValue, labels: list[int] | list[str], transform: str
) -> tuple[SSAValue, SSAValue]:
    """The label and scores of a LinearClassifier with a single score s per row."""
    negative, positive = labels if len(labels) == 2 else (0, 1)
    element = _label_element([positive])
    rows = ranked_shape(score)[0]
    runtime = _shape_vector(b, score, 1, []) if rows < 0 else None
    s = b.reshape(score, tensor(F32, [rows]), runtime)
    chosen = b.compare("gt", s, b.splat(0, s))
    label = b.select(chosen, _full(b, positive, element, s), _full(b, negative, element, s))
    if len(labels) != 2:
        return label, _post_transform(b, score, transform)
    if transform not in ("NONE", "LOGISTIC"):
        raise LoweringError(
            f"binary LinearClassifier with post_transform {transform}: onnxruntime and the "
            "ONNX reference disagree on its scores"
        )
    p = b.unary("sigmoid", score) if transform == "LOGISTIC" else score
    return label, b.concat([b.binary("sub", b.splat(1, p), p), p], 1)


# ---- tree ensembles -------------------------------------------------------------------------

_PREDICATES = ("le", "lt", "ge", "gt", "eq", "ne")
"""The core predicate of each node mode code below BRANCH_MEMBER (6)."""
_MEMBER = 6
_AGGREGATES = ("AVERAGE", "SUM", "MIN", "MAX")
"""aggregate_function names by the integer code of TreeEnsemble."""


@dataclass
class _Forest:
    """Trees as tables over slots: the interior nodes (0..n-1), then the leaves (n..).

    A node sends a row to `true_next` or `false_next` (slots); a leaf slot
    leads to itself, so after as many steps as the deepest path every row
    rests on a leaf. `weights[l, t]` is what leaf l adds to target t, where
    `hits[l, t]` says it contributes at all (for MIN and MAX).
    """

    features: np.ndarray
    modes: np.ndarray
    splits: np.ndarray
    members: list[list[float]]
    missing_true: np.ndarray
    true_next: np.ndarray
    false_next: np.ndarray
    roots: np.ndarray
    weights: np.ndarray
    hits: np.ndarray

    @property
    def nodes(self) -> int:
        return len(self.features)

    @property
    def leaves(self) -> int:
        return len(self.weights)

    def depth(self) -> int:
        """The most interior nodes on a path from a root to a leaf."""
        depth = np.zeros(self.nodes, np.int64)
        state = np.zeros(self.nodes, np.int8)  # 0 new, 1 on the stack, 2 done
        for root in self.roots.tolist():
            if root >= self.nodes:
                continue
            stack = [root]
            while stack:
                n = stack[-1]
                children = [c for c in (self.true_next[n], self.false_next[n]) if c < self.nodes]
                if state[n] == 0:
                    state[n] = 1
                    for c in children:
                        if state[c] == 1:
                            raise LoweringError("a tree has a cycle")
                        if state[c] == 0:
                            stack.append(c)
                    continue
                stack.pop()
                if state[n] == 1:
                    state[n] = 2
                    depth[n] = 1 + max((depth[c] for c in children), default=0)
        top = [int(depth[r]) for r in self.roots.tolist() if r < self.nodes]
        return max(top, default=0)

    def check(self, features: int) -> None:
        """Every branch leads to a slot and every node tests an existing feature."""
        if not self.nodes:
            raise LoweringError("a tree ensemble without nodes")
        slots = self.nodes + self.leaves
        for name, ids in (
            ("true", self.true_next),
            ("false", self.false_next),
            ("root", self.roots),
        ):
            if ids.size and (ids.min() < 0 or ids.max() >= slots):
                raise LoweringError(f"a {name} branch leads outside the tree")
        if self.features.size and (
            self.features.min() < 0 or (features >= 0 and self.features.max() >= features)
        ):
            raise LoweringError(f"a node tests a feature outside the {features} features")


def _node_conditions(b: CoreBuilder, x: SSAValue, forest: _Forest) -> SSAValue:
    """cond[r, s]: whether row r takes the true branch at slot s.

    Leaf slots copy the first node's test: a leaf leads to itself either way.
    """
    slots = forest.nodes + forest.leaves
    pad = forest.leaves
    features = np.concatenate([forest.features, np.zeros(pad, np.int64)])
    modes = np.concatenate([forest.modes, np.full(pad, forest.modes[0])])
    splits = np.concatenate([forest.splits, np.zeros(pad)])
    values = b.gather(x, b.constant(features), 1)  # [N, slots]

    def spread(per_slot: np.ndarray, like: Attribute | None = None) -> SSAValue:
        return _expand_like(b, b.constant(per_slot, like=like), [1], values)

    cond: SSAValue | None = None
    compared = sorted(set(modes.tolist()) - {_MEMBER})
    threshold = spread(splits, values.type) if compared else None
    for mode in compared:
        assert threshold is not None
        test = b.compare(_PREDICATES[mode], values, threshold)
        cond = test if cond is None else b.select(spread(modes == mode), test, cond)
    member = np.flatnonzero(modes == _MEMBER)
    if member.size:
        test = _membership(b, x, forest, member)  # [N, members]
        position = np.zeros(slots, np.int64)
        position[member] = np.arange(member.size)
        test = b.gather(test, b.constant(position), 1)
        cond = test if cond is None else b.select(spread(modes == _MEMBER), test, cond)
    assert cond is not None
    tracks = np.concatenate([forest.missing_true, np.zeros(pad, bool)])
    if tracks.any():
        missing = b.unary("isnan", values, tensor(IntegerType(1), ranked_shape(values)))
        cond = b.binary("or", cond, b.binary("and", missing, spread(tracks)))
    return cond


def _membership(b: CoreBuilder, x: SSAValue, forest: _Forest, nodes: np.ndarray) -> SSAValue:
    """[N, len(nodes)]: whether each row's feature is in each BRANCH_MEMBER node's set."""
    sets = [forest.members[n] for n in nodes.tolist()]
    width = max((len(s) for s in sets), default=1) or 1
    table = np.full((len(sets), width), np.nan)
    for i, s in enumerate(sets):
        table[i, : len(s)] = s
    values = b.gather(x, b.constant(forest.features[nodes]), 1)  # [N, M]
    rows = ranked_shape(values)[0]
    out = [rows, len(sets), width]
    shape = _shape_vector(b, values, 1, out[1:]) if rows < 0 else None
    left = _expand(b, values, [0, 1], out, shape)
    right = _expand(b, b.constant(table, like=x.type), [1, 2], out, shape)
    return b.reduce("or", b.compare("eq", left, right), [2])


def _walk(b: CoreBuilder, x: SSAValue, forest: _Forest) -> SSAValue:
    """The leaf (0..leaves-1) each row reaches in each tree: [N, trees] i64."""
    cond = _node_conditions(b, x, forest)
    rows = ranked_shape(x)[0]
    trees = forest.roots.size
    shape = _shape_vector(b, x, 1, [trees]) if rows < 0 else None
    at = _expand(b, b.constant(forest.roots.astype(np.int64)), [1], [rows, trees], shape)
    true_next, false_next = b.constant(forest.true_next), b.constant(forest.false_next)
    for _ in range(forest.depth()):
        go_true = _gather_elements(b, cond, at, 1)
        at = b.select(go_true, b.gather(true_next, at, 0), b.gather(false_next, at, 0))
    return b.binary("sub", at, b.splat(forest.nodes, at))


def _aggregate(
    b: CoreBuilder, leaves: SSAValue, forest: _Forest, how: str, element: Attribute
) -> SSAValue:
    """Combine the leaves' contributions per target: [N, trees] → [N, targets].

    A target no leaf contributes to is 0 (as in onnxruntime).
    """
    dtype = numpy_dtype(element)
    if how in ("SUM", "AVERAGE"):
        total = b.reduce("sum", b.gather(b.constant(forest.weights.astype(dtype)), leaves, 0), [1])
        if how == "AVERAGE":
            total = b.binary("div", total, b.splat(forest.roots.size, total))
        return total
    if how not in ("MIN", "MAX"):
        raise LoweringError(f"unknown aggregate_function '{how}'")
    absent = np.inf if how == "MIN" else -np.inf
    table = np.where(forest.hits, forest.weights, absent).astype(dtype)
    best = b.reduce(how.lower(), b.gather(b.constant(table), leaves, 0), [1])
    hit = b.reduce("or", b.gather(b.constant(forest.hits), leaves, 0), [1])
    return b.select(hit, best, b.splat(0, best))


def _forest_v5(b: CoreBuilder, op: onnx.MlTreeEnsembleOp) -> _Forest:
    """The tables of a TreeEnsemble (ai.onnx.ml 5) from its attributes."""
    modes = _tensor_attr(b, op, "nodes_modes")
    splits = _tensor_attr(b, op, "nodes_splits")
    weights = _tensor_attr(b, op, "leaf_weights")
    assert modes is not None and splits is not None and weights is not None
    modes = modes.reshape(-1).astype(np.int64)
    nodes = modes.size
    if modes.size and (modes.min() < 0 or modes.max() > _MEMBER):
        raise LoweringError(f"unknown node modes {sorted(set(modes.tolist()))}")
    targets = _ints(op, "leaf_targetids")
    weights = weights.reshape(-1).astype(np.float64)
    n_targets = op.attr("n_targets")
    count = int(n_targets) if n_targets is not None else max(targets, default=-1) + 1  # type: ignore[call-overload]
    if len(targets) != weights.size or any(not 0 <= t < count for t in targets):
        raise LoweringError("leaf_targetids and leaf_weights disagree with n_targets")
    table = np.zeros((weights.size, count))
    hits = np.zeros((weights.size, count), bool)
    table[np.arange(weights.size), targets] = weights
    hits[np.arange(weights.size), targets] = True

    def branch(ids: str, leafs: str) -> np.ndarray:
        where = np.array(_ints(op, ids), np.int64)
        is_leaf = np.array(_ints(op, leafs), bool)
        if where.size != nodes or is_leaf.size != nodes:
            raise LoweringError(f"{ids} and {leafs} need one entry per node")
        limit = np.where(is_leaf, weights.size, nodes)
        if ((where < 0) | (where >= limit)).any():
            raise LoweringError(f"{ids} names a node or leaf that does not exist")
        return np.where(is_leaf, where + nodes, where)

    members: list[list[float]] = [[] for _ in range(nodes)]
    if (modes == _MEMBER).any():
        values = _tensor_attr(b, op, "membership_values")
        if values is None:
            raise LoweringError("BRANCH_MEMBER nodes need membership_values")
        groups = np.split(values.reshape(-1), np.flatnonzero(np.isnan(values.reshape(-1))))
        groups = [g[~np.isnan(g)] for g in groups]
        for n, group in zip(np.flatnonzero(modes == _MEMBER).tolist(), groups, strict=False):
            members[n] = group.tolist()
    tracks = np.array(_ints(op, "nodes_missing_value_tracks_true") or [0] * nodes, bool)
    return _Forest(
        features=np.array(_ints(op, "nodes_featureids"), np.int64),
        modes=modes,
        splits=splits.reshape(-1).astype(np.float64),
        members=members,
        missing_true=tracks,
        true_next=np.concatenate(
            [branch("nodes_truenodeids", "nodes_trueleafs"), nodes + np.arange(weights.size)]
        ),
        false_next=np.concatenate(
            [branch("nodes_falsenodeids", "nodes_falseleafs"), nodes + np.arange(weights.size)]
        ),
        roots=np.array(_ints(op, "tree_roots"), np.int64),
        weights=table,
        hits=hits,
    )


def _code_name(names: tuple[str, ...], code: object, what: str) -> str:
    if not isinstance(code, int) or not 0 <= code < len(names):
        raise LoweringError(f"unknown {what} {code}")
    return names[code]


@lowers(onnx.MlTreeEnsembleOp)
def tree_ensemble(b: CoreBuilder, op: onnx.MlTreeEnsembleOp) -> Results:
    """Walk every tree for every row, aggregate the leaves per target, post-transform.

    post_transform codes follow the spec (1 = SOFTMAX, 2 = LOGISTIC).
    """
    x = _rows(b, _numeric(op.X))
    forest = _forest_v5(b, op)
    forest.check(ranked_shape(x)[1])
    how = _code_name(_AGGREGATES, op.attr("aggregate_function"), "aggregate_function")
    scores = _aggregate(b, _walk(b, x, forest), forest, how, element_of(x.type))
    transform = _code_name(_TRANSFORMS, op.attr("post_transform"), "post_transform")
    scores = _post_transform(b, scores, transform)
    return [_fit(b, scores, _numeric(op.Y).type)]


# ---- support vector machines --------------------------------------------------------------


def _svm_kernel(
    b: CoreBuilder, x: SSAValue, vectors: np.ndarray, kind: str, params: Sequence[float]
) -> SSAValue:
    """kernel(x_n, vector_v) for all rows and vectors: [N, V].

    `params` are gamma, coef0 and degree (0 when absent, as in onnxruntime).
    """
    gamma, coef0, degree = (list(params) + [0.0, 0.0, 0.0])[:3]
    if kind == "RBF":
        rows = ranked_shape(x)[0]
        out = [rows, *vectors.shape]
        shape = _shape_vector(b, x, 1, list(vectors.shape)) if rows < 0 else None
        spread = _expand(b, x, [0, 2], out, shape)
        diff = b.binary(
            "sub", spread, _expand(b, b.constant(vectors, like=x.type), [1, 2], out, shape)
        )
        distance = b.reduce("sum", b.binary("mul", diff, diff), [2])
        return b.unary("exp", b.binary("mul", distance, b.splat(-gamma, distance)))
    dot = _linear(b, x, vectors, None)
    if kind == "LINEAR":
        return dot
    if kind not in ("POLY", "SIGMOID"):
        raise LoweringError(f"unknown kernel_type '{kind}'")
    scaled = b.binary("add", b.binary("mul", dot, b.splat(gamma, dot)), b.splat(coef0, dot))
    if kind == "SIGMOID":
        return b.unary("tanh", scaled)
    return b.binary("pow", scaled, b.splat(degree, scaled))


@lowers(onnx.MlSVMRegressorOp)
def svm_regressor(b: CoreBuilder, op: onnx.MlSVMRegressorOp) -> Results:
    """Σ_v coefficients[v]·kernel(x, support_vector[v]) + rho, in float32.

    Without support vectors it is the linear model x · coefficients + rho;
    `one_class` maps the score to ±1. Like onnxruntime (and unlike the
    spec), post_transform is not applied.
    """
    x = _rows(b, b.cast(_numeric(op.X), F32))
    features = ranked_shape(x)[1]
    coefficients = np.array(_floats(op, "coefficients"), np.float32)
    rho = _floats(op, "rho")
    supports = int(op.attr("n_supports"))  # type: ignore[call-overload]
    if not rho or not coefficients.size:
        raise LoweringError("SVMRegressor needs coefficients and rho")
    if supports > 0:
        vectors = np.array(_floats(op, "support_vectors"), np.float32)
        width = vectors.size // supports
        if vectors.size % supports or coefficients.size != supports:
            raise LoweringError(
                f"{vectors.size} support vector values and {coefficients.size} coefficients "
                f"for {supports} support vectors"
            )
        if features >= 0 and width != features:
            raise LoweringError(f"support vectors of {width} features for {features} features")
        kernel = _svm_kernel(
            b,
            x,
            vectors.reshape(supports, -1),
            str(op.attr("kernel_type")),
            _floats(op, "kernel_params"),
        )
        score = _linear(b, kernel, coefficients.reshape(1, -1), np.array(rho[:1], np.float32))
    else:
        if features >= 0 and coefficients.size != features:
            raise LoweringError(f"{coefficients.size} coefficients for {features} features")
        score = _linear(b, x, coefficients.reshape(1, -1), np.array(rho[:1], np.float32))
    if op.attr("one_class"):
        positive = b.compare("gt", score, b.splat(0, score))
        score = b.select(positive, b.splat(1, score), b.splat(-1, score))
    return [_fit(b, score, _numeric(op.Y).type)]


@lowers(onnx.MlSVMClassifierOp)
def svm_classifier(b: CoreBuilder, op: onnx.MlSVMClassifierOp) -> Results:
    """The label and scores of a support vector classifier, in float32, as onnxruntime
    computes them.

    With support vectors (libsvm's one-vs-one form) each pair of classes i < j
    gets a score `s = Σ coefficients·kernel + rho`, a vote for i when s > 0 and
    for j otherwise; the label is the class with the most votes (the first on a
    tie). The scores are the pairwise ones, or, with prob_a and prob_b, the
    class probabilities of libsvm's pairwise coupling. Without support vectors
    (liblinear's form) the scores are `x · coefficientsᵀ + rho[0]` per class.
    """
    labels = _class_labels(op)
    if not labels:
        raise LoweringError("SVMClassifier needs classlabels_ints or classlabels_strings")
    x = _rows(b, b.cast(_numeric(op.X), F32))
    svm = _Svm(
        labels=labels,
        coefficients=np.array(_floats(op, "coefficients"), np.float32),
        rho=np.array(_floats(op, "rho"), np.float32),
        prob_a=np.array(_floats(op, "prob_a"), np.float32),
        prob_b=np.array(_floats(op, "prob_b"), np.float32),
        transform=str(op.attr("post_transform")),
    )
    if not svm.coefficients.size or not svm.rho.size:
        raise LoweringError("SVMClassifier needs coefficients and rho")
    if svm.prob_a.size != svm.prob_b.size:
        raise LoweringError("prob_a and prob_b differ in length")
    per_class = _ints(op, "vectors_per_class")
    if sum(per_class) > 0:
        vectors = np.array(_floats(op, "support_vectors"), np.float32)
        kind, params = str(op.attr("kernel_type")), _floats(op, "kernel_params")
        label, scores = _one_vs_one(b, x, svm, per_class, vectors, kind, params)
    else:
        label, scores = _liblinear(b, x, svm)
    return [_fit(b, label, op.Y.type), _fit(b, scores, _numeric(op.Z).type)]


@dataclass
class _Svm:
    """What both forms of SVMClassifier share."""

    labels: list[int] | list[str]
    coefficients: np.ndarray
    rho: np.ndarray
    prob_a: np.ndarray
    prob_b: np.ndarray
    transform: str

    def label_of(self, b: CoreBuilder, best: SSAValue) -> SSAValue:
        return b.gather(_labels_constant(b, self.labels), best, 0)


def _liblinear(b: CoreBuilder, x: SSAValue, svm: _Svm) -> tuple[SSAValue, SSAValue]:
    """Per-class scores and the best class; with two classes and no probabilities
    onnxruntime picks the second class by the best score's value instead
    (>= 0.5 if all coefficients are non-negative, else > 0)."""
    classes, features = len(svm.labels), ranked_shape(x)[1]
    width = svm.coefficients.size // classes
    if svm.coefficients.size % classes or (features >= 0 and width != features):
        raise LoweringError(
            f"{svm.coefficients.size} coefficients for {classes} classes of {features} features"
        )
    bias = np.full(classes, svm.rho[0], np.float32) if svm.rho[0] else None
    scores = _linear(b, x, svm.coefficients.reshape(classes, width), bias)
    label = svm.label_of(b, _arg_max(b, scores, 1))
    if classes == 2 and not svm.prob_a.size:
        top = b.reduce("max", scores, [1])
        if (svm.coefficients >= 0).all():
            second = b.compare("ge", top, b.splat(0.5, top))
        else:
            second = b.compare("gt", top, b.splat(0, top))
        second_label = _full(b, svm.labels[1], _label_element(svm.labels), label)
        label = b.select(second, second_label, label)
    return label, _post_transform(b, scores, svm.transform)


def _one_vs_one(
    b: CoreBuilder,
    x: SSAValue,
    svm: _Svm,
    per_class: list[int],
    vectors: np.ndarray,
    kind: str,
    params: list[float],
) -> tuple[SSAValue, SSAValue]:
    """libsvm's pairwise classifiers: all pair scores are one matmul of the kernel values.

    Pair (i, j) weighs class i's support vectors by coefficient row j - 1 and
    class j's by row i. Without probabilities, two classes give the scores
    [-s, s] (post_transform NONE), [1 - p, p] with p = sigmoid(s) (LOGISTIC) or
    [1 - s, s] (SOFTMAX, SOFTMAX_ZERO), as onnxruntime does.
    """
    classes, count, features = len(svm.labels), sum(per_class), ranked_shape(x)[1]
    pairs = [(i, j) for i in range(classes) for j in range(i + 1, classes)]
    width = vectors.size // count
    if classes < 2 or len(per_class) != classes:
        raise LoweringError(f"vectors_per_class has {len(per_class)} entries for {classes} classes")
    if vectors.size % count or (features >= 0 and width != features):
        raise LoweringError(f"{vectors.size} support vector values for {count} vectors")
    if svm.coefficients.size != (classes - 1) * count or svm.rho.size < len(pairs):
        raise LoweringError(
            f"{svm.coefficients.size} coefficients and {svm.rho.size} rho for {classes} classes "
            f"and {count} support vectors"
        )
    kernel = _svm_kernel(b, x, vectors.reshape(count, width), kind, params)
    start = np.cumsum([0, *per_class])
    coefficients = svm.coefficients.reshape(classes - 1, count)
    weights = np.zeros((len(pairs), count), np.float32)
    votes_for = np.zeros((classes, len(pairs)), np.float32)  # +1 for i when s > 0, else j
    for p, (i, j) in enumerate(pairs):
        weights[p, start[i] : start[i + 1]] = coefficients[j - 1, start[i] : start[i + 1]]
        weights[p, start[j] : start[j + 1]] = coefficients[i, start[j] : start[j + 1]]
        votes_for[i, p], votes_for[j, p] = 1, -1
    scores = _linear(b, kernel, weights, svm.rho[: len(pairs)])
    positive = b.cast(b.compare("gt", scores, b.splat(0, scores)), F32)
    # A class's votes: the pairs it wins as i, plus those (i, c) it would win as j, c of them.
    votes = _linear(b, positive, votes_for, np.arange(classes, dtype=np.float32))
    label = svm.label_of(b, _arg_max(b, votes, 1))
    if svm.prob_a.size:
        if svm.prob_a.size != len(pairs):
            raise LoweringError(f"{svm.prob_a.size} prob_a values for {len(pairs)} class pairs")
        probabilities = _pairwise_coupling(b, _pair_probabilities(b, scores, svm, pairs), classes)
        return label, _post_transform(b, probabilities, svm.transform)
    if classes > 2:
        return label, _post_transform(b, scores, svm.transform)
    if svm.transform == "PROBIT":
        raise LoweringError("a binary SVMClassifier with PROBIT: onnxruntime leaves a score unset")
    if svm.transform == "NONE":
        return label, b.concat([b.unary("neg", scores), scores], 1)
    if svm.transform == "LOGISTIC":
        scores = b.unary("sigmoid", scores)
    return label, b.concat([b.binary("sub", b.splat(1, scores), scores), scores], 1)


def _pair_probabilities(
    b: CoreBuilder, scores: SSAValue, svm: _Svm, pairs: list[tuple[int, int]]
) -> SSAValue:
    """r[n, i, j]: the probability that class i beats j, `1 - σ(s·A + B)` clamped to
    [1e-7, 1 - 1e-7], and 1 - that for r[n, j, i]; the diagonal is 0."""
    a = _along_last(b, svm.prob_a, scores, "prob_a")
    z = b.binary("add", b.binary("mul", scores, a), _along_last(b, svm.prob_b, scores, "prob_b"))
    p = b.binary("sub", b.splat(1, z), b.unary("sigmoid", z))
    p = b.binary("min", b.binary("max", p, b.splat(1e-7, p)), b.splat(1 - 1e-7, p))
    table = b.concat([p, b.binary("sub", b.splat(1, p), p)], 1)  # [N, 2P]
    classes = pairs[-1][1] + 1
    where = np.zeros((classes, classes), np.int64)
    for k, (i, j) in enumerate(pairs):
        where[i, j], where[j, i] = k, len(pairs) + k
    r = b.gather(table, b.constant(where), 1)
    eye = _expand_like(b, b.constant(np.eye(classes, dtype=bool)), [1, 2], r)
    return b.select(eye, b.splat(0, r), r)


def _pairwise_coupling(b: CoreBuilder, r: SSAValue, classes: int) -> SSAValue:
    """Class probabilities from pairwise ones (libsvm's multiclass_probability, in float32).

    Q[i, i] = Σ_j r[j, i]², Q[i, j] = -r[j, i]·r[i, j]; starting from p = 1/k,
    Gauss-Seidel sweeps update p until max_i |(Qp)_i - pᵀQp| < 0.005/k, at most
    100 times. Rows stop on their own: a converged row is carried unchanged
    while the loop runs on for the others.
    """
    rt = b.transpose(r, [0, 2, 1])
    diagonal = b.reduce("sum", b.binary("mul", rt, rt), [2])  # [N, k]
    eye = _expand_like(b, b.constant(np.eye(classes, dtype=bool)), [1, 2], r)
    off = b.unary("neg", b.binary("mul", rt, r))
    q = b.select(eye, _expand_like(b, diagonal, [0, 1], r), off)
    start = b.splat(np.float32(1) / np.float32(classes), diagonal)
    scalar_i64, scalar_i1 = tensor(i64, []), tensor(IntegerType(1), [])
    block = Block(arg_types=[scalar_i64, scalar_i1, start.type])
    body = BodyBuilder(b, block)
    p0 = block.args[2]
    p, done = _coupling_sweep(body, q, diagonal, p0, classes)
    p = body.select(_expand_like(body, done, [0], p0), p0, p)
    finished = body.reduce("and", done, [0])
    go_on = body.unary("not", finished)
    body.insert(core.YieldOp.create(operands=[go_on, p]))
    loop = core.LoopOp.create(
        operands=[b.constant(np.array(100, np.int64)), b.constant(np.array(True)), start],
        result_types=[start.type],
        regions=[Region(block)],
    )
    return b.insert(loop).results[0]


def _coupling_sweep(
    b: CoreBuilder, q: SSAValue, diagonal: SSAValue, p: SSAValue, classes: int
) -> tuple[SSAValue, SSAValue]:
    """One iteration of multiclass_probability for every row: the swept p, and whether
    the row had converged before it (then p must stay as it was)."""

    def column(v: SSAValue, k: int) -> SSAValue:
        return b.gather(v, b.constant(np.array(k, np.int64)), 1)

    def spread(v: SSAValue) -> SSAValue:
        return _expand_like(b, v, [0], p)

    qp = b.reduce("sum", b.binary("mul", q, _expand_like(b, p, [0, 2], q)), [2])
    pqp = b.reduce("sum", b.binary("mul", p, qp), [1])
    error = b.reduce("max", b.unary("abs", b.binary("sub", qp, spread(pqp))), [1])
    done = b.compare("lt", error, b.splat(np.float32(0.005) / np.float32(classes), error))
    for t in range(classes):
        qp_t, q_tt = column(qp, t), column(diagonal, t)
        diff = b.binary("div", b.binary("sub", pqp, qp_t), q_tt)
        at_t = _expand_like(b, b.constant(np.arange(classes) == t), [1], p)
        p = b.select(at_t, b.binary("add", p, spread(diff)), p)
        grow = b.binary("add", b.splat(1, diff), diff)
        twice = b.binary("mul", b.splat(2, qp_t), qp_t)
        step = b.binary("mul", diff, b.binary("add", b.binary("mul", diff, q_tt), twice))
        pqp = b.binary("div", b.binary("div", b.binary("add", pqp, step), grow), grow)
        row = b.gather(q, b.constant(np.array(t, np.int64)), 1)  # Q[t, :]
        qp = b.binary("div", b.binary("add", qp, b.binary("mul", spread(diff), row)), spread(grow))
        p = b.binary("div", p, spread(grow))
    return p, done
