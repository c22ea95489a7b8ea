"""as_strided against torch eager: a no-op view, a gathering view, and a refused input."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch_cases import check_against_eager  # noqa: E402

from rung.errors import RungError  # noqa: E402
from rung.importers.torch import import_program  # noqa: E402


def test_a_channels_last_view_of_a_reduction_is_the_identity() -> None:
    def pooled(x: torch.Tensor) -> torch.Tensor:
        y = x.mean(dim=(2, 3), keepdim=True)
        return torch.as_strided(y, (2, 4, 1, 1), (4, 1, 4, 4)) * 2

    check_against_eager(pooled, (torch.randn(2, 4, 5, 5),))


def test_an_overlapping_window_view_gathers() -> None:
    def windows(x: torch.Tensor) -> torch.Tensor:
        return torch.as_strided(x.clone(), (4, 3), (2, 1), 1) + 0

    check_against_eager(windows, (torch.arange(12, dtype=torch.float32),))


def test_a_view_of_a_non_contiguous_tensor_is_refused() -> None:
    def of_transpose(x: torch.Tensor) -> torch.Tensor:
        return torch.as_strided(x.t(), (2, 2), (1, 2))

    class Wrap(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return of_transpose(x)

    program = torch.export.export(Wrap(), (torch.randn(3, 2),))
    with pytest.raises(RungError, match="views a tensor that is not contiguous"):
        import_program(program)
