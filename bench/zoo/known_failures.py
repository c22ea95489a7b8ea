"""Zoo models that do not pass today, each with its status and reason.

`test/python/test_zoo.py` marks them as strict xfails that must fail with the
same status, so a fix shows up as an unexpected pass and its entry must go.
The statuses are those of `zoo.check`; the reasons are the errors' gist.
"""

from __future__ import annotations

EXPORT = "export-fails"

KNOWN_FAILURES: dict[str, tuple[str, str]] = {
    "ssdlite320_mobilenet_v3_large/dynamo": (
        EXPORT,
        "torch.export: data-dependent guard in the detection post-processing",
    ),
}
