"""Node cases that pass at level core but not yet at level kernel, each with the reason.

`test_onnx_to_kernel` marks them as strict xfails, so a fix shows up as an
unexpected pass and the entry must go.
"""

from __future__ import annotations

KNOWN_FAILURES: dict[str, str] = {}
