"""The benchmark's modern models: real architectures, exported once with seeded random weights.

    python bench/modern.py                        # export every modern model (cached)
    python bench/modern.py --models 'bert|gpt2'   # some of them

Seven torchvision models at 1x3x224x224 (EfficientNet-B0, MobileNetV3-Large,
RegNetY-400MF, ConvNeXt-Tiny, ViT-B/16, Swin-T, DeepLabV3-MobileNetV3-Large)
and three transformers models at batch 1, sequence 128, built from their
default configurations (BERT-base, GPT-2 small, DistilBERT-base). Nothing is
downloaded: torch's generator is seeded with the benchmark's seed before each
model is built. Straight from their initializers some vision models compute
next to nothing (EfficientNet-B0's logits are near 1e-14, ViT's zero-initialized
head gives exactly 0), which makes the check against onnxruntime vacuous and
may time denormal arithmetic; so the vision models are made to behave like
trained ones numerically (`like_trained`). Shapes are static, so the benchmark
measures one fixed size.
The vision models and the BERTs go through the TorchScript exporter (opset
17), GPT-2 through the dynamo exporter (opset 18), as most users export them.

Exporting takes seconds to minutes a model, so each export is kept in the
zoo's cache (`bench/zoo/cache.py`: a folder per set of library versions), in
its `bench` subfolder; a failed export leaves a `.error` file there, so it is
not retried on every run. Exports run in a subprocess of their own: torch and
the export's memory never enter the benchmark's worker, whose peak memory is
measured. The model list itself needs neither torch nor transformers.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
if str(BENCH_DIR) not in sys.path:  # `models` and the `zoo` package live beside this file
    sys.path.insert(0, str(BENCH_DIR))

from models import ModelSpec  # noqa: E402
from zoo.cache import default_root, export_stem, versions_folder  # noqa: E402
from zoo.spec import Input, Output  # noqa: E402
from zoo.spec import ModelSpec as ExportSpec  # noqa: E402

if TYPE_CHECKING:
    import onnx
    import torch

EXTRA = "needs the zoo extra: pip install -e .[zoo]"
EXPORT_TIMEOUT_S = 1200.0
EXPORT_FORMAT = 2
"""Part of every cached export's name: bump it when a builder's model changes."""
IMAGE = (1, 3, 224, 224)
SEQ = 128


class MissingExtra(RuntimeError):
    """The libraries that export the model are not installed."""


class ExportFailed(RuntimeError):
    """The exporter could not export the model (its message is kept in the cache)."""


@dataclass(frozen=True)
class Modern:
    """A modern model: how to build its torch module from a seed, and how it is exported."""

    name: str
    source: str  # "torchvision" or "transformers": what the export needs installed
    exporter: str  # "torchscript" or "dynamo"
    make: Callable[[int], object]
    inputs: tuple[Input, ...]
    outputs: tuple[Output, ...]
    max_repeat: int | None = None

    def export_spec(self, seed: int) -> ExportSpec:
        """The zoo's description of the export: static inputs, so no axis is dynamic."""
        return ExportSpec(
            name=self.name,
            source=self.source,
            exporter=self.exporter,
            build=partial(self.make, seed),
            inputs=self.inputs,
            outputs=self.outputs,
        )


# ---- builders (torch and the model libraries are imported only when a model is built) ---------


def _torchvision(seed: int) -> object:
    from zoo import tv_shim

    tv_shim.install()  # before torchvision: its C extension does not load beside the CPU torch
    import torch
    import torchvision

    torch.manual_seed(seed)
    return torchvision


def _transformers(seed: int) -> object:
    from zoo import tv_shim

    tv_shim.install()  # transformers imports torchvision when it is installed
    import torch
    import transformers

    torch.manual_seed(seed)
    return transformers


def like_trained(model: torch.nn.Module, seed: int) -> torch.nn.Module:
    """The model with activations of unit scale, as trained weights give, in eval mode.

    All-zero weight matrices (zero-initialized heads) get normal values scaled
    by fan-in, and every BatchNorm gets the statistics of a seeded random batch
    (the benchmark's inputs are random normal too) instead of mean 0 variance 1,
    through which the activations of untrained networks fade layer by layer.
    """
    import torch

    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for param in model.parameters():
            if param.dim() >= 2 and not param.any():
                param.normal_(0.0, param[0].numel() ** -0.5, generator=generator)
    momenta = {m: m.momentum for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)}
    model.eval()  # dropout and stochastic depth off: only the norms learn their statistics
    for norm in momenta:
        norm.reset_running_stats()
        norm.momentum = None  # the plain average: after one batch, that batch's statistics
        norm.train()
    if momenta:
        with torch.no_grad():
            model(torch.randn(4, *IMAGE[1:], generator=generator))
    for norm, momentum in momenta.items():
        norm.momentum = momentum
    return model.eval()


def classifier(arch: str) -> Callable[[int], object]:
    def build(seed: int) -> object:
        tv = _torchvision(seed)
        model = tv.models.get_model(arch, weights=None)  # type: ignore[attr-defined]
        return like_trained(model, seed)

    return build


def deeplab(seed: int) -> object:
    """DeepLabV3 on a MobileNetV3-Large backbone (21 classes); only its `out` map."""
    tv = _torchvision(seed)
    import torch

    model = tv.models.get_model(  # type: ignore[attr-defined]
        "deeplabv3_mobilenet_v3_large", weights=None, weights_backbone=None
    )

    class Segment(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.model(x)["out"]

    return like_trained(Segment(), seed)


def language_model(
    config: str, model: str, outputs: tuple[str, ...], **fixed: object
) -> Callable[[int], object]:
    """A transformers model of the default `config` (base size), random weights, called with
    positional input_ids and attention_mask and returning the named outputs."""

    def build(seed: int) -> object:
        tf = _transformers(seed)
        from zoo.text import _positional

        module = getattr(tf, model)(getattr(tf, config)()).eval()
        return _positional(module, ("input_ids", "attention_mask"), outputs, **fixed)

    return build


def _image() -> tuple[Input, ...]:
    return (Input("x", IMAGE),)


def _text(vocab: int) -> tuple[Input, ...]:
    return (
        Input("input_ids", (1, SEQ), dtype="int64", high=vocab),
        Input("attention_mask", (1, SEQ), dtype="int64", fill=1),
    )


BERT_VOCAB = 30522
GPT2_VOCAB = 50257
LOGITS = (Output("logits"),)

MODELS: tuple[Modern, ...] = (
    *(
        Modern(arch, "torchvision", "torchscript", classifier(arch), _image(), LOGITS, cap)
        for arch, cap in (
            ("efficientnet_b0", None),
            ("mobilenet_v3_large", None),
            ("regnet_y_400mf", None),
            ("convnext_tiny", 10),
            ("vit_b_16", 10),
            ("swin_t", 10),
        )
    ),
    Modern(
        "deeplabv3_mobilenet_v3_large",
        "torchvision",
        "torchscript",
        deeplab,
        _image(),
        (Output("out"),),
        10,
    ),
    Modern(
        "bert_base",
        "transformers",
        "torchscript",
        language_model("BertConfig", "BertModel", ("last_hidden_state", "pooler_output")),
        _text(BERT_VOCAB),
        (Output("last_hidden_state"), Output("pooler_output")),
        10,
    ),
    Modern(
        "gpt2",
        "transformers",
        "dynamo",
        language_model("GPT2Config", "GPT2LMHeadModel", ("logits",), use_cache=False),
        _text(GPT2_VOCAB),
        LOGITS,
        10,
    ),
    Modern(
        "distilbert",
        "transformers",
        "torchscript",
        language_model("DistilBertConfig", "DistilBertModel", ("last_hidden_state",)),
        _text(BERT_VOCAB),
        (Output("last_hidden_state"),),
        10,
    ),
)


# ---- the export cache ---------------------------------------------------------------------------


def cache_folder(root: Path | None = None) -> Path:
    """The `bench` subfolder of the zoo cache's folder for the installed library versions."""
    folder = versions_folder(root or default_root()) / "bench"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def cached_paths(model: Modern, seed: int, folder: Path) -> tuple[Path, Path]:
    """The export's file and its error file: named by the zoo's spec hash and the seed."""
    stem = f"{export_stem(model.export_spec(seed))}-seed{seed}-v{EXPORT_FORMAT}"
    return folder / f"{stem}.onnx", folder / f"{stem}.error"


def missing_libraries(model: Modern) -> list[str]:
    from zoo.runner import missing_requirements

    return missing_requirements(model.export_spec(0))


def ensure_export(model: Modern, seed: int, folder: Path | None = None) -> Path:
    """The cached export, made now (in a subprocess) if needed; raises why there is none."""
    missing = missing_libraries(model)
    if missing:
        raise MissingExtra(f"{EXTRA} (missing {', '.join(missing)})")
    folder = folder or cache_folder()
    path, error_file = cached_paths(model, seed, folder)
    if not path.exists() and not error_file.exists():
        cmd = [sys.executable, str(Path(__file__).resolve()), "--export-one", model.name]
        cmd += ["--seed", str(seed), "--cache-folder", str(folder)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=EXPORT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise ExportFailed(f"the export timed out after {EXPORT_TIMEOUT_S:.0f} s") from None
        if proc.returncode != 0 and not error_file.exists():
            tail = [ln for ln in proc.stderr.splitlines() if ln.strip()][-1:] or [""]
            error_file.write_text(f"the exporter died (exit code {proc.returncode}) {tail[0]}\n")
    if path.exists():
        return path
    raise ExportFailed(f"export failed: {error_file.read_text().splitlines()[0]}")


def export_one(name: str, seed: int, folder: Path) -> None:
    """Build and export one model (the subprocess's side); failures go to the error file."""
    from zoo.check import export_model

    model = by_name(name)
    path, error_file = cached_paths(model, seed, folder)
    export_model(model.export_spec(seed), path, error_file)


# ---- the benchmark's view -----------------------------------------------------------------------


def by_name(name: str) -> Modern:
    for model in MODELS:
        if model.name == name:
            return model
    raise KeyError(f"no modern model named '{name}'")


def load(model: Modern, seed: int) -> onnx.ModelProto:
    import onnx

    return onnx.load(str(ensure_export(model, seed)))


def feeds(model: Modern, graph: onnx.ModelProto, seed: int) -> dict[str, np.ndarray]:
    """Seeded inputs as the model expects them: images standard normal, token ids within the
    vocabulary, attention masks all ones (for the graph's inputs: an exporter may drop one)."""
    rng = np.random.default_rng(seed)
    wanted = {i.name for i in graph.graph.input}
    return {i.name: i.sample({}, rng) for i in model.inputs if i.name in wanted}


def specs() -> list[ModelSpec]:
    """The modern models as benchmark specs (group "modern"), without importing torch."""
    return [
        ModelSpec(
            m.name,
            partial(load, m),
            group="modern",
            max_repeat=m.max_repeat,
            feeds=partial(feeds, m),
        )
        for m in MODELS
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", help="regular expression of the model names to export")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--export-one", help=argparse.SUPPRESS)
    parser.add_argument("--cache-folder", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.export_one:
        export_one(args.export_one, args.seed, args.cache_folder or cache_folder())
        return 0
    failed = 0
    for model in MODELS:
        if args.models and not re.search(args.models, model.name):
            continue
        try:
            path = ensure_export(model, args.seed)
            print(f"{model.name:32} {path.stat().st_size / 2**20:8.1f} MiB", flush=True)
        except (MissingExtra, ExportFailed) as err:
            failed += 1
            print(f"{model.name:32} FAILED: {err}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
