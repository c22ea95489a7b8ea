"""Op counts of the lowering passes, for a progress display.

The passes that convert one op at a time (a frontend to core, core to kernel)
are where a large model spends its lowering time, and their op count is what a
user can relate to the model. A command that shows progress installs a
reporter with `reporting_ops`; a pass counts with `OpCounter`. Nobody listening
costs one context-variable read per pass.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar

OpsReport = Callable[[str, int, int], None]
"""Called as (pass name, ops done, ops in all)."""

_REPORT: ContextVar[OpsReport | None] = ContextVar("rung_ops_report", default=None)

STEPS = 100
"""Reports per pass at most: a display needs no more, and a 20k-op model no fewer."""


@contextlib.contextmanager
def reporting_ops(report: OpsReport | None) -> Iterator[None]:
    """Within the block, the op-by-op passes report their counts to `report`."""
    token = _REPORT.set(report)
    try:
        yield
    finally:
        _REPORT.reset(token)


class OpCounter:
    """Counts the ops a pass has converted and reports every `total / STEPS` of them."""

    def __init__(self, pass_name: str, total: int) -> None:
        self.report = _REPORT.get()
        self.pass_name = pass_name
        self.total = total
        self.done = 0
        self.step = max(1, total // STEPS)
        if self.report is not None:
            self.report(pass_name, 0, total)

    def tick(self) -> None:
        """One more op converted."""
        if self.report is None:
            return
        self.done += 1
        if self.done % self.step == 0 or self.done == self.total:
            self.report(self.pass_name, min(self.done, self.total), self.total)
