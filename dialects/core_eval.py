"""A numpy interpreter of the core dialect: the executable specification of each op.

It favours being obviously right over being fast: every op is a few lines of
numpy that restate the semantics in `rung.dialects.core`. Lowerings are
checked against it, and it against ONNX's expected outputs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import (
    ModuleOp,
    TensorType,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, SSAValue

from rung.dialects import core
from rung.dialects.constants import constant_value
from rung.dialects.dtypes import numpy_dtype, saturation_bound
from rung.errors import RungError, UnsupportedOpError

Env = dict[SSAValue, object]


def _result_dtype(value: SSAValue) -> np.dtype:
    return numpy_dtype(value.type.element_type)  # type: ignore[attr-defined]


def _static_shape(value: SSAValue) -> tuple[int, ...] | None:
    t = value.type
    if isinstance(t, TensorType) and all(d >= 0 for d in t.get_shape()):
        return tuple(t.get_shape())
    return None


def _ints(attr: Attribute | None) -> tuple[int, ...]:
    return core._ints(attr)  # noqa: SLF001


# ---- elementwise tables -------------------------------------------------------------

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return (1 / (1 + np.exp(-x.astype(np.float64)))).astype(x.dtype)


UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "neg": np.negative,
    "abs": np.abs,
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: (1 / np.sqrt(x)).astype(x.dtype),
    "reciprocal": lambda x: (1 / x).astype(x.dtype),
    "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "erf": lambda x: _erf(x).astype(x.dtype),
    "sigmoid": _sigmoid,
    "floor": np.floor, "ceil": np.ceil, "round": np.round,
    "sign": np.sign,
    "not": np.logical_not,
    "bitwise_not": np.invert,
    "isnan": np.isnan,
    "isinf": np.isinf,
    "isposinf": np.isposinf,
    "isneginf": np.isneginf,
}  # fmt: skip


def _int_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer division truncating toward zero, as C and ONNX do."""
    q = np.floor_divide(a, b)
    fix = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
    return (q + fix).astype(a.dtype)


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(a.dtype, np.integer):
        return _int_div(a, b)
    return np.divide(a, b).astype(a.dtype)


def _pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(a.dtype, np.integer):
        return np.power(a.astype(np.int64), b.astype(np.int64)).astype(a.dtype)
    return np.power(a, b.astype(a.dtype)).astype(a.dtype)


BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": _div,
    "rem": np.fmod, "mod": np.mod, "pow": _pow,
    "max": np.maximum, "min": np.minimum, "atan2": np.arctan2,
    "and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor,
    "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
    "shift_left": np.left_shift, "shift_right": np.right_shift,
}  # fmt: skip

COMPARE: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less,
    "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
}  # fmt: skip

REDUCE: dict[str, Callable[..., np.ndarray]] = {
    "sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min,
    "and": np.all, "or": np.any,
}  # fmt: skip


# ---- the interpreter ------------------------------------------------------------------


class CoreInterpreter:
    """Evaluates the main function of a core-dialect module on numpy inputs."""

    def __init__(self, module: ModuleOp) -> None:
        self.module = module

    def run(self, func: FuncOp, args: Sequence[object]) -> list[object]:
        return self.run_block(func.body.block, args, ReturnOp)

    def run_block(self, block: Block, args: Sequence[object], terminator: type) -> list[object]:
        env: Env = dict(zip(block.args, args, strict=True))
        return self.run_ops(block, env, terminator)

    def run_ops(self, block: Block, env: Env, terminator: type) -> list[object]:
        for op in block.ops:
            if isinstance(op, terminator):
                return [env[v] for v in op.operands]
            results = self.eval(op, env)
            for value, result in zip(op.results, results, strict=True):
                env[value] = result
        raise RungError("block has no terminator")

    def eval(self, op: Operation, env: Env) -> list[object]:
        handler = getattr(self, "eval_" + type(op).__name__, None)
        if handler is None:
            raise UnsupportedOpError(f"the core interpreter cannot run '{op.name}'")
        args = [env[v] for v in op.operands]
        out = handler(op, args, env)
        return out if isinstance(out, list) else [out]

    # constants and shapes

    def eval_ConstantOp(self, op: core.ConstantOp, args: list, env: Env) -> np.ndarray:
        return constant_value(op.value, self.module)

    def eval_IotaOp(self, op: core.IotaOp, args: list, env: Env) -> np.ndarray:
        shape = list(op.result.type.get_shape())  # type: ignore[attr-defined]
        dynamic = iter(int(a) for a in args)
        shape = [next(dynamic) if d < 0 else d for d in shape]
        dim = op.dim.value.data
        view = [1] * len(shape)
        view[dim] = shape[dim]
        values = np.arange(shape[dim]).reshape(view)
        return np.broadcast_to(values, shape).astype(_result_dtype(op.result))

    def eval_ShapeOfOp(self, op: core.ShapeOfOp, args: list, env: Env) -> np.ndarray:
        return np.array(np.shape(args[0]), dtype=np.int64)

    # elementwise

    def eval_UnaryOp(self, op: core.UnaryOp, args: list, env: Env) -> np.ndarray:
        with np.errstate(all="ignore"):
            return np.asarray(UNARY[op.fn.data](args[0]))

    def eval_BinaryOp(self, op: core.BinaryOp, args: list, env: Env) -> np.ndarray:
        with np.errstate(all="ignore"):
            out = np.asarray(BINARY[op.fn.data](args[0], args[1]))
        return out.astype(_result_dtype(op.result), copy=False)

    def eval_CompareOp(self, op: core.CompareOp, args: list, env: Env) -> np.ndarray:
        return np.asarray(COMPARE[op.pred.data](args[0], args[1]))

    def eval_SelectOp(self, op: core.SelectOp, args: list, env: Env) -> np.ndarray:
        return np.where(args[0], args[1], args[2])

    def eval_CastOp(self, op: core.CastOp, args: list, env: Env) -> np.ndarray:
        dtype = _result_dtype(op.result)
        x = np.asarray(args[0])
        saturate = op.saturate is not None and op.saturate.value.data
        top = saturation_bound(dtype) if saturate else None
        if top is not None:
            # Out-of-range values and infinities clamp to the largest finite value.
            x = np.clip(x.astype(np.float32), -top, top)
        with np.errstate(all="ignore"):
            return x.astype(dtype)

    # data movement

    def _target_shape(self, result: SSAValue, shape_args: list) -> tuple[int, ...]:
        static = _static_shape(result)
        if static is not None:
            return static
        return tuple(int(d) for d in shape_args[0])

    def eval_BroadcastOp(self, op: core.BroadcastOp, args: list, env: Env) -> np.ndarray:
        out = self._target_shape(op.result, args[1:])
        dims = _ints(op.dims)
        view = [1] * len(out)
        for i, d in enumerate(dims):
            view[d] = np.shape(args[0])[i]
        return np.broadcast_to(np.reshape(args[0], view), out).copy()

    def eval_ReshapeOp(self, op: core.ReshapeOp, args: list, env: Env) -> np.ndarray:
        return np.reshape(args[0], self._target_shape(op.result, args[1:]))

    def eval_TransposeOp(self, op: core.TransposeOp, args: list, env: Env) -> np.ndarray:
        return np.transpose(args[0], _ints(op.perm))

    def eval_SliceOp(self, op: core.SliceOp, args: list, env: Env) -> np.ndarray:
        x = args[0]
        if len(args) == 4:
            start, size, stride = (tuple(int(v) for v in a) for a in args[1:])
        else:
            start, stride = _ints(op.start), _ints(op.stride)
            size = tuple(op.result.type.get_shape())  # type: ignore[attr-defined]
        index = []
        for s, n, st in zip(start, size, stride, strict=True):
            stop = s + n * st
            index.append(slice(s, None if stop < 0 else stop, st))
        return np.asarray(x)[tuple(index)]

    def eval_ConcatOp(self, op: core.ConcatOp, args: list, env: Env) -> np.ndarray:
        return np.concatenate(args, axis=op.axis.value.data)

    def eval_PadOp(self, op: core.PadOp, args: list, env: Env) -> np.ndarray:
        x, value = np.asarray(args[0]), args[1]
        if op.pads:
            pads = [int(p) for p in np.asarray(args[2]).reshape(-1)]
            lo, hi = tuple(pads[: x.ndim]), tuple(pads[x.ndim :])
        else:
            lo, hi = _ints(op.pad_low), _ints(op.pad_high)
        crop = tuple(
            slice(max(-a, 0), n - max(-b, 0)) for a, b, n in zip(lo, hi, x.shape, strict=True)
        )
        x = x[crop]
        widths = [(max(a, 0), max(b, 0)) for a, b in zip(lo, hi, strict=True)]
        mode = op.mode.data
        if mode == "constant":
            return np.pad(x, widths, mode="constant", constant_values=np.asarray(value).item())
        return np.pad(x, widths, mode={"reflect": "reflect", "edge": "edge", "wrap": "wrap"}[mode])

    def eval_GatherOp(self, op: core.GatherOp, args: list, env: Env) -> np.ndarray:
        return np.take(args[0], args[1], axis=op.axis.value.data)

    def eval_GatherElementsOp(self, op: core.GatherElementsOp, args: list, env: Env) -> np.ndarray:
        return np.take_along_axis(args[0], args[1], axis=op.axis.value.data)

    def eval_GatherNDOp(self, op: core.GatherNDOp, args: list, env: Env) -> np.ndarray:
        data, indices = np.asarray(args[0]), np.asarray(args[1])
        b = op.batch_dims.value.data
        batch = data.shape[:b]
        depth = indices.shape[-1]
        out_inner = indices.shape[b:-1] + data.shape[b + depth :]
        flat_data = data.reshape((-1, *data.shape[b:]))
        flat_idx = indices.reshape((-1, *indices.shape[b:]))
        out = []
        for d, i in zip(flat_data, flat_idx, strict=True):
            tuples = i.reshape(-1, depth)
            out.append(np.stack([d[tuple(t)] for t in tuples]).reshape(out_inner))
        return np.stack(out).reshape(batch + out_inner)

    def eval_ScatterElementsOp(
        self, op: core.ScatterElementsOp, args: list, env: Env
    ) -> np.ndarray:
        data, indices, updates = (np.asarray(a) for a in args)
        out = data.copy()
        axis = op.axis.value.data
        combine = _SCATTER[op.reduction.data]
        for pos in np.ndindex(*indices.shape):
            target = list(pos)
            target[axis] = int(indices[pos])
            t = tuple(target)
            out[t] = combine(out[t], updates[pos])
        return out

    def eval_ScatterNDOp(self, op: core.ScatterNDOp, args: list, env: Env) -> np.ndarray:
        data, indices, updates = (np.asarray(a) for a in args)
        out = data.copy()
        combine = _SCATTER[op.reduction.data]
        for pos in np.ndindex(*indices.shape[:-1]):
            t = tuple(int(i) for i in indices[pos])
            out[t] = combine(out[t], updates[pos])
        return out

    # compute

    def eval_MatmulOp(self, op: core.MatmulOp, args: list, env: Env) -> np.ndarray:
        acc = numpy_dtype(op.acc)
        out = np.matmul(np.asarray(args[0]).astype(acc), np.asarray(args[1]).astype(acc))
        return out.astype(_result_dtype(op.result))

    def eval_ConvOp(self, op: core.ConvOp, args: list, env: Env) -> np.ndarray:
        return self._convolve(op, args, conv)

    def eval_ConvTransposeOp(self, op: core.ConvTransposeOp, args: list, env: Env) -> np.ndarray:
        return self._convolve(op, args, conv_transpose)

    def _convolve(self, op: Operation, args: list, fn: Callable[..., np.ndarray]) -> np.ndarray:
        """core.conv and core.conv_transpose: accumulate in `acc`, then convert."""
        acc = numpy_dtype(op.acc)  # type: ignore[attr-defined]
        return fn(
            np.asarray(args[0]).astype(acc),
            np.asarray(args[1]).astype(acc),
            _ints(op.strides),
            _ints(op.dilations),  # type: ignore[attr-defined]
            _ints(op.pad_low),
            _ints(op.pad_high),  # type: ignore[attr-defined]
            op.groups.value.data,  # type: ignore[attr-defined]
        ).astype(_result_dtype(op.results[0]))

    def eval_PoolOp(self, op: core.PoolOp, args: list, env: Env) -> np.ndarray:
        x = np.asarray(args[0])
        kind = op.kind.data
        if kind == "max":
            fill = -np.inf if np.issubdtype(x.dtype, np.floating) else np.iinfo(x.dtype).min
        else:
            fill = 0
        windows = _windows(
            x,
            _ints(op.window),
            _ints(op.strides),
            _ints(op.dilations),
            _ints(op.pad_low),
            _ints(op.pad_high),
            fill,
        )
        axes = tuple(range(-len(_ints(op.window)), 0))
        out = windows.max(axis=axes) if kind == "max" else windows.sum(axis=axes)
        return out.astype(x.dtype)

    def eval_ReduceOp(self, op: core.ReduceOp, args: list, env: Env) -> np.ndarray:
        x = np.asarray(args[0])
        out = REDUCE[op.fn.data](x, axis=_ints(op.axes))
        return np.asarray(out).astype(_result_dtype(op.result))

    def eval_ArgReduceOp(self, op: core.ArgReduceOp, args: list, env: Env) -> np.ndarray:
        x = np.asarray(args[0])
        axis = op.axis.value.data
        fn = np.argmax if op.fn.data == "max" else np.argmin
        if op.last.value.data:
            flipped = np.flip(x, axis=axis)
            return (x.shape[axis] - 1 - fn(flipped, axis=axis)).astype(np.int64)
        return fn(x, axis=axis).astype(np.int64)

    def eval_CumulativeOp(self, op: core.CumulativeOp, args: list, env: Env) -> np.ndarray:
        x = np.asarray(args[0])
        axis = op.axis.value.data
        if op.reverse.value.data:
            x = np.flip(x, axis=axis)
        fn = np.cumsum if op.fn.data == "sum" else np.cumprod
        out = fn(x, axis=axis).astype(x.dtype)
        if op.exclusive.value.data:
            identity = 0 if op.fn.data == "sum" else 1
            pad = np.full_like(np.take(out, [0], axis=axis), identity)
            out = np.concatenate([pad, np.take(out, range(x.shape[axis] - 1), axis=axis)], axis)
        if op.reverse.value.data:
            out = np.flip(out, axis=axis)
        return out

    def eval_SortOp(self, op: core.SortOp, args: list, env: Env) -> list[np.ndarray]:
        x = np.asarray(args[0])
        axis = op.axis.value.data
        key = x.astype(np.float64) if np.issubdtype(x.dtype, np.integer) else x
        if op.descending.value.data:
            key = -key
        idx = np.argsort(key, axis=axis, kind="stable")
        return [np.take_along_axis(x, idx, axis=axis), idx.astype(np.int64)]

    def eval_NonZeroOp(self, op: core.NonZeroOp, args: list, env: Env) -> np.ndarray:
        return np.array(np.nonzero(args[0]), dtype=np.int64).reshape(np.ndim(args[0]), -1)

    # control flow

    def eval_IfOp(self, op: core.IfOp, args: list, env: Env) -> list[object]:
        region = op.then_region if bool(np.asarray(args[0])) else op.else_region
        return self.run_ops(region.block, dict(env), core.YieldOp)

    def eval_LoopOp(self, op: core.LoopOp, args: list, env: Env) -> list[object]:
        max_trips, cond, *carried = args
        n_carried = len(carried)
        scans: list[list[object]] = []
        trip = 0
        limit = None if max_trips is None else int(np.asarray(max_trips))
        keep_going = True if cond is None else bool(np.asarray(cond))
        block = op.body.block
        while keep_going and (limit is None or trip < limit):
            inner = dict(env)
            body_args = [np.array(trip, dtype=np.int64), np.array(keep_going), *carried]
            inner.update(zip(block.args, body_args, strict=True))
            outs = self.run_ops(block, inner, core.YieldOp)
            keep_going = bool(np.asarray(outs[0]))
            carried = outs[1 : 1 + n_carried]
            per_iter = outs[1 + n_carried :]
            if not scans:
                scans = [[] for _ in per_iter]
            for acc, v in zip(scans, per_iter, strict=True):
                acc.append(v)
            trip += 1
        stacked: list[object] = []
        for i, result in enumerate(op.results[n_carried:]):
            if scans and scans[i]:
                stacked.append(np.stack(scans[i]))
            else:
                shape = [0 if d < 0 else d for d in result.type.get_shape()]  # type: ignore[attr-defined]
                stacked.append(np.zeros(shape, dtype=_result_dtype(result)))
        return [*carried, *stacked]

    # lists: a list value is a Python list of arrays, never changed in place. `eval`
    # reads a returned list as several results, so list results come wrapped.

    def eval_ListOp(self, op: core.ListOp, args: list, env: Env) -> list[object]:
        return [[np.asarray(a) for a in args]]

    def eval_ListLengthOp(self, op: core.ListLengthOp, args: list, env: Env) -> np.ndarray:
        return np.array(len(args[0]), dtype=np.int64)

    def eval_ListGetOp(self, op: core.ListGetOp, args: list, env: Env) -> np.ndarray:
        items = args[0]
        return items[_list_index(op, args[1], len(items))]

    def eval_ListInsertOp(self, op: core.ListInsertOp, args: list, env: Env) -> list[object]:
        items, element, index = args
        at = _list_index(op, index, len(items) + 1)
        return [[*items[:at], np.asarray(element), *items[at:]]]

    def eval_ListEraseOp(self, op: core.ListEraseOp, args: list, env: Env) -> list[object]:
        items = args[0]
        at = _list_index(op, args[1], len(items))
        return [[*items[:at], *items[at + 1 :]]]

    def eval_ListConcatOp(self, op: core.ListConcatOp, args: list, env: Env) -> np.ndarray:
        return np.concatenate(_non_empty(op, args[0]), axis=op.axis.value.data)

    def eval_ListStackOp(self, op: core.ListStackOp, args: list, env: Env) -> np.ndarray:
        return np.stack(_non_empty(op, args[0]), axis=op.axis.value.data)

    # optionals: the held value, or None (as ONNX runtimes pass them)

    def eval_OptionalOp(self, op: core.OptionalOp, args: list, env: Env) -> list[object]:
        return [args[0] if args else None]

    def eval_OptionalHasOp(self, op: core.OptionalHasOp, args: list, env: Env) -> np.ndarray:
        return np.array(args[0] is not None)

    def eval_OptionalGetOp(self, op: core.OptionalGetOp, args: list, env: Env) -> list[object]:
        if args[0] is None:
            raise RungError("core.optional_get: the optional holds no value")
        return [args[0]]


def _list_index(op: Operation, index: object, bound: int) -> int:
    """A list index, checked against `[0, bound)`: core indices are already normalized."""
    at = int(np.asarray(index))
    if not 0 <= at < bound:
        raise RungError(f"{op.name}: index {at} is out of range [0, {bound})")
    return at


def _non_empty(op: Operation, items: list) -> list:
    if not items:
        raise RungError(f"{op.name}: the list is empty")
    return items


_SCATTER: dict[str, Callable[[object, object], object]] = {
    "none": lambda old, new: new,
    "add": lambda old, new: old + new,
    "mul": lambda old, new: old * new,
    "max": lambda old, new: np.maximum(old, new),
    "min": lambda old, new: np.minimum(old, new),
}


def _windows(
    x: np.ndarray,
    window: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    pad_low: Sequence[int],
    pad_high: Sequence[int],
    fill: float,
) -> np.ndarray:
    """Sliding windows over the trailing spatial dims: [N, C, out…, window…]."""
    spatial = len(window)
    widths = [(0, 0)] * (x.ndim - spatial) + list(zip(pad_low, pad_high, strict=True))
    padded = np.pad(x, [(max(a, 0), max(b, 0)) for a, b in widths], constant_values=fill)
    crop = tuple(slice(max(-a, 0), padded.shape[i] - max(-b, 0)) for i, (a, b) in enumerate(widths))
    padded = padded[crop]
    extent = [(k - 1) * d + 1 for k, d in zip(window, dilations, strict=True)]
    view = np.lib.stride_tricks.sliding_window_view(
        padded, extent, axis=tuple(range(x.ndim - spatial, x.ndim))
    )
    index = (Ellipsis,) + tuple(slice(None, None, s) for s in strides)
    view = view[(slice(None),) * (x.ndim - spatial) + index[1:] + (slice(None),) * spatial]
    dilate = (Ellipsis,) + tuple(slice(None, None, d) for d in dilations)
    return view[dilate]


def conv(
    x: np.ndarray,
    w: np.ndarray,
    strides: Sequence[int],
    dilations: Sequence[int],
    pad_low: Sequence[int],
    pad_high: Sequence[int],
    groups: int,
) -> np.ndarray:
    """Grouped N-d convolution by explicit windows and a tensordot per group."""
    spatial = x.ndim - 2
    windows = _windows(x, w.shape[2:], strides, dilations, pad_low, pad_high, 0)
    # windows: [N, C, out…, k…]
    cin = x.shape[1] // groups
    cout = w.shape[0] // groups
    outs = []
    for g in range(groups):
        xg = windows[:, g * cin : (g + 1) * cin]
        wg = w[g * cout : (g + 1) * cout]
        # contract C and k… : xg [N, C, out…, k…], wg [O, C, k…]
        x_axes = [1, *range(2 + spatial, 2 + 2 * spatial)]
        w_axes = [1, *range(2, 2 + spatial)]
        y = np.tensordot(xg, wg, axes=(x_axes, w_axes))  # [N, out…, O]
        outs.append(np.moveaxis(y, -1, 1))
    return np.concatenate(outs, axis=1)


def conv_transpose(
    x: np.ndarray,
    w: np.ndarray,
    strides: Sequence[int],
    dilations: Sequence[int],
    pad_low: Sequence[int],
    pad_high: Sequence[int],
    groups: int,
) -> np.ndarray:
    """Transposed convolution by scattering each input pixel's contribution."""
    n, c = x.shape[:2]
    spatial = x.ndim - 2
    cin = c // groups
    cout = w.shape[1]
    kernel = w.shape[2:]
    full = [
        (x.shape[2 + i] - 1) * strides[i] + dilations[i] * (kernel[i] - 1) + 1
        for i in range(spatial)
    ]
    out = np.zeros((n, cout * groups, *full), dtype=x.dtype)
    for g in range(groups):
        xg = x[:, g * cin : (g + 1) * cin]
        wg = w[g * cin : (g + 1) * cin]  # [C, O, k…]
        for pos in np.ndindex(*x.shape[2:]):
            contrib = np.tensordot(xg[(slice(None), slice(None), *pos)], wg, axes=([1], [0]))
            # contrib: [N, O, k…]
            index = tuple(
                slice(
                    pos[i] * strides[i],
                    pos[i] * strides[i] + dilations[i] * (kernel[i] - 1) + 1,
                    dilations[i],
                )
                for i in range(spatial)
            )
            out[(slice(None), slice(g * cout, (g + 1) * cout), *index)] += contrib
    crop = tuple(slice(pad_low[i], full[i] - pad_high[i]) for i in range(spatial))
    result = out[(slice(None), slice(None), *crop)]
    # Negative pad_high (output padding) extends with zeros.
    extra = [(0, 0), (0, 0)] + [(0, max(-pad_high[i], 0)) for i in range(spatial)]
    return np.pad(result, extra)


def evaluate(module: ModuleOp, inputs: Sequence[object]) -> list[object]:
    """Run the module's (first) function on positional inputs."""
    func = next((op for op in module.body.block.ops if isinstance(op, FuncOp)), None)
    if func is None:
        raise RungError("the module has no function to run")
    return CoreInterpreter(module).run(func, inputs)
