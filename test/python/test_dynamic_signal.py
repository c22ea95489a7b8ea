"""DFT and STFT over inputs whose every dim is symbolic, at levels core and kernel.

With `?` dims the compiler knows neither the size of the signal axis nor
whether the last dim is 1 (real) or 2 (complex): the DFT matrix is computed
at run time and the last dim is checked by the run. Each model is compiled
once and run on several sizes (real and complex signals through the same
library) against ONNX's reference evaluator; a last dim other than 1 or 2, an
empty axis or a window that does not fit must fail the run with an error
naming the node. The dynamic variants of ONNX's own DFT and STFT cases pass.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from rung.errors import RungError
from rung.runtime import InferenceSession
from rung.runtime.conformance import Case, collect_cases, run_case

F, I64 = TensorProto.FLOAT, TensorProto.INT64
LEVELS = ["core", "kernel"]


def _symbolic(name: str, elem: int, rank: int) -> onnx.ValueInfoProto:
    """A value of `rank` dims, every one symbolic."""
    return helper.make_tensor_value_info(name, elem, [f"{name}_{i}" for i in range(rank)])


def _model(
    node: onnx.NodeProto,
    inputs: list[onnx.ValueInfoProto],
    rank_out: int,
    inits: list[onnx.TensorProto] | None = None,
    opset: int = 20,
) -> onnx.ModelProto:
    graph = helper.make_graph(
        [node], "g", inputs, [_symbolic(node.output[0], F, rank_out)], inits or []
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _constant(name: str, value: int) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(value, np.int64), name)


class _Compiled:
    """One model at both levels, checked against ONNX's reference evaluator."""

    def __init__(self, model: onnx.ModelProto) -> None:
        self.sessions = [InferenceSession(model, level=level) for level in LEVELS]
        self.reference = ReferenceEvaluator(model)

    def check(self, feed: dict[str, np.ndarray]) -> None:
        (want,) = self.reference.run(None, feed)
        for level, session in zip(LEVELS, self.sessions, strict=True):
            (got,) = session.run(None, feed)
            assert got.dtype == np.float32, level
            assert got.shape == want.shape, f"{level}: {got.shape}, reference {want.shape}"
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=level)

    def fails(self, feed: dict[str, np.ndarray], message: str) -> None:
        for session in self.sessions:
            with pytest.raises(RungError, match=message):
                session.run(None, feed)


def _signal(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# ---- DFT --------------------------------------------------------------------------------------

SIZES = [(2, 6, 3, 1), (1, 5, 4, 2), (3, 8, 2, 2), (2, 1, 5, 1)]


@pytest.mark.parametrize(("inverse", "onesided"), [(0, 0), (0, 1), (1, 0), (1, 1)])
@pytest.mark.parametrize("axis", [1, -2])
def test_dft_of_symbolic_dims(inverse: int, onesided: int, axis: int) -> None:
    """One library per model serves every size and both a real and a complex signal."""
    node = helper.make_node(
        "DFT", ["x", "", "axis"], ["y"], name="dft", inverse=inverse, onesided=onesided
    )
    model = _model(node, [_symbolic("x", F, 4)], 4, [_constant("axis", axis)])
    compiled = _Compiled(model)
    for seed, shape in enumerate(SIZES):
        if inverse and onesided and shape[axis] == 1:
            continue  # irfft of one bin has no samples (checked below)
        compiled.check({"x": _signal(shape, seed)})


@pytest.mark.parametrize(("inverse", "onesided"), [(0, 0), (0, 1), (1, 1)])
def test_dft_with_a_run_time_length(inverse: int, onesided: int) -> None:
    """dft_length as an input cuts or pads the signal; it must be positive."""
    node = helper.make_node(
        "DFT", ["x", "n", "axis"], ["y"], name="dft", inverse=inverse, onesided=onesided
    )
    inputs = [_symbolic("x", F, 3), helper.make_tensor_value_info("n", I64, [])]
    compiled = _Compiled(_model(node, inputs, 3, [_constant("axis", 1)]))
    for seed, (shape, n) in enumerate([((2, 8, 1), 5), ((1, 6, 2), 10), ((3, 7, 2), 7)]):
        compiled.check({"x": _signal(shape, seed), "n": np.array(n, np.int64)})
    bad = {"x": _signal((1, 4, 1), 0), "n": np.array(0, np.int64)}
    compiled.fails(bad, "node 'dft': DFT: dft_length must be positive")


@pytest.mark.parametrize(("inverse", "onesided"), [(0, 0), (0, 1), (1, 1)])
def test_dft_with_a_constant_length_of_symbolic_dims(inverse: int, onesided: int) -> None:
    """A constant dft_length over a `?` axis: the bins are known, the entries are not."""
    node = helper.make_node(
        "DFT", ["x", "n", "axis"], ["y"], name="dft", inverse=inverse, onesided=onesided
    )
    inits = [_constant("n", 7), _constant("axis", 1)]
    compiled = _Compiled(_model(node, [_symbolic("x", F, 3)], 3, inits))
    for seed, shape in enumerate([(2, 8, 1), (1, 4, 2), (3, 7, 2)]):
        compiled.check({"x": _signal(shape, seed)})


@pytest.mark.parametrize("onesided", [0, 1])
def test_dft_along_a_run_time_axis_of_symbolic_dims(onesided: int) -> None:
    node = helper.make_node("DFT", ["x", "", "axis"], ["y"], name="dft", onesided=onesided)
    inputs = [_symbolic("x", F, 4), helper.make_tensor_value_info("axis", I64, [])]
    compiled = _Compiled(_model(node, inputs, 4))
    for seed, shape in enumerate([(2, 4, 6, 1), (3, 5, 2, 2)]):
        for axis in (0, 1, 2, -2, -3):
            compiled.check({"x": _signal(shape, seed), "axis": np.array(axis, np.int64)})
    bad = {"x": _signal((2, 4, 6, 1), 0), "axis": np.array(3, np.int64)}
    compiled.fails(bad, "node 'dft': DFT: the axis must be one of")


def test_dft_exact_bins_stay_exact() -> None:
    """The run-time matrix reduces angles and makes quarter turns exact, as the constant
    one does: the imaginary parts of the DC and Nyquist bins of a real signal are 0."""
    node = helper.make_node("DFT", ["x", "", "axis"], ["y"], onesided=1)
    model = _model(node, [_symbolic("x", F, 3)], 3, [_constant("axis", 1)])
    x = np.arange(8, dtype=np.float32).reshape(1, 8, 1) * 10
    for level in LEVELS:
        (got,) = InferenceSession(model, level=level).run(None, {"x": x})
        assert got[0, 0, 1] == 0.0 and got[0, 4, 1] == 0.0
        np.testing.assert_array_equal(got[0, [0, 4], 0], [280.0, -40.0])


def test_dynamic_dft_equals_the_static_one_at_core() -> None:
    """At core (numpy's cos and sin on both sides) the run-time matrix is the constant
    matrix entry for entry."""
    for inverse, onesided in [(0, 0), (0, 1), (1, 0), (1, 1)]:
        x = _signal((2, 12, 3, 1 if onesided and not inverse else 2), 5)
        node = helper.make_node("DFT", ["x", "", "axis"], ["y"], inverse=inverse, onesided=onesided)
        static = helper.make_tensor_value_info("x", F, list(x.shape))
        results = []
        for x_info in (static, _symbolic("x", F, 4)):
            model = _model(node, [x_info], 4, [_constant("axis", 1)])
            results.append(InferenceSession(model, level="core").run(None, {"x": x})[0])
        np.testing.assert_array_equal(results[1], results[0])


@pytest.mark.parametrize("level", LEVELS)
def test_dft_checks_its_last_dim_and_samples(level: str) -> None:
    node = helper.make_node("DFT", ["x", "", "axis"], ["y"], name="dft", inverse=1, onesided=1)
    model = _model(node, [_symbolic("x", F, 3)], 3, [_constant("axis", 1)])
    session = InferenceSession(model, level=level)
    for last in (3, 0):
        with pytest.raises(
            RungError, match=r"node 'dft': DFT: the last dim must be 1 \(real\) or 2 \(complex\)"
        ):
            session.run(None, {"x": np.zeros((2, 4, last), np.float32)})
    with pytest.raises(RungError, match="node 'dft': DFT: no samples along axis 1"):
        session.run(None, {"x": np.zeros((2, 1, 2), np.float32)})


# ---- STFT -------------------------------------------------------------------------------------


def _stft_model(window: bool, length: str | None, onesided: int = 1) -> onnx.ModelProto:
    """STFT of a symbolic signal, a run-time step, an optional symbolic window, and a
    frame_length that is absent, a constant 16 ("constant") or an input ("input")."""
    names = ["s", "step", "w" if window else "", "len" if length else ""]
    while names[-1] == "":
        names.pop()
    inputs = [_symbolic("s", F, 3), helper.make_tensor_value_info("step", I64, [])]
    if window:
        inputs.append(_symbolic("w", F, 1))
    if length == "input":
        inputs.append(helper.make_tensor_value_info("len", I64, []))
    inits = [_constant("len", 16)] if length == "constant" else []
    node = helper.make_node("STFT", names, ["y"], name="stft", onesided=onesided)
    return _model(node, inputs, 4, inits, opset=17)


@pytest.mark.parametrize(
    ("window", "length", "onesided"),
    [(True, None, 1), (True, "constant", 0), (True, "input", 1), (False, "input", 0)],
)
def test_stft_of_symbolic_dims(window: bool, length: str | None, onesided: int) -> None:
    compiled = _Compiled(_stft_model(window, length, onesided))
    runs = [((1, 64, 1), 8, 16), ((2, 50, 2), 5, 16), ((1, 40, 2), 3, 16)]
    if length != "constant":
        runs.append(((2, 30, 1), 4, 9))  # another frame length
    for seed, (shape, step, frame) in enumerate(runs):
        feed = {"s": _signal(shape, seed), "step": np.array(step, np.int64)}
        if window:
            feed["w"] = np.hanning(frame).astype(np.float32)
        if length == "input":
            feed["len"] = np.array(frame, np.int64)
        compiled.check(feed)


@pytest.mark.parametrize("level", LEVELS)
def test_stft_checks_its_last_dim_and_window(level: str) -> None:
    session = InferenceSession(_stft_model(True, "input"), level=level)
    feed = {
        "s": np.zeros((1, 32, 1), np.float32),
        "step": np.array(4, np.int64),
        "w": np.ones(8, np.float32),
        "len": np.array(8, np.int64),
    }
    session.run(None, feed)
    with pytest.raises(
        RungError, match=r"node 'stft': STFT: the last dim must be 1 \(real\) or 2 \(complex\)"
    ):
        session.run(None, {**feed, "s": np.zeros((1, 32, 3), np.float32)})
    with pytest.raises(RungError, match="STFT: the window's length differs from frame_length"):
        session.run(None, {**feed, "len": np.array(6, np.int64)})
    with pytest.raises(RungError, match="STFT: frame_length must be positive"):
        session.run(None, {**feed, "len": np.array(0, np.int64)})


@pytest.mark.parametrize("level", LEVELS)
def test_stft_with_an_empty_symbolic_window_fails(level: str) -> None:
    session = InferenceSession(_stft_model(True, None), level=level)
    feed = {"s": np.zeros((1, 32, 1), np.float32), "step": np.array(4, np.int64)}
    with pytest.raises(RungError, match="node 'stft': STFT: a frame must not be empty"):
        session.run(None, {**feed, "w": np.ones(0, np.float32)})


# ---- ONNX's own cases -------------------------------------------------------------------------

_ONNX_CASES = [
    "test_dft", "test_dft_axis", "test_dft_axis_opset19", "test_dft_irfft",
    "test_dft_irfft_opset19", "test_dft_opset19", "test_dft_rfft", "test_dft_rfft_opset19",
    "test_stft", "test_stft_with_window",
]  # fmt: skip


@cache
def _dynamic_cases() -> dict[str, Case]:
    return {c.name: c for c in collect_cases("^test_(dft|stft)", shapes="dynamic")}


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("name", _ONNX_CASES)
def test_onnx_cases_pass_with_symbolic_dims(name: str, level: str) -> None:
    assert run_case(_dynamic_cases()[name], level) == {"status": "pass"}
