"""String tensors and ZipMap's maps at levels core and kernel, against onnxruntime.

String elements are `const char *` in the generated C (UTF-8, NUL-terminated):
they cross the ABI as arrays of pointers, compare bytewise (`strcmp`), and come
back as numpy object arrays of `str`, as onnxruntime returns them. ZipMap's
sequence of maps comes back as a list of dicts whose keys and values have
onnxruntime's Python types.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from rung.errors import RungError
from rung.runtime import InferenceSession

F, I64, S = TensorProto.FLOAT, TensorProto.INT64, TensorProto.STRING
LEVELS = ["core", "kernel"]


def make_model(
    nodes: Sequence[onnx.NodeProto],
    inputs: Sequence[onnx.ValueInfoProto],
    outputs: Sequence[onnx.ValueInfoProto],
    ml_opset: int = 3,
) -> onnx.ModelProto:
    graph = helper.make_graph(list(nodes), "g", list(inputs), list(outputs))
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("ai.onnx.ml", ml_opset)],
    )
    model.ir_version = 10
    onnx.checker.check_model(model, full_check=True)
    return model


def ml_node(op: str, inputs: list[str], outputs: list[str], **attrs: object) -> onnx.NodeProto:
    return helper.make_node(op, inputs, outputs, domain="ai.onnx.ml", **attrs)


def vi(name: str, elem: int, shape: Sequence[object] | None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def assert_same(got: object, expected: object, where: str) -> None:
    """Equal values of equal Python and numpy types (strings exactly, numbers closely)."""
    if isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected), where
        for i, (g, e) in enumerate(zip(got, expected, strict=True)):
            assert_same(g, e, f"{where}[{i}]")
        return
    if isinstance(expected, dict):
        assert isinstance(got, dict), f"{where}: got {type(got).__name__}"
        assert list(got) == list(expected), f"{where}: keys {list(got)} != {list(expected)}"
        for k in expected:
            assert type(k) is type(next(g for g in got if g == k)), f"{where}: key types"
            assert type(got[k]) is type(expected[k]), f"{where}[{k!r}]: value types"
            np.testing.assert_allclose(got[k], expected[k], rtol=1e-5, atol=1e-6)
        return
    assert isinstance(got, np.ndarray) and isinstance(expected, np.ndarray), where
    assert got.dtype == expected.dtype, f"{where}: dtype {got.dtype} != {expected.dtype}"
    assert got.shape == expected.shape, f"{where}: shape {got.shape} != {expected.shape}"
    if expected.dtype == object:
        assert got.tolist() == expected.tolist(), where
        assert all(type(g) is str for g in got.reshape(-1)), f"{where}: not str"
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6, err_msg=where)


def check_against_ort(model: onnx.ModelProto, feed: dict[str, object], level: str) -> list[object]:
    expected = ort.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    ).run(None, feed)
    got = InferenceSession(model, level=level).run(None, feed)
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        assert_same(g, e, f"output {i}")
    return got


WORDS = np.array(["a", "", "é", "b c", "a"], dtype=object)


# ---- strings through the ABI, and plain ops on them -------------------------------------------


@pytest.mark.parametrize("level", LEVELS)
def test_strings_move_through_data_ops(level: str) -> None:
    """Transpose, Gather, Concat and Identity move strings; non-ASCII and empty ones too."""
    model = make_model(
        [
            helper.make_node("Transpose", ["x"], ["t"]),
            helper.make_node("Gather", ["x", "i"], ["g"], axis=1),
            helper.make_node("Concat", ["x", "x"], ["c"], axis=0),
            helper.make_node("Identity", ["x"], ["same"]),
        ],
        [vi("x", S, ["N", 3]), vi("i", I64, [2])],
        [
            vi("t", S, [3, "N"]),
            vi("g", S, ["N", 2]),
            vi("c", S, [None, 3]),
            vi("same", S, ["N", 3]),
        ],
    )
    x = np.array([["x", "", "ünï"], ["long " * 20, "b", "'\"\\?"]], dtype=object)
    check_against_ort(model, {"x": x, "i": np.array([2, 0], np.int64)}, level)


@pytest.mark.parametrize("level", LEVELS)
def test_equal_on_strings_is_bytewise(level: str) -> None:
    model = make_model(
        [helper.make_node("Equal", ["x", "y"], ["z"])],
        [vi("x", S, [5]), vi("y", S, [1])],
        [vi("z", TensorProto.BOOL, [5])],
    )
    for y in ("a", "", "é", "A"):
        check_against_ort(model, {"x": WORDS, "y": np.array([y], dtype=object)}, level)


def test_string_inputs_accept_str_and_bytes_arrays_and_refuse_numbers() -> None:
    model = make_model(
        [helper.make_node("Identity", ["x"], ["y"])], [vi("x", S, [2])], [vi("y", S, [2])]
    )
    session = InferenceSession(model, level="kernel")
    assert session.run(None, {"x": np.array(["ab", "c"])})[0].tolist() == ["ab", "c"]
    assert session.run(None, {"x": np.array(["ab", "c"], dtype=object)})[0].dtype == object
    with pytest.raises(RungError, match=r"input 'x'.*\(strings\), got dtype float32"):
        session.run(None, {"x": np.ones(2, np.float32)})


def test_sequence_of_strings() -> None:
    model = make_model(
        [
            helper.make_node("SequenceConstruct", ["x", "y"], ["s"]),
            helper.make_node("ConcatFromSequence", ["s"], ["c"], axis=0),
        ],
        [vi("x", S, [2]), vi("y", S, [None])],
        [helper.make_tensor_sequence_value_info("s", S, [None]), vi("c", S, [None])],
    )
    feed = {"x": np.array(["a", "bb"], dtype=object), "y": np.array(["ccc"], dtype=object)}
    for level in LEVELS:
        check_against_ort(model, feed, level)


# ---- ai.onnx.ml ops on strings ------------------------------------------------------------


LABEL_ENCODERS = {
    "string-int": (
        {"keys_strings": ["a", "é", ""], "values_int64s": [1, 2, 3], "default_int64": -7},
        (S, I64),
        WORDS,
    ),
    "int-string": (
        {"keys_int64s": [1, 5], "values_strings": ["one", "five"], "default_string": "?"},
        (I64, S),
        np.array([5, 1, 2, 5], np.int64),
    ),
    "string-string": (
        {"keys_strings": ["a", "b c"], "values_strings": ["A", "BC"]},
        (S, S),
        WORDS,
    ),
    "float-string": (
        {"keys_floats": [0.5, -1.0], "values_strings": ["half", "minus"]},
        (F, S),
        np.array([0.5, 2.0, -1.0], np.float32),
    ),
    "string-float": (
        {"keys_strings": ["a", "b c"], "values_floats": [0.5, 2.5], "default_float": 9.0},
        (S, F),
        WORDS,
    ),
}


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("name", list(LABEL_ENCODERS))
def test_label_encoder_on_strings(name: str, level: str) -> None:
    attrs, (t_in, t_out), x = LABEL_ENCODERS[name]
    model = make_model(
        [ml_node("LabelEncoder", ["x"], ["y"], **attrs)],
        [vi("x", t_in, [None])],
        [vi("y", t_out, [None])],
        ml_opset=2,
    )
    check_against_ort(model, {"x": x}, level)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(("t_in", "t_out"), [(S, I64), (I64, S)], ids=["to-int", "to-string"])
def test_category_mapper(t_in: int, t_out: int, level: str) -> None:
    model = make_model(
        [
            ml_node(
                "CategoryMapper",
                ["x"],
                ["y"],
                cats_strings=["a", "é", "b c"],
                cats_int64s=[10, 20, 30],
                default_int64=-1,
                default_string="none",
            )
        ],
        [vi("x", t_in, [None])],
        [vi("y", t_out, [None])],
    )
    x = WORDS if t_in == S else np.array([20, 10, 5, 30], np.int64)
    check_against_ort(model, {"x": x}, level)


@pytest.mark.parametrize("level", LEVELS)
def test_array_feature_extractor_on_strings(level: str) -> None:
    model = make_model(
        [ml_node("ArrayFeatureExtractor", ["x", "i"], ["y"])],
        [vi("x", S, [2, 3]), vi("i", I64, [2])],
        [vi("y", S, [2, 2])],
    )
    x = np.array([["a", "b", "c"], ["d", "é", ""]], dtype=object)
    check_against_ort(model, {"x": x, "i": np.array([2, 0], np.int64)}, level)


@pytest.mark.parametrize("level", LEVELS)
def test_one_hot_encoder_on_strings(level: str) -> None:
    model = make_model(
        [ml_node("OneHotEncoder", ["x"], ["y"], cats_strings=["a", "é", "b c"], zeros=1)],
        [vi("x", S, [5])],
        [vi("y", F, [5, 3])],
    )
    check_against_ort(model, {"x": WORDS}, level)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("classes", [2, 3])
def test_linear_classifier_with_string_labels(classes: int, level: str) -> None:
    rng = np.random.default_rng(classes)
    labels = ["cat", "dog", "emu"][:classes]
    model = make_model(
        [
            ml_node(
                "LinearClassifier",
                ["x"],
                ["label", "scores"],
                coefficients=rng.standard_normal(classes * 4).astype(np.float32).tolist(),
                intercepts=[0.1] * classes,
                classlabels_strings=labels,
                post_transform="LOGISTIC" if classes == 2 else "SOFTMAX",
            )
        ],
        [vi("x", F, ["N", 4])],
        [vi("label", S, ["N"]), vi("scores", F, ["N", classes])],
        ml_opset=1,
    )
    x = rng.standard_normal((6, 4)).astype(np.float32)
    check_against_ort(model, {"x": x}, level)


# ---- ZipMap ---------------------------------------------------------------------------------


def zip_map_model(labels: dict[str, object]) -> onnx.ModelProto:
    key = S if "classlabels_strings" in labels else I64
    out = helper.make_sequence_type_proto(
        helper.make_map_type_proto(key, helper.make_tensor_type_proto(F, []))
    )
    return make_model(
        [ml_node("ZipMap", ["x"], ["z"], **labels)],
        [vi("x", F, ["N", 3])],
        [helper.make_value_info("z", out)],
        ml_opset=1,
    )


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("rows", [0, 1, 4])
@pytest.mark.parametrize(
    "labels",
    [{"classlabels_int64s": [3, -1, 7]}, {"classlabels_strings": ["cat", "é", ""]}],
    ids=["int-keys", "string-keys"],
)
def test_zip_map_gives_onnxruntimes_list_of_dicts(
    labels: dict[str, object], rows: int, level: str
) -> None:
    x = np.random.default_rng(rows).random((rows, 3)).astype(np.float32)
    (got,) = check_against_ort(zip_map_model(labels), {"x": x}, level)
    assert isinstance(got, list) and len(got) == rows


def test_zip_map_output_is_described_in_the_header() -> None:
    from rung.lowering.kernel_to_c import generate_c

    session = InferenceSession(zip_map_model({"classlabels_int64s": [1, 2, 3]}), level="kernel")
    header = generate_c(session.module).header
    assert "sequence (dtype RUNG_DTYPE_SEQUENCE) of maps (dtype RUNG_DTYPE_MAP)" in header
    assert "from int64_t keys to float values" in header
    assert session.get_outputs()[0].type == "seq(map(int64,tensor(float)))"


# ---- StringNormalizer ---------------------------------------------------------------------


def string_normalizer_model(shape: list[object], **attrs: object) -> onnx.ModelProto:
    """onnxruntime's "C" locale changes the case of ASCII letters only, as rung does."""
    node = helper.make_node("StringNormalizer", ["x"], ["y"], locale="C", **attrs)
    out = [None] if len(shape) == 1 else [1, None]
    return make_model([node], [vi("x", S, shape)], [vi("y", S, out)])


NORMALIZER_INPUTS = {
    "some-dropped": ["Monday", "tuesday", "Été", "MONDAY x", "monday"],
    "all-dropped": ["monday", "Monday"],
    "none-dropped": ["a", "B", "é"],
}


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("rows", [0, 1], ids=["vector", "row"])
@pytest.mark.parametrize("data", list(NORMALIZER_INPUTS))
@pytest.mark.parametrize(
    "attrs",
    [
        {"case_change_action": "UPPER", "is_case_sensitive": 0, "stopwords": ["monday"]},
        {"case_change_action": "LOWER", "is_case_sensitive": 1, "stopwords": ["monday"]},
        {"case_change_action": "NONE"},
    ],
    ids=["upper-insensitive", "lower-sensitive", "no-stopwords"],
)
def test_string_normalizer(attrs: dict[str, object], data: str, rows: int, level: str) -> None:
    words = np.array(NORMALIZER_INPUTS[data], dtype=object)
    x = words if rows == 0 else words.reshape(1, -1)
    model = string_normalizer_model(["C"] if rows == 0 else [1, "C"], **attrs)
    check_against_ort(model, {"x": x}, level)
