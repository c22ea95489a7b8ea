"""`opt`: rung's pass driver, xdsl-opt over rung's dialects, passes and plugins.

    opt model.mlir -p 'canonicalize,cse' -o out.mlir
    opt model.onnx --lower-to-core            # short for -p lower-to-core
    opt --load-plugin my_patterns.py -p my-pass model.mlir
    opt --split-input-file --verify-diagnostics tests.mlir

It is `xdsl.xdsl_opt_main.xDSLOptMain` with rung's parts swapped in, so it has
xdsl-opt's flags and behaviour. What differs, and why:

* Text is read with `rung.dialects.parse_module` and written with
  `rung.dialects.print_module`: they carry `dense_resource` blobs (the weights)
  through the `{-# dialect_resources #-}` section, which xDSL's printer drops.
* `.onnx` / `.onnxtxt` inputs are imported first (the importer, and with it the
  `onnx` package, is loaded only for them, to keep start-up fast).
* Passes and named pipelines come from `rung.lowering.pipelines`, so plugins
  and rung's lowering packages extend `opt` the same way; every named pipeline
  also gets a flag, `--<name>`. Pipeline flags given before `-p` run before its
  passes, those given after run after them.
* Plugins (`--load-plugin FILE`, and installed `rung.plugins` entry points,
  see `rung.tools.plugins`) are loaded before the command line is parsed,
  because they add flags.
* Bad input of any kind ends in `opt: error: ...` and exit code 1, never a
  traceback, and the output file is written all at once or not at all.
  Option abbreviations are off: a plugin adding a pipeline must not make a
  working abbreviation ambiguous.
* `--time-passes` reports on stderr, so that it does not mix with the IR.
* Input is always verified as it is read; `--disable-verify` turns off the
  checks between passes (and xDSL's attribute checks).
* `--no-implicit-module` is refused: rung's reader always accepts both forms.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any, NoReturn

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute
from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import parse_spec
from xdsl.utils.diagnostic import Diagnostic
from xdsl.utils.exceptions import (
    DiagnosticException,
    ParseError,
    PassFailedException,
    ShrinkException,
    VerifyException,
)
from xdsl.xdsl_opt_main import _empty_post_init, xDSLOptMain

from rung import __version__
from rung.errors import RungError
from rung.lowering.pipelines import Registry, default_registry

from .common import (
    EXIT_ERROR,
    EXIT_OK,
    ProgressCallback,
    parse_error_text,
    progress_display,
    run_tool,
    write_output,
)
from .plugins import load_plugins

TOOL = "opt"

DESCRIPTION = (
    "rung's modular optimizer driver: reads MLIR (or imports .onnx/.onnxtxt), runs a "
    "pass pipeline over it, and prints the result."
)

ONNX_FORMATS = ("onnx", "onnxtxt", "onnxtext")
"""Input formats imported through the ONNX importer rather than parsed as MLIR."""

SPLIT_MARKER = b"// -----"


XDSL_TARGETS = ("mlir", "riscv-asm", "x86-asm", "arm-asm", "llvm")
"""xDSL's targets that opt offers: those that print their dialects. (`wat` and `wgsl`
print nothing for any input opt reads, `mps` is not implemented, and `csl` needs
modules no rung pipeline makes.)"""


def _c_target() -> type:
    from rung.lowering.kernel_to_c.target import CTarget

    return CTarget


class _ArgumentParser(argparse.ArgumentParser):
    """argparse whose usage errors become `opt: error: ...` and exit code 1."""

    def error(self, message: str) -> NoReturn:
        raise RungError(f"{message} (see '{self.prog} --help')")


class _PipelineFlag(argparse.Action):
    """`--<pipeline>`: records the pipeline, and whether `-p` came before it."""

    def __init__(
        self,
        option_strings: Sequence[str],
        dest: str,
        pipeline: str,
        help: str,
        default: object = None,
    ) -> None:
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)
        self.pipeline = pipeline

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        flags = list(getattr(namespace, self.dest, None) or [])
        flags.append((self.pipeline, bool(getattr(namespace, "passes", ""))))
        setattr(namespace, self.dest, flags)


class RungOptMain(xDSLOptMain):
    """xDSLOptMain with rung's dialects, passes, plugins, readers and printer."""

    version_format = f"opt (rung {__version__}) built from xdsl version {{xdsl_version}}"

    def __init__(self, args: Sequence[str] | None = None, registry: Registry | None = None) -> None:
        # This mirrors xDSLOptMain.__init__ (xdsl 0.74), which cannot be called
        # as is: it builds its own ArgumentParser, whose errors exit with code 2
        # and a usage banner instead of `opt: error: ...`.
        self.registry = registry if registry is not None else default_registry()
        self.available_frontends = {}
        self.available_passes = {}
        self.available_targets = {}
        self.ctx = Context()
        self.register_all_dialects()
        self.register_all_frontends()
        self.register_all_passes()
        self.register_all_targets()

        parser = _ArgumentParser(prog=TOOL, description=DESCRIPTION, allow_abbrev=False)
        self.register_all_arguments(parser)
        self.args = parser.parse_args(args=args)

        target = parse_spec(self.args.target).name
        if target not in self.available_targets:
            parser.error(
                f"argument -t/--target: invalid choice: '{target}' "
                f"(choose from {', '.join(self.available_targets)})"
            )
        _check_target_package(target)
        if self.args.no_implicit_module:
            raise RungError(
                "--no-implicit-module is not supported by opt: rung always reads a "
                "top-level module, implicit or not"
            )
        self.ctx.allow_unregistered = self.args.allow_unregistered_dialect
        if self.args.disable_verify:
            Attribute.__post_init__ = _empty_post_init  # type: ignore[method-assign]
        if self.args.syntax_highlight:
            Diagnostic.colored = True
        self.setup_pipeline()

    # ---- registration ------------------------------------------------------

    def register_all_dialects(self) -> None:
        """Nothing yet: the real context is built by `build_context` when input is read.

        Building it loads rung's dialects (the onnx dialect alone takes a third
        of a second), which `opt --help` and a bad command line do not need.
        """

    def build_context(self) -> Context:
        """rung's context (its dialects and the plugins'), plus xDSL's other dialects.

        xDSL's dialects are registered lazily, so that the output of xDSL's
        passes (e.g. `cf` after `convert-scf-to-cf`) reads back in.
        """
        from xdsl.dialects import get_all_dialects

        from rung.dialects import context

        ctx = context(allow_unregistered=self.args.allow_unregistered_dialect)
        known = set(ctx.registered_dialect_names)
        for name, factory in get_all_dialects().items():
            if name not in known:
                ctx.register_dialect(name, factory)
        return ctx

    def register_all_frontends(self) -> None:
        """MLIR text, and ONNX models (binary or textual) through the importer."""
        self.available_frontends["mlir"] = self._read_mlir
        self.available_frontends["onnx"] = self._read_onnx_binary
        self.available_frontends["onnxtxt"] = self._read_onnx_text
        self.available_frontends["onnxtext"] = self._read_onnx_text

    def register_all_passes(self) -> None:
        """xDSL's passes, rung's, and those plugins added, all from the registry."""
        for name, factory in self.registry.passes.items():
            self.register_pass(name, factory)

    def register_all_targets(self) -> None:
        """`c`, and the xDSL targets that work (`XDSL_TARGETS`), without scanning for
        xDSL plugins."""
        from xdsl.targets import get_all_targets

        offered = get_all_targets()
        self.available_targets.update({t: offered[t] for t in XDSL_TARGETS if t in offered})
        self.available_targets["c"] = _c_target

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        """xdsl-opt's flags, plus `--output`, plugin flags and one flag per pipeline."""
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument("--output", dest="output_file", help="same as -o/--output-file")
        arg_parser.add_argument(
            "--force", action="store_true", help="overwrite the output file if it exists"
        )
        arg_parser.add_argument(
            "--load-plugin",
            action="append",
            default=[],
            metavar="FILE",
            help="load a plugin file that defines register(registry) (repeatable)",
        )
        arg_parser.add_argument(
            "--no-plugins",
            action="store_true",
            help="do not load the plugins installed as 'rung.plugins' entry points",
        )
        arg_parser.add_argument(
            "--allow-partial",
            action="store_true",
            help="lowering passes leave ops they cannot lower instead of failing",
        )
        arg_parser.add_argument(
            "--list-passes",
            action="store_true",
            help="list the named pipelines and passes, then exit",
        )
        arg_parser.set_defaults(pipeline_flags=None)
        if not self.registry.pipelines:
            return
        group = arg_parser.add_argument_group(
            "pipelines", "each named pipeline, as a flag (--NAME is short for -p NAME)"
        )
        for name in sorted(self.registry.pipelines):
            pipeline = self.registry.pipelines[name]
            try:
                group.add_argument(
                    f"--{name}",
                    action=_PipelineFlag,
                    dest="pipeline_flags",
                    pipeline=name,
                    help=pipeline.help or f"run pipeline '{name}'",
                )
            except argparse.ArgumentError:
                raise RungError(
                    f"pipeline '{name}' (from {pipeline.origin}) cannot get its own flag: "
                    f"opt already has an option --{name}; rename the pipeline"
                ) from None

    # ---- the pipeline ------------------------------------------------------

    def pipeline_text(self) -> str:
        """The pass pipeline the command line asks for, named-pipeline flags included."""
        flags: list[tuple[str, bool]] = self.args.pipeline_flags or []
        before = [name for name, after_p in flags if not after_p]
        after = [name for name, after_p in flags if after_p]
        return ",".join(part for part in (*before, self.args.passes, *after) if part)

    def setup_pipeline(self) -> None:
        """Build the pipeline through the registry, which expands named pipelines."""
        self.pipeline = self.registry.build(self.pipeline_text(), self._between_passes)
        if self.args.allow_partial:
            # Every pass with an `allow_partial` option (the lowering passes) gets it.
            self.pipeline = dataclasses.replace(
                self.pipeline,
                passes=tuple(
                    dataclasses.replace(p, allow_partial=True)  # type: ignore[call-arg]
                    if any(f.name == "allow_partial" for f in dataclasses.fields(p))
                    else p
                    for p in self.pipeline.passes
                ),
            )
        self._pass_started = time.perf_counter()
        self._progress: ProgressCallback | None = None
        self._passes_done = 0

    def _between_passes(
        self, previous: ModulePass | None, module: ModuleOp, following: ModulePass | None
    ) -> None:
        """Verify after each pass, and time and print as asked.

        The input was verified as it was read, so nothing is checked before the
        first pass.
        """
        now = time.perf_counter()
        if self._progress is not None:
            self._passes_done = 0 if previous is None else self._passes_done + 1
            self._progress("passes", self._passes_done, len(self.pipeline.passes))
        if self.args.time_passes and previous is not None:
            print(f"Pass {previous.name} took {now - self._pass_started} seconds", file=sys.stderr)
        if previous is not None and not self.args.disable_verify:
            try:
                module.verify()
            except VerifyException as err:
                raise _with_notes(
                    VerifyException(f"the IR does not verify after pass '{previous.name}': {err}"),
                    err,
                ) from None
        if previous is not None and following is not None and self.args.print_between_passes:
            print(f"IR after {previous.name}:")
            print(self.print_module(module))
        self._pass_started = time.perf_counter()

    def apply_passes(self, prog: ModuleOp) -> None:
        """Run the pipeline; a RungError from a pass is a diagnostic like any other."""
        try:
            self.pipeline.apply(self.ctx, prog)
        except RungError as err:
            raise PassFailedException(str(err)) from err

    # ---- input -------------------------------------------------------------

    def get_input_name(self) -> str:
        """The input's name in messages and in parsed locations."""
        path = self.args.input_file
        return "<stdin>" if path in (None, "-") else path

    def input_format(self) -> str:
        """The input's format: from -f, else from the file's suffix (stdin is MLIR)."""
        if self.args.frontend:
            return self.args.frontend
        path = self.args.input_file
        if path in (None, "-"):
            return "mlir"
        if Path(path).is_dir():
            raise RungError(f"cannot read '{path}': it is a directory")
        suffix = Path(path).suffix.removeprefix(".")
        if suffix not in self.available_frontends:
            shown = f"its suffix '.{suffix}'" if suffix else "a name without a suffix"
            raise RungError(
                f"cannot tell the format of '{path}' from {shown}: name it .mlir, .onnx or "
                f".onnxtxt, or give the format with -f ({', '.join(self.available_frontends)})"
            )
        return suffix

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        path = self.args.input_file
        fmt = self.input_format()
        if path in (None, "-"):
            return sys.stdin.buffer, fmt
        try:
            return open(path, "rb"), fmt
        except OSError as err:
            raise RungError(f"cannot read '{path}': {err.strerror or err}") from None

    def prepare_input(self) -> tuple[list[tuple[IO[bytes], int]], str]:
        """The input in chunks (one unless --split-input-file), with their line offsets."""
        fmt = self.input_format()
        if fmt in ONNX_FORMATS:
            if self.args.split_input_file:
                raise RungError("--split-input-file applies to MLIR text, not to ONNX models")
            if self._import_by_path(fmt):
                return [(io.BytesIO(), 0)], fmt
        stream, fmt = self.get_input_stream()
        try:
            data = stream.read()
        except OSError as err:
            raise RungError(f"cannot read '{self.get_input_name()}': {err}") from None
        finally:
            if stream is not sys.stdin.buffer:
                stream.close()
        if not self.args.split_input_file:
            return [(io.BytesIO(data), 0)], fmt
        chunks: list[tuple[IO[bytes], int]] = []
        offset = 0
        for piece in data.split(SPLIT_MARKER):
            chunks.append((io.BytesIO(piece), offset))
            offset += piece.count(b"\n")
        return chunks, fmt

    def parse_chunk(
        self, chunk: IO[bytes], file_extension: str, start_offset: int = 0
    ) -> ModuleOp | None:
        if self._import_by_path(file_extension):
            from rung.importers.onnx import import_model

            return import_model(self.args.input_file)
        return self.available_frontends[file_extension](chunk)

    def _import_by_path(self, fmt: str) -> bool:
        """Whether the input is an ONNX file the importer can read from its path.

        That is the usual case, and the importer then finds external data
        beside the model. A file whose suffix says otherwise (e.g. `-f onnx
        model.bin`) is read here and given to the importer as a ModelProto.
        """
        path = self.args.input_file
        if fmt not in ONNX_FORMATS or path in (None, "-"):
            return False
        suffix = Path(path).suffix.removeprefix(".")
        return suffix == fmt or {suffix, fmt} == {"onnxtxt", "onnxtext"}

    def _onnx_base_dir(self) -> Path | None:
        path = self.args.input_file
        return None if path in (None, "-") else Path(path).resolve().parent

    def _read_mlir(self, chunk: IO[bytes]) -> ModuleOp:
        from rung.dialects import parse_module

        return parse_module(
            _decode(chunk.read(), self.get_input_name()), self.get_input_name(), self.ctx
        )

    def _read_onnx_binary(self, chunk: IO[bytes]) -> ModuleOp:
        from rung.importers.onnx import import_model
        from rung.importers.onnx.loader import parse_binary

        model = parse_binary(chunk.read(), self.get_input_name())
        return import_model(model, base_dir=self._onnx_base_dir())

    def _read_onnx_text(self, chunk: IO[bytes]) -> ModuleOp:
        from rung.importers.onnx import import_model
        from rung.importers.onnx.loader import parse_text

        text = _decode(chunk.read(), self.get_input_name())
        model = parse_text(text, self.get_input_name())
        return import_model(model, base_dir=self._onnx_base_dir())

    # ---- output ------------------------------------------------------------

    def print_module(self, module: ModuleOp) -> str:
        """The module's text, resources included, as the printing flags ask."""
        from rung.dialects import print_module

        if not (self.args.print_no_properties or self.args.syntax_highlight):
            return print_module(
                module, generic=self.args.print_op_generic, debuginfo=self.args.print_debuginfo
            )
        return _print_with_options(
            module,
            generic=self.args.print_op_generic,
            debuginfo=self.args.print_debuginfo,
            properties_as_attributes=self.args.print_no_properties,
            highlight=self.args.syntax_highlight,
        )

    def output_resulting_program(self, prog: ModuleOp) -> str:
        target = parse_spec(self.args.target).name
        if target == "c":
            return super().output_resulting_program(prog)
        if target != "mlir":
            _check_target_dialect(target, prog)
            emit = super().output_resulting_program
            return _xdsl_target_output(target, lambda: emit(prog))
        return self.print_module(prog)

    # ---- the run -----------------------------------------------------------

    def run(self) -> None:
        """Read, run the pipeline and print, chunk by chunk; write the output once."""
        if self.args.list_passes:
            write_output(None, self.list_passes())
            return
        self.ctx = self.build_context()
        chunks, fmt = self.prepare_input()
        to_file = self.args.output_file not in (None, "-")
        pieces: list[str] = []

        def diagnostic(text: str) -> None:
            # As in xdsl-opt, diagnostics go to stdout, in place of the chunk's IR.
            if to_file:
                print(text)
            else:
                pieces.append(text if text.endswith("\n") else text + "\n")

        try:
            # Many small chunks (test files) gain nothing from a display of stages.
            with progress_display() as show:
                if not (self.args.split_input_file or self.args.verify_diagnostics):
                    self._progress = show
                self._run_chunks(chunks, fmt, pieces, diagnostic)
        except ShrinkException:
            assert self.args.shrink
            print("Success, can shrink")
            raise SystemExit(EXIT_OK) from None
        finally:
            self._progress = None
        if self.args.shrink:
            print("Failure, can't shrink")
            raise SystemExit(EXIT_ERROR)
        write_output(
            self.args.output_file, "".join(pieces), inputs=self._inputs(), force=self.args.force
        )

    def _run_chunks(
        self,
        chunks: list[tuple[IO[bytes], int]],
        fmt: str,
        pieces: list[str],
        diagnostic: Callable[[str], None],
    ) -> None:
        """Parse, transform and print each chunk into `pieces`; diagnostics as asked."""
        show = self._progress
        for i, (chunk, offset) in enumerate(chunks):
            if i > 0:
                pieces.append("// -----\n")
            try:
                if show is not None:
                    show("read", 0, None)
                module = self.parse_chunk(chunk, fmt, offset)
                if module is not None:
                    self.apply_passes(module)
                    if show is not None:
                        show("print", 0, None)
                    pieces.append(self.output_resulting_program(module))
            except ParseError as err:
                err.span = dataclasses.replace(err.span, line_offset=offset)
                if not self.args.parsing_diagnostics:
                    raise RungError(parse_error_text(err)) from None
                diagnostic(str(err))
            except DiagnosticException as err:
                if not self.args.verify_diagnostics:
                    raise RungError(self._error_text(err)) from None
                diagnostic("\n".join([str(err), *getattr(err, "__notes__", [])]))
            finally:
                chunk.close()

    def _inputs(self) -> tuple[str, ...]:
        path = self.args.input_file
        return () if path in (None, "-") else (path,)

    def _error_text(self, err: DiagnosticException) -> str:
        """`<input>: <message>`, then the offending op as the diagnostic printed it."""
        lines = [f"{self.get_input_name()}: {str(err).strip() or type(err).__name__}"]
        op_line = _marked_op(getattr(err, "__notes__", []))
        if op_line:
            lines += ["  in operation:", f"    {op_line}"]
        return "\n".join(lines)

    def list_passes(self) -> str:
        """Named pipelines and passes, one a line, for --list-passes."""
        out = io.StringIO()
        rows = list(self.registry.describe())
        width = max((len(name) for _, name, _ in rows), default=0)
        for title, kind in (("Pipelines", "pipeline"), ("Passes", "pass")):
            out.write(f"{title}:\n")
            for row_kind, name, text in rows:
                if row_kind == kind:
                    out.write(f"  {name.ljust(width)}  {text}".rstrip() + "\n")
        return out.getvalue()


_TARGET_DIALECTS = {
    "riscv-asm": ("riscv", "rv32", "rv64", "snitch"),
    "x86-asm": ("x86",),
    "arm-asm": ("arm",),
    "llvm": ("llvm",),
}
"""The dialects (name prefixes) whose ops each xDSL target prints."""


_TARGET_PACKAGES = {"llvm": "llvmlite"}
"""The optional Python package each xDSL target needs to print anything."""


def _check_target_package(target: str) -> None:
    """Refuse, before reading any input, a target whose optional package is missing."""
    import importlib.util

    package = _TARGET_PACKAGES.get(target)
    if package is not None and importlib.util.find_spec(package) is None:
        raise RungError(
            f"target '{target}' needs the optional package {package}: pip install {package}"
        )


def _check_target_dialect(target: str, module: ModuleOp) -> None:
    """Refuse, naming the first foreign op, a module the target cannot print."""
    prefixes = _TARGET_DIALECTS.get(target)
    if prefixes is None:
        return
    for op in module.walk():
        if op is not module and not op.name.split(".", 1)[0].startswith(prefixes):
            raise RungError(
                f"target '{target}' prints {prefixes[0]} ops only; the module holds "
                f"'{op.name}' (lower it to the {prefixes[0]} dialect first, or use -t mlir "
                "or -t c)"
            )


def _xdsl_target_output(target: str, emit: Callable[[], str]) -> str:
    """An xDSL target's output, with what it raises on a module it cannot print (or on
    a missing optional package) turned into one line."""
    try:
        return emit()
    except ModuleNotFoundError as err:
        package = (err.name or "?").split(".", 1)[0]
        raise RungError(
            f"target '{target}' needs the Python package '{package}', which is not "
            f"installed (pip install {package})"
        ) from None
    except RungError:
        raise
    except Exception as err:
        detail = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise RungError(
            f"target '{target}' cannot print this module (it prints its own dialect's "
            f"ops): {detail}"
        ) from None


def _decode(data: bytes, name: str) -> str:
    """MLIR text is UTF-8; anything else is most likely a binary model given the wrong suffix."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise RungError(
            f"'{name}' is not UTF-8 text (bad byte at offset {err.start}); "
            "binary ONNX models need the .onnx suffix or -f onnx"
        ) from None


_MARKER = re.compile(r"^\s*\^+-*\s*$")


def _marked_op(notes: Sequence[str]) -> str | None:
    """The op line a verifier diagnostic underlined (the line above the `^^^` marker)."""
    for note in notes:
        lines = note.splitlines()
        for i, line in enumerate(lines[1:], start=1):
            if _MARKER.match(line):
                return lines[i - 1].strip()
    return None


def _with_notes(new: BaseException, old: BaseException) -> BaseException:
    """`new`, carrying the annotated IR that xDSL attached to `old` as notes."""
    for note in getattr(old, "__notes__", []):
        new.add_note(note)
    return new


def _print_with_options(
    module: ModuleOp,
    *,
    generic: bool,
    debuginfo: bool,
    properties_as_attributes: bool,
    highlight: bool,
) -> str:
    """print_module, for the printer options it does not take (resources still included)."""
    from xdsl.printer import Printer
    from xdsl.syntax_printer import SyntaxPrinter

    from rung.dialects import _print_resources
    from rung.dialects.resources import store_of

    stream = io.StringIO()
    cls = SyntaxPrinter if highlight else Printer
    printer = cls(
        stream=stream,
        print_generic_format=generic,
        print_properties_as_attributes=properties_as_attributes,
        print_debuginfo=debuginfo,
    )
    printer.print_op(module)
    printer.print_string("\n")
    _print_resources(stream, store_of(module), printer._dialect_resources.get("builtin", set()))
    return stream.getvalue()


def _early_options(argv: Sequence[str]) -> argparse.Namespace:
    """The plugin flags, read before the full parser exists (plugins add flags to it)."""
    early = _ArgumentParser(prog=TOOL, add_help=False, allow_abbrev=False)
    early.add_argument("--load-plugin", action="append", default=[])
    early.add_argument("--no-plugins", action="store_true")
    known, _ = early.parse_known_args(list(argv))
    return known


def make_tool(argv: Sequence[str], registry: Registry | None = None) -> RungOptMain:
    """An opt ready to run: plugins loaded and the command line parsed."""
    registry = registry if registry is not None else default_registry()
    early = _early_options(argv)
    load_plugins(registry, early.load_plugin, entry_points=not early.no_plugins)
    return RungOptMain(argv, registry)


def main(argv: Sequence[str] | None = None) -> int:
    """Run opt; the exit code is 0 on success and 1 for any bad input."""
    args = list(sys.argv[1:] if argv is None else argv)

    def body() -> int:
        # --disable-verify and --syntax-highlight switch xDSL globals; a run in
        # a longer-lived process (tests, notebooks) must not leave them switched.
        saved = Attribute.__post_init__, Diagnostic.colored
        try:
            make_tool(args).run()
        finally:
            Attribute.__post_init__, Diagnostic.colored = saved  # type: ignore[method-assign]
        return EXIT_OK

    try:
        return run_tool(TOOL, body)
    except SystemExit as done:  # --help, --version, --shrink
        return _exit_code(done.code)


def _exit_code(code: Any) -> int:
    """An int exit code from SystemExit's code (None means success, text means failure)."""
    if code is None:
        return EXIT_OK
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
