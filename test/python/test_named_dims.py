"""Symbolic dimension names are kept from the model and checked at run time.

Two inputs that share a dim name (`batch`) are one size: a feed that breaks
that is refused with both inputs named, at every level, before anything runs.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from rung.errors import RungError
from rung.runtime import InferenceSession


def _model() -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["y"])],
        "named",
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, ["batch", "seq"]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, ["batch", 1]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq"])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("level", ["onnx", "core", "kernel"])
def test_dim_names_are_reported_like_onnxruntime(level: str) -> None:
    session = InferenceSession(_model(), level=level)
    assert session.get_inputs()[0].shape == ["batch", "seq"]
    assert session.get_inputs()[1].shape == ["batch", 1]
    assert session.get_outputs()[0].shape == ["batch", "seq"]


@pytest.mark.parametrize("level", ["onnx", "core", "kernel"])
def test_inputs_sharing_a_dim_name_must_agree(level: str) -> None:
    session = InferenceSession(_model(), level=level)
    a = np.ones((3, 5), np.float32)
    (y,) = session.run(None, {"a": a, "b": np.full((3, 1), 2, np.float32)})
    np.testing.assert_array_equal(y, np.full((3, 5), 3, np.float32))
    # numpy would broadcast b's batch of 1 against 3; the model says both are 'batch'.
    with pytest.raises(
        RungError, match=r"input 'b': dimension 0 \('batch'\) is 1, but input 'a' has 3"
    ):
        session.run(None, {"a": a, "b": np.ones((1, 1), np.float32)})


def test_compiled_library_checks_named_dims_itself() -> None:
    """A C caller skips InferenceSession's check: the generated `_run` must refuse too."""
    from rung.errors import EvaluationError
    from rung.importers.onnx import import_model
    from rung.lowering.kernel_to_c import generate_c
    from rung.runtime.levels import lower
    from rung.runtime.native import compile_program

    program = generate_c(lower(import_model(_model()), "kernel"))
    assert program.signature.dim_names == [["batch", "seq"], ["batch", ""]]
    library = compile_program(program)
    a = np.ones((3, 5), np.float32)
    (y,) = library.run([a, np.full((3, 1), 2, np.float32)])
    np.testing.assert_array_equal(y, np.full((3, 5), 3, np.float32))
    with pytest.raises(
        EvaluationError, match=r"input 1 \('b'\): dim 0 \('batch'\) differs from dim 0 of input 0"
    ):
        library.run([a, np.ones((1, 1), np.float32)])
