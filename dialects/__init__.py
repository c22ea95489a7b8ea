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
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    Builtin,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FloatAttr,
    ModuleOp,
)
from xdsl.dialects.cf import Cf
from xdsl.dialects.func import Func
from xdsl.dialects.math import Math
from xdsl.dialects.scf import Scf
from xdsl.ir import Attribute, Block, BlockArgument, Dialect, Operation, OpResult, SSAValue
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import MultipleSpansParseError, ParseError, VerifyException

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
    from .torch import TORCH

    ctx = Context(allow_unregistered=allow_unregistered)
    ctx.load_dialect(_fresh_builtin())
    for dialect in (Func, Arith, Math, Scf, Cf, ONNX, TORCH, Core, Kernel):
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
    try:
        module = Parser(ctx, text, name).parse_module()
    except (ParseError, VerifyException):
        raise
    except NotImplementedError:  # xDSL cannot pack dense data of some float widths (f80)
        raise VerifyException(
            f"{name}: a float value of a type that is not supported (use f16, bf16, f32 or f64)"
        ) from None
    except ValueError as err:  # xDSL reports some malformed references so, without a position
        raise VerifyException(f"{name}: {err}") from None
    except (ArithmeticError, LookupError, TypeError) as err:  # `array<i0: 1>` divides by 0
        raise VerifyException(f"{name}: malformed input ({type(err).__name__}: {err})") from None
    interface = builtin.get_interface(OpAsmDialectInterface)
    assert interface is not None
    store = store_of(module)
    for handle, blob in interface._blob_storage.items():  # noqa: SLF001
        if blob:
            store.set_hex(handle, blob)
    for op in module.walk():
        for attr in (*op.attributes.values(), *op.properties.values()):
            _check_floats(attr)
    _check_dominance(module)
    module.verify()
    return module


def _check_dominance(module: ModuleOp) -> None:
    """Refuse a value used where its definition does not come first (`%a = op(%a)`).

    xDSL's verifier does not check dominance, and lowering such a cycle ends
    in an internal error far from the cause. A value defined in a block may be
    used later in that block, or in regions nested there.
    """
    order: dict[Operation, int] = {}
    for op in module.walk():
        block = op.parent_block()
        if block is not None and op not in order:
            for i, sibling in enumerate(block.ops):
                order[sibling] = i
    for op in module.walk():
        for value in op.operands:
            if not _dominates(value, op, order):
                raise VerifyException(
                    f"'{op.name}' uses %{value.name_hint or '<unnamed>'} where its definition "
                    "does not come first"
                )


def _dominates(value: SSAValue, user: Operation, order: dict[Operation, int]) -> bool:
    if isinstance(value, BlockArgument):
        block: Block | None = user.parent_block()
        while block is not None and block is not value.block:
            parent = block.parent_op()
            block = parent.parent_block() if parent is not None else None
        return block is not None
    if not isinstance(value, OpResult):
        return False  # a reference the parser never resolved
    definer = value.op
    home = definer.parent_block()
    at: Operation | None = user
    while at is not None and at.parent_block() is not home:
        at = at.parent_op()
    return at is not None and at is not definer and order[definer] < order[at]


def _packs(element: Attribute) -> bool:
    """Whether xDSL can pack values of the float type `element` (f80 and f128: no)."""
    try:
        element.pack([0.0])  # type: ignore[attr-defined]
    except NotImplementedError:
        return False
    return True


def _check_floats(attr: Attribute) -> None:
    """Refuse float values of a width xDSL parses but cannot verify or print (`2 : f80`).

    xDSL packs neither f80 nor f128 values; such a value would fail later with
    a bare NotImplementedError in the verifier or the printer.
    """
    if isinstance(attr, FloatAttr | DenseIntOrFPElementsAttr):
        element = attr.type if isinstance(attr, FloatAttr) else attr.get_element_type()
        if isinstance(element, AnyFloat) and not _packs(element):
            raise VerifyException(
                f"a float value of type {element} is not supported (use f16, bf16, f32 or f64)"
            )
    elif isinstance(attr, ArrayAttr):
        for item in attr.data:
            _check_floats(item)
    elif isinstance(attr, DictionaryAttr):
        for item in attr.data.values():
            _check_floats(item)


def parse_error_text(err: ParseError) -> str:
    """xDSL's located message, reordered so the first line says what is wrong."""
    context = err.span.print_with_context().splitlines()[1:]
    text = [f"{err.span.get_location()}: {err.msg}", *context]
    if isinstance(err, MultipleSpansParseError):
        if err.ref_text is not None:
            text.append(err.ref_text.rstrip())
        for span, msg in err.refs:
            text.append(span.print_with_context(msg).rstrip())
    return "\n".join(text)


__all__ = ["context", "parse_error_text", "parse_module", "print_module", "register_dialect"]
