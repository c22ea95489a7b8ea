"""`InferenceSession`: run a model at any level, with onnxruntime's interface.

    from rung.runtime import InferenceSession

    sess = InferenceSession("model.onnx")         # compiled natively (level kernel)
    outputs = sess.run(None, {"x": x})            # list of arrays, in output order
    sess.get_inputs()[0].name, .shape, .type      # like onnxruntime's NodeArg

The model (a ModelProto, its serialized bytes, a `torch.export.ExportedProgram`,
a path to `.onnx` / `.onnxtxt` / `.pt2` / `.mlir`, or a ModuleOp) is imported
into the onnx or torch dialect (IR of a lower level is taken as it is), lowered
to the level by `rung.runtime.levels.lower` and run by the level's evaluator.
Inputs are checked against the model's declared types before anything runs.

Code written for onnxruntime runs unchanged with `import rung.runtime as ort`:

    so = ort.SessionOptions()
    so.intra_op_num_threads = 2                  # OpenMP threads of the compiled code
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    sess = ort.InferenceSession("model.onnx", sess_options=so,
                                providers=["CPUExecutionProvider"])

Options rung cannot honour (another execution provider, parallel execution of
nodes, profiling) are refused with a RungError when set, rather than ignored.
"""

from __future__ import annotations

import enum
import logging
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from onnx import ModelProto
from xdsl.dialects.builtin import ModuleOp, TensorType, UnrankedTensorType
from xdsl.ir import Attribute

from rung.errors import RungError
from rung.files import write_atomically

from .levels import Level, Progress, get_level, lower_reporting
from .loading import load_module

LOGGER = logging.getLogger("rung")
"""rung's logger; `SessionOptions.log_severity_level` sets its level."""


@dataclass(frozen=True)
class NodeArg:
    """An input or output of the model, as onnxruntime describes it."""

    name: str
    shape: list[int | str | None]
    """Dims: an int, the symbolic name (`onnx.dim_params`) or None; [] for non-tensors."""
    type: str
    """onnxruntime's spelling: `tensor(float)`, `seq(tensor(int64))`, `optional(...)`."""
    mlir_type: Attribute

    def __repr__(self) -> str:
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"


def _node_arg(name: str, type: Attribute, dim_params: Sequence[str]) -> NodeArg:
    from rung.importers.onnx.export import ort_type_string

    return NodeArg(name, _ort_shape(type, dim_params), ort_type_string(type), type)


def _ort_shape(type: Attribute, dim_params: Sequence[str]) -> list[int | str | None]:
    from rung.dialects.onnx import OptType

    if isinstance(type, OptType):
        return _ort_shape(type.element_type, dim_params)
    if not isinstance(type, TensorType):
        return []
    shape: list[int | str | None] = []
    for i, dim in enumerate(type.get_shape()):
        if dim >= 0:
            shape.append(dim)
        else:
            shape.append(dim_params[i] if i < len(dim_params) and dim_params[i] else None)
    return shape


class GraphOptimizationLevel(enum.IntEnum):
    """onnxruntime's optimization levels (same names and values), each a choice of passes.

    See `OPTIMIZATION_PIPELINES`: DISABLE_ALL lowers without optimizing (loops stay
    as lowered, one nest per op); BASIC adds rung's clean-ups (dead buffers,
    common subexpressions, loop-invariant shape code); EXTENDED adds the fusions
    and convolution-tap pruning; LAYOUT adds loop interchange and tiling; ALL is
    rung's default pipeline. Outer loops are marked parallel at every level, so
    `intra_op_num_threads` always counts.
    """

    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_LAYOUT = 3
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    """onnxruntime's execution modes; rung runs a model's nodes in order (SEQUENTIAL)."""

    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


_CORE = "convert-onnx-to-core,convert-torch-to-core,core-fold-constants"
_LOWER = "convert-core-to-kernel"
OPTIMIZATION_PIPELINES: dict[GraphOptimizationLevel, dict[str, str]] = {
    GraphOptimizationLevel.ORT_DISABLE_ALL: {
        "lower-to-core": _CORE,
        "core-to-kernel": f"{_LOWER},kernel-parallelize,kernel-plan-memory",
    },
    GraphOptimizationLevel.ORT_ENABLE_BASIC: {
        "lower-to-core": f"{_CORE},core-hoist-loop-invariants,cse,dce",
        "core-to-kernel": f"dce,{_LOWER},kernel-drop-dead-buffers,cse,dce,kernel-parallelize,"
        "kernel-plan-memory",
    },
    GraphOptimizationLevel.ORT_ENABLE_EXTENDED: {
        "optimize-kernel": "kernel-fuse-elementwise,kernel-fuse-epilogue,"
        "kernel-drop-dead-buffers,cse,dce,kernel-parallelize",
    },
    GraphOptimizationLevel.ORT_ENABLE_LAYOUT: {},
    GraphOptimizationLevel.ORT_ENABLE_ALL: {},
}
"""For each optimization level, the named pipelines it replaces (by the pipeline text
they run instead); the levels not listed use rung's default pipelines. The constant
folding of DISABLE_ALL stays: the kernel lowering needs the shapes it computes."""


def optimization_level(value: object) -> GraphOptimizationLevel:
    """rung's level for `value`: one of ours, onnxruntime's enum (by name), or its number."""
    if isinstance(value, GraphOptimizationLevel):
        return value
    name = getattr(value, "name", None)
    if isinstance(name, str) and name in GraphOptimizationLevel.__members__:
        return GraphOptimizationLevel[name]
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return GraphOptimizationLevel(value)
        except ValueError:
            pass
    known = ", ".join(GraphOptimizationLevel.__members__)
    raise RungError(f"graph_optimization_level must be one of {known}, got {value!r}")


_SEVERITY = {
    0: logging.DEBUG,
    1: logging.INFO,
    2: logging.WARNING,
    3: logging.ERROR,
    4: logging.CRITICAL,
}
"""onnxruntime's log severities (verbose, info, warning, error, fatal) as logging levels."""


def _flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise RungError(f"SessionOptions.{name} must be True or False, got {value!r}")
    return value


def _count(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise RungError(f"SessionOptions.{name} must be an integer >= 0, got {value!r}")
    return int(value)


def _is_onnxruntime_options(value: object) -> bool:
    """Whether `value` is onnxruntime's own `SessionOptions` (without importing it)."""
    kind = type(value)
    return kind.__name__ == "SessionOptions" and kind.__module__.startswith("onnxruntime")


class SessionOptions:
    """onnxruntime's `SessionOptions`, for rung's `InferenceSession`.

    What rung does with each: `intra_op_num_threads` is the OpenMP thread count
    of the compiled code (0: `$OMP_NUM_THREADS`, else every CPU the process may
    use), set before each run; `graph_optimization_level` chooses the passes
    (`GraphOptimizationLevel`); `optimized_model_filepath` receives the lowered
    module as MLIR text; `log_severity_level` sets the level of the `rung`
    logger. Settings that change nothing in rung (`logid`, `use_deterministic_compute`,
    `execution_order`, session config entries, ...) are stored. A setting rung
    cannot honour raises RungError when it is made: another provider's options,
    `execution_mode=ORT_PARALLEL`, `inter_op_num_threads` above 1, profiling,
    turning off the memory arena (the compiled code always plans one), custom
    op libraries. Misspelt attributes raise AttributeError, as in onnxruntime.
    """

    __slots__ = (
        "_intra_op_num_threads",
        "_inter_op_num_threads",
        "_graph_optimization_level",
        "_execution_mode",
        "_log_severity_level",
        "_optimized_model_filepath",
        "_config",
        "log_verbosity_level",
        "logid",
        "profile_file_prefix",
        "use_deterministic_compute",
        "use_per_session_threads",
        "execution_order",
    )

    @classmethod
    def from_onnxruntime(cls, theirs: object) -> SessionOptions:
        """The same settings from an `onnxruntime.SessionOptions`, so a session built with
        onnxruntime's own options object runs on rung too; a setting rung cannot honour
        raises RungError, as when it is set here."""
        ours = cls()
        for name in (
            "intra_op_num_threads",
            "inter_op_num_threads",
            "graph_optimization_level",
            "execution_mode",
            "log_severity_level",
            "optimized_model_filepath",
            "enable_profiling",
            "log_verbosity_level",
            "logid",
            "use_deterministic_compute",
        ):
            if hasattr(theirs, name):
                setattr(ours, name, getattr(theirs, name))
        return ours

    def __init__(self) -> None:
        self._intra_op_num_threads = 0
        self._inter_op_num_threads = 0
        self._graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self._execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self._log_severity_level = -1
        self._optimized_model_filepath = ""
        self._config: dict[str, str] = {}
        self.log_verbosity_level = 0
        self.logid = ""
        self.profile_file_prefix = "onnxruntime_profile_"
        self.use_deterministic_compute = False
        self.use_per_session_threads = True
        self.execution_order: object = 0

    @property
    def intra_op_num_threads(self) -> int:
        """OpenMP threads of each run of the compiled code; 0 for the default."""
        return self._intra_op_num_threads

    @intra_op_num_threads.setter
    def intra_op_num_threads(self, value: int) -> None:
        self._intra_op_num_threads = _count("intra_op_num_threads", value)

    @property
    def inter_op_num_threads(self) -> int:
        """0 or 1: rung runs a model's nodes one after another."""
        return self._inter_op_num_threads

    @inter_op_num_threads.setter
    def inter_op_num_threads(self, value: int) -> None:
        count = _count("inter_op_num_threads", value)
        if count > 1:
            raise RungError(
                f"inter_op_num_threads={count}: rung runs a model's nodes one after another "
                "(parallelism is inside them: set intra_op_num_threads)"
            )
        self._inter_op_num_threads = count

    @property
    def execution_mode(self) -> ExecutionMode:
        return self._execution_mode

    @execution_mode.setter
    def execution_mode(self, value: object) -> None:
        name = getattr(value, "name", value)
        if name in ("ORT_SEQUENTIAL", 0):
            self._execution_mode = ExecutionMode.ORT_SEQUENTIAL
            return
        raise RungError(
            f"execution_mode {name}: rung runs a model's nodes one after another; "
            "only ORT_SEQUENTIAL is supported"
        )

    @property
    def graph_optimization_level(self) -> GraphOptimizationLevel:
        return self._graph_optimization_level

    @graph_optimization_level.setter
    def graph_optimization_level(self, value: object) -> None:
        self._graph_optimization_level = optimization_level(value)

    @property
    def log_severity_level(self) -> int:
        """-1 (rung's default), or 0 verbose, 1 info, 2 warning, 3 error, 4 fatal."""
        return self._log_severity_level

    @log_severity_level.setter
    def log_severity_level(self, value: int) -> None:
        if isinstance(value, bool) or value not in (-1, *_SEVERITY):
            raise RungError(f"log_severity_level must be one of -1, 0, 1, 2, 3, 4, got {value!r}")
        self._log_severity_level = int(value)

    @property
    def optimized_model_filepath(self) -> str:
        """Where to write the lowered module (MLIR text), or "" for nowhere."""
        return self._optimized_model_filepath

    @optimized_model_filepath.setter
    def optimized_model_filepath(self, value: str | os.PathLike[str]) -> None:
        if not isinstance(value, str | os.PathLike):
            raise RungError(f"optimized_model_filepath must be a path, got {value!r}")
        self._optimized_model_filepath = os.fspath(value)

    @property
    def enable_profiling(self) -> bool:
        return False

    @enable_profiling.setter
    def enable_profiling(self, value: bool) -> None:
        if _flag("enable_profiling", value):
            raise RungError(
                "enable_profiling: rung has no per-node profiler; `rung compile "
                "--print-timings` and `rung run --print-timings` time each stage"
            )

    def _always(self, name: str, value: object) -> None:
        if not _flag(name, value):
            raise RungError(
                f"{name}=False: rung's compiled code always plans its buffers in one reused arena"
            )

    enable_cpu_mem_arena = property(
        lambda self: True, lambda self, v: self._always("enable_cpu_mem_arena", v)
    )
    enable_mem_pattern = property(
        lambda self: True, lambda self, v: self._always("enable_mem_pattern", v)
    )
    enable_mem_reuse = property(
        lambda self: True, lambda self, v: self._always("enable_mem_reuse", v)
    )

    def add_session_config_entry(self, key: str, value: str) -> None:
        """Stored, as onnxruntime's config entries are; rung reads none of them."""
        self._config[str(key)] = str(value)

    def get_session_config_entry(self, key: str) -> str:
        if key not in self._config:
            raise RungError(f"no session config entry '{key}'")
        return self._config[key]

    def register_custom_ops_library(self, path: str) -> None:
        raise RungError(
            f"cannot load the custom op library '{path}': rung compiles models to C and "
            "loads no onnxruntime op libraries (write a rung lowering for the ops instead)"
        )

    def __repr__(self) -> str:
        return (
            f"SessionOptions(intra_op_num_threads={self.intra_op_num_threads}, "
            f"graph_optimization_level={self.graph_optimization_level.name}, "
            f"log_severity_level={self.log_severity_level}, "
            f"optimized_model_filepath={self.optimized_model_filepath!r})"
        )


PROVIDERS = ("CPUExecutionProvider",)
"""The execution providers rung offers: it compiles for the CPU it runs on."""


def _check_providers(providers: object, provider_options: object) -> list[str]:
    """The providers a session asked for, refused unless they are rung's.

    onnxruntime warns and falls back to the CPU when a provider is missing; rung
    refuses instead, because a script that asks for a GPU would otherwise time
    something else than its author thinks.
    """
    if providers is None:
        return list(PROVIDERS)
    if isinstance(providers, str) or not isinstance(providers, Iterable):
        raise RungError(f"providers must be a list of provider names, got {providers!r}")
    names: list[str] = []
    for item in providers:
        name = item[0] if isinstance(item, tuple) and item else item
        if name not in PROVIDERS:
            raise RungError(
                f"unsupported execution provider {name!r}: rung offers "
                f"{', '.join(repr(p) for p in PROVIDERS)} (compiled C on this CPU)"
            )
        options = item[1] if isinstance(item, tuple) and len(item) > 1 else {}
        if options:
            raise RungError(f"rung's {name} takes no provider options, got {options!r}")
        names.append(name)
    for options in provider_options or ():  # type: ignore[union-attr]
        if options:
            raise RungError(f"rung's providers take no provider options, got {options!r}")
    return names or list(PROVIDERS)


@dataclass(frozen=True)
class ModelMetadata:
    """onnxruntime's `ModelMetadata`, from what the importer recorded on the module."""

    producer_name: str = ""
    graph_name: str = ""
    domain: str = ""
    description: str = ""
    graph_description: str = ""
    version: int = 0
    custom_metadata_map: dict[str, str] = field(default_factory=dict)


def _metadata(module: ModuleOp, func_name: str) -> ModelMetadata:
    from xdsl.dialects.builtin import DictionaryAttr, StringAttr

    attrs = module.attributes
    producer = attrs.get("onnx.producer")
    custom = attrs.get("onnx.metadata")
    return ModelMetadata(
        producer_name=producer.data if isinstance(producer, StringAttr) else "",
        graph_name=func_name,
        custom_metadata_map={k: v.data for k, v in custom.data.items() if isinstance(v, StringAttr)}
        if isinstance(custom, DictionaryAttr)
        else {},
    )


def _write_text(path: str, text: str) -> None:
    """Write `text` to `path` all at once; an existing file is replaced, as onnxruntime does
    with `optimized_model_filepath` (the option itself is the request to write it)."""
    data = text.encode("utf-8")
    write_atomically(path, lambda f: f.write(data), force=True)


class InferenceSession:
    """Runs a model at one level: `kernel` (compiled C, the default), `core`, `onnx` or `torch`.

    The arguments after the model are onnxruntime's (`sess_options`, `providers`,
    `provider_options`), so that onnxruntime code runs unchanged; `level` and
    `progress` are rung's, by keyword. See `rung.runtime.levels.level_names()` for
    every registered level. At level kernel the C is generated and compiled here,
    as onnxruntime prepares a session when it is made, not at the first run.
    """

    def __init__(
        self,
        model: ModelProto | bytes | str | os.PathLike[str] | ModuleOp | object,
        sess_options: SessionOptions | None = None,
        providers: Sequence[object] | None = None,
        provider_options: Sequence[Mapping[str, object]] | None = None,
        *,
        level: str = "kernel",
        progress: Progress | None = None,
    ) -> None:
        from rung.dialects.signature import io_dim_params, io_names, main_function

        if sess_options is None:
            sess_options = SessionOptions()
        elif _is_onnxruntime_options(sess_options):
            sess_options = SessionOptions.from_onnxruntime(sess_options)
        elif not isinstance(sess_options, SessionOptions):
            raise RungError(
                "sess_options must be a rung.runtime.SessionOptions, got "
                f"{type(sess_options).__name__} (give a level as level=...)"
            )
        self._options = sess_options
        self._providers = _check_providers(providers, provider_options)
        if sess_options.log_severity_level >= 0:
            _set_log_level(sess_options.log_severity_level)
        self.level: Level = get_level(level)
        self.timings: dict[str, float] = {}
        """Seconds per stage of making the session: import, lower-to-<level>, C generation,
        C compile (level kernel); then `run` gets the last run's seconds."""
        source = model if isinstance(model, str | os.PathLike) else None
        where = f"'{source}'" if source is not None else "the model"
        start = time.perf_counter()
        if progress is not None:
            progress("import", 0, None)
        module = load_module(model)
        self.timings["import"] = time.perf_counter() - start
        func = main_function(module)
        in_names, out_names = io_names(func)
        self._inputs = [
            _node_arg(name, arg.type, io_dim_params(func.arg_attrs, i))
            for i, (name, arg) in enumerate(zip(in_names, func.args, strict=True))
        ]
        self._outputs = [
            _node_arg(name, t, io_dim_params(func.res_attrs, i))
            for i, (name, t) in enumerate(
                zip(out_names, func.function_type.outputs.data, strict=True)
            )
        ]
        self._plain = [_plain_spec(arg) for arg in self._inputs]
        self._meta = _metadata(module, func.sym_name.data)
        self.source_module = module
        # Lowering works in place: a module the caller gave is lowered as a copy.
        replace = OPTIMIZATION_PIPELINES[sess_options.graph_optimization_level]
        self.module = lower_reporting(
            module,
            self.level,
            where=where,
            timings=self.timings,
            copy=isinstance(model, ModuleOp),
            progress=progress,
            replace=replace,
        )
        LOGGER.info("lowered %s to level %s: %s", where, self.level.name, _seconds(self.timings))
        if sess_options.optimized_model_filepath:
            from rung.dialects import print_module

            _write_text(sess_options.optimized_model_filepath, print_module(self.module))
        self._native = None
        self.threads = sess_options.intra_op_num_threads
        """The OpenMP threads of each run (0: the default, see `native.default_threads`)."""
        from .native import evaluate, load

        if self.level.evaluator is evaluate:
            self._native = load(self.module, progress=progress, timings=self.timings)
        elif self.threads:
            raise RungError(
                f"intra_op_num_threads={self.threads}: level '{self.level.name}' does not run "
                "compiled code; threads apply to level 'kernel'"
            )

    @property
    def compiled(self) -> bool:
        """Whether runs call compiled code (level kernel), where `threads` counts."""
        return self._native is not None

    def get_inputs(self) -> list[NodeArg]:
        return list(self._inputs)

    def get_outputs(self) -> list[NodeArg]:
        return list(self._outputs)

    def get_modelmeta(self) -> ModelMetadata:
        """The producer, graph name and custom metadata the model carried."""
        return self._meta

    def get_providers(self) -> list[str]:
        return list(self._providers)

    def get_provider_options(self) -> dict[str, dict[str, str]]:
        return {name: {} for name in self._providers}

    def get_session_options(self) -> SessionOptions:
        return self._options

    def run(
        self,
        output_names: Sequence[str] | None,
        input_feed: Mapping[str, object],
        run_options: object = None,
    ) -> list[object]:
        """Outputs (all, or those named) for the inputs in `input_feed`, like onnxruntime.

        `run_options` (onnxruntime's RunOptions) is accepted and not used.
        """
        args = self._check_inputs(input_feed)
        indices = self._output_indices(output_names)
        start = time.perf_counter()
        if self._native is not None:
            results = self._native.run(args, self.threads)
        else:
            results = self.level.evaluator(self.module, args)
        self.timings["run"] = time.perf_counter() - start
        if len(results) != len(self._outputs):
            raise RungError(
                f"level '{self.level.name}' returned {len(results)} outputs, "
                f"the model has {len(self._outputs)}"
            )
        return [results[i] for i in indices]

    def _output_indices(self, output_names: Sequence[str] | None) -> list[int]:
        if output_names is None:
            return list(range(len(self._outputs)))
        if isinstance(output_names, str):
            raise RungError("output_names must be a list of names (or None for all)")
        by_name = {o.name: i for i, o in reversed(list(enumerate(self._outputs)))}
        indices = []
        for name in output_names:
            if name not in by_name:
                known = ", ".join(f"'{o.name}'" for o in self._outputs)
                raise RungError(f"unknown output '{name}'; the model's outputs are {known}")
            indices.append(by_name[name])
        return indices

    def _check_inputs(self, feed: Mapping[str, object]) -> list[object]:
        if not isinstance(feed, Mapping):
            raise RungError(
                f"input_feed must be a dict of name -> array, got {type(feed).__name__}"
            )
        expected = {i.name for i in self._inputs}
        for name in feed:
            if name not in expected:
                known = ", ".join(f"'{i.name}'" for i in self._inputs) or "none"
                raise RungError(f"unknown input '{name}'; the model's inputs are {known}")
        args: list[object] = []
        missing = []
        for arg, plain in zip(self._inputs, self._plain, strict=True):
            value = feed.get(arg.name)
            if plain is not None and type(value) is np.ndarray and _fits(value, *plain):
                args.append(value)  # the common case, checked without building messages
                continue
            if arg.name not in feed:
                if arg.type.startswith("optional("):
                    args.append(None)  # an absent optional input is an empty optional
                    continue
                missing.append(arg)
                args.append(None)
                continue
            args.append(check_value(arg, feed[arg.name]))
        if missing:
            listed = ", ".join(f"'{a.name}' ({a.type} {_shape_text(a.shape)})" for a in missing)
            raise RungError(f"missing input{'s' if len(missing) > 1 else ''} {listed}")
        check_named_dims(self._inputs, args)
        return args


def _plain_spec(arg: NodeArg) -> tuple[np.dtype, tuple[int, ...]] | None:
    """A plain numeric tensor input's dtype and declared dims (-1 where any size goes);
    None for strings, sequences, optionals and maps, which `check_value` handles."""
    from rung.dialects.onnx import StringType
    from rung.importers.onnx.export import numpy_dtype

    t = arg.mlir_type
    if not isinstance(t, TensorType) or isinstance(t.element_type, StringType):
        return None
    try:
        return np.dtype(numpy_dtype(t.element_type)), tuple(t.get_shape())
    except Exception:  # noqa: BLE001  (an element numpy lacks: the slow path reports it)
        return None


def _fits(value: np.ndarray, dtype: np.dtype, shape: tuple[int, ...]) -> bool:
    if value.dtype != dtype or value.ndim != len(shape):
        return False
    return all(d < 0 or d == n for d, n in zip(shape, value.shape, strict=True))


def check_named_dims(args: Sequence[NodeArg], values: Sequence[object]) -> None:
    """Inputs whose dims share a symbolic name (`batch`, `sequence`) must agree on its size.

    The model says they are one size; a run that fed two would read past the
    smaller input or mix rows, so it fails here with both inputs named.
    """
    seen: dict[str, tuple[str, int, int]] = {}
    for arg, value in zip(args, values, strict=True):
        if not isinstance(value, np.ndarray):
            continue
        for axis, dim in enumerate(arg.shape):
            if not isinstance(dim, str) or axis >= value.ndim:
                continue
            size = int(value.shape[axis])
            if dim not in seen:
                seen[dim] = (arg.name, axis, size)
                continue
            first, first_axis, first_size = seen[dim]
            if size != first_size:
                raise RungError(
                    f"input '{arg.name}': dimension {axis} ('{dim}') is {size}, but input "
                    f"'{first}' has {first_size} in its dimension {first_axis} of the same "
                    f"name '{dim}'"
                )


def _shape_text(shape: Sequence[int | str | None]) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


def check_value(arg: NodeArg, value: object) -> object:
    """Check one input against its declared type; returns the value to pass on."""
    from rung.dialects.onnx import OptType, SeqType

    type = arg.mlir_type
    if isinstance(type, OptType):
        if value is None:
            return None
        type = type.element_type
    if isinstance(type, SeqType):
        return _check_sequence(arg, type, value)
    if not isinstance(type, TensorType | UnrankedTensorType):
        return value  # maps: passed through
    if isinstance(value, np.generic):
        value = np.asarray(value)
    if not isinstance(value, np.ndarray):
        raise RungError(
            f"input '{arg.name}': expected a numpy array of {arg.type}, got {type_name(value)}"
        )
    from rung.dialects.onnx import StringType
    from rung.importers.onnx.export import numpy_dtype

    if isinstance(type.element_type, StringType):
        if value.dtype.kind not in "OUS":
            raise RungError(
                f"input '{arg.name}': expected {arg.type} (strings), got dtype {value.dtype}"
            )
        if value.dtype.kind != "O":
            value = value.astype(object)
    else:
        want = numpy_dtype(type.element_type)
        if value.dtype != want:
            raise RungError(
                f"input '{arg.name}': expected dtype {want} ({arg.type}), got {value.dtype}"
            )
    if isinstance(type, TensorType):
        shape = type.get_shape()
        if value.ndim != len(shape):
            raise RungError(
                f"input '{arg.name}': expected rank {len(shape)} (shape "
                f"{_shape_text(arg.shape)}), got rank {value.ndim} (shape {list(value.shape)})"
            )
        for axis, (want_dim, got_dim) in enumerate(zip(shape, value.shape, strict=True)):
            if want_dim >= 0 and want_dim != got_dim:
                raise RungError(
                    f"input '{arg.name}': dimension {axis} must be {want_dim} (shape "
                    f"{_shape_text(arg.shape)}), got shape {list(value.shape)}"
                )
    return value


def _check_sequence(arg: NodeArg, type: Attribute, value: object) -> list[np.ndarray]:
    """A sequence input: a list (or tuple) of arrays of its element type, strings as object
    arrays of `str` (the element shapes are the model's to check)."""
    from rung.dialects.onnx import StringType
    from rung.importers.onnx.export import numpy_dtype

    if not isinstance(value, list | tuple):
        raise RungError(
            f"input '{arg.name}': expected a sequence ({arg.type}) as a list of numpy arrays, "
            f"got {type_name(value)}"
        )
    element = getattr(type.element_type, "element_type", None)  # type: ignore[attr-defined]
    items = []
    for i, item in enumerate(value):
        if isinstance(item, np.generic):
            item = np.asarray(item)
        if not isinstance(item, np.ndarray):
            raise RungError(
                f"input '{arg.name}': element {i} of the sequence must be a numpy array, "
                f"got {type_name(item)}"
            )
        if isinstance(element, StringType):
            if item.dtype.kind not in "OUS":
                raise RungError(
                    f"input '{arg.name}': element {i} of the sequence must hold strings, got "
                    f"dtype {item.dtype}"
                )
            item = item.astype(object)
        elif element is not None and item.dtype != numpy_dtype(element):
            raise RungError(
                f"input '{arg.name}': element {i} of the sequence must be of "
                f"{numpy_dtype(element)} ({arg.type}), got {item.dtype}"
            )
        items.append(item)
    return items


def type_name(value: object) -> str:
    if isinstance(value, list | tuple):
        return "a sequence (list)"
    if isinstance(value, dict):
        return "a map (dict)"
    if value is None:
        return "None"
    return type(value).__name__


def _set_log_level(severity: int) -> None:
    """Set the `rung` logger's level, with a handler on stderr if it has none (onnxruntime
    prints its log there)."""
    LOGGER.setLevel(_SEVERITY[severity])
    if not LOGGER.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("rung: %(levelname)s: %(message)s"))
        LOGGER.addHandler(handler)


def _seconds(timings: Mapping[str, float]) -> str:
    return ", ".join(f"{stage} {seconds:.3f} s" for stage, seconds in timings.items())


__all__ = [
    "OPTIMIZATION_PIPELINES",
    "PROVIDERS",
    "ExecutionMode",
    "GraphOptimizationLevel",
    "InferenceSession",
    "ModelMetadata",
    "NodeArg",
    "SessionOptions",
    "load_module",
    "lower_reporting",
    "optimization_level",
    "random_inputs",
    "read_array",
]


# ---- inputs for `rung run` ----------------------------------------------------------------


def read_array(path: str, name: str = "") -> np.ndarray:
    """An input array from a `.npy` file (or a serialized TensorProto `.pb`)."""
    what = f"input '{name}'" if name else "input"
    p = Path(path)
    if not p.is_file():
        raise RungError(f"cannot read {what}: no such file '{path}'")
    if p.suffix == ".pb":
        from onnx import TensorProto, numpy_helper

        tensor = TensorProto()
        try:
            tensor.ParseFromString(p.read_bytes())
            return numpy_helper.to_array(tensor)
        except Exception as err:
            raise RungError(
                f"cannot read {what} from '{path}': not a TensorProto ({err})"
            ) from None
    try:
        with open(p, "rb") as f:
            magic = f.read(6)
    except OSError as err:
        raise RungError(f"cannot read {what} from '{path}': {err.strerror}") from None
    if magic != b"\x93NUMPY":
        raise RungError(f"cannot read {what} from '{path}': not a .npy file (no NumPy header)")
    try:
        value = np.load(p, allow_pickle=False)
    except Exception as err:
        raise RungError(
            f"cannot read {what} from '{path}': bad .npy file ({_one_line(err)})"
        ) from None
    return value


def _one_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__


def random_inputs(
    inputs: Sequence[NodeArg], *, seed: int = 0, dims: Mapping[str, int] | None = None
) -> dict[str, object]:
    """Random values for the given inputs, from their declared types and shapes.

    Unknown dims are 1 unless `dims` names them (by their symbolic name); floats
    are standard normal, integers in [0, 10), strings short words. Sequences get
    one element, maps one entry, optionals a value.
    """
    rng = np.random.default_rng(seed)
    dims = dict(dims or {})
    return {arg.name: _random_value(arg.mlir_type, arg.shape, rng, dims) for arg in inputs}


def _random_value(
    type: Attribute, shape: Sequence[int | str | None], rng: np.random.Generator, dims: dict
) -> object:
    from rung.dialects.onnx import MapType, OptType, SeqType

    if isinstance(type, OptType):
        return _random_value(type.element_type, shape, rng, dims)
    if isinstance(type, SeqType):
        inner = type.element_type
        return [_random_value(inner, _ort_shape(inner, ()), rng, dims)]
    if isinstance(type, MapType):
        key = _random_array(type.key_type, (), rng)
        value = type.value_type
        if isinstance(value, TensorType | UnrankedTensorType | SeqType | MapType | OptType):
            item = _random_value(value, _ort_shape(value, ()), rng, dims)
        else:
            item = _random_array(value, (), rng)
        return {key.item(): item}
    if not isinstance(type, TensorType | UnrankedTensorType):
        raise RungError(f"cannot generate a random value of type {type}")
    if isinstance(type, UnrankedTensorType):
        concrete: tuple[int, ...] = (1,)
    else:
        concrete = tuple(
            d if isinstance(d, int) else dims.get(d, 1) if isinstance(d, str) else 1 for d in shape
        )
    count = int(np.prod(concrete, dtype=object))
    if count > _RANDOM_LIMIT:  # a declared shape no memory holds: refuse, not crash
        raise RungError(
            f"an input of shape {list(concrete)} has {count} elements, too many to make up "
            "random values for; give its value instead"
        )
    return _random_array(type.element_type, concrete, rng)


_RANDOM_LIMIT = 2**28
"""The most elements `random_inputs` makes for one input."""


def _random_array(
    element: Attribute, shape: tuple[int, ...], rng: np.random.Generator
) -> np.ndarray:
    from rung.dialects.onnx import StringType
    from rung.importers.onnx.export import numpy_dtype

    if isinstance(element, StringType):
        words = np.array(["alpha", "beta", "gamma", "delta", "rung"], dtype=object)
        return rng.choice(words, size=shape).astype(object)
    dtype = numpy_dtype(element)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0, 10, size=shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    values = rng.standard_normal(shape)
    if dtype.kind == "V":  # ml_dtypes: small floats and sub-byte ints
        try:
            np.iinfo(dtype)
            values = rng.integers(0, 2, size=shape)
        except ValueError:
            pass
    return np.asarray(values).astype(dtype)
