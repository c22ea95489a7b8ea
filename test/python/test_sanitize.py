"""Generated C under AddressSanitizer and UndefinedBehaviorSanitizer, on ONNX node test cases.

A sanitizer build cannot be loaded into Python, so each case's C is linked
with `rung_harness.c` into an executable (`rung.runtime.native.run_in_harness`)
that reads raw inputs, runs the model twice (the scratch arena filled with a
different byte pattern each time) and writes raw outputs. A test passes only
with no sanitizer finding (leaks included), identical outputs from both runs,
and outputs matching the case's expected ones within its tolerances.

SAMPLE is a fixed list spanning the op families the kernel level lowers; the
`kernel-sanitized` level runs every case this way (`rung conformance --level
kernel-sanitized`, the long sanitizer run; models with sequences, optionals or
strings as a sanitized library in a process of its own), and its tests are here
too.
A case that does not lower to the kernel level yet is skipped with the
reason, but `test_enough_of_the_sample_ran` fails if fewer than MIN_RAN of
the sample ran. The first tests check that the harness really catches each
kind of bug, on deliberately broken C.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from rung.lowering.kernel_to_c import CProgram, generate_c
from rung.runtime import InferenceSession, native
from rung.runtime.conformance import Case, collect_cases, compare, run_case
from rung.runtime.levels import (
    EvaluationError,
    UnsupportedOpError,
    get_level,
    register_level,
    unregister_level,
)
from rung.runtime.native import SanitizerError
from rung.runtime.session import NodeArg, check_value

SAMPLE = [
    # elementwise arithmetic, integer wrap-around, broadcasting
    "test_add_bcast",
    "test_mul_uint64",
    "test_div_bcast",
    "test_pow_types_int64_int64",
    "test_mod_mixed_sign_int32",
    "test_sqrt_example",
    "test_max_example",
    "test_sum_example",
    # comparisons, logic, bits
    "test_greater_equal_bcast",
    "test_and_bcast4v3d",
    "test_where_long_example",
    "test_bitshift_right_int64",
    "test_bitwise_xor_i32_2d",
    # casts (half and narrower types), clipping
    "test_cast_FLOAT_to_FLOAT16",
    "test_cast_BFLOAT16_to_FLOAT",
    "test_cast_FLOAT_to_FLOAT8E4M3FN",
    "test_cast_no_saturate_FLOAT_to_FLOAT8E5M2",
    "test_cast_FLOAT4E2M1_to_FLOAT",
    "test_cast_FLOAT_to_INT4",
    "test_dequantizelinear_e4m3fn",
    "test_clip_splitbounds",
    # activations
    "test_leakyrelu_example",
    "test_selu_default",
    "test_prelu_broadcast",
    "test_gelu_tanh_1",
    "test_hardswish",
    # softmax
    "test_softmax_axis_0",
    "test_logsoftmax_large_number",
    # reductions
    "test_reduce_sum_keepdims_random",
    "test_reduce_max_do_not_keepdims_example",
    "test_reduce_log_sum_exp_keepdims_random",
    "test_argmax_no_keepdims_example",
    "test_argmin_keepdims_example",
    # matmul, gemm
    "test_matmul_4d_1d",
    "test_gemm_all_attributes",
    # convolution, pooling, normalization
    "test_conv_with_strides_and_asymmetric_padding",
    "test_basic_conv_with_padding",
    "test_averagepool_2d_pads_count_include_pad",
    "test_maxpool_2d_ceil",
    "test_globalaveragepool",
    "test_batchnorm_example",
    # layout and indexing
    "test_transpose_all_permutations_3",
    "test_slice_neg_steps",
    "test_concat_3d_axis_negative_1",
    "test_gather_2d_indices",
    "test_gather_elements_1",
    "test_reshape_negative_extended_dims",
    "test_expand_dim_changed",
    "test_edge_pad",
    "test_scatter_elements_with_axis",
    "test_resize_upsample_scales_linear",
    # run-time shapes (heap buffers), sorting, scans, recurrences, control flow
    "test_nonzero_example",
    "test_range_int32_type_negative_delta",
    "test_top_k",
    "test_cumsum_2d_axis_1",
    "test_layer_normalization_2d_axis0",
    "test_convtranspose",
    "test_lstm_defaults",
    "test_if",
    "test_loop11",
    # no kernel lowering yet: shows up as a skip with the reason
    "test_compress_0",
]

MIN_RAN = 60
"""How many of SAMPLE must lower to the kernel level and run (all but test_compress_0, today)."""


# ---- the harness catches bugs ----------------------------------------------------------------

F = TensorProto.FLOAT


def add_relu(weight: np.ndarray | None = None) -> onnx.ModelProto:
    shape = [2, 3] if weight is None else list(weight.shape)
    inputs = [helper.make_tensor_value_info("x", F, shape)]
    inits = []
    if weight is None:
        inputs.append(helper.make_tensor_value_info("w", F, shape))
    else:
        inits.append(numpy_helper.from_array(weight, "w"))
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["s"]), helper.make_node("Relu", ["s"], ["y"])],
        "add_relu",
        inputs,
        [helper.make_tensor_value_info("y", F, shape)],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


@functools.cache
def add_relu_program() -> CProgram:
    return generate_c(InferenceSession(add_relu(), level="kernel").module, "model")


def broken(at_start: str = "", unused_arena_read: bool = False) -> CProgram:
    """add_relu's program with C injected at the start of `_run`, or made to read arena
    memory it never wrote (64 bytes added past its plan) into its output."""
    program = add_relu_program()
    source = program.source
    assert "  int rc = 0;\n" in source and "\ndone:\n" in source
    source = source.replace("  int rc = 0;\n", "  int rc = 0;\n" + at_start + "\n", 1)
    arena = program.arena_bytes
    if unused_arena_read:
        read = f"  if (!rc) ((float *)outputs[0].data)[0] += *(float *)(arena + {arena});\n"
        source = source.replace("\ndone:\n", "\n" + read + "done:\n", 1)
        arena += 64
        source, n = re.subn(
            r"(_arena_bytes\(void\) \{ return )\d+;", rf"\g<1>{arena};", source, count=1
        )
        assert n == 1
    return dataclasses.replace(program, source=source, arena_bytes=arena)


def xw() -> list[np.ndarray]:
    return [np.arange(6, dtype=np.float32).reshape(2, 3) - 2, np.ones((2, 3), np.float32)]


def test_a_clean_program_passes() -> None:
    x, w = xw()
    got = native.run_in_harness(add_relu_program(), [x, w])
    np.testing.assert_array_equal(got[0], np.maximum(x + w, 0))


FINDINGS = [
    (
        dict(at_start="  { volatile float *p = (float *)inputs[0].data; p[6] += 1.0f; }"),
        "AddressSanitizer: heap-buffer-overflow",
        r"AddressSanitizer: heap-buffer-overflow model\.c:\d+ in model_run$",
    ),
    (
        dict(at_start="  { void *volatile lost = malloc(24); (void)lost; }"),
        "LeakSanitizer: detected memory leaks",
        r"LeakSanitizer: \d+ byte\(s\) leaked in \d+ allocation\(s\)\.$",
    ),
    (
        dict(at_start="  { volatile int32_t big = INT32_MAX; big = big + 1; }"),
        "runtime error: signed integer overflow",
        r"model\.c:\d+:\d+: runtime error: signed integer overflow: 2147483647 \+ 1 ",
    ),
    (
        dict(unused_arena_read=True),
        "run 2 gave different outputs than run 1",
        r"rung_harness: run 2 gave different outputs than run 1",
    ),
]
FINDING_IDS = ["overflow", "leak", "undefined", "uninitialized-arena"]


@pytest.mark.parametrize(("inject", "finding", "first_line"), FINDINGS, ids=FINDING_IDS)
def test_the_harness_reports_findings(inject: dict, finding: str, first_line: str) -> None:
    """The full report is in the error; its first line says what was found, and where,
    without addresses or folders (a scoreboard shows only that line)."""
    with pytest.raises(SanitizerError) as info:
        native.run_in_harness(broken(**inject), xw())
    assert finding in str(info.value)
    head = str(info.value).splitlines()[0]
    assert head.startswith("the sanitizer build of 'model' found a problem: ")
    assert re.search(first_line, head), head
    assert "0x" not in head and "/" not in head


def test_model_errors_are_evaluation_errors() -> None:
    program = broken(at_start='  return rung_error("test", "refused on purpose");')
    with pytest.raises(EvaluationError, match="test: refused on purpose"):
        native.run_in_harness(program, xw())


def test_weights_side_file_in_the_harness() -> None:
    w = np.random.default_rng(5).standard_normal((32, 64)).astype(np.float32)  # 8 KiB
    program = generate_c(InferenceSession(add_relu(w), level="kernel").module, "heavy")
    assert program.weights
    x = np.random.default_rng(6).standard_normal((32, 64)).astype(np.float32)
    np.testing.assert_array_equal(native.run_in_harness(program, [x])[0], np.maximum(x + w, 0))


# ---- the kernel-sanitized level (`rung conformance --level kernel-sanitized`) ----------------


def add_relu_case() -> Case:
    x, w = xw()
    data = [([x, w], [np.maximum(x + w, 0)])]
    return Case("test_add_relu", "Add", add_relu().SerializeToString(), data, 1e-6, 1e-6)


def test_the_kernel_sanitized_level_runs_cases_in_the_harness(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ran: list[CProgram] = []
    real = native.run_in_harness

    def spy(program: CProgram, inputs: list[object]) -> list[np.ndarray]:
        ran.append(program)
        return real(program, inputs)

    monkeypatch.setattr(native, "run_in_harness", spy)
    assert get_level("kernel-sanitized").from_level == "kernel"
    assert run_case(add_relu_case(), "kernel-sanitized") == {"status": "pass"}
    assert len(ran) == 1


def test_rung_levels_lists_it(capsys: pytest.CaptureFixture[str]) -> None:
    from rung.tools.cli import main

    assert main(["levels"]) == 0
    lines = capsys.readouterr().out.splitlines()
    names = [line.split()[0] for line in lines]
    assert names[:3] == ["onnx", "core", "kernel"] and "kernel-sanitized" in names
    columns = {len(line) - len(line.split(maxsplit=1)[1]) for line in lines}
    assert len(columns) == 1, "the descriptions do not start in one column"


def test_a_finding_fails_the_case_with_what_was_found() -> None:
    """On the scoreboard a finding is its own category, its message the report's first
    line: here a level running the kernel C with signed overflow injected."""
    program = broken(at_start=FINDINGS[2][0]["at_start"])
    register_level(
        "test-overflowing",
        from_level="kernel",
        lowering=None,
        evaluator=lambda module, inputs: native.run_in_harness(program, inputs),
    )
    try:
        result = run_case(add_relu_case(), "test-overflowing")
    finally:
        unregister_level("test-overflowing")
    assert result["status"] == "fail" and result["category"] == "sanitizer finding"
    assert re.fullmatch(
        r"the sanitizer build of 'model' found a problem: model\.c:\d+:\d+: runtime error: "
        r"signed integer overflow: .*",
        result["message"],
    ), result["message"]


def sequence_program(at_start: str = "") -> CProgram:
    """SequenceConstruct(x, w) (a sequence output, which the harness cannot pass), with C
    injected at the start of `_run`."""
    graph = helper.make_graph(
        [helper.make_node("SequenceConstruct", ["x", "w"], ["s"])],
        "seq",
        [helper.make_tensor_value_info(n, F, [2, 3]) for n in ("x", "w")],
        [helper.make_tensor_sequence_value_info("s", F, [2, 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    program = generate_c(InferenceSession(model, level="kernel").module, "model")
    assert "  int rc = 0;\n" in program.source
    source = program.source.replace("  int rc = 0;\n", "  int rc = 0;\n" + at_start + "\n", 1)
    return dataclasses.replace(program, source=source)


def test_sequences_run_as_a_sanitized_library() -> None:
    x, w = xw()
    [got] = native.run_sanitized_library(sequence_program(), [x, w])
    assert isinstance(got, list) and len(got) == 2
    np.testing.assert_array_equal(got[0], x)
    np.testing.assert_array_equal(got[1], w)
    [case] = collect_cases("^test_sequence_insert_at_back$")
    assert run_case(case, "kernel-sanitized") == {"status": "pass"}


@pytest.mark.parametrize(
    ("at_start", "first_line"),
    [
        (
            "  { char *volatile p = malloc(4); p[4] = 1; free(p); }",
            r"AddressSanitizer: heap-buffer-overflow model\.c:\d+ in model_run$",
        ),
        (
            FINDINGS[2][0]["at_start"],
            r"model\.c:\d+:\d+: runtime error: signed integer overflow",
        ),
    ],
    ids=["overflow", "undefined"],
)
def test_the_sanitized_library_reports_findings(at_start: str, first_line: str) -> None:
    with pytest.raises(SanitizerError) as info:
        native.run_sanitized_library(sequence_program(at_start), xw())
    head = str(info.value).splitlines()[0]
    assert re.search(first_line, head), head


def test_model_errors_of_the_sanitized_library_are_evaluation_errors() -> None:
    program = sequence_program('  return rung_error("test", "refused on purpose");')
    with pytest.raises(EvaluationError, match="test: refused on purpose"):
        native.run_sanitized_library(program, xw())


# ---- ONNX node test cases --------------------------------------------------------------------


@dataclass
class Prepared:
    case: Case | None
    program: CProgram | None = None
    build: Future | None = None
    inputs: list[NodeArg] | None = None
    skip: str | None = None


@functools.cache
def prepared() -> dict[str, Prepared]:
    """Each sample case lowered to C, its harness building in the background (cached)."""
    cases = {c.name: c for c in collect_cases("^(" + "|".join(SAMPLE) + ")$")}
    pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 2)
    out: dict[str, Prepared] = {}
    for name in SAMPLE:
        case = cases.get(name)
        if case is None:
            out[name] = Prepared(None)
            continue
        try:
            session = InferenceSession(onnx.ModelProto.FromString(case.model), level="kernel")
        except UnsupportedOpError as err:
            out[name] = Prepared(case, skip=f"not lowered to kernel yet: {err}")
            continue
        program = generate_c(session.module, "model")
        build = pool.submit(native.cached_harness, program)
        out[name] = Prepared(case, program, build, session.get_inputs())
    pool.shutdown(wait=False)
    return out


@pytest.mark.parametrize("name", SAMPLE)
def test_node_case_under_sanitizers(name: str) -> None:
    p = prepared()[name]
    assert p.case is not None, f"'{name}' is not an ONNX node test case of this onnx version"
    if p.skip is not None:
        pytest.skip(p.skip)
    assert p.program is not None and p.build is not None and p.inputs is not None
    p.build.result()  # the harness built
    model = onnx.ModelProto.FromString(p.case.model)
    graph_inputs = [vi.name for vi in model.graph.input]
    for inputs, expected in p.case.data_sets:
        feed = dict(zip(graph_inputs, inputs, strict=False))
        args = [check_value(arg, feed[arg.name]) for arg in p.inputs]
        got = native.run_in_harness(p.program, args)
        assert len(got) == len(expected)
        for i, (e, g) in enumerate(zip(expected, got, strict=True)):
            verdict = compare(e, g, p.case.rtol, p.case.atol, f"output {i}")
            assert verdict is None, verdict


def test_enough_of_the_sample_ran() -> None:
    skipped = {n: p.skip for n, p in prepared().items() if p.skip is not None}
    ran = len(SAMPLE) - len(skipped)
    assert ran >= MIN_RAN, f"only {ran} of {len(SAMPLE)} sample cases ran; skipped: {skipped}"
