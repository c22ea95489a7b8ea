"""Writing onnx-dialect IR back as ONNX: models that onnx.checker accepts and that re-import exactly."""

from __future__ import annotations

import numpy as np
import onnx
import onnx.checker
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_cases import node_cases

from rung.dialects import parse_module, print_module
from rung.errors import RungError
from rung.importers.onnx import import_model
from rung.importers.onnx.export import (
    attribute_proto,
    module_to_model,
    ort_type_string,
    tensor_proto,
    type_proto,
)
from rung.runtime.conformance import main_op


def sample_cases(count: int = 100) -> list[str]:
    """About `count` cases spread across ops: one per op in turn, then a second, …"""
    by_op: dict[str, list[str]] = {}
    for name in sorted(node_cases()):
        by_op.setdefault(main_op(name, node_cases()[name].model), []).append(name)  # type: ignore[attr-defined]
    chosen: list[str] = []
    depth = 0
    while len(chosen) < count:
        row = [names[depth] for _, names in sorted(by_op.items()) if depth < len(names)]
        if not row:
            break
        # Every other op at each depth, so the sample mixes ops and variants.
        chosen.extend(row[depth % 2 :: 2])
        depth += 1
    return sorted(chosen[:count])


def without_original_opsets(text: str) -> str:
    # The re-imported model is already at the latest opsets; everything else must match.
    import re

    return re.sub(r"onnx\.original_opset_import = \{[^}]*\}", "", text)


@pytest.mark.parametrize("name", sample_cases())
def test_node_case_exports_checks_and_reimports_identically(name: str) -> None:
    module = import_model(node_cases()[name].model)  # type: ignore[attr-defined]
    model = module_to_model(module)
    onnx.checker.check_model(model, full_check=True)
    again = import_model(model)
    assert without_original_opsets(print_module(again)) == without_original_opsets(
        print_module(module)
    )


def test_sample_is_spread_across_ops() -> None:
    names = sample_cases()
    ops = {main_op(n, node_cases()[n].model) for n in names}  # type: ignore[attr-defined]
    assert len(names) == 100 and len(ops) >= 60


def test_graph_io_names_dim_params_and_initializers() -> None:
    w = np.arange(40, dtype=np.float32).reshape(5, 8)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x.in", "w"], ["y/out"], name="mm")],
        "g",
        [helper.make_tensor_value_info("x.in", TensorProto.FLOAT, ["batch", 5])],
        [helper.make_tensor_value_info("y/out", TensorProto.FLOAT, ["batch", 8])],
        [numpy_helper.from_array(w, "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    exported = module_to_model(import_model(model))
    g = exported.graph
    assert [i.name for i in g.input] == ["x.in"]
    assert [o.name for o in g.output] == ["y/out"]
    assert g.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert [t.name for t in g.initializer] == ["w"]
    np.testing.assert_array_equal(numpy_helper.to_array(g.initializer[0]), w)
    assert g.node[0].name == "mm" and list(g.node[0].input) == ["x.in", "w"]


def test_returned_input_under_another_name_gets_an_identity() -> None:
    module = parse_module(
        'func.func @f(%a: tensor<2xf32> {onnx.name = "a"}) -> '
        '(tensor<2xf32> {onnx.name = "b"}, tensor<2xf32> {onnx.name = "a"}) {\n'
        "  func.return %a, %a : tensor<2xf32>, tensor<2xf32>\n}\n"
    )
    model = module_to_model(module)
    onnx.checker.check_model(model)
    assert [(n.op_type, list(n.input), list(n.output)) for n in model.graph.node] == [
        ("Identity", ["a"], ["b"])
    ]
    from onnx.reference import ReferenceEvaluator

    x = np.array([1.0, 2.0], np.float32)
    out = ReferenceEvaluator(model).run(None, {"a": x})
    np.testing.assert_array_equal(out[0], x)
    np.testing.assert_array_equal(out[1], x)


def test_region_uses_outer_value_by_name() -> None:
    then_g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["t"])],
        "then",
        [],
        [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2])],
    )
    else_g = helper.make_graph(
        [helper.make_node("Abs", ["x"], ["e"])],
        "else",
        [],
        [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2])],
    )
    graph = helper.make_graph(
        [helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
        "g",
        [
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    exported = module_to_model(import_model(model))
    node = exported.graph.node[0]
    then_branch = next(a.g for a in node.attribute if a.name == "then_branch")
    assert list(then_branch.node[0].input) == ["x"]  # the enclosing graph's input
    assert len(then_branch.input) == 0


H = helper
T = TensorProto


@pytest.mark.parametrize(
    ("text", "expected", "ort"),
    [
        ("tensor<2x?xf32>", H.make_tensor_type_proto(T.FLOAT, [2, None]), "tensor(float)"),
        ("tensor<*xi64>", H.make_tensor_type_proto(T.INT64, None), "tensor(int64)"),
        (
            "!onnx.seq<tensor<3xi1>>",
            H.make_sequence_type_proto(H.make_tensor_type_proto(T.BOOL, [3])),
            "seq(tensor(bool))",
        ),
        (
            "!onnx.opt<!onnx.seq<tensor<?xf16>>>",
            H.make_optional_type_proto(
                H.make_sequence_type_proto(H.make_tensor_type_proto(T.FLOAT16, [None]))
            ),
            "optional(seq(tensor(float16)))",
        ),
        (
            "!onnx.map<i64, f32>",
            H.make_map_type_proto(T.INT64, H.make_tensor_type_proto(T.FLOAT, None)),
            "map(int64,tensor(float))",
        ),
        (
            "!onnx.map<!onnx.string, !onnx.seq<tensor<bf16>>>",
            H.make_map_type_proto(
                T.STRING, H.make_sequence_type_proto(H.make_tensor_type_proto(T.BFLOAT16, []))
            ),
            "map(string,seq(tensor(bfloat16)))",
        ),
        ("tensor<2x!onnx.string>", H.make_tensor_type_proto(T.STRING, [2]), "tensor(string)"),
    ],
)
def test_types_map_back_to_onnx(text: str, expected: onnx.TypeProto, ort: str) -> None:
    module = parse_module(
        f'func.func @f(%a: {text} {{onnx.name = "a"}}) -> ({text} {{onnx.name = "a"}}) {{\n'
        f"  func.return %a : {text}\n}}\n"
    )
    arg_type = module.body.block.first_op.args[0].type  # type: ignore[union-attr]
    tp = type_proto(arg_type)
    assert tp == expected
    assert ort_type_string(arg_type) == ort
    # and the importer reads it back to the same MLIR type
    from rung.importers.onnx.convert import mlir_type

    assert mlir_type(tp, "test") == arg_type


def test_constants_and_attributes_become_protos() -> None:
    module = import_model(node_cases()["test_ai_onnx_ml_tree_ensemble_set_membership"].model)  # type: ignore[attr-defined]
    op = next(o for o in module.walk() if o.name == "onnx.ml.TreeEnsemble")
    splits = op.properties["nodes_splits"]  # a dense_resource
    tensor = tensor_proto(splits, module)
    assert tensor.name == "nodes_splits" and tensor.data_type == TensorProto.FLOAT
    original = next(
        a.t
        for a in node_cases()["test_ai_onnx_ml_tree_ensemble_set_membership"]
        .model.graph.node[0]
        .attribute  # type: ignore[attr-defined]
        if a.name == "nodes_splits"
    )
    np.testing.assert_array_equal(numpy_helper.to_array(tensor), numpy_helper.to_array(original))
    modes = attribute_proto("nodes_modes", op.properties["nodes_modes"], module, "TENSOR")
    assert modes.type == onnx.AttributeProto.TENSOR and modes.t.data_type == TensorProto.UINT8
    with pytest.raises(RungError, match="is not an ONNX INTS"):
        attribute_proto("x", op.properties["nodes_splits"], module, "INTS")


def test_non_onnx_module_is_refused() -> None:
    module = parse_module(
        "func.func @f(%a: i32) -> i32 {\n  %b = arith.addi %a, %a : i32\n  func.return %b : i32\n}\n"
    )
    with pytest.raises(RungError, match="not onnx-dialect IR: it has 'arith.addi'"):
        module_to_model(module)
