"""Python's garbage collector while a model is lowered and compiled.

Lowering makes and drops IR by the hundred thousand objects, and CPython's full
collection, a scan of every object, comes after every ten younger collections:
its time grows as the square of the model's size. `rare_full_collections`
holds it back for the length of a compilation.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

FULL_COLLECTIONS_EVERY = 1000
"""While a model is compiled, Python's full garbage collection waits for this many
younger ones (instead of 10)."""


@dataclass
class _Collections:
    """How many compilations are inside `rare_full_collections`, and the thresholds to
    restore when the last leaves."""

    users: int = 0
    saved: tuple[int, ...] = ()
    lock: threading.Lock = field(default_factory=threading.Lock)


_COLLECTIONS = _Collections()


@contextlib.contextmanager
def rare_full_collections() -> Iterator[None]:
    """Python's full collection scans every object, and it comes after every ten younger
    collections while lowering makes IR: its time grew as the square of the model's size,
    4.5 of the 31 s of CPU a 4,000-node model took to lower (12 collections), and would
    pass half past 20,000. Younger collections still free what dies young; what the IR
    leaves in the oldest generation (about 15% more memory) waits for the next full
    collection after. Nested and concurrent uses restore the thresholds once, at the end."""
    state = _COLLECTIONS
    with state.lock:
        if state.users == 0:
            state.saved = gc.get_threshold()
            gc.set_threshold(*state.saved[:2], max(state.saved[2], FULL_COLLECTIONS_EVERY))
        state.users += 1
    try:
        yield
    finally:
        with state.lock:
            state.users -= 1
            if state.users == 0:
                gc.set_threshold(*state.saved)


__all__ = ["FULL_COLLECTIONS_EVERY", "rare_full_collections"]
