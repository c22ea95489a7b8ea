"""Shape ops with `?` dims and run-time shape operands: Reshape, Slice, Split, Squeeze,
Unsqueeze, Expand, ConstantOfShape and Pad.

Each was refused once a shape operand's length was symbolic ("Reshape to a shape of
unknown rank", "Slice with a dynamic number of axes", ...) or its values arrived at
run time. The result rank comes from the operand's static length or from the declared
result type; the values are read at run time. Each model is compiled once and run at
several sizes against onnxruntime (ONNX's reference where onnxruntime lacks the
opset); a run-time value that contradicts the compiled rank must be a rung error
naming the node, not a read past a buffer.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from rung.errors import RungError
from rung.importers.onnx import import_model
from rung.runtime import InferenceSession

F, I64 = TensorProto.FLOAT, TensorProto.INT64
RNG = np.random.default_rng(11)
LEVELS = ["core", "kernel"]

Dims = Sequence[object] | None


def _model(
    node: onnx.NodeProto,
    inputs: Sequence[tuple[str, int, Dims]],
    outputs: Sequence[tuple[str, int, Dims]],
    opset: int = 21,
) -> onnx.ModelProto:
    graph = helper.make_graph(
        [node],
        node.name,
        [helper.make_tensor_value_info(n, t, d) for n, t, d in inputs],
        [helper.make_tensor_value_info(n, t, d) for n, t, d in outputs],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _matches_reference(
    model: onnx.ModelProto, level: str, feeds: Sequence[dict[str, np.ndarray]]
) -> InferenceSession:
    """One compiled session serves every feed and agrees with the reference on each."""
    session = InferenceSession(model, level=level)
    if model.opset_import[0].version > 21:
        reference: ReferenceEvaluator | ort.InferenceSession = ReferenceEvaluator(model)
    else:
        reference = ort.InferenceSession(
            model.SerializeToString(), providers=["CPUExecutionProvider"]
        )
    for feed in feeds:
        got = session.run(None, feed)
        want = reference.run(None, feed)
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert g.shape == w.shape, feed
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)
    return session


def _floats(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _ints(*values: int) -> np.ndarray:
    return np.array(values, np.int64)


# ---- Reshape -----------------------------------------------------------------------------------


@pytest.mark.parametrize("level", LEVELS)
def test_reshape_to_a_shape_of_run_time_length_takes_the_declared_rank(level: str) -> None:
    node = helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")
    model = _model(node, [("x", F, ["a", "b", "c"]), ("s", I64, ["k"])], [("y", F, [1, 2, 3])])
    model.graph.output[0].type.tensor_type.shape.Clear()
    for d in ("p", "q", "r"):
        model.graph.output[0].type.tensor_type.shape.dim.add().dim_param = d
    feeds = [
        {"x": _floats(2, 3, 4), "s": _ints(4, 0, -1)},
        {"x": _floats(1, 6, 2), "s": _ints(-1, 3, 2)},
        {"x": _floats(0, 3, 4), "s": _ints(-1, 0, 4)},
    ]
    session = _matches_reference(model, level, feeds)
    with pytest.raises(RungError, match="node 'rs': Reshape's shape must hold 3 values"):
        session.run(None, {"x": _floats(2, 3, 4), "s": _ints(6, 4)})


@pytest.mark.parametrize("level", LEVELS)
def test_reshape_of_an_empty_tensor_with_allowzero_does_not_divide_by_zero(level: str) -> None:
    """-1 beside a 0 has nothing to take: the size computation must not trap."""
    node = helper.make_node("Reshape", ["x", "s"], ["y"], name="rs", allowzero=1)
    model = _model(node, [("x", F, ["a", "b", "c"]), ("s", I64, [3])], [("y", F, ["p", "q", "r"])])
    _matches_reference(model, level, [{"x": _floats(0, 3, 4), "s": _ints(3, 4, 0)}])


def test_reshape_refuses_a_shape_of_unknown_length_and_a_result_of_unknown_rank() -> None:
    nodes = [
        helper.make_node("Reshape", ["x", "s"], ["y"], name="rs"),
        helper.make_node("Shape", ["y"], ["dims"], name="shape"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("x", F, ["a", "b"]),
            helper.make_tensor_value_info("s", I64, ["k"]),
        ],
        [helper.make_tensor_value_info("dims", I64, ["r"])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    with pytest.raises(RungError, match="node 'rs': Reshape to a shape of unknown length"):
        InferenceSession(model, level="core")


# ---- Slice -------------------------------------------------------------------------------------


def _slice_model(with_axes: bool, with_steps: bool) -> onnx.ModelProto:
    names = ["x", "starts", "ends"] + (["axes"] if with_axes else [""] * with_steps)
    names += ["steps"] if with_steps else []
    node = helper.make_node("Slice", names, ["y"], name="sl")
    inputs = [("x", F, ["a", "b", "c"])]
    inputs += [(n, I64, [f"{n}_len"]) for n in names[1:] if n]
    return _model(node, inputs, [("y", F, ["p", "q", "r"])])


@pytest.mark.parametrize("level", LEVELS)
def test_slice_with_run_time_starts_ends_axes_and_steps_of_run_time_length(level: str) -> None:
    model = _slice_model(with_axes=True, with_steps=True)
    x = _floats(4, 5, 6)
    feeds = [
        {"x": x, "starts": _ints(1), "ends": _ints(3), "axes": _ints(1), "steps": _ints(1)},
        {
            "x": x,
            "starts": _ints(-1, 0),
            "ends": _ints(-10, 100),
            "axes": _ints(-1, 0),
            "steps": _ints(-2, 3),
        },
        {
            "x": x,
            "starts": _ints(0, 1, 2),
            "ends": _ints(4, 5, 6),
            "axes": _ints(2, 1, 0),
            "steps": _ints(1, 2, 1),
        },
    ]
    session = _matches_reference(model, level, feeds)
    with pytest.raises(RungError, match="node 'sl': Slice's starts, ends, axes and steps must"):
        session.run(None, {**feeds[0], "ends": _ints(3, 4)})
    with pytest.raises(RungError, match="node 'sl': Slice's steps must not be 0"):
        session.run(None, {**feeds[0], "steps": _ints(0)})


@pytest.mark.parametrize("level", LEVELS)
def test_slice_without_axes_slices_the_leading_dims(level: str) -> None:
    model = _slice_model(with_axes=False, with_steps=False)
    x = _floats(3, 4, 5)
    feeds = [
        {"x": x, "starts": _ints(1), "ends": _ints(3)},
        {"x": x, "starts": _ints(0, -3), "ends": _ints(2, -1)},
    ]
    _matches_reference(model, level, feeds)


# ---- Split -------------------------------------------------------------------------------------


@pytest.mark.parametrize("level", LEVELS)
def test_split_of_a_dynamic_dim_into_equal_parts(level: str) -> None:
    """opset 18's num_outputs: parts of ceil(n / 3), the last ones shorter."""
    node = helper.make_node("Split", ["x"], ["a", "b", "c"], name="sp", axis=1, num_outputs=3)
    outs = [(n, F, ["r", f"{n}_n"]) for n in "abc"]
    model = _model(node, [("x", F, ["r", "n"])], outs, opset=18)
    _matches_reference(model, level, [{"x": _floats(2, n)} for n in (3, 7, 8, 9)])


@pytest.mark.parametrize("level", LEVELS)
def test_split_by_run_time_sizes(level: str) -> None:
    node = helper.make_node("Split", ["x", "s"], ["a", "b"], name="sp", axis=0)
    outs = [(n, F, [f"{n}_n", "c"]) for n in "ab"]
    model = _model(node, [("x", F, ["n", "c"]), ("s", I64, ["k"])], outs)
    feeds = [
        {"x": _floats(5, 2), "s": _ints(2, 3)},
        {"x": _floats(4, 3), "s": _ints(0, 4)},
    ]
    session = _matches_reference(model, level, feeds)
    with pytest.raises(RungError, match="node 'sp': Split's sizes must add up to the dim"):
        session.run(None, {"x": _floats(5, 2), "s": _ints(2, 2)})
    with pytest.raises(RungError, match="node 'sp': Split's split must hold 2 values"):
        session.run(None, {"x": _floats(5, 2), "s": _ints(1, 2, 2)})


# ---- Squeeze and Unsqueeze ---------------------------------------------------------------------


@pytest.mark.parametrize("level", LEVELS)
def test_unsqueeze_by_run_time_axes(level: str) -> None:
    node = helper.make_node("Unsqueeze", ["x", "axes"], ["y"], name="us")
    model = _model(
        node, [("x", F, ["a", "b"]), ("axes", I64, ["k"])], [("y", F, ["p", "q", "r", "s"])]
    )
    feeds = [
        {"x": _floats(2, 3), "axes": _ints(0, 3)},
        {"x": _floats(4, 1), "axes": _ints(-1, 1)},
        {"x": _floats(3, 5), "axes": _ints(2, 1)},
    ]
    session = _matches_reference(model, level, feeds)
    with pytest.raises(RungError, match="node 'us': Unsqueeze needs 2 axes"):
        session.run(None, {"x": _floats(2, 3), "axes": _ints(0)})
    with pytest.raises(RungError, match="node 'us': Unsqueeze's axes must not repeat"):
        session.run(None, {"x": _floats(2, 3), "axes": _ints(1, -3)})
    with pytest.raises(RungError, match="node 'us': Unsqueeze: an axis is out of range"):
        session.run(None, {"x": _floats(2, 3), "axes": _ints(0, 4)})


@pytest.mark.parametrize("level", LEVELS)
def test_squeeze_by_run_time_axes(level: str) -> None:
    node = helper.make_node("Squeeze", ["x", "axes"], ["y"], name="sq")
    model = _model(node, [("x", F, ["a", "b", "c"]), ("axes", I64, ["k"])], [("y", F, ["p"])])
    feeds = [
        {"x": _floats(1, 4, 1), "axes": _ints(0, 2)},
        {"x": _floats(3, 1, 1), "axes": _ints(-1, 1)},
    ]
    session = _matches_reference(model, level, feeds)
    with pytest.raises(RungError, match="node 'sq': Squeeze: a squeezed dim is not 1"):
        session.run(None, {"x": _floats(2, 4, 1), "axes": _ints(0, 2)})
    with pytest.raises(RungError, match="node 'sq': Squeeze needs 2 axes"):
        session.run(None, {"x": _floats(1, 4, 1), "axes": _ints(0)})


@pytest.mark.parametrize("level", LEVELS)
def test_squeeze_without_axes_of_a_dynamic_input_of_declared_rank(level: str) -> None:
    node = helper.make_node("Squeeze", ["x"], ["y"], name="sq")
    model = _model(node, [("x", F, ["a", "b", "c"])], [("y", F, ["p", "q"])])
    session = _matches_reference(model, level, [{"x": _floats(1, 4, 5)}, {"x": _floats(3, 1, 2)}])
    with pytest.raises(RungError, match="node 'sq': Squeeze: the result has rank 2"):
        session.run(None, {"x": _floats(1, 1, 5)})


@pytest.mark.parametrize("level", LEVELS)
def test_squeeze_without_axes_and_a_result_of_unknown_rank_keeps_dynamic_dims(level: str) -> None:
    """Only the static 1s go; a `?` dim that turns out 1 would change the rank: the run
    fails instead. (The squeezed value is internal, so nothing declares its rank.)"""
    nodes = [
        helper.make_node("Squeeze", ["x"], ["y"], name="sq"),
        helper.make_node("Shape", ["y"], ["dims"], name="shape"),
        helper.make_node("Flatten", ["y"], ["flat"], name="flat", axis=0),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", F, ["a", 1, 3])],
        [
            helper.make_tensor_value_info("dims", I64, ["r"]),
            helper.make_tensor_value_info("flat", F, ["o", "p"]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    session = _matches_reference(model, level, [{"x": _floats(2, 1, 3)}, {"x": _floats(5, 1, 3)}])
    with pytest.raises(RungError, match="node 'sq': Squeeze without axes: a dynamic dim is 1"):
        session.run(None, {"x": _floats(1, 1, 3)})


# ---- Expand, ConstantOfShape and Pad ----------------------------------------------------------


@pytest.mark.parametrize("level", LEVELS)
def test_expand_to_a_shape_of_run_time_length(level: str) -> None:
    node = helper.make_node("Expand", ["x", "s"], ["y"], name="ex")
    model = _model(node, [("x", F, ["a", "b"]), ("s", I64, ["k"])], [("y", F, ["p", "q", "r"])])
    feeds = [
        {"x": _floats(3, 1), "s": _ints(2, 1, 4)},
        {"x": _floats(1, 4), "s": _ints(2, 3, 1)},
        {"x": _floats(3, 4), "s": _ints(5, 1, 1)},
    ]
    session = _matches_reference(model, level, feeds)
    with pytest.raises(RungError, match="node 'ex': Expand: the result must have rank 3"):
        session.run(None, {"x": _floats(3, 1), "s": _ints(3, 4)})


@pytest.mark.parametrize("level", LEVELS)
def test_expand_keeping_the_input_rank_pads_a_short_shape(level: str) -> None:
    node = helper.make_node("Expand", ["x", "s"], ["y"], name="ex")
    model = _model(node, [("x", F, ["a", "b"]), ("s", I64, ["k"])], [("y", F, ["p", "q"])])
    feeds = [{"x": _floats(3, 1), "s": _ints(4)}, {"x": _floats(3, 1), "s": _ints(3, 4)}]
    _matches_reference(model, level, feeds)


@pytest.mark.parametrize("level", LEVELS)
def test_constant_of_shape_of_run_time_length(level: str) -> None:
    value = numpy_helper.from_array(np.array([2.5], np.float32), "value")
    node = helper.make_node("ConstantOfShape", ["s"], ["y"], name="cs", value=value)
    model = _model(node, [("s", I64, ["k"])], [("y", F, ["p", "q"])])
    session = _matches_reference(model, level, [{"s": _ints(2, 3)}, {"s": _ints(0, 4)}])
    with pytest.raises(RungError, match="node 'cs': ConstantOfShape's shape must hold 2 values"):
        session.run(None, {"s": _ints(2, 3, 4)})


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("mode", ["constant", "edge"])
def test_pad_by_run_time_pads_for_run_time_axes(level: str, mode: str) -> None:
    node = helper.make_node("Pad", ["x", "pads", "", "axes"], ["y"], name="pd", mode=mode)
    inputs = [("x", F, ["a", "b", "c"]), ("pads", I64, ["n"]), ("axes", I64, ["k"])]
    model = _model(node, inputs, [("y", F, ["p", "q", "r"])])
    feeds = [
        {"x": _floats(2, 3, 4), "pads": _ints(1, 2), "axes": _ints(1)},
        {"x": _floats(2, 3, 4), "pads": _ints(0, 1, 2, -1), "axes": _ints(-1, 0)},
    ]
    session = _matches_reference(model, level, feeds)
    with pytest.raises(RungError, match="node 'pd': Pad's pads need 2 values per axis"):
        session.run(None, {"x": _floats(2, 3, 4), "pads": _ints(1, 2, 3), "axes": _ints(1)})


@pytest.mark.parametrize("level", LEVELS)
def test_pad_by_pads_of_run_time_length_for_every_axis(level: str) -> None:
    node = helper.make_node("Pad", ["x", "pads", "v"], ["y"], name="pd")
    inputs = [("x", F, ["a", "b"]), ("pads", I64, ["n"]), ("v", F, [])]
    model = _model(node, inputs, [("y", F, ["p", "q"])])
    feeds = [{"x": _floats(2, 3), "pads": _ints(1, 0, 2, 1), "v": np.array(7.0, np.float32)}]
    session = _matches_reference(model, level, feeds)
    with pytest.raises(RungError, match="node 'pd': Pad's pads must hold 4 values"):
        session.run(None, {**feeds[0], "pads": _ints(1, 2)})


# ---- subgraphs reading outer constants ---------------------------------------------------------


def _scan_unsqueezing_by_an_outer_constant() -> onnx.ModelProto:
    """A Scan whose body unsqueezes by an axes constant of the main graph."""
    body = helper.make_graph(
        [
            helper.make_node("Unsqueeze", ["x_t", "axes"], ["col"]),
            helper.make_node("Add", ["s_in", "col"], ["s_out"]),
            helper.make_node("Identity", ["col"], ["y_t"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("s_in", F, [3, 1]),
            helper.make_tensor_value_info("x_t", F, [3]),
        ],
        [
            helper.make_tensor_value_info("s_out", F, None),
            helper.make_tensor_value_info("y_t", F, None),
        ],
    )
    axes = helper.make_node(
        "Constant", [], ["axes"], value=numpy_helper.from_array(_ints(-1), "axes")
    )
    scan = helper.make_node("Scan", ["s0", "xs"], ["s", "ys"], body=body, num_scan_inputs=1)
    flip = helper.make_node("Transpose", ["ys"], ["t"], perm=[2, 1, 0])
    graph = helper.make_graph(
        [axes, scan, flip],
        "g",
        [
            helper.make_tensor_value_info("s0", F, [3, 1]),
            helper.make_tensor_value_info("xs", F, [4, 3]),
        ],
        [
            helper.make_tensor_value_info("s", F, [3, 1]),
            helper.make_tensor_value_info("t", F, ["a", "b", "c"]),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def test_a_subgraph_reading_an_outer_constant_gets_ranked_types() -> None:
    """ONNX's inference of a body sees outer values' types, not their contents: the
    importer lets it see outer constants, so the Scan's outputs are ranked."""
    module = import_model(_scan_unsqueezing_by_an_outer_constant())
    (scan,) = [op for op in module.walk() if op.name == "onnx.Scan"]
    assert [str(r.type) for r in scan.results] == ["tensor<3x1xf32>", "tensor<4x3x1xf32>"]


@pytest.mark.parametrize("level", LEVELS)
def test_a_scan_body_unsqueezing_by_an_outer_constant_lowers(level: str) -> None:
    """The Transpose after the Scan needs its rank (it was 'needs a ranked tensor')."""
    model = _scan_unsqueezing_by_an_outer_constant()
    feeds = [{"s0": _floats(3, 1), "xs": _floats(4, 3)}]
    session = InferenceSession(model, level=level)
    reference = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for feed in feeds:
        for got, want in zip(session.run(None, feed), reference.run(None, feed), strict=True):
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-6)


# ---- an If on a constant condition -------------------------------------------------------------


def _if_on_a_constant(flag: bool, return_y: bool) -> onnx.ModelProto:
    """An If whose branches yield different ranks (ONNX types its result by neither),
    picked by a constant; the Flatten after it needs the rank."""
    then = helper.make_graph(
        [helper.make_node("Unsqueeze", ["x", "axes"], ["t"])],
        "then",
        [],
        [helper.make_tensor_value_info("t", F, None)],
    )
    other = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["e"])],
        "else",
        [],
        [helper.make_tensor_value_info("e", F, None)],
    )
    nodes = [
        helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(np.array(flag))),
        helper.make_node("Constant", [], ["axes"], value=numpy_helper.from_array(_ints(0))),
        helper.make_node("If", ["c"], ["y"], name="if", then_branch=then, else_branch=other),
        helper.make_node("Flatten", ["y"], ["z"], name="flat", axis=2),
    ]
    outputs = [helper.make_tensor_value_info("z", F, ["p", "q"])]
    if return_y:
        dims = ["a", "b", "c"] if flag else ["a", "b"]
        outputs.append(helper.make_tensor_value_info("y", F, dims))
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", F, ["n", 3])], outputs
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("flag", [True, False])
@pytest.mark.parametrize("return_y", [False, True])
def test_an_if_on_a_constant_condition_lowers_the_branch_it_takes(
    level: str, flag: bool, return_y: bool
) -> None:
    """The other branch is dropped, and the taken one's types reach the If's users (a
    returned If result keeps its declared type)."""
    model = _if_on_a_constant(flag, return_y)
    _matches_reference(model, level, [{"x": _floats(n, 3)} for n in (1, 4)])
