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

Shapes must be static: core.loop stacks per-iteration outputs whose sizes the
handlers compute here. `sequence_lens` is accepted only when it is a constant
equal to the full length everywhere (it then changes nothing).
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
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from rung.dialects import core
from rung.dialects.onnx import YieldOp
from rung.dialects.onnx import generated_ops as onnx
from rung.lowering.kit import (
    CoreBuilder,
    LoweringError,
    constant_array,
    element_of,
    int_attr,
    is_static,
    shape_of_type,
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


def _static(v: SSAValue, what: str) -> tuple[int, ...]:
    if not is_static(v.type):
        raise LoweringError(f"{what} needs a static shape, got {v.type}")
    shape = shape_of_type(v.type)
    assert shape is not None
    return shape


def _flip0(b: CoreBuilder, x: SSAValue) -> SSAValue:
    """`x` reversed along its first dim (a stride -1 slice)."""
    shape = _static(x, "flip")
    if shape[0] <= 1:
        return x
    op = core.SliceOp.create(
        operands=[x],
        result_types=[x.type],
        properties={
            "start": core.ints([shape[0] - 1] + [0] * (len(shape) - 1)),
            "stride": core.ints([-1] + [1] * (len(shape) - 1)),
        },
    )
    return b.insert(op).results[0]


def _matmul(b: CoreBuilder, x: SSAValue, w: SSAValue) -> SSAValue:
    """2-D `x · w` accumulated in the element type (RNN ops are float-only)."""
    (m, _), (_, n) = _static(x, "matmul"), _static(w, "matmul")
    element = element_of(x.type)
    op = core.MatmulOp.create(
        operands=[x, w], result_types=[tensor(element, [m, n])], properties={"acc": element}
    )
    return b.insert(op).results[0]


def _concat(b: CoreBuilder, values: Sequence[SSAValue], axis: int) -> SSAValue:
    if len(values) == 1:
        return values[0]
    shape = list(_static(values[0], "concat"))
    shape[axis] = sum(_static(v, "concat")[axis] for v in values)
    op = core.ConcatOp.create(
        operands=list(values),
        result_types=[tensor(element_of(values[0].type), shape)],
        properties={"axis": int_attr(axis)},
    )
    return b.insert(op).results[0]


def _reshape(b: CoreBuilder, x: SSAValue, shape: Sequence[int]) -> SSAValue:
    return b.reshape(x, tensor(element_of(x.type), shape))


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
        x, w, r, bias, seq_lens, init_h = op.X, op.W, op.R, op.B, op.sequence_lens, op.initial_h
        self.layout = int(op.attr("layout") or 0)  # type: ignore[arg-type]
        xs = _static(x, "X")
        if self.layout == 1:
            x = b.transpose(x, [1, 0, 2])
            xs = (xs[1], xs[0], xs[2])
        self.x = x
        self.seq, self.batch, self.input = xs
        self.hidden = int(op.attr("hidden_size") or _static(r, "R")[-1])  # type: ignore[arg-type]
        direction = str(op.attr("direction") or "forward")
        if direction not in ("forward", "reverse", "bidirectional"):
            raise LoweringError(f"unknown direction '{direction}'")
        self.reverse = [False, True] if direction == "bidirectional" else [direction == "reverse"]
        self.dirs = len(self.reverse)
        _static(w, "W")
        _static(r, "R")
        self.w, self.r, self.bias = w, r, bias
        if seq_lens is not None:
            lens = constant_array(seq_lens)
            if lens is None or not np.all(lens == self.seq):
                raise LoweringError("sequence_lens other than the full length is not supported")
        self.init_h = self._state(init_h)
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

    @property
    def element(self) -> Attribute:
        return element_of(self.x.type)

    def _state(self, v: SSAValue | None) -> list[SSAValue]:
        """An initial state per direction, `[batch, hidden]`; zeros when absent."""
        b, bh = self.b, [self.batch, self.hidden]
        if v is None:
            zeros = np.zeros(bh, dtype=np.float64)
            return [b.constant(zeros, like=self.x.type) for _ in range(self.dirs)]
        _static(v, "initial state")
        if self.layout == 1:
            v = b.transpose(v, [1, 0, 2])
        return [_reshape(b, b.slice(v, [d, 0, 0], [1, *bh]), bh) for d in range(self.dirs)]

    def activate(self, b: CoreBuilder, d: int, k: int, x: SSAValue) -> SSAValue:
        """Activation `k` of direction `d`, its input clipped to ±clip when asked."""
        if self.clip is not None:
            x = b.binary("max", x, b.splat(-self.clip, x))
            x = b.binary("min", x, b.splat(self.clip, x))
        return self.acts[d][k](b, x)

    def weights(self, d: int) -> tuple[SSAValue, SSAValue, SSAValue, SSAValue]:
        """Direction d's `Wᵀ [I, gH]`, `Rᵀ [H, gH]` and the biases `Wb`, `Rb` `[gH]`."""
        b, gh = self.b, self.gates * self.hidden
        w = _reshape(b, b.slice(self.w, [d, 0, 0], [1, gh, self.input]), [gh, self.input])
        r = _reshape(b, b.slice(self.r, [d, 0, 0], [1, gh, self.hidden]), [gh, self.hidden])
        if self.bias is None:
            zero = b.constant(np.zeros(gh), like=self.x.type)
            wb, rb = zero, zero
        else:
            _static(self.bias, "B")
            wb = _reshape(b, b.slice(self.bias, [d, 0], [1, gh]), [gh])
            rb = _reshape(b, b.slice(self.bias, [d, gh], [1, gh]), [gh])
        return b.transpose(w, [1, 0]), b.transpose(r, [1, 0]), wb, rb

    def project(self, wt: SSAValue, bias: SSAValue) -> SSAValue:
        """`X·Wᵀ + bias` for all time steps at once: `[seq, batch, gH]`."""
        b, gh = self.b, self.gates * self.hidden
        flat = _reshape(b, self.x, [self.seq * self.batch, self.input])
        xw = _reshape(b, _matmul(b, flat, wt), [self.seq, self.batch, gh])
        full = b.broadcast_to(bias, tensor(self.element, [self.seq, self.batch, gh]))
        return b.binary("add", xw, full)

    def gate(self, b: CoreBuilder, v: SSAValue, k: int) -> SSAValue:
        """Gate k (`[batch, H]`) of a `[batch, gH]` value."""
        return b.slice(v, [0, k * self.hidden], [self.batch, self.hidden])

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
        t: SSAValue = it
        if self.reverse[d]:
            t = body.binary("sub", body.constant(np.array(self.seq - 1, dtype=np.int64)), it)
        gh = self.gates * self.hidden
        gather = core.GatherOp.create(
            operands=[xw, t],
            result_types=[tensor(self.element, [self.batch, gh])],
            properties={"axis": int_attr(0)},
        )
        xw_t = body.insert(gather).results[0]
        new = step(body, xw_t, list(carried))
        body.insert(core.YieldOp.create(operands=[cond, *new, new[0]]))
        trips = b.constant(np.array(self.seq, dtype=np.int64))
        true = b.constant(np.array(True))
        y_type = tensor(self.element, [self.seq, self.batch, self.hidden])
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
            y = _concat(b, y4, 1)
            results.append(b.transpose(y, [2, 0, 1, 3]) if self.layout == 1 else y)
        else:
            results.append(None)
        for k in range(len(finals[0])):
            if present[1 + k] is None:
                results.append(None)
                continue
            s = _concat(b, [_reshape(b, f[k], [1, n, h]) for f in finals], 0)
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
            rb_fold = _concat(b, [rb_zr, b.constant(np.zeros(hh), like=cell.x.type)], 0)
        else:
            rb_fold = rb
        xw = cell.project(wt, b.binary("add", wb, rb_fold))
        rt_zr = b.slice(rt, [0, 0], [hh, 2 * hh])
        rt_h = b.slice(rt, [0, 2 * hh], [hh, hh])
        rbh = b.broadcast_to(rb_h, tensor(cell.element, [cell.batch, hh]))

        def step(body: BodyBuilder, x_t: SSAValue, s: list[SSAValue], d: int = d) -> list[SSAValue]:
            (h,) = s
            hr = _matmul(body, h, rt_zr)  # noqa: B023
            z = cell.activate(
                body, d, 0, _add(body, cell.gate(body, x_t, 0), cell.gate(body, hr, 0))
            )
            r = cell.activate(
                body, d, 0, _add(body, cell.gate(body, x_t, 1), cell.gate(body, hr, 1))
            )
            if lbr:
                inner = body.binary("add", _matmul(body, h, rt_h), rbh)  # noqa: B023
                rec = body.binary("mul", r, inner)
            else:
                rec = _matmul(body, body.binary("mul", r, h), rt_h)  # noqa: B023
            cand = cell.activate(body, d, 1, body.binary("add", cell.gate(body, x_t, 2), rec))
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
    init_c = cell._state(op.initial_c)  # noqa: SLF001
    peep = op.P
    coupled = bool(op.attr("input_forget") or 0)
    hh, n = cell.hidden, cell.batch
    ys, finals = [], []
    for d in range(cell.dirs):
        wt, rt, wb, rb = cell.weights(d)
        xw = cell.project(wt, b.binary("add", wb, rb))
        ps: list[SSAValue | None] = [None, None, None]
        if peep is not None:
            _static(peep, "P")
            pd = _reshape(b, b.slice(peep, [d, 0], [1, 3 * hh]), [3 * hh])
            ps = [
                b.broadcast_to(b.slice(pd, [k * hh], [hh]), tensor(cell.element, [n, hh]))
                for k in range(3)
            ]
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
                return cell.gate(body, pre, idx)

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
    axes = []
    for x, a in zip(xs, in_axes, strict=True):
        shape = _static(x, "scan input")
        axes.append(a + len(shape) if a < 0 else a)
    lengths = {_static(x, "scan input")[a] for x, a in zip(xs, axes, strict=True)}
    if len(lengths) != 1:
        raise LoweringError(f"scan inputs of different lengths {sorted(lengths)}")
    (length,) = lengths
    region = op.body_
    old = region.block
    if len(old.args) != n + m or not isinstance(old.last_op, YieldOp):
        raise LoweringError("Scan body does not match its inputs")
    elem_types = [a.type for a in old.args[n:]]
    stacked: list[Attribute] = []
    for v, r in zip(old.last_op.values[n:], outputs[n:], strict=True):
        # Elements of unknown shape stack into the op's own result type.
        shape = shape_of_type(v.type)
        if shape is not None:
            stacked.append(tensor(element_of(v.type), [length, *shape]))
        elif shape_of_type(r.type) is not None:
            stacked.append(r.type)
        else:
            stacked.append(UnrankedTensorType(element_of(v.type)))

    moved = b.rewriter.move_region_contents_to_new_regions(region)
    block = moved.block
    it = block.insert_arg(tensor(i64, []), 0)
    cond = block.insert_arg(tensor(IntegerType(1), []), 1)
    gathers: list[Operation] = []
    last_index = None
    for j, (x, axis, rev, et) in enumerate(zip(xs, axes, in_dirs, elem_types, strict=True)):
        t: SSAValue = it
        if rev:
            if last_index is None:
                last = core.ConstantOp.create(
                    properties={"value": _i64_attr(length - 1)}, result_types=[tensor(i64, [])]
                )
                sub = core.BinaryOp.create(
                    operands=[last.results[0], it],
                    result_types=[tensor(i64, [])],
                    properties={"fn": StringAttr("sub")},
                )
                gathers += [last, sub]
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
    y = block.last_op
    assert isinstance(y, YieldOp)
    new_yield = core.YieldOp.create(operands=[cond, *y.values])
    new_yield.location = y.location
    b.rewriter.replace_op(y, new_yield, [])

    trips = b.constant(np.array(length, dtype=np.int64))
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
        rank = len(_static(v, "scan output"))
        axis = axis + rank if axis < 0 else axis
        if axis:
            perm = list(range(1, rank))
            perm.insert(axis, 0)
            v = b.transpose(v, perm)
        outs.append(v)
    return outs


def _i64_attr(value: int) -> Attribute:
    """A rank-0 i64 dense attribute (for constants built inside a loop body)."""
    data = np.asarray(value, dtype=np.int64).tobytes()
    return DenseIntOrFPElementsAttr(tensor(i64, []), BytesAttr(data))
