"""core → kernel: the tensor family (handlers register with `@lowers`)."""

from __future__ import annotations
