"""Lets torchvision's pure-Python model code import beside a torch without its C extension.

torchvision's wheel on PyPI is built against CUDA torch; beside the CPU torch its
`_C` extension does not load and importing torchvision fails with "operator
torchvision::nms does not exist", because its fake-tensor registrations expect
the ops to be defined. The models themselves are plain Python, so defining the
two NMS ops here, with a pure-torch kernel, before torchvision is imported is
enough to build, trace and export them (detection models included: the
TorchScript exporter maps `torchvision::nms` to ONNX NonMaxSuppression).
"""

from __future__ import annotations

import importlib.util
import sys

_LIBRARY: object = None
"""The `torch.library.Library` that owns the op definitions; it must stay alive."""


def nms_reference(boxes: object, scores: object, iou_threshold: float) -> object:
    """Greedy NMS in plain torch: indices of the kept boxes, by decreasing score."""
    import torch

    boxes_t: torch.Tensor = boxes  # type: ignore[assignment]
    scores_t: torch.Tensor = scores  # type: ignore[assignment]
    order = torch.argsort(scores_t, descending=True, stable=True)
    x1, y1, x2, y2 = boxes_t.unbind(1)
    areas = (x2 - x1).clamp(min=0) * (y2 - y1).clamp(min=0)
    suppressed = torch.zeros(boxes_t.shape[0], dtype=torch.bool)
    keep: list[int] = []
    for i in order.tolist():
        if suppressed[i]:
            continue
        keep.append(i)
        w = (torch.minimum(x2[i], x2) - torch.maximum(x1[i], x1)).clamp(min=0)
        h = (torch.minimum(y2[i], y2) - torch.maximum(y1[i], y1)).clamp(min=0)
        inter = w * h
        iou = inter / (areas[i] + areas - inter)
        suppressed |= iou > iou_threshold
    return torch.tensor(keep, dtype=torch.int64)


def ops_present() -> None:
    """Stands in for torchvision's check for its C extension (the ops are defined here).

    A plain function, not a lambda: tracing a detection model scripts `nms`, and
    TorchScript compiles what it calls.
    """


def _extension_loads() -> bool:
    """Whether torchvision's own C extension would load (then no shim is needed)."""
    import torch

    spec = importlib.util.find_spec("torchvision")
    if spec is None or not spec.submodule_search_locations:
        return False
    from pathlib import Path

    for folder in spec.submodule_search_locations:
        for lib in Path(folder).glob("_C*.so"):
            try:
                torch.ops.load_library(str(lib))
                return True
            except (OSError, RuntimeError):
                return False
    return False


def install() -> None:
    """Define `torchvision::nms` and `torchvision::qnms` unless torchvision can define them.

    Call it before anything imports torchvision (timm and transformers do).
    """
    global _LIBRARY
    if _LIBRARY is not None or "torchvision" in sys.modules:
        return
    if importlib.util.find_spec("torchvision") is None:
        return
    import torch

    if hasattr(torch.ops, "torchvision") and hasattr(torch.ops.torchvision, "nms"):
        return
    if _extension_loads():
        return
    lib = torch.library.Library("torchvision", "DEF")
    for name in ("nms", "qnms"):
        lib.define(f"{name}(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        lib.impl(name, nms_reference, "CPU")
    _LIBRARY = lib
    import torchvision.ops.boxes

    # boxes.nms checks for the C extension before calling the op defined above.
    torchvision.ops.boxes._assert_has_ops = ops_present
