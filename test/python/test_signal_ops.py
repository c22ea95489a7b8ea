"""DFT and STFT at core and kernel level against numpy's FFT.

The cases cover what the DFT matrix must get right: forward and inverse,
real and complex input, one-sided spectra and the one-sided inverse (irfft,
whose Nyquist bin counts once), a DFT length that cuts or pads the signal, odd
lengths, every axis, an axis that arrives at run time, and batch dims known
only at run time.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from rung.errors import RungError
from rung.runtime import InferenceSession

LEVELS = ["core", "kernel"]


def _dft_model(
    dims: list[object],
    out: list[object],
    *,
    axis: int | None = None,
    length: int | None = None,
    runtime_axis: bool = False,
    **attrs: int,
) -> onnx.ModelProto:
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)]
    inits = []
    names = ["x", "", ""]
    if length is not None:
        inits.append(numpy_helper.from_array(np.array(length, np.int64), "n"))
        names[1] = "n"
    if runtime_axis:
        inputs.append(helper.make_tensor_value_info("axis", TensorProto.INT64, []))
        names[2] = "axis"
    elif axis is not None:
        inits.append(numpy_helper.from_array(np.array(axis, np.int64), "axis"))
        names[2] = "axis"
    while names and names[-1] == "":
        names.pop()
    graph = helper.make_graph(
        [helper.make_node("DFT", names, ["y"], name="dft", **attrs)],
        "g",
        inputs,
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out)],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])


def _complex(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    return x[..., 0] if x.shape[-1] == 1 else x[..., 0] + 1j * x[..., 1]


def _interleaved(c: np.ndarray) -> np.ndarray:
    return np.stack([c.real, c.imag], axis=-1)


def _expected(
    x: np.ndarray, axis: int, length: int | None, inverse: bool, onesided: bool
) -> np.ndarray:
    signal = _complex(x)
    axis %= x.ndim  # of x: the complex signal has one dim less at the end
    if inverse and onesided:
        n = length if length is not None else 2 * (x.shape[axis] - 1)
        return np.fft.irfft(signal, n=n, axis=axis)[..., None]
    n = length if length is not None else x.shape[axis]
    spectrum = np.fft.ifft(signal, n=n, axis=axis) if inverse else np.fft.fft(signal, n, axis)
    if onesided:
        spectrum = np.take(spectrum, np.arange(n // 2 + 1), axis=axis)
    return _interleaved(spectrum)


CASES = [
    # (input shape, axis, dft_length, inverse, onesided)
    ((2, 8, 1), 1, None, 0, 0),
    ((2, 7, 2), 1, None, 0, 0),  # odd, complex
    ((2, 8, 1), 1, None, 0, 1),  # rfft
    ((2, 9, 1), 1, None, 0, 1),
    ((2, 8, 2), 1, None, 1, 0),  # ifft
    ((2, 5, 2), 1, None, 1, 1),  # irfft to 8 samples
    ((2, 5, 2), 1, 9, 1, 1),  # irfft to an odd length
    ((2, 8, 1), 1, 5, 0, 0),  # the signal cut to 5
    ((2, 6, 2), 1, 10, 0, 0),  # padded to 10
    ((3, 4, 6, 1), 1, None, 0, 0),  # an axis before the last signal dim
    ((3, 4, 6, 2), -2, None, 1, 0),
    ((3, 4, 6, 1), 0, None, 0, 1),
]


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(("shape", "axis", "length", "inverse", "onesided"), CASES)
def test_dft_matches_numpy(
    level: str,
    shape: tuple[int, ...],
    axis: int,
    length: int | None,
    inverse: int,
    onesided: int,
) -> None:
    x = np.random.default_rng(len(shape) + shape[1]).standard_normal(shape).astype(np.float32)
    want = _expected(x, axis, length, bool(inverse), bool(onesided))
    out = [f"o{i}" for i in range(len(shape))]
    model = _dft_model(
        list(shape), out, axis=axis, length=length, inverse=inverse, onesided=onesided
    )
    (got,) = InferenceSession(model, level=level).run(None, {"x": x})
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("level", LEVELS)
def test_dft_exact_bins_are_exact(level: str) -> None:
    """The DC and Nyquist bins of a real signal have an imaginary part of exactly 0, and
    a Hermitian spectrum inverts to an exactly real signal: no angle rounding leaks in."""
    x = np.arange(8, dtype=np.float32).reshape(1, 8, 1) * 10
    model = _dft_model([1, 8, 1], ["a", "b", "c"], axis=1, onesided=1)
    (got,) = InferenceSession(model, level=level).run(None, {"x": x})
    assert got[0, 0, 1] == 0.0 and got[0, 4, 1] == 0.0
    np.testing.assert_array_equal(got[0, [0, 4], 0], [280.0, -40.0])


@pytest.mark.parametrize("level", LEVELS)
def test_dft_of_run_time_batch_dims(level: str) -> None:
    model = _dft_model(["b", 6, 2], ["b", 6, 2], axis=1)
    session = InferenceSession(model, level=level)
    for batch in (1, 4):
        x = np.random.default_rng(batch).standard_normal((batch, 6, 2)).astype(np.float32)
        (got,) = session.run(None, {"x": x})
        np.testing.assert_allclose(got, _expected(x, 1, None, False, False), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("onesided", [0, 1])
def test_dft_along_a_run_time_axis(level: str, onesided: int) -> None:
    """Each possible axis is a branch; the run takes the one asked for, its own shape."""
    model = _dft_model([2, 4, 6, 1], ["p", "q", "r", 2], runtime_axis=True, onesided=onesided)
    session = InferenceSession(model, level=level)
    x = np.random.default_rng(0).standard_normal((2, 4, 6, 1)).astype(np.float32)
    for axis in (0, 1, 2, -2, -3):
        (got,) = session.run(None, {"x": x, "axis": np.array(axis, np.int64)})
        want = _expected(x, axis % 4, None, False, bool(onesided))
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    for bad in (3, -1, 7):
        with pytest.raises(RungError, match="node 'dft': DFT: the axis must be one of"):
            session.run(None, {"x": x, "axis": np.array(bad, np.int64)})


def _stft_model(
    signal: list[object], *, step: int | None, window: bool, length: bool, onesided: int = 1
) -> onnx.ModelProto:
    inputs = [helper.make_tensor_value_info("s", TensorProto.FLOAT, signal)]
    inits = []
    names = ["s", "step", "", ""]
    if step is None:
        inputs.append(helper.make_tensor_value_info("step", TensorProto.INT64, []))
    else:
        inits.append(numpy_helper.from_array(np.array(step, np.int64), "step"))
    if window:
        inputs.append(helper.make_tensor_value_info("w", TensorProto.FLOAT, [16]))
        names[2] = "w"
    if length:
        inits.append(numpy_helper.from_array(np.array(16, np.int64), "len"))
        names[3] = "len"
    while names[-1] == "":
        names.pop()
    graph = helper.make_graph(
        [helper.make_node("STFT", names, ["y"], name="stft", onesided=onesided)],
        "g",
        inputs,
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["b", "f", "k", 2])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _stft(x: np.ndarray, step: int, window: np.ndarray, onesided: int) -> np.ndarray:
    length = len(window)
    count = (x.shape[1] - length) // step + 1
    frames = np.stack([x[:, f * step : f * step + length] for f in range(count)], axis=1)
    spectrum = np.fft.fft(_complex(frames) * window, axis=2)
    if onesided:
        spectrum = spectrum[:, :, : length // 2 + 1]
    return _interleaved(spectrum)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(
    ("signal", "step", "window", "length", "onesided", "c"),
    [
        ([1, 64], 8, True, False, 1, 1),
        ([2, 64], None, False, True, 1, 1),  # run-time step
        (["b", "n"], None, True, True, 0, 2),  # run-time sizes, complex signal
    ],
)
def test_stft_matches_numpy(
    level: str,
    signal: list[object],
    step: int | None,
    window: bool,
    length: bool,
    onesided: int,
    c: int,
) -> None:
    model = _stft_model([*signal, c], step=step, window=window, length=length, onesided=onesided)
    session = InferenceSession(model, level=level)
    rng = np.random.default_rng(2)
    for batch, n, hop in ((2, 64, 8), (1, 40, 5)):
        if isinstance(signal[0], int) and (batch, n) != (signal[0], signal[1]):
            continue
        hop = step or hop
        x = rng.standard_normal((batch, n, c)).astype(np.float32)
        w = np.hanning(16).astype(np.float32) if window else np.ones(16, np.float32)
        feed = {"s": x}
        if step is None:
            feed["step"] = np.array(hop, np.int64)
        if window:
            feed["w"] = w
        (got,) = session.run(None, feed)
        want = _stft(x, hop, w, onesided)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("level", LEVELS)
def test_stft_checks_its_step_and_signal(level: str) -> None:
    model = _stft_model(["b", "n", 1], step=None, window=False, length=True)
    session = InferenceSession(model, level=level)
    x = np.zeros((1, 32, 1), np.float32)
    with pytest.raises(RungError, match="node 'stft': STFT: frame_step must be positive"):
        session.run(None, {"s": x, "step": np.array(0, np.int64)})
    with pytest.raises(RungError, match="STFT: the signal is shorter than a frame"):
        session.run(None, {"s": x[:, :10], "step": np.array(4, np.int64)})


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(("c", "onesided"), [(1, 1), (2, 0), (2, 1)])
def test_stft_with_a_run_time_frame_length(level: str, c: int, onesided: int) -> None:
    """The frame length is an input: the DFT matrix is computed at run time."""
    graph = helper.make_graph(
        [helper.make_node("STFT", ["s", "step", "", "len"], ["y"], onesided=onesided)],
        "g",
        [
            helper.make_tensor_value_info("s", TensorProto.FLOAT, ["b", "n", c]),
            helper.make_tensor_value_info("step", TensorProto.INT64, []),
            helper.make_tensor_value_info("len", TensorProto.INT64, []),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["b", "f", "k", 2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    session = InferenceSession(model, level=level)
    rng = np.random.default_rng(4)
    for batch, n, hop, length in ((1, 64, 8, 16), (2, 50, 3, 9), (1, 12, 1, 12)):
        x = rng.standard_normal((batch, n, c)).astype(np.float32)
        feed = {"s": x, "step": np.array(hop, np.int64), "len": np.array(length, np.int64)}
        (got,) = session.run(None, feed)
        want = _stft(x, hop, np.ones(length), onesided)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    with pytest.raises(RungError, match="STFT: frame_length must be positive"):
        session.run(None, {**feed, "len": np.array(0, np.int64)})


@pytest.mark.parametrize("level", LEVELS)
def test_stft_of_a_whole_run_time_signal(level: str) -> None:
    """No window, no frame length: one frame, the whole signal, of a run-time length."""
    model = _stft_model(["b", "n", 1], step=4, window=False, length=False, onesided=1)
    session = InferenceSession(model, level=level)
    x = np.random.default_rng(5).standard_normal((2, 10, 1)).astype(np.float32)
    (got,) = session.run(None, {"s": x})
    np.testing.assert_allclose(got, _stft(x, 4, np.ones(10), 1), rtol=1e-5, atol=1e-4)


def _mel_model(output_datatype: int = TensorProto.FLOAT) -> onnx.ModelProto:
    ints, floats = TensorProto.INT64, TensorProto.FLOAT
    names = ["num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz", "upper_edge_hertz"]
    kinds = [ints, ints, ints, floats, floats]
    graph = helper.make_graph(
        [
            helper.make_node(
                "MelWeightMatrix", names, ["y"], name="mel", output_datatype=output_datatype
            )
        ],
        "g",
        [helper.make_tensor_value_info(n, k, []) for n, k in zip(names, kinds, strict=True)],
        [helper.make_tensor_value_info("y", output_datatype, ["bins", "mels"])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("level", LEVELS)
def test_mel_weight_matrix_matches_onnx_reference(level: str) -> None:
    """Sizes and filters all come from run-time scalars; ONNX's reference is the spec."""
    from onnx.reference import ReferenceEvaluator

    model = _mel_model()
    session = InferenceSession(model, level=level)
    reference = ReferenceEvaluator(model)
    for mels, length, rate, low, high in [
        (8, 16, 8192, 0.0, 4096.0),
        (20, 512, 16000, 20.0, 8000.0),
        (40, 400, 22050, 125.0, 7600.0),
        (5, 63, 1000, 10.0, 480.0),
        (3, 4, 100, 0.0, 50.0),  # edges that coincide: a filter of one bin
    ]:
        feed = {
            "num_mel_bins": np.array(mels, np.int64),
            "dft_length": np.array(length, np.int64),
            "sample_rate": np.array(rate, np.int64),
            "lower_edge_hertz": np.array(low, np.float32),
            "upper_edge_hertz": np.array(high, np.float32),
        }
        (got,) = session.run(None, feed)
        (want,) = reference.run(None, feed)
        assert got.dtype == np.float32 and got.shape == (length // 2 + 1, mels)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    with pytest.raises(RungError, match="node 'mel': MelWeightMatrix: num_mel_bins and"):
        session.run(None, {**feed, "sample_rate": np.array(0, np.int64)})
