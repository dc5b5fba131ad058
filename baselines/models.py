"""The ``transformer`` architecture: decoder-only transformers with a choice of positional
encoding, built from Hugging Face classes (the other architectures: gengap.baselines.architectures).

| ``pos``      | class (transformers)   | how the positions enter                                        |
|--------------|------------------------|----------------------------------------------------------------|
| learned      | GPT2LMHeadModel        | learned absolute table, sized to the longest sequence of the split |
| sinusoidal   | GPT2LMHeadModel        | GPT-2's table filled with fixed sinusoids (Vaswani et al.), scaled to the token embeddings' initial RMS (GPT-2 does not scale token embeddings by sqrt(d)), frozen; sized generously (>= 2048 and twice the longest sequence) so that it extrapolates |
| rope         | LlamaForCausalLM       | rotary embeddings in every layer                                |
| nope         | SmolLM3ForCausalLM     | the Llama architecture with rotary embeddings switched off in every layer (``no_rope_layers`` all 0): no positional information besides the causal mask |
| alibi        | BloomForCausalLM       | linear attention biases (Press et al.)                          |

All five are HF model classes configured from scratch, so no own transformer module is
needed; :class:`SeqModel` wraps them behind one interface (training forward, and a decoding
step with attention mask, position ids and KV cache). Pairs that share an architecture
compare only the positional encoding: learned vs sinusoidal (GPT-2 blocks: LayerNorm, GELU
MLP) and rope vs nope (Llama blocks: RMSNorm, SwiGLU MLP); alibi uses Bloom blocks
(LayerNorm, GELU MLP, an embedding LayerNorm). Dropout is 0 and input/output embeddings are
tied everywhere. The GELU MLPs are 4*d wide, the SwiGLU ones 8/3*d (rounded up to a multiple
of 16) so that parameter counts stay close.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import asdict
from typing import Any

import torch
from torch import nn

from gengap.baselines.errors import BaselineError
from gengap.baselines.sequence_model import SequenceModel
from gengap.baselines.spec import POSITIONAL, ModelShape  # noqa: F401  (their home was here)

HF_CLASS = {
    "learned": "GPT2LMHeadModel",
    "sinusoidal": "GPT2LMHeadModel",
    "rope": "LlamaForCausalLM",
    "nope": "SmolLM3ForCausalLM",
    "alibi": "BloomForCausalLM",
}
EXTRAPOLATING = ("rope", "nope", "sinusoidal", "alibi")
SINUSOID_MIN_POSITIONS = 2048


def sinusoid_table(positions: int, d_model: int) -> torch.Tensor:
    """The fixed encoding of Vaswani et al.: sin on even, cos on odd dimensions."""
    position = torch.arange(positions, dtype=torch.float64)[:, None]
    rate = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(10000.0) / d_model))
    table = torch.zeros(positions, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(position * rate)
    table[:, 1::2] = torch.cos(position * rate[: d_model // 2])
    return table.float()


def _swiglu_width(d_model: int) -> int:
    return 16 * math.ceil(8 * d_model / 3 / 16)


def _hf_model(pos: str, shape: ModelShape, vocab_size: int, max_len: int, pad_id: int) -> nn.Module:
    import transformers
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    common = {"vocab_size": vocab_size, "pad_token_id": pad_id, "bos_token_id": None, "eos_token_id": None, "tie_word_embeddings": True}
    if pos in ("learned", "sinusoidal"):
        positions = max_len if pos == "learned" else max(SINUSOID_MIN_POSITIONS, 2 * max_len)
        config = transformers.GPT2Config(
            n_positions=positions, n_embd=shape.d_model, n_layer=shape.layers, n_head=shape.heads,
            n_inner=4 * shape.d_model, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, **common,
        )
        model = transformers.GPT2LMHeadModel(config)
        if pos == "sinusoidal":
            table = sinusoid_table(positions, shape.d_model)
            table *= config.initializer_range / table.pow(2).mean().sqrt()  # the token embeddings' initial scale
            with torch.no_grad():
                model.transformer.wpe.weight.copy_(table)
            model.transformer.wpe.weight.requires_grad_(False)
        return model
    if pos in ("rope", "nope"):
        kwargs: dict[str, Any] = dict(
            hidden_size=shape.d_model, intermediate_size=_swiglu_width(shape.d_model),
            num_hidden_layers=shape.layers, num_attention_heads=shape.heads, num_key_value_heads=shape.heads,
            max_position_embeddings=max(max_len, 1), attention_dropout=0.0, **common,
        )
        if pos == "rope":
            return transformers.LlamaForCausalLM(transformers.LlamaConfig(**kwargs))
        config = transformers.SmolLM3Config(no_rope_layers=[0] * shape.layers, use_sliding_window=False, **kwargs)
        return transformers.SmolLM3ForCausalLM(config)
    if pos == "alibi":
        config = transformers.BloomConfig(
            hidden_size=shape.d_model, n_layer=shape.layers, n_head=shape.heads,
            hidden_dropout=0.0, attention_dropout=0.0, **common,
        )
        return transformers.BloomForCausalLM(config)
    raise BaselineError(f"unknown positional encoding {pos!r}; choose one of {', '.join(POSITIONAL)}")


class SeqModel(SequenceModel):
    """A causal LM over token ids, whatever the HF class underneath.

    ``forward(ids)`` returns logits (B, L, V) for right-padded training batches (positions
    0.. from the first token); ``step`` is the decoding interface for left-padded prompts.
    """

    arch = "transformer"

    def __init__(self, pos: str, shape: ModelShape, vocab_size: int, max_len: int, pad_id: int = 0) -> None:
        super().__init__()
        shape.check()
        if pos not in POSITIONAL:
            raise BaselineError(f"unknown positional encoding {pos!r}; choose one of {', '.join(POSITIONAL)}")
        self.pos = pos
        self.shape = shape
        self.vocab_size = vocab_size
        self.max_len = max_len
        self.net = _hf_model(pos, shape, vocab_size, max_len, pad_id)
        self.hf_class = type(self.net).__name__
        parameters = inspect.signature(self.net.forward).parameters
        self._cache_kw = "cache" if "cache" in parameters else "past_key_values"
        self._takes_positions = "position_ids" in parameters

    @property
    def max_positions(self) -> int | None:
        """The longest sequence the model can read (None: unbounded)."""
        if self.pos in ("learned", "sinusoidal"):
            return int(self.net.config.n_positions)
        return None

    def describe(self) -> dict[str, Any]:
        return {
            "arch": self.arch,
            "pos": self.pos,
            "hf_class": self.hf_class,
            **asdict(self.shape),
            "vocab_size": self.vocab_size,
            "max_len": self.max_len,
            "max_positions": self.max_positions,
            "parameters": self.n_parameters(),
        }

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.net(input_ids=ids, use_cache=False).logits

    def step(
        self, ids: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor, cache: Any = None, use_cache: bool = False
    ) -> tuple[torch.Tensor, Any]:
        """Logits of ids given the attention mask over (cache + ids) and the positions of ids."""
        self._check_length(int(mask.shape[1]))
        kwargs: dict[str, Any] = {"input_ids": ids, "attention_mask": mask, "use_cache": use_cache}
        if self._takes_positions:
            kwargs["position_ids"] = positions
        if cache is not None:
            kwargs[self._cache_kw] = cache
        out = self.net(**kwargs)
        new_cache = getattr(out, "cache", None) if hasattr(out, "cache") else getattr(out, "past_key_values", None)
        return out.logits, (new_cache if use_cache else None)

    def _check_length(self, length: int) -> None:
        limit = self.max_positions
        if limit is not None and length > limit:
            raise BaselineError(f"a sequence of {length} tokens exceeds the {self.pos} table of {limit} positions")


def build_model(pos: str, shape: ModelShape, vocab_size: int, max_len: int, pad_id: int = 0) -> SeqModel:
    """A freshly initialised model (initialise under torch.manual_seed for reproducibility)."""
    return SeqModel(pos, shape, vocab_size, max_len, pad_id)
