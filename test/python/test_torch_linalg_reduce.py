"""Matrix products and reductions of torch programs against torch eager, at every level.

Each case exports a small function with torch.export and runs it at the
torch, core and kernel levels (`check_against_eager`). Reductions return
their keepdim and plain forms together, so one compiled library covers both.
Dynamic cases run one library at two batch sizes (a function's inputs are
the exported wrapper's `xs`). Inputs for sort, topk and
the arg-reductions have no ties: torch's unstable sort orders ties its own way.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
from torch_cases import LEVELS, assert_close, check_against_eager, eager_outputs, export

torch = pytest.importorskip("torch")

Dim = torch.export.Dim


def _batch() -> object:
    return Dim("batch", max=1024)


def _rand(*shape: int, seed: int = 0) -> object:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _distinct(*shape: int, seed: int = 0) -> object:
    """Values without ties (a permutation of 0..n-1, scaled), for sort/topk/argmax indices."""
    n = math.prod(shape)
    order = torch.randperm(n, generator=torch.Generator().manual_seed(seed))
    return (order.float() * 0.25 - n / 8).reshape(shape).clone()


# ---- matrix products ------------------------------------------------------------------


class _Linear(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.fc = torch.nn.Linear(8, 5)

    def forward(self, x: object) -> object:
        return self.fc(x)


def test_linear_layer() -> None:
    """nn.Linear is addmm(bias, x, weightᵀ) after decomposition."""
    check_against_eager(_Linear(), (_rand(3, 8),))


def test_linear_layer_dynamic_batch() -> None:
    check_against_eager(
        _Linear(),
        (_rand(3, 8),),
        dynamic_shapes={"x": {0: _batch()}},
        feeds=[(_rand(3, 8, seed=1),), (_rand(7, 8, seed=2),)],
    )


def _scores(q: object, k: object) -> object:
    return q @ k.transpose(-1, -2)


def test_attention_scores() -> None:
    """q @ kᵀ on 4-D tensors is a bmm between views."""
    check_against_eager(_scores, (_rand(2, 3, 5, 8), _rand(2, 3, 6, 8, seed=1)))


def test_attention_scores_dynamic_batch() -> None:
    batch = _batch()
    check_against_eager(
        _scores,
        (_rand(2, 3, 5, 8), _rand(2, 3, 6, 8, seed=1)),
        dynamic_shapes={"xs": ({0: batch}, {0: batch})},
        feeds=[
            (_rand(2, 3, 5, 8, seed=2), _rand(2, 3, 6, 8, seed=3)),
            (_rand(5, 3, 5, 8, seed=4), _rand(5, 3, 6, 8, seed=5)),
        ],
    )


def test_addmm_scaled() -> None:
    """beta * c + alpha * (a × b), c broadcast from a row."""

    def f(c: object, a: object, b: object) -> object:
        return torch.addmm(c, a, b, beta=0.5, alpha=2.0), torch.mm(a, b)

    check_against_eager(f, (_rand(4), _rand(3, 6, seed=1), _rand(6, 4, seed=2)))


def test_baddbmm() -> None:
    def f(c: object, a: object, b: object) -> object:
        return torch.baddbmm(c, a, b, beta=0.25, alpha=-1.5)

    check_against_eager(f, (_rand(2, 3, 4), _rand(2, 3, 5, seed=1), _rand(2, 5, 4, seed=2)))


def test_cdist() -> None:
    """torch.cdist for p = 2, 1, inf and 3."""

    def f(a: object, b: object) -> object:
        return tuple(torch.cdist(a, b, p=p) for p in (2.0, 1.0, math.inf, 3.0))

    check_against_eager(f, (_rand(2, 4, 3), _rand(2, 5, 3, seed=1)))


def check_undecomposed(function: Callable[..., object], args: tuple) -> None:
    """Like `check_against_eager`, on the program as exported (matmul, linear kept)."""
    from rung.importers.torch import import_program
    from rung.runtime import InferenceSession

    program = export(function, args)
    module = import_program(program, decompose=False)
    names = {op.name for op in module.walk()}
    assert {"torch.aten.matmul", "torch.aten.linear"} <= names
    want = eager_outputs(program, args)
    for level in LEVELS:
        session = InferenceSession(module, level=level)
        inputs = {i.name: t.numpy() for i, t in zip(session.get_inputs(), args, strict=True)}
        assert_close(session.run(None, inputs), want, 1e-3, 1e-4, f"level {level}")


def test_matmul_and_linear_undecomposed() -> None:
    """numpy's matmul rules (a stack times a matrix, a matrix times a vector) and linear."""

    def f(x: object, w: object, v: object, bias: object) -> object:
        return x @ w.transpose(0, 1), w @ v, torch.nn.functional.linear(x, w, bias)

    check_undecomposed(f, (_rand(2, 3, 4), _rand(5, 4, seed=1), _rand(4, seed=2), _rand(5)))


# ---- reductions -----------------------------------------------------------------------

REDUCTIONS: dict[str, tuple[Callable[..., object], tuple]] = {
    "sum_dim": (lambda x: (x.sum(1), x.sum((0, 2), keepdim=True), x.sum(-1, keepdim=True)), ()),
    "sum_all": (lambda x: (x.sum(), x.sum(dtype=torch.float64)), ()),
    "mean": (lambda x: (x.mean(), x.mean(1), x.mean((0, -1), keepdim=True)), ()),
    "amax_amin": (
        lambda x: (x.amax(1), x.amax((0, 2), keepdim=True), x.amin(), x.amin(-1, keepdim=True)),
        (),
    ),
    "prod": (lambda x: (x.prod(), x.prod(1), x.prod(2, keepdim=True)), ()),
    "var": (
        lambda x: (
            x.var(1),
            x.var(dim=(0, 2), keepdim=True, correction=0),
            x.var(unbiased=False),
            x.std(2, keepdim=True),
            torch.var_mean(x, dim=1, correction=2),
        ),
        (),
    ),
    "any": (
        lambda x: (
            (x > 0.5).any(),
            (x > 0.5).any(1),
            (x > 1.0).any(2, keepdim=True),
            torch.any(x > 1.0, dim=(0, 2)),
            (x > 1.0).all(1),
        ),
        (),
    ),
    "max_min_dim": (lambda x: (*x.max(1), *x.min(-1, keepdim=True)), "distinct"),
    "argmax_argmin": (
        lambda x: (
            x.argmax(),
            x.argmax(1),
            x.argmin(2, keepdim=True),
            x.argmin(),
            torch.argmax(x, keepdim=True),
        ),
        "distinct",
    ),
    "cumsum": (lambda x: (x.cumsum(1), x.cumsum(-1, dtype=torch.float64)), ()),
    "topk": (
        lambda x: (*torch.topk(x, 3), *torch.topk(x, 2, dim=1, largest=False, sorted=True)),
        "distinct",
    ),
    "sort": (lambda x: (*torch.sort(x), *torch.sort(x, dim=0, descending=True)), "distinct"),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction(name: str) -> None:
    function, kind = REDUCTIONS[name]
    x = _distinct(3, 4, 5) if kind == "distinct" else _rand(3, 4, 5)
    check_against_eager(function, (x,))


def test_integer_sum_and_cumsum() -> None:
    """int32 and bool sums, products and running sums give int64, as torch promotes them."""

    def f(i: object) -> object:
        return i.sum(), i.sum(0), i.cumsum(1), i.prod(1), i.amax(0), (i > 0).sum(1)

    x = torch.randint(-50, 50, (4, 6), dtype=torch.int32, generator=torch.Generator())
    check_against_eager(f, (x,))


def _dynamic_reductions(x: object) -> object:
    return (
        x.mean(0),
        x.sum(),
        x.mean(1, keepdim=True),
        x.var(0),
        x.amax(0, keepdim=True),
        x.argmax(),
        x.argmin(0),
        *x.max(0),
        *torch.topk(x, 2, dim=1),
        *torch.topk(x, 2, dim=0),
        *torch.sort(x, dim=0),
        x.cumsum(0),
    )


def test_reductions_dynamic_batch() -> None:
    """Reductions over a batch only the run knows: the mean's divisor is read at run time."""
    check_against_eager(
        _dynamic_reductions,
        (_distinct(3, 5),),
        dynamic_shapes={"xs": ({0: _batch()},)},
        feeds=[(_distinct(3, 5, seed=1),), (_distinct(8, 5, seed=2),)],
    )


def test_topk_of_a_run_time_k() -> None:
    """topk's k taken from a size only the run knows."""

    def f(x: object, y: object) -> object:
        return torch.topk(x, y.shape[0], dim=1)

    batch = Dim("k", max=6)
    check_against_eager(
        f,
        (_distinct(2, 6), _rand(3)),
        dynamic_shapes={"xs": (None, {0: batch})},
        feeds=[(_distinct(2, 6, seed=1), _rand(2)), (_distinct(2, 6, seed=2), _rand(5))],
    )


def test_half_precision_sums_accumulate_in_f32() -> None:
    """f16 sums as torch adds them, in f32: 4096 ones would stop at 2048 in f16."""
    x = torch.ones(2, 4096, dtype=torch.float16)
    check_against_eager(lambda t: (t.sum(1), t.mean(1), t.sum()), (x,))
