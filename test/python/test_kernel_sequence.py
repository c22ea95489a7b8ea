"""ONNX sequences and optionals at level kernel (`!kernel.list`, `!kernel.optional`, compiled C).

The models are those of `test_core_sequence` (built with onnx.helper at
opset 21), run natively and compared with onnxruntime; sequences and
optionals cross the C ABI both ways (`rung_sequence`, dtype
`RUNG_DTYPE_SEQUENCE` / `RUNG_DTYPE_NONE`). Run-time checks (positions,
element shapes, empty optionals) must fail the run with an error naming the
node, and wrong kinds of inputs must be refused before the run.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from test_core_sequence import (
    I64,
    F,
    assert_same,
    const,
    construct_at_model,
    insert_erase_model,
    make_model,
    optional_model,
    optional_sequence_input_model,
    seq_info,
    split_model,
)

from rung.dialects import kernel
from rung.errors import RungError
from rung.lowering.kernel_to_c import generate_c
from rung.runtime import InferenceSession


def check_against_ort(model: onnx.ModelProto, feed: dict[str, object]) -> list[object]:
    """Run at level kernel and with onnxruntime; the outputs must agree."""
    expected = ort.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    ).run(None, feed)
    got = InferenceSession(model, level="kernel").run(None, feed)
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        assert_same(g, e, f"output {i}")
    return got


def kernel_ops(model: onnx.ModelProto) -> list[str]:
    return [op.name for op in InferenceSession(model, level="kernel").module.walk()]


# ---- construct, at, length, insert, erase ---------------------------------------------------


@pytest.mark.parametrize("position", [-3, -1, 0, 2])
def test_construct_at_length(position: int) -> None:
    feed = {
        "x": np.array([1, 2], np.float32),
        "y": np.array([3, 4, 5], np.float32),
        "z": np.array([6], np.float32),
        "p": np.array(position, np.int64),
    }
    check_against_ort(construct_at_model(), feed)


def test_list_ops_lower_to_kernel_values() -> None:
    ops = kernel_ops(construct_at_model())
    assert {"kernel.list_new", "kernel.list_get", "kernel.list_length"} <= set(ops)
    assert not [name for name in ops if name.startswith("core.")]


def test_position_out_of_range_fails_the_run_naming_the_node() -> None:
    feed = {
        "x": np.zeros(2, np.float32),
        "y": np.zeros(3, np.float32),
        "z": np.zeros(1, np.float32),
        "p": np.array(5, np.int64),
    }
    session = InferenceSession(construct_at_model(), level="kernel")
    with pytest.raises(RungError, match=r"node 'SequenceAt.*position is out of range"):
        session.run(None, feed)


@pytest.mark.parametrize(("p", "q"), [(0, 0), (-1, -1), (3, 2), (-3, 1)])
def test_insert_erase(p: int, q: int) -> None:
    feed = {
        "s": [np.array([1.0], np.float32), np.arange(3, dtype=np.float32), np.zeros(2, np.float32)],
        "t": np.array([9, 8, 7, 6], np.float32),
        "p": np.array(p, np.int32),
        "q": np.array(q, np.int64),
    }
    check_against_ort(insert_erase_model(), feed)


def test_empty_sequences_in_and_out() -> None:
    """An empty output sequence (SequenceEmpty) comes back as []; erasing from an empty
    input fails the run, naming the node."""
    feed = {
        "s": [np.array([1.0], np.float32)],
        "t": np.array([9, 8, 7, 6], np.float32),
        "p": np.array(0, np.int32),
        "q": np.array(0, np.int64),
    }
    session = InferenceSession(insert_erase_model(), level="kernel")
    names = [o.name for o in session.get_outputs()]
    outputs = dict(zip(names, session.run(None, feed), strict=True))
    assert outputs["e"] == [] and outputs["popped"] == []
    assert outputs["one"][0].tolist() == [9, 8, 7, 6]
    with pytest.raises(RungError, match=r"node 'SequenceErase.*out of range"):
        session.run(None, {**feed, "s": []})


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


def concat_input_model(axis: int = 1) -> onnx.ModelProto:
    return make_model(
        [helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=axis)],
        [seq_info("s", F, [2, None])],
        [helper.make_tensor_value_info("y", F, [2, None])],
    )


def test_concat_of_sequence_input_with_different_sizes() -> None:
    feed = {"s": [np.ones((2, k), np.float32) * k for k in (1, 3, 2)]}
    check_against_ort(concat_input_model(), feed)


def test_concat_of_elements_that_disagree_fails_the_run() -> None:
    session = InferenceSession(concat_input_model(), level="kernel")
    bad = {"s": [np.ones((2, 1), np.float32), np.ones((3, 1), np.float32)]}
    with pytest.raises(RungError, match=r"ConcatFromSequence.*differ in a dim other than the axis"):
        session.run(None, bad)
    with pytest.raises(RungError, match=r"ConcatFromSequence.*the sequence is empty"):
        session.run(None, {"s": []})


def test_element_of_another_rank_fails_the_run() -> None:
    """The list type bounds only the element type: a rank read at run time is checked."""
    model = make_model(
        [const("zero", 0), helper.make_node("SequenceAt", ["s", "zero"], ["y"])],
        [seq_info("s", F, None)],
        [helper.make_tensor_value_info("y", F, [None, None])],
    )
    session = InferenceSession(model, level="kernel")
    assert session.run(None, {"s": [np.ones((2, 3), np.float32)]})[0].shape == (2, 3)
    with pytest.raises(RungError, match="a sequence element does not have the shape"):
        session.run(None, {"s": [np.ones(3, np.float32)]})


# ---- SplitToSequence ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("split", "attrs", "runtime_split"),
    [
        (None, {"axis": 1}, False),
        (None, {"axis": 1, "keepdims": 0}, False),
        (4, {"axis": -1}, True),
        ([0, 5, 1], {"axis": 1}, True),
    ],
    ids=["ones", "ones-squeezed", "chunks-runtime", "sizes-runtime"],
)
def test_split_to_sequence(split: object, attrs: dict[str, int], runtime_split: bool) -> None:
    model, feed = split_model([3, 6], split, runtime_split, **attrs)
    feed["x"] = np.arange(18, dtype=np.float32).reshape(3, 6)
    check_against_ort(model, feed)


@pytest.mark.parametrize("rows", [1, 4])
def test_split_to_sequence_of_a_dynamic_dim(rows: int) -> None:
    model, feed = split_model(["N", 3], None, False, axis=0, keepdims=0)
    feed["x"] = np.arange(rows * 3, dtype=np.float32).reshape(rows, 3)
    check_against_ort(model, feed)


# ---- control flow ----------------------------------------------------------------------------


def loop_model() -> onnx.ModelProto:
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
    return make_model(
        [
            helper.make_node("SequenceEmpty", [], ["empty"], dtype=F),
            helper.make_node("Loop", ["n", "", "empty"], ["seq"], body=body),
            helper.make_node("ConcatFromSequence", ["seq"], ["stacked"], axis=0, new_axis=1),
        ],
        [helper.make_tensor_value_info("n", I64, []), helper.make_tensor_value_info("x", F, [2])],
        [seq_info("seq", F, [2]), helper.make_tensor_value_info("stacked", F, [None, 2])],
    )


@pytest.mark.parametrize("trips", [1, 3, 20])
def test_loop_carries_a_sequence(trips: int) -> None:
    feed = {"n": np.array(trips, np.int64), "x": np.array([1.0, -2.0], np.float32)}
    check_against_ort(loop_model(), feed)
    assert "scf.while" in kernel_ops(loop_model())


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


def test_sequence_map() -> None:
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


# ---- optionals ------------------------------------------------------------------------------


def test_optional_ops() -> None:
    check_against_ort(optional_model(), {"x": np.array([1, 2, 3], np.float32)})
    ops = kernel_ops(optional_model())
    assert {"kernel.optional_new", "kernel.optional_has", "kernel.optional_get"} <= set(ops)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, (False, -1)), ([np.ones(2, np.float32), np.ones(1, np.float32)], (True, 2))],
    ids=["absent", "present"],
)
def test_optional_sequence_input(value: object, expected: tuple[bool, int]) -> None:
    feed = {} if value is None else {"o": value}
    has, n = InferenceSession(optional_sequence_input_model(), level="kernel").run(None, feed)
    assert bool(has) is expected[0] and int(n) == expected[1]  # type: ignore[call-overload]


def optional_identity_model() -> onnx.ModelProto:
    opt = helper.make_optional_type_proto(helper.make_tensor_type_proto(F, [2]))
    return make_model(
        [
            helper.make_node("Identity", ["o"], ["r"]),
            helper.make_node("OptionalGetElement", ["o"], ["y"]),
        ],
        [helper.make_value_info("o", opt)],
        [helper.make_value_info("r", opt), helper.make_tensor_value_info("y", F, [2])],
    )


def test_optional_output_holds_its_value_or_none() -> None:
    session = InferenceSession(optional_identity_model(), level="kernel")
    r, y = session.run(None, {"o": np.array([1.5, 2.5], np.float32)})
    assert_same(r, np.array([1.5, 2.5], np.float32))
    assert_same(y, np.array([1.5, 2.5], np.float32))
    with pytest.raises(RungError, match=r"OptionalGetElement.*the optional holds no value"):
        session.run(None, {})


def test_empty_optional_output() -> None:
    opt = helper.make_optional_type_proto(helper.make_tensor_type_proto(F, [2]))
    model = make_model(
        [helper.make_node("Identity", ["o"], ["r"])],
        [helper.make_value_info("o", opt)],
        [helper.make_value_info("r", opt)],
    )
    session = InferenceSession(model, level="kernel")
    assert session.run(None, {}) == [None]
    assert_same(session.run(None, {"o": np.ones(2, np.float32)})[0], np.ones(2, np.float32))


# ---- the C ABI --------------------------------------------------------------------------------


def test_wrong_kinds_of_inputs_are_refused_clearly() -> None:
    session = InferenceSession(insert_erase_model(), level="kernel")
    base = {"t": np.ones(4, np.float32), "p": np.array(0, np.int32), "q": np.array(0, np.int64)}
    with pytest.raises(RungError, match=r"input 's': expected a sequence .* list of numpy arrays"):
        session.run(None, {**base, "s": np.ones(3, np.float32)})
    with pytest.raises(RungError, match=r"input 's': element 1 .* must be of float32 .* got int64"):
        session.run(None, {**base, "s": [np.ones(1, np.float32), np.ones(1, np.int64)]})
    with pytest.raises(RungError, match=r"input 's': element 0 .* must be a numpy array"):
        session.run(None, {**base, "s": [[1.0, 2.0]]})


def test_the_native_model_checks_its_inputs_too() -> None:
    """Below InferenceSession, the compiled model's own checks give the same kind of errors."""
    from rung.runtime.native import compile_program

    module = InferenceSession(insert_erase_model(), level="kernel").module
    model = compile_program(generate_c(module))
    rest = [np.ones(4, np.float32), np.array(0, np.int32), np.array(0, np.int64)]
    with pytest.raises(RungError, match=r"input 0 \('s'\) must be a sequence \(a list of arrays\)"):
        model.run([np.ones(3, np.float32), *rest])
    with pytest.raises(RungError, match=r"input 0 \('s'\) element 1 must be of float32, got int64"):
        model.run([[np.ones(1, np.float32), np.ones(1, np.int64)], *rest])
    got = model.run([[np.ones(2, np.float32)], *rest])
    assert [len(v) for v in got] == [0, 1, 2, 2, 0, 1]  # type: ignore[arg-type]


def test_header_declares_sequences_only_when_used() -> None:
    seq_program = generate_c(InferenceSession(insert_erase_model(), level="kernel").module)
    assert "typedef struct rung_sequence" in seq_program.header
    assert "sequence of float tensors (dtype RUNG_DTYPE_SEQUENCE)" in seq_program.header
    assert "one call of the _free function" in seq_program.header
    plain = make_model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [helper.make_tensor_value_info("x", F, [2])],
        [helper.make_tensor_value_info("y", F, [2])],
    )
    plain_program = generate_c(InferenceSession(plain, level="kernel").module)
    assert "rung_sequence" not in plain_program.header


def test_outputs_do_not_leak_across_runs() -> None:
    """Each run's lists live on the run's heap: many runs keep the process's memory flat."""
    import resource

    session = InferenceSession(loop_model(), level="kernel")
    feed = {"n": np.array(200, np.int64), "x": np.ones(2, np.float32)}
    session.run(None, feed)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(200):
        session.run(None, feed)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert after - before < 20_000  # kilobytes


def test_appends_to_one_list_in_two_ways_keep_both_values() -> None:
    """`b` and `c` are appended to the same list `one`: the first append may share its block
    of items, the second must not overwrite what the first list sees."""
    model = make_model(
        [
            helper.make_node("SequenceConstruct", ["x"], ["s"]),
            helper.make_node("SequenceInsert", ["s", "a"], ["one"]),
            helper.make_node("SequenceInsert", ["one", "b"], ["two_b"]),
            helper.make_node("SequenceInsert", ["one", "c"], ["two_c"]),
            helper.make_node("SequenceInsert", ["two_b", "c"], ["three"]),
        ],
        [helper.make_tensor_value_info(n, F, [2]) for n in "xabc"],
        [seq_info(n, F, [2]) for n in ("one", "two_b", "two_c", "three")],
    )
    feed = {n: np.full(2, k, np.float32) for k, n in enumerate("xabc")}
    one, two_b, two_c, three = check_against_ort(model, feed)
    assert [float(v[0]) for v in three] == [0, 1, 2, 3]  # type: ignore[attr-defined]
    assert [float(v[0]) for v in two_c] == [0, 1, 3]  # type: ignore[attr-defined]


def test_a_long_loop_appends_in_linear_time() -> None:
    """A Loop appending one item per trip shares one growing block of items (rung_list):
    100x the trips take far less than 10_000x the time (quadratic copying would)."""
    import time

    session = InferenceSession(loop_model(), level="kernel")
    x = np.ones(2, np.float32)
    session.run(None, {"n": np.array(10, np.int64), "x": x})

    def timed(n: int) -> float:
        start = time.perf_counter()
        seq, stacked = session.run(None, {"n": np.array(n, np.int64), "x": x})
        assert len(seq) == n and stacked.shape == (n, 2)  # type: ignore[arg-type,union-attr]
        return time.perf_counter() - start

    small, large = min(timed(200) for _ in range(3)), min(timed(20_000) for _ in range(3))
    assert large < 1000 * small


def test_a_buffer_put_in_a_list_may_be_reused_by_the_memory_plan() -> None:
    """A list holds a copy of each buffer put into it, so the arena bytes of that buffer
    serve later buffers (the memory plan sees its last use at kernel.list_new) and the
    list still reads the value it was given."""
    model = make_model(
        [
            helper.make_node("Relu", ["x"], ["a"]),
            helper.make_node("SequenceConstruct", ["a"], ["s"]),
            helper.make_node("Neg", ["x"], ["b"]),
            helper.make_node("Exp", ["b"], ["c"]),
            helper.make_node("ReduceSum", ["c"], ["total"], keepdims=1),
            helper.make_node("Div", ["c", "total"], ["d"]),
            const("zero", 0),
            helper.make_node("SequenceAt", ["s", "zero"], ["first"]),
            helper.make_node("Add", ["first", "d"], ["y"]),
        ],
        [helper.make_tensor_value_info("x", F, [64])],
        [helper.make_tensor_value_info("y", F, [64])],
    )
    x = np.linspace(-2, 2, 64, dtype=np.float32)
    check_against_ort(model, {"x": x})
    module = InferenceSession(model, level="kernel").module
    allocs = [op for op in module.walk() if isinstance(op, kernel.AllocOp)]
    offsets = [op.offset.value.data for op in allocs if op.offset is not None]
    assert len(offsets) > len(set(offsets)), f"no arena reuse to test: {offsets}"
