"""Compare a model at rung's levels with a reference, and find the first node that diverges.

    from rung.runtime.compare import compare

    report = compare("model.onnx", levels=("core", "kernel"))   # against onnxruntime
    print(report)                    # per level: each output's errors and a verdict
    report.ok                        # every output of every level within tolerance
    report.first_divergence.node     # on a mismatch: the node whose result diverges first

Each level runs the whole model and its outputs are compared with the
reference's (onnxruntime, torch eager, or another rung level). When they
differ, the model is bisected: a *cut* after the k-th op of the main function
is a copy of the function that stops there and returns its *frontier*, every
value computed so far that is still needed later (and the k-th op's own
results). Binary search keeps the invariant "the frontier of `lo` matches, the
frontier of `hi` does not"; when the two are neighbours, op `hi` read only
matching values and produced a differing one, so it is the culprit. That needs
no assumption that errors grow monotonically, compiles one cut per probe
rather than exposing every value at once, and takes about log2(ops) probes.
Cuts are made on the imported module (onnx or torch dialect), whose ops are
located at their source nodes; the lowered levels keep those locations, so the
culprit names the node the user wrote.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FileLineColLoc,
    ModuleOp,
    NameLoc,
    StringAttr,
    TensorType,
    UnrankedTensorType,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Operation, SSAValue

from rung.errors import RungError

DEFAULT_RTOL = 1e-3
DEFAULT_ATOL = 1e-4
"""Absolute tolerance per unit of the output's magnitude: it is scaled by
max(1, max |reference|), as in the model zoo, so large activations are not held
to the tolerance of small ones."""

REFERENCES = ("onnxruntime", "torch")
"""References that are not rung levels (any rung level name is accepted as well)."""

Progress = Callable[[str], None]
"""Receives one line per bisection probe (the CLI prints them on a terminal)."""


# ---- comparing values -------------------------------------------------------------------------


@dataclass
class ValueDiff:
    """How one value of a level compares with the reference's."""

    name: str
    shape: tuple[int, ...] | None
    """The reference's shape (None for a value that is not a tensor)."""
    dtype: str
    max_abs: float
    max_rel: float
    ok: bool
    reason: str = ""
    """Why it is a mismatch (shape, dtype, values), empty when ok."""

    @property
    def verdict(self) -> str:
        return "ok" if self.ok else "MISMATCH"


def compare_values(
    name: str,
    reference: object,
    actual: object,
    *,
    rtol: float = DEFAULT_RTOL,
    atol: float = DEFAULT_ATOL,
) -> ValueDiff:
    """Compare `actual` with `reference`: floats within tolerance, everything else equal.

    NaN matches NaN in the same place. Floats pass where |a - r| <= atol * s +
    rtol * |r|, s = max(1, max |finite r|). The relative error is reported
    over the elements whose reference exceeds that absolute tolerance (near
    zero it says nothing). Sequences compare item by item, None only with None.
    """
    if reference is None or actual is None:
        same = reference is None and actual is None
        return ValueDiff(
            name, None, "none", 0.0, 0.0, same, "" if same else "one side is empty (None)"
        )
    if isinstance(reference, list | tuple):
        return _compare_sequences(name, reference, actual, rtol, atol)
    ref = np.asarray(reference)
    got = np.asarray(actual)
    diff = ValueDiff(name, tuple(ref.shape), str(ref.dtype), 0.0, 0.0, True)
    if ref.shape != got.shape:
        diff.ok = False
        diff.max_abs = diff.max_rel = math.inf
        diff.reason = f"shape {list(got.shape)}, expected {list(ref.shape)}"
        return diff
    if ref.dtype.kind in "OUS" or got.dtype.kind in "OUS":
        same = ref.astype(str).tolist() == got.astype(str).tolist()
        diff.ok = same
        diff.reason = "" if same else "strings differ"
        return diff
    if ref.dtype.kind in "fc":
        if got.dtype.kind not in "fc":
            diff.ok = False
            diff.reason = f"dtype {got.dtype}, expected {ref.dtype}"
            return diff
        with np.errstate(all="ignore"):  # NaN and inf are compared, not warned about
            _float_errors(diff, ref, got, rtol, atol)
        return diff
    if ref.dtype != got.dtype:
        diff.ok = False
        diff.reason = f"dtype {got.dtype}, expected {ref.dtype}"
        return diff
    differs = ref != got
    if differs.any():
        r = np.atleast_1d(ref.astype(np.float64))
        delta = np.abs(np.atleast_1d(got.astype(np.float64)) - r)
        diff.max_abs = float(delta.max())
        nonzero = r != 0
        diff.max_rel = float((delta[nonzero] / np.abs(r[nonzero])).max()) if nonzero.any() else 0
        diff.ok = False
        diff.reason = f"{int(differs.sum())}/{ref.size} values differ (must be equal)"
    return diff


def _float_errors(
    diff: ValueDiff, ref: np.ndarray, got: np.ndarray, rtol: float, atol: float
) -> None:
    r = np.atleast_1d(ref.astype(np.complex128 if ref.dtype.kind == "c" else np.float64))
    g = np.atleast_1d(got.astype(r.dtype))
    finite = np.isfinite(r)
    scale = max(1.0, float(np.abs(r[finite]).max())) if finite.any() else 1.0
    scaled_atol = atol * scale
    close = np.isclose(g, r, rtol=rtol, atol=scaled_atol, equal_nan=True)
    both_nan = np.isnan(r) & np.isnan(g)
    delta = np.abs(g - r)
    delta[both_nan] = 0.0
    delta[(r == g) & ~both_nan] = 0.0  # equal infinities
    delta = np.where(np.isnan(delta), np.inf, delta)
    diff.max_abs = float(delta.max()) if delta.size else 0.0
    big = np.abs(r) > scaled_atol
    diff.max_rel = float((delta[big] / np.abs(r[big])).max()) if big.any() else 0.0
    if not close.all():
        diff.ok = False
        bad = int((~close).sum())
        diff.reason = f"{bad}/{ref.size} values differ (atol {scaled_atol:.3g}, rtol {rtol:.3g})"


def _compare_sequences(
    name: str, reference: Sequence[object], actual: object, rtol: float, atol: float
) -> ValueDiff:
    if not isinstance(actual, list | tuple) or len(actual) != len(reference):
        got = len(actual) if isinstance(actual, list | tuple) else type(actual).__name__
        return ValueDiff(
            name,
            None,
            "sequence",
            math.inf,
            math.inf,
            False,
            f"a sequence of {got}, expected {len(reference)} items",
        )
    total = ValueDiff(name, (len(reference),), "sequence", 0.0, 0.0, True)
    for i, (r, a) in enumerate(zip(reference, actual, strict=True)):
        item = compare_values(f"{name}[{i}]", r, a, rtol=rtol, atol=atol)
        total.max_abs = max(total.max_abs, item.max_abs)
        total.max_rel = max(total.max_rel, item.max_rel)
        if not item.ok and total.ok:
            total.ok = False
            total.reason = f"item {i}: {item.reason}"
    return total


# ---- the report -------------------------------------------------------------------------------


@dataclass
class Divergence:
    """The first node whose result differs at a level, found by bisection."""

    node: str
    """The node's name (its location's name), e.g. `blk7_Sigmoid`."""
    op: str
    """The op at the compared level, e.g. `onnx.Sigmoid`."""
    location: str
    """The op's location as MLIR prints it: `loc("blk7_Sigmoid")`."""
    index: int
    """Position of the op among the cut points (top-level ops that compute tensors)."""
    input_shapes: list[str]
    """Each input as `<producer node>:<result> <shape> <element type>`."""
    outputs: list[ValueDiff]
    probes: int
    """Cuts run by the bisection (each compiled at the level and run on both sides)."""
    cut_points: int
    lowered_ops: int | None = None
    """How many ops of the lowered module carry the node's location (None: not counted)."""
    note: str = ""

    def lines(self, level: str) -> list[str]:
        out = [f"  first diverging node: '{self.node}' ({self.op}) at {self.location}"]
        if self.input_shapes:
            out.append(f"    inputs:  {', '.join(self.input_shapes)}")
        for diff in self.outputs:
            shape = _shape_text(diff.shape)
            out.append(
                f"    output {diff.name}: {shape} {diff.dtype}, max abs err "
                f"{_num(diff.max_abs)}, max rel err {_num(diff.max_rel)} ({diff.verdict})"
            )
        found = f"    found in {self.probes} probe{'s' if self.probes != 1 else ''}"
        found += f" over {self.cut_points} nodes"
        if self.lowered_ops:
            found += f"; {self.lowered_ops} op(s) at level {level} carry this location"
        out.append(found)
        if self.note:
            out.append(f"    note: {self.note}")
        return out


@dataclass
class LevelResult:
    """One level's outputs against the reference, and where it first diverges."""

    level: str
    outputs: list[ValueDiff] = field(default_factory=list)
    divergence: Divergence | None = None
    note: str = ""
    """What the bisection could not say (e.g. no single node diverges)."""
    error: str = ""
    """Why the level could not run the model at all (empty if it ran)."""

    @property
    def ok(self) -> bool:
        return not self.error and all(o.ok for o in self.outputs)


@dataclass
class CompareReport:
    """Every level's comparison with the reference; `str()` gives the CLI's table."""

    model: str
    against: str
    rtol: float
    atol: float
    levels: list[LevelResult] = field(default_factory=list)
    note: str = ""

    @property
    def ok(self) -> bool:
        return all(level.ok for level in self.levels)

    @property
    def first_divergence(self) -> Divergence | None:
        """The culprit of the first level that has one."""
        return next((lv.divergence for lv in self.levels if lv.divergence is not None), None)

    def culprit_nodes(self) -> dict[str, str]:
        """The culprit node's name by level, for the levels that have one."""
        return {lv.level: lv.divergence.node for lv in self.levels if lv.divergence is not None}

    def __str__(self) -> str:
        lines = [
            f"compare {self.model} against {self.against} (rtol {self.rtol:g}, "
            f"atol {self.atol:g} x max(1, |reference|))"
        ]
        if self.note:
            lines.append(f"note: {self.note}")
        for level in self.levels:
            if level.error:
                lines.append(f"level {level.level}: FAILED: {level.error}")
            else:
                lines.append(f"level {level.level}: {'ok' if level.ok else 'MISMATCH'}")
                lines.extend(_table(level.outputs))
            for diff in level.outputs:
                if not diff.ok and diff.reason:
                    lines.append(f"  {diff.name}: {diff.reason}")
            if level.divergence is not None:
                lines.extend(level.divergence.lines(level.level))
            if level.note:
                lines.append(f"  note: {level.note}")
        return "\n".join(lines)


def _table(diffs: Sequence[ValueDiff]) -> list[str]:
    header = ("output", "shape", "dtype", "max abs err", "max rel err", "verdict")
    rows = [
        (
            d.name,
            _shape_text(d.shape),
            d.dtype,
            _num(d.max_abs),
            _num(d.max_rel),
            d.verdict,
        )
        for d in diffs
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return [
        "  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
        for r in [header, *rows]
    ]


def _shape_text(shape: tuple[int, ...] | None) -> str:
    return "-" if shape is None else "[" + ", ".join(str(d) for d in shape) + "]"


def _num(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.3g}"


# ---- inputs -----------------------------------------------------------------------------------


def read_inputs(path: str | os.PathLike[str]) -> dict[str, np.ndarray]:
    """The arrays of an `.npz` file, by name (no pickled objects)."""
    p = Path(path)
    if not p.is_file():
        raise RungError(f"cannot read inputs: no such file '{path}'")
    try:
        with np.load(p, allow_pickle=False) as data:
            if not hasattr(data, "files"):
                raise RungError(f"cannot read inputs from '{path}': not an .npz file")
            return {name: data[name] for name in data.files}
    except RungError:
        raise
    except Exception as err:  # noqa: BLE001 - any unreadable file is bad input
        text = str(err).strip().splitlines()
        reason = text[0] if text else type(err).__name__
        raise RungError(f"cannot read inputs from '{path}': {reason}") from None


def _feed(
    module: ModuleOp, inputs: Mapping[str, object] | str | os.PathLike[str] | None, seed: int
) -> dict[str, object]:
    """The named inputs: given, read from an .npz, or random (seeded) from the declared types."""
    from .levels import level_of
    from .session import InferenceSession, random_inputs

    args = InferenceSession(module, level=level_of(module).name).get_inputs()
    if inputs is None:
        return random_inputs(args, seed=seed)
    where = ""
    if isinstance(inputs, str | os.PathLike):
        where = f" in '{inputs}'"
        inputs = read_inputs(inputs)
    if not isinstance(inputs, Mapping):
        raise RungError(f"inputs must be a dict of name -> array, got {type(inputs).__name__}")
    known = [a.name for a in args]
    listed = ", ".join(f"'{n}'" for n in known) or "none"
    for name in inputs:
        if name not in known:
            raise RungError(f"unknown input '{name}'{where}; the model's inputs are {listed}")
    missing = [a.name for a in args if a.name not in inputs and not a.type.startswith("optional(")]
    if missing:
        names = ", ".join(f"'{n}'" for n in missing)
        raise RungError(f"missing input{'s' if len(missing) > 1 else ''} {names}{where}")
    return dict(inputs)


# ---- cuts -------------------------------------------------------------------------------------


def _returnable(type: Attribute) -> bool:
    """Values a cut can return and compare: tensors, sequences and optionals."""
    from rung.dialects.onnx import OptType, SeqType

    return isinstance(type, TensorType | UnrankedTensorType | SeqType | OptType)


def cut_points(module: ModuleOp) -> list[Operation]:
    """The top-level ops of the main function a cut may follow, in order: those that
    compute a tensor from operands (constants cannot diverge on their own)."""
    from rung.dialects.signature import main_function

    return [
        op
        for op in main_function(module).body.block.ops
        if not isinstance(op, ReturnOp)
        and (op.operands or op.regions)
        and any(_returnable(r.type) for r in op.results)
    ]


def _signature_prefix(func: FuncOp) -> str:
    """`onnx` or `torch`: the frontend whose names the function's signature carries."""
    for attrs in (func.res_attrs, func.arg_attrs):
        for entry in attrs.data if attrs is not None else ():
            if isinstance(entry, DictionaryAttr):
                for key in entry.data:
                    if key.endswith(".name"):
                        return key.rsplit(".", 1)[0]
    return "onnx"


def _top_ancestor(op: Operation, block: object) -> Operation | None:
    while op.parent_block() is not block:
        parent = op.parent_op()
        if parent is None:
            return None
        op = parent
    return op


def node_name(op: Operation) -> str:
    """The source node an op is located at (`loc("name")`), else its op name."""
    loc = op.location
    if isinstance(loc, NameLoc):
        return loc.desc.data
    return op.name


def location_text(op: Operation) -> str:
    """The op's location as MLIR writes it: `loc("conv1")`, `loc("view"("m.py":42:0))`."""

    def text(loc: Attribute) -> str:
        if isinstance(loc, NameLoc):
            inner = (
                "" if not isinstance(loc.location, NameLoc | FileLineColLoc) else text(loc.location)
            )
            return f'"{loc.desc.data}"' + (f"({inner})" if inner else "")
        if isinstance(loc, FileLineColLoc):
            return f'"{loc.filename.data}":{loc.line.data}:{loc.column.data}'
        return "unknown"

    return f"loc({text(op.location)})"


@dataclass
class _Cut:
    module: ModuleOp
    names: list[str]
    """The returned values' names: `<node>:<result index>`."""
    own: list[int]
    """Positions (in `names`) of the results of the op the cut follows."""


def make_cut(module: ModuleOp, point: int) -> _Cut:
    """A copy of `module` whose main function stops after cut point `point` and returns
    the frontier: the tensors computed so far that later ops (or the outputs) use, and
    the results of the op at `point` itself."""
    from rung.dialects.signature import main_function

    from .levels import owned_copy

    copy = owned_copy(module)
    func = main_function(copy)
    block = func.body.block
    points = cut_points(copy)
    last = points[point]
    computed = set(points[: point + 1])
    ops = list(block.ops)
    position = {op: i for i, op in enumerate(ops)}
    end = position[last]
    ret = ops[-1]
    assert isinstance(ret, ReturnOp)
    frontier: list[SSAValue] = []
    own: list[int] = []
    for op in ops[: end + 1]:
        if op not in computed:
            continue  # constants: the same on both sides
        for result in op.results:
            if not _returnable(result.type):
                continue
            later = op is last
            for use in result.uses:
                top = _top_ancestor(use.operation, block)
                if top is not None and position.get(top, -1) > end:
                    later = True
                    break
            if later:
                if op is last:
                    own.append(len(frontier))
                frontier.append(result)
    names: list[str] = []
    taken: set[str] = set()
    for value in frontier:
        owner = value.owner
        assert isinstance(owner, Operation)
        base = f"{node_name(owner)}:{value.index}"
        name, k = base, 0
        while name in taken:
            k += 1
            name = f"{base}#{k}"
        taken.add(name)
        names.append(name)
    ret.detach()
    ret.erase()
    for op in reversed(ops[end + 1 : -1]):
        op.detach()
        op.erase(safe_erase=False)
    block.add_op(ReturnOp(*frontier))
    func.update_function_type()
    prefix = _signature_prefix(func)
    func.res_attrs = ArrayAttr([DictionaryAttr({f"{prefix}.name": StringAttr(n)}) for n in names])
    return _Cut(copy, names, own)


# ---- the sides --------------------------------------------------------------------------------

Runner = Callable[[ModuleOp, Mapping[str, object]], tuple[list[object], ModuleOp | None]]
"""Runs a module on named inputs: its outputs, and the module it ran (lowered) if any."""


def _level_runner(level: str) -> Runner:
    def run(module: ModuleOp, feed: Mapping[str, object]) -> tuple[list[object], ModuleOp | None]:
        from .session import InferenceSession

        session = InferenceSession(module, level=level)
        return session.run(None, dict(feed)), session.module

    return run


def _onnxruntime_runner(module: ModuleOp, feed: Mapping[str, object]) -> tuple[list[object], None]:
    from rung.importers.onnx.export import module_to_model

    return _run_onnxruntime(module_to_model(module).SerializeToString(), feed), None


def _run_onnxruntime(model: bytes | str, feed: Mapping[str, object]) -> list[object]:
    try:
        import onnxruntime
    except ImportError:
        raise RungError("--against onnxruntime needs the onnxruntime package") from None
    try:
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3
        session = onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        names = {i.name for i in session.get_inputs()}
        return list(session.run(None, {k: v for k, v in feed.items() if k in names}))
    except Exception as err:  # noqa: BLE001 - onnxruntime's own errors are the reference failing
        text = str(err).strip().splitlines()
        raise RungError(f"onnxruntime failed: {text[0] if text else type(err).__name__}") from None


def _run_torch_program(path: Path, feed: Mapping[str, object], module: ModuleOp) -> list[object]:
    """The outputs of a `.pt2` program run in torch eager, flattened in output order."""
    from rung.importers.torch import load_program

    return _run_exported(load_program(path), feed, module)


def _run_exported(program: object, feed: Mapping[str, object], module: ModuleOp) -> list[object]:
    """An ExportedProgram run in torch eager on the inputs, in the module's argument order."""
    import torch
    from torch.utils._pytree import tree_leaves

    from rung.dialects.signature import io_names, main_function

    in_names, _ = io_names(main_function(module))
    args = [torch.from_numpy(np.asarray(feed[n])) for n in in_names if n in feed]
    try:
        with torch.no_grad():
            result = program.module()(*args)  # type: ignore[attr-defined]
    except Exception as err:  # noqa: BLE001 - the reference failing on these inputs
        text = str(err).strip().splitlines()
        raise RungError(f"torch eager failed: {text[0] if text else type(err).__name__}") from None
    return [
        leaf.detach().cpu().numpy() if isinstance(leaf, torch.Tensor) else np.asarray(leaf)
        for leaf in tree_leaves(result)
    ]


# ---- compare ----------------------------------------------------------------------------------


def compare(
    model: object,
    inputs: Mapping[str, object] | str | os.PathLike[str] | None = None,
    *,
    against: str | None = None,
    levels: Sequence[str] = ("kernel",),
    rtol: float = DEFAULT_RTOL,
    atol: float = DEFAULT_ATOL,
    bisect: bool = True,
    seed: int = 0,
    progress: Progress | None = None,
) -> CompareReport:
    """Run `model` at each of `levels` and compare its outputs with `against`.

    `model` is what `InferenceSession` takes (a path, ModelProto, ExportedProgram
    or ModuleOp). `inputs` maps names to arrays, names an `.npz` file, or is None
    for random inputs (`seed`). `against` is `"onnxruntime"` (default for ONNX
    models), `"torch"` (default for PyTorch programs; for an ONNX file, the
    `.pt2` of the same stem beside it run in torch eager) or a rung level name.
    On a mismatch, and if `bisect`, the first diverging node is found per level.
    """
    from .levels import get_level, level_names, level_of
    from .loading import is_exported_program, load_module

    if isinstance(levels, str):
        levels = [levels]
    levels = list(levels)
    if not levels:
        raise RungError("give at least one level to compare")
    for value, what in ((rtol, "rtol"), (atol, "atol")):
        if not (isinstance(value, int | float) and value >= 0 and math.isfinite(value)):
            raise RungError(f"{what} must be a non-negative number, got {value!r}")
    source = model if isinstance(model, str | os.PathLike) else None
    module = load_module(model)
    start = level_of(module)
    frontend = start.name if start.dialect in ("onnx", "torch") else None
    if against is None:
        if frontend is None:
            raise RungError(
                f"the model is {start.name}-level IR; say what to compare it against with "
                "--against LEVEL"
            )
        against = "onnxruntime" if frontend == "onnx" else "torch"
    for name in levels:
        get_level(name)  # unknown levels fail before anything runs
    if against not in REFERENCES:
        try:
            get_level(against)
        except RungError:
            raise RungError(
                f"unknown reference '{against}': use {' or '.join(REFERENCES)}, or a level "
                f"({', '.join(level_names())})"
            ) from None
    feed = _feed(module, inputs, seed)
    label = str(source) if source is not None else "the model"
    report = CompareReport(label, against, rtol, atol)

    # The reference of the whole model, and the side each level is bisected against.
    bisect_runner: Runner
    if against == "onnxruntime":
        if frontend != "onnx":
            raise RungError("--against onnxruntime needs an ONNX model (onnx-dialect IR)")
        original = _original_onnx(model)
        reference = (
            _run_onnxruntime(original, feed)
            if original is not None
            else _onnxruntime_runner(module, feed)[0]
        )
        bisect_runner = _onnxruntime_runner
    elif against == "torch":
        pt2 = _beside_pt2(source) if frontend == "onnx" else None
        if frontend == "torch":
            program = source if source is not None and Path(source).suffix == ".pt2" else None
            reference = (
                _run_torch_program(Path(program), feed, module)
                if program is not None
                else _run_exported(model, feed, module)
                if is_exported_program(model)
                else _level_runner("torch")(module, feed)[0]
            )
            bisect_runner = _level_runner("torch")
        elif pt2 is not None:
            reference = _run_torch_program(pt2, feed, module)
            report.note = (
                f"final outputs against '{pt2.name}' in torch eager; nodes bisected against "
                "onnxruntime"
            )
            bisect_runner = _onnxruntime_runner
        else:
            raise RungError(
                "--against torch needs a PyTorch program (.pt2), or an ONNX model with a .pt2 "
                "of the same name beside it"
            )
    else:
        reference = _level_runner(against)(module, feed)[0]
        bisect_runner = _level_runner(against)

    from rung.dialects.signature import io_names, main_function

    _, out_names = io_names(main_function(module))
    for level in levels:
        result = LevelResult(level)
        report.levels.append(result)
        try:
            actual, lowered = _level_runner(level)(module, feed)
        except RungError as err:  # bisection then finds the first node the level fails on
            result.error = str(err).strip().splitlines()[0]
            actual, lowered = None, None
        if actual is not None:
            result.outputs = _diffs(out_names, reference, actual, rtol, atol)
        if result.ok or not bisect:
            continue
        if actual is not None and against == "torch" and frontend == "onnx":
            # The ONNX model may itself differ from the program it was exported from.
            ort = _onnxruntime_runner(module, feed)[0]
            if all(d.ok for d in _diffs(out_names, ort, actual, rtol, atol)):
                result.note = (
                    f"level {level} agrees with onnxruntime on the ONNX model: the ONNX "
                    "model itself differs from the .pt2 (look at the export)"
                )
                continue
        result.divergence, result.note = _bisect(
            module, feed, level, bisect_runner, rtol, atol, lowered, progress
        )
    return report


def _diffs(
    names: Sequence[str],
    reference: Sequence[object],
    actual: Sequence[object],
    rtol: float,
    atol: float,
) -> list[ValueDiff]:
    if len(reference) != len(actual):
        raise RungError(f"the reference gave {len(reference)} outputs, the level {len(actual)}")
    return [
        compare_values(n, r, a, rtol=rtol, atol=atol)
        for n, r, a in zip(names, reference, actual, strict=True)
    ]


def _original_onnx(model: object) -> bytes | str | None:
    """The user's own ONNX model (bytes, or the path, so that external data is found),
    so that the final reference does not go through rung's importer and exporter."""
    from onnx import ModelProto

    if isinstance(model, ModelProto):
        return model.SerializeToString()
    if isinstance(model, str | os.PathLike) and Path(model).suffix == ".onnx":
        return str(model)
    return None


def _beside_pt2(source: str | os.PathLike[str] | None) -> Path | None:
    if source is None:
        return None
    candidate = Path(source).with_suffix(".pt2")
    return candidate if candidate.is_file() else None


def _bisect(
    module: ModuleOp,
    feed: Mapping[str, object],
    level: str,
    reference: Runner,
    rtol: float,
    atol: float,
    lowered: ModuleOp | None,
    progress: Progress | None,
) -> tuple[Divergence | None, str]:
    """Binary search over cut points for the first op whose results diverge.

    Invariant: the frontier after `lo` matches (lo = -1: the inputs), the one
    after `hi` does not (hi = the last op: the outputs, which differ).
    """
    points = cut_points(module)
    n = len(points)
    if n == 0:
        return None, "the model has no op to bisect over"
    expected = max(1, math.ceil(math.log2(n)))
    probes = 0
    seen: dict[int, list[ValueDiff]] = {}
    errors: dict[int, str] = {}
    candidate = _level_runner(level)

    def probe(k: int) -> bool:
        nonlocal probes
        probes += 1
        cut = make_cut(module, k)
        node = node_name(points[k])
        try:
            want, _ = reference(cut.module, feed)
        except RungError as err:
            raise RungError(
                f"the reference failed on the model cut after node '{node}': {err}"
            ) from None
        try:
            got, _ = candidate(cut.module, feed)
            diffs = _diffs(cut.names, want, got, rtol, atol)
            ok = all(d.ok for d in diffs)
        except RungError as err:  # a cut the level fails to run counts as diverging
            diffs, ok = [], False
            errors[k] = str(err).splitlines()[0]
        seen[k] = [diffs[i] for i in cut.own] if diffs else []
        if progress is not None:
            progress(
                f"level {level}: probe {probes} (of about {expected}): cut after node '{node}' "
                f"({k + 1}/{n}) ... {'ok' if ok else 'differs'}"
            )
        return ok

    lo, hi = -1, n - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if probe(mid):
            lo = mid
        else:
            hi = mid
    if hi not in seen:
        probe(hi)  # the culprit's own results, for the report
    op = points[hi]
    outputs = seen[hi]
    note = ""
    if hi in errors:
        note = f"the cut after it fails: {errors[hi]}"
    elif outputs and all(d.ok for d in outputs):
        note = "its own results match here; a value it passes on differs (nondeterminism?)"
    divergence = Divergence(
        node=node_name(op),
        op=op.name,
        location=location_text(op),
        index=hi,
        input_shapes=[f"{_value_name(v, module)} {_type_text(v.type)}" for v in op.operands],
        outputs=outputs,
        probes=probes,
        cut_points=n,
        lowered_ops=_count_located(lowered, op),
        note=note,
    )
    return divergence, ""


def _value_name(value: SSAValue, module: ModuleOp) -> str:
    """`<node>:<result>` for an op's result, the model's name for an input."""
    from rung.dialects.signature import io_names, main_function

    owner = value.owner
    if isinstance(owner, Operation):
        return f"{node_name(owner)}:{value.index}"
    func = main_function(module)
    if owner is func.body.block:
        return io_names(func)[0][value.index]
    return value.name_hint or "?"


def _type_text(type: Attribute) -> str:
    if isinstance(type, TensorType):
        dims = ["?" if d < 0 else str(d) for d in type.get_shape()]
        return "[" + ", ".join(dims) + "] " + str(type.element_type)
    return str(type)


def _count_located(lowered: ModuleOp | None, op: Operation) -> int | None:
    """How many ops of the lowered module carry `op`'s location (None if it keeps none)."""
    if (
        lowered is None
        or lowered is op.get_toplevel_object()
        or not isinstance(op.location, NameLoc)
    ):
        return None
    name = op.location.desc.data
    count = sum(
        1
        for o in lowered.walk()
        if isinstance(o.location, NameLoc) and o.location.desc.data == name
    )
    return count or None


__all__ = [
    "DEFAULT_ATOL",
    "DEFAULT_RTOL",
    "CompareReport",
    "Divergence",
    "LevelResult",
    "ValueDiff",
    "compare",
    "compare_values",
    "cut_points",
    "location_text",
    "make_cut",
    "node_name",
    "read_inputs",
]
