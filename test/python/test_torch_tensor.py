"""The tensor torch → core lowerings (`lowering/torch_to_core/tensor.py`) against torch eager.

Views and shapes, casts, slicing and splitting, joining, advanced indexing,
gathers and scatters, and creation ops. Each case exports a small function,
checks that the torch-dialect program holds the ATen ops it is meant to
exercise (Core ATen decompositions turn some ops into others, so cases of ops
they remove import the program as exported), and compares every level with
torch run eagerly. Cases named `dynamic_*` export a run-time dim and run one
compiled library at two sizes. Run-time indices out of range must fail the run
instead of reading or writing outside a buffer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pytest
from torch_cases import LEVELS, assert_close, eager_outputs, export

from rung.dialects.torch import ConstantOp
from rung.dialects.torch import generated_ops as aten
from rung.errors import RungError

torch = pytest.importorskip("torch")

A = torch.ops.aten
Dim = torch.export.Dim


@dataclass(frozen=True)
class Case:
    name: str
    fn: Callable[..., object]
    args: tuple
    ops: tuple[type, ...]
    decompose: bool = True
    dynamic: object = None
    feeds: Sequence[tuple] | None = None

    def __str__(self) -> str:
        return self.name


def _floats(*shape: int, seed: int = 0) -> object:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _ints(*shape: int, low: int = -6, high: int = 7, seed: int = 0) -> object:
    return torch.randint(low, high, shape, generator=torch.Generator().manual_seed(seed))


def _mask(*shape: int, seed: int = 0) -> object:
    return torch.rand(*shape, generator=torch.Generator().manual_seed(seed)) > 0.5


def run_case(case: Case) -> None:
    """Export, check the ops the program holds, and compare each level with eager."""
    from rung.importers.torch import import_program
    from rung.runtime import InferenceSession

    dynamic = None if case.dynamic is None else (case.dynamic,)  # the *args of the function
    program = export(case.fn, case.args, dynamic)
    module = import_program(program, decompose=case.decompose)
    missing = set(case.ops) - {type(op) for op in module.walk()}
    assert not missing, f"the program lacks {sorted(c.__name__ for c in missing)}"
    feeds = list(case.feeds) if case.feeds else [case.args]
    expected = [eager_outputs(program, feed) for feed in feeds]
    for level in LEVELS:
        session = InferenceSession(import_program(program, decompose=case.decompose), level=level)
        names = [i.name for i in session.get_inputs()]
        for feed, want in zip(feeds, expected, strict=True):
            got = session.run(None, {n: t.numpy() for n, t in zip(names, feed, strict=True)})
            shapes = [tuple(t.shape) for t in feed]
            assert_close(got, want, 1e-5, 1e-6, f"level {level}, inputs {shapes}")


def _batch(name: str = "batch", low: int = 3) -> object:
    return Dim(name, min=low, max=64)


X3 = _floats(2, 3, 4)
X2 = _floats(5, 4, seed=1)
I2 = _ints(5, 4, low=-3, high=4, seed=2)

VIEWS = [
    Case(
        "view_reshape",
        lambda x: (x.view(2, -1), x.reshape(-1), x.reshape(4, 6), x.view(3, 2, 4)),
        (X3,),
        (aten.AtenViewOp, aten.AtenReshapeOp),
        decompose=False,
    ),
    Case(
        "permute_transpose_t_flatten",
        lambda x: (x.permute(2, 0, 1), x.transpose(0, -1), x[0].t(), x.flatten(1), x.flatten()),
        (X3,),
        (aten.AtenPermuteOp, aten.AtenTransposeIntOp, aten.AtenTOp, aten.AtenFlattenUsingIntsOp),
        decompose=False,
    ),
    Case(
        "squeeze_unsqueeze",
        lambda x: (x.squeeze(0), x.squeeze((0, 2)), x.squeeze(1), x.unsqueeze(-1), x.unsqueeze(1)),
        (_floats(1, 3, 1),),
        (aten.AtenSqueezeDimOp, aten.AtenSqueezeDimsOp, aten.AtenUnsqueezeOp),
        decompose=False,
    ),
    Case(
        "copies_and_aliases",
        lambda x: (
            x.clone(), A.alias(x), A.lift_fresh_copy(x)
        ),
        (X2,),
        (aten.AtenCloneOp, aten.AtenAliasOp, aten.AtenLiftFreshCopyOp),
        decompose=False,
    ),
    Case(
        "expand",
        lambda x: (x.expand(2, 3, 4), x.expand(-1, 5), x[0].expand(2, 3, 1)),
        (_floats(3, 1),),
        (aten.AtenExpandOp,),
    ),
    Case(
        "casts",
        lambda x, i: (
            x.to(torch.int32), x.to(torch.bool), i.to(torch.float32), x.double(),
            A._to_copy(x, dtype=torch.float16), A._to_copy(i, dtype=torch.uint8),
        ),
        (X2 * 4, I2.abs()),
        (aten.AtenToDtypeOp, aten.Aten_ToCopyOp),
        decompose=False,
    ),
    Case(
        "dynamic_view",
        lambda x: (x.view(x.shape[0] * 2, -1), x.reshape(-1), x.view(-1, 2, 3)),
        (_floats(4, 6),),
        (aten.AtenViewOp,),
        dynamic=({0: _batch()},),
        feeds=[(_floats(4, 6),), (_floats(7, 6, seed=3),)],
    ),
    Case(
        "dynamic_shapes",
        lambda x: (
            x.squeeze(1), x.unsqueeze(0), x.flatten(), x.permute(2, 1, 0), x.transpose(0, 1)
        ),
        (_floats(4, 1, 3),),
        (aten.AtenSqueezeDimOp, aten.AtenUnsqueezeOp, aten.AtenFlattenUsingIntsOp,
         aten.AtenPermuteOp, aten.AtenTransposeIntOp),
        decompose=False,
        dynamic=({0: _batch()},),
        feeds=[(_floats(4, 1, 3),), (_floats(9, 1, 3, seed=3),)],
    ),
    Case(
        "dynamic_expand",
        lambda x, y: (x.expand(y.shape[0], -1, 4), y.expand(2, -1, -1)),
        (_floats(1, 3, 1), _floats(5, 2, seed=1)),
        (aten.AtenExpandOp,),
        dynamic=(None, {0: _batch()}),
        feeds=[(_floats(1, 3, 1), _floats(5, 2, seed=1)), (_floats(1, 3, 1), _floats(8, 2, seed=2))],
    ),
]  # fmt: skip

SLICES = [
    Case(
        "slice",
        lambda x: (x[1:, :-1], x[::2], x[-3:], x[1:100], x[-100:2], x[4:2], x[:, 1::2]),
        (X2,),
        (aten.AtenSliceTensorOp,),
    ),
    Case(
        "select_narrow",
        lambda x: (x[2], x[:, -1], x.select(0, -5), x.narrow(1, 1, 2)),
        (X2,),
        (aten.AtenSelectIntOp, aten.AtenSliceTensorOp),
    ),
    Case(
        "dynamic_slice",
        lambda x: (x[: x.shape[0] - 1], x[1:], x[-2:], x[x.shape[0] - 2 :], x[-1]),
        (_floats(4, 6),),
        (aten.AtenSliceTensorOp, aten.AtenSelectIntOp),
        dynamic=({0: _batch()},),
        feeds=[(_floats(4, 6),), (_floats(9, 6, seed=3),)],
    ),
    Case(
        "split_chunk_unbind",
        lambda x: (*torch.split(x, 2), *torch.split(x, [1, 3, 1]), *x.chunk(3, 1), *x.unbind(1)),
        (X2,),
        (aten.AtenSplitTensorOp, aten.AtenSplitWithSizesOp, aten.AtenChunkOp, aten.AtenUnbindIntOp),
        decompose=False,
    ),
    Case(
        "dynamic_split",
        lambda x: (*torch.split(x, [2, x.shape[0] - 2]), *x.unbind(1)),
        (_floats(5, 3),),
        (aten.AtenSplitWithSizesOp, aten.AtenUnbindIntOp),
        decompose=False,
        dynamic=({0: _batch(low=4)},),
        feeds=[(_floats(5, 3),), (_floats(8, 3, seed=3),)],
    ),
]  # fmt: skip

IDX = torch.tensor([0, -1, 2])
IDX2 = torch.tensor([[1], [-2]])

INDEXING = [
    Case(
        "cat_stack",
        lambda x, i: (torch.cat([x, i], 1), torch.cat([x, torch.empty(0)]), torch.stack([x, x], 1)),
        (X2, I2[:, :2]),
        (aten.AtenCatOp,),
    ),
    Case(
        "index_one_tensor",
        lambda x, i, j: (x[i], x[:, j], x[None, :, j], x[..., i[:2]]),
        (X2, IDX, IDX2),
        (aten.AtenIndexTensorOp,),
    ),
    Case(
        "index_several_tensors",
        lambda x, i, j: (x[i[:2], :, j[:, 0]], x[:, i, j], x[j, i], x[i[:2], 1:, j]),
        (_floats(3, 4, 5, seed=3), IDX, IDX2),
        (aten.AtenIndexTensorOp,),
    ),
    Case(
        "index_mask",
        lambda x, m: (x[m], x[m[:, 0]], x[:, m[0]]),
        (X2, _mask(5, 4)),
        (aten.AtenIndexTensorOp,),
    ),
    Case(
        "index_select_gather",
        lambda x, i, g: (torch.index_select(x, 1, i), torch.index_select(x, 0, i[1]),
                         torch.gather(x, 1, g), torch.gather(x, 0, g[:2, :3])),
        (X2, torch.tensor([3, 0, 3]), _ints(5, 2, low=0, high=4, seed=4)),
        (aten.AtenIndexSelectOp, aten.AtenGatherOp),
    ),
    Case(
        "scatter",
        lambda x, g, s: (x.scatter(1, g, s), x.scatter(0, g[:2], -2.5), x.scatter_add(1, g, s),
                         x.scatter(1, g[:3, :1], s)),
        (X2, torch.tensor([[0, 3]] * 5), _floats(5, 3, seed=5)),
        (aten.AtenScatterSrcOp, aten.AtenScatterValueOp, aten.AtenScatterAddOp),
    ),
    Case(
        "index_put",
        lambda x, i, j, v: (
            x.index_put((i[:2], j[:, 0]), v[0, :2]), x.index_put((j, i), v[:2, :3]),
            x.index_put((i,), v[0], accumulate=True), A.index_put(x, [None, i], v[0, :3]),
        ),
        (X2, torch.tensor([0, 2, 0]), IDX2, _floats(3, 4, seed=6)),
        (aten.AtenIndexPutOp,),
    ),
    Case(
        "index_put_mask",
        lambda x, m, v, s: (x.index_put((m,), s),
                         x.index_put((m[:, 0],), v[0]), x.index_put((m[:, 1],), v[:1, 0], True)),
        (X2, _mask(5, 4), _floats(3, 4, seed=6), torch.tensor(7.0)),
        (aten.AtenIndexPutOp,),
        decompose=False,
    ),
    Case(
        "slice_select_scatter_copy",
        lambda x, s, r, d: (
            torch.slice_scatter(x, s, 0, 1, 3), torch.slice_scatter(x, s, 0, -4, 100, 2),
            torch.select_scatter(x, r, 1, -1), A.copy(x, r[:4]), A.copy(x, d),
        ),
        (X2, _floats(2, 4, seed=7), _floats(5, seed=8), _floats(1, 4, seed=9).double()),
        (aten.AtenSliceScatterOp, aten.AtenSelectScatterOp, aten.AtenCopyOp),
        decompose=False,
    ),
    Case(
        "flip_repeat",
        lambda x: (torch.flip(x, [0, 1]), torch.flip(x, [-1]), x.repeat(2, 1), x.repeat(2, 1, 3)),
        (X2,),
        (aten.AtenFlipOp, aten.AtenRepeatOp),
    ),
    Case(
        "dynamic_joining",
        lambda x, i: (torch.cat([x, x[:1]]), torch.flip(x, [0]), x.repeat(1, x.shape[0]),
                      x[:, i], x[i], torch.gather(x, 1, i.abs().expand(x.shape[0], -1)),
                      x.index_put((i,), x[0]), x.scatter(1, i.abs().expand(x.shape[0], -1), 1.0)),
        (_floats(4, 3), torch.tensor([0, -1])),
        (aten.AtenCatOp, aten.AtenFlipOp, aten.AtenRepeatOp, aten.AtenIndexTensorOp,
         aten.AtenGatherOp, aten.AtenIndexPutOp, aten.AtenScatterValueOp),
        dynamic=({0: _batch()}, None),
        feeds=[(_floats(4, 3), torch.tensor([0, -1])), (_floats(7, 3, seed=3), torch.tensor([2, -2]))],
    ),
    Case(
        "nonzero",
        lambda i: torch.nonzero(i),
        (I2,),
        (aten.AtenNonzeroOp,),
    ),
]  # fmt: skip

CREATION = [
    Case(
        "full_zeros_ones_empty",
        lambda x: (torch.full((2, 3), 1.5), torch.zeros(2, dtype=torch.int64), torch.ones(3, 2),
                   torch.empty(2, 2).fill_(0.5), x.new_zeros(3), torch.full((2,), 3, dtype=torch.int32),
                   torch.full((), True)),
        (X2,),
        (aten.AtenFullOp, aten.AtenEmptyMemoryFormatOp),
    ),
    Case(
        "like",
        lambda x: (torch.zeros_like(x), torch.ones_like(x, dtype=torch.int64), torch.full_like(x, 7),
                   A.fill.Scalar(x, -1), torch.scalar_tensor(2.5), torch.scalar_tensor(3, dtype=torch.int32)),
        (X2,),
        (aten.AtenZerosLikeOp, aten.AtenOnesLikeOp, aten.AtenFullLikeOp, aten.AtenFillScalarOp,
         aten.AtenScalarTensorOp),
        decompose=False,
    ),
    Case(
        "arange",
        lambda x: (torch.arange(5), torch.arange(1, 4), torch.arange(0.0, 1.0, 0.1),
                   torch.arange(2, 11, 3), torch.arange(-1.5, 2.0, 0.5, dtype=torch.float64),
                   torch.arange(5, 0, -2)),
        (X2,),
        (aten.AtenArangeStartStepOp,),
    ),
    Case(
        "arange_overloads",
        lambda x: (torch.arange(4), torch.arange(2, 6), torch.arange(1, 2.5, 0.5)),
        (X2,),
        (aten.AtenArangeOp, aten.AtenArangeStartOp, aten.AtenArangeStartStepOp),
        decompose=False,
    ),
    Case(
        "dynamic_creation",
        lambda x: (torch.full((x.shape[0], 2), 3.0), torch.arange(x.shape[0]),
                   torch.arange(1, x.shape[0], 2), torch.zeros_like(x),
                   torch.arange(0.5, x.shape[0], 1.5), torch.ones(x.shape[0], dtype=torch.int64)),
        (_floats(4, 3),),
        (aten.AtenFullOp, aten.AtenArangeStartStepOp),
        dynamic=({0: _batch(low=4)},),
        feeds=[(_floats(4, 3),), (_floats(7, 3, seed=3),)],
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", [*VIEWS, *SLICES, *INDEXING, *CREATION], ids=str)
def test_against_eager(case: Case) -> None:
    run_case(case)


def test_constant_and_lifted_tensors() -> None:
    """Parameters and lifted constants are `torch.constant`s: core constants of the same data."""

    class Scaled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.table = torch.nn.Parameter(_floats(6, 4, seed=9))
            self.register_buffer("rows", torch.tensor([5, 0, 2]))

        def forward(self, i: object) -> object:
            return self.table[i], self.table[self.rows], torch.cat([self.table, self.table[:1]])

    run_case(Case("constants", Scaled(), (torch.tensor([1, -1]),), (ConstantOp,)))


OUT_OF_RANGE = [
    ("index", lambda x, i: x[i]),
    ("gather", lambda x, i: torch.gather(x, 1, i.expand(3, -1))),
    ("index_put", lambda x, i: x.index_put((i,), torch.ones(4))),
]


@pytest.mark.parametrize(("name", "fn"), OUT_OF_RANGE, ids=[n for n, _ in OUT_OF_RANGE])
def test_out_of_range_indices_fail_the_run(name: str, fn: Callable[..., object]) -> None:
    """An index past the dim (or before its start) stops the run with the node named,
    instead of reading or writing outside a buffer."""
    from rung.runtime import InferenceSession

    program = export(fn, (_floats(3, 4), torch.tensor([0, 2])))
    for level in ("core", "kernel"):
        session = InferenceSession(program, level=level)
        names = [i.name for i in session.get_inputs()]
        for bad in ([0, 4], [-5, 1]):
            feed = {names[0]: np.zeros((3, 4), np.float32), names[1]: np.array(bad)}
            with pytest.raises(RungError, match="out of range"):
                session.run(None, feed)
