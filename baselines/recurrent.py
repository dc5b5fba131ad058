"""Recurrent baselines: ``rnn`` (Elman, tanh) and ``lstm``, stacked ``layers`` deep.

Tokens are embedded (``d_model``), read by torch's ``nn.RNN`` / ``nn.LSTM`` with hidden size
``d_model``, and the top layer's output is mapped to logits by a linear read-out. Training
runs the whole batch through the fused module; decoding runs the same module one token at a
time with the state as its cache (padding leaves the state unchanged). Both compute in fp32,
outside any autocast (gengap.baselines.sequence_model.fp32_region).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from gengap.baselines.errors import BaselineError
from gengap.baselines.sequence_model import RecurrentModel, fp32_region

RECURRENT = ("rnn", "lstm")


class RecurrentLM(RecurrentModel):
    """An Elman RNN or an LSTM language model over token ids."""

    def __init__(self, arch: str, layers: int, d_model: int, vocab_size: int, pad_id: int = 0, sep_id: int = 1) -> None:
        if arch not in RECURRENT:
            raise BaselineError(f"unknown recurrent architecture {arch!r}; choose one of {', '.join(RECURRENT)}")
        if layers < 1 or d_model < 1:
            raise BaselineError(f"layers and d_model must be positive, got {layers} and {d_model}")
        super().__init__(vocab_size, d_model, pad_id, sep_id)
        self.arch = arch
        self.layers = layers
        kind = nn.LSTM if arch == "lstm" else nn.RNN
        self.rnn = kind(d_model, d_model, num_layers=layers, batch_first=True)

    def describe(self) -> dict[str, Any]:
        return {"arch": self.arch, "pos": "none", "layers": self.layers, "d_model": self.d_model,
                "vocab_size": self.vocab_size, "max_positions": None, "parameters": self.n_parameters()}

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        with fp32_region(ids.device):  # CUDA autocast would run cuDNN's RNN in fp16 (gengap.baselines.execution)
            outputs, _ = self.rnn(self.embed(ids))
            return self.head(outputs)

    def initial_state(self, batch: int, context: Any, device: torch.device) -> Any:
        zeros = torch.zeros(self.layers, batch, self.d_model, device=device)
        return (zeros, zeros.clone()) if self.arch == "lstm" else zeros

    def cell(self, x: torch.Tensor, state: Any) -> tuple[torch.Tensor, Any]:
        out, new = self.rnn(x[:, None], state)
        return out[:, 0], new

    def select(self, keep: torch.Tensor, new: Any, old: Any) -> Any:
        gate = keep[None, :, None]
        if self.arch == "lstm":
            return (torch.where(gate, new[0], old[0]), torch.where(gate, new[1], old[1]))
        return torch.where(gate, new, old)
