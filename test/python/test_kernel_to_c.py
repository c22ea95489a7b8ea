"""The table of C emitters: unknown ops stop code generation by name; plugins add their own."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.dialects.func import ReturnOp
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def

from rung.dialects import kernel, parse_module
from rung.lowering.kernel_to_c import (
    EMITTERS,
    CodegenError,
    Emitter,
    add_emitter,
    emits,
    generate_c,
)


@irdl_op_definition
class TraceOp(IRDLOperation):
    """An op of a plugin's own: prints the first element of a buffer."""

    name = "test.trace"
    buffer = operand_def(MemRefType)


def traced_module() -> ModuleOp:
    module = parse_module(
        """
func.func @f(%x: memref<4xf32>) -> memref<4xf32> {
  func.return %x : memref<4xf32>
}"""
    )
    block = next(iter(module.body.block.ops)).body.block
    ret = block.last_op
    assert isinstance(ret, ReturnOp)
    block.insert_op_before(TraceOp(operands=[block.args[0]]), ret)
    return module


def trace(e: Emitter, op: TraceOp) -> None:
    e.emit(f'printf("%f\\n", (double){e.buffer(op.buffer).ptr}[0]);')


def test_op_without_an_emitter_is_named() -> None:
    with pytest.raises(CodegenError, match="C code generation does not handle 'test.trace'"):
        generate_c(traced_module())


def test_plugin_emitter_writes_its_op() -> None:
    add_emitter(TraceOp, trace)
    try:
        source = generate_c(traced_module()).source
    finally:
        del EMITTERS[TraceOp.name]
    assert '  printf("%f\\n", (double)x[0]);\n' in source


def test_one_emitter_per_op() -> None:
    with pytest.raises(ValueError, match="two C emitters for kernel.loop"):
        emits(kernel.LoopOp)(trace)


@pytest.mark.parametrize("weight", ["gamma", "y0", "index", "_w", "size_t", "logf"])
def test_value_names_of_the_c_library_do_not_clash(weight: str) -> None:
    """Model names become C names: a weight `gamma` must not redeclare libm's `gamma`,
    and a local `expf` must not hide the function the loop calls."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from rung.runtime import InferenceSession

    w = np.linspace(-1, 1, 64, dtype=np.float32).reshape(8, 8)
    graph = helper.make_graph(
        [
            helper.make_node("Mul", ["j1", weight], ["expf"]),
            helper.make_node("Exp", ["expf"], ["strlen"]),
            helper.make_node("Add", ["strlen", weight], ["M_PI"]),
        ],
        "names",
        [helper.make_tensor_value_info("j1", TensorProto.FLOAT, [8, 8])],
        [helper.make_tensor_value_info("M_PI", TensorProto.FLOAT, [8, 8])],
        initializer=[numpy_helper.from_array(w, weight)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    x = np.linspace(0, 1, 64, dtype=np.float32).reshape(8, 8)
    (y,) = InferenceSession(model, level="kernel").run(None, {"j1": x})
    np.testing.assert_allclose(y, np.exp(x * w) + w, rtol=1e-6, atol=1e-6)
