"""What a zoo model is: how to build it, its inputs, and the sizes it is checked at.

A spec is plain data plus a builder that imports its library only when called,
so the list of models (and the test suite's parametrization) needs none of
torch, transformers or scikit-learn. One description of the inputs drives
everything: the example tensors of the export, its dynamic axes (a dim given
by name is dynamic) and the seeded numpy feeds of every checked size.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

Dim = int | str
"""A fixed size, or the name of a dynamic axis."""

EXAMPLE_SIZES: dict[str, int] = {"batch": 2, "seq": 5, "past": 4}
"""Sizes of the export's example inputs: neither 0 nor 1, so no exporter specializes them."""


@dataclass(frozen=True)
class Input:
    """One model input: its name, numpy dtype and shape (ints or dynamic-axis names).

    Float inputs are standard normal; integer inputs are drawn from [0, high),
    or all equal to `fill` when it is set (attention masks).
    """

    name: str
    shape: tuple[Dim, ...]
    dtype: str = "float32"
    high: int = 2
    fill: float | None = None

    def resolve(self, sizes: Mapping[str, int]) -> tuple[int, ...]:
        """The concrete shape at the given sizes of the dynamic axes."""
        return tuple(sizes[d] if isinstance(d, str) else d for d in self.shape)

    def dynamic_axes(self) -> dict[int, str]:
        return {i: d for i, d in enumerate(self.shape) if isinstance(d, str)}

    def sample(self, sizes: Mapping[str, int], rng: np.random.Generator) -> np.ndarray:
        shape = self.resolve(sizes)
        dtype = np.dtype(self.dtype)
        if self.fill is not None:
            return np.full(shape, self.fill, dtype=dtype)
        if dtype.kind == "f":
            return rng.standard_normal(shape).astype(dtype)
        if dtype.kind == "b":
            return rng.integers(0, 2, size=shape).astype(dtype)
        return rng.integers(0, self.high, size=shape).astype(dtype)


@dataclass(frozen=True)
class Output:
    """A named output and its dynamic axes (what the TorchScript exporter is told)."""

    name: str
    axes: dict[int, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ModelSpec:
    """A zoo entry: one model exported by one exporter.

    `build` returns a `torch.nn.Module` in eval mode for the torch exporters, or
    an `onnx.ModelProto` for the converters that make ONNX themselves
    (skl2onnx). `sizes` are the dynamic-axis sizes the model is checked at,
    all from one compiled session; `fast` puts it in the default test subset.
    """

    name: str
    source: str
    exporter: str
    build: Callable[[], object]
    inputs: tuple[Input, ...]
    outputs: tuple[Output, ...]
    sizes: tuple[dict[str, int], ...] = ({},)
    fast: bool = False
    timeout: float = 900.0
    note: str = ""

    @property
    def dynamic_axes(self) -> list[str]:
        """The names of the dynamic axes, in order of first appearance."""
        names: list[str] = []
        for i in self.inputs:
            for d in i.shape:
                if isinstance(d, str) and d not in names:
                    names.append(d)
        return names

    def example_sizes(self) -> dict[str, int]:
        return {d: EXAMPLE_SIZES.get(d, 3) for d in self.dynamic_axes}

    def feeds(self, sizes: Mapping[str, int]) -> dict[str, np.ndarray]:
        """Seeded random inputs at the given sizes: the same for every run of the zoo."""
        seed = zlib.crc32(f"{self.name}:{sorted(sizes.items())}".encode())
        rng = np.random.default_rng(seed)
        return {i.name: i.sample(sizes, rng) for i in self.inputs}


def image(name: str = "x", size: int = 64, channels: int = 3, frames: int | None = None) -> Input:
    """A float image batch (NCHW, or NCTHW for video) with a dynamic batch."""
    if frames is None:
        return Input(name, ("batch", channels, size, size))
    return Input(name, ("batch", channels, frames, size, size))


def tokens(name: str = "input_ids", vocab: int = 256) -> Input:
    return Input(name, ("batch", "seq"), dtype="int64", high=vocab)


def mask(name: str = "attention_mask") -> Input:
    return Input(name, ("batch", "seq"), dtype="int64", fill=1)


BATCHES: tuple[dict[str, int], ...] = ({"batch": 1}, {"batch": 3})
BATCH_SEQ: tuple[dict[str, int], ...] = ({"batch": 1, "seq": 7}, {"batch": 3, "seq": 16})
