"""core → kernel: the linalg family (handlers register with `@lowers`)."""

from __future__ import annotations
