"""Recurrent ONNX ops → core: LSTM, GRU, RNN and Scan, each as a `core.loop` over time.

The input projection `X·Wᵀ + bias` does not depend on the recurrence, so it
is computed for every time step at once before the loop (one large matmul
instead of `seq_length` small ones). Only the hidden-state recurrence runs in
the loop: each iteration gathers its time step of the projection, applies the
cell and yields the new state both as carried value and as per-iteration
output, which `core.loop` stacks into Y. A reverse direction reads step
`seq_length - 1 - i` and flips the stacked output back into time order. Every
direction gets its own loop; their results are concatenated as ONNX lays them
out (`[seq, dirs, batch, H]`, or batch-first for `layout = 1`).

seq_length, batch and input size may be run-time values (the trip count of
the loop, the sizes of its states); hidden_size must be static (the attribute,
or a static R). The other inputs' shapes follow from X and the attributes: a
`?` dim there is checked at run time, so a wrong size fails the run, naming the
node, instead of being read past. `sequence_lens` is accepted only when it
equals the full length everywhere (it then changes nothing): checked at
compile time when constant, else at run time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseIntOrFPElementsAttr,
    IntegerType,
    StringAttr,
    UnrankedTensorType,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue

from rung.dialects import core
from rung.dialects.onnx import YieldOp
from rung.dialects.onnx import generated_ops as onnx
from rung.lowering.kit import (
    CoreBuilder,
    DimOf,
    LoweringError,
    Size,
    constant_array,
    element_of,
    int_attr,
    is_static,
    normalize_axis,
    ranked_shape,
    shape_of_type,
    static_size,
    tensor,
)

from .registry import Results, lowers


class BodyBuilder(CoreBuilder):
    """A CoreBuilder that appends to a new loop body instead of inserting before the op.

    The body is built before the loop op exists, so its ops cannot go through
    the rewriter; they are added to the block directly, with the op's location.
    """

    def __init__(self, outer: CoreBuilder, block: Block) -> None:
        super().__init__(outer.rewriter, outer.op)
        self.block = block

    def insert(self, new: Operation) -> Operation:
        new.location = self.op.location
        self.block.add_op(new)
        return new


# ---- small helpers ------------------------------------------------------------------------


def _scalar_of(b: CoreBuilder, size: Size) -> SSAValue:
    """A size as a rank-0 i64 tensor (a trip count), read at run time when dynamic."""
    return b.reshape(b.shape_vector([size]), tensor(i64, []))


def _flip0(b: CoreBuilder, x: SSAValue) -> SSAValue:
    """`x` reversed along its first dim (a stride -1 slice)."""
    shape = ranked_shape(x)
    if 0 <= shape[0] <= 1:
        return x
    stride = [-1] + [1] * (len(shape) - 1)
    if is_static(x.type):
        op = core.SliceOp.create(
            operands=[x],
            result_types=[x.type],
            properties={
                "start": core.ints([shape[0] - 1] + [0] * (len(shape) - 1)),
                "stride": core.ints(stride),
            },
        )
        return b.insert(op).results[0]
    sizes = b.shape_of(x)
    one, zero = (b.constant(np.array([v], np.int64)) for v in (1, 0))
    last = b.binary("max", b.binary("sub", b.slice(sizes, [0], [1]), one), zero)
    start = b.concat([last, b.constant(np.zeros(len(shape) - 1, np.int64))], 0)
    op = core.SliceOp.create(
        operands=[x, start, sizes, b.constant(np.array(stride, np.int64))], result_types=[x.type]
    )
    return b.insert(op).results[0]


def _matmul(b: CoreBuilder, x: SSAValue, w: SSAValue) -> SSAValue:
    """2-D `x · w` accumulated in the element type (RNN ops are float-only)."""
    (m, _), (_, n) = ranked_shape(x), ranked_shape(w)
    element = element_of(x.type)
    op = core.MatmulOp.create(
        operands=[x, w], result_types=[tensor(element, [m, n])], properties={"acc": element}
    )
    return b.insert(op).results[0]


def _fit(b: CoreBuilder, v: SSAValue, sizes: Sequence[Size], what: str) -> SSAValue:
    """`v` typed with `sizes` (static where they are), checked at run time where its
    type does not already say so.

    The sizes come from X and the attributes; a `?` dim of another input that
    turns out different fails the run instead of being read past its end.
    """
    shape = ranked_shape(v)
    want = [static_size(s) for s in sizes]
    if len(shape) != len(want) or any(
        d >= 0 and w >= 0 and d != w for d, w in zip(shape, want, strict=True)
    ):
        raise LoweringError(f"{what} has shape {list(shape)}, expected {want}")
    unsure = [
        i
        for i, (d, s) in enumerate(zip(shape, sizes, strict=True))
        if (d < 0 or static_size(s) < 0)
        and not (isinstance(s, DimOf) and s.value is v and s.axis == i)
    ]
    if not unsure:
        return v
    expected = b.shape_vector(sizes)
    fits = b.compare("eq", b.shape_of(v), expected)
    checked = b.check(
        v, fits, f"{what} does not have the shape {want} that X and the attributes give"
    )
    out = tensor(element_of(v.type), [d if d >= 0 else w for d, w in zip(shape, want, strict=True)])
    return checked if out == v.type else b.reshape(checked, out, expected)


def _pick(*candidates: Size) -> Size:
    """The first static size among sizes that must be equal, else the first."""
    return next((c for c in candidates if static_size(c) >= 0), candidates[0])


def _reshape(b: CoreBuilder, x: SSAValue, shape: Sequence[Size]) -> SSAValue:
    return b.reshape_to(x, shape)


def _flatten2(b: CoreBuilder, x: SSAValue) -> SSAValue:
    """`x [a, b, c]` as `[a·b, c]`; a `?` product is computed at run time."""
    a, n, c = b.dims(x)
    if static_size(a) >= 0 and static_size(n) >= 0:
        return b.reshape_to(x, [static_size(a) * static_size(n), c])
    rows = b.reduce("prod", b.shape_vector([a, n]), [0])
    shape = b.concat([b.reshape(rows, tensor(i64, [1])), b.shape_vector([c])], 0)
    return b.reshape(x, tensor(element_of(x.type), [-1, static_size(c)]), shape)


def _add(b: CoreBuilder, *values: SSAValue) -> SSAValue:
    acc = values[0]
    for v in values[1:]:
        acc = b.binary("add", acc, v)
    return acc


Activation = Callable[[CoreBuilder, SSAValue], SSAValue]


def _activation(name: str) -> Activation:
    """The core form of an activation named in the `activations` attribute.

    Only the parameterless ones are supported; the others need activation_alpha /
    activation_beta bookkeeping that no exporter we know of produces.
    """
    key = name.lower()
    if key == "sigmoid":
        return lambda b, x: b.unary("sigmoid", x)
    if key == "tanh":
        return lambda b, x: b.unary("tanh", x)
    if key == "relu":
        return lambda b, x: b.binary("max", x, b.splat(0, x))
    raise LoweringError(f"activation '{name}' is not supported")


Recurrent = onnx.RNNOp | onnx.GRUOp | onnx.LSTMOp
"""The ops `_Cell` reads: they share inputs X, W, R, B, sequence_lens, initial_h."""


class _Cell:
    """What every recurrent op shares: attributes, per-direction weights, layouts."""

    def __init__(self, b: CoreBuilder, op: Recurrent, gates: int, defaults: Sequence[str]) -> None:
        self.b = b
        self.op = op
        self.gates = gates
        x, w, r, bias, init_h = op.X, op.W, op.R, op.B, op.initial_h
        self.layout = int(op.attr("layout") or 0)  # type: ignore[arg-type]
        if self.layout not in (0, 1):
            raise LoweringError(f"layout must be 0 or 1, got {self.layout}")
        if len(ranked_shape(x)) != 3:
            raise LoweringError(f"X must have rank 3, got {x.type}")
        if self.layout == 1:
            x = b.transpose(x, [1, 0, 2])
        direction = str(op.attr("direction") or "forward")
        if direction not in ("forward", "reverse", "bidirectional"):
            raise LoweringError(f"unknown direction '{direction}'")
        self.reverse = [False, True] if direction == "bidirectional" else [direction == "reverse"]
        self.dirs = len(self.reverse)
        self.hidden = self._hidden_size(op.attr("hidden_size"), r)
        seq, batch, size = b.dims(x)
        self.seq = seq
        states = [op.initial_h, getattr(op, "initial_c", None)]
        self.batch = _pick(batch, *(self._batch_dim(b, v) for v in states if v is not None))
        self.input = _pick(size, DimOf(w, 2)) if len(ranked_shape(w)) == 3 else size
        gh = gates * self.hidden
        self.x = _fit(b, x, [seq, self.batch, self.input], "X")
        self.w = _fit(b, w, [self.dirs, gh, self.input], "W")
        self.r = _fit(b, r, [self.dirs, gh, self.hidden], "R")
        self.bias = None if bias is None else _fit(b, bias, [self.dirs, 2 * gh], "B")
        self._full_length(op.sequence_lens)
        self.init_h = self._state(init_h, "initial_h")
        clip = op.attr("clip")
        self.clip = None if clip is None else float(clip)  # type: ignore[arg-type]
        # The schema's default list is for one fixed op (RNN's is [Tanh, Tanh]);
        # only an explicit attribute says anything, else the per-op defaults apply.
        given = op.onnx_attributes()
        if "activation_alpha" in given or "activation_beta" in given:
            raise LoweringError("activation_alpha / activation_beta are not supported")
        names: list[str] = list(defaults) * self.dirs
        if "activations" in given:
            names = [str(n) for n in op.attr("activations")]  # type: ignore[attr-defined]
        if len(names) == len(defaults) and self.dirs == 2:
            names = names * 2
        if len(names) != len(defaults) * self.dirs:
            raise LoweringError(f"expected {len(defaults) * self.dirs} activations, got {names}")
        self.acts = [
            [_activation(n) for n in names[d * len(defaults) : (d + 1) * len(defaults)]]
            for d in range(self.dirs)
        ]

    @staticmethod
    def _hidden_size(attribute: object, r: SSAValue) -> int:
        """The attribute, else the last dim of R (`[dirs, gates·hidden, hidden]`)."""
        if attribute is not None:
            hidden = int(attribute)  # type: ignore[call-overload]
            if hidden <= 0:
                raise LoweringError(f"hidden_size must be positive, got {hidden}")
            return hidden
        shape = ranked_shape(r)
        if len(shape) != 3 or shape[-1] < 0:
            raise LoweringError(
                f"hidden_size needs the attribute or a static R of rank 3, got {r.type}"
            )
        return shape[-1]

    @property
    def element(self) -> Attribute:
        return element_of(self.x.type)

    def _batch_dim(self, b: CoreBuilder, state: SSAValue) -> Size:
        """The batch dim of an initial state, where its layout puts it (1 past its rank
        when it has too few dims: `_fit` then refuses it)."""
        axis = 0 if self.layout == 1 else 1
        return b.dims(state)[axis] if len(ranked_shape(state)) > axis else 1

    def _full_length(self, lens: SSAValue | None) -> None:
        """Accept `sequence_lens` only where it is the full length for every batch entry:
        a constant at compile time, anything else at run time."""
        if lens is None:
            return
        b = self.b
        values = constant_array(lens)
        seq = static_size(self.seq)
        if values is None or seq < 0:
            lens = _fit(b, lens, [self.batch], "sequence_lens")
        elif values.ndim != 1 or static_size(self.batch) not in (-1, values.size):
            batch = static_size(self.batch)
            raise LoweringError(
                f"sequence_lens has shape {list(values.shape)}, expected "
                f"[{batch if batch >= 0 else 'batch'}]"
            )
        if values is not None and seq >= 0:
            if not np.all(values == seq):
                raise LoweringError("sequence_lens other than the full length is not supported")
            return
        wanted = b.broadcast_to(_scalar_of(b, self.seq), tensor(i64, ranked_shape(lens)), lens)
        full = b.compare("eq", b.cast(lens, i64), wanted)
        self.x = b.check(self.x, full, "sequence_lens other than the full length is not supported")

    def _state(self, v: SSAValue | None, what: str) -> list[SSAValue]:
        """An initial state per direction, `[batch, hidden]`; zeros when absent."""
        b, bh = self.b, [self.batch, self.hidden]
        if v is None:
            if static_size(self.batch) >= 0:
                zeros = np.zeros([static_size(self.batch), self.hidden], dtype=np.float64)
                return [b.constant(zeros, like=self.x.type) for _ in range(self.dirs)]
            zero = b.scalar(0, self.element)
            like = tensor(self.element, [-1, self.hidden])
            return [b.broadcast_to(zero, like, shape=b.shape_vector(bh)) for _ in range(self.dirs)]
        if self.layout == 1:
            v = b.transpose(_fit(b, v, [self.batch, self.dirs, self.hidden], what), [1, 0, 2])
        else:
            v = _fit(b, v, [self.dirs, self.batch, self.hidden], what)
        sizes = [static_size(self.batch), self.hidden]
        return [_reshape(b, b.slice(v, [d, 0, 0], [1, *sizes]), bh) for d in range(self.dirs)]

    def activate(self, b: CoreBuilder, d: int, k: int, x: SSAValue) -> SSAValue:
        """Activation `k` of direction `d`, its input clipped to ±clip when asked."""
        if self.clip is not None:
            x = b.binary("max", x, b.splat(-self.clip, x))
            x = b.binary("min", x, b.splat(self.clip, x))
        return self.acts[d][k](b, x)

    def weights(self, d: int) -> tuple[SSAValue, SSAValue, SSAValue, SSAValue]:
        """Direction d's `Wᵀ [I, gH]`, `Rᵀ [H, gH]` and the biases `Wb`, `Rb` `[gH]`."""
        b, gh = self.b, self.gates * self.hidden
        size = static_size(self.input)
        w = _reshape(b, b.slice(self.w, [d, 0, 0], [1, gh, size]), [gh, self.input])
        r = _reshape(b, b.slice(self.r, [d, 0, 0], [1, gh, self.hidden]), [gh, self.hidden])
        if self.bias is None:
            zero = b.constant(np.zeros(gh), like=self.x.type)
            wb, rb = zero, zero
        else:
            wb = _reshape(b, b.slice(self.bias, [d, 0], [1, gh]), [gh])
            rb = _reshape(b, b.slice(self.bias, [d, gh], [1, gh]), [gh])
        return b.transpose(w, [1, 0]), b.transpose(r, [1, 0]), wb, rb

    def project(self, wt: SSAValue, bias: SSAValue) -> SSAValue:
        """`X·Wᵀ + bias` for all time steps at once: `[seq, batch, gH]`."""
        b, gh = self.b, self.gates * self.hidden
        xw = _reshape(b, _matmul(b, _flatten2(b, self.x), wt), [self.seq, self.batch, gh])
        full = b.broadcast_to(bias, xw.type, xw)
        return b.binary("add", xw, full)

    def gate(self, b: CoreBuilder, v: SSAValue, k: int, state: SSAValue) -> SSAValue:
        """Gate k (`[batch, H]`) of a `[batch, gH]` value, sized like `state` (`[batch, H]`).

        A run-time batch is read off the carried state, so that the loop sees the
        per-step output keep the state's shape (its rows are allocated before it).
        """
        h = self.hidden
        if static_size(self.batch) >= 0:
            return b.slice(v, [0, k * h], [static_size(self.batch), h])
        new = core.SliceOp.create(
            operands=[
                v,
                b.constant(np.array([0, k * h], np.int64)),
                b.shape_of(state),
                b.constant(np.array([1, 1], np.int64)),
            ],
            result_types=[state.type],
        )
        return b.insert(new).results[0]

    def like_state(self, v: SSAValue, d: int) -> SSAValue:
        """`v` (`[H]`) broadcast to the shape of a state, `[batch, H]`."""
        state = self.init_h[d]
        return self.b.broadcast_to(v, state.type, state)

    def run(
        self,
        d: int,
        states: Sequence[SSAValue],
        step: Callable[[BodyBuilder, SSAValue, list[SSAValue]], list[SSAValue]],
        xw: SSAValue,
    ) -> tuple[SSAValue, list[SSAValue]]:
        """One direction's core.loop: returns Y `[seq, batch, H]` and the final states.

        `step(body, xw_t, states)` builds one time step and returns the new
        states, the first of which (H) is also the per-iteration output.
        """
        b = self.b
        scalar_i64, scalar_i1 = tensor(i64, []), tensor(IntegerType(1), [])
        block = Block(arg_types=[scalar_i64, scalar_i1, *(s.type for s in states)])
        body = BodyBuilder(b, block)
        it, cond, *carried = block.args
        seq = static_size(self.seq)
        trips = b.constant(np.array(seq, np.int64)) if seq >= 0 else _scalar_of(b, self.seq)
        t: SSAValue = it
        if self.reverse[d]:
            if seq >= 0:
                last = body.constant(np.array(seq - 1, dtype=np.int64))
            else:
                last = b.binary("sub", trips, b.scalar(1, i64))
            t = body.binary("sub", last, it)
        gh = self.gates * self.hidden
        gather = core.GatherOp.create(
            operands=[xw, t],
            result_types=[tensor(self.element, [static_size(self.batch), gh])],
            properties={"axis": int_attr(0)},
        )
        xw_t = body.insert(gather).results[0]
        new = step(body, xw_t, list(carried))
        body.insert(core.YieldOp.create(operands=[cond, *new, new[0]]))
        true = b.constant(np.array(True))
        y_type = tensor(self.element, [seq, static_size(self.batch), self.hidden])
        loop = core.LoopOp.create(
            operands=[trips, true, *states],
            result_types=[*(s.type for s in states), y_type],
            regions=[Region(block)],
        )
        *finals, y = b.insert(loop).results
        if self.reverse[d]:
            y = _flip0(b, y)
        return y, list(finals)

    def outputs(self, ys: Sequence[SSAValue], finals: Sequence[Sequence[SSAValue]]) -> list:
        """Y and one `[dirs, batch, H]` value per state, in the op's layout.

        Only the outputs the op actually has are built.
        """
        b, h, n = self.b, self.hidden, self.batch
        present = self.op.onnx_outputs() + [None] * 3
        results: list[SSAValue | None] = []
        if present[0] is not None:
            y4 = [_reshape(b, y, [self.seq, 1, n, h]) for y in ys]
            y = b.concat(y4, 1)
            results.append(b.transpose(y, [2, 0, 1, 3]) if self.layout == 1 else y)
        else:
            results.append(None)
        for k in range(len(finals[0])):
            if present[1 + k] is None:
                results.append(None)
                continue
            s = b.concat([_reshape(b, f[k], [1, n, h]) for f in finals], 0)
            results.append(b.transpose(s, [1, 0, 2]) if self.layout == 1 else s)
        return results


# ---- the ops ----------------------------------------------------------------------------------


@lowers(onnx.RNNOp)
def rnn(b: CoreBuilder, op: onnx.RNNOp) -> Results:
    """`Hₜ = f(Xₜ·Wᵀ + Hₜ₋₁·Rᵀ + Wb + Rb)`."""
    cell = _Cell(b, op, 1, ["Tanh"])
    ys, finals = [], []
    for d in range(cell.dirs):
        wt, rt, wb, rb = cell.weights(d)
        xw = cell.project(wt, b.binary("add", wb, rb))

        def step(body: BodyBuilder, x_t: SSAValue, s: list[SSAValue], d: int = d) -> list[SSAValue]:
            pre = body.binary("add", x_t, _matmul(body, s[0], rt))  # noqa: B023
            return [cell.activate(body, d, 0, pre)]

        y, final = cell.run(d, [cell.init_h[d]], step, xw)
        ys.append(y)
        finals.append(final)
    return cell.outputs(ys, finals)


@lowers(onnx.GRUOp)
def gru(b: CoreBuilder, op: onnx.GRUOp) -> Results:
    """Gates z, r, h; `Hₜ = (1 - z)·h + z·Hₜ₋₁`.

    With `linear_before_reset` the reset gate scales `Hₜ₋₁·Rhᵀ + Rbh`, so Rbh
    stays in the loop; otherwise r scales Hₜ₋₁ before its product with Rh, and
    every bias folds into the projection.
    """
    cell = _Cell(b, op, 3, ["Sigmoid", "Tanh"])
    lbr = bool(op.attr("linear_before_reset") or 0)
    hh = cell.hidden
    ys, finals = [], []
    for d in range(cell.dirs):
        wt, rt, wb, rb = cell.weights(d)
        rb_zr = b.slice(rb, [0], [2 * hh])
        rb_h = b.slice(rb, [2 * hh], [hh])
        if lbr:
            rb_fold = b.concat([rb_zr, b.constant(np.zeros(hh), like=cell.x.type)], 0)
        else:
            rb_fold = rb
        xw = cell.project(wt, b.binary("add", wb, rb_fold))
        rt_zr = b.slice(rt, [0, 0], [hh, 2 * hh])
        rt_h = b.slice(rt, [0, 2 * hh], [hh, hh])
        rbh = cell.like_state(rb_h, d)

        def step(body: BodyBuilder, x_t: SSAValue, s: list[SSAValue], d: int = d) -> list[SSAValue]:
            (h,) = s
            hr = _matmul(body, h, rt_zr)  # noqa: B023
            z = cell.activate(
                body, d, 0, _add(body, cell.gate(body, x_t, 0, h), cell.gate(body, hr, 0, h))
            )
            r = cell.activate(
                body, d, 0, _add(body, cell.gate(body, x_t, 1, h), cell.gate(body, hr, 1, h))
            )
            if lbr:
                inner = body.binary("add", _matmul(body, h, rt_h), rbh)  # noqa: B023
                rec = body.binary("mul", r, inner)
            else:
                rec = _matmul(body, body.binary("mul", r, h), rt_h)  # noqa: B023
            cand = cell.activate(body, d, 1, body.binary("add", cell.gate(body, x_t, 2, h), rec))
            one_minus_z = body.binary("sub", body.splat(1, z), z)
            return [
                body.binary("add", body.binary("mul", one_minus_z, cand), body.binary("mul", z, h))
            ]

        y, final = cell.run(d, [cell.init_h[d]], step, xw)
        ys.append(y)
        finals.append(final)
    return cell.outputs(ys, finals)


@lowers(onnx.LSTMOp)
def lstm(b: CoreBuilder, op: onnx.LSTMOp) -> Results:
    """Gates i, o, f, c; `Cₜ = f·Cₜ₋₁ + i·g(c)`, `Hₜ = o·h(Cₜ)`, with optional peepholes.

    `input_forget` couples the gates: f = 1 - i.
    """
    cell = _Cell(b, op, 4, ["Sigmoid", "Tanh", "Tanh"])
    init_c = cell._state(op.initial_c, "initial_c")  # noqa: SLF001
    peep = op.P
    if peep is not None:
        peep = _fit(b, peep, [cell.dirs, 3 * cell.hidden], "P")
    coupled = bool(op.attr("input_forget") or 0)
    hh = cell.hidden
    ys, finals = [], []
    for d in range(cell.dirs):
        wt, rt, wb, rb = cell.weights(d)
        xw = cell.project(wt, b.binary("add", wb, rb))
        ps: list[SSAValue | None] = [None, None, None]
        if peep is not None:
            pd = _reshape(b, b.slice(peep, [d, 0], [1, 3 * hh]), [3 * hh])
            ps = [cell.like_state(b.slice(pd, [k * hh], [hh]), d) for k in range(3)]
        p_i, p_o, p_f = ps

        def step(
            body: BodyBuilder,
            x_t: SSAValue,
            s: list[SSAValue],
            d: int = d,
            p_i: SSAValue | None = p_i,
            p_o: SSAValue | None = p_o,
            p_f: SSAValue | None = p_f,
        ) -> list[SSAValue]:
            h, c = s
            pre = body.binary("add", x_t, _matmul(body, h, rt))  # noqa: B023

            def g(idx: int) -> SSAValue:
                return cell.gate(body, pre, idx, h)

            pi = g(0) if p_i is None else body.binary("add", g(0), body.binary("mul", p_i, c))
            i = cell.activate(body, d, 0, pi)
            if coupled:
                f = body.binary("sub", body.splat(1, i), i)
            else:
                pf = g(2) if p_f is None else body.binary("add", g(2), body.binary("mul", p_f, c))
                f = cell.activate(body, d, 0, pf)
            cand = cell.activate(body, d, 1, g(3))
            c_new = body.binary("add", body.binary("mul", f, c), body.binary("mul", i, cand))
            po = g(1) if p_o is None else body.binary("add", g(1), body.binary("mul", p_o, c_new))
            out = cell.activate(body, d, 0, po)
            h_new = body.binary("mul", out, cell.activate(body, d, 2, c_new))
            return [h_new, c_new]

        y, final = cell.run(d, [cell.init_h[d], init_c[d]], step, xw)
        ys.append(y)
        finals.append(final)
    return cell.outputs(ys, finals)


@lowers(onnx.ScanOp)
def scan(b: CoreBuilder, op: onnx.ScanOp) -> Results:
    """Scan (opset 9+) as a core.loop over the scan axis.

    The body keeps its ops: its state arguments become the loop's carried
    values, and each scan-input argument becomes a `core.gather` of that
    input at the iteration's index (counted from the end for a reverse
    direction). The per-iteration outputs, which core.loop stacks on a new
    first dim, are flipped for reverse outputs and moved to their scan axis.
    (Opset 8's batched form arrives here already rewritten by the importer.)
    """
    m = int(op.attr("num_scan_inputs"))  # type: ignore[arg-type]
    values = list(op.initial_state_and_scan_inputs)
    n = len(values) - m
    states, xs = values[:n], values[n:]
    in_axes = list(op.attr("scan_input_axes") or [0] * m)  # type: ignore[call-overload]
    in_dirs = list(op.attr("scan_input_directions") or [0] * m)  # type: ignore[call-overload]
    outputs = op.final_state_and_scan_outputs
    k = len(outputs) - n
    out_axes = list(op.attr("scan_output_axes") or [0] * k)  # type: ignore[call-overload]
    out_dirs = list(op.attr("scan_output_directions") or [0] * k)  # type: ignore[call-overload]
    if m == 0 or not (len(in_axes) == len(in_dirs) == m and len(out_axes) == len(out_dirs) == k):
        raise LoweringError("Scan attributes do not match its inputs and outputs")
    region = op.body_
    old = region.block
    if len(old.args) != n + m or not isinstance(old.last_op, YieldOp):
        raise LoweringError("Scan body does not match its inputs")
    elem_types = [a.type for a in old.args[n:]]
    axes = [normalize_axis(a, len(ranked_shape(x))) for x, a in zip(xs, in_axes, strict=True)]
    states = [
        _declared(b, v, a.type, f"initial state {i}")
        for i, (v, a) in enumerate(zip(states, old.args[:n], strict=True))
    ]
    xs = [
        _declared(b, x, _stacked_type(x, a, et), f"scan input {j}")
        for j, (x, a, et) in enumerate(zip(xs, axes, elem_types, strict=True))
    ]
    length = _scan_length(b, xs, axes)
    stacked: list[Attribute] = []
    for v, r in zip(old.last_op.values[n:], outputs[n:], strict=True):
        # Elements of unknown shape stack into the op's own result type.
        shape = shape_of_type(v.type)
        if shape is not None:
            stacked.append(tensor(element_of(v.type), [static_size(length), *shape]))
        elif shape_of_type(r.type) is not None:
            stacked.append(r.type)
        else:
            stacked.append(UnrankedTensorType(element_of(v.type)))

    moved = b.rewriter.move_region_contents_to_new_regions(region)
    block = moved.block
    it = block.insert_arg(tensor(i64, []), 0)
    cond = block.insert_arg(tensor(IntegerType(1), []), 1)
    trips = (
        b.constant(np.array(length, dtype=np.int64))
        if isinstance(length, int)
        else _scalar_of(b, length)
    )
    gathers: list[Operation] = []
    last_index = None
    for j, (x, axis, rev, et) in enumerate(zip(xs, axes, in_dirs, elem_types, strict=True)):
        t: SSAValue = it
        if rev:
            if last_index is None:
                if isinstance(length, int):
                    last_op = core.ConstantOp.create(
                        properties={"value": _i64_attr(length - 1)}, result_types=[tensor(i64, [])]
                    )
                    gathers.append(last_op)
                    last = last_op.results[0]
                else:
                    last = b.binary("sub", trips, b.scalar(1, i64))
                sub = core.BinaryOp.create(
                    operands=[last, it],
                    result_types=[tensor(i64, [])],
                    properties={"fn": StringAttr("sub")},
                )
                gathers.append(sub)
                last_index = sub.results[0]
            t = last_index
        g = core.GatherOp.create(
            operands=[x, t], result_types=[et], properties={"axis": int_attr(axis)}
        )
        gathers.append(g)
        block.args[2 + n + j].replace_all_uses_with(g.results[0])
    for g in gathers:
        g.location = op.location
    block.insert_ops_before(gathers, block.first_op)  # type: ignore[arg-type]
    for arg in list(block.args[2 + n :]):
        block.erase_arg(arg)
    for i, state in enumerate(states):
        _pin_state_shape(b, block.args[2 + i], state, i)
    y = block.last_op
    assert isinstance(y, YieldOp)
    new_yield = core.YieldOp.create(operands=[cond, *y.values])
    new_yield.location = y.location
    b.rewriter.replace(y, new_yield, [])

    true = b.constant(np.array(True))
    loop = core.LoopOp.create(
        operands=[trips, true, *states],
        result_types=[*(s.type for s in states), *stacked],
        regions=[moved],
    )
    results = list(b.insert(loop).results)
    outs: list[SSAValue | None] = list(results[:n])
    for v, axis, rev in zip(results[n:], out_axes, out_dirs, strict=True):
        if not rev and axis == 0:
            outs.append(v)
            continue
        if rev:
            v = _flip0(b, v)
        rank = len(ranked_shape(v))
        axis = axis + rank if axis < 0 else axis
        if axis:
            perm = list(range(1, rank))
            perm.insert(axis, 0)
            v = b.transpose(v, perm)
        outs.append(v)
    return outs


def _declared(b: CoreBuilder, v: SSAValue, declared: Attribute, what: str) -> SSAValue:
    """`v` with the static dims of the type the Scan body declares for it, checked at run
    time where only the declaration gives them.

    The body's ops were typed from that declaration, so they would size their
    kernels by it: a value of another size fails the run instead.
    """
    shape, out = shape_of_type(v.type), shape_of_type(declared)
    if shape is None or out is None:
        return v
    if len(shape) != len(out) or any(
        d >= 0 and o >= 0 and d != o for d, o in zip(shape, out, strict=True)
    ):
        raise LoweringError(f"{what} of type {v.type} does not fit the body's {declared}")
    unsure = [i for i, (d, o) in enumerate(zip(shape, out, strict=True)) if d < 0 and o >= 0]
    if not unsure:
        return v
    actual = b.shape_of(v)
    picked = b.gather(actual, b.constant(np.array(unsure, np.int64)), 0)
    wanted = b.constant(np.array([out[i] for i in unsure], np.int64))
    checked = b.check(v, b.compare("eq", picked, wanted), f"{what} is not of the body's {declared}")
    merged = tensor(
        element_of(v.type), [d if d >= 0 else o for d, o in zip(shape, out, strict=True)]
    )
    return b.reshape(checked, merged, actual)


def _pin_state_shape(b: CoreBuilder, arg: BlockArgument, init: SSAValue, i: int) -> None:
    """Give the body's state argument `arg` the run-time shape of its initial value.

    Scan requires every iteration's state to keep its shape; checked at the top of
    the body, that lets the body's shape arithmetic read the initial value's shape,
    which is known before the loop (so the kernel level can size the stacked scan
    outputs there). States of a static type need nothing.
    """
    if is_static(arg.type) or shape_of_type(arg.type) is None or not arg.uses:
        return
    block = arg.block
    assert block.first_op is not None
    inner = CoreBuilder(b.rewriter, block.first_op)
    wanted = b.shape_of(init)
    actual = inner.shape_of(arg)
    message = f"state {i} changed shape between iterations, which Scan does not allow"
    checked = inner.check(arg, inner.compare("eq", actual, wanted), message)
    pinned = inner.reshape(checked, arg.type, wanted)
    keep = {actual.owner, checked.owner}
    arg.replace_uses_with_if(pinned, lambda use: use.operation not in keep)


def _stacked_type(x: SSAValue, axis: int, element: Attribute) -> Attribute:
    """The type of a scan input whose slices along `axis` have type `element`."""
    shape = shape_of_type(element)
    if shape is None:
        return x.type
    return tensor(element_of(x.type), [*shape[:axis], ranked_shape(x)[axis], *shape[axis:]])


def _scan_length(b: CoreBuilder, xs: list[SSAValue], axes: Sequence[int]) -> Size:
    """The number of iterations: the scan inputs' common length along their axes.

    Static when any input's type says it; run-time lengths of the others are
    checked against it (their inputs are replaced by the checked values).
    """
    sizes = [b.dims(x)[a] for x, a in zip(xs, axes, strict=True)]
    known = {static_size(s) for s in sizes if static_size(s) >= 0}
    if len(known) > 1:
        raise LoweringError(f"scan inputs of different lengths {sorted(known)}")
    length = _pick(*sizes)
    for j, (x, size) in enumerate(zip(xs, sizes, strict=True)):
        if size is length or static_size(size) >= 0:
            continue
        same = b.compare("eq", b.shape_vector([size]), b.shape_vector([length]))
        xs[j] = b.check(x, same, f"scan input {j} is not as long as the others")
    return length


def _i64_attr(value: int) -> Attribute:
    """A rank-0 i64 dense attribute (for constants built inside a loop body)."""
    data = np.asarray(value, dtype=np.int64).tobytes()
    return DenseIntOrFPElementsAttr(tensor(i64, []), BytesAttr(data))
