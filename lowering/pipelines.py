"""The passes and named pipelines rung knows, and how pipeline text becomes passes.

Every pass `opt -p` can run, and every named pipeline (`lower-to-core`, …),
is looked up in a `Registry`. Keeping that table here, rather than inside the
`opt` tool, lets every part of rung (the lowering packages, `rung compile`,
tests, plugins) register and run passes the same way.

rung's own passes and pipelines are declared once, at the bottom of this
module, with `register_pass` / `register_pipeline`. Passes are registered as
*factories* that import the pass class on first use, so that `opt --help` and
`opt` on a small file do not pay for importing every lowering package:

    def _onnx_to_core() -> type[ModulePass]:
        from rung.lowering.onnx_to_core import OnnxToCorePass

        return OnnxToCorePass

    register_pass("convert-onnx-to-core", _onnx_to_core, "lower onnx to core")
    register_pipeline("lower-to-core", "convert-onnx-to-core,core-fold-constants,cse,dce",
                      "lower the onnx dialect to the core dialect")

A pass's help line (the third argument) is what `opt --list-passes` shows;
without one, the first line of the pass class's docstring is shown.

`default_registry()` gives a fresh `Registry` holding xDSL's passes
(`canonicalize`, `cse`, `dce`, …) and rung's. Each `opt` run takes its own
copy and lets plugins add to it, so one run's plugins never leak into the next.

A named pipeline is pipeline text (`"canonicalize,cse"`) under a name. Where
it appears in other pipeline text it is expanded in place, so
`-p 'lower-to-core,dce'` runs the pipeline's passes one by one (and
`--print-between-passes` shows each of them).
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import difflib
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

from xdsl.passes import ModulePass, PassPipeline, PassPipelineCallbackType
from xdsl.utils.arg_spec import ArgSpec, parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError

from rung.errors import RungError

PassFactory = Callable[[], type[ModulePass]]
"""A function returning a pass class; called only when the pass is used."""

_NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Pipeline:
    """A named pipeline: pipeline text run under one name, with a help line."""

    name: str
    text: str
    help: str
    origin: str = "rung"


class Registry:
    """Passes and named pipelines, by name.

    Names are unique across passes and pipelines: registering a name twice is
    an error that names both owners, unless it is the very same pass or
    pipeline again (loading a plugin twice is harmless).
    """

    def __init__(self) -> None:
        self.passes: dict[str, PassFactory] = {}
        self.pass_origins: dict[str, str] = {}
        self.pass_help: dict[str, str] = {}
        self.pipelines: dict[str, Pipeline] = {}
        self._pass_classes: dict[str, type[ModulePass]] = {}

    def copy(self) -> Registry:
        """An independent registry with the same entries."""
        other = Registry()
        other.passes = dict(self.passes)
        other.pass_origins = dict(self.pass_origins)
        other.pass_help = dict(self.pass_help)
        other.pipelines = dict(self.pipelines)
        other._pass_classes = dict(self._pass_classes)
        return other

    # ---- registering -------------------------------------------------------

    def register_pass(
        self, name: str, factory: PassFactory, *, origin: str = "rung", help: str = ""
    ) -> None:
        """Register a pass under `name`, loaded lazily through `factory`; `help` is its
        line in `opt --list-passes` (else the first line of its class's docstring)."""
        self._check_free(name, origin, kind="pass")
        self.passes[name] = factory
        self.pass_origins[name] = origin
        if help:
            self.pass_help[name] = help

    def add_pass(self, pass_class: type[ModulePass], *, origin: str = "rung") -> None:
        """Register a `ModulePass` subclass under its `name`."""
        if not (isinstance(pass_class, type) and issubclass(pass_class, ModulePass)):
            raise RungError(f"add_pass expects a ModulePass subclass, got {_describe(pass_class)}")
        name = getattr(pass_class, "name", None)
        if not isinstance(name, str) or not name:
            raise RungError(
                f"pass class {pass_class.__qualname__} has no 'name' "
                '(set a class attribute such as name = "my-pass")'
            )
        if self._pass_classes.get(name) is pass_class:
            return
        self._check_free(name, origin, kind="pass")
        self.passes[name] = lambda: pass_class
        self.pass_origins[name] = origin
        self._pass_classes[name] = pass_class

    def add_pipeline(self, name: str, text: str, help: str, *, origin: str = "rung") -> None:
        """Register pipeline `text` (e.g. "canonicalize,cse") under `name`.

        The text's syntax is checked now; the passes it names are looked up
        when the pipeline is used, so a pipeline may name passes that another
        plugin registers later.
        """
        if not isinstance(name, str) or not _NAME.match(name):
            raise RungError(
                f"invalid pipeline name {name!r}: use lower-case words joined by '-', "
                "e.g. 'my-cleanup'"
            )
        if not isinstance(text, str) or not text.strip():
            raise RungError(f"pipeline '{name}' has no passes")
        _parse_text(text, f"pipeline '{name}'")
        pipeline = Pipeline(name, text, help or "", origin)
        existing = self.pipelines.get(name)
        if existing is not None and (existing.text, existing.help) == (text, pipeline.help):
            return
        self._check_free(name, origin, kind="pipeline")
        self.pipelines[name] = pipeline

    def _check_free(self, name: str, origin: str, *, kind: str) -> None:
        """A silent override would make `-p name` run something else than asked."""
        if name in self.passes:
            owner = self.pass_origins.get(name, "rung")
            raise RungError(
                f"cannot register {kind} '{name}' from {origin}: "
                f"a pass of that name is already registered by {owner}"
            )
        if name in self.pipelines:
            owner = self.pipelines[name].origin
            raise RungError(
                f"cannot register {kind} '{name}' from {origin}: "
                f"a pipeline of that name is already registered by {owner}"
            )

    # ---- using -------------------------------------------------------------

    def pass_class(self, name: str) -> type[ModulePass]:
        """The class of the pass registered as `name`."""
        if name not in self.passes:
            raise RungError(self._unknown(name))
        return self.passes[name]()

    def expand(self, text: str) -> list[ArgSpec]:
        """Parse pipeline text into pass specs, with named pipelines expanded.

        Raises RungError for a syntax error, an unknown name, options given to
        a named pipeline, or a pipeline that includes itself.
        """
        return self._expand(text, (), "pass pipeline")

    def _expand(self, text: str, stack: tuple[str, ...], what: str) -> list[ArgSpec]:
        specs: list[ArgSpec] = []
        for spec in _parse_text(text, what):
            if spec.name in self.pipelines:
                if spec.parameters:
                    raise RungError(
                        f"pipeline '{spec.name}' takes no options (got '{spec}'); "
                        "give options to the passes it runs instead"
                    )
                if spec.name in stack:
                    cycle = " -> ".join((*stack, spec.name))
                    raise RungError(f"pipeline '{spec.name}' includes itself: {cycle}")
                inner = self.pipelines[spec.name]
                specs.extend(
                    self._expand(inner.text, (*stack, spec.name), f"pipeline '{spec.name}'")
                )
            elif spec.name in self.passes:
                specs.append(spec)
            else:
                where = f" (in pipeline '{stack[-1]}')" if stack else ""
                raise RungError(self._unknown(spec.name) + where)
        return specs

    def build(self, text: str, callback: PassPipelineCallbackType | None = None) -> PassPipeline:
        """A PassPipeline for pipeline text such as "canonicalize,my-pass{n=2}".

        Inside `pipeline_options(on_pass=...)`, the pipeline also reports each pass it
        finishes, so that a long lowering can show its progress.
        """
        passes = tuple(self.instantiate(spec) for spec in self.expand(text))
        options = _OPTIONS.get()
        if options is not None and options.on_pass is not None and passes:
            callback = _counting(text, len(passes), options.on_pass, callback)
        return PassPipeline(passes, callback)

    def instantiate(self, spec: ArgSpec) -> ModulePass:
        """One pass object from its spec, its options checked and converted."""
        cls = self.pass_class(spec.name)
        try:
            return cls.from_pass_spec(spec)
        except (ValueError, TypeError) as err:
            options = ", ".join(f.name.replace("_", "-") for f in _option_fields(cls))
            known = f" (its options: {options})" if options else " (it takes no options)"
            if "expected arguments" in str(err):
                known = ""
            raise RungError(f"bad options for pass '{spec}': {err}{known}") from None

    def _unknown(self, name: str) -> str:
        message = f"unknown pass or pipeline '{name}'"
        close = difflib.get_close_matches(name, [*self.passes, *self.pipelines], n=3)
        if close:
            message += "; did you mean " + " or ".join(f"'{c}'" for c in close) + "?"
        else:
            message += " (run 'opt --list-passes' to see them all)"
        return message

    def describe(self) -> Iterable[tuple[str, str, str]]:
        """(kind, name, help) for every pipeline, then every pass, sorted by name; a
        pass's help ends with who registered it."""
        for name in sorted(self.pipelines):
            pipeline = self.pipelines[name]
            yield "pipeline", name, f"{pipeline.help} [{pipeline.text}]".strip()
        for name in sorted(self.passes):
            text = self.pass_help.get(name) or self._doc_line(name) or "(no description)"
            yield "pass", name, f"{text} ({self.pass_origins.get(name, 'rung')})"

    def _doc_line(self, name: str) -> str:
        """The first line of the pass class's own docstring ("" if it has none, or if
        the class cannot be loaded: listing must not fail on one broken plugin)."""
        try:
            cls = self.passes[name]()
        except Exception:
            return ""
        doc = cls.__dict__.get("__doc__") or ""
        return doc.strip().split("\n", 1)[0].strip().rstrip(".")


def _parse_text(text: str, what: str) -> list[ArgSpec]:
    """xDSL's pipeline parser, its BaseException turned into a RungError."""
    try:
        return list(parse_pipeline(text))
    except ArgSpecParseError as err:
        detail = str(err).removeprefix("Error parsing pass pipeline specification:\n")
        raise RungError(f"invalid {what} '{text}':\n{detail.rstrip()}") from None


def _option_fields(cls: type[ModulePass]) -> list[dataclasses.Field[object]]:
    """The pass's options, to list them when a given one is wrong."""
    if not dataclasses.is_dataclass(cls):
        return []
    return [f for f in dataclasses.fields(cls) if f.init and f.name != "name"]


def _describe(value: object) -> str:
    """A short description of a wrong argument, for error messages."""
    if isinstance(value, type):
        return f"class {value.__qualname__}"
    return f"{type(value).__name__} {value!r}"


# ---- pipelines replaced for a while ---------------------------------------------

PassReport = Callable[[str, int, int], None]
"""Called as (pipeline text, passes done, passes in all) after each pass of a pipeline."""


@dataclass(frozen=True)
class PipelineOptions:
    """What `pipeline_options` changes in the registries built meanwhile."""

    replace: Mapping[str, str]
    """Named pipeline -> the pipeline text it stands for instead."""
    on_pass: PassReport | None = None


_OPTIONS: contextvars.ContextVar[PipelineOptions | None] = contextvars.ContextVar(
    "rung_pipeline_options", default=None
)


@contextlib.contextmanager
def pipeline_options(
    replace: Mapping[str, str] | None = None, on_pass: PassReport | None = None
) -> Iterator[None]:
    """Within the block, `default_registry()` gives named pipelines the texts in `replace`,
    and pipelines report their passes to `on_pass`.

    The execution levels lower through `default_registry()` by pipeline name; this
    is how a session's optimization level chooses other passes for the same stages,
    and how a command shows a lowering's progress, without a parameter threaded
    through every level. It is a context variable: other threads are unaffected.
    """
    for name, text in (replace or {}).items():
        _parse_text(text, f"pipeline '{name}'")
    token = _OPTIONS.set(PipelineOptions(dict(replace or {}), on_pass))
    try:
        yield
    finally:
        _OPTIONS.reset(token)


def _counting(
    text: str, total: int, report: PassReport, inner: PassPipelineCallbackType | None
) -> PassPipelineCallbackType:
    """A pipeline callback that reports (text, done, total) after each pass, then calls
    `inner`."""
    done = 0

    def callback(previous: ModulePass | None, module: object, following: ModulePass | None) -> None:
        nonlocal done
        if previous is not None:
            done += 1
        report(text, done, total)
        if inner is not None:
            inner(previous, module, following)  # type: ignore[arg-type]

    return callback  # type: ignore[return-value]


# ---- rung's own passes and pipelines -----------------------------------------

_RUNG = Registry()


def register_pass(name: str, factory: PassFactory, help: str = "") -> None:
    """Make a rung pass part of every registry (used by rung's lowering packages)."""
    _RUNG.register_pass(name, factory, help=help)


def register_pipeline(name: str, text: str, help: str) -> None:
    """Make a named rung pipeline part of every registry (and an `opt --<name>` flag)."""
    _RUNG.add_pipeline(name, text, help)


def default_registry(*, include_xdsl: bool = True) -> Registry:
    """A fresh registry with xDSL's passes (unless told not to) and rung's."""
    registry = Registry()
    if include_xdsl:
        from xdsl.transforms import get_all_passes

        for name, factory in get_all_passes().items():
            if name in _RUNG.passes:
                continue  # rung registers its own version (see `_cse`)
            registry.register_pass(name, factory, origin="xDSL", help=_XDSL_PASS_HELP.get(name, ""))
    for name, factory in _RUNG.passes.items():
        help = _RUNG.pass_help.get(name, "")
        registry.register_pass(name, factory, origin=_RUNG.pass_origins[name], help=help)
    for pipeline in _RUNG.pipelines.values():
        registry.add_pipeline(pipeline.name, pipeline.text, pipeline.help, origin=pipeline.origin)
    options = _OPTIONS.get()
    for name, text in (options.replace if options is not None else {}).items():
        if name not in registry.pipelines:
            raise RungError(f"cannot replace pipeline '{name}': there is no such pipeline")
        registry.pipelines[name] = dataclasses.replace(registry.pipelines[name], text=text)
    return registry


_XDSL_PASS_HELP = {
    "canonicalize-dmp": "drop the empty exchanges of dmp.swap ops, and swaps left with none",
    "convert-arith-to-riscv": "lower arith ops to RISC-V instructions",
    "convert-arith-to-riscv-snitch": "lower vector arith ops to Snitch's packed-SIMD RISC-V ops",
    "convert-func-to-riscv-func": "lower func functions, calls and returns to riscv_func",
    "convert-linalg-to-memref-stream": "lower linalg.generic on memrefs to memref_stream ops",
    "convert-memref-to-riscv": "lower memref allocations, loads and stores to RISC-V",
    "convert-pdl-interp-to-eqsat-pdl-interp": "turn pdl_interp matchers into their e-graph form",
    "convert-print-format-to-riscv-debug": "lower printf.print_format to riscv_debug printf",
    "convert-ptr-to-llvm": "lower ptr_xdsl pointer ops to the llvm dialect",
    "convert-ptr-to-riscv": "lower ptr_xdsl pointer ops to RISC-V loads, stores and adds",
    "convert-ptr-type-offsets": "replace ptr_xdsl.type_offset with constant byte sizes",
    "convert-riscv-scf-to-riscv-cf": "lower riscv_scf loops to RISC-V labels and branches",
    "convert-scf-to-riscv-scf": "lower scf.for loops to riscv_scf.for",
    "convert-snitch-stream-to-snitch": "lower snitch_stream regions to Snitch stream setup ops",
    "convert-x86-scf-to-x86": "lower x86_scf loops to x86 labels and jumps",
    "eqsat-serialize-egraph": "print the e-graph of eqsat e-class ops as JSON",
    "frontend-desymrefy": "replace symref declare/fetch/update ops with SSA values",
    "gpu-map-parallel-loops": "map scf.parallel loops onto GPU grid and block dimensions",
    "lower-affine": "lower affine loops, loads, stores and maps to scf, memref and arith",
    "memref-to-gpu": "turn memref allocations and deallocations into gpu ones",
    "printf-to-llvm": "lower printf.print_format to calls of libc's printf in llvm",
    "printf-to-putchar": "lower printing of characters and integers to putchar calls",
    "reconcile-unrealized-casts": "remove chains of unrealized_conversion_cast that cancel out",
    "riscv-scf-for-infer-constant-step": "make a riscv_scf.for step known at compile time an "
    "immediate",
}
"""Lines for the xDSL passes whose classes carry no docstring, so that `opt --list-passes`
describes every pass."""


def _cse() -> type[ModulePass]:
    """rung's `cse` takes the place of xDSL's: same rules and results, but xDSL's copies
    its table of known ops into every nested region, which is quadratic in a function's
    size."""
    from rung.lowering.generic.cse import CommonSubexpressionEliminationPass

    return CommonSubexpressionEliminationPass


register_pass(
    "cse",
    _cse,
    "merge operations that compute the same value (common subexpressions), in linear time",
)


def _dce() -> type[ModulePass]:
    """rung's `dce` takes the place of xDSL's: same rules and results, with each op's
    effects computed once rather than at every sweep and for every nest around it."""
    from rung.lowering.generic.dce import DeadCodeEliminationPass

    return DeadCodeEliminationPass


register_pass(
    "dce",
    _dce,
    "remove operations whose results are unused and that have no side effects",
)


def _onnx_to_core() -> type[ModulePass]:
    from rung.lowering.onnx_to_core import OnnxToCorePass

    return OnnxToCorePass


def _torch_to_core() -> type[ModulePass]:
    from rung.lowering.torch_to_core import TorchToCorePass

    return TorchToCorePass


def _fold_constants() -> type[ModulePass]:
    from rung.lowering.core_opt import FoldConstantsPass

    return FoldConstantsPass


def _prune_conv_taps() -> type[ModulePass]:
    from rung.lowering.core_opt import PruneConvTapsPass

    return PruneConvTapsPass


def _fold_channel_scales() -> type[ModulePass]:
    from rung.lowering.core_opt import FoldChannelScalesPass

    return FoldChannelScalesPass


def _hoist_loop_invariants() -> type[ModulePass]:
    from rung.lowering.core_opt import HoistLoopInvariantsPass

    return HoistLoopInvariantsPass


def _core_to_kernel() -> type[ModulePass]:
    from rung.lowering.core_to_kernel import CoreToKernelPass

    return CoreToKernelPass


def _kernel_opt(module: str, cls: str) -> PassFactory:
    def factory() -> type[ModulePass]:
        import importlib

        return getattr(importlib.import_module(f"rung.lowering.kernel_opt.{module}"), cls)

    return factory


register_pass("convert-onnx-to-core", _onnx_to_core, "lower the onnx dialect to the core dialect")
register_pass(
    "convert-torch-to-core", _torch_to_core, "lower the torch dialect to the core dialect"
)
register_pass(
    "convert-core-to-kernel",
    _core_to_kernel,
    "lower core tensors to kernel buffers and loop nests",
)
register_pass(
    "core-fold-constants", _fold_constants, "evaluate core ops whose operands are constants"
)
register_pass(
    "core-prune-conv-taps",
    _prune_conv_taps,
    "drop convolution taps that read only padding; split convolutions that mostly do",
)
register_pass(
    "core-fold-channel-scales",
    _fold_channel_scales,
    "move a per-channel scale of a convolution's input onto its weights",
)
register_pass(
    "core-hoist-loop-invariants",
    _hoist_loop_invariants,
    "move the shape arithmetic a core.loop repeats before the loop",
)
register_pipeline(
    "lower-to-core",
    "convert-onnx-to-core,convert-torch-to-core,core-fold-constants,"
    "core-hoist-loop-invariants,cse,dce",
    "lower the onnx or torch dialect to the core dialect, folding constants",
)
register_pass(
    "kernel-drop-dead-buffers",
    _kernel_opt("dead_buffers", "DropDeadBuffersPass"),
    "remove buffers that are written but never read, and the loops that fill them",
)
register_pass(
    "kernel-fuse-elementwise",
    _kernel_opt("fuse", "FuseElementwisePass"),
    "fuse elementwise producer loops into their consumers",
)
register_pass(
    "kernel-fuse-epilogue",
    _kernel_opt("epilogue", "FuseEpiloguePass"),
    "fuse elementwise consumer loops into the nests whose results they read",
)
register_pass(
    "kernel-interchange",
    _kernel_opt("interchange", "InterchangePass"),
    "reorder loop nests for unit-stride access",
)
register_pass(
    "kernel-coalesce",
    _kernel_opt("coalesce", "CoalescePass"),
    "merge adjacent dims of a nest that walk memory as one dim",
)
register_pass(
    "kernel-fuse-matmul-epilogue",
    _kernel_opt("matmul_epilogue", "FuseMatmulEpiloguePass"),
    "move the elementwise nest after a matmul into the matmul's epilogue",
)
register_pass("kernel-tile", _kernel_opt("tile", "TilePass"), "tile loop nests for cache locality")
register_pass(
    "kernel-parallelize",
    _kernel_opt("parallelize", "ParallelizePass"),
    "mark outer loops to run in parallel (OpenMP)",
)
register_pass(
    "kernel-plan-memory",
    _kernel_opt("memory_plan", "PlanMemoryPass"),
    "place static buffers in one arena, sharing storage between disjoint lifetimes",
)
register_pipeline(
    "optimize-kernel",
    "kernel-fuse-elementwise,kernel-fuse-epilogue,kernel-drop-dead-buffers,cse,dce,"
    "kernel-interchange,kernel-coalesce,kernel-fuse-matmul-epilogue,kernel-tile,"
    "kernel-parallelize",
    "optimize loop nests of the kernel dialect: fuse, interchange, coalesce, fuse matmul "
    "epilogues, tile, parallelize",
)
register_pipeline(
    "core-to-kernel",
    "core-prune-conv-taps,core-fold-channel-scales,dce,convert-core-to-kernel,optimize-kernel,"
    "kernel-plan-memory",
    "lower the core dialect to the kernel dialect: buffers, optimized loop nests, a memory plan",
)
register_pipeline(
    "lower-to-kernel",
    "lower-to-core,core-to-kernel",
    "lower to the kernel dialect: buffers, loop nests, optimized, with a memory plan",
)


def _core_to_onnx() -> type[ModulePass]:
    from rung.lowering.core_to_onnx import CoreToOnnxPass

    return CoreToOnnxPass


register_pass(
    "convert-core-to-onnx",
    _core_to_onnx,
    "convert the core dialect back to the onnx dialect, to export it as ONNX",
)

__all__ = [
    "PassFactory",
    "PassReport",
    "Pipeline",
    "PipelineOptions",
    "Registry",
    "default_registry",
    "pipeline_options",
    "register_pass",
    "register_pipeline",
]
