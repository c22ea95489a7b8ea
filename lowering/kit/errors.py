"""The one error a lowering to core raises for a form it does not handle."""

from __future__ import annotations

from rung.errors import RungError


class LoweringError(RungError):
    """An op has a form this lowering does not (yet) handle; the legality check reports it.

    Raised by handlers (and by the builder they call), it leaves the op in
    place with the message as the reason, instead of failing the whole pass
    in the middle of a rewrite.
    """


__all__ = ["LoweringError"]
