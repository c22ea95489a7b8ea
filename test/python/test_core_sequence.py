"""ONNX sequence ops at level core (`!core.list` and the `core.list*` ops) against onnxruntime.

Each model is built with onnx.helper at opset 21 (what onnxruntime runs),
lowered to core, run by the core interpreter and compared with
onnxruntime's outputs; sequences compare element by element.
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

F = TensorProto.FLOAT
I64 = TensorProto.INT64


def seq_info(
    name: str, elem: int = F, shape: Sequence[object] | None = None
) -> onnx.ValueInfoProto:
    return helper.make_tensor_sequence_value_info(name, elem, shape)


def make_model(
    nodes: Sequence[onnx.NodeProto],
    inputs: Sequence[onnx.ValueInfoProto],
    outputs: Sequence[onnx.ValueInfoProto],
    initializers: Sequence[onnx.TensorProto] = (),
    opset: int = 21,
) -> onnx.ModelProto:
    graph = helper.make_graph(list(nodes), "g", list(inputs), list(outputs), list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    onnx.checker.check_model(model, full_check=True)
    return model


def const(name: str, value: object, dtype: type = np.int64) -> onnx.NodeProto:
    array = np.asarray(value, dtype=dtype)
    return helper.make_node(
        "Constant", [], [name], value=onnx.numpy_helper.from_array(array, name + "_value")
    )


def assert_same(got: object, expected: object, where: str = "output") -> None:
    if isinstance(expected, list):
        assert isinstance(got, list), f"{where}: expected a sequence, got {type(got).__name__}"
        assert len(got) == len(expected), f"{where}: {len(got)} items, expected {len(expected)}"
        for i, (g, e) in enumerate(zip(got, expected, strict=True)):
            assert_same(g, e, f"{where}[{i}]")
        return
    got_a, exp_a = np.asarray(got), np.asarray(expected)
    assert got_a.dtype == exp_a.dtype, f"{where}: dtype {got_a.dtype}, expected {exp_a.dtype}"
    assert got_a.shape == exp_a.shape, f"{where}: shape {got_a.shape}, expected {exp_a.shape}"
    np.testing.assert_allclose(got_a, exp_a, rtol=1e-6, atol=1e-6, err_msg=where)


def check_against_ort(model: onnx.ModelProto, feed: dict[str, object]) -> list[object]:
    """Run at level core and with onnxruntime; the outputs must agree."""
    expected = ort.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    ).run(None, feed)
    got = InferenceSession(model, level="core").run(None, feed)
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        assert_same(g, e, f"output {i}")
    return got


def core_ops(model: onnx.ModelProto) -> list[str]:
    return [op.name for op in InferenceSession(model, level="core").module.walk()]


# ---- construct, at, length ----------------------------------------------------------------


def construct_at_model() -> onnx.ModelProto:
    return make_model(
        [
            helper.make_node("SequenceConstruct", ["x", "y", "z"], ["s"]),
            const("m1", -1),
            helper.make_node("SequenceAt", ["s", "m1"], ["last"]),
            helper.make_node("SequenceAt", ["s", "p"], ["at_p"]),
            helper.make_node("SequenceLength", ["s"], ["n"]),
        ],
        [
            helper.make_tensor_value_info("x", F, [2]),
            helper.make_tensor_value_info("y", F, [3]),
            helper.make_tensor_value_info("z", F, [1]),
            helper.make_tensor_value_info("p", I64, []),
        ],
        [
            seq_info("s", F, [None]),
            helper.make_tensor_value_info("last", F, [None]),
            helper.make_tensor_value_info("at_p", F, [None]),
            helper.make_tensor_value_info("n", I64, []),
        ],
    )


@pytest.mark.parametrize("position", [-3, -1, 0, 2])
def test_construct_at_length(position: int) -> None:
    feed = {
        "x": np.array([1, 2], np.float32),
        "y": np.array([3, 4, 5], np.float32),
        "z": np.array([6], np.float32),
        "p": np.array(position, np.int64),
    }
    check_against_ort(construct_at_model(), feed)


def test_construct_lowers_to_core_list_ops() -> None:
    ops = core_ops(construct_at_model())
    assert {"core.list", "core.list_get", "core.list_length"} <= set(ops)
    assert not [name for name in ops if name.startswith("onnx.")]


def test_position_out_of_range_is_a_clear_error() -> None:
    feed = {
        "x": np.zeros(2, np.float32),
        "y": np.zeros(3, np.float32),
        "z": np.zeros(1, np.float32),
        "p": np.array(5, np.int64),
    }
    with pytest.raises(RungError, match=r"core.list_get: index 5 is out of range \[0, 3\)"):
        InferenceSession(construct_at_model(), level="core").run(None, feed)


# ---- insert, erase, empty ---------------------------------------------------------------


def insert_erase_model() -> onnx.ModelProto:
    return make_model(
        [
            helper.make_node("SequenceEmpty", [], ["e"], dtype=F),
            helper.make_node("SequenceInsert", ["e", "t"], ["one"]),
            helper.make_node("SequenceInsert", ["s", "t"], ["appended"]),
            helper.make_node("SequenceInsert", ["s", "t", "p"], ["inserted"]),
            helper.make_node("SequenceErase", ["s"], ["popped"]),
            helper.make_node("SequenceErase", ["inserted", "q"], ["erased"]),
        ],
        [
            seq_info("s", F, [None]),
            helper.make_tensor_value_info("t", F, [4]),
            helper.make_tensor_value_info("p", TensorProto.INT32, []),
            helper.make_tensor_value_info("q", I64, []),
        ],
        [
            seq_info("e", F, None),
            seq_info("one", F, None),
            seq_info("appended", F, [None]),
            seq_info("inserted", F, [None]),
            seq_info("popped", F, [None]),
            seq_info("erased", F, [None]),
        ],
    )


@pytest.mark.parametrize(("p", "q"), [(0, 0), (-1, -1), (3, 2), (-3, 1)])
def test_insert_erase(p: int, q: int) -> None:
    feed = {
        "s": [np.array([1.0], np.float32), np.arange(3, dtype=np.float32), np.zeros(2, np.float32)],
        "t": np.array([9, 8, 7, 6], np.float32),
        "p": np.array(p, np.int32),
        "q": np.array(q, np.int64),
    }
    check_against_ort(insert_erase_model(), feed)


# ---- concat and stack -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("axis", "new_axis", "out_shape"),
    [(0, 0, [None, 3]), (-1, 0, [2, None]), (0, 1, [None, 2, 3]), (-1, 1, [2, 3, None])],
    ids=["concat-0", "concat-neg", "stack-0", "stack-neg"],
)
def test_concat_from_sequence(axis: int, new_axis: int, out_shape: list[object]) -> None:
    model = make_model(
        [
            helper.make_node("SequenceConstruct", ["a", "b", "c"], ["s"]),
            helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=axis, new_axis=new_axis),
        ],
        [helper.make_tensor_value_info(n, F, [2, 3]) for n in "abc"],
        [helper.make_tensor_value_info("y", F, out_shape)],
    )
    rng = np.random.default_rng(0)
    feed = {n: rng.standard_normal((2, 3)).astype(np.float32) for n in "abc"}
    check_against_ort(model, feed)
    expected = "core.list_stack" if new_axis else "core.list_concat"
    assert expected in core_ops(model)


def test_concat_of_sequence_input_with_different_sizes() -> None:
    model = make_model(
        [helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=1)],
        [seq_info("s", F, [2, None])],
        [helper.make_tensor_value_info("y", F, [2, None])],
    )
    feed = {"s": [np.ones((2, k), np.float32) * k for k in (1, 3, 2)]}
    check_against_ort(model, feed)


def test_concat_of_unranked_elements_along_a_non_negative_axis() -> None:
    model = make_model(
        [helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=1)],
        [seq_info("s", F, None)],
        [helper.make_tensor_value_info("y", F, [2, None])],
    )
    feed = {"s": [np.ones((2, k), np.float32) * k for k in (1, 3)]}
    check_against_ort(model, feed)


# ---- SplitToSequence ----------------------------------------------------------------------


def split_model(
    x_shape: Sequence[object], split: object, runtime_split: bool, **attrs: int
) -> tuple[onnx.ModelProto, dict[str, object]]:
    inputs = [helper.make_tensor_value_info("x", F, list(x_shape))]
    nodes = []
    names = ["x"]
    feed: dict[str, object] = {}
    if split is not None:
        array = np.asarray(split, np.int64)
        if runtime_split:
            inputs.append(helper.make_tensor_value_info("split", I64, list(array.shape)))
            feed["split"] = array
        else:
            nodes.append(const("split", array))
        names.append("split")
    nodes.append(helper.make_node("SplitToSequence", names, ["s"], **attrs))
    model = make_model(nodes, inputs, [seq_info("s", F, None)])
    return model, feed


SPLITS = {
    "ones": (None, {"axis": 1}),
    "ones-squeezed": (None, {"axis": 1, "keepdims": 0}),
    "chunks": (2, {"axis": 1}),
    "chunks-remainder": (4, {"axis": -1}),
    "sizes": ([1, 2], {"axis": 0}),
    "sizes-with-empty": ([0, 5, 1], {"axis": 1}),
}
SPLIT_CASES = [
    pytest.param(split, attrs, runtime, id=f"{name}-{'runtime' if runtime else 'constant'}")
    for name, (split, attrs) in SPLITS.items()
    for runtime in (False, True)
    if split is not None or not runtime
]


@pytest.mark.parametrize(("split", "attrs", "runtime_split"), SPLIT_CASES)
def test_split_to_sequence(split: object, attrs: dict[str, int], runtime_split: bool) -> None:
    model, feed = split_model([3, 6], split, runtime_split, **attrs)
    feed["x"] = np.arange(18, dtype=np.float32).reshape(3, 6)
    check_against_ort(model, feed)


@pytest.mark.parametrize("keepdims", [0, 1])
def test_split_to_sequence_of_a_dynamic_dim(keepdims: int) -> None:
    model, feed = split_model(["N", 3], None, False, axis=0, keepdims=keepdims)
    feed["x"] = np.arange(12, dtype=np.float32).reshape(4, 3)
    check_against_ort(model, feed)
    assert "core.loop" in core_ops(model)


def test_constant_split_gives_static_slices() -> None:
    model, _ = split_model([3, 6], [2, 4], False, axis=1)
    ops = core_ops(model)
    assert ops.count("core.slice") == 2 and "core.loop" not in ops


# ---- control flow ----------------------------------------------------------------------------


def test_loop_carries_a_sequence() -> None:
    """A Loop appending x * i to a sequence, then the sequence stacked."""
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Cast", ["i"], ["fi"], to=F),
            helper.make_node("Mul", ["x", "fi"], ["xi"]),
            helper.make_node("SequenceInsert", ["seq_in", "xi"], ["seq_out"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", I64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            seq_info("seq_in", F, [2]),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            seq_info("seq_out", F, [2]),
        ],
    )
    model = make_model(
        [
            helper.make_node("SequenceEmpty", [], ["empty"], dtype=F),
            helper.make_node("Loop", ["n", "", "empty"], ["seq"], body=body),
            helper.make_node("ConcatFromSequence", ["seq"], ["stacked"], axis=0, new_axis=1),
        ],
        [helper.make_tensor_value_info("n", I64, []), helper.make_tensor_value_info("x", F, [2])],
        [seq_info("seq", F, [2]), helper.make_tensor_value_info("stacked", F, [None, 2])],
    )
    feed = {"n": np.array(3, np.int64), "x": np.array([1.0, -2.0], np.float32)}
    check_against_ort(model, feed)
    module = InferenceSession(model, level="core").module
    loop = next(op for op in module.walk() if op.name == "core.loop")
    assert [str(t) for t in loop.regions[0].block.arg_types][2].startswith("!core.list<")


def test_if_returns_sequences() -> None:
    def branch(name: str, value: float) -> onnx.GraphProto:
        return helper.make_graph(
            [
                const("v", [value], np.float32),
                helper.make_node("SequenceConstruct", ["v", "x"], ["out"]),
            ],
            name,
            [],
            [seq_info("out", F, [None])],
        )

    model = make_model(
        [
            helper.make_node(
                "If", ["c"], ["s"], then_branch=branch("t", 1.0), else_branch=branch("e", 2.0)
            ),
            helper.make_node("SequenceLength", ["s"], ["n"]),
        ],
        [
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
            helper.make_tensor_value_info("x", F, [3]),
        ],
        [seq_info("s", F, [None]), helper.make_tensor_value_info("n", I64, [])],
    )
    for c in (True, False):
        check_against_ort(model, {"c": np.array(c), "x": np.ones(3, np.float32)})


def test_sequence_map_is_a_core_loop() -> None:
    body = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["y"])],
        "body",
        [
            helper.make_tensor_value_info("a", F, [None]),
            helper.make_tensor_value_info("b", F, [None]),
        ],
        [helper.make_tensor_value_info("y", F, [None])],
    )
    model = make_model(
        [helper.make_node("SequenceMap", ["s", "t"], ["out"], body=body)],
        [seq_info("s", F, [None]), helper.make_tensor_value_info("t", F, [None])],
        [seq_info("out", F, [None])],
    )
    feed = {
        "s": [np.ones(3, np.float32), np.arange(3, dtype=np.float32)],
        "t": np.ones(3, np.float32),
    }
    check_against_ort(model, feed)
    assert "core.loop" in core_ops(model)


def test_sequence_map_after_another_sequence_op() -> None:
    """The sequence is a list already when SequenceMap is lowered."""
    body = helper.make_graph(
        [helper.make_node("Shape", ["a"], ["y"])],
        "body",
        [helper.make_tensor_value_info("a", F, [None, None])],
        [helper.make_tensor_value_info("y", I64, [2])],
    )
    model = make_model(
        [
            const("zero", 0),
            helper.make_node("SequenceAt", ["s", "zero"], ["first"]),
            helper.make_node("SequenceMap", ["s"], ["shapes"], body=body),
        ],
        [seq_info("s", F, [None, None])],
        [helper.make_tensor_value_info("first", F, [None, None]), seq_info("shapes", I64, [2])],
    )
    feed = {"s": [np.ones((2, 3), np.float32), np.ones((4, 1), np.float32)]}
    check_against_ort(model, feed)


# ---- sequences at the function boundary ----------------------------------------------------


def test_sequence_returned_and_read_keeps_one_type() -> None:
    """A sequence input read by SequenceAt before it is returned through Identity."""
    model = make_model(
        [
            const("zero", 0),
            helper.make_node("SequenceAt", ["s", "zero"], ["first"]),
            helper.make_node("Identity", ["s"], ["same"]),
        ],
        [seq_info("s", F, [None])],
        [helper.make_tensor_value_info("first", F, [None]), seq_info("same", F, [None])],
    )
    feed = {"s": [np.array([1, 2], np.float32), np.array([3], np.float32)]}
    check_against_ort(model, feed)
    session = InferenceSession(model, level="core")
    session.module.verify()
    assert "!onnx.seq" not in str(session.module)


def test_sequence_level_onnx_agrees_with_core() -> None:
    model = insert_erase_model()
    feed = {
        "s": [np.array([1.0], np.float32), np.arange(3, dtype=np.float32)],
        "t": np.array([9, 8, 7, 6], np.float32),
        "p": np.array(-1, np.int32),
        "q": np.array(0, np.int64),
    }
    core = InferenceSession(model, level="core").run(None, feed)
    reference = InferenceSession(model, level="onnx").run(None, feed)
    for i, (g, e) in enumerate(zip(core, reference, strict=True)):
        assert_same(g, e, f"output {i}")


# ---- optionals ------------------------------------------------------------------------------


def optional_model() -> onnx.ModelProto:
    """An optional built from x (or empty), tested, and read where it holds a value."""
    tensor_type = helper.make_tensor_type_proto(F, [3])
    return make_model(
        [
            helper.make_node("Optional", ["x"], ["full"]),
            helper.make_node("Optional", [], ["empty"], type=tensor_type),
            helper.make_node("OptionalHasElement", ["full"], ["has_full"]),
            helper.make_node("OptionalHasElement", ["empty"], ["has_empty"]),
            helper.make_node("OptionalGetElement", ["full"], ["got"]),
            helper.make_node("OptionalHasElement", ["x"], ["has_plain"]),
        ],
        [helper.make_tensor_value_info("x", F, [3])],
        [
            helper.make_tensor_value_info("has_full", TensorProto.BOOL, []),
            helper.make_tensor_value_info("has_empty", TensorProto.BOOL, []),
            helper.make_tensor_value_info("got", F, [3]),
            helper.make_tensor_value_info("has_plain", TensorProto.BOOL, []),
        ],
    )


def test_optional_ops() -> None:
    check_against_ort(optional_model(), {"x": np.array([1, 2, 3], np.float32)})
    ops = core_ops(optional_model())
    assert {"core.optional", "core.optional_has", "core.optional_get"} <= set(ops)


def optional_sequence_input_model() -> onnx.ModelProto:
    opt_seq = helper.make_optional_type_proto(
        helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, [None]))
    )
    return make_model(
        [
            helper.make_node("OptionalHasElement", ["o"], ["has"]),
            helper.make_node(
                "If",
                ["has"],
                ["n"],
                then_branch=helper.make_graph(
                    [
                        helper.make_node("OptionalGetElement", ["o"], ["s"]),
                        helper.make_node("SequenceLength", ["s"], ["len"]),
                    ],
                    "t",
                    [],
                    [helper.make_tensor_value_info("len", I64, [])],
                ),
                else_branch=helper.make_graph(
                    [const("none", -1)], "e", [], [helper.make_tensor_value_info("none", I64, [])]
                ),
            ),
        ],
        [helper.make_value_info("o", opt_seq)],
        [
            helper.make_tensor_value_info("has", TensorProto.BOOL, []),
            helper.make_tensor_value_info("n", I64, []),
        ],
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, (False, -1)), ([np.ones(2, np.float32), np.ones(1, np.float32)], (True, 2))],
    ids=["absent", "present"],
)
def test_optional_sequence_input(value: object, expected: tuple[bool, int]) -> None:
    """An optional input is None (absent) or its value, as onnxruntime passes it."""
    model = optional_sequence_input_model()
    feed = {} if value is None else {"o": value}
    has, n = InferenceSession(model, level="core").run(None, feed)
    assert bool(has) is expected[0] and int(n) == expected[1]
    reference = InferenceSession(model, level="onnx").run(None, feed)
    assert bool(reference[0]) is expected[0] and int(reference[1]) == expected[1]


def test_reading_an_empty_optional_is_a_clear_error() -> None:
    opt_tensor = helper.make_optional_type_proto(helper.make_tensor_type_proto(F, [2]))
    model = make_model(
        [helper.make_node("OptionalGetElement", ["o"], ["y"])],
        [helper.make_value_info("o", opt_tensor)],
        [helper.make_tensor_value_info("y", F, [2])],
    )
    with pytest.raises(RungError, match="core.optional_get: the optional holds no value"):
        InferenceSession(model, level="core").run(None, {})


# ---- the interpreter on core IR -----------------------------------------------------------------


LIST_IR = """
func.func @f(%a: tensor<2xf32>, %b: tensor<2xf32>, %i: tensor<i64>) -> (!core.list<tensor<2xf32>>, tensor<2x2xf32>, tensor<4xf32>, tensor<2xf32>) {
  %l = core.list(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> !core.list<tensor<2xf32>>
  %n = core.list_length(%l) : (!core.list<tensor<2xf32>>) -> tensor<i64>
  %l2 = core.list_insert(%l, %a, %n) : (!core.list<tensor<2xf32>>, tensor<2xf32>, tensor<i64>) -> !core.list<tensor<2xf32>>
  %l3 = core.list_erase(%l2, %i) : (!core.list<tensor<2xf32>>, tensor<i64>) -> !core.list<tensor<2xf32>>
  %s = core.list_stack(%l) {axis = 1 : i64} : (!core.list<tensor<2xf32>>) -> tensor<2x2xf32>
  %c = core.list_concat(%l) {axis = 0 : i64} : (!core.list<tensor<2xf32>>) -> tensor<4xf32>
  %g = core.list_get(%l3, %i) : (!core.list<tensor<2xf32>>, tensor<i64>) -> tensor<2xf32>
  func.return %l3, %s, %c, %g : !core.list<tensor<2xf32>>, tensor<2x2xf32>, tensor<4xf32>, tensor<2xf32>
}
"""


def test_interpreter_runs_list_ops() -> None:
    from rung.dialects import parse_module
    from rung.dialects.core_eval import evaluate

    a, b = np.array([1, 2], np.float32), np.array([3, 4], np.float32)
    lst, stacked, joined, got = evaluate(parse_module(LIST_IR), [a, b, np.array(0, np.int64)])
    assert_same(lst, [b, a])
    assert_same(stacked, np.stack([a, b], axis=1))
    assert_same(joined, np.concatenate([a, b]))
    assert_same(got, b)


def test_interpreter_keeps_list_operands_unchanged() -> None:
    """Lists are values: inserting or erasing makes a new list."""
    from rung.dialects import parse_module
    from rung.dialects.core_eval import evaluate

    a, b = np.array([1, 2], np.float32), np.array([3, 4], np.float32)
    module = parse_module(LIST_IR)
    first = evaluate(module, [a, b, np.array(1, np.int64)])[0]
    assert_same(first, [a, a])
    with pytest.raises(RungError, match=r"core.list_erase: index 3 is out of range \[0, 3\)"):
        evaluate(module, [a, b, np.array(3, np.int64)])
