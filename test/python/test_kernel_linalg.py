"""The linalg family at level kernel: matmul, conv, conv_transpose and pooling.

ONNX graphs of many single-op cases each (one model per family, so one C
compile) run at level kernel and are compared, output by output, with
onnxruntime; element types onnxruntime's CPU provider lacks are compared with
the core interpreter. The GEMM microkernel of `rung_gemm.h` is also tested
directly: through ctypes against numpy for odd sizes, and as a C program under
AddressSanitizer and UBSan, in its vector and its portable scalar form.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from rung.lowering.kernel_to_c import generate_c
from rung.lowering.kernel_to_c.emit import RUNTIME_HEADER
from rung.runtime import InferenceSession

ELEM = {
    np.float32: TensorProto.FLOAT,
    np.float64: TensorProto.DOUBLE,
    np.float16: TensorProto.FLOAT16,
    np.int32: TensorProto.INT32,
    np.int8: TensorProto.INT8,
    np.uint8: TensorProto.UINT8,
}


@dataclass
class Case:
    """One node: its inputs (fed, or initializers when `const`) and attributes."""

    name: str
    op: str
    inputs: list[np.ndarray]
    attrs: dict[str, object] = field(default_factory=dict)
    out_type: type = np.float32
    const: Sequence[int] = ()
    ort: bool = True
    """Compare with onnxruntime (else with the core interpreter)."""
    tol: float = 1e-4


def rand(*shape: int, dtype: type = np.float32, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(abs(hash((shape, seed))) % 2**32)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-20, 20, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def family_model(cases: Sequence[Case]) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """One graph holding every case, each with its own inputs and output."""
    nodes, inputs, outputs, inits = [], [], [], []
    feed: dict[str, np.ndarray] = {}
    for c in cases:
        names = []
        for i, a in enumerate(c.inputs):
            name = f"{c.name}_in{i}"
            names.append(name)
            if i in c.const:
                inits.append(numpy_helper.from_array(a, name))
            else:
                inputs.append(helper.make_tensor_value_info(name, ELEM[a.dtype.type], a.shape))
                feed[name] = a
        nodes.append(helper.make_node(c.op, names, [c.name], name=c.name, **c.attrs))
        outputs.append(helper.make_tensor_value_info(c.name, ELEM[c.out_type], None))
    graph = helper.make_graph(nodes, "family", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    # The outputs' shapes, which the checker wants, from ONNX's shape inference.
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    del model.graph.output[:]
    model.graph.output.extend(inferred.graph.output)
    return model, feed


def run_family(cases: Sequence[Case]) -> dict[str, tuple[np.ndarray, np.ndarray, float]]:
    """name -> (kernel result, reference, tolerance)."""
    model, feed = family_model(cases)
    got = InferenceSession(model, level="kernel").run(None, feed)
    core = InferenceSession(model, level="core").run(None, feed)
    ort_cases = [c for c in cases if c.ort]
    expected: dict[str, np.ndarray] = {}
    if ort_cases:
        sub, sub_feed = family_model(ort_cases)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        sess = ort.InferenceSession(
            sub.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )
        expected = dict(zip([c.name for c in ort_cases], sess.run(None, sub_feed), strict=True))
    results = {}
    for c, g, k in zip(cases, got, core, strict=True):
        results[c.name] = (g, expected.get(c.name, k), c.tol)
    return results


def check(results: dict[str, tuple[np.ndarray, np.ndarray, float]], name: str) -> None:
    got, want, tol = results[name]
    assert got.shape == want.shape, name
    assert got.dtype == want.dtype, name
    if np.issubdtype(got.dtype, np.integer):
        np.testing.assert_array_equal(got, want)
    else:
        scale = max(1.0, float(np.max(np.abs(want.astype(np.float64)), initial=0.0)))
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale)


# ---- matmul and Gemm ------------------------------------------------------------------------

MATMUL = [
    Case("mm_2d", "MatMul", [rand(7, 33), rand(33, 50)]),
    Case("mm_big", "MatMul", [rand(70, 300), rand(300, 101)], const=(1,)),
    Case("mm_batched", "MatMul", [rand(3, 9, 17), rand(3, 17, 20)]),
    Case("mm_broadcast_rhs", "MatMul", [rand(2, 3, 10, 16), rand(16, 49)], const=(1,)),
    Case("mm_broadcast_lhs", "MatMul", [rand(5, 16), rand(4, 16, 9)]),
    Case("mm_broadcast_both", "MatMul", [rand(2, 1, 6, 8), rand(1, 3, 8, 5)]),
    Case("mm_vector_left", "MatMul", [rand(40), rand(40, 30)]),
    Case("mm_vector_right", "MatMul", [rand(30, 40), rand(40)]),
    Case("mm_gemv_rows", "MatMul", [rand(1, 1000), rand(1000, 70)], const=(1,)),
    Case("mm_gemv_cols", "MatMul", [rand(90, 600), rand(600, 1)]),
    Case("mm_inner_1", "MatMul", [rand(9, 1), rand(1, 13)]),
    Case(
        "mm_f64",
        "MatMul",
        [rand(6, 11, dtype=np.float64), rand(11, 4, dtype=np.float64)],
        out_type=np.float64,
    ),
    Case(
        "mm_i32",
        "MatMul",
        [rand(5, 7, dtype=np.int32), rand(7, 3, dtype=np.int32)],
        out_type=np.int32,
    ),
    Case(
        "mm_f16",
        "MatMul",
        [rand(6, 40, dtype=np.float16), rand(40, 9, dtype=np.float16)],
        out_type=np.float16,
        tol=2e-2,
    ),
    Case(
        "mmi_u8",
        "MatMulInteger",
        [
            rand(4, 6, dtype=np.int32).astype(np.uint8),
            rand(6, 5, dtype=np.int32).astype(np.uint8),
            np.array(3, np.uint8),
            np.array(200, np.uint8),
        ],
        out_type=np.int32,
        const=(2, 3),
    ),
    Case(
        "mmi_i8_rows",
        "MatMulInteger",
        [rand(4, 6, dtype=np.int8), rand(6, 5, dtype=np.int8), np.array([1, -2, 3, 0], np.int8)],
        out_type=np.int32,
        const=(2,),
        ort=False,
    ),
    Case("gemm_plain", "Gemm", [rand(9, 20), rand(20, 11)]),
    # Constant right operands are packed once by `_init`: several K blocks, odd N, a batch
    # of left operands sharing them, and thin products that read them in place.
    Case("matmul_const_rhs_k_blocks", "MatMul", [rand(37, 600), rand(600, 101)], const=(1,)),
    Case("matmul_const_rhs_batched", "MatMul", [rand(3, 5, 70), rand(70, 50)], const=(1,)),
    Case("matmul_const_rhs_few_rows", "MatMul", [rand(3, 64), rand(64, 40)], const=(1,)),
    Case(
        "gemm_const_trans_b_k_blocks",
        "Gemm",
        [rand(20, 300), rand(130, 300), rand(130)],
        {"transB": 1},
        const=(1, 2),
    ),
    Case(
        "gemm_trans_b_bias",
        "Gemm",
        [rand(1, 64), rand(100, 64), rand(100)],
        {"transB": 1},
        const=(1, 2),
    ),
    Case(
        "gemm_trans_b_rows",
        "Gemm",
        [rand(13, 64), rand(70, 64), rand(70)],
        {"transB": 1, "alpha": 0.5, "beta": 2.0},
        const=(1, 2),
    ),
    Case(  # a transposed weight that is an input: read transposed (transpose_rhs), packed
        "gemm_trans_b_input_rows",
        "Gemm",
        [rand(13, 64), rand(70, 64), rand(70)],
        {"transB": 1},
        const=(2,),
    ),
    Case(
        "gemm_trans_a",
        "Gemm",
        [rand(20, 9), rand(20, 11), rand(9, 11)],
        {"transA": 1, "beta": -1.0},
    ),
]


@pytest.fixture(scope="module")
def matmul_results() -> dict[str, tuple[np.ndarray, np.ndarray, float]]:
    return run_family(MATMUL)


@pytest.mark.parametrize("name", [c.name for c in MATMUL])
def test_matmul_and_gemm(matmul_results: dict, name: str) -> None:
    check(matmul_results, name)


# ---- convolution ----------------------------------------------------------------------------

CONV = [
    Case(
        "conv_3x3_pad",
        "Conv",
        [rand(1, 5, 9, 9), rand(7, 5, 3, 3), rand(7)],
        {"pads": [1, 1, 1, 1]},
        const=(1, 2),
    ),
    Case(
        "conv_stride_asym_pads",
        "Conv",
        [rand(2, 3, 11, 10), rand(4, 3, 3, 2)],
        {"strides": [2, 3], "pads": [2, 0, 1, 1]},
        const=(1,),
    ),
    Case(
        "conv_dilated",
        "Conv",
        [rand(1, 4, 12, 12), rand(6, 4, 3, 3)],
        {"dilations": [2, 3], "pads": [2, 3, 2, 3]},
    ),
    Case(
        "conv_groups",
        "Conv",
        [rand(2, 6, 7, 7), rand(9, 2, 3, 3)],
        {"group": 3, "pads": [1, 1, 0, 0]},
        const=(1,),
    ),
    Case(
        "conv_depthwise",
        "Conv",
        [rand(1, 8, 10, 10), rand(8, 1, 3, 3), rand(8)],
        {"group": 8, "pads": [1, 1, 1, 1], "strides": [2, 2]},
        const=(1, 2),
    ),
    Case(
        "conv_depthwise_multiplier",
        "Conv",
        [rand(2, 3, 6, 7), rand(6, 1, 2, 3)],
        {"group": 3, "pads": [0, 1, 1, 0], "dilations": [2, 1]},
    ),
    # Depthwise convs read a zero-bordered copy of the input and sum their window per point.
    Case(
        "conv_depthwise_7x7",
        "Conv",
        [rand(2, 4, 9, 11), rand(4, 1, 7, 7), rand(4)],
        {"group": 4, "pads": [3, 3, 3, 3]},
        const=(1, 2),
    ),
    Case(
        "conv_depthwise_5x5_stride_asym",
        "Conv",
        [rand(1, 6, 13, 12), rand(6, 1, 5, 5)],
        {"group": 6, "pads": [1, 2, 2, 0], "strides": [2, 3]},
    ),
    Case(
        "conv_depthwise_pad_wider_than_input",
        "Conv",
        [rand(1, 2, 2, 3), rand(4, 1, 3, 3)],
        {"group": 2, "pads": [4, 1, 3, 5]},
    ),
    # 2-D ones call the runtime's rung_depthwise_float: phase planes for strides above 1.
    Case(
        "conv_depthwise_stride3_dilated",
        "Conv",
        [rand(2, 3, 17, 19), rand(3, 1, 3, 4)],
        {"group": 3, "pads": [2, 0, 1, 3], "strides": [3, 2], "dilations": [2, 3]},
    ),
    Case(  # a plane of several vector groups, a depth multiplier of 2
        "conv_depthwise_large_plane",
        "Conv",
        [rand(1, 3, 40, 37), rand(6, 1, 3, 3), rand(6)],
        {"group": 3, "pads": [1, 1, 1, 1]},
        const=(1, 2),
    ),
    Case(
        "conv_depthwise_1xk_stride2",
        "Conv",
        [rand(1, 4, 9, 30), rand(4, 1, 1, 7)],
        {"group": 4, "pads": [0, 3, 0, 3], "strides": [2, 2]},
    ),
    Case(
        "conv_depthwise_1d",
        "Conv",
        [rand(2, 3, 17), rand(3, 1, 4)],
        {"group": 3, "pads": [2, 1], "dilations": [2]},
    ),
    Case(
        "conv_depthwise_3d",
        "Conv",
        [rand(1, 2, 5, 6, 4), rand(2, 1, 3, 2, 3)],
        {"group": 2, "pads": [1, 0, 1, 1, 1, 0], "strides": [1, 2, 1]},
    ),
    Case(  # columns of 1.4M floats: GEMMs on blocks of 18 output rows (rung_conv_rows_float)
        "conv_row_blocks",
        "Conv",
        [rand(1, 16, 200, 200), rand(8, 16, 3, 3), rand(8)],
        {"pads": [1, 1, 1, 1], "strides": [2, 2]},
        const=(1, 2),
    ),
    # Stride 1 on maps at least 16 wide: rung_conv_shift_float, tiles reading the input's
    # bordered rows in place; rows of whole vectors go row by row, others as one flat run.
    Case(  # 16 wide: a tile of 3 rows of one vector; 20 channels, the last panel partial
        "conv_shift_rows",
        "Conv",
        [rand(1, 6, 18, 16), rand(20, 6, 3, 3), rand(20)],
        {"pads": [1, 1, 1, 1]},
        const=(1, 2),
    ),
    Case(  # 32 wide, 5x5, asymmetric pads wider than the kernel's reach on one side
        "conv_shift_rows_5x5",
        "Conv",
        [rand(1, 3, 9, 30), rand(8, 3, 5, 5)],
        {"pads": [3, 0, 1, 4]},
        const=(1,),
    ),
    Case(  # 28 wide: one flat run; 40 channels: two K blocks, the epilogue after the last
        "conv_shift_flat_kblocks",
        "Conv",
        [rand(1, 40, 9, 28), rand(9, 40, 3, 3), rand(9)],
        {"pads": [1, 1, 1, 1]},
        const=(1, 2),
    ),
    Case(  # a batch of 2, two groups of 6 channels, dilations, no padding
        "conv_shift_groups_dilated",
        "Conv",
        [rand(2, 4, 12, 26), rand(12, 2, 3, 2)],
        {"group": 2, "dilations": [2, 3]},
    ),
    Case(  # a 7x7 stride-2 stem onto 32-wide rows: phase planes of the input
        "conv_shift_stride2_stem",
        "Conv",
        [rand(1, 3, 40, 64), rand(8, 3, 7, 7), rand(8)],
        {"pads": [3, 3, 3, 3], "strides": [2, 2]},
        const=(1, 2),
    ),
    Case(  # strides (3, 2) with dilations and groups, weights known at run time
        "conv_shift_strided_dilated_groups",
        "Conv",
        [rand(1, 4, 12, 35), rand(10, 2, 3, 3)],
        {"group": 2, "strides": [3, 2], "dilations": [1, 2], "pads": [1, 0, 1, 0]},
    ),
    Case("conv_1x1", "Conv", [rand(2, 16, 5, 5), rand(24, 16, 1, 1)], const=(1,)),
    Case("conv_1x1_strided", "Conv", [rand(1, 16, 7, 7), rand(8, 16, 1, 1)], {"strides": [2, 2]}),
    Case("conv_1d", "Conv", [rand(2, 3, 17), rand(5, 3, 4)], {"strides": [2], "pads": [1, 2]}),
    Case(
        "conv_3d", "Conv", [rand(1, 2, 5, 6, 4), rand(3, 2, 3, 2, 2)], {"pads": [1, 0, 1, 1, 1, 0]}
    ),
    Case(
        "conv_same_upper",
        "Conv",
        [rand(1, 3, 8, 7), rand(4, 3, 3, 3)],
        {"auto_pad": "SAME_UPPER", "strides": [2, 2]},
    ),
    Case(
        "conv_pad_wider_than_kernel",
        "Conv",
        [rand(1, 2, 3, 3), rand(2, 2, 2, 2)],
        {"pads": [3, 2, 3, 4]},
    ),
    Case(
        "conv_f64",
        "Conv",
        [rand(1, 3, 6, 6, dtype=np.float64), rand(4, 3, 3, 3, dtype=np.float64)],
        {"pads": [1, 1, 1, 1]},
        out_type=np.float64,
        ort=False,
    ),
    Case(
        "conv_f16",
        "Conv",
        [rand(1, 4, 6, 6, dtype=np.float16), rand(5, 4, 3, 3, dtype=np.float16)],
        {"pads": [1, 1, 1, 1]},
        out_type=np.float16,
        ort=False,
        tol=2e-2,
    ),
    Case(
        "conv_integer",
        "ConvInteger",
        [
            rand(1, 3, 6, 6, dtype=np.int32).astype(np.uint8),
            rand(4, 3, 3, 3, dtype=np.int32).astype(np.uint8),
            np.array(5, np.uint8),
        ],
        {"pads": [1, 1, 1, 1]},
        out_type=np.int32,
        const=(2,),
    ),
]


@pytest.fixture(scope="module")
def conv_results() -> dict[str, tuple[np.ndarray, np.ndarray, float]]:
    return run_family(CONV)


@pytest.mark.parametrize("name", [c.name for c in CONV])
def test_conv(conv_results: dict, name: str) -> None:
    check(conv_results, name)


def _check_sanitized(cases: Sequence[Case], *routines: str) -> None:
    """Each case calls one of the runtime's `routines` once, and under AddressSanitizer and
    UBSan (the runtime compiled with the model) matches onnxruntime."""
    model, feed = family_model(cases)
    source = generate_c(InferenceSession(model, level="kernel").module, "model").source
    assert sum(source.count(f"{routine}(") for routine in routines) == len(cases)
    got = InferenceSession(model, level="kernel-sanitized").run(None, feed)
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for c, g, w in zip(cases, got, want.run(None, feed), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4, err_msg=c.name)


IM2COL_CASES = [
    "conv_3x3_pad",
    "conv_stride_asym_pads",
    "conv_dilated",
    "conv_groups",
    "conv_1d",
    "conv_3d",
    "conv_same_upper",
    "conv_pad_wider_than_kernel",
]
"""The f32 convs that go through the runtime's im2col (`rung_im2col_float`)."""


def test_im2col_convs_are_sanitizer_clean() -> None:
    """Every im2col geometry (strides, dilations, asymmetric and wide pads, 1-3 spatial
    dims, groups, a batch) under AddressSanitizer and UBSan: the runtime's im2col is
    compiled with the model there, and a read outside the input or a write outside the
    columns fails the run."""
    cases = [c for c in CONV if c.name in IM2COL_CASES]
    _check_sanitized(cases, "rung_im2col_float")


def test_row_block_convs_are_sanitizer_clean(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every 2-D im2col geometry (strides, dilations, asymmetric and wide pads, groups, a
    batch), forced through `rung_conv_rows_float` with blocks of a few rows (the last one
    shorter), under AddressSanitizer and UBSan against onnxruntime."""
    from rung.lowering.core_to_kernel import linalg

    monkeypatch.setattr(linalg, "ROW_BLOCK_FLOATS", 64)
    names = {"conv_3x3_pad", "conv_stride_asym_pads", "conv_dilated", "conv_groups"}
    names |= {"conv_same_upper", "conv_pad_wider_than_kernel"}
    cases = [c for c in CONV if c.name in names]
    _check_sanitized(cases, "rung_conv_rows_float")


SHIFT_CASES = [
    "conv_shift_rows",
    "conv_shift_rows_5x5",
    "conv_shift_flat_kblocks",
    "conv_shift_groups_dilated",
    "conv_shift_stride2_stem",
    "conv_shift_strided_dilated_groups",
]
"""The f32 convs that call the runtime's `rung_conv_shift_float`."""


def test_shifted_convs_are_sanitizer_clean() -> None:
    """Every shifted-rows geometry (rows of whole vectors and flat runs, partial channel
    panels, K blocks, groups, dilations, strides, asymmetric pads, a batch) under AddressSanitizer
    and UBSan: the tiles read past the end of each row, and past the last plane, which must
    stay inside the bordered copy of the input."""
    cases = [c for c in CONV if c.name in SHIFT_CASES]
    model, _ = family_model(cases)
    source = generate_c(InferenceSession(model, level="kernel").module, "model").source
    # constant weights are packed once by `_init`; run-time weights on every call
    assert source.count("rung_conv_prepack_w(") == 4
    assert source.count("rung_conv_shift_float(") == 2
    _check_sanitized(cases, "rung_conv_shift_float", "rung_conv_shift_packed_float")


DEPTHWISE_CASES = [
    "conv_depthwise",
    "conv_depthwise_multiplier",
    "conv_depthwise_7x7",
    "conv_depthwise_5x5_stride_asym",
    "conv_depthwise_pad_wider_than_input",
    "conv_depthwise_stride3_dilated",
    "conv_depthwise_large_plane",
    "conv_depthwise_1xk_stride2",
]
"""The f32 depthwise convs of 2 spatial dims, which call the runtime's `rung_depthwise_float`."""


def test_depthwise_convs_are_sanitizer_clean() -> None:
    """Every depthwise geometry (strides 1 to 3, dilations, asymmetric pads and pads wider
    than the input, depth multipliers, a batch) under AddressSanitizer and UBSan: the
    runtime's depthwise conv reads whole vectors past the end of its flat run, which must
    stay inside its zero-padded planes."""
    cases = [c for c in CONV if c.name in DEPTHWISE_CASES]
    _check_sanitized(cases, "rung_depthwise_float")


CONV_TRANSPOSE = [
    Case("ct_plain", "ConvTranspose", [rand(1, 3, 4, 4), rand(3, 2, 3, 3)]),
    Case(
        "ct_strides_pads",
        "ConvTranspose",
        [rand(2, 3, 5, 4), rand(3, 4, 3, 2), rand(4)],
        {"strides": [2, 3], "pads": [1, 0, 1, 1]},
        const=(1, 2),
    ),
    Case(
        "ct_output_padding",
        "ConvTranspose",
        [rand(1, 2, 3, 3), rand(2, 3, 3, 3)],
        {"strides": [3, 2], "output_padding": [2, 1]},
    ),
    Case(
        "ct_groups_dilations",
        "ConvTranspose",
        [rand(1, 4, 4, 5), rand(4, 3, 2, 3)],
        {"group": 2, "dilations": [2, 2], "pads": [1, 1, 0, 2]},
    ),
    Case(
        "ct_output_shape",
        "ConvTranspose",
        [rand(1, 2, 3, 3), rand(2, 2, 3, 3)],
        {"strides": [2, 2], "output_shape": [8, 8]},
    ),
    Case("ct_1d", "ConvTranspose", [rand(2, 3, 6), rand(3, 2, 4)], {"strides": [2]}),
    Case(
        "ct_3d", "ConvTranspose", [rand(1, 2, 3, 2, 3), rand(2, 2, 2, 2, 2)], {"strides": [1, 2, 1]}
    ),
]


@pytest.fixture(scope="module")
def conv_transpose_results() -> dict[str, tuple[np.ndarray, np.ndarray, float]]:
    return run_family(CONV_TRANSPOSE)


@pytest.mark.parametrize("name", [c.name for c in CONV_TRANSPOSE])
def test_conv_transpose(conv_transpose_results: dict, name: str) -> None:
    check(conv_transpose_results, name)


# ---- pooling --------------------------------------------------------------------------------

POOL = [
    Case(
        "max_3x3_s2_pad",
        "MaxPool",
        [rand(1, 3, 9, 9)],
        {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
    ),
    Case(
        "max_ceil",
        "MaxPool",
        [rand(1, 2, 8, 7)],
        {"kernel_shape": [3, 2], "strides": [2, 2], "ceil_mode": 1},
    ),
    Case(
        "max_dilated",
        "MaxPool",
        [rand(2, 2, 9, 9)],
        {"kernel_shape": [2, 2], "dilations": [2, 3], "pads": [1, 0, 0, 1]},
    ),
    Case(
        "max_2x2_s2",  # a small CNN's pool: windows that tile the input, no copy
        "MaxPool",
        [rand(1, 4, 16, 16)],
        {"kernel_shape": [2, 2], "strides": [2, 2]},
    ),
    Case(
        "max_ceil_pads",  # the last windows reach past the input by less than pad_high
        "MaxPool",
        [rand(1, 2, 10, 9)],
        {"kernel_shape": [3, 3], "strides": [3, 2], "pads": [0, 1, 2, 1], "ceil_mode": 1},
    ),
    Case("max_1d", "MaxPool", [rand(2, 3, 11)], {"kernel_shape": [3], "strides": [2]}),
    Case("max_3d", "MaxPool", [rand(1, 2, 5, 4, 6)], {"kernel_shape": [2, 2, 3]}),
    Case(
        "max_int8",
        "MaxPool",
        [rand(1, 2, 6, 6, dtype=np.int8)],
        {"kernel_shape": [2, 2], "pads": [1, 1, 1, 1]},
        out_type=np.int8,
    ),
    Case(
        "avg_pads_exclude",
        "AveragePool",
        [rand(1, 3, 7, 7)],
        {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]},
    ),
    Case(
        "avg_pads_include",
        "AveragePool",
        [rand(1, 3, 7, 7)],
        {"kernel_shape": [3, 3], "pads": [1, 2, 2, 1], "count_include_pad": 1},
    ),
    Case(
        "avg_ceil_strides",
        "AveragePool",
        [rand(2, 2, 9, 8)],
        {"kernel_shape": [2, 3], "strides": [2, 2], "ceil_mode": 1},
    ),
    Case(
        "avg_ceil_pads_include",
        "AveragePool",
        [rand(1, 2, 10, 9)],
        {
            "kernel_shape": [3, 3],
            "strides": [3, 2],
            "pads": [0, 1, 2, 1],
            "ceil_mode": 1,
            "count_include_pad": 1,
        },
    ),
    Case(
        "avg_dilated",
        "AveragePool",
        [rand(1, 2, 8, 8)],
        {"kernel_shape": [2, 2], "dilations": [2, 2], "pads": [1, 1, 1, 1]},
    ),
    Case(
        "avg_same_lower",
        "AveragePool",
        [rand(1, 2, 6, 5)],
        {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_LOWER"},
    ),
    Case("global_avg", "GlobalAveragePool", [rand(2, 5, 7, 7)]),
    Case("global_avg_1d", "GlobalAveragePool", [rand(1, 4, 9)]),
    Case("global_max", "GlobalMaxPool", [rand(2, 3, 4, 5)]),
    Case(
        "lp_pool",
        "LpPool",
        [rand(1, 2, 6, 6)],
        {"kernel_shape": [3, 3], "p": 2, "pads": [1, 1, 1, 1], "strides": [2, 2]},
    ),
]


@pytest.fixture(scope="module")
def pool_results() -> dict[str, tuple[np.ndarray, np.ndarray, float]]:
    return run_family(POOL)


@pytest.mark.parametrize("name", [c.name for c in POOL])
def test_pool(pool_results: dict, name: str) -> None:
    check(pool_results, name)


# ---- the GEMM microkernel itself ------------------------------------------------------------

WRAPPER = r"""
#include "rung_runtime.h"
void mm(const float *a, const float *b, float *c, int64_t ba, int64_t bb, int64_t batch,
        int64_t m, int64_t n, int64_t k, int acc, int tb, int pack) {
  if (pack == 2 && bb == 1) { /* a thin product's constant B, transposed once */
    float *bt = rung_gemm_prepack_thin(b, n, k, tb);
    rung_matmul_float_thin(a, b, bt, c, ba, batch, m, n, k, acc, tb);
    free(bt);
  } else if (pack && bb == 1) { /* B packed once, as _init packs a constant right operand */
    float *packed = rung_gemm_prepack_b(b, n, k, tb);
    rung_matmul_float_packed(a, b, packed, c, ba, batch, m, n, k, acc, tb);
    free(packed);
  } else if (tb) rung_matmul_float_bt(a, b, c, ba, bb, batch, m, n, k, acc);
  else rung_matmul_float(a, b, c, ba, bb, batch, m, n, k, acc);
}
"""

SIZES = [0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 47, 48, 49, 97, 300]


def _cc() -> str:
    for cc in ("cc", "gcc", "clang"):
        if shutil.which(cc):
            return cc
    pytest.skip("no C compiler")


def _build(tmp: Path, name: str, source: str, flags: Sequence[str], shared: bool) -> Path:
    src = tmp / f"{name}.c"
    src.write_text(source)
    out = tmp / (f"lib{name}.so" if shared else name)
    cmd = [_cc(), "-std=gnu11", "-Wall", "-Werror", *flags, "-I", str(RUNTIME_HEADER.parent)]
    cmd += ["-shared", "-fPIC"] if shared else []
    subprocess.run([*cmd, str(src), "-o", str(out), "-lm"], check=True, capture_output=True)
    return out


@pytest.fixture(scope="module", params=["native", "scalar"])
def gemm_lib(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    flags = ["-O3", "-march=native"] if request.param == "native" else ["-O2", "-DRUNG_GEMM_SCALAR"]
    lib = ctypes.CDLL(str(_build(tmp_path_factory.mktemp("gemm"), "gemm", WRAPPER, flags, True)))
    lib.mm.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int64] * 6 + [ctypes.c_int] * 3
    return lib


def _gemm_cases() -> list[tuple[int, int, int, int, int, int, int, int, int]]:
    rng = np.random.default_rng(5)
    cases = [
        (1, 1, 1, m, n, k, 0, 0, pack)
        for m in (0, 1, 5)
        for n in (0, 1, 6)
        for k in (0, 1, 3)
        for pack in (0, 1)
    ]
    for _ in range(90):
        m, n, k = (int(rng.choice(SIZES)) for _ in range(3))
        batch = int(rng.integers(1, 4))
        ba = 1 if rng.random() < 0.3 else batch
        pack = int(rng.random() < 0.4)  # a prepacked B is one matrix for every batch
        bb = 1 if pack or rng.random() < 0.3 else batch
        cases.append((ba, bb, batch, m, n, k, int(rng.integers(2)), int(rng.integers(2)), pack))
    # Thin products (M <= 4) of few columns with B transposed once: dot products along K,
    # or (K < 64, or already transposed) the usual forms.
    for _ in range(30):
        m, n = int(rng.integers(1, 5)), int(rng.choice([1, 3, 10, 15, 16]))
        k = int(rng.choice([5, 63, 64, 100, 700]))
        batch = int(rng.integers(1, 3))
        ba = 1 if rng.random() < 0.3 else batch
        cases.append((ba, 1, batch, m, n, k, int(rng.integers(2)), int(rng.integers(2)), 2))
    # Packed panels of 2 MiB or more, which go on huge pages: a whole huge page and a tail.
    cases += [(1, 1, 1, 13, 769, 700, acc, tb, 1) for acc, tb in ((0, 0), (1, 1))]
    return cases


def test_gemm_microkernel_matches_numpy(gemm_lib: ctypes.CDLL) -> None:
    """Every path (thin M, thin N, packed tiles with edges, K blocking, B prepacked) on odd
    sizes."""
    rng = np.random.default_rng(3)
    for ba, bb, batch, m, n, k, acc, tb, pack in _gemm_cases():
        a = rng.standard_normal((ba, m, k)).astype(np.float32)
        b = rng.standard_normal((bb, n, k) if tb else (bb, k, n)).astype(np.float32)
        c = rng.standard_normal((batch, m, n)).astype(np.float32)
        bm = np.swapaxes(b, 1, 2) if tb else b
        want = np.matmul(a.astype(np.float64), bm.astype(np.float64))
        want = np.broadcast_to(want, (batch, m, n)) + (c if acc else 0)
        gemm_lib.mm(
            a.ctypes.data, b.ctypes.data, c.ctypes.data, ba, bb, batch, m, n, k, acc, tb, pack
        )
        np.testing.assert_allclose(
            c,
            want,
            rtol=1e-4,
            atol=1e-4 * max(1, k) ** 0.5,
            err_msg=f"ba={ba} bb={bb} batch={batch} m={m} n={n} k={k} acc={acc} tb={tb} "
            f"pack={pack}",
        )


EPILOGUE_WRAPPER = r"""
#include "rung_runtime.h"
#include <omp.h>
/* steps: ops[i], index kinds[i], operands vs[i]; pack: 0 none, 1 B packed once, 2 thin. */
void mm_ep(const float *a, const float *b, float *c, int64_t m, int64_t n, int64_t k, int acc,
           int tb, int pack, int count, const int *ops, const int *kinds, const float **vs,
           int threads) {
  rung_gemm_epilogue ep = {count, {{0, 0, 0}}};
  for (int i = 0; i < count; ++i) ep.step[i] = (rung_gemm_step){ops[i], kinds[i], vs[i]};
  omp_set_num_threads(threads);
  if (pack == 2) {
    float *bt = rung_gemm_prepack_thin(b, n, k, tb);
    rung_matmul_float_thin(a, b, bt, c, 1, 1, m, n, k, acc, tb);
    rung_gemm_epilogue_apply(&ep, c, m, n);
    free(bt);
    return;
  }
  float *packed = pack ? rung_gemm_prepack_b(b, n, k, tb) : 0;
  rung_matmul_float_ep(a, b, packed, c, 1, 1, 1, m, n, k, acc, tb, &ep);
  free(packed);
}
"""

EP_OPS = ["add", "mul", "sub", "rsub", "div", "rdiv", "max", "rmax", "min", "rmin"]
EP_KINDS = ["scalar", "row", "col", "full"]


def _epilogue_reference(x: np.ndarray, steps: list[tuple[int, int, np.ndarray]]) -> np.ndarray:
    m, n = x.shape
    for op, kind, v in steps:
        w = v.reshape({0: (1, 1), 1: (m, 1), 2: (1, n), 3: (m, n)}[kind])
        name = EP_OPS[op]
        if name in ("max", "rmax"):
            x = np.maximum(x, w)
        elif name in ("min", "rmin"):
            x = np.minimum(x, w)
        else:
            x = {
                "add": x + w,
                "mul": x * w,
                "sub": x - w,
                "rsub": w - x,
                "div": x / w,
                "rdiv": w / x,
            }[name]
    return x


def _openmp_lib(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, name: str, source: str
) -> ctypes.CDLL:
    """A wrapper around the runtime built natively or without vectors (`request.param`),
    with OpenMP, loaded."""
    flags = ["-O3", "-march=native"] if request.param == "native" else ["-O2", "-DRUNG_GEMM_SCALAR"]
    tmp = tmp_path_factory.mktemp(name)
    return ctypes.CDLL(str(_build(tmp, name, source, [*flags, "-fopenmp"], True)))


@pytest.fixture(scope="module", params=["native", "scalar"])
def epilogue_lib(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    lib = _openmp_lib(request, tmp_path_factory, "gemm_ep", EPILOGUE_WRAPPER)
    lib.mm_ep.argtypes = (
        [ctypes.c_void_p] * 3 + [ctypes.c_int64] * 3 + [ctypes.c_int] * 4 + [ctypes.c_void_p] * 3
    ) + [ctypes.c_int]
    return lib


def test_gemm_epilogue_matches_numpy(epilogue_lib: ctypes.CDLL) -> None:
    """The epilogue's steps, each kind of operand, on every path of the product (tiles with
    edges and K blocks, dot tails, few rows, thin, packed B) on one and two threads: the
    same as the product followed by the steps in order."""
    rng = np.random.default_rng(11)
    shapes = [(m, n, k) for m in (1, 3, 8, 17, 64) for n in (1, 5, 49, 100) for k in (7, 300)]
    for t, (m, n, k) in enumerate(shapes):
        acc, tb, pack = t % 2, (t // 2) % 2, (0, 1, 0, 2)[t % 4]
        if pack == 2 and (m > 4 or n >= 16 or tb):
            pack = 0
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((n, k) if tb else (k, n)).astype(np.float32)
        count = int(rng.integers(1, 9))
        steps = []
        for _ in range(count):
            op, kind = int(rng.integers(len(EP_OPS))), int(rng.integers(len(EP_KINDS)))
            size = {0: 1, 1: m, 2: n, 3: m * n}[kind]
            v = rng.uniform(0.5, 1.5, size).astype(np.float32)  # divisors away from 0
            steps.append((op, kind, v * rng.choice([-1.0, 1.0], size).astype(np.float32)))
        ops = (ctypes.c_int * count)(*(s[0] for s in steps))
        kinds = (ctypes.c_int * count)(*(s[1] for s in steps))
        vs = (ctypes.c_void_p * count)(*(s[2].ctypes.data for s in steps))
        for threads in (1, 2):
            c = rng.standard_normal((m, n)).astype(np.float32)
            # The product alone (checked against numpy by the test above), then the steps in
            # numpy, one float32 op at a time: what the fused product must give.
            plain = c.copy()
            epilogue_lib.mm_ep(
                a.ctypes.data, b.ctypes.data, plain.ctypes.data, m, n, k, acc, tb, pack,
                0, ops, kinds, vs, threads,
            )  # fmt: skip
            want = _epilogue_reference(plain, steps)
            epilogue_lib.mm_ep(
                a.ctypes.data, b.ctypes.data, c.ctypes.data, m, n, k, acc, tb, pack,
                count, ops, kinds, vs, threads,
            )  # fmt: skip
            np.testing.assert_allclose(
                c,
                want,
                rtol=1e-6,
                atol=1e-6,
                err_msg=f"m={m} n={n} k={k} acc={acc} tb={tb} pack={pack} threads={threads} "
                f"steps={[(EP_OPS[o], EP_KINDS[kd]) for o, kd, _ in steps]}",
            )


SHIFT_WRAPPER = r"""
#include "rung_runtime.h"
#include <omp.h>
/* x [n,c,h,w], wt [o,c/g,kh,kw], y [n,o,oh,ow]; args {dh, dw, pad_top, pad_left, groups}. */
void conv_shift(const float *x, const float *wt, float *y, const int64_t *dims,
                const int64_t *args, int count, const int *ops, const int *kinds,
                const float **vs, int threads, int packed) {
  rung_gemm_epilogue ep = {count, {{0, 0, 0}}};
  for (int i = 0; i < count; ++i) ep.step[i] = (rung_gemm_step){ops[i], kinds[i], vs[i]};
  rung_tensor t[3] = {{(void *)x, 1, 4, {dims[0], dims[1], dims[2], dims[3]}},
                      {(void *)wt, 1, 4, {dims[4], dims[1] / args[4], dims[5], dims[6]}},
                      {(void *)y, 1, 4, {dims[0], dims[4], dims[7], dims[8]}}};
  omp_set_num_threads(threads);
  if (!packed) {
    rung_conv_shift_float(t, args, count ? &ep : 0);
    return;
  }
  float *panels = rung_conv_prepack_w(wt, dims[4], dims[1] / args[4] * dims[5] * dims[6], args[4]);
  rung_conv_shift_packed_float(t, args, count ? &ep : 0, panels);
  free(panels);
}
"""


def _conv_reference(
    x: np.ndarray,
    w: np.ndarray,
    dil: tuple[int, int],
    pads: tuple[int, int, int, int],
    groups: int,
    strides: tuple[int, int] = (1, 1),
) -> np.ndarray:
    """A 2-D conv in float64, tap by tap."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    sh, sw = strides
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (h + pads[0] + pads[2] - (kh - 1) * dil[0] - 1) // sh + 1
    ow = (wd + pads[1] + pads[3] - (kw - 1) * dil[1] - 1) // sw + 1
    y = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        for ky in range(kh):
            for kx in range(kw):
                y0, x0 = ky * dil[0], kx * dil[1]
                win = xp[:, g * cg : (g + 1) * cg, y0 : y0 + (oh - 1) * sh + 1 : sh]
                win = win[..., x0 : x0 + (ow - 1) * sw + 1 : sw]
                wk = w[g * og : (g + 1) * og, :, ky, kx].astype(np.float64)
                y[:, g * og : (g + 1) * og] += np.einsum("oc,nchw->nohw", wk, win)
    return y


@pytest.fixture(scope="module", params=["native", "scalar"])
def shift_lib(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    lib = _openmp_lib(request, tmp_path_factory, "conv_shift", SHIFT_WRAPPER)
    lib.conv_shift.argtypes = [ctypes.c_void_p] * 5 + [ctypes.c_int] + [ctypes.c_void_p] * 3
    lib.conv_shift.argtypes += [ctypes.c_int, ctypes.c_int]
    return lib


def test_conv_shift_matches_numpy(shift_lib: ctypes.CDLL) -> None:
    """`rung_conv_shift_float` against a float64 conv then the epilogue's steps in numpy:
    rows of whole vectors (16, 32, 48, 64, 80 wide, so tiles cross row ends) and flat runs
    (7 to 30 wide), 1 to 3 channel panels with the last one partial, one to three K blocks,
    groups, dilations, asymmetric pads, strides of 2 to 4 (with dilations, and wider than
    the kernel), a batch without epilogue, every step and operand kind, on one and two
    threads, with the weights packed on the call or beforehand."""
    rng = np.random.default_rng(17)
    geometries = [
        # n, c, h, w, o, kh, kw, dil, pads (top, left, bottom, right), groups[, strides]
        (1, 3, 16, 16, 8, 3, 3, (1, 1), (1, 1, 1, 1), 1),
        (1, 5, 7, 32, 20, 3, 3, (1, 1), (1, 1, 1, 1), 1),
        (1, 2, 5, 48, 9, 1, 3, (1, 1), (0, 1, 0, 1), 1),
        (1, 30, 9, 28, 17, 3, 3, (1, 1), (1, 1, 1, 1), 1),
        (1, 70, 6, 14, 8, 3, 3, (1, 1), (1, 1, 1, 1), 1),
        (1, 4, 11, 7, 6, 5, 5, (1, 1), (2, 2, 2, 2), 1),
        (1, 6, 13, 30, 12, 3, 2, (2, 3), (0, 2, 3, 0), 2),
        (2, 4, 9, 20, 10, 3, 3, (1, 1), (1, 0, 1, 2), 2),
        (1, 3, 1, 16, 8, 3, 3, (1, 1), (1, 1, 1, 1), 1),
        (1, 7, 5, 64, 13, 3, 3, (1, 1), (1, 1, 1, 1), 1),
        (1, 40, 3, 80, 10, 3, 3, (1, 1), (1, 1, 1, 1), 1),
        (2, 6, 7, 32, 16, 3, 3, (1, 1), (1, 1, 1, 1), 2),
        (1, 3, 21, 64, 12, 7, 7, (1, 1), (3, 3, 3, 3), 1, (2, 2)),
        (1, 5, 9, 33, 9, 3, 3, (1, 1), (1, 1, 0, 0), 1, (2, 2)),
        (2, 4, 10, 31, 8, 3, 3, (2, 1), (2, 0, 1, 2), 2, (3, 2)),
        (1, 2, 8, 64, 6, 2, 2, (1, 1), (0, 0, 0, 0), 1, (4, 4)),
        (1, 4, 11, 29, 10, 3, 3, (1, 1), (1, 1, 1, 1), 1, (2, 2)),
    ]
    for t, (n, c, h, wd, o, kh, kw, dil, pads, groups, *st) in enumerate(geometries):
        strides = st[0] if st else (1, 1)
        x = rng.standard_normal((n, c, h, wd)).astype(np.float32)
        w = rng.standard_normal((o, c // groups, kh, kw)).astype(np.float32)
        conv = _conv_reference(x, w, dil, pads, groups, strides)
        oh, ow = conv.shape[2:]
        m, cols = o, oh * ow
        count = 0 if n > 1 else 1 + t % 8
        steps = []
        for _ in range(count):
            op, kind = int(rng.integers(len(EP_OPS))), int(rng.integers(len(EP_KINDS)))
            size = {0: 1, 1: m, 2: cols, 3: m * cols}[kind]
            v = rng.uniform(0.5, 1.5, size).astype(np.float32)
            steps.append((op, kind, v * rng.choice([-1.0, 1.0], size).astype(np.float32)))
        ops = (ctypes.c_int * max(count, 1))(*(st[0] for st in steps))
        kinds = (ctypes.c_int * max(count, 1))(*(st[1] for st in steps))
        vs = (ctypes.c_void_p * max(count, 1))(*(st[2].ctypes.data for st in steps))
        dims = np.array([n, c, h, wd, o, kh, kw, oh, ow], np.int64)
        args = np.array([dil[0], dil[1], pads[0], pads[1], groups, *strides], np.int64)
        want = conv.astype(np.float32)
        if steps:
            want = _epilogue_reference(want.reshape(m, cols), steps).reshape(conv.shape)
        for threads, packed in ((1, 0), (2, 0), (1, 1), (2, 1)):
            y = np.full(conv.shape, np.nan, np.float32)
            shift_lib.conv_shift(
                x.ctypes.data, w.ctypes.data, y.ctypes.data, dims.ctypes.data,
                args.ctypes.data, count, ops, kinds, vs, threads, packed,
            )  # fmt: skip
            np.testing.assert_allclose(
                y,
                want,
                rtol=1e-3,  # a float32 conv's rounding, amplified by the steps' divisions
                atol=1e-3,
                err_msg=f"geometry {t} threads={threads} packed={packed} "
                f"steps={[(EP_OPS[op], EP_KINDS[kd]) for op, kd, _ in steps]}",
            )


SANITIZED = r"""
#include "rung_runtime.h"
static uint64_t s = 88172645463325252ull;
static float rnd(void) {
  s ^= s << 13; s ^= s >> 7; s ^= s << 17;
  return (float)(s % 2001) / 1000.0f - 1.0f;
}
int main(void) {
  static const int64_t sizes[] = {0, 1, 3, 4, 5, 8, 9, 17, 47, 49, 97, 300};
  int bad = 0;
  for (int t = 0; t < 240; ++t) {
    int64_t m = sizes[t % 12], n = sizes[(t / 12) % 12], k = sizes[(t * 7) % 12];
    if (t % 9 == 0) k = 600;
    int64_t batch = 1 + t % 2, bb = t % 3 == 0 ? 1 : batch;
    int acc = t % 2, tb = (t / 2) % 2;
    float *a = malloc(sizeof(float) * (size_t)(batch * m * k + 1));
    float *b = malloc(sizeof(float) * (size_t)(bb * k * n + 1));
    float *c = malloc(sizeof(float) * (size_t)(batch * m * n + 1));
    double *want = malloc(sizeof(double) * (size_t)(batch * m * n + 1));
    for (int64_t i = 0; i < batch * m * k; ++i) a[i] = rnd();
    for (int64_t i = 0; i < bb * k * n; ++i) b[i] = rnd();
    for (int64_t i = 0; i < batch * m * n; ++i) { c[i] = rnd(); want[i] = acc ? c[i] : 0.0; }
    for (int64_t p = 0; p < batch; ++p)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
          for (int64_t q = 0; q < k; ++q) {
            const float *bp = b + (bb == 1 ? 0 : p) * k * n;
            const double y = tb ? bp[j * k + q] : bp[q * n + j];
            want[(p * m + i) * n + j] += (double)a[(p * m + i) * k + q] * y;
          }
    if (batch == 1 && t % 5 == 2) { /* with an epilogue of each kind of operand */
      float *row = malloc(sizeof(float) * (size_t)(m + 1));
      float *col = malloc(sizeof(float) * (size_t)(n + 1));
      float *full = malloc(sizeof(float) * (size_t)(m * n + 1));
      const float zero = 0.0f;
      for (int64_t i = 0; i < m; ++i) row[i] = rnd();
      for (int64_t j = 0; j < n; ++j) col[j] = rnd();
      for (int64_t i = 0; i < m * n; ++i) full[i] = rnd();
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double x = (want[i * n + j] + row[i]) * col[j];
          x = x > 0.0 ? x : 0.0;
          want[i * n + j] = full[i * n + j] - x;
        }
      const rung_gemm_epilogue ep = {4, {{RUNG_EP_ADD, RUNG_EP_ROW, row},
                                         {RUNG_EP_MUL, RUNG_EP_COL, col},
                                         {RUNG_EP_MAX, RUNG_EP_SCALAR, &zero},
                                         {RUNG_EP_RSUB, RUNG_EP_FULL, full}}};
      float *packed = bb == 1 && t % 2 ? rung_gemm_prepack_b(b, n, k, tb) : 0;
      rung_matmul_float_ep(a, b, packed, c, 1, bb, 1, m, n, k, acc, tb, &ep);
      free(packed); free(row); free(col); free(full);
    } else if (bb == 1 && t % 4 == 3) {
      float *bt = rung_gemm_prepack_thin(b, n, k, tb);
      rung_matmul_float_thin(a, b, bt, c, batch, batch, m, n, k, acc, tb);
      free(bt);
    } else if (bb == 1 && t % 4 == 1) {
      float *packed = rung_gemm_prepack_b(b, n, k, tb);
      rung_matmul_float_packed(a, b, packed, c, batch, batch, m, n, k, acc, tb);
      free(packed);
    } else if (tb) rung_matmul_float_bt(a, b, c, batch, bb, batch, m, n, k, acc);
    else rung_matmul_float(a, b, c, batch, bb, batch, m, n, k, acc);
    for (int64_t i = 0; i < batch * m * n; ++i)
      if (fabs(c[i] - want[i]) > 1e-3) { ++bad; break; }
    free(a); free(b); free(c); free(want);
  }
  printf("%d bad\n", bad);
  return bad != 0;
}
"""


@pytest.mark.parametrize("variant", ["native", "avx2", "scalar"])
def test_gemm_microkernel_sanitized(tmp_path: Path, variant: str) -> None:
    """No out-of-bounds access, misalignment or overflow, in each compiled form."""
    if variant == "avx2" and "avx2" not in Path("/proc/cpuinfo").read_text(errors="ignore"):
        pytest.skip("no AVX2 here")
    isa = {
        "native": ["-march=native"],
        "avx2": ["-mavx2", "-mfma"],
        "scalar": ["-DRUNG_GEMM_SCALAR"],
    }
    flags = [
        "-O1",
        "-g",
        "-fsanitize=address,undefined",
        "-fno-sanitize-recover=all",
        *isa[variant],
    ]
    try:
        exe = _build(tmp_path, "check", SANITIZED, flags, False)
    except subprocess.CalledProcessError as err:  # a toolchain without the sanitizer runtimes
        if b"asan" in err.stderr or b"ubsan" in err.stderr:
            pytest.skip("no sanitizer runtime")
        raise
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == "0 bad"


def test_run_time_batch() -> None:
    """A `?` batch: im2col, the weight repeat of grouped convs and pooling take run-time sizes."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4, 9, 9])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 6, 9, 9])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, ["N", 3])
    inits = [
        numpy_helper.from_array(rand(6, 2, 3, 3, seed=1), "w"),
        numpy_helper.from_array(rand(3, 6 * 4 * 4, seed=2), "fc"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], group=2, pads=[1, 1, 1, 1]),
        helper.make_node("MaxPool", ["c"], ["p"], kernel_shape=[3, 3], strides=[2, 2]),
        helper.make_node("AveragePool", ["c"], ["y"], kernel_shape=[2, 2], pads=[1, 1, 0, 0]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Gemm", ["f", "fc"], ["z"], transB=1),
    ]
    model = helper.make_model(
        helper.make_graph(nodes, "batch", [x], [y, z], inits),
        opset_imports=[helper.make_opsetid("", 21)],
    )
    model.ir_version = 10
    sess = InferenceSession(model, level="kernel")
    ref = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for batch in (1, 3):
        feed = {"x": rand(batch, 4, 9, 9, seed=batch)}
        for got, want in zip(sess.run(None, feed), ref.run(None, feed), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
