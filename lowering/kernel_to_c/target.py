"""`opt -t c`: print the C that code generation makes of a kernel-dialect module.

For reading generated code next to its IR, and for lit tests of code
generation (`// RUN: opt %s -t c | filecheck %s`). `-t 'c{header=true}'`
prints the header instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.targets import Target


@dataclass(frozen=True)
class CTarget(Target):
    """The C source (or header) of a kernel-dialect module."""

    name = "c"

    prefix: str = "model"
    header: bool = False

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from .emit import generate_c

        program = generate_c(module, self.prefix)
        output.write(program.header if self.header else program.source)
