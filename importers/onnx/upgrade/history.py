"""The schema history of ONNX ops, as onnx knows it: every version of every op.

Rules are keyed by the version a node upgrades *from*; the history says
which version a node is at for a given opset and which comes next.
"""

from __future__ import annotations

import bisect
import functools
from dataclasses import dataclass

import onnx

DEFAULT = ""
"""The default domain, ai.onnx, as rules key it."""
ML = "ai.onnx.ml"
DEFAULT_SPELLINGS = ("", "ai.onnx")


@dataclass(frozen=True)
class OpHistory:
    """The schema versions of one op, and where it was removed."""

    versions: tuple[int, ...]  # since_versions, ascending
    # The since_version of a final "deprecated" schema: the op was removed there
    # (Upsample-10, Scatter-11). Older schemas superseded by a newer one are
    # flagged deprecated too (GroupNormalization-18); that means nothing here.
    removed: int | None

    def at(self, opset: int) -> int | None:
        """The since_version in force at `opset`, or None if the op did not exist yet."""
        i = bisect.bisect_right(self.versions, opset)
        return self.versions[i - 1] if i else None

    def after(self, version: int, limit: int) -> int | None:
        """The next since_version after `version` that is still <= `limit`."""
        i = bisect.bisect_right(self.versions, version)
        if i < len(self.versions) and self.versions[i] <= limit:
            return self.versions[i]
        return None


@functools.cache
def schema_histories() -> dict[str, dict[str, OpHistory]]:
    """Per domain, per op: all schema versions onnx knows. Cached: costs ~15 ms."""
    raw: dict[str, dict[str, list[tuple[int, bool]]]] = {DEFAULT: {}, ML: {}}
    for schema in onnx.defs.get_all_schemas_with_history():
        if schema.domain in raw:
            raw[schema.domain].setdefault(schema.name, []).append(
                (schema.since_version, schema.deprecated)
            )
    histories: dict[str, dict[str, OpHistory]] = {}
    for domain, ops in raw.items():
        histories[domain] = {}
        for op, entries in ops.items():
            entries.sort()
            last, last_deprecated = entries[-1]
            histories[domain][op] = OpHistory(
                tuple(v for v, _ in entries), last if last_deprecated else None
            )
    return histories


@functools.cache
def latest_opset(domain: str) -> int:
    """The newest opset onnx knows for `domain`."""
    if domain == DEFAULT:
        return onnx.defs.onnx_opset_version()
    return max(v for h in schema_histories()[domain].values() for v in h.versions)


def canon_domain(domain: str) -> str:
    """One spelling of the default domain ('' and 'ai.onnx' are the same)."""
    return DEFAULT if domain in DEFAULT_SPELLINGS else domain
