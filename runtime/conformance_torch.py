"""The torch conformance scoreboard: torch's own operator tests (OpInfos), at core or kernel.

`run_torch_conformance` takes the OpInfos of `op_db`
(`torch.testing._internal.common_methods_invocations`) that support float32
on the CPU and test a Core ATen op (see ATTRIBUTION_RULE), runs up to
SAMPLES_PER_OPINFO of each one's float32 samples at each level through
`torch.export.export`, `rung.importers.torch.import_program` and
`InferenceSession`, and compares every output with torch eager (see
COMPARISON_RULE).

It runs on `rung.runtime.conformance`'s machinery: the same pool of spawned
worker processes with a time limit per task, the same comparison of arrays
and the same failure categories; a task is a `TorchCase`, which runs itself.

Exporting, decomposing and compiling have a fixed cost of their own per
program (torch's decomposition alone about half a second, gcc about as much),
so a task is a batch: the samples of several OpInfos become one module, one
export, one decomposition, one import and one compile. The outputs of each
sample are known by position, so one run still gives one verdict per sample.
When the batch does not get through, the samples are isolated again: those
torch cannot export are exported alone and skipped, an import failure is
traced to the samples whose part of the graph holds the node it names, a
lowering failure is found by lowering each sample's part of the module alone
(cheap: nothing is compiled), and a run that fails is bisected. A batch that
crashes its worker or overruns its time is run again one OpInfo, then one
sample, per task.
"""

from __future__ import annotations

import itertools
import json
import re
import time
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from rung.errors import RungError, UnsupportedOpError

from .conformance import (
    DEFAULT_TIMEOUT,
    WorkerPool,
    _cell,
    _crash,
    _first_line,
    available_cpus,
    compare,
    compile_filter,
)

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

SAMPLES_PER_OPINFO = 8
"""The first this many float32 samples of each OpInfo are run."""

RTOL = 1e-3
ATOL = 1e-4

BATCH_OPINFOS = 6
"""OpInfos per task: about 40 samples, one compile."""

PROBE_OPINFOS = 40
"""OpInfos per attribution task (one sample each, exported and decomposed, never run)."""

PROBE = "probe"
"""The level name attribution tasks are sent with (they run at no level)."""

SETUP = "rung.runtime.conformance_torch:prepare_worker"
"""What every worker does before its first task: import torch's OpInfo database."""

ATTRIBUTION_RULE = """\
An OpInfo is kept when it tests an op of the Core ATen opset, i.e. an aten op of
the torch dialect (`rung.dialects.torch.OPS_BY_NAME`): either its `aten_name`
is the name of such an op (`add` for `aten::add.Tensor`; *by name*), or its first
sample that runs eagerly with outputs of more than one element (else its first
sample that runs), exported with
`torch.export.export` and decomposed to the Core ATen opset, holds exactly one
aten op and that op is such an op (`nn.functional.conv2d` → `aten::convolution`;
*by export*). The other OpInfos test composite ops, which reach rung as the core
ops they decompose into; they are listed at the end."""

COMPARISON_RULE = f"""\
Each of the first {SAMPLES_PER_OPINFO} float32 samples of an OpInfo (`sample_inputs("cpu",
torch.float32)`, seeded) becomes a module calling `opinfo.op(input, *args, **kwargs)`
with the sample's tensors as inputs and its other arguments as constants. It is
exported with `torch.export.export`, imported with `rung.importers.torch.import_program`,
run with `InferenceSession` at the level, and compared with torch eager, output by
output: same shape and dtype, floats within rtol {RTOL:g} and atol {ATOL:g} times the
largest magnitude of the expected output (at least 1), NaN equal to NaN; integers
and booleans exactly. A sample is *skipped*, and not counted, when torch cannot
run it eagerly, when its result is not made of tensors, when two eager runs
differ (random ops), when its program only makes uninitialized memory
(`empty_like`), or when torch cannot export or decompose it."""

_GROUP_CATEGORIES = ("numeric mismatch", "shape mismatch", "dtype mismatch")
"""Failures grouped into families by the aten op of the OpInfo, not by their message."""


# ---- the cases (the parent's side) ------------------------------------------------------


@dataclass
class TorchCase:
    """One task: some OpInfos, all their samples or one of them, at the level it is sent with.

    `probe`: only export and decompose one sample of each OpInfo, to see which aten ops
    it holds (see ATTRIBUTION_RULE).
    """

    name: str
    opinfos: list[str]
    sample: int | None = None
    probe: bool = False

    def run(self, level: str) -> dict[str, str]:
        """Run in a worker; the records of every sample, as JSON under `samples`."""
        records = run_batch(self.opinfos, level, self.sample, self.probe)
        return {"status": "done", "samples": json.dumps(records)}


def opinfo_key(info: Any) -> str:
    """`max.reduction_with_dim`: the OpInfo's name and, when it has one, its variant."""
    variant = info.variant_test_name
    return f"{info.name}.{variant}" if variant else info.name


def core_op_names() -> dict[str, list[str]]:
    """The aten ops of the torch dialect: overload names by op name (`add` → [aten::add.Tensor,
    ...])."""
    from rung.dialects.torch import OPS_BY_NAME

    names: dict[str, list[str]] = {}
    for qualified in sorted(OPS_BY_NAME):
        namespace, _, rest = qualified.partition("::")
        if namespace == "aten":
            names.setdefault(rest.split(".")[0], []).append(qualified)
    return names


def float32_opinfos(pattern: str | None = None) -> list[Any]:
    """The OpInfos of op_db that run float32 on the CPU (whose key matches `pattern`)."""
    import torch

    regex = compile_filter(pattern)
    found = []
    for info in _op_db():
        if torch.float32 not in info.supported_dtypes("cpu"):
            continue
        if regex is not None and not regex.search(opinfo_key(info)):
            continue
        found.append(info)
    return found


def _op_db() -> list[Any]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from torch.testing._internal.common_methods_invocations import op_db
    except ImportError as err:
        raise RungError(
            f"torch's OpInfo database cannot be imported ({err}); install rung[torch] "
            "(torch and expecttest)"
        ) from None
    return list(op_db)


def _batches(keys: Sequence[str], size: int, prefix: str, probe: bool = False) -> list[TorchCase]:
    return [
        TorchCase(f"{prefix}{i // size}:{keys[i]}", list(keys[i : i + size]), probe=probe)
        for i in range(0, len(keys), size)
    ]


def _split(case: TorchCase) -> list[TorchCase]:
    """A batch that crashed or overran, as smaller tasks: one per OpInfo, then one per sample."""
    if len(case.opinfos) > 1:
        return [TorchCase(f"{case.name}/{key}", [key], probe=case.probe) for key in case.opinfos]
    if case.sample is None and not case.probe:
        return [
            TorchCase(f"{case.name}#{i}", list(case.opinfos), sample=i)
            for i in range(SAMPLES_PER_OPINFO)
        ]
    return []


def run_tasks_isolating(
    pool: WorkerPool,
    tasks: Sequence[tuple[TorchCase, str]],
    timeout: float,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, list[dict[str, object]]]:
    """Run (case, level) tasks in `pool`; the sample records by level.

    A task that crashes its worker or overruns is split (`_split`) and run again; a
    single sample that still does is recorded as that failure.
    """
    records: dict[str, list[dict[str, object]]] = {level: [] for _, level in tasks}
    todo = list(tasks)
    while todo:
        by_name = {(case.name, level): case for case, level in todo}
        results = pool.run(todo, timeout=timeout, progress=progress)
        todo = []
        for (name, level), result in results.items():
            case = by_name[(name, level)]
            if result.get("status") == "done":
                records[level].extend(json.loads(result["samples"]))
                continue
            smaller = _split(case)
            if smaller:
                todo.extend((c, level) for c in smaller)
                continue
            records[level].append(
                {
                    "opinfo": case.opinfos[0],
                    "index": case.sample if case.sample is not None else 0,
                    "status": "probe-failed" if case.probe else "fail",
                    "category": result.get("category", "crash"),
                    "reason": short_reason(result.get("message", "")),
                }
            )
    return records


# ---- the report ---------------------------------------------------------------------------


@dataclass
class OpInfoResult:
    """One kept OpInfo: the aten op it tests, and its samples' records at each level."""

    key: str
    aten_op: str
    matched_by: str  # "name" or "export"
    samples: dict[str, list[dict[str, object]]] = field(default_factory=dict)

    def counted(self, level: str) -> list[dict[str, object]]:
        return [r for r in self.samples.get(level, []) if r["status"] in ("pass", "fail")]

    def passed(self, level: str) -> int:
        return sum(1 for r in self.samples.get(level, []) if r["status"] == "pass")

    def skipped(self, level: str) -> list[dict[str, object]]:
        return [r for r in self.samples.get(level, []) if r["status"] == "skip"]

    def shown_op(self) -> str:
        """The aten op, with the overloads of it the samples' programs hold when matched by
        name (`aten::max.dim`)."""
        if self.matched_by != "name":
            return self.aten_op
        packet = self.aten_op.removeprefix("aten::")
        seen = [op for op in self.ops() if op.removeprefix("aten::").split(".")[0] == packet]
        return ", ".join(seen) if seen else self.aten_op

    def ops(self) -> list[str]:
        """The aten ops the samples' decomposed programs hold."""
        seen: dict[str, None] = {}
        for records in self.samples.values():
            for r in records:
                for op in r.get("ops", []):  # type: ignore[union-attr]
                    seen.setdefault(str(op), None)
        return sorted(seen)


@dataclass
class TorchReport:
    levels: list[str]
    opinfos: list[OpInfoResult]
    dropped: dict[str, str]  # OpInfo key -> why it is not a Core ATen op test
    seconds: float = 0.0
    command: str = ""
    torch_version: str = ""
    considered: int = 0  # float32 OpInfos looked at

    def total(self, level: str) -> int:
        return sum(len(o.counted(level)) for o in self.opinfos)

    def passed(self, level: str) -> int:
        return sum(o.passed(level) for o in self.opinfos)

    def skipped(self, level: str) -> int:
        return sum(len(o.skipped(level)) for o in self.opinfos)

    def families(self, level: str) -> Counter[str]:
        """Failing samples by family (see `family`)."""
        return Counter(
            family(r, o.aten_op)
            for o in self.opinfos
            for r in o.samples.get(level, [])
            if r["status"] == "fail"
        )

    def family_opinfos(self, level: str, name: str) -> list[str]:
        return sorted(
            {
                o.key
                for o in self.opinfos
                for r in o.samples.get(level, [])
                if r["status"] == "fail" and family(r, o.aten_op) == name
            }
        )

    def failures(self, level: str) -> Counter[str]:
        return Counter(
            str(r["category"])
            for o in self.opinfos
            for r in o.samples.get(level, [])
            if r["status"] == "fail"
        )


_LOCATION = re.compile(r" at node '[^']*'(?: \([^)]*\))?| at <[^>]*>:node '[^']*'")
_LEVEL_PREFIX = re.compile(r"^cannot lower the model to level '[^']*': ")
_NODE = re.compile(r"node '[^']*'(?: \([^)]*\))?")
_NODE_PREFIX = re.compile(r"^(?:<program>: )?node '[^']*'(?: \([^)]*\))?: ")


def short_reason(message: str) -> str:
    """The first line of rung's message without where in the batch it happened (the FX node
    and the line of this file that called the op say nothing about the op)."""
    line = message.strip().splitlines()[0] if message.strip() else ""
    line = _LEVEL_PREFIX.sub("", line)
    line = _LOCATION.sub("", _NODE_PREFIX.sub("", line))
    return _NODE.sub("node", line).replace("<program>: ", "")


def family(record: dict[str, object], aten_op: str) -> str:
    """What a failure is grouped under: its category and the aten op for mismatches; its
    message with numbers and tensor types elided otherwise."""
    category = str(record.get("category", ""))
    if category in _GROUP_CATEGORIES:
        return f"{category} ({aten_op})"
    reason = re.sub(r"tensor<[^>]*>", "tensor<...>", str(record.get("reason", "")))
    reason = re.sub(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])", "N", reason)
    return f"{category}: {reason}" if reason else category


# ---- running (the parent) -----------------------------------------------------------------


def run_torch_conformance(
    levels: Sequence[str],
    *,
    jobs: int | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    pattern: str | None = None,
    plugins: Sequence[str] = (),
    progress: Callable[[int, int], None] | None = None,
    command: str = "",
) -> TorchReport:
    """Run the float32 samples of the Core ATen OpInfos (matching `pattern`) at each level."""
    from .levels import get_level, load_level_plugin

    if not levels:
        raise RungError("give at least one --level")
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
    # The workers import torch's OpInfo database while this process does too.
    with WorkerPool(jobs or available_cpus(), plugins, setup=SETUP) as pool:
        import torch

        infos = float32_opinfos(pattern)
        if not infos:
            raise RungError(f"no float32 OpInfo matches --filter '{pattern}'")
        names = core_op_names()
        by_name = [opinfo_key(i) for i in infos if i.aten_name in names]
        others = [opinfo_key(i) for i in infos if i.aten_name not in names]
        aten_of = {opinfo_key(i): f"aten::{i.aten_name}" for i in infos if i.aten_name in names}
        tasks = [(case, PROBE) for case in _batches(others, PROBE_OPINFOS, "probe", probe=True)]
        tasks += [(c, lv) for c in _batches(by_name, BATCH_OPINFOS, "batch") for lv in levels]
        done = run_tasks_isolating(pool, tasks, timeout, progress)
        dropped: dict[str, str] = {}
        by_export: list[str] = []
        probed = {str(r["opinfo"]): r for r in done.pop(PROBE, [])}
        for key in others:
            verdict = attribute(probed.get(key))
            if verdict.startswith("aten::"):
                by_export.append(key)
                aten_of[key] = verdict
            else:
                dropped[key] = verdict
        tasks = [
            (c, lv) for c in _batches(by_export, BATCH_OPINFOS, "export-batch") for lv in levels
        ]
        more = run_tasks_isolating(pool, tasks, timeout, progress)
    named = set(by_name)
    results = {
        key: OpInfoResult(key, aten_of[key], "name" if key in named else "export")
        for key in [*by_name, *by_export]
    }
    for records in (done, more):
        for level, items in records.items():
            for r in items:
                result = results.get(str(r["opinfo"]))
                if result is not None:
                    result.samples.setdefault(level, []).append(r)
    for result in results.values():
        for items in result.samples.values():
            items.sort(key=lambda r: int(r["index"]))  # type: ignore[call-overload]
    ordered = sorted(results.values(), key=lambda o: o.key)
    return TorchReport(
        levels,
        ordered,
        dict(sorted(dropped.items())),
        seconds=time.monotonic() - start,
        command=command,
        torch_version=torch.__version__,
        considered=len(infos),
    )


def attribute(probe: dict[str, object] | None) -> str:
    """The Core ATen op an OpInfo's probe shows it tests, or why it is not kept."""
    from rung.dialects.torch import OPS_BY_NAME

    if probe is None:
        return "no sample"
    if probe.get("status") != "probe":
        return f"no sample runs and exports: {probe.get('reason', '')}"
    ops = [str(op) for op in probe.get("ops", [])]  # type: ignore[union-attr]
    if len(ops) == 1 and ops[0] in OPS_BY_NAME:
        return ops[0]
    if not ops:
        return "decomposes to no aten op"
    return "decomposes to " + ", ".join(ops)


# ---- running one batch (in a worker) ------------------------------------------------------

_OPINFOS: dict[str, Any] = {}


def load_opinfos() -> None:
    """Import torch's OpInfo database, indexed by `opinfo_key`, once per process."""
    if not _OPINFOS:
        for info in _op_db():
            _OPINFOS[opinfo_key(info)] = info


def prepare_worker() -> None:
    """Set up a worker: the OpInfo database and the importer loaded before the first task,
    torch on one thread, as the workers share the CPUs."""
    import torch

    torch.set_num_threads(1)
    load_opinfos()
    import rung.importers.torch  # noqa: F401


@dataclass
class _Sample:
    """One sample of an OpInfo, ready to call: its tensors are the module's inputs."""

    key: str
    index: int
    op: Callable[..., Any]
    spec: Any
    leaves: list[Any]
    tensors: list[Any]
    record: dict[str, object]
    expected: list[np.ndarray] = field(default_factory=list)
    nodes: set[Any] = field(default_factory=set)

    def call(self, tensors: Sequence[Any]) -> Any:
        import torch
        from torch.utils import _pytree as pytree

        it = iter(tensors)
        leaves = [next(it) if isinstance(v, torch.Tensor) else v for v in self.leaves]
        value, args, kwargs = pytree.tree_unflatten(leaves, self.spec)
        return self.op(value, *args, **kwargs)


def _samples_of(key: str, only: int | None) -> list[_Sample]:
    """The OpInfo's first SAMPLES_PER_OPINFO float32 samples (or the one at `only`), seeded so
    that every task and worker makes the same ones."""
    import random

    import torch
    from torch.utils import _pytree as pytree

    load_opinfos()
    info = _OPINFOS[key]
    torch.manual_seed(0)
    random.seed(0)
    np.random.seed(0)
    made = itertools.islice(info.sample_inputs("cpu", torch.float32), SAMPLES_PER_OPINFO)
    samples = []
    # A tensor given twice (in one sample, or to two) is two inputs: aliased inputs that an
    # op writes to (batch norm's running statistics) do not export together.
    seen: dict[int, torch.Tensor] = {}
    for index, sample in enumerate(made):
        if only is not None and index != only:
            continue
        leaves, spec = pytree.tree_flatten((sample.input, sample.args, sample.kwargs))
        tensors = []
        for i, leaf in enumerate(leaves):
            if isinstance(leaf, torch.Tensor):
                if id(leaf) in seen:
                    leaf = leaves[i] = leaf.clone()
                seen[id(leaf)] = leaf
                tensors.append(leaf)
        record: dict[str, object] = {
            "opinfo": key,
            "index": index,
            "sample": describe_sample(sample),
        }
        samples.append(_Sample(key, index, info.op, spec, leaves, tensors, record))
    return samples


def describe_sample(sample: Any) -> str:
    """`f32[2, 3], 1, keepdim=True`: the sample's arguments, tensors by dtype and shape."""
    import torch
    from torch.utils import _pytree as pytree

    class _Shown:
        def __init__(self, t: torch.Tensor) -> None:
            dtype = str(t.dtype).removeprefix("torch.")
            short = {"float32": "f32", "float64": "f64", "int64": "i64", "bool": "i1"}
            self.text = f"{short.get(dtype, dtype)}{list(t.shape)}"

        def __repr__(self) -> str:
            return self.text

    def show(v: object) -> object:
        return _Shown(v) if isinstance(v, torch.Tensor) else v

    value, args, kwargs = pytree.tree_map(show, (sample.input, sample.args, sample.kwargs))
    parts = [repr(value), *(repr(a) for a in args), *(f"{k}={v!r}" for k, v in kwargs.items())]
    text = ", ".join(parts)
    return text if len(text) <= 160 else text[:157] + "..."


def _skip(sample: _Sample, reason: str) -> None:
    sample.record.update(status="skip", reason=reason)


def _fail_sample(sample: _Sample, category: str, message: str) -> None:
    sample.record.update(status="fail", category=category, reason=short_reason(message))


def _open(samples: Sequence[_Sample]) -> list[_Sample]:
    return [s for s in samples if "status" not in s.record]


def _eager(sample: _Sample) -> None:
    """The expected outputs: two eager runs, which must agree (else the op is random)."""
    import torch
    from torch.utils import _pytree as pytree

    try:
        with torch.no_grad():
            first = pytree.tree_leaves(sample.call([t.clone() for t in sample.tensors]))
            second = pytree.tree_leaves(sample.call([t.clone() for t in sample.tensors]))
    except Exception as err:  # noqa: BLE001 - torch's own failure: the sample is skipped
        _skip(sample, f"eager run failed: {_first_line(err)}")
        return
    if not first:
        _skip(sample, "no output")
        return
    for value in first:
        if not isinstance(value, torch.Tensor):
            _skip(sample, f"an output is not a tensor ({type(value).__name__})")
            return
        if value.layout != torch.strided:
            _skip(sample, f"an output is not a dense tensor ({value.layout})")
            return
    try:
        expected = [t.detach().resolve_conj().resolve_neg().numpy() for t in first]
        again = [t.detach().resolve_conj().resolve_neg().numpy() for t in second]
    except Exception as err:  # noqa: BLE001
        _skip(sample, f"an output is not readable as numpy: {_first_line(err)}")
        return
    for a, b in zip(expected, again, strict=True):
        if a.shape != b.shape or not np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"):
            _skip(sample, "random: two eager runs differ")
            return
    sample.expected = expected


class _Batch:
    """Samples as one module: its inputs the samples' tensors in turn, its outputs theirs."""

    def __init__(self, samples: Sequence[_Sample]) -> None:
        self.samples = list(samples)
        self.outputs: list[tuple[int, int]] = []
        start = 0
        for s in self.samples:
            count = len(s.expected) if s.expected else 0
            self.outputs.append((start, start + count))
            start += count

    def module(self) -> Any:
        import torch
        from torch.utils import _pytree as pytree

        samples = self.samples

        class Samples(torch.nn.Module):
            def forward(self, *tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
                outputs: list[torch.Tensor] = []
                at = 0
                for s in samples:
                    n = len(s.tensors)
                    outputs.extend(pytree.tree_leaves(s.call(tensors[at : at + n])))
                    at += n
                return tuple(outputs)

        return Samples()

    def inputs(self) -> tuple[Any, ...]:
        return tuple(t for s in self.samples for t in s.tensors)

    def export(self) -> Any:
        import torch

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return torch.export.export(self.module(), self.inputs())


def _export_each(samples: Sequence[_Sample]) -> list[tuple[Any, list[_Sample]]]:
    """Exported and decomposed programs of the samples, as few as can be: all together; when
    that fails, the samples torch cannot export alone are skipped and the others tried together
    again, and when only their decomposition fails, the samples are bisected."""
    samples = _open(samples)
    if not samples:
        return []
    try:
        program = _Batch(samples).export()
    except Exception as err:  # noqa: BLE001 - torch's failure: find the samples it is about
        if len(samples) == 1:
            _skip(samples[0], f"torch.export failed: {_first_line(err)}")
            return []
        for s in samples:
            try:
                _Batch([s]).export()
            except Exception as alone:  # noqa: BLE001
                _skip(s, f"torch.export failed: {_first_line(alone)}")
        rest = _open(samples)
        if len(rest) == len(samples):  # each exports alone, not together
            return [p for s in samples for p in _export_each([s])]
        return _export_each(rest)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            program = program.run_decompositions()
    except Exception as err:  # noqa: BLE001
        if len(samples) == 1:
            _skip(samples[0], f"torch could not decompose it: {_first_line(err)}")
            return []
        half = len(samples) // 2
        return [*_export_each(samples[:half]), *_export_each(samples[half:])]
    return [(program, samples)]


def _slice_nodes(program: Any, batch: _Batch) -> bool:
    """Each sample's nodes: those its outputs depend on and those its inputs flow into (checks
    that return nothing), and the aten ops of the former. False when the program's outputs are
    not the samples' (then they cannot be told apart)."""
    from torch.export.graph_signature import InputKind, OutputKind

    graph = program.graph_module.graph
    placeholders = {n.name: n for n in graph.nodes if n.op == "placeholder"}
    user_inputs = [
        placeholders.get(spec.arg.name)
        for spec in program.graph_signature.input_specs
        if spec.kind == InputKind.USER_INPUT
    ]
    owners: dict[Any, set[int]] = {}
    at = 0
    for k, sample in enumerate(batch.samples):
        for node in user_inputs[at : at + len(sample.tensors)]:
            owners[node] = {k}
        at += len(sample.tensors)
    for node in graph.nodes:
        if node.op not in ("placeholder", "output"):
            owners[node] = set().union(*(owners.get(n, set()) for n in node.all_input_nodes))
    output = next(n for n in graph.nodes if n.op == "output")
    flat = output.args[0] if isinstance(output.args[0], list | tuple) else [output.args[0]]
    specs = program.graph_signature.output_specs
    # Inputs an op writes to come first, as outputs of their own; rung returns the user's.
    users = [n for n, spec in zip(flat, specs, strict=True) if spec.kind == OutputKind.USER_OUTPUT]
    if len(users) != (batch.outputs[-1][1] if batch.outputs else 0):
        return False
    for sample, (start, end) in zip(batch.samples, batch.outputs, strict=True):
        seen: set[Any] = set()
        stack = [n for n in users[start:end] if hasattr(n, "op")]
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            stack.extend(node.all_input_nodes)
        sample.record["ops"] = sorted(
            {name for n in seen if n.op == "call_function" and (name := _aten_name(n.target))}
        )
        k = batch.samples.index(sample)
        sample.nodes = seen | {n for n, who in owners.items() if k in who}
    return True


def _aten_name(target: object) -> str | None:
    """`aten::add.Tensor` for an ATen overload; None for getitem and size arithmetic."""
    schema = getattr(target, "_schema", None)
    if schema is None:
        return None
    return schema.name + (f".{schema.overload_name}" if schema.overload_name else "")


def _unimportable(sample: _Sample) -> str | None:
    """The first op of the sample's graph that the torch dialect does not hold."""
    from rung.dialects.torch import OPS_BY_NAME

    for op in sample.record.get("ops", []):  # type: ignore[union-attr]
        if op not in OPS_BY_NAME:
            return f"unsupported op '{op}'"
    return None


def _import(samples: Sequence[_Sample]) -> list[tuple[Any, _Batch]]:
    """Torch-dialect modules of the samples, with each sample's outputs by position.

    An import failure that names a node fails the samples whose graph holds it; the others
    are exported again without them. One that does not is bisected."""
    from rung.importers.torch import import_program

    modules: list[tuple[Any, _Batch]] = []
    pending = _open(samples)
    for _ in range(len(pending) + 1):
        if not pending:
            break
        again: list[_Sample] = []
        for program, group in _export_each(pending):
            batch = _Batch(group)
            if not _slice_nodes(program, batch):
                if len(group) > 1:
                    half = len(group) // 2
                    modules.extend([*_import(group[:half]), *_import(group[half:])])
                else:
                    _fail_sample(group[0], "import error", "the program's outputs are not eager's")
                continue
            for s in group:
                if _uninitialized(s):
                    _skip(s, "uninitialized memory")
            bad = [s for s in group if "status" not in s.record and _unimportable(s)]
            for s in bad:
                _fail_sample(s, "import error", _unimportable(s) or "")
            if len(_open(group)) < len(group):
                again.extend(_open(group))
                continue
            try:
                modules.append((import_program(program, decompose=False), batch))
            except Exception as err:  # noqa: BLE001 - rung's failure: find its samples
                message = err.message if isinstance(err, RungError) else _first_line(err)
                node = re.search(r"node '([^']+)'", message)
                named = [
                    s
                    for s in group
                    if node is not None and any(n.name == node.group(1) for n in s.nodes)
                ]
                culprits = named or (group if len(group) == 1 else [])
                for s in culprits:
                    _fail_sample(s, "import error", message)
                if culprits:
                    again.extend(s for s in group if s not in culprits)
                else:
                    half = len(group) // 2
                    modules.extend([*_import(group[:half]), *_import(group[half:])])
        pending = again
    for s in pending:
        _fail_sample(s, "import error", "the batch kept failing to import")
    return modules


def select_outputs(module: ModuleOp, keep: Sequence[int]) -> ModuleOp:
    """A copy of `module` that returns only the outputs at `keep`, without the ops they do not
    need (the inputs stay, so every part of a batch is fed the same)."""
    from xdsl.dialects.builtin import ArrayAttr, FunctionType
    from xdsl.dialects.func import ReturnOp

    from rung.dialects.signature import main_function

    from .levels import owned_copy

    copy = owned_copy(module)
    func = main_function(copy)
    block = func.body.block
    ret = block.last_op
    assert isinstance(ret, ReturnOp)
    values = [ret.operands[i] for i in keep]
    block.insert_op_before(ReturnOp(*values), ret)
    block.erase_op(ret)
    func.function_type = FunctionType.from_lists(
        list(func.function_type.inputs.data), [v.type for v in values]
    )
    if func.res_attrs is not None:
        func.res_attrs = ArrayAttr([func.res_attrs.data[i] for i in keep])
    for op in reversed(list(block.ops)):
        if op.results and all(not r.uses for r in op.results):
            block.erase_op(op)
    return copy


def _session(module: ModuleOp, level: str) -> tuple[Any, tuple[str, str] | None]:
    from .session import InferenceSession

    try:
        return InferenceSession(module, level=level), None
    except UnsupportedOpError as err:
        return None, ("unsupported op", str(err))
    except RungError as err:
        return None, ("crash", err.message if err.message else str(err))
    except Exception as err:  # noqa: BLE001
        crash = _crash(err)
        return None, (crash["category"], crash["message"])


def _run_level(module: ModuleOp, batch: _Batch, level: str) -> None:
    """Lower the batch's module at `level` and run it; on failure, find the samples at fault.

    Most lowerings that fail do so on the way to core, the cheap part: each sample is lowered
    to core alone, and those that get there are lowered to `level` together again (bisected if
    that still fails)."""
    wanted = [batch.samples.index(s) for s in _open(batch.samples)]
    session, failure = _session(_part(module, batch, wanted), level)
    if failure is None:
        _run_bisecting(module, batch, wanted, level, session)
        return
    if len(wanted) == 1:
        _fail_sample(batch.samples[wanted[0]], *failure)
        return
    reached = []
    for i in wanted:
        _, alone = _session(_part(module, batch, [i]), "core")
        if alone is None:
            reached.append(i)
        else:
            _fail_sample(batch.samples[i], *alone)
    _lower_bisecting(module, batch, reached, level)


def _lower_bisecting(module: ModuleOp, batch: _Batch, indices: list[int], level: str) -> None:
    if not indices:
        return
    session, failure = _session(_part(module, batch, indices), level)
    if failure is None:
        _run_bisecting(module, batch, indices, level, session)
    elif len(indices) == 1:
        _fail_sample(batch.samples[indices[0]], *failure)
    else:
        half = len(indices) // 2
        _lower_bisecting(module, batch, indices[:half], level)
        _lower_bisecting(module, batch, indices[half:], level)


def _part(module: ModuleOp, batch: _Batch, indices: Sequence[int]) -> ModuleOp:
    keep = [k for i in indices for k in range(*batch.outputs[i])]
    return select_outputs(module, keep)


def _run_bisecting(
    module: ModuleOp, batch: _Batch, indices: list[int], level: str, session: Any = None
) -> None:
    if session is None:
        session, failure = _session(_part(module, batch, indices), level)
        if failure is not None:
            for i in indices:
                _fail_sample(batch.samples[i], *failure)
            return
    names = [arg.name for arg in session.get_inputs()]
    tensors = batch.inputs()
    feed = {n: np.array(t.detach().numpy(), order="C") for n, t in zip(names, tensors, strict=True)}
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            got = session.run(None, feed)
    except Exception as err:  # noqa: BLE001 - bisect to the samples that fail
        if len(indices) > 1:
            half = len(indices) // 2
            _run_bisecting(module, batch, indices[:half], level)
            _run_bisecting(module, batch, indices[half:], level)
            return
        if isinstance(err, UnsupportedOpError):
            _fail_sample(batch.samples[indices[0]], "unsupported op", str(err))
        else:
            crash = _crash(err)
            _fail_sample(batch.samples[indices[0]], crash["category"], crash["message"])
        return
    at = 0
    for i in indices:
        sample = batch.samples[i]
        count = len(sample.expected)
        verdict = compare_outputs(sample.expected, got[at : at + count])
        at += count
        if verdict is None:
            sample.record["status"] = "pass"
        else:
            sample.record.update(status="fail", category=verdict[0], reason=verdict[1])


def compare_outputs(
    expected: Sequence[np.ndarray], got: Sequence[object]
) -> tuple[str, str] | None:
    """None when every output matches (see COMPARISON_RULE); else (category, message)."""
    if len(got) != len(expected):
        return "shape mismatch", f"expected {len(expected)} outputs, got {len(got)}"
    for i, (want, value) in enumerate(zip(expected, got, strict=True)):
        if want.dtype.kind in "fc":
            finite = np.abs(want[np.isfinite(want)]) if want.size else np.zeros(0)
            scale = max(float(finite.max()) if finite.size else 1.0, 1.0)
            rtol, atol = RTOL, ATOL * scale
        else:
            rtol, atol = 0.0, 0.0
        verdict = compare(want, value, rtol, atol, f"output {i}")
        if verdict is not None:
            return verdict
    return None


def _probe_sample(samples: Sequence[_Sample]) -> _Sample | None:
    """The sample an OpInfo is attributed by: the first that runs whose outputs have more than
    one element, else the first that runs. Degenerate samples come first and decompose to
    little: an empty window to `aten::empty`, a window of one to `aten::full`."""
    runs = _open(samples)
    full = [s for s in runs if all(a.size > 1 for a in s.expected)]
    return (full or runs or list(samples) or [None])[0]


def _uninitialized(sample: _Sample) -> bool:
    """Whether the sample's program only makes uninitialized memory (`empty_like`): its
    values are whatever the memory held."""
    ops = sample.record.get("ops", [])
    return bool(ops) and all(str(op).startswith("aten::empty") for op in ops)  # type: ignore[union-attr]


def _probe(samples: Sequence[_Sample]) -> None:
    """Record the aten ops of each sample's decomposed program."""
    for program, group in _export_each(samples):
        if _slice_nodes(program, _Batch(group)):
            for s in group:
                if _uninitialized(s):
                    _skip(s, "uninitialized memory")
                else:
                    s.record["status"] = "probe"
        elif len(group) > 1:
            for s in group:
                _probe([s])
        else:
            _skip(group[0], "the program's outputs are not eager's")


def run_batch(
    keys: Sequence[str], level: str, only: int | None = None, probe: bool = False
) -> list[dict[str, object]]:
    """Every sample's record: pass, fail or skip with its reason (see COMPARISON_RULE); with
    `probe`, one record per OpInfo: its probe sample (see ATTRIBUTION_RULE) exported and
    decomposed, its aten ops recorded."""
    samples: list[_Sample] = []
    unmade: list[dict[str, object]] = []
    for key in keys:
        try:
            samples.extend(_samples_of(key, only))
        except Exception as err:  # noqa: BLE001 - the OpInfo's own sample generator failed
            reason = f"sample_inputs failed: {_first_line(err)}"
            unmade.append({"opinfo": key, "index": 0, "status": "skip", "reason": reason})
    for s in samples:
        _eager(s)
    if probe:
        chosen = [_probe_sample([s for s in samples if s.key == key]) for key in keys]
        _probe([s for s in chosen if s is not None and "status" not in s.record])
        return [*unmade, *(s.record for s in chosen if s is not None)]
    for module, batch in _import(samples):
        _run_level(module, batch, level)
    for s in _open(samples):
        _fail_sample(s, "crash", "no verdict")
    return [*unmade, *(s.record for s in samples)]


# ---- rendering ----------------------------------------------------------------------------


def _percent(passed: int, total: int) -> str:
    return f"{100.0 * passed / total:.1f}%" if total else "-"


def render_markdown(report: TorchReport, families: int = 25) -> str:
    levels = report.levels
    kept = len(report.opinfos)
    by_name = sum(1 for o in report.opinfos if o.matched_by == "name")
    lines = [
        f"<!-- Generated by `{report.command}`; do not edit by hand. -->",
        "",
        "# torch conformance (OpInfo samples)",
        "",
        f"**Generated file.** Regenerate with `{report.command}`.",
        "",
        f"The float32 samples of torch {report.torch_version}'s own operator tests "
        "(`torch.testing._internal.common_methods_invocations.op_db`) for the ops of the "
        f"Core ATen opset: {kept} of the {report.considered} OpInfos that run float32 on "
        f"the CPU ({by_name} by name, {kept - by_name} by export), run with "
        "`rung.runtime.InferenceSession` at each level and compared with torch eager "
        "(see `runtime/conformance_torch.py`).",
        "",
        COMPARISON_RULE,
        "",
        "| level | passed | samples | % | skipped |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for level in levels:
        passed, total = report.passed(level), report.total(level)
        lines.append(
            f"| {level} | {passed} | {total} | {_percent(passed, total)} "
            f"| {report.skipped(level)} |"
        )
    lines += ["", "## Largest failing families", ""]
    lines += [
        "Failing samples grouped by reason: mismatches by the OpInfo's aten op, other "
        "failures by their message (numbers and tensor types elided).",
        "",
    ]
    for level in levels:
        counts = report.families(level)
        if not counts:
            continue
        if len(levels) > 1:
            lines += [f"### {level}", ""]
        lines += ["| family | samples | OpInfos |", "| --- | ---: | --- |"]
        for name, count in counts.most_common(families):
            infos = report.family_opinfos(level, name)
            shown = ", ".join(f"`{k}`" for k in infos[:6]) + (
                f" and {len(infos) - 6} more" if len(infos) > 6 else ""
            )
            lines.append(f"| {_cell(name)} | {count} | {shown} |")
        if len(counts) > families:
            rest = sum(c for _, c in counts.most_common()[families:])
            lines.append(f"| ({len(counts) - families} other families) | {rest} | |")
        lines.append("")
    lines += [
        "## By OpInfo",
        "",
        ATTRIBUTION_RULE,
        "",
        "| OpInfo | aten op | " + " | ".join(levels) + " | skipped | first failure |",
        "| --- | --- | " + " | ".join("---:" for _ in levels) + " | ---: | --- |",
    ]
    for o in report.opinfos:
        cells = [f"{o.passed(lv)}/{len(o.counted(lv))}" for lv in levels]
        skipped = len(o.skipped(levels[0]))
        reasons: dict[str, list[str]] = {}
        for level in levels:
            first = next((r for r in o.samples.get(level, []) if r["status"] == "fail"), None)
            if first is not None:
                text = f"#{first['index']} {first['category']}: {first['reason']}"
                if len(text) > 220:
                    text = text[:217] + "..."
                reasons.setdefault(text, []).append(level)
        failure = "<br>".join(
            (f"{', '.join(lvs)}: " if len(levels) > 1 else "") + _cell(text)
            for text, lvs in reasons.items()
        )
        aten = o.shown_op() + ("" if o.matched_by == "name" else " (export)")
        lines.append(f"| `{o.key}` | {aten} | " + " | ".join(cells) + f" | {skipped} | {failure} |")
    lines += [
        "",
        f"<details><summary>OpInfos not kept ({len(report.dropped)})</summary>",
        "",
        "| OpInfo | why |",
        "| --- | --- |",
    ]
    for key, why in report.dropped.items():
        text = why if len(why) <= 160 else why[:157] + "..."
        lines.append(f"| `{key}` | {_cell(text)} |")
    lines += ["", "</details>", ""]
    return "\n".join(lines)


def render_json(report: TorchReport) -> str:
    data = {
        "generated_by": report.command,
        "torch_version": report.torch_version,
        "levels": report.levels,
        "samples_per_opinfo": SAMPLES_PER_OPINFO,
        "summary": {
            level: {
                "passed": report.passed(level),
                "total": report.total(level),
                "skipped": report.skipped(level),
                "failures": dict(sorted(report.failures(level).items())),
                "families": dict(report.families(level).most_common()),
            }
            for level in report.levels
        },
        "opinfos": {
            o.key: {
                "aten_op": o.aten_op,
                "matched_by": o.matched_by,
                "ops": o.ops(),
                "samples": {
                    level: [
                        {k: v for k, v in r.items() if k not in ("opinfo", "ops")}
                        for r in o.samples.get(level, [])
                    ]
                    for level in report.levels
                },
            }
            for o in report.opinfos
        },
        "not_kept": report.dropped,
    }
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def summary_lines(report: TorchReport) -> list[str]:
    lines = []
    for level in report.levels:
        passed, total = report.passed(level), report.total(level)
        lines.append(
            f"level {level}: {passed}/{total} samples passed ({_percent(passed, total)}), "
            f"{report.skipped(level)} skipped, {len(report.opinfos)} OpInfos"
        )
        for name, count in report.families(level).most_common(3):
            lines.append(f"  {count} {name}")
    lines.append(
        f"{len(report.opinfos)} OpInfos x {len(report.levels)} level(s) in {report.seconds:.1f} s"
    )
    return lines


__all__ = [
    "ATTRIBUTION_RULE",
    "COMPARISON_RULE",
    "SAMPLES_PER_OPINFO",
    "OpInfoResult",
    "TorchCase",
    "TorchReport",
    "attribute",
    "compare_outputs",
    "core_op_names",
    "describe_sample",
    "float32_opinfos",
    "load_opinfos",
    "opinfo_key",
    "prepare_worker",
    "render_json",
    "render_markdown",
    "run_batch",
    "run_torch_conformance",
    "select_outputs",
    "short_reason",
    "summary_lines",
]
