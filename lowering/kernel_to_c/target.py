"""`opt -t c`: print the C that code generation makes of a kernel-dialect module.

For reading generated code next to its IR, and for lit tests of code
generation (`// RUN: opt %s -t c | filecheck %s`). `-t 'c{header=true}'`
prints the header instead; `-t 'c{outline-above-lines=20 part-lines=10}'`
splits `_run` into parts at a smaller size than models are (see `outline`),
`cold-work=N cold-lines=M` sets when a run of small ops is a cold part.
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
    outline_above_lines: int | None = None
    part_lines: int | None = None
    cold_work: int | None = None
    cold_lines: int | None = None

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from .emit import generate_c
        from .outline import COLD_LINES, COLD_WORK, OUTLINE_ABOVE_LINES, PART_LINES, Outlining

        outlining = Outlining(
            self.outline_above_lines
            if self.outline_above_lines is not None
            else OUTLINE_ABOVE_LINES,
            self.part_lines if self.part_lines is not None else PART_LINES,
            self.cold_work if self.cold_work is not None else COLD_WORK,
            self.cold_lines if self.cold_lines is not None else COLD_LINES,
        )
        program = generate_c(module, self.prefix, outlining=outlining)
        output.write(program.header if self.header else program.source)
