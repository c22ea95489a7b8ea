"""core → kernel: the control family (handlers register with `@lowers`)."""

from __future__ import annotations
