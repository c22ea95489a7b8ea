"""core → kernel: the reduce family (handlers register with `@lowers`)."""

from __future__ import annotations
