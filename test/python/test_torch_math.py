"""The elementwise torch → core lowerings (`lowering/torch_to_core/math.py`) against torch eager.

Each case exports a small function, checks that the torch-dialect program holds
the ATen ops the case is meant to exercise (torch's decompositions turn some
ops into others), and compares every level with torch run eagerly. Cases cover
torch's type promotion (integer tensors, float Scalars), broadcasting, the
Scalar overloads and a dynamic batch. Ops that only appear before decomposition
(`silu`, `rsub`, `masked_fill` ...) are imported without it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from torch_cases import LEVELS, assert_close, check_against_eager, eager_outputs, export

from rung.dialects.torch import generated_ops as aten

torch = pytest.importorskip("torch")

A = torch.ops.aten
F = torch.nn.functional


def torch_ops(program: object, decompose: bool = True) -> set[type]:
    """The op classes of the program imported into the torch dialect."""
    from rung.importers.torch import import_program

    return {type(op) for op in import_program(program, decompose=decompose).walk()}


@dataclass(frozen=True)
class Case:
    name: str
    fn: Callable[..., object]
    args: tuple
    ops: tuple[type, ...]
    rtol: float = 1e-3
    atol: float = 1e-4

    def __str__(self) -> str:
        return self.name


def _floats(*shape: int, seed: int = 0) -> object:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _positive(*shape: int, seed: int = 0) -> object:
    return torch.rand(*shape, generator=torch.Generator().manual_seed(seed)) * 3 + 0.25


def _ints(*shape: int, low: int = -6, high: int = 7, seed: int = 0) -> object:
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(low, high, shape, generator=gen)


def _nonzero_ints(*shape: int, seed: int = 1) -> object:
    x = _ints(*shape, low=1, high=5, seed=seed)
    signs = torch.tensor([1, -1]).repeat(x.numel() // 2 + 1)[: x.numel()].reshape(shape)
    return x * signs


X = _floats(2, 3)
Y = _floats(2, 3, seed=1)
ROW = _floats(3, seed=2)
XI = _ints(2, 3)
YI = _nonzero_ints(2, 3)
HALVES = torch.tensor([[-2.5, -1.5, -0.5, 0.5, float("nan")], [1.5, 2.5, -1.7, 1.2, 0.0]])
SPECIAL = torch.tensor([[1.0, float("nan"), float("inf")], [-float("inf"), -0.0, 3.5]])

CASES = [
    Case(
        "arithmetic_broadcast",
        lambda x, r: (
            x + r, x - r, A.add.Tensor(x, r, alpha=2), torch.sub(x, r, alpha=0.5), x * r, x / r,
            torch.maximum(x, r), torch.minimum(x, r), torch.atan2(x, r),
        ),
        (X, ROW),
        (aten.AtenAddTensorOp, aten.AtenSubTensorOp, aten.AtenMulTensorOp, aten.AtenDivTensorOp,
         aten.AtenMaximumOp, aten.AtenMinimumOp, aten.AtenAtan2Op),
    ),
    Case(
        "arithmetic_int",
        lambda x, y: (
            x + y, torch.sub(x, y, alpha=3), x * y, x / y, torch.div(x, y, rounding_mode="trunc"),
            torch.div(x, y, rounding_mode="floor"), torch.remainder(x, y), torch.fmod(x, y),
            torch.maximum(x, y), torch.neg(x), torch.abs(x), x**2, torch.atan2(x, y),
        ),
        (XI, YI),
        (aten.AtenAddTensorOp, aten.AtenSubTensorOp, aten.AtenDivTensorModeOp,
         aten.AtenRemainderTensorOp, aten.AtenFmodTensorOp, aten.AtenNegOp, aten.AtenAbsOp,
         aten.AtenPowTensorScalarOp),
    ),
    Case(
        "int_with_float",
        lambda i, x: (i + x, i * x, torch.maximum(i, x), torch.pow(x, i), i / A.abs(i)),
        (XI, X),
        (aten.AtenPowTensorTensorOp, aten.AtenMaximumOp),
    ),
    Case(
        # Python numbers in Tensor slots (`x * 2.5`) come as 0-d constants, promoted the same way.
        "python_numbers",
        lambda x, i: (
            x * 2.5, 1 - x, x + 1, x / 3, i + 1.5, i * 2, i / 2, i - 1, 2 ** x,
            torch.where(x > 0, x, 0.0), x.masked_fill(x < 0, 1.0),
        ),
        (X, XI),
        (aten.AtenMulTensorOp, aten.AtenSubTensorOp, aten.AtenAddTensorOp, aten.AtenDivTensorOp,
         aten.AtenPowScalarOp, aten.AtenWhereSelfOp),
    ),
    Case(
        "scalar_overloads",
        lambda x: (
            A.add.Scalar(x, 2.5), A.add.Scalar(x, 2, 3), A.sub.Scalar(x, 1), A.mul.Scalar(x, 3),
            A.div.Scalar(x, 4), A.div.Scalar_mode(x, 0.75, rounding_mode="floor"),
            A.div.Scalar_mode(x, 0.75, rounding_mode="trunc"), A.remainder.Scalar(x, 0.75),
            A.fmod.Scalar(x, 0.75), A.pow.Tensor_Scalar(x, 3), A.pow.Scalar(2.0, x),
        ),
        (X * 3,),
        (aten.AtenAddScalarOp, aten.AtenSubScalarOp, aten.AtenMulScalarOp, aten.AtenDivScalarOp,
         aten.AtenDivScalarModeOp, aten.AtenRemainderScalarOp, aten.AtenFmodScalarOp,
         aten.AtenPowTensorScalarOp, aten.AtenPowScalarOp),
    ),
    Case(
        "scalar_overloads_int",
        lambda i: (
            A.add.Scalar(i, 1.5), A.mul.Scalar(i, 3), A.div.Scalar(i, 4), A.sub.Scalar(i, 2, 2),
            A.div.Scalar_mode(i, 4, rounding_mode="floor"),
            A.div.Scalar_mode(i, 4, rounding_mode="trunc"), A.remainder.Scalar(i, 4),
            A.fmod.Scalar(i, 4), A.pow.Scalar(2, A.abs(i)),
        ),
        (XI,),
        (aten.AtenAddScalarOp, aten.AtenMulScalarOp, aten.AtenDivScalarModeOp,
         aten.AtenRemainderScalarOp, aten.AtenFmodScalarOp, aten.AtenPowScalarOp),
    ),
    Case(
        # torch rounds x - fmod(x, y) to the nearest whole quotient: 1 // 0.1 is 9, not 10.
        "floor_division_float",
        lambda x, y: torch.div(x, y, rounding_mode="floor"),
        (torch.tensor([1.0, -1.0, 7.5, -7.5, 0.3, 5.0, -5.0, 0.0, 6.9, 8.7, 3.4, 1.5, 0.5]),
         torch.tensor([0.1, 0.1, -2.0, 2.0, 0.1, 2.5, 2.5, -3.0, 1.8, -0.4, -0.2, 0.3, 0.1])),
        (aten.AtenDivTensorModeOp,),
        atol=0.0,
    ),
    Case(
        "division_by_zero",
        lambda x, y: (x / y, torch.div(x, y, rounding_mode="floor")),
        (torch.tensor([1.0, -2.0, 0.0]), torch.tensor([0.0, 0.0, 0.0])),
        (aten.AtenDivTensorOp, aten.AtenDivTensorModeOp),
    ),
    Case(
        "exp_log",
        lambda x: (
            torch.exp(x), torch.expm1(x), torch.log(x), torch.log1p(x), torch.log2(x),
            torch.log10(x), torch.sqrt(x), torch.rsqrt(x), torch.reciprocal(x),
        ),
        (_positive(2, 4),),
        (aten.AtenExpOp, aten.AtenExpm1Op, aten.AtenLogOp, aten.AtenLog1pOp, aten.AtenLog2Op,
         aten.AtenLog10Op, aten.AtenSqrtOp, aten.AtenRsqrtOp, aten.AtenReciprocalOp),
    ),
    Case(
        # Near 0 `exp(x) - 1` and `log(1 + x)` lose every digit: a tight relative tolerance.
        "expm1_log1p_tiny",
        # Where exp(x) is 0, 1 or inf Kahan's quotient is undefined: those have their own path.
        lambda x, y, z: (
            torch.expm1(x), torch.log1p(x), torch.expm1(y), torch.log1p(torch.abs(y)),
            torch.expm1(z), torch.log1p(z),
        ),
        (torch.tensor([1e-7, -3e-7, 2e-5, -1e-4, 0.0, 0.5, -0.5]),
         torch.tensor([5.0, -5.0, 0.9, -0.9, -30.0, 1e-3]),
         torch.tensor([100.0, -200.0, -1.0, -2.0, float("inf"), -float("inf"), float("nan")])),
        (aten.AtenExpm1Op, aten.AtenLog1pOp),
        rtol=1e-5,
        atol=1e-10,
    ),
    Case(
        "exp_log_int",
        lambda i: (
            torch.exp(i), torch.sqrt(torch.abs(i)), torch.log2(A.add.Scalar(torch.abs(i), 1)),
            torch.expm1(i), torch.sigmoid(i),
        ),
        (_ints(2, 3, low=-3, high=4),),
        (aten.AtenExpOp, aten.AtenSqrtOp, aten.AtenLog2Op, aten.AtenExpm1Op, aten.AtenSigmoidOp),
    ),
    Case(
        "trigonometric",
        lambda u, v: (
            torch.sin(u), torch.cos(u), torch.tan(u), torch.asin(u), torch.acos(u), torch.atan(v),
            torch.sinh(u), torch.cosh(u), torch.tanh(v), torch.asinh(v), torch.acosh(v),
            torch.atanh(u), torch.erf(u), torch.sigmoid(v),
        ),
        (torch.rand(2, 4) * 1.8 - 0.9, _positive(2, 4) + 1),
        (aten.AtenSinOp, aten.AtenCosOp, aten.AtenTanOp, aten.AtenAsinOp, aten.AtenAcosOp,
         aten.AtenAtanOp, aten.AtenSinhOp, aten.AtenCoshOp, aten.AtenTanhOp, aten.AtenAsinhOp,
         aten.AtenAcoshOp, aten.AtenAtanhOp, aten.AtenErfOp, aten.AtenSigmoidOp),
    ),
    Case(
        # round gives half to even, as core's round.
        "rounding",
        lambda x, i: (
            torch.floor(x), torch.ceil(x), torch.round(x), torch.trunc(x), torch.sign(x),
            torch.floor(i), torch.round(i), torch.trunc(i), torch.sign(i),
        ),
        (HALVES, XI),
        (aten.AtenFloorOp, aten.AtenCeilOp, aten.AtenRoundOp, aten.AtenTruncOp, aten.AtenSignOp),
    ),
    Case(
        "nan_inf",
        lambda x, i: (torch.isnan(x), torch.isinf(x), torch.isnan(i), torch.isinf(i)),
        (SPECIAL, XI),
        (aten.AtenIsnanOp, aten.AtenIsinfOp),
    ),
    Case(
        # NaN stays NaN through clamps and activations, as in torch (its sign is 0). GELU
        # sees no infinity: torch's own answer for it depends on the CPU path (a 0-d tensor
        # gives inf, a vectorised one NaN).
        "nan_propagation",
        lambda x, z: (
            torch.relu(x), torch.clamp(x, -1, 1), F.hardtanh(x), F.leaky_relu(x), F.elu(x),
            F.gelu(torch.clamp(x, -1e30, 1e30)), torch.maximum(x, z), torch.sign(x),
        ),
        (SPECIAL, torch.zeros(3)),
        (aten.AtenReluOp, aten.AtenClampOp, aten.AtenHardtanhOp, aten.AtenLeakyReluOp,
         aten.AtenEluOp, aten.AtenGeluOp, aten.AtenMaximumOp, aten.AtenSignOp),
    ),
    Case(
        "compare_tensor",
        lambda x, r, i, j: (x == r, x != r, x < r, x <= r, x > r, x >= r, i < x, i == j),
        (torch.tensor([[1.0, 2.0, 3.0], [0.5, 2.5, 3.0]]), torch.tensor([1.0, 2.5, 3.0]), XI,
         torch.tensor([[1, 2, 3], [-3, 0, 3]])),
        (aten.AtenEqTensorOp, aten.AtenNeTensorOp, aten.AtenLtTensorOp, aten.AtenLeTensorOp,
         aten.AtenGtTensorOp, aten.AtenGeTensorOp),
    ),
    Case(
        # An integer tensor against a float Scalar compares in float: 1 > 0.5, not 1 > 0.
        "compare_scalar",
        lambda x, i: (
            A.eq.Scalar(x, 0.5), A.ne.Scalar(x, 0.5), A.lt.Scalar(x, 0.5), A.le.Scalar(x, 0.5),
            A.gt.Scalar(i, -0.5), A.ge.Scalar(i, 0.5), A.eq.Scalar(i, 0.5), A.lt.Scalar(i, 0.5),
            A.le.Scalar(i, -0.5), A.eq.Scalar(i, 2),
            A.eq.Scalar(A.gt.Scalar(x, 0), 1),
        ),
        (torch.tensor([[0.5, 1.0, -1.0], [0.25, 0.5, 2.0]]),
         torch.tensor([[-2, -1, 0], [1, 2, 3]])),
        (aten.AtenEqScalarOp, aten.AtenNeScalarOp, aten.AtenLtScalarOp, aten.AtenLeScalarOp,
         aten.AtenGtScalarOp, aten.AtenGeScalarOp),
    ),
    Case(
        # logical_* read any tensor as bool (0 is false, NaN true); bools add as `or`.
        "logical",
        lambda x, y: (
            torch.logical_and(x, y), torch.logical_or(x, y), torch.logical_xor(x, y),
            torch.logical_not(x), torch.logical_not(x > 0), (x > 0) + (y > 0),
            (x > 0) * (y > 0),
        ),
        (torch.tensor([[0.0, 1.0, -2.0], [float("nan"), 0.0, 3.0]]),
         torch.tensor([[0.0, 4.0, 5.0], [1.0, 2.0, 6.0]])),
        (aten.AtenLogicalAndOp, aten.AtenLogicalOrOp, aten.AtenLogicalXorOp,
         aten.AtenLogicalNotOp, aten.AtenAddTensorOp, aten.AtenMulTensorOp),
    ),
    Case(
        "bitwise",
        lambda i, j: (
            i & j, i | j, i ^ j, ~i, A.bitwise_and.Scalar(i, 5), A.bitwise_or.Scalar(i, 8),
            A.bitwise_xor.Scalar(i, 3), (i > 0) & (j > 0), (i > 0) | (j > 0), (i > 0) ^ (j > 0),
            ~(i > 0),
        ),
        (XI, YI),
        (aten.AtenBitwiseAndTensorOp, aten.AtenBitwiseOrTensorOp, aten.AtenBitwiseXorTensorOp,
         aten.AtenBitwiseNotOp, aten.AtenBitwiseAndScalarOp, aten.AtenBitwiseOrScalarOp,
         aten.AtenBitwiseXorScalarOp),
    ),
    Case(
        # The condition and the choices broadcast; an int and a float choice meet in float.
        "where",
        lambda c, x, r, i, d: (torch.where(c, x, r), torch.where(c, i, x), torch.where(d, x, i)),
        (torch.tensor([[True, False, True], [False, False, True]]), X, ROW, XI,
         torch.tensor([False, True, True])),
        (aten.AtenWhereSelfOp,),
    ),
    Case(
        "clamp",
        lambda x, lo, hi, i: (
            torch.clamp(x, -0.5, 0.75), torch.clamp(x, min=0.1), A.clamp(x, None, 0.2),
            torch.clamp(x, lo, hi), torch.clamp(x, min=lo), torch.clamp(i, -2, 3),
            F.hardtanh(x), F.hardtanh(x, -0.3, 0.6), torch.relu(x), torch.relu(i),
        ),
        (X, ROW - 0.5, ROW + 0.5, XI),
        (aten.AtenClampOp, aten.AtenClampTensorOp, aten.AtenHardtanhOp, aten.AtenReluOp),
    ),
    Case(
        "activations",
        lambda x: (
            F.gelu(x), F.gelu(x, approximate="tanh"), F.elu(x), F.elu(x, alpha=0.5), F.selu(x),
            F.leaky_relu(x), F.leaky_relu(x, 0.2),
        ),
        (X * 2,),
        (aten.AtenGeluOp, aten.AtenEluOp, aten.AtenLeakyReluOp),
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=str)
def test_against_eager(case: Case) -> None:
    program = check_against_eager(case.fn, case.args, rtol=case.rtol, atol=case.atol)
    missing = set(case.ops) - torch_ops(program)
    assert not missing, f"the program lacks {sorted(c.__name__ for c in missing)}"


UNDECOMPOSED = [
    Case(
        "silu_hard",
        lambda x: (F.silu(x), F.hardswish(x), F.hardsigmoid(x), F.relu6(A.mul.Scalar(x, 4))),
        (X * 2,),
        (aten.AtenSiluOp, aten.AtenHardswishOp, aten.AtenHardsigmoidOp, aten.AtenRelu6Op),
    ),
    Case(
        "rsub_masked_fill",
        lambda x, i, m, d: (
            A.rsub.Scalar(x, 2), A.rsub.Scalar(x, 1, 3), A.rsub.Scalar(i, 0.5),
            A.masked_fill.Scalar(x, m, -1.5), A.masked_fill.Scalar(i, d, 7),
            A.where.ScalarOther(m, x, 0.25), A.where.ScalarOther(d, i, 0.25),
        ),
        (X, XI, torch.tensor([[True, False, True], [False, False, True]]),
         torch.tensor([False, True, True])),
        (aten.AtenRsubScalarOp, aten.AtenMaskedFillScalarOp, aten.AtenWhereScalarOtherOp),
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", UNDECOMPOSED, ids=str)
def test_undecomposed_against_eager(case: Case) -> None:
    """Ops torch's Core ATen decompositions remove, imported as exported."""
    from rung.importers.torch import import_program
    from rung.runtime import InferenceSession

    program = export(case.fn, case.args)
    missing = set(case.ops) - torch_ops(program, decompose=False)
    assert not missing, f"the program lacks {sorted(c.__name__ for c in missing)}"
    want = eager_outputs(program, case.args)
    for level in LEVELS:
        session = InferenceSession(import_program(program, decompose=False), level=level)
        names = [i.name for i in session.get_inputs()]
        got = session.run(None, {n: t.numpy() for n, t in zip(names, case.args, strict=True)})
        assert_close(got, want, case.rtol, case.atol, f"level {level}")


def test_dynamic_batch() -> None:
    """One library for every batch size: Scalars and a row broadcast over a run-time dim."""

    class Block(torch.nn.Module):
        def forward(self, x: object, r: object) -> object:
            y = F.gelu(A.mul.Scalar(x + r, 0.5))
            return torch.where(A.gt.Scalar(x, 0), y, torch.clamp(x, min=r)), torch.expm1(x) / r

    batch = torch.export.Dim("batch")
    program = check_against_eager(
        Block(),
        (_floats(2, 3), ROW),
        dynamic_shapes={"x": {0: batch}, "r": None},
        feeds=[(_floats(2, 3), ROW), (_floats(5, 3, seed=3), ROW), (_floats(1, 3, seed=4), ROW)],
    )
    expected = {aten.AtenGeluOp, aten.AtenMulScalarOp, aten.AtenWhereSelfOp, aten.AtenExpm1Op}
    assert expected <= torch_ops(program)
