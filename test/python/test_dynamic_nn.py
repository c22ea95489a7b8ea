"""Gemm, MatMul, Attention, Conv, the recurrences and Scan with every input dim `?`.

Each model declares only symbolic dims (as the dynamic conformance variant
does), is compiled once and run at several sizes against onnxruntime (or
ONNX's reference implementation where onnxruntime lacks the op).

Regressions covered:
- Gemm added a `?x?` bias without broadcasting it at run time (the kernel
  read past a row vector);
- a kernel-level view to the type of its own buffer kept the buffer's
  run-time sizes (a `?x?` Reshape returned its input's shape; a grouped Conv
  with `?` batch and channels wrote [N·G, O/G, E] over [N, O, E]);
- a 1-D MatMul operand was reshaped without a shape operand (an assertion at
  kernel level);
- a 3-D Attention took ONNX's inferred last dim of 0 over the one its body
  computes;
- Conv, the recurrences and Scan refused run-time kernel sizes, lengths and
  batches.
Sizes that contradict each other at run time must fail with an error naming
the node, not read past a buffer.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from rung.errors import RungError
from rung.runtime import InferenceSession

F = TensorProto.FLOAT
RNG = np.random.default_rng(7)


def _dims(name: str, rank: int) -> list[str]:
    return [f"{name}_d{i}" for i in range(rank)]


def _model(
    nodes: Sequence[onnx.NodeProto],
    inputs: Sequence[tuple[str, int, int]],
    outputs: Sequence[tuple[str, int, int]],
    opset: int = 21,
) -> onnx.ModelProto:
    """A model whose inputs and outputs have only symbolic dims: (name, element, rank)."""
    graph = helper.make_graph(
        list(nodes),
        "g",
        [helper.make_tensor_value_info(n, t, _dims(n, r)) for n, t, r in inputs],
        [helper.make_tensor_value_info(n, t, _dims(n, r)) for n, t, r in outputs],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _ort(model: onnx.ModelProto, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feed)  # type: ignore[return-value]


def _floats(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _assert_close(got: Sequence[np.ndarray], want: Sequence[np.ndarray]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape, f"shape {g.shape}, expected {w.shape}"
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


# ---- Gemm ------------------------------------------------------------------------------------


def _gemm_model(**attrs: object) -> onnx.ModelProto:
    node = helper.make_node("Gemm", ["a", "b", "c"], ["y"], name="gemm", **attrs)
    return _model([node], [("a", F, 2), ("b", F, 2), ("c", F, 2)], [("y", F, 2)])


@pytest.mark.parametrize("level", ["core", "kernel"])
def test_gemm_broadcasts_a_bias_of_run_time_shape(level: str) -> None:
    """A `?x?` C that is a row, a column, a scalar or a full matrix at run time."""
    model = _gemm_model(alpha=0.5, beta=2.0, transB=1)
    session = InferenceSession(model, level=level)
    for m, k, n, c_shape in [
        (3, 4, 5, (1, 5)),
        (2, 3, 6, (2, 1)),
        (4, 2, 3, (1, 1)),
        (2, 2, 2, (2, 2)),
    ]:
        feed = {"a": _floats(m, k), "b": _floats(n, k), "c": _floats(*c_shape)}
        _assert_close(session.run(None, feed), _ort(model, feed))


@pytest.mark.parametrize("level", ["core", "kernel"])
def test_gemm_bias_that_does_not_broadcast_fails_the_run(level: str) -> None:
    session = InferenceSession(_gemm_model(), level=level)
    feed = {"a": _floats(3, 4), "b": _floats(4, 5), "c": _floats(1, 3)}
    with pytest.raises(RungError, match="node 'gemm'.*C cannot be broadcast"):
        session.run(None, feed)


# ---- views of one buffer type with other run-time sizes ---------------------------------------


def test_reshape_between_types_of_only_run_time_dims() -> None:
    """`?x?` to `?x?` is a view with the new sizes (it was taken for a no-op: a [2, 6] result)."""
    node = helper.make_node("Reshape", ["x", "s"], ["y"])
    model = _model([node], [("x", F, 2), ("s", TensorProto.INT64, 1)], [("y", F, 2)])
    session = InferenceSession(model, level="kernel")
    x = _floats(2, 6)
    for shape in ([3, 4], [12, 1], [2, 6]):
        (got,) = session.run(None, {"x": x, "s": np.array(shape, np.int64)})
        np.testing.assert_array_equal(got, x.reshape(shape))


# ---- MatMul and MatMulInteger ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("a_shape", "b_shape"), [((4,), (4,)), ((3,), (2, 3, 5)), ((2, 1, 3, 4), (4,))]
)
def test_matmul_with_a_vector_of_run_time_length(
    a_shape: tuple[int, ...], b_shape: tuple[int, ...]
) -> None:
    node = helper.make_node("MatMul", ["a", "b"], ["y"])
    rank = max(len(a_shape), len(b_shape)) - 1 if min(len(a_shape), len(b_shape)) == 1 else 2
    out_rank = 0 if len(a_shape) == len(b_shape) == 1 else rank
    model = _model([node], [("a", F, len(a_shape)), ("b", F, len(b_shape))], [("y", F, out_rank)])
    session = InferenceSession(model, level="kernel")
    feed = {"a": _floats(*a_shape), "b": _floats(*b_shape)}
    _assert_close(session.run(None, feed), [np.matmul(feed["a"], feed["b"])])


def test_matmul_integer_with_a_per_row_zero_point_of_run_time_length() -> None:
    u8 = TensorProto.UINT8
    node = helper.make_node("MatMulInteger", ["a", "b", "za", "zb"], ["y"])
    model = _model(
        [node],
        [("a", u8, 2), ("b", u8, 2), ("za", u8, 1), ("zb", u8, 1)],
        [("y", TensorProto.INT32, 2)],
    )
    session = InferenceSession(model, level="kernel")
    for za_len in (3, 1):
        a = RNG.integers(0, 255, (3, 4), dtype=np.uint8)
        b = RNG.integers(0, 255, (4, 2), dtype=np.uint8)
        za = RNG.integers(0, 255, (za_len,), dtype=np.uint8)
        zb = RNG.integers(0, 255, (1,), dtype=np.uint8)
        want = (a.astype(np.int32) - za.astype(np.int32).reshape(-1, 1)) @ (
            b.astype(np.int32) - zb.astype(np.int32)
        )
        (got,) = session.run(None, {"a": a, "b": b, "za": za, "zb": zb})
        np.testing.assert_array_equal(got, want)


# ---- Attention (through its ONNX function body) ----------------------------------------------


def test_attention_3d_takes_the_computed_head_size() -> None:
    """ONNX infers a last dim of 0 for a 3-D Attention of `?` dims; the body's own shape wins."""
    node = helper.make_node("Attention", ["q", "k", "v"], ["y"], q_num_heads=2, kv_num_heads=2)
    model = _model([node], [("q", F, 3), ("k", F, 3), ("v", F, 3)], [("y", F, 3)], opset=23)
    session = InferenceSession(model, level="kernel")
    reference = ReferenceEvaluator(model)
    for batch, q_len, kv_len, hidden, v_hidden in [(2, 3, 4, 8, 6), (1, 2, 5, 4, 10)]:
        feed = {
            "q": _floats(batch, q_len, hidden),
            "k": _floats(batch, kv_len, hidden),
            "v": _floats(batch, kv_len, v_hidden),
        }
        _assert_close(session.run(None, feed), reference.run(None, feed))  # type: ignore[arg-type]


# ---- Conv ------------------------------------------------------------------------------------


def _conv_model(**attrs: object) -> onnx.ModelProto:
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], name="conv", **attrs)
    return _model([node], [("x", F, 4), ("w", F, 4), ("b", F, 1)], [("y", F, 4)])


@pytest.mark.parametrize("level", ["core", "kernel"])
def test_conv_with_weights_of_run_time_shape(level: str) -> None:
    """The kernel size is read from the weights at run time; grouped, with a `?` batch."""
    model = _conv_model(group=2, pads=[1, 0, 1, 2], strides=[1, 2])
    session = InferenceSession(model, level=level)
    for n, c, o, kh, kw, h, w in [(2, 4, 6, 3, 2, 7, 9), (3, 2, 2, 1, 4, 5, 5)]:
        feed = {"x": _floats(n, c, h, w), "w": _floats(o, c // 2, kh, kw), "b": _floats(o)}
        _assert_close(session.run(None, feed), _ort(model, feed))


@pytest.mark.parametrize("level", ["core", "kernel"])
def test_conv_run_time_checks_name_the_node(level: str) -> None:
    session = InferenceSession(_conv_model(kernel_shape=[3, 3]), level=level)
    feed = {"x": _floats(1, 2, 6, 6), "w": _floats(4, 2, 2, 2), "b": _floats(4)}
    with pytest.raises(RungError, match="node 'conv'.*differ from kernel_shape"):
        session.run(None, feed)
    feed = {"x": _floats(1, 2, 6, 6), "w": _floats(4, 2, 3, 3), "b": _floats(3)}
    with pytest.raises(RungError, match="node 'conv'.*B cannot be broadcast"):
        session.run(None, feed)


# ---- RNN, GRU, LSTM --------------------------------------------------------------------------


def _recurrent_model(
    op: str, gates: int, hidden: int, with_states: bool, **attrs: object
) -> tuple[onnx.ModelProto, list[str]]:
    names = ["x", "w", "r", "b", "", "h0"] + (["c0"] if op == "LSTM" else [])
    inputs = [("x", F, 3), ("w", F, 3), ("r", F, 3), ("b", F, 2)]
    if not with_states:
        names = names[:4]
    else:
        inputs += [("h0", F, 3)] + ([("c0", F, 3)] if op == "LSTM" else [])
    outputs = ["y", "y_h"] + (["y_c"] if op == "LSTM" else [])
    node = helper.make_node(op, names, outputs, name="rec", hidden_size=hidden, **attrs)
    model = _model([node], inputs, [(o, F, 4 if o == "y" else 3) for o in outputs], opset=22)
    return model, [n for n, _, _ in inputs]


RECURRENT = [
    ("RNN", 1, {}),
    ("GRU", 3, {"direction": "bidirectional"}),
    ("GRU", 3, {"linear_before_reset": 1, "direction": "reverse"}),
    ("LSTM", 4, {"direction": "bidirectional"}),
    ("LSTM", 4, {"layout": 1}),
]


@pytest.mark.parametrize(("op", "gates", "attrs"), RECURRENT)
@pytest.mark.parametrize("with_states", [False, True])
def test_recurrence_over_run_time_length_and_batch(
    op: str, gates: int, attrs: dict[str, object], with_states: bool
) -> None:
    hidden = 3
    model, names = _recurrent_model(op, gates, hidden, with_states, **attrs)
    dirs = 2 if attrs.get("direction") == "bidirectional" else 1
    batch_first = attrs.get("layout") == 1
    session = InferenceSession(model, level="kernel")
    for seq, batch, size in [(4, 2, 5), (1, 3, 2), (6, 1, 5)]:
        x_shape = (batch, seq, size) if batch_first else (seq, batch, size)
        state_shape = (batch, dirs, hidden) if batch_first else (dirs, batch, hidden)
        shapes = {
            "x": x_shape,
            "w": (dirs, gates * hidden, size),
            "r": (dirs, gates * hidden, hidden),
            "b": (dirs, 2 * gates * hidden),
            "h0": state_shape,
            "c0": state_shape,
        }
        feed = {n: _floats(*shapes[n]) for n in names}
        # onnxruntime has no batch-first recurrences: ONNX's reference has.
        want = ReferenceEvaluator(model).run(None, feed) if batch_first else _ort(model, feed)
        _assert_close(session.run(None, feed), want)  # type: ignore[arg-type]


@pytest.mark.parametrize("level", ["core", "kernel"])
def test_recurrence_inputs_that_disagree_fail_the_run(level: str) -> None:
    model, _ = _recurrent_model("GRU", 3, 3, with_states=True)
    session = InferenceSession(model, level=level)
    feed = {
        "x": _floats(2, 2, 4),
        "w": _floats(1, 9, 4),
        "r": _floats(1, 9, 3),
        "b": _floats(1, 18),
        "h0": _floats(1, 5, 3),  # a batch of 5 for X's 2
    }
    with pytest.raises(RungError, match="node 'rec'.*initial_h does not have the shape"):
        session.run(None, feed)


@pytest.mark.parametrize("level", ["core", "kernel"])
def test_lstm_sequence_lens_is_checked_at_run_time(level: str) -> None:
    """Only full lengths are supported: accepted when they are, a run error when not."""
    node = helper.make_node(
        "LSTM", ["x", "w", "r", "", "lens"], ["", "y_h"], name="rec", hidden_size=2
    )
    model = _model(
        [node],
        [("x", F, 3), ("w", F, 3), ("r", F, 3), ("lens", TensorProto.INT32, 1)],
        [("y_h", F, 3)],
        opset=22,
    )
    session = InferenceSession(model, level=level)
    feed = {"x": _floats(3, 2, 4), "w": _floats(1, 8, 4), "r": _floats(1, 8, 2)}
    full = {**feed, "lens": np.array([3, 3], np.int32)}
    _assert_close(session.run(None, full), _ort(model, full))
    with pytest.raises(RungError, match="node 'rec'.*sequence_lens other than the full length"):
        session.run(None, {**feed, "lens": np.array([3, 1], np.int32)})


# ---- Scan ------------------------------------------------------------------------------------


def _scan_model() -> onnx.ModelProto:
    """A running sum over axis 1 of x, scanned in reverse, stacked along axis 1."""
    body = helper.make_graph(
        [
            helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
            helper.make_node("Identity", ["s_out"], ["y_t"]),
        ],
        "body",
        [helper.make_tensor_value_info(n, F, [2]) for n in ("s_in", "x_t")],
        [helper.make_tensor_value_info(n, F, [2]) for n in ("s_out", "y_t")],
    )
    node = helper.make_node(
        "Scan",
        ["s0", "x"],
        ["s", "y"],
        name="scan",
        body=body,
        num_scan_inputs=1,
        scan_input_axes=[1],
        scan_input_directions=[1],
        scan_output_axes=[1],
    )
    return _model([node], [("s0", F, 1), ("x", F, 2)], [("s", F, 1), ("y", F, 2)], opset=21)


@pytest.mark.parametrize("level", ["core", "kernel"])
def test_scan_over_a_run_time_length(level: str) -> None:
    model = _scan_model()
    session = InferenceSession(model, level=level)
    for length in (5, 1, 3):
        feed = {"s0": _floats(2), "x": _floats(2, length)}
        _assert_close(session.run(None, feed), _ort(model, feed))
    with pytest.raises(RungError, match="node 'scan'.*is not of the body's"):
        session.run(None, {"s0": _floats(3), "x": _floats(3, 4)})


def _scan_rows_model() -> onnx.ModelProto:
    """Per step, the state times the outer product of a row of k and a row of v (each
    reshaped in the body from its run-time shape), and the state's first column: as
    ONNX's LinearAttention writes it, with every dim symbolic."""
    i64 = TensorProto.INT64
    body = helper.make_graph(
        [
            helper.make_node("Shape", ["k_t"], ["k_shape"]),
            helper.make_node("Concat", ["k_shape", "one"], ["k_col_shape"], axis=0),
            helper.make_node("Reshape", ["k_t", "k_col_shape"], ["k_col"]),
            helper.make_node("Shape", ["v_t"], ["v_shape"]),
            helper.make_node("Concat", ["one", "v_shape"], ["v_row_shape"], axis=0),
            helper.make_node("Reshape", ["v_t", "v_row_shape"], ["v_row"]),
            helper.make_node("MatMul", ["k_col", "v_row"], ["outer"]),
            helper.make_node("Add", ["s_in", "outer"], ["s_out"]),
            helper.make_node("MatMul", ["s_out", "first"], ["y_t"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("s_in", F, ["a", "b"]),
            helper.make_tensor_value_info("k_t", F, ["a"]),
            helper.make_tensor_value_info("v_t", F, ["b"]),
        ],
        [
            helper.make_tensor_value_info("s_out", F, ["a", "b"]),
            helper.make_tensor_value_info("y_t", F, ["a", 1]),
        ],
    )
    node = helper.make_node(
        "Scan", ["s0", "k", "v"], ["s", "y"], name="scan", body=body, num_scan_inputs=2
    )
    graph = helper.make_graph(
        [
            helper.make_node("Constant", [], ["one"], value=helper.make_tensor("c", i64, [1], [1])),
            helper.make_node("Shape", ["s0"], ["s0_shape"], start=1, end=2),
            helper.make_node("ConstantOfShape", ["s0_shape"], ["zeros"]),
            helper.make_node(
                "Constant", [], ["first_col"], value=helper.make_tensor("f", F, [1], [1.0])
            ),
            helper.make_node("Concat", ["first_col", "zeros"], ["padded"], axis=0),
            helper.make_node("Slice", ["padded", "start", "end"], ["first_flat"]),
            helper.make_node("Unsqueeze", ["first_flat", "axis1"], ["first"]),
            node,
        ],
        "g",
        [
            helper.make_tensor_value_info("s0", F, ["a", "b"]),
            helper.make_tensor_value_info("k", F, ["t", "a"]),
            helper.make_tensor_value_info("v", F, ["t", "b"]),
        ],
        [
            helper.make_tensor_value_info("s", F, ["a", "b"]),
            helper.make_tensor_value_info("y", F, ["t", "a", 1]),
        ],
        initializer=[
            onnx.numpy_helper.from_array(np.array([0], np.int64), "start"),
            onnx.numpy_helper.from_array(np.array([-1], np.int64), "end"),
            onnx.numpy_helper.from_array(np.array([1], np.int64), "axis1"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


@pytest.mark.parametrize("level", ["core", "kernel"])
def test_scan_output_rows_sized_from_the_body_shape_arithmetic(level: str) -> None:
    """The rows' run-time sizes come from shape arithmetic in the body, which the kernel
    level must evaluate before the loop to size the stacked output (it used to refuse:
    "read from a buffer inside the loop")."""
    model = _scan_rows_model()
    session = InferenceSession(model, level=level)
    for steps, a, b in ((3, 2, 4), (1, 5, 1), (6, 3, 3)):
        feed = {"s0": _floats(a, b), "k": _floats(steps, a), "v": _floats(steps, b)}
        _assert_close(session.run(None, feed), _ort(model, feed))


@pytest.mark.parametrize("level", ["core", "kernel"])
def test_scan_state_that_changes_shape_fails_the_run(level: str) -> None:
    """Scan requires its states to keep their shape: a body that grows one fails the run
    with an error naming the node, at every level."""
    body = helper.make_graph(
        [helper.make_node("Concat", ["s_in", "x_t"], ["s_out"], axis=0)],
        "body",
        [
            helper.make_tensor_value_info("s_in", F, ["n"]),
            helper.make_tensor_value_info("x_t", F, ["k"]),
        ],
        [helper.make_tensor_value_info("s_out", F, ["m"])],
    )
    node = helper.make_node("Scan", ["s0", "x"], ["s"], name="grow", body=body, num_scan_inputs=1)
    model = _model([node], [("s0", F, 1), ("x", F, 2)], [("s", F, 1)], opset=21)
    session = InferenceSession(model, level=level)
    with pytest.raises(RungError, match="node 'grow'.*state 0 changed shape between iterations"):
        session.run(None, {"s0": _floats(2), "x": _floats(3, 1)})
