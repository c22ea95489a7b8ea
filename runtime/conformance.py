"""The conformance scoreboard: every ONNX node (or model) test case, at every level.

`run_conformance` imports each case of `onnx.backend.test.case.node` (generated
from the installed onnx package at run time) — or, with `kind="models"`, loads
the model test cases the onnx package ships as files (see MODELS_RULE) — runs
it with `InferenceSession` at each requested level, and compares the outputs with the case's expected
ones the way onnx's backend test runner does: same dtype and shape, and
`|got - expected| <= atol + rtol * |expected|` (NaN equal to NaN), with the
case's own `rtol` / `atol`; strings exactly; sequences, optionals and maps
structurally.

Every (case, level) runs in a pool of worker processes (`spawn`), each task with
a time limit: a worker that crashes or hangs only costs its case (`crash` /
`timeout`) and is replaced. The parent collects the cases once and sends each
worker the model and its data.

A failing case gets one reason category: `import error`, `unsupported op` (no
lowering or no implementation), `numeric mismatch`, `shape mismatch`,
`dtype mismatch` (also: a sequence where a tensor was expected, and so on),
`sanitizer finding` (at `kernel-sanitized`: what the sanitizer found, and where),
`crash` (an exception: its type and first line; or the worker died) or
`timeout`.

Each case is attributed to the op it tests (`main_op`); the scoreboard has one
row per op, see `ATTRIBUTION_RULE`.

With `shapes="dynamic"` every case runs on a rewritten model whose graph
inputs have only symbolic dims (`with_symbolic_dims`), fed the same data, so
that a lowering which leans on static sizes shows up as a failure.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import sys
import time
import traceback
import warnings
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from rung.errors import RungError

if TYPE_CHECKING:
    from onnx import ModelProto, TypeProto

CATEGORIES = (
    "import error",
    "unsupported op",
    "numeric mismatch",
    "shape mismatch",
    "dtype mismatch",
    "sanitizer finding",
    "crash",
    "timeout",
)

DEFAULT_TIMEOUT = 60.0

SHAPES = ("static", "dynamic")

KINDS = ("node", "models")

MODEL_SUITES = ("simple", "pytorch-converted", "pytorch-operator")

MODELS_RULE = """\
The model test cases are the folders of `onnx/backend/test/data/<suite>` for the
suites `simple`, `pytorch-converted` and `pytorch-operator`, read from the
installed onnx package: each holds `model.onnx` and `test_data_set_*/` with
`input_<i>.pb` for the i-th graph input that has no initializer and
`output_<i>.pb` for the i-th graph output, each a TensorProto, SequenceProto or
OptionalProto as the graph's declared type says. Tolerances are onnx's runner's
(rtol 1e-3, atol 1e-7, or the case's `data.json`). Cases are grouped by suite."""

DYNAMIC_RULE = """\
Every case is run on a rewritten model: each dim of each graph input (and of
the tensors inside sequence and optional inputs) becomes a `dim_param` named
`<input>_d<axis>`, keeping rank and element type; graph outputs' dims become
`dim_param`s `<output>_d<axis>` and the shapes of intermediate `value_info`
entries are dropped, so no declared size survives. Initializers, rank-0 inputs
and subgraphs are left as they are. The data fed is the case's own."""

ATTRIBUTION_RULE = """\
Each case is attributed to the op it tests. A case whose model holds one op
type at its top level (ignoring `Constant`) is attributed to that op. Otherwise
(the `_expanded` variants, whose model is the op's function body, and other
models of several ops) the case name, without `test_` and `ai_onnx_ml_`, is
matched against the names of all ONNX ops (schemas of every domain, and the
model's own ops) with underscores removed and case ignored: the longest op name
that starts the case name wins (`test_reduce_log_sum_exp_do_not_keepdims_expanded`
→ ReduceLogSumExp). A few abbreviations used by case names are spelled out
first (`sce` → SoftmaxCrossEntropyLoss, `nllloss` → NegativeLogLikelihoodLoss,
`mvn` → MeanVarianceNormalization, `greater_equal` → GreaterOrEqual,
`less_equal` → LessOrEqual). Ops of domains other than ai.onnx carry their
domain as a prefix (`ai.onnx.ml.LabelEncoder`)."""

_ALIASES = {
    "sce": "SoftmaxCrossEntropyLoss",
    "nllloss": "NegativeLogLikelihoodLoss",
    "mvn": "MeanVarianceNormalization",
    "greaterequal": "GreaterOrEqual",
    "lessequal": "LessOrEqual",
}


# ---- cases --------------------------------------------------------------------------


@dataclass
class Case:
    """One ONNX test case, ready to send to a worker.

    `op` is the group the scoreboard counts it under: the op a node case tests,
    the suite of a model case.
    """

    name: str
    op: str
    model: bytes
    data_sets: list[tuple[list[object], list[object]]]
    rtol: float
    atol: float


def _normalize(value: object) -> object:
    """Test data may hold TensorProtos (for types numpy cannot spell) and numpy scalars."""
    from onnx import TensorProto, numpy_helper

    if isinstance(value, TensorProto):
        return numpy_helper.to_array(value)
    if isinstance(value, np.generic):
        return np.asarray(value)
    if isinstance(value, list | tuple):
        return [_normalize(v) for v in value]
    if isinstance(value, dict):
        return {k: _normalize(v) for k, v in value.items()}
    return value


_SCHEMA_OPS: dict[str, str] | None = None


def _schema_ops() -> dict[str, str]:
    global _SCHEMA_OPS
    if _SCHEMA_OPS is None:
        import onnx.defs

        ops: dict[str, str] = {}
        for schema in onnx.defs.get_all_schemas_with_history():
            ops.setdefault(schema.name, schema.domain)
        _SCHEMA_OPS = ops
    return _SCHEMA_OPS


def _squash(name: str) -> str:
    return name.replace("_", "").lower()


def _qualified(op_type: str, domain: str) -> str:
    return op_type if domain in ("", "ai.onnx") else f"{domain}.{op_type}"


def main_op(case_name: str, model: object) -> str:
    """The op a case tests (see ATTRIBUTION_RULE)."""
    nodes = list(model.graph.node)  # type: ignore[attr-defined]
    domains = {n.op_type: n.domain for n in nodes}
    distinct = list(dict.fromkeys(n.op_type for n in nodes if n.op_type != "Constant"))
    if not distinct:
        distinct = list(dict.fromkeys(n.op_type for n in nodes))
    key = re.sub(r"^test_", "", case_name)
    key = re.sub(r"^ai_onnx_ml_", "", key)
    expanded = re.search(r"_expanded(_ver\d+)?$", key) is not None
    if not expanded and len(distinct) == 1:
        return _qualified(distinct[0], domains[distinct[0]])
    squashed = _squash(key)
    schema = _schema_ops()
    for alias, op in _ALIASES.items():
        if squashed.startswith(alias):
            return _qualified(op, schema.get(op, ""))
    candidates = {**schema, **domains}
    best = max(
        (op for op in candidates if squashed.startswith(_squash(op))),
        key=lambda op: (len(_squash(op)), op),
        default=None,
    )
    if best is not None:
        return _qualified(best, candidates[best])
    if distinct:
        return _qualified(distinct[0], domains[distinct[0]])
    return "(no op)"


def _symbolic_type(tp: TypeProto, prefix: str) -> None:
    """Name every dim `<prefix>_d<axis>`, through sequences and optionals; maps stay."""
    kind = tp.WhichOneof("value")
    if kind in ("tensor_type", "sparse_tensor_type"):
        tensor = getattr(tp, kind)
        if not tensor.HasField("shape"):
            return  # unknown rank: nothing static to hide
        for axis, dim in enumerate(tensor.shape.dim):
            dim.Clear()
            dim.dim_param = f"{prefix}_d{axis}"
    elif kind in ("sequence_type", "optional_type"):
        inner = getattr(tp, kind)
        if inner.HasField("elem_type"):
            _symbolic_type(inner.elem_type, prefix)


def _drop_shape(tp: TypeProto) -> None:
    kind = tp.WhichOneof("value")
    if kind in ("tensor_type", "sparse_tensor_type"):
        getattr(tp, kind).ClearField("shape")
    elif kind in ("sequence_type", "optional_type"):
        inner = getattr(tp, kind)
        if inner.HasField("elem_type"):
            _drop_shape(inner.elem_type)


def with_symbolic_dims(model: ModelProto) -> ModelProto:
    """A copy of `model` whose declared shapes say nothing static (see DYNAMIC_RULE).

    Output and intermediate shapes go too: a declared static output shape would
    hand the importer the sizes that the symbolic inputs hide.
    """
    from onnx import ModelProto

    result = ModelProto()
    result.CopyFrom(model)
    graph = result.graph
    initializers = {t.name for t in graph.initializer} | {
        t.values.name for t in graph.sparse_initializer
    }
    for vi in graph.input:
        if vi.name not in initializers and vi.HasField("type"):
            _symbolic_type(vi.type, vi.name)
    for vi in graph.output:
        if vi.HasField("type"):
            _symbolic_type(vi.type, vi.name)
    for vi in graph.value_info:
        if vi.HasField("type"):
            _drop_shape(vi.type)
    return result


def _check_shapes(shapes: str) -> None:
    if shapes not in SHAPES:
        raise RungError(f"unknown --shapes '{shapes}'; known: {', '.join(SHAPES)}")


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise RungError(f"unknown --cases '{kind}'; known: {', '.join(KINDS)}")


def collect_cases(
    pattern: str | None = None, shapes: str = "static", kind: str = "node"
) -> list[Case]:
    """The ONNX test cases of `kind` (those whose name matches `pattern`), sorted by name.

    With `shapes="dynamic"` each case's model is `with_symbolic_dims` of its own.
    """
    _check_shapes(shapes)
    _check_kind(kind)
    if kind == "models":
        return collect_model_cases(pattern, shapes)
    regex = compile_filter(pattern)
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = collect_testcases()
    cases = []
    for tc in found:
        if regex is not None and not regex.search(tc.name):
            continue
        model = with_symbolic_dims(tc.model) if shapes == "dynamic" else tc.model
        cases.append(
            Case(
                name=tc.name,
                op=main_op(tc.name, tc.model),
                model=model.SerializeToString(),
                data_sets=[
                    ([_normalize(v) for v in ins], [_normalize(v) for v in outs])
                    for ins, outs in tc.data_sets or []
                ],
                rtol=float(tc.rtol),
                atol=float(tc.atol),
            )
        )
    cases.sort(key=lambda c: c.name)
    return cases


def model_data_dir() -> str:
    """Where the installed onnx package keeps its model test cases."""
    from onnx.backend.test.loader import DATA_DIR

    return DATA_DIR


def _load_value(path: str, tp: TypeProto) -> object:
    """One `.pb` file of a test data set, read as the graph's declared type says."""
    import onnx
    from onnx import numpy_helper

    with open(path, "rb") as f:
        content = f.read()
    kind = tp.WhichOneof("value")
    if kind == "sequence_type":
        return _normalize(numpy_helper.to_list(onnx.SequenceProto.FromString(content)))
    if kind == "optional_type":
        return _normalize(numpy_helper.to_optional(onnx.OptionalProto.FromString(content)))
    if kind == "tensor_type":
        return numpy_helper.to_array(onnx.TensorProto.FromString(content))
    raise RungError(f"'{path}': cannot read a value of type '{kind}'")


def _model_data_sets(case_dir: str, model: ModelProto) -> list[tuple[list[object], list[object]]]:
    """The case's data sets: inputs in the order of the graph inputs without initializer."""
    initialized = {t.name for t in model.graph.initializer}
    fed = [vi for vi in model.graph.input if vi.name not in initialized]
    data_sets = []
    for set_dir in sorted(d for d in os.listdir(case_dir) if d.startswith("test_data_set")):
        where = os.path.join(case_dir, set_dir)
        inputs = [
            _load_value(os.path.join(where, f"input_{i}.pb"), vi.type)
            for i, vi in enumerate(fed)
            if os.path.exists(os.path.join(where, f"input_{i}.pb"))
        ]
        outputs = []
        for i, vi in enumerate(model.graph.output):
            path = os.path.join(where, f"output_{i}.pb")
            if not os.path.exists(path):
                break
            outputs.append(_load_value(path, vi.type))
        data_sets.append((inputs, outputs))
    return data_sets


def _tolerances(case_dir: str) -> tuple[float, float]:
    rtol, atol = 1e-3, 1e-7  # onnx's loader's defaults for model cases
    path = os.path.join(case_dir, "data.json")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        rtol, atol = data.get("rtol", rtol), data.get("atol", atol)
    return float(rtol), float(atol)


def collect_model_cases(pattern: str | None = None, shapes: str = "static") -> list[Case]:
    """The ONNX model test cases of MODEL_SUITES (see MODELS_RULE), sorted by name."""
    _check_shapes(shapes)
    regex = compile_filter(pattern)
    import onnx

    root = model_data_dir()
    cases = []
    for suite in MODEL_SUITES:
        suite_dir = os.path.join(root, suite)
        for name in sorted(os.listdir(suite_dir)):
            case_dir = os.path.join(suite_dir, name)
            model_path = os.path.join(case_dir, "model.onnx")
            if not os.path.exists(model_path):
                continue
            if regex is not None and not regex.search(name):
                continue
            model = onnx.load(model_path)
            data_sets = _model_data_sets(case_dir, model)
            if shapes == "dynamic":
                model = with_symbolic_dims(model)
            rtol, atol = _tolerances(case_dir)
            cases.append(
                Case(
                    name=name,
                    op=suite,
                    model=model.SerializeToString(),
                    data_sets=data_sets,
                    rtol=rtol,
                    atol=atol,
                )
            )
    cases.sort(key=lambda c: c.name)
    return cases


def compile_filter(pattern: str | None) -> re.Pattern[str] | None:
    if pattern is None:
        return None
    try:
        return re.compile(pattern)
    except re.error as err:
        raise RungError(f"bad --filter regular expression '{pattern}': {err}") from None


# ---- comparing outputs ---------------------------------------------------------------


def _describe(value: object) -> str:
    if isinstance(value, np.ndarray):
        return f"a tensor of {value.dtype} {list(value.shape)}"
    if isinstance(value, list | tuple):
        return f"a sequence of {len(value)}"
    if isinstance(value, dict):
        return f"a map of {len(value)}"
    if value is None:
        return "nothing (None)"
    return type(value).__name__


def compare(
    expected: object, got: object, rtol: float, atol: float, where: str
) -> tuple[str, str] | None:
    """None when `got` matches `expected`; else (category, message)."""
    if isinstance(expected, list | tuple):
        if not isinstance(got, list | tuple):
            return "dtype mismatch", f"{where}: expected a sequence, got {_describe(got)}"
        if len(got) != len(expected):
            return (
                "shape mismatch",
                f"{where}: expected a sequence of {len(expected)}, got {len(got)} items",
            )
        for i, (e, g) in enumerate(zip(expected, got, strict=True)):
            verdict = compare(e, g, rtol, atol, f"{where}[{i}]")
            if verdict is not None:
                return verdict
        return None
    if expected is None:
        if got is not None:
            return "dtype mismatch", f"{where}: expected an empty optional, got {_describe(got)}"
        return None
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            return "dtype mismatch", f"{where}: expected a map, got {_describe(got)}"
        if set(got) != set(expected):
            return "shape mismatch", f"{where}: map keys differ"
        for key in expected:
            verdict = compare(expected[key], got[key], rtol, atol, f"{where}[{key!r}]")
            if verdict is not None:
                return verdict
        return None
    exp = np.asarray(expected)
    if isinstance(got, np.generic):
        got = np.asarray(got)
    if not isinstance(got, np.ndarray):
        return "dtype mismatch", f"{where}: expected {_describe(exp)}, got {_describe(got)}"
    if got.shape != exp.shape:
        return (
            "shape mismatch",
            f"{where}: expected shape {list(exp.shape)}, got {list(got.shape)}",
        )
    if exp.dtype == object:
        got_s = got.astype(object) if got.dtype.kind in "US" else got
        if got_s.dtype != object:
            return "dtype mismatch", f"{where}: expected strings, got {got.dtype}"
        differ = [i for i, (e, g) in enumerate(zip(exp.flat, got_s.flat, strict=True)) if e != g]
        if differ:
            i = differ[0]
            return (
                "numeric mismatch",
                f"{where}: {len(differ)} of {exp.size} strings differ; first at flat index "
                f"{i}: expected {exp.flat[i]!r}, got {got_s.flat[i]!r}",
            )
        return None
    if got.dtype != exp.dtype:
        return "dtype mismatch", f"{where}: expected dtype {exp.dtype}, got {got.dtype}"
    return _compare_numbers(exp, got, rtol, atol, where)


def _compare_numbers(
    exp: np.ndarray, got: np.ndarray, rtol: float, atol: float, where: str
) -> tuple[str, str] | None:
    if exp.dtype.name == "bfloat16":
        rtol = max(rtol, 2**-6)  # as onnx's runner: two bfloat16 ULPs
    if exp.dtype.kind == "V":  # ml_dtypes (bfloat16, float8, int4, …)
        exp, got = exp.astype(np.float64), got.astype(np.float64)
    elif exp.dtype.kind == "b":
        exp, got = exp.astype(np.int8), got.astype(np.int8)
    if exp.dtype.kind in "iu":
        exp, got = exp.astype(np.float64), got.astype(np.float64)
    with np.errstate(all="ignore"):
        close = np.isclose(got, exp, rtol=rtol, atol=atol, equal_nan=True)
        if close.all():
            return None
        bad = ~close
        diff = np.abs(got.astype(np.complex128 if np.iscomplexobj(got) else np.float64) - exp)
        diff_bad = diff[bad]
        finite = diff_bad[np.isfinite(diff_bad)]
        max_abs = float(finite.max()) if finite.size else float("nan")
        denom = np.abs(exp)[bad]
        rel = diff_bad / np.where(denom == 0, np.nan, denom)
        rel = rel[np.isfinite(rel)]
        max_rel = float(rel.max()) if rel.size else float("nan")
    nan_note = ""
    nan_mismatch = int(np.sum(np.isnan(diff_bad)))
    if nan_mismatch:
        nan_note = f"; {nan_mismatch} NaN/inf mismatches"
    return (
        "numeric mismatch",
        f"{where}: {int(bad.sum())} of {exp.size} elements differ; max abs error "
        f"{max_abs:.3g}, max rel error {max_rel:.3g} (rtol {rtol:g}, atol {atol:g}){nan_note}",
    )


# ---- running one case (in a worker) ---------------------------------------------------


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    line = text.splitlines()[0] if text else ""
    if len(line) > 240:
        line = line[:237] + "..."
    return f"{type(err).__name__}: {line}" if line else type(err).__name__


def _crash(err: BaseException) -> dict[str, str]:
    """A crash, with where it was raised when that is inside rung.

    A bare `IndexError: list index out of range` says nothing about which
    lowering broke; the module and function do, and unlike a line number they
    stay put while the code around them changes.
    """
    message = _first_line(err)
    where = _raised_in_rung(traceback.extract_tb(err.__traceback__))
    if where is not None:
        message += f" (in {where})"
    return _fail("crash", message)


def _raised_in_rung(frames: traceback.StackSummary) -> str | None:
    """`module, function` of the innermost frame outside libraries, if it is rung's."""
    modules = {
        os.path.abspath(module.__file__): name
        for name, module in list(sys.modules.items())
        if (name == "rung" or name.startswith("rung.")) and getattr(module, "__file__", None)
    }
    libraries = tuple(
        os.path.abspath(p) + os.sep for p in {sys.prefix, sys.base_prefix, sys.exec_prefix}
    )
    for frame in reversed(frames):
        path = os.path.abspath(frame.filename)
        if path in modules:
            return f"{modules[path]}, {frame.name}"
        if path.startswith(libraries) or "site-packages" in path or path.startswith("<"):
            continue
        return None  # a plugin's own code: its message speaks for itself
    return None


def _fail(category: str, message: str) -> dict[str, str]:
    return {"status": "fail", "category": category, "message": message}


def run_case(case: Case, level: str) -> dict[str, str]:
    """Run one case at one level; returns {"status": "pass"} or a failure with its reason."""
    from onnx import ModelProto

    from rung.importers.onnx import import_model

    from .levels import UnsupportedOpError
    from .native import SanitizerError
    from .session import InferenceSession

    model = ModelProto.FromString(case.model)
    try:
        module = import_model(model)
    except RungError as err:
        return _fail("import error", err.message.splitlines()[0] if err.message else str(err))
    except Exception as err:
        return _fail("import error", _first_line(err))
    try:
        session = InferenceSession(module, level=level)
    except UnsupportedOpError as err:
        return _fail("unsupported op", str(err).splitlines()[0])
    except Exception as err:
        return _crash(err)
    known = {i.name for i in session.get_inputs()}
    initialized = {t.name for t in model.graph.initializer}
    input_names = [vi.name for vi in model.graph.input if vi.name not in initialized]
    out_names = [o.name for o in session.get_outputs()]
    for inputs, expected in case.data_sets:
        feed = {n: v for n, v in zip(input_names, inputs, strict=False) if n in known}
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                got = session.run(None, feed)
        except UnsupportedOpError as err:
            return _fail("unsupported op", str(err).splitlines()[0])
        except SanitizerError as err:
            return _fail("sanitizer finding", str(err).splitlines()[0])
        except Exception as err:
            return _crash(err)
        if len(got) != len(expected):
            return _fail("shape mismatch", f"expected {len(expected)} outputs, got {len(got)}")
        for name, e, g in zip(out_names, expected, got, strict=True):
            verdict = compare(e, g, case.rtol, case.atol, f"output '{name}'")
            if verdict is not None:
                return _fail(*verdict)
    return {"status": "pass"}


def _worker_main(
    conn: object, plugins: Sequence[str], quiet: bool, setup: str | None = None
) -> None:
    """A worker process: set up once, then run (case, level) tasks until told to stop.

    `setup` ("module:function") is called once before the worker says it is ready, so that
    a slow import a source of cases needs (torch's OpInfo database) is not charged to the
    first task's time limit. A case with a `run(level)` method runs itself; an ONNX `Case`
    runs through `run_case`."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    if quiet:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
    warnings.simplefilter("ignore")
    try:
        from .levels import level_names, load_level_plugin

        for plugin in plugins:
            load_level_plugin(plugin)
        level_names()
        import onnx.reference  # noqa: F401

        import rung.importers.onnx  # noqa: F401
        import rung.runtime.session  # noqa: F401

        if setup is not None:
            module_name, _, function = setup.partition(":")
            getattr(importlib.import_module(module_name), function)()
    except BaseException as err:  # noqa: BLE001 - reported to the parent
        conn.send(("init-error", _first_line(err)))  # type: ignore[attr-defined]
        return
    conn.send(("ready", None))  # type: ignore[attr-defined]
    while True:
        try:
            task = conn.recv()  # type: ignore[attr-defined]
        except (EOFError, OSError):
            return
        if task is None:
            return
        case, level = task
        try:
            runner = getattr(case, "run", None)
            result = runner(level) if callable(runner) else run_case(case, level)
        except BaseException as err:  # noqa: BLE001 - anything a case raises is its result
            result = _crash(err)
        conn.send(("result", result))  # type: ignore[attr-defined]


# ---- the pool -------------------------------------------------------------------------


class _Worker:
    def __init__(
        self, ctx: object, plugins: Sequence[str], quiet: bool, setup: str | None = None
    ) -> None:
        parent, child = ctx.Pipe()  # type: ignore[attr-defined]
        self.process = ctx.Process(  # type: ignore[attr-defined]
            target=_worker_main, args=(child, list(plugins), quiet, setup), daemon=True
        )
        self.process.start()
        child.close()
        self.conn = parent
        self.ready = False
        self.task: tuple[str, str] | None = None
        self.deadline = 0.0

    def stop(self) -> None:
        if self.process.is_alive():
            try:
                self.conn.send(None)
            except (OSError, BrokenPipeError):
                pass
            self.process.join(timeout=2)
        self.kill()

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(timeout=5)
        self.conn.close()


def _death_message(exitcode: int | None) -> str:
    if exitcode is None:
        return "the worker process died"
    if exitcode < 0:
        import signal

        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"the worker process was killed by {name}"
    return f"the worker process exited with code {exitcode}"


class WorkerPool:
    """`jobs` spawned worker processes, replaced when they die or overrun their time."""

    def __init__(
        self,
        jobs: int,
        plugins: Sequence[str] = (),
        quiet: bool = True,
        setup: str | None = None,
    ) -> None:
        import multiprocessing

        self.ctx = multiprocessing.get_context("spawn")
        self.plugins = list(plugins)
        self.quiet = quiet
        self.setup = setup
        self.workers = [self._spawn() for _ in range(max(1, jobs))]
        self.startup_failures = 0

    def _spawn(self) -> _Worker:
        return _Worker(self.ctx, self.plugins, self.quiet, self.setup)

    def _replace(self, worker: _Worker) -> None:
        worker.kill()
        self.workers[self.workers.index(worker)] = self._spawn()

    def close(self) -> None:
        for worker in self.workers:
            worker.stop()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(
        self,
        tasks: Sequence[tuple[Case, str]],
        *,
        timeout: float,
        progress: Callable[[int, int], None] | None = None,
    ) -> dict[tuple[str, str], dict[str, str]]:
        """Run (case, level) tasks; results by (case name, level)."""
        from multiprocessing.connection import wait

        pending = deque(tasks)
        results: dict[tuple[str, str], dict[str, str]] = {}
        total = len(tasks)
        # More workers than tasks would only cost start-up time.
        for worker in self.workers[total:]:
            worker.stop()
        self.workers = self.workers[: max(1, total)]

        def record(worker: _Worker, result: dict[str, str]) -> None:
            assert worker.task is not None
            results[worker.task] = result
            worker.task = None
            if progress is not None:
                progress(len(results), total)

        while len(results) < total:
            for worker in self.workers:
                if worker.ready and worker.task is None and pending:
                    case, level = pending.popleft()
                    worker.conn.send((case, level))
                    worker.task = (case.name, level)
                    worker.deadline = time.monotonic() + timeout
            now = time.monotonic()
            busy = [w.deadline - now for w in self.workers if w.task is not None]
            handles = [w.conn for w in self.workers] + [w.process.sentinel for w in self.workers]
            wait(handles, timeout=max(0.0, min([*busy, 5.0])))
            for worker in list(self.workers):
                dead = False
                try:
                    while worker.conn.poll():
                        kind, payload = worker.conn.recv()
                        if kind == "ready":
                            worker.ready = True
                        elif kind == "init-error":
                            raise RungError(f"a conformance worker could not start: {payload}")
                        else:
                            record(worker, payload)
                except (EOFError, OSError):
                    dead = True
                if not dead and not worker.process.is_alive():
                    dead = not worker.conn.poll()
                if dead:
                    worker.process.join(timeout=5)
                    if worker.task is not None:
                        record(worker, _fail("crash", _death_message(worker.process.exitcode)))
                    elif not worker.ready:
                        self.startup_failures += 1
                        if self.startup_failures > 3:
                            raise RungError(
                                "conformance workers keep dying at start-up "
                                f"({_death_message(worker.process.exitcode)})"
                            )
                    self._replace(worker)
                    continue
                if worker.task is not None and time.monotonic() > worker.deadline:
                    record(worker, _fail("timeout", f"no result within {timeout:g} s"))
                    self._replace(worker)
        return results


def run_tasks(
    tasks: Sequence[tuple[Case, str]],
    *,
    jobs: int,
    timeout: float,
    plugins: Sequence[str] = (),
    progress: Callable[[int, int], None] | None = None,
    quiet: bool = True,
) -> dict[tuple[str, str], dict[str, str]]:
    """Run (case, level) tasks in `jobs` worker processes; results by (case name, level)."""
    with WorkerPool(min(jobs, max(1, len(tasks))), plugins, quiet) as pool:
        return pool.run(tasks, timeout=timeout, progress=progress)


# ---- the report -----------------------------------------------------------------------


@dataclass
class Report:
    levels: list[str]
    cases: list[Case]
    results: dict[tuple[str, str], dict[str, str]]
    seconds: float = 0.0
    command: str = ""
    onnx_version: str = field(default="")
    shapes: str = "static"
    comparison: Comparison | None = None
    kind: str = "node"

    def passed(self, level: str) -> int:
        return sum(1 for c in self.cases if self.results[(c.name, level)]["status"] == "pass")

    def failures(self, level: str) -> Counter[str]:
        return Counter(
            r["category"]
            for c in self.cases
            if (r := self.results[(c.name, level)])["status"] != "pass"
        )


@dataclass
class Comparison:
    """How a run differs from an earlier scoreboard, per level both have.

    Run dynamic against the static scoreboard, `lost` is what the compiler
    still gets from static sizes.
    """

    source: str
    shapes: str
    cases: int  # the cases both ran
    passed: dict[str, int]  # level -> passes there, over those cases
    lost: dict[str, list[str]]  # level -> cases that pass there and fail here
    gained: dict[str, list[str]]  # level -> cases that fail there and pass here


def load_scoreboard(path: str) -> dict[str, object]:
    """A scoreboard written by `render_json`, to compare a run with."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as err:
        raise RungError(f"cannot read the scoreboard '{path}': {err}") from None
    if not isinstance(data, dict) or not isinstance(data.get("cases"), dict):
        raise RungError(f"'{path}' is not a conformance scoreboard (.json)")
    return data


def compare_reports(report: Report, baseline: dict[str, object], source: str) -> Comparison:
    """Compare `report` with a loaded scoreboard over the cases and levels both have."""
    cases: dict[str, dict[str, object]] = baseline["cases"]  # type: ignore[assignment]
    levels = [lv for lv in report.levels if lv in baseline.get("levels", [])]  # type: ignore[operator]
    if not levels:
        raise RungError(f"the scoreboard '{source}' has none of the levels run")
    shared = [c.name for c in report.cases if c.name in cases]
    passed: dict[str, int] = {}
    lost: dict[str, list[str]] = {}
    gained: dict[str, list[str]] = {}
    for level in levels:
        there = {
            name
            for name in shared
            if cases[name]["results"].get(level, {}).get("status") == "pass"  # type: ignore[attr-defined]
        }
        here = {name for name in shared if report.results[(name, level)]["status"] == "pass"}
        passed[level] = len(there)
        lost[level] = sorted(there - here)
        gained[level] = sorted(here - there)
    return Comparison(
        source, str(baseline.get("shapes", "static")), len(shared), passed, lost, gained
    )


def available_cpus() -> int:
    """The CPUs this process may run on (the default number of workers)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def run_conformance(
    levels: Sequence[str],
    *,
    jobs: int | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    pattern: str | None = None,
    plugins: Sequence[str] = (),
    progress: Callable[[int, int], None] | None = None,
    command: str = "",
    shapes: str = "static",
    kind: str = "node",
) -> Report:
    """Run the ONNX test cases of `kind` (matching `pattern`) at each level.

    `shapes="dynamic"` runs them with symbolic input dims (see DYNAMIC_RULE);
    `kind="models"` runs the model test cases instead of the node ones (see MODELS_RULE).
    """
    from .levels import get_level, load_level_plugin

    if not levels:
        raise RungError("give at least one --level")
    _check_shapes(shapes)
    _check_kind(kind)
    if timeout <= 0:
        raise RungError(f"--timeout must be positive, got {timeout:g}")
    if jobs is not None and jobs < 1:
        raise RungError(f"--jobs must be at least 1, got {jobs}")
    compile_filter(pattern)
    for plugin in plugins:
        load_level_plugin(plugin)
    for level in levels:
        get_level(level)
    levels = list(dict.fromkeys(levels))
    start = time.monotonic()
    # The workers start up while the cases are collected.
    with WorkerPool(jobs or available_cpus(), plugins) as pool:
        cases = collect_cases(pattern, shapes, kind)
        if not cases:
            what = "model" if kind == "models" else "node"
            raise RungError(f"no ONNX {what} test case matches --filter '{pattern}'")
        tasks = [(case, level) for case in cases for level in levels]
        results = pool.run(tasks, timeout=timeout, progress=progress)
    import onnx

    return Report(
        list(levels),
        cases,
        results,
        seconds=time.monotonic() - start,
        command=command,
        onnx_version=onnx.__version__,
        shapes=shapes,
        kind=kind,
    )


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("`", "'")


def render_markdown(report: Report) -> str:
    levels = report.levels
    total = len(report.cases)
    dynamic = report.shapes == "dynamic"
    models = report.kind == "models"
    title = "# ONNX conformance, model cases" if models else "# ONNX conformance"
    if models:
        what = (
            f"Every ONNX model test case of onnx {report.onnx_version} "
            f"(`onnx/backend/test/data/{{{','.join(MODEL_SUITES)}}}`, {total} cases)"
        )
    else:
        what = (
            f"Every ONNX node test case of onnx {report.onnx_version} "
            f"(`onnx.backend.test.case.node`, {total} cases)"
        )
    lines = [
        f"<!-- Generated by `{report.command}`; do not edit by hand. -->",
        "",
        title + (", dynamic shapes" if dynamic else ""),
        "",
        f"**Generated file.** Regenerate with `{report.command}`.",
        "",
        f"{what} run with "
        "`rung.runtime.InferenceSession` at each level and compared with the case's "
        "expected outputs, using the case's own rtol/atol (see `runtime/conformance.py`).",
        "",
    ]
    if models:
        lines += [MODELS_RULE, ""]
    if dynamic:
        lines += ["**Dynamic shapes.** " + DYNAMIC_RULE, ""]
    lines += [
        "| level | passed | total | % |",
        "| --- | ---: | ---: | ---: |",
    ]
    for level in levels:
        passed = report.passed(level)
        lines.append(f"| {level} | {passed} | {total} | {100.0 * passed / total:.1f}% |")
    if report.comparison is not None:
        lines += _comparison_markdown(report)
    lines += ["", "## Failures by reason", "", "| reason | " + " | ".join(levels) + " |"]
    lines.append("| --- | " + " | ".join("---:" for _ in levels) + " |")
    counts = {level: report.failures(level) for level in levels}
    for category in CATEGORIES:
        if any(counts[level][category] for level in levels):
            row = " | ".join(str(counts[level][category]) for level in levels)
            lines.append(f"| {category} | {row} |")
    group = "suite" if models else "op"
    lines += ["", f"## By {group}", ""]
    if not models:
        lines += [ATTRIBUTION_RULE, ""]
    lines += [
        f"| {group} | " + " | ".join(levels) + " | failing cases |",
        "| --- | " + " | ".join("---:" for _ in levels) + " | --- |",
    ]
    by_op: dict[str, list[Case]] = {}
    for case in report.cases:
        by_op.setdefault(case.op, []).append(case)
    for op in sorted(by_op, key=lambda o: (o.lower(), o)):
        cases = by_op[op]
        cells = []
        for level in levels:
            passed = sum(1 for c in cases if report.results[(c.name, level)]["status"] == "pass")
            cells.append(f"{passed}/{len(cases)}")
        failing = []
        for case in cases:
            reasons = []
            for level in levels:
                r = report.results[(case.name, level)]
                if r["status"] != "pass":
                    prefix = f"{level}: " if len(levels) > 1 else ""
                    message = r.get("message", "")
                    if len(message) > 200:
                        message = message[:197] + "..."
                    reasons.append(f"{prefix}{r['category']}: {message}")
            if reasons:
                failing.append(f"`{case.name}` ({_cell('; '.join(reasons))})")
        lines.append(f"| {op} | " + " | ".join(cells) + " | " + "<br>".join(failing) + " |")
    lines.append("")
    return "\n".join(lines)


def _comparison_markdown(report: Report) -> list[str]:
    comparison = report.comparison
    assert comparison is not None
    lines = [
        "",
        f"## Compared with {comparison.shapes} shapes",
        "",
        f"Against `{comparison.source}` ({comparison.shapes} shapes), over the "
        f"{comparison.cases} cases both ran. *Lost*: passes there, fails here; "
        "*gained*: the reverse.",
        "",
        "| level | passed there | passed here | lost | gained |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    names = {c.name for c in report.cases}
    for level, there in comparison.passed.items():
        here = sum(1 for n in names if report.results[(n, level)]["status"] == "pass")
        lines.append(
            f"| {level} | {there} | {here} | {len(comparison.lost[level])} "
            f"| {len(comparison.gained[level])} |"
        )
    for level, lost in comparison.lost.items():
        if lost:
            lines += [
                "",
                f"<details><summary>Lost at {level} ({len(lost)})</summary>",
                "",
                ", ".join(f"`{name}`" for name in lost),
                "",
                "</details>",
            ]
    return lines


def render_json(report: Report) -> str:
    total = len(report.cases)
    data = {
        "generated_by": report.command,
        "onnx_version": report.onnx_version,
        "shapes": report.shapes,
        "kind": report.kind,
        "levels": report.levels,
        "summary": {
            level: {
                "passed": report.passed(level),
                "total": total,
                "failures": dict(sorted(report.failures(level).items())),
            }
            for level in report.levels
        },
        "cases": {
            case.name: {
                "op": case.op,
                "results": {level: report.results[(case.name, level)] for level in report.levels},
            }
            for case in report.cases
        },
    }
    if report.comparison is not None:
        c = report.comparison
        data["comparison"] = {
            "source": c.source,
            "shapes": c.shapes,
            "cases": c.cases,
            "levels": {
                level: {"passed": c.passed[level], "lost": c.lost[level], "gained": c.gained[level]}
                for level in c.passed
            },
        }
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def summary_lines(report: Report) -> list[str]:
    total = len(report.cases)
    variant = ", dynamic shapes" if report.shapes == "dynamic" else ""
    lines = []
    for level in report.levels:
        passed = report.passed(level)
        lines.append(
            f"level {level}{variant}: {passed}/{total} passed ({100.0 * passed / total:.1f}%)"
        )
        failures = report.failures(level)
        if failures:
            parts = ", ".join(f"{cat} {failures[cat]}" for cat in CATEGORIES if failures[cat])
            lines.append(f"  failures: {parts}")
        comparison = report.comparison
        if comparison is not None and level in comparison.passed:
            lines.append(
                f"  against {comparison.source} ({comparison.shapes} shapes): "
                f"{comparison.passed[level]} passed there; {len(comparison.lost[level])} lost, "
                f"{len(comparison.gained[level])} gained"
            )
    lines.append(f"{total} cases x {len(report.levels)} level(s) in {report.seconds:.1f} s")
    return lines


__all__ = [
    "ATTRIBUTION_RULE",
    "CATEGORIES",
    "DYNAMIC_RULE",
    "KINDS",
    "MODEL_SUITES",
    "MODELS_RULE",
    "SHAPES",
    "Case",
    "Comparison",
    "Report",
    "collect_cases",
    "collect_model_cases",
    "compare",
    "compare_reports",
    "load_scoreboard",
    "main_op",
    "model_data_dir",
    "render_json",
    "render_markdown",
    "run_case",
    "run_conformance",
    "run_tasks",
    "with_symbolic_dims",
    "WorkerPool",
]
