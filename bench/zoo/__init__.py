"""rung's model zoo: real exports of public model code, checked against onnxruntime.

    python bench/zoo                              # every model; writes docs/models.md
    python bench/zoo --models 'resnet|bert'       # models whose name matches (re.search)
    python bench/zoo --fast                       # the default test subset

Models come from torchvision, timm, Hugging Face transformers (small random
configurations) and scikit-learn (through skl2onnx), exported with random
weights and nothing downloaded. See `spec` for what a model entry holds,
`runner` for how each is run in its own subprocess, `check` for the
comparison, and `cache` for where exports are kept between runs.
"""

from __future__ import annotations

from . import classic, text, vision
from .spec import ModelSpec


def all_models() -> list[ModelSpec]:
    """Every zoo model, in the report's order: vision, text, then scikit-learn."""
    return vision.specs() + text.specs() + classic.specs()


def by_name(name: str) -> ModelSpec:
    for spec in all_models():
        if spec.name == name:
            return spec
    raise KeyError(f"no zoo model named '{name}'")
