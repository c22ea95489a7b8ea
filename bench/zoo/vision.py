"""Vision models of the zoo: torchvision (classification, segmentation, detection, video) and timm.

Weights are random (`weights=None`, and `weights_backbone=None` where a model
would otherwise fetch a pretrained backbone); inputs are small (64–96 px for
CNNs, 224 for the transformers whose patch grid needs it), so the zoo stays
fast. ViT and Swin use small configurations of torchvision's own classes
(two blocks, narrow): the same code paths as vit_b_16 and swin_t, a fraction
of their size.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .spec import BATCHES, Input, ModelSpec, Output, image

if TYPE_CHECKING:
    import torch

TORCH_EXPORTERS = ("torchscript", "dynamo")


def _torchvision() -> object:
    from . import tv_shim

    tv_shim.install()
    import torchvision

    return torchvision


def _timm() -> object:
    from . import tv_shim

    tv_shim.install()
    import timm

    return timm


def classifier(arch: str, **kwargs: object) -> Callable[[], object]:
    """A torchvision classification model by name, with random weights."""

    def build() -> object:
        tv = _torchvision()
        import torch

        torch.manual_seed(0)
        return tv.models.get_model(arch, weights=None, **kwargs).eval()  # type: ignore[attr-defined]

    return build


def small_vit() -> object:
    tv = _torchvision()
    import torch

    torch.manual_seed(0)
    vit = tv.models.vision_transformer.VisionTransformer(  # type: ignore[attr-defined]
        image_size=224, patch_size=16, num_layers=2, num_heads=2, hidden_dim=64, mlp_dim=128
    )
    return vit.eval()


def small_swin() -> object:
    tv = _torchvision()
    import torch

    torch.manual_seed(0)
    swin = tv.models.swin_transformer.SwinTransformer(  # type: ignore[attr-defined]
        patch_size=[4, 4], embed_dim=32, depths=[2, 2], num_heads=[2, 4], window_size=[7, 7]
    )
    return swin.eval()


def segmenter(arch: str) -> Callable[[], object]:
    """A segmentation model whose dict output is reduced to the `out` map."""

    def build() -> object:
        tv = _torchvision()
        import torch

        torch.manual_seed(0)
        model = tv.models.get_model(arch, weights=None, weights_backbone=None, num_classes=21)  # type: ignore[attr-defined]

        class Segment(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.model = model

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return self.model(x)["out"]

        return Segment().eval()

    return build


def ssdlite() -> object:
    """SSDLite on one image: boxes, scores and labels after NMS (a data-dependent count)."""
    tv = _torchvision()
    import torch

    torch.manual_seed(0)
    model = tv.models.detection.ssdlite320_mobilenet_v3_large(  # type: ignore[attr-defined]
        weights=None, weights_backbone=None, num_classes=4, detections_per_img=20
    )

    class Detect(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
            found = self.model([x])[0]
            return found["boxes"], found["scores"], found["labels"]

    return Detect().eval()


def timm_model(arch: str, **kwargs: object) -> Callable[[], object]:
    def build() -> object:
        timm = _timm()
        import torch

        torch.manual_seed(0)
        return timm.create_model(arch, pretrained=False, **kwargs).eval()  # type: ignore[attr-defined]

    return build


def both_exporters(
    name: str,
    source: str,
    build: Callable[[], object],
    inputs: tuple[Input, ...],
    outputs: tuple[Output, ...],
    sizes: tuple[dict[str, int], ...] = BATCHES,
    fast: tuple[str, ...] = (),
    note: str = "",
) -> list[ModelSpec]:
    """The model once per torch exporter; `fast` names the exporters in the default tests."""
    return [
        ModelSpec(
            name=f"{name}/{exporter}",
            source=source,
            exporter=exporter,
            build=build,
            inputs=inputs,
            outputs=outputs,
            sizes=sizes,
            fast=exporter in fast,
            note=note,
        )
        for exporter in TORCH_EXPORTERS
    ]


LOGITS = (Output("logits", {0: "batch"}),)

_CLASSIFIERS: tuple[tuple[str, int, tuple[str, ...]], ...] = (
    ("resnet18", 64, ("torchscript",)),
    ("mobilenet_v2", 64, ()),
    ("mobilenet_v3_small", 64, ("dynamo",)),
    ("efficientnet_b0", 64, ()),
    ("regnet_y_400mf", 64, ()),
    ("convnext_tiny", 64, ()),
    ("densenet121", 64, ()),
    ("shufflenet_v2_x0_5", 64, ()),
    ("googlenet", 64, ()),
    ("mnasnet0_5", 64, ()),
)


def specs() -> list[ModelSpec]:
    models: list[ModelSpec] = []
    for arch, size, fast in _CLASSIFIERS:
        kwargs: dict[str, object] = {"aux_logits": False} if arch == "googlenet" else {}
        models += both_exporters(
            arch, "torchvision", classifier(arch, **kwargs), (image(size=size),), LOGITS, fast=fast
        )
    models += both_exporters(
        "vit_2x64", "torchvision", small_vit, (image(size=224),), LOGITS, note="ViT-B/16 code"
    )
    models += both_exporters(
        "swin_2x32", "torchvision", small_swin, (image(size=224),), LOGITS, note="Swin-T code"
    )
    seg_out = (Output("out", {0: "batch"}),)
    for arch in ("deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large"):
        models += both_exporters(arch, "torchvision", segmenter(arch), (image(size=96),), seg_out)
    detections = tuple(Output(n, {0: "detections"}) for n in ("boxes", "scores", "labels"))
    models += both_exporters(
        "ssdlite320_mobilenet_v3_large",
        "torchvision",
        ssdlite,
        (Input("image", (3, 320, 320)),),
        detections,
        sizes=({},),
        note="with NMS",
    )
    models += both_exporters(
        "mc3_18", "torchvision", classifier("mc3_18"), (image(size=32, frames=8),), LOGITS
    )
    models += both_exporters(
        "mobilevit_xxs", "timm", timm_model("mobilevit_xxs"), (image(size=64),), LOGITS
    )
    models += both_exporters(
        "mixer_s16", "timm", timm_model("mixer_s16_224", img_size=64), (image(size=64),), LOGITS
    )
    models += both_exporters(
        "ghostnet_100", "timm", timm_model("ghostnet_100"), (image(size=64),), LOGITS
    )
    return models
