"""Real models through the PyTorch frontend: torch.export → torch dialect → kernel, against eager.

torchvision's classifiers (random weights) and small Hugging Face BERT and
GPT-2 configurations go from `torch.export` to `InferenceSession` at level
`kernel` and must match torch eager within rtol 1e-3 and atol 1e-4 of each
output's scale. The language models are exported with a dynamic batch and
sequence axis and run at two sizes from one compiled library. The same
models run through `torch.compile(backend="rung")`.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from zoo import tv_shim  # noqa: E402

tv_shim.install()  # before torchvision: its C extension does not load beside the CPU torch
pytest.importorskip("torchvision")
pytest.importorskip("transformers")

from torch_cases import assert_close, eager_outputs  # noqa: E402

from rung.runtime import InferenceSession  # noqa: E402

VISION = (
    "resnet18",
    "mobilenet_v3_small",
    "efficientnet_b0",
    "convnext_tiny",
    "swin_t",
    "vit_b_16",
)
SIZES = {"vit_b_16": 224, "swin_t": 224}
"""Input sizes the architectures need; the others run at 64x64 to keep the suite fast."""


def vision_model(name: str) -> tuple[object, tuple]:
    """The model with random weights made to behave like trained ones (`like_trained`):
    straight from their initializers ViT's head gives exactly 0 and EfficientNet's logits
    are near 1e-14, against which any result would pass."""
    from modern import like_trained

    tv_shim.install()
    import torchvision

    torch.manual_seed(0)
    model = like_trained(torchvision.models.get_model(name, weights=None), 0)
    size = SIZES.get(name, 64)
    x = torch.randn(1, 3, size, size, generator=torch.Generator().manual_seed(1))
    return model, (x,)


@pytest.mark.parametrize("name", VISION)
def test_torchvision_model_matches_eager(name: str) -> None:
    model, args = vision_model(name)
    with torch.no_grad():
        program = torch.export.export(model, args)
    want = eager_outputs(program, args)
    assert float(np.abs(want[0]).max()) > 1e-2, "the check would be vacuous"
    session = InferenceSession(program, level="kernel")
    got = session.run(None, {session.get_inputs()[0].name: args[0].numpy()})
    assert_close(got, want, 1e-3, 1e-4, name)


def language_model(name: str) -> tuple[object, tuple[str, ...]]:
    tv_shim.install()
    import transformers

    torch.manual_seed(0)
    if name == "bert":
        config = transformers.BertConfig(
            vocab_size=256,
            hidden_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=128,
            max_position_embeddings=64,
        )
        model = transformers.BertModel(config).eval()
        return model, ("last_hidden_state", "pooler_output")
    config = transformers.GPT2Config(vocab_size=256, n_embd=64, n_layer=2, n_head=2, n_positions=64)
    return transformers.GPT2LMHeadModel(config).eval(), ("logits",)


class Positional(torch.nn.Module):
    """The model called with (input_ids, attention_mask), returning a tuple of named outputs."""

    def __init__(self, model: object, outputs: tuple[str, ...]) -> None:
        super().__init__()
        self.model = model
        self.outputs = outputs

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> tuple:
        result = self.model(input_ids=input_ids, attention_mask=attention_mask)  # type: ignore[operator]
        return tuple(result[name] for name in self.outputs)


def text_feed(batch: int, seq: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, 256, (batch, seq), generator=generator)
    mask = torch.ones(batch, seq, dtype=torch.int64)
    mask[0, -1] = 0  # one padded position: the mask must reach the attention
    return ids, mask


@pytest.mark.parametrize("name", ["bert", "gpt2"])
def test_language_model_with_dynamic_batch_and_sequence(name: str) -> None:
    model, outputs = language_model(name)
    module = Positional(model, outputs).eval()
    batch, seq = torch.export.Dim("batch", min=1, max=8), torch.export.Dim("seq", min=2, max=48)
    axes = {0: batch, 1: seq}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = torch.export.export(
            module,
            text_feed(2, 7, 0),
            dynamic_shapes={"input_ids": axes, "attention_mask": axes},
            strict=False,
        )
    session = InferenceSession(program, level="kernel")
    names = [i.name for i in session.get_inputs()]
    for batch_size, seq_len in ((1, 5), (3, 17)):
        feed = text_feed(batch_size, seq_len, batch_size)
        want = eager_outputs(program, feed)
        got = session.run(None, {n: t.numpy() for n, t in zip(names, feed, strict=True)})
        assert_close(got, want, 1e-3, 1e-4, f"{name} at {batch_size}x{seq_len}")


@pytest.mark.parametrize("name", [*VISION, "bert", "gpt2"])
def test_torch_compile_backend_matches_eager(name: str) -> None:
    if name in ("bert", "gpt2"):
        model, outputs = language_model(name)
        module, args = Positional(model, outputs).eval(), text_feed(2, 7, 0)
    else:
        module, args = vision_model(name)
    torch._dynamo.reset()
    compiled = torch.compile(module, backend="rung")
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("error", category=UserWarning)  # no silent fallback to eager
        warnings.filterwarnings("ignore", message=".*LeafSpec.*")
        got = torch.utils._pytree.tree_leaves(compiled(*args))
        want = torch.utils._pytree.tree_leaves(module(*args))
    assert_close([g.numpy() for g in got], [w.numpy() for w in want], 1e-3, 1e-4, name)


def test_torch_compile_falls_back_to_eager_with_one_warning() -> None:
    from rung.runtime.torch_backend import RungFallbackWarning

    class Odd(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.special.bessel_j0(x) + 1  # no Core ATen lowering in rung

    x = torch.linspace(0.1, 3.0, 8)
    torch._dynamo.reset()
    with torch.no_grad(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = torch.compile(Odd(), backend="rung")(x)
    np.testing.assert_allclose(got.numpy(), Odd()(x).numpy(), rtol=1e-6)
    ours = [w for w in caught if issubclass(w.category, RungFallbackWarning)]
    assert len(ours) == 1
    assert "bessel_j0" in str(ours[0].message)
