"""Hugging Face transformers models of the zoo: small random configurations.

Each model has two layers and a hidden size of 64, a vocabulary of 256, and
dynamic batch and sequence axes. A thin wrapper gives every model positional
tensor inputs and a tuple of tensor outputs, which both exporters take. The
KV-cache decoder (a Llama) takes the past keys and values of each layer as
inputs and returns the updated ones, as a generation loop would run it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .spec import BATCH_SEQ, Input, ModelSpec, Output, image, mask, tokens
from .vision import both_exporters

if TYPE_CHECKING:
    import torch

VOCAB = 256
HIDDEN = 64
LAYERS = 2
HEADS = 2
KV_HEADS = 2
HEAD_DIM = 16


def _transformers() -> object:
    from . import tv_shim

    tv_shim.install()  # transformers imports torchvision when it is installed
    import torch
    import transformers

    torch.manual_seed(0)
    return transformers


def _positional(
    model: torch.nn.Module, names: tuple[str, ...], outputs: tuple[str, ...], **fixed: object
) -> torch.nn.Module:
    """`model` called with keyword tensors from positional ones, returning the named outputs."""
    import torch

    class Positional(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *args: torch.Tensor) -> tuple[torch.Tensor, ...]:
            result = self.model(**dict(zip(names, args, strict=True)), **fixed)
            return tuple(result[name] for name in outputs)

    return Positional().eval()


def bert() -> object:
    tf = _transformers()
    config = tf.BertConfig(  # type: ignore[attr-defined]
        vocab_size=VOCAB,
        hidden_size=HIDDEN,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        intermediate_size=2 * HIDDEN,
        max_position_embeddings=64,
    )
    model = tf.BertModel(config).eval()  # type: ignore[attr-defined]
    names = ("input_ids", "attention_mask", "token_type_ids")
    return _positional(model, names, ("last_hidden_state", "pooler_output"))


def distilbert() -> object:
    tf = _transformers()
    config = tf.DistilBertConfig(  # type: ignore[attr-defined]
        vocab_size=VOCAB,
        dim=HIDDEN,
        n_layers=LAYERS,
        n_heads=HEADS,
        hidden_dim=2 * HIDDEN,
        max_position_embeddings=64,
    )
    model = tf.DistilBertModel(config).eval()  # type: ignore[attr-defined]
    return _positional(model, ("input_ids", "attention_mask"), ("last_hidden_state",))


def gpt2() -> object:
    tf = _transformers()
    config = tf.GPT2Config(  # type: ignore[attr-defined]
        vocab_size=VOCAB, n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS, n_positions=64
    )
    model = tf.GPT2LMHeadModel(config).eval()  # type: ignore[attr-defined]
    return _positional(model, ("input_ids", "attention_mask"), ("logits",), use_cache=False)


def _t5_config() -> object:
    tf = _transformers()
    return tf.T5Config(  # type: ignore[attr-defined]
        vocab_size=VOCAB,
        d_model=HIDDEN,
        d_ff=2 * HIDDEN,
        d_kv=HIDDEN // HEADS,
        num_layers=LAYERS,
        num_decoder_layers=LAYERS,
        num_heads=HEADS,
        decoder_start_token_id=0,
    )


def t5_encoder() -> object:
    tf = _transformers()
    model = tf.T5EncoderModel(_t5_config()).eval()  # type: ignore[attr-defined]
    return _positional(model, ("input_ids", "attention_mask"), ("last_hidden_state",))


def t5_decoder() -> object:
    """T5's decoder and LM head, given the encoder's hidden states (one step of seq2seq)."""
    tf = _transformers()
    import torch

    model = tf.T5ForConditionalGeneration(_t5_config()).eval()  # type: ignore[attr-defined]

    class Decoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(
            self, decoder_input_ids: torch.Tensor, encoder_hidden_states: torch.Tensor
        ) -> torch.Tensor:
            out = self.model(
                decoder_input_ids=decoder_input_ids,
                encoder_outputs=(encoder_hidden_states,),
                use_cache=False,
            )
            return out.logits

    return Decoder().eval()


def vit() -> object:
    tf = _transformers()
    config = tf.ViTConfig(  # type: ignore[attr-defined]
        image_size=32,
        patch_size=8,
        hidden_size=HIDDEN,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        intermediate_size=2 * HIDDEN,
        num_labels=10,
    )
    model = tf.ViTForImageClassification(config).eval()  # type: ignore[attr-defined]
    return _positional(model, ("pixel_values",), ("logits",))


def llama_with_cache() -> object:
    """A Llama decoder step: new tokens and the past keys/values in, logits and the present out."""
    tf = _transformers()
    import torch

    config = tf.LlamaConfig(  # type: ignore[attr-defined]
        vocab_size=VOCAB,
        hidden_size=HIDDEN,
        intermediate_size=2 * HIDDEN,
        num_hidden_layers=LAYERS,
        num_attention_heads=HIDDEN // HEAD_DIM,
        num_key_value_heads=KV_HEADS,
        max_position_embeddings=128,
    )
    model = tf.LlamaForCausalLM(config).eval()  # type: ignore[attr-defined]

    class Step(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: torch.Tensor, *past: torch.Tensor) -> tuple[torch.Tensor, ...]:
            pairs = [(past[2 * i], past[2 * i + 1]) for i in range(LAYERS)]
            cache = tf.DynamicCache(pairs, config=config)  # type: ignore[attr-defined]
            out = self.model(input_ids=input_ids, past_key_values=cache, use_cache=True)
            present = out.past_key_values
            flat: list[torch.Tensor] = []
            for layer in present.layers:
                flat += [layer.keys, layer.values]
            return (out.logits, *flat)

    return Step().eval()


def _kv_names(prefix: str) -> list[str]:
    return [f"{prefix}.{i}.{kind}" for i in range(LAYERS) for kind in ("key", "value")]


def _spec_pair(
    name: str,
    build: Callable[[], object],
    inputs: tuple[Input, ...],
    outputs: tuple[Output, ...],
    sizes: tuple[dict[str, int], ...] = BATCH_SEQ,
    fast: tuple[str, ...] = (),
    note: str = "",
) -> list[ModelSpec]:
    """A transformers model once per torch exporter (batch and sequence sizes by default)."""
    return both_exporters(name, "transformers", build, inputs, outputs, sizes, fast, note)


def specs() -> list[ModelSpec]:
    hidden = Output("last_hidden_state", {0: "batch", 1: "seq"})
    logits = Output("logits", {0: "batch", 1: "seq"})
    token_types = Input("token_type_ids", ("batch", "seq"), dtype="int64", high=2)
    models = _spec_pair(
        "bert",
        bert,
        (tokens(vocab=VOCAB), mask(), token_types),
        (hidden, Output("pooler_output", {0: "batch"})),
        fast=("torchscript",),
    )
    models += _spec_pair("distilbert", distilbert, (tokens(vocab=VOCAB), mask()), (hidden,))
    models += _spec_pair("gpt2_lm", gpt2, (tokens(vocab=VOCAB), mask()), (logits,))
    models += _spec_pair(
        "t5_encoder", t5_encoder, (tokens(vocab=VOCAB), mask()), (hidden,), fast=("torchscript",)
    )
    enc = Input("encoder_hidden_states", ("batch", "enc_seq", HIDDEN))
    models += _spec_pair(
        "t5_decoder",
        t5_decoder,
        (tokens("decoder_input_ids", vocab=VOCAB), enc),
        (logits,),
        sizes=({"batch": 1, "seq": 7, "enc_seq": 5}, {"batch": 3, "seq": 16, "enc_seq": 9}),
    )
    models += _spec_pair(
        "hf_vit",
        vit,
        (image("pixel_values", size=32),),
        (Output("logits", {0: "batch"}),),
        sizes=({"batch": 1}, {"batch": 3}),
    )
    past = tuple(
        Input(n, ("batch", KV_HEADS, "past", HEAD_DIM)) for n in _kv_names("past_key_values")
    )
    present = tuple(Output(n, {0: "batch", 2: "total"}) for n in _kv_names("present"))
    models += _spec_pair(
        "llama_kv_cache",
        llama_with_cache,
        (tokens(vocab=VOCAB), *past),
        (logits, *present),
        sizes=({"batch": 1, "seq": 1, "past": 6}, {"batch": 3, "seq": 4, "past": 9}),
        fast=("dynamo",),
        note="past_key_values in and out",
    )
    return models
