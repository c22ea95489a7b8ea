"""Where exports are kept between runs: a folder per set of library versions.

Exporting is the slow part of the zoo (seconds to minutes a model), so each
export is written once under `$RUNG_ZOO_CACHE` (default `~/.cache/rung/zoo`)
in a folder named by a hash of the exporting libraries' versions; a new torch
or transformers starts a new folder. A failed export leaves a `.error` file
with its message instead, so a model that cannot be exported is not retried on
every run. The file name carries a hash of the spec's inputs and outputs, so
a changed spec is exported again.
"""

from __future__ import annotations

import hashlib
import json
import os
from importlib import metadata
from pathlib import Path

from .spec import ModelSpec

ZOO_FORMAT = 1
"""Bump to invalidate every cached export (when a builder's model changes)."""

LIBRARIES = (
    "torch",
    "torchvision",
    "timm",
    "transformers",
    "onnxscript",
    "scikit-learn",
    "skl2onnx",
    "onnx",
)


def library_versions() -> dict[str, str]:
    """Installed versions of the libraries that shape an export ('-' when absent)."""
    versions = {}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "-"
    return versions


def default_root() -> Path:
    env = os.environ.get("RUNG_ZOO_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "rung" / "zoo"


def versions_folder(root: Path) -> Path:
    """The cache folder of the installed library versions, created with a note of them."""
    versions = library_versions()
    key = json.dumps({"format": ZOO_FORMAT, **versions}, sort_keys=True)
    folder = root / hashlib.sha256(key.encode()).hexdigest()[:16]
    folder.mkdir(parents=True, exist_ok=True)
    note = folder / "versions.json"
    if not note.exists():
        note.write_text(json.dumps(versions, indent=1, sort_keys=True) + "\n")
    return folder


def export_stem(spec: ModelSpec) -> str:
    """The model's file name without suffix: its name, made path-safe, and a spec hash."""
    shape = repr((spec.inputs, spec.outputs, spec.exporter))
    digest = hashlib.sha256(shape.encode()).hexdigest()[:8]
    return f"{spec.name.replace('/', '--')}-{digest}"


def export_path(spec: ModelSpec, folder: Path) -> Path:
    return folder / f"{export_stem(spec)}.onnx"


def error_path(spec: ModelSpec, folder: Path) -> Path:
    return folder / f"{export_stem(spec)}.error"
