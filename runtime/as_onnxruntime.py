"""Run a script written for onnxruntime on rung, without changing a line of it.

    python -m rung.runtime.as_onnxruntime script.py [ARGS...]

The script's `import onnxruntime` (and `import onnxruntime as ort`) gets
`rung.runtime`, whose `InferenceSession`, `SessionOptions`,
`GraphOptimizationLevel`, `ExecutionMode`, `get_available_providers` and
`get_device` take onnxruntime's arguments. This is the way to check a deployed
script against rung as it stands, rather than a copy edited by hand.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import rung.runtime


def run_script(script: str, args: list[str]) -> None:
    """Runs `script` as `__main__` with `sys.argv = [script, *args]`, `onnxruntime` being rung."""
    if not Path(script).is_file():
        raise SystemExit(f"rung: error: no such script: '{script}'")
    sys.modules["onnxruntime"] = rung.runtime
    sys.argv = [script, *args]
    sys.path.insert(0, str(Path(script).resolve().parent))
    runpy.run_path(script, run_name="__main__")


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip().splitlines()[2].strip())
        raise SystemExit(0 if len(sys.argv) >= 2 else 1)
    run_script(sys.argv[1], sys.argv[2:])


if __name__ == "__main__":
    main()
