"""rung's dialects, and reading and writing modules that use them, resources included.

`context()` gives a Context with every dialect rung knows. `print_module` and
`parse_module` are the only way rung's tools write and read IR text: they carry
the `dense_resource` blobs of a module in the `{-# dialect_resources #-}`
section, which plain `str(module)` drops.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable

from xdsl.context import Context
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.dialects.cf import Cf
from xdsl.dialects.func import Func
from xdsl.dialects.math import Math
from xdsl.dialects.scf import Scf
from xdsl.ir import Dialect
from xdsl.parser import Parser
from xdsl.printer import Printer

from . import _xdsl_fixes
from .resources import BlobStore, store_of

_xdsl_fixes.install()

_EXTRA_DIALECTS: dict[str, Callable[[], Dialect]] = {}


def register_dialect(name: str, loader: Callable[[], Dialect]) -> None:
    """Make a dialect (e.g. from a plugin) part of every context rung creates."""
    _EXTRA_DIALECTS[name] = loader


def _fresh_builtin() -> Dialect:
    """The builtin dialect with a resource store private to one context."""
    return Dialect(
        "builtin", list(Builtin.operations), list(Builtin.attributes), [OpAsmDialectInterface()]
    )


def context(allow_unregistered: bool = False) -> Context:
    """A Context with every rung dialect (and the xDSL ones they build on) loaded."""
    from .core import Core
    from .kernel import Kernel
    from .onnx import ONNX

    ctx = Context(allow_unregistered=allow_unregistered)
    ctx.load_dialect(_fresh_builtin())
    for dialect in (Func, Arith, Math, Scf, Cf, ONNX, Core, Kernel):
        ctx.load_dialect(dialect)
    for name, loader in _EXTRA_DIALECTS.items():
        if name not in ctx.registered_dialect_names:
            ctx.register_dialect(name, loader)
    return ctx


def print_module(
    module: ModuleOp,
    *,
    generic: bool = False,
    debuginfo: bool = False,
) -> str:
    """The MLIR text of `module`, with its resource blobs at the end.

    As in MLIR, the generic form prints locations (node names) only with
    `debuginfo`; the custom form always prints those of onnx ops.
    """
    stream = io.StringIO()
    printer = Printer(stream=stream, print_generic_format=generic, print_debuginfo=debuginfo)
    printer.print_op(module)
    printer.print_string("\n")
    handles = printer._dialect_resources.get("builtin", set())
    _print_resources(stream, store_of(module), handles)
    return stream.getvalue()


def _print_resources(stream: io.StringIO, store: BlobStore, handles: Iterable[str]) -> None:
    present = sorted(h for h in handles if h in store.blobs)
    if not present:
        return
    stream.write("\n{-#\n  dialect_resources: {\n    builtin: {\n")
    for i, handle in enumerate(present):
        sep = "," if i + 1 < len(present) else ""
        stream.write(f'      {handle}: "{store.hex(handle)}"{sep}\n')
    stream.write("    }\n  }\n#-}\n")


def parse_module(text: str, name: str = "<input>", ctx: Context | None = None) -> ModuleOp:
    """Parse MLIR text into a verified module that owns its resource blobs.

    Raises xDSL's ParseError or VerifyException on bad input; callers at the
    tool boundary turn them into diagnostics.
    """
    ctx = (ctx or context()).clone()
    # A fresh blob store per parse: handles from different files never clash.
    builtin = _fresh_builtin()
    ctx._loaded_dialects["builtin"] = builtin  # noqa: SLF001
    module = Parser(ctx, text, name).parse_module()
    interface = builtin.get_interface(OpAsmDialectInterface)
    assert interface is not None
    store = store_of(module)
    for handle, blob in interface._blob_storage.items():  # noqa: SLF001
        if blob:
            store.set_hex(handle, blob)
    module.verify()
    return module


__all__ = ["context", "parse_module", "print_module", "register_dialect"]
