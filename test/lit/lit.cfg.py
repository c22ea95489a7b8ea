"""lit configuration for rung's FileCheck tests (`lit test/lit -v`).

Tests are `.mlir` and `.onnxtxt` files whose RUN lines call the tools a user
would run (`opt`, `rung`, `filecheck`). They resolve from the `bin` folder of
the Python that runs lit, so running `<venv>/bin/lit` tests that venv's rung.
Files in `Inputs/` folders are data for tests, not tests themselves.
"""

from __future__ import annotations

import os
import sys

import lit.formats

# `config` is injected by lit.
config = globals()["config"]

config.name = "rung"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".onnxtxt"]
config.excludes = ["Inputs", "Output", "lit.cfg.py", "__pycache__"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))

# The tools of the running interpreter's environment come first on PATH.
_bin = os.path.dirname(sys.executable)
config.environment["PATH"] = os.pathsep.join(
    [_bin, config.environment.get("PATH", os.environ.get("PATH", ""))]
)

# What Python and the tools need from the caller's environment.
for _name in (
    "HOME",
    "TMPDIR",
    "TEMP",
    "TMP",
    "LANG",
    "LC_ALL",
    "PYTHONPATH",
    "VIRTUAL_ENV",
    "SYSTEMROOT",
    "CC",
    "CFLAGS",
    "RUNG_CACHE_DIR",
):
    if _name in os.environ:
        config.environment[_name] = os.environ[_name]
config.environment["PYTHONIOENCODING"] = "utf-8"
# Plugin files loaded from Inputs/ would otherwise leave __pycache__ folders there.
config.environment["PYTHONDONTWRITEBYTECODE"] = "1"

config.substitutions.append(("%python", sys.executable))
