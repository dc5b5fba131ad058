"""The ``transformer`` architecture: decoder-only transformers with a choice of positional
encoding, built from Hugging Face classes (the other architectures: gengap.baselines.architectures).

| ``pos``      | class (transformers)   | how the positions enter                                        |
|--------------|------------------------|----------------------------------------------------------------|
| learned      | GPT2LMHeadModel        | learned absolute table, sized to the longest sequence of the split |
| sinusoidal   | GPT2LMHeadModel        | GPT-2's table filled with fixed sinusoids (Vaswani et al.), scaled to the token embeddings' initial RMS (GPT-2 does not scale token embeddings by sqrt(d)), frozen; sized generously (>= 2048 and twice the longest sequence) so that it extrapolates |
| rope         | LlamaForCausalLM       | rotary embeddings in every layer                                |
| nope         | SmolLM3ForCausalLM     | the Llama architecture with rotary embeddings switched off in every layer (``no_rope_layers`` all 0): no positional information besides the causal mask |
| alibi        | BloomForCausalLM       | linear attention biases (Press et al.)                          |
| randomized   | LlamaForCausalLM       | rotary embeddings at an ordered random sample of 0..R-1 in training, evenly spread positions in decoding (Ruoss et al. 2023; gengap.baselines.positions) |
| fire         | SmolLM3ForCausalLM     | no rotary embeddings; FIRE's learned attention biases (Li et al. 2023), passed as the attention mask |
| abacus       | SmolLM3ForCausalLM     | no rotary embeddings; learned embeddings of each digit's place in its number added to the token embeddings (McLeish et al. 2024) |

All are HF model classes configured from scratch, so no own transformer module is
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
from typing import Any, Sequence

import torch
from torch import nn

from gengap.baselines.errors import BaselineError
from gengap.baselines.positions import (
    Abacus,
    Fire,
    PositionDraws,
    abacus_places,
    causal_positions,
    digit_ids,
    drawn_offsets,
    key_positions,
    randomized_span,
    sampled_positions,
    spread,
)
from gengap.baselines.sequence_model import SequenceModel
from gengap.baselines.spec import POSITIONAL, ModelShape  # noqa: F401  (their home was here)

HF_CLASS = {
    "learned": "GPT2LMHeadModel",
    "sinusoidal": "GPT2LMHeadModel",
    "rope": "LlamaForCausalLM",
    "nope": "SmolLM3ForCausalLM",
    "alibi": "BloomForCausalLM",
    "randomized": "LlamaForCausalLM",
    "fire": "SmolLM3ForCausalLM",
    "abacus": "SmolLM3ForCausalLM",
}
EXTRAPOLATING = ("rope", "nope", "sinusoidal", "alibi", "randomized", "fire", "abacus")
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
    if pos in ("rope", "nope", "randomized", "fire", "abacus"):
        kwargs: dict[str, Any] = dict(
            hidden_size=shape.d_model, intermediate_size=_swiglu_width(shape.d_model),
            num_hidden_layers=shape.layers, num_attention_heads=shape.heads, num_key_value_heads=shape.heads,
            max_position_embeddings=randomized_span(max_len) if pos == "randomized" else max(max_len, 1), attention_dropout=0.0, **common,
        )
        if pos in ("rope", "randomized"):
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

    def __init__(
        self, pos: str, shape: ModelShape, vocab_size: int, max_len: int, pad_id: int = 0, tokens: Sequence[str] | None = None
    ) -> None:
        super().__init__()
        shape.check()
        if pos not in POSITIONAL:
            raise BaselineError(f"unknown positional encoding {pos!r}; choose one of {', '.join(POSITIONAL)}")
        digits = digit_ids(tokens) if pos == "abacus" else []
        self.pos = pos
        self.shape = shape
        self.vocab_size = vocab_size
        self.max_len = max_len
        self.pad_id = pad_id
        self.net = _hf_model(pos, shape, vocab_size, max_len, pad_id)
        self.hf_class = type(self.net).__name__
        parameters = inspect.signature(self.net.forward).parameters
        self._cache_kw = "cache" if "cache" in parameters else "past_key_values"
        self._takes_positions = "position_ids" in parameters
        self.span = randomized_span(max_len)
        self._plan: torch.Tensor | None = None  # randomized: each decoded row's whole length
        if pos in ("randomized", "abacus"):
            self.draws = PositionDraws()
        if pos == "fire":
            self.fire = Fire(shape.heads)
        if pos == "abacus":
            self.abacus = Abacus(digits, vocab_size, shape.d_model, abacus_places(max_len))

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
            **({"position_range": self.span} if self.pos == "randomized" else {}),
            "parameters": self.n_parameters(),
        }

    def plan_positions(self, totals: Sequence[int] | None) -> None:
        self._plan = None if totals is None else torch.as_tensor(list(totals), dtype=torch.long)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """Training logits; randomized positions and abacus offsets are drawn in training mode only."""
        if self.pos not in ("randomized", "fire", "abacus"):
            return self.net(input_ids=ids, use_cache=False).logits
        batch, length = ids.shape
        kwargs: dict[str, Any] = {"input_ids": ids, "use_cache": False}
        if self.pos == "randomized":
            # a mask, so that HF does not read positions that skip as packed sequences (a causal mask per run)
            kwargs["attention_mask"] = torch.ones_like(ids)
            lengths = (ids != self.pad_id).sum(-1)  # right padding: a row's real tokens come first
            if self.training:
                kwargs["position_ids"] = sampled_positions(self.draws.next_rng(), lengths, length, self.span)
            else:
                kwargs["position_ids"] = spread(torch.arange(length, device=ids.device).expand(batch, length), lengths, self.span)
        elif self.pos == "fire":
            positions, causal = causal_positions(batch, length, ids.device)
            kwargs["attention_mask"] = self.fire(positions, positions, causal)
        else:
            offsets = drawn_offsets(self.draws.next_rng(), batch, ids.device) if self.training else None
            kwargs["inputs_embeds"] = self.net.get_input_embeddings()(ids) + self.abacus(self.abacus.runs(ids), offsets)
            del kwargs["input_ids"]
        return self.net(**kwargs).logits

    def step(
        self, ids: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor, cache: Any = None, use_cache: bool = False
    ) -> tuple[torch.Tensor, Any]:
        """Logits of ids given the attention mask over (cache + ids) and the positions of ids."""
        self._check_length(int(mask.shape[1]))
        before = None
        if self.pos == "abacus" and cache is not None:
            cache, before = cache  # (the HF cache, the digit place of each row's last token)
        kwargs: dict[str, Any] = {"input_ids": ids, "attention_mask": mask, "use_cache": use_cache}
        if self._takes_positions:
            kwargs["position_ids"] = positions
        if self.pos == "randomized":
            planned = self._plan is not None and len(self._plan) == len(ids)
            totals = self._plan.to(ids.device) if planned else mask.sum(-1)
            kwargs["position_ids"] = spread(positions, totals, self.span)
        if self.pos == "fire":
            keys = key_positions(mask)
            allowed = mask.bool()[:, None, :] & (keys[:, None, :] <= positions[:, :, None])
            kwargs["attention_mask"] = self.fire(positions, keys, allowed)
        places = None
        if self.pos == "abacus":
            places = self.abacus.runs(ids, before)
            kwargs["inputs_embeds"] = self.net.get_input_embeddings()(ids) + self.abacus(places)
            del kwargs["input_ids"]
        if cache is not None:
            kwargs[self._cache_kw] = cache
        out = self.net(**kwargs)
        new_cache = getattr(out, "cache", None) if hasattr(out, "cache") else getattr(out, "past_key_values", None)
        if places is not None and use_cache:
            new_cache = (new_cache, places[:, -1])
        return out.logits, (new_cache if use_cache else None)

    def _check_length(self, length: int) -> None:
        limit = self.max_positions
        if limit is not None and length > limit:
            raise BaselineError(f"a sequence of {length} tokens exceeds the {self.pos} table of {limit} positions")


def build_model(pos: str, shape: ModelShape, vocab_size: int, max_len: int, pad_id: int = 0, tokens: Sequence[str] | None = None) -> SeqModel:
    """A freshly initialised model (initialise under torch.manual_seed for reproducibility;
    tokens: the vocabulary, which abacus positions read)."""
    return SeqModel(pos, shape, vocab_size, max_len, pad_id, tokens)
