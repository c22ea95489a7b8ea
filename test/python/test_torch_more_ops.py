"""Ops the OpInfo scoreboard found missing: scatter_reduce, round to decimals, stable sort,
whole-tensor max/min, scatter with a reduce; each against torch eager."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch_cases import check_against_eager  # noqa: E402


def _data() -> tuple[object, object, object]:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(4, 5, generator=generator)
    index = torch.randint(0, 4, (3, 5), generator=generator)
    src = torch.randn(3, 5, generator=generator)
    return x, index, src


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["sum", "prod", "amax", "amin", "mean"])
def test_scatter_reduce(reduce: str, include_self: bool) -> None:
    def fn(x: object, index: object, src: object) -> object:
        return x.scatter_reduce(0, index, src, reduce, include_self=include_self)  # type: ignore[attr-defined]

    check_against_eager(fn, _data())


def test_scatter_with_a_reduce_and_a_value() -> None:
    x, index, src = _data()
    check_against_eager(
        lambda a, i, s: (a.scatter(0, i, s, reduce="multiply"), a.scatter(0, i, 2.0, reduce="add")),
        (x, index, src),
    )


def test_round_to_decimals() -> None:
    x, _, _ = _data()
    check_against_eager(
        lambda a: (torch.round(a * 7, decimals=2), torch.round(a * 700, decimals=-1)),
        (x,),
    )


def test_stable_sort_and_whole_tensor_extremes() -> None:
    x = torch.tensor([[3.0, 1.0, 3.0, 2.0], [0.5, 0.5, -1.0, 4.0]])
    check_against_eager(
        lambda a: (*torch.sort(a, stable=True, dim=1, descending=True), torch.max(a), torch.min(a)),
        (x,),
    )


@pytest.mark.parametrize(("offset", "dim1", "dim2"), [(0, 0, 1), (1, 1, 2), (-2, 2, 1), (-5, 1, 2)])
def test_diagonal(offset: int, dim1: int, dim2: int) -> None:
    x = torch.randn(3, 4, 5, generator=torch.Generator().manual_seed(1))
    check_against_eager(lambda a: torch.diagonal(a, offset, dim1, dim2) * 1, (x,))


def test_diagonal_under_a_run_time_batch() -> None:
    x = torch.randn(3, 4, 5, generator=torch.Generator().manual_seed(2))
    batch = torch.export.Dim("batch", max=64)
    check_against_eager(
        lambda a: torch.diagonal(a, 1, 1, 2) + 0,
        (x,),
        dynamic_shapes=(({0: batch},),),  # the wrapper takes *args
        feeds=[(x,), (torch.randn(6, 4, 5),)],
    )
