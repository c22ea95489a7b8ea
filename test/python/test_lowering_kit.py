"""The lowering kit: its handler table, and builder operations checked on whole models.

`HandlerTable` is tested directly. `CoreBuilder.matmul` is checked through
ONNX MatMul models with dynamic dims (numpy broadcasting of batch dims that
only the run time knows, 1-D operands) at the core and kernel levels.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
import pytest
from xdsl.dialects.builtin import ModuleOp

from rung.dialects import core
from rung.dialects.onnx import CustomOp, OnnxOp
from rung.dialects.onnx import generated_ops as onnx_ops
from rung.errors import RungError
from rung.lowering.kit import HandlerTable, key_name
from rung.lowering.onnx_to_core.registry import custom_key
from rung.runtime import InferenceSession

RNG = np.random.default_rng(5)


def _handler(b: object, op: object) -> list[object]:
    return []


def _other(b: object, op: object) -> list[object]:
    return []


Handler = Callable[[object, object], list[object]]


def _table() -> HandlerTable[Handler]:
    return HandlerTable("test", (OnnxOp, CustomOp), custom_key)


# ---- the handler table ---------------------------------------------------------------


def test_lookup_by_class_and_by_custom_key() -> None:
    table = _table()
    table.lowers(onnx_ops.ReluOp, ("com.example", "Twice"))(_handler)
    relu = onnx_ops.ReluOp.create(operands=[], result_types=[])
    twice = CustomOp("com.example", "Twice", [], [])
    other = CustomOp("com.example", "Thrice", [], [])
    assert table.lookup(relu) is _handler
    assert table.lookup(twice) is _handler
    assert table.lookup(other) is None
    assert len(table) == 2 and set(table) == {onnx_ops.ReluOp, ("com.example", "Twice")}


def test_a_base_class_handler_serves_its_subclasses() -> None:
    table = _table()
    table.add(OnnxOp, _handler)
    table.add(onnx_ops.ReluOp, _other)
    assert table.lookup(onnx_ops.ReluOp.create(operands=[], result_types=[])) is _other
    assert table.lookup(onnx_ops.TanhOp.create(operands=[], result_types=[])) is _handler


def test_add_refuses_a_second_handler_unless_replacing() -> None:
    table = _table()
    table.add(onnx_ops.ReluOp, _handler)
    with pytest.raises(RungError, match=r"onnx\.Relu already has a test lowering"):
        table.add(onnx_ops.ReluOp, _other)
    assert table.add(onnx_ops.ReluOp, _other, replace=True) is _handler
    assert table.remove(onnx_ops.ReluOp) is _other
    with pytest.raises(RungError, match=r"onnx\.Relu has no test lowering to remove"):
        table.remove(onnx_ops.ReluOp)


@pytest.mark.parametrize(
    ("key", "message"),
    [
        (core.UnaryOp, r"registered for op classes \(OnnxOp, CustomOp\), not core\.unary"),
        ("onnx.Relu", "not 'onnx.Relu'"),
        (("com.example", ""), r"a custom op key is \(domain, op_type\)"),
    ],
)
def test_keys_the_table_cannot_look_up_are_refused(key: object, message: str) -> None:
    with pytest.raises(RungError, match=message):
        _table().add(key, _handler)  # type: ignore[arg-type]


def test_a_table_without_custom_keys_refuses_them() -> None:
    table: HandlerTable[Handler] = HandlerTable("core → kernel", (core.CoreOp,))
    with pytest.raises(RungError, match="keyed by op class"):
        table.add(("com.example", "Twice"), _handler)


def test_key_names() -> None:
    assert key_name(onnx_ops.ReluOp) == "onnx.Relu"
    assert key_name(("com.example", "Twice")) == "com.example::Twice"
    assert key_name(ModuleOp) == "builtin.module"


# ---- matmul with dynamic dims ------------------------------------------------------------

MATMULS = {
    "dynamic batch dims from both operands": (
        "float[N, 1, 3, 4] a, float[1, M, 4, 5] b", "float[N, M, 3, 5] y", (2, 1, 3, 4),
        (1, 3, 4, 5),
    ),
    "a 2-D rhs broadcast to a dynamic batch": (
        "float[N, 3, 4] a, float[4, 5] b", "float[N, 3, 5] y", (2, 3, 4), (4, 5),
    ),
    "dynamic rows broadcast to a static batch": (
        "float[N, 4] a, float[2, 4, 5] b", "float[2, N, 5] y", (3, 4), (2, 4, 5),
    ),
    "1-D rhs, dynamic rows": ("float[N, 4] a, float[4] b", "float[N] y", (3, 4), (4,)),
    "1-D lhs, dynamic batch": ("float[4] a, float[N, 4, 5] b", "float[N, 5] y", (4,), (2, 4, 5)),
}  # fmt: skip


@pytest.mark.parametrize("level", ["core", "kernel"])
@pytest.mark.parametrize("case", MATMULS)
def test_matmul_with_dynamic_dims(case: str, level: str) -> None:
    inputs, output, a_shape, b_shape = MATMULS[case]
    model = onnx.parser.parse_model(
        f'<ir_version: 8, opset_import: ["" : 21]>\n'
        f"g ({inputs}) => ({output}) {{\n  y = MatMul(a, b)\n}}"
    )
    a = RNG.standard_normal(a_shape).astype(np.float32)
    b = RNG.standard_normal(b_shape).astype(np.float32)
    (y,) = InferenceSession(model, level=level).run(None, {"a": a, "b": b})
    np.testing.assert_allclose(y, a @ b, rtol=1e-5, atol=1e-5)


def test_folding_evaluates_each_op_of_a_shared_constant_cone_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Shape chains are DAGs: x1 = x0 + x0, x2 = x1 + x1, ... Walked as a tree, the
    fold of x40 would evaluate 2**40 adds; it must evaluate 40."""
    from xdsl.dialects.builtin import StringAttr
    from xdsl.ir import Block, Region

    from rung.dialects.core_eval import CoreInterpreter
    from rung.lowering.kit import constant_array

    module = ModuleOp(Region(Block()))
    value = core.ConstantOp.from_array(np.array([1, 2], np.int64), module)
    module.body.block.add_op(value)
    last = value.result
    for _ in range(40):
        add = core.BinaryOp.create(
            operands=[last, last],
            properties={"fn": StringAttr("add")},
            result_types=[last.type],
        )
        module.body.block.add_op(add)
        last = add.result
    evaluated: list[str] = []
    real_eval = CoreInterpreter.eval

    def counting_eval(self: CoreInterpreter, op: object, env: object) -> object:
        evaluated.append(getattr(op, "name", "?"))
        return real_eval(self, op, env)  # type: ignore[arg-type]

    monkeypatch.setattr(CoreInterpreter, "eval", counting_eval)
    folded = constant_array(last)
    assert folded is not None
    np.testing.assert_array_equal(folded, np.array([1, 2], np.int64) * 2**40)
    assert len(evaluated) == 40
    # Another node reading the same cone (every op a shape, say): nothing evaluates again,
    # and what each caller gets is its own to change.
    folded[:] = 0
    again = constant_array(last)
    middle = constant_array(last.owner.operands[0])
    assert len(evaluated) == 40
    assert again is not None and middle is not None
    np.testing.assert_array_equal(again, np.array([1, 2], np.int64) * 2**40)
    np.testing.assert_array_equal(middle, np.array([1, 2], np.int64) * 2**39)
    again[:] = 0
    np.testing.assert_array_equal(constant_array(last), np.array([1, 2], np.int64) * 2**40)


def test_folding_keeps_only_what_it_could_evaluate() -> None:
    """An op not evaluable yet (its operand is not a constant) is tried again once it is."""
    from xdsl.dialects.builtin import StringAttr, TensorType, i64
    from xdsl.ir import Block, Region

    from rung.lowering.kit import constant_array

    module = ModuleOp(Region(Block(arg_types=[TensorType(i64, [2])])))
    arg = module.body.block.args[0]
    add = core.BinaryOp.create(
        operands=[arg, arg], properties={"fn": StringAttr("add")}, result_types=[arg.type]
    )
    module.body.block.add_op(add)
    assert constant_array(add.result) is None
    value = core.ConstantOp.from_array(np.array([3, 4], np.int64), module)
    module.body.block.insert_op_before(value, add)
    arg.replace_all_uses_with(value.result)
    np.testing.assert_array_equal(constant_array(add.result), np.array([6, 8], np.int64))
