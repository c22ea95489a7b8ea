"""Neural-network torch ops (conv, pooling, normalization, softmax, resampling, embedding,
padding) against torch eager, at the torch, core and kernel levels.

Each case exports a small torch.nn module (or function) and compares every
output with eager torch (`check_against_eager`), max pooling's indices
included. Dynamic cases run one compiled library at two sizes. torch's
default decomposition turns `F.pad`'s reflect and replicate modes into index
arithmetic, so those ops are checked from hand-written torch-dialect IR.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from torch_cases import LEVELS, check_against_eager, export

torch = pytest.importorskip("torch")

from rung.dialects import parse_module  # noqa: E402
from rung.errors import EvaluationError  # noqa: E402
from rung.runtime import InferenceSession  # noqa: E402

F = torch.nn.functional
Dim = torch.export.Dim


def _rand(*shape: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


class Fn(torch.nn.Module):
    """A function of one tensor as a module."""

    def __init__(self, fn: Callable[[torch.Tensor], object]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, x: torch.Tensor) -> object:
        return self.fn(x)


def _batch_norm() -> torch.nn.Module:
    """BatchNorm2d in eval mode with statistics and affine parameters far from the defaults."""
    torch.manual_seed(0)
    bn = torch.nn.BatchNorm2d(4)
    with torch.no_grad():
        bn.running_mean.uniform_(-1, 1)
        bn.running_var.uniform_(0.5, 2)
        bn.weight.uniform_(0.5, 2)
        bn.bias.uniform_(-1, 1)
    return bn


def _seeded(make: Callable[[], torch.nn.Module]) -> Callable[[], torch.nn.Module]:
    def build() -> torch.nn.Module:
        torch.manual_seed(0)
        return make()

    return build


X = (2, 4, 9, 9)
TIES = torch.randint(0, 3, X, generator=torch.Generator().manual_seed(1)).float()

CASES: dict[str, tuple[Callable[[], torch.nn.Module], torch.Tensor]] = {
    # convolution
    "conv2d": (_seeded(lambda: torch.nn.Conv2d(4, 6, 3, stride=2, padding=1)), _rand(*X)),
    "conv1d": (_seeded(lambda: torch.nn.Conv1d(4, 6, 3, stride=2, padding=1)), _rand(2, 4, 10)),
    "conv3d_dilated": (
        _seeded(lambda: torch.nn.Conv3d(2, 3, 3, padding=2, dilation=2, bias=False)),
        _rand(1, 2, 4, 5, 5),
    ),
    "depthwise": (_seeded(lambda: torch.nn.Conv2d(4, 4, 3, padding=1, groups=4)), _rand(*X)),
    "conv_transpose2d": (
        _seeded(
            lambda: torch.nn.ConvTranspose2d(
                4, 6, 3, stride=2, padding=1, output_padding=1, groups=2
            )
        ),
        _rand(*X),
    ),
    # pooling
    "max_pool_ceil": (lambda: torch.nn.MaxPool2d(3, 2, padding=1, ceil_mode=True), _rand(*X)),
    "max_pool_indices": (
        lambda: Fn(lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True, return_indices=True)),
        _rand(*X),
    ),
    "max_pool_indices_ties_dilated": (
        lambda: Fn(lambda x: F.max_pool2d(x, 2, 1, dilation=2, return_indices=True)),
        TIES,
    ),
    "max_pool3d_indices_unbatched": (
        lambda: Fn(lambda x: F.max_pool3d(x, 2, return_indices=True)),
        _rand(2, 4, 4, 5),
    ),
    "avg_pool_ceil_exclude_pad": (
        lambda: torch.nn.AvgPool2d(3, 2, padding=1, ceil_mode=True, count_include_pad=False),
        _rand(*X),
    ),
    "avg_pool_ceil_include_pad": (
        lambda: torch.nn.AvgPool2d(3, 2, padding=1, ceil_mode=True),
        _rand(*X),
    ),
    "avg_pool_divisor_override": (lambda: torch.nn.AvgPool2d(2, divisor_override=3), _rand(*X)),
    "avg_pool3d": (lambda: torch.nn.AvgPool3d(2, padding=1), _rand(1, 2, 4, 4, 5)),
    "adaptive_avg_pool_divides": (lambda: torch.nn.AdaptiveAvgPool2d((3, 1)), _rand(*X)),
    "adaptive_avg_pool_general": (lambda: torch.nn.AdaptiveAvgPool2d((4, 5)), _rand(*X)),
    "adaptive_avg_pool3d": (lambda: torch.nn.AdaptiveAvgPool3d((2, 3, 1)), _rand(1, 2, 4, 4, 5)),
    # normalization
    "batch_norm_eval": (_batch_norm, _rand(*X)),
    "batch_norm_batch_stats": (
        _seeded(lambda: torch.nn.BatchNorm2d(4, track_running_stats=False)),
        _rand(*X),
    ),
    "instance_norm": (_seeded(lambda: torch.nn.InstanceNorm2d(4, affine=True)), _rand(*X)),
    "layer_norm": (_seeded(lambda: torch.nn.LayerNorm([9, 9])), _rand(*X)),
    "layer_norm_statistics": (
        lambda: Fn(lambda x: torch.ops.aten.native_layer_norm(x, [9], None, None, 1e-5)),
        _rand(*X),
    ),
    "group_norm_statistics": (
        lambda: Fn(lambda x: torch.ops.aten.native_group_norm(x, None, None, 2, 4, 81, 2, 1e-5)),
        _rand(*X),
    ),
    # softmax
    "softmax": (lambda: torch.nn.Softmax(1), _rand(*X)),
    "log_softmax": (lambda: torch.nn.LogSoftmax(-1), _rand(*X)),
    # resampling
    "upsample_nearest_1_5": (lambda: torch.nn.Upsample(scale_factor=1.5), _rand(*X)),
    "upsample_nearest_size": (lambda: torch.nn.Upsample(size=(5, 13)), _rand(*X)),
    "upsample_bilinear_scale": (
        lambda: torch.nn.Upsample(scale_factor=1.7, mode="bilinear"),
        _rand(*X),
    ),
    "upsample_bilinear_align_corners": (
        lambda: torch.nn.Upsample(size=(5, 13), mode="bilinear", align_corners=True),
        _rand(*X),
    ),
    # embedding, padding
    "embedding": (
        _seeded(lambda: torch.nn.Embedding(10, 4, padding_idx=0)),
        torch.tensor([[1, 2, 0], [9, 4, 4]]),
    ),
    "constant_pad": (lambda: Fn(lambda x: F.pad(x, (1, -2, 2, 0), value=2.5)), _rand(*X)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_against_eager(name: str) -> None:
    make, x = CASES[name]
    check_against_eager(make(), (x,))


class _Features(torch.nn.Module):
    """A small CNN stem: every op of it sees the run-time batch."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.bn = _batch_norm()
        self.up = torch.nn.ConvTranspose2d(4, 2, 3, stride=2, output_padding=1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        y = self.bn(self.conv(x))
        v, i = F.max_pool2d(y, 3, 2, 1, ceil_mode=True, return_indices=True)
        pooled = F.adaptive_avg_pool2d(v, (2, 3))
        up = F.interpolate(self.up(v), scale_factor=2, mode="bilinear")
        return F.avg_pool2d(v, 2, ceil_mode=True), i, pooled, torch.softmax(up, 1)


def test_dynamic_batch_stem() -> None:
    torch.manual_seed(0)
    batch = {0: Dim("batch", max=64)}
    check_against_eager(
        _Features(),
        (_rand(2, 3, 9, 9),),
        dynamic_shapes=(batch,),
        feeds=[(_rand(2, 3, 9, 9, seed=1),), (_rand(5, 3, 9, 9, seed=2),)],
    )


@pytest.mark.parametrize(
    "make",
    [
        lambda: Fn(lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False)),
        lambda: torch.nn.GroupNorm(2, 4),
    ],
    ids=["avg_pool_exclude_pad", "group_norm"],
)
def test_dynamic_spatial(make: Callable[[], torch.nn.Module]) -> None:
    """Counts and group sizes over `?` spatial dims are computed when the model runs."""
    torch.manual_seed(0)
    dims = {2: Dim("h", min=4, max=64), 3: Dim("w", min=4, max=64)}
    check_against_eager(
        make(),
        (_rand(2, 4, 9, 9),),
        dynamic_shapes=(dims,),
        feeds=[(_rand(2, 4, 9, 9, seed=1),), (_rand(2, 4, 6, 11, seed=2),)],
    )


def test_dynamic_sequence_layer_norm_and_embedding() -> None:
    torch.manual_seed(0)

    class Tokens(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = torch.nn.Embedding(10, 8)
            self.norm = torch.nn.LayerNorm(8)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.log_softmax(self.norm(self.emb(x)), -1)

    ids = torch.tensor([[1, 2, 0], [9, 4, 4]])
    check_against_eager(
        Tokens(),
        (ids,),
        dynamic_shapes=({0: Dim("batch", max=64), 1: Dim("seq", max=64)},),
        feeds=[(ids,), (torch.tensor([[3, 1, 4, 1, 5]]),)],
    )


@pytest.mark.parametrize("level", ["core", "kernel"])
def test_embedding_index_out_of_range_fails_the_run(level: str) -> None:
    program = export(torch.nn.Embedding(10, 4), (torch.tensor([[1, 2]]),))
    session = InferenceSession(program, level=level)
    with pytest.raises(EvaluationError, match="embedding: an index is out of range, got 10"):
        session.run(None, {session.get_inputs()[0].name: np.array([[1, 10]])})


NOT_EXPORTED = """
func.func @main(%x: tensor<?x2x4x5xf32>, %v: tensor<?x4x5xf32>)
    -> (tensor<?x2x5x8xf32>, tensor<?x2x6x7xf32>, tensor<?x4x7xf32>, tensor<?x2x6x7xf32>) {
  %r = torch.aten.reflection_pad2d(%x) {padding = [1, 2, 0, 1]}
      : (tensor<?x2x4x5xf32>) -> tensor<?x2x5x8xf32>
  %e = torch.aten.replication_pad2d(%x) {padding = [1, 1, 1, 1]}
      : (tensor<?x2x4x5xf32>) -> tensor<?x2x6x7xf32>
  %o = torch.aten.reflection_pad1d(%v) {padding = [2, 0]}
      : (tensor<?x4x5xf32>) -> tensor<?x4x7xf32>
  %u = torch.aten.upsample_bilinear2d(%x) {output_size = [6, 7], align_corners = false,
      scales_h = 1.5} : (tensor<?x2x4x5xf32>) -> tensor<?x2x6x7xf32>
  func.return %r, %e, %o, %u
      : tensor<?x2x5x8xf32>, tensor<?x2x6x7xf32>, tensor<?x4x7xf32>, tensor<?x2x6x7xf32>
}
"""


@pytest.mark.parametrize("level", LEVELS)
def test_ops_the_export_decomposes(level: str) -> None:
    """Reflect and replicate padding, and upsampling's non-`.vec` overloads, which torch's
    default decomposition never leaves in a program, from hand-written IR."""
    session = InferenceSession(parse_module(NOT_EXPORTED), level=level)
    names = [i.name for i in session.get_inputs()]
    for n in (1, 3):
        x, v = _rand(n, 2, 4, 5, seed=n), _rand(n, 4, 5, seed=10 + n)
        got = session.run(None, dict(zip(names, (x.numpy(), v.numpy()), strict=True)))
        want = [
            F.pad(x, (1, 2, 0, 1), mode="reflect"),
            F.pad(x, (1, 1, 1, 1), mode="replicate"),
            F.pad(v, (2, 0), mode="reflect"),
            torch.ops.aten.upsample_bilinear2d(x, [6, 7], False, 1.5, None),
        ]
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w.numpy(), rtol=1e-6, atol=1e-6)
