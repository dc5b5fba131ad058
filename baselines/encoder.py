"""``encoder``: a non-causal transformer encoder over the input and the empty output tape, the
transformer of Deletang et al. 2023 (google-deepmind/neural_networks_chomsky_hierarchy's
``transformer_encoder``: 5 layers, d_model 64, 8 heads, the ``deletang`` preset).

Every position attends to every real token of its row (padding masked out), so an output-tape
logit reads the whole input, and a later input token changes an earlier logit: it is not a
language model, and it takes the empty-tape layout only (gengap.baselines.settings refuses
``autoregressive``). As the paper's: token embeddings scaled by sqrt(d_model), plus fixed
sin/cos positions (``pos`` sinusoidal; nope: none), dropout 0.1, then post-norm layers
(attention, residual, layer norm; a ReLU feed-forward of 4 x d_model, residual, layer norm;
torch's ``nn.TransformerEncoderLayer``) and a linear read-out.

``forward(ids)`` takes right-padded rows (padding: ``pad_id``) with positions counted from 0;
``step(ids, mask, positions)`` takes left-padded ones with their positions (one pass, no cache).
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn

from gengap.baselines.errors import BaselineError
from gengap.baselines.sequence_model import SequenceModel

DROPOUT = 0.1
WIDENING = 4


def sinusoid(positions: torch.Tensor, d_model: int) -> torch.Tensor:
    """Sin/cos encodings (Vaswani et al.) of integer positions (B, L) -> (B, L, d_model), float32."""
    rate = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64, device=positions.device) * (-math.log(10000.0) / d_model))
    angles = positions.to(torch.float64)[..., None] * rate
    table = torch.zeros(*positions.shape, d_model, dtype=torch.float64, device=positions.device)
    table[..., 0::2] = torch.sin(angles)
    table[..., 1::2] = torch.cos(angles[..., : d_model // 2])
    return table.float()


class Encoder(SequenceModel):
    """The non-causal encoder (see the module doc)."""

    arch = "encoder"

    def __init__(self, pos: str, layers: int, d_model: int, heads: int, vocab_size: int, pad_id: int = 0) -> None:
        super().__init__()
        if pos not in ("sinusoidal", "nope"):
            raise BaselineError(f"the encoder takes pos sinusoidal or nope, got {pos!r}")
        self.pos = pos
        self.layers, self.d_model, self.heads = layers, d_model, heads
        self.vocab_size, self.pad_id = vocab_size, pad_id
        self.embed = nn.Embedding(vocab_size, d_model)
        nn.init.trunc_normal_(self.embed.weight, std=0.02)
        self.dropout = nn.Dropout(DROPOUT)
        layer = nn.TransformerEncoderLayer(d_model, heads, WIDENING * d_model, DROPOUT, activation="relu", batch_first=True, norm_first=False)
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, vocab_size)

    def describe(self) -> dict[str, Any]:
        return {"arch": self.arch, "pos": self.pos, "layers": self.layers, "d_model": self.d_model, "heads": self.heads,
                "causal": False, "dropout": DROPOUT, "vocab_size": self.vocab_size, "max_positions": None, "parameters": self.n_parameters()}

    def encode(self, ids: torch.Tensor, real: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """Logits (B, L, V) of ids whose real tokens are ``real`` (bool), at ``positions``."""
        h = self.embed(ids) * math.sqrt(self.d_model)
        if self.pos == "sinusoidal":
            h = h + sinusoid(positions, self.d_model)
        h = self.blocks(self.dropout(h), src_key_padding_mask=~real)
        return self.head(h)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(ids.shape[1], device=ids.device).expand_as(ids)
        return self.encode(ids, ids != self.pad_id, positions)

    def step(
        self, ids: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor, cache: Any = None, use_cache: bool = False
    ) -> tuple[torch.Tensor, Any]:
        if cache is not None or use_cache or mask.shape[1] != ids.shape[1]:
            raise BaselineError("the encoder reads a whole sequence in one pass: it has no cache (use output_mode empty-tape)")
        return self.encode(ids, mask.bool(), positions), None
