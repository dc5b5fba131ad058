"""The interface every baseline architecture implements (transformer, recurrent, memory, looped).

A :class:`SequenceModel` is a causal model over token ids: it reads a sequence left to right
and gives logits at every position. What the sequence holds and which logits are trained is
the run's layout (gengap.baselines.layout; n input, m target tokens, c computation steps):
``autoregressive`` ``input <sep> <blank>*(c n) target <end>``, each logit predicting the next
token (c = 0: ``input <sep> target <end>``), decoded greedily; ``empty-tape`` ``input <sep>
<blank>*(c n) <blank>*m``, the logits at the m blank output-tape positions predicting the m
target tokens, decoded in one pass (gengap.baselines.decoding). A model never knows the
layout: both go through this one interface. The training loop, decoding, checkpoints and
reports use only this interface, so nothing outside baselines/ knows which architecture runs:

- ``forward(ids)`` -> logits ``(B, L, V)`` for a right-padded training batch (every row starts
  at position 0; padding comes after the sequence and never influences an earlier logit);
- ``step(ids, mask, positions, cache=None, use_cache=False)`` -> ``(logits, cache)``: the
  decoding interface for left-padded prompts (a whole empty-tape sequence is one such
  prompt). ``mask`` covers what the cache has seen plus ``ids`` (1 = real token, 0 =
  padding), ``positions`` are the positions of ``ids`` counted from each row's first real token. For a recurrent model the cache is its state; padding
  leaves a state unchanged, so a left-padded row decodes as it would alone;
- ``max_positions``: the longest sequence the model can read (None: unbounded);
- ``describe()``: a JSON-able description (architecture, sizes, parameter count), written to
  results.json;
- ``set_eval_iterations(k)``: the iterations decoding runs (the looped model; a no-op elsewhere);
- ``plan_positions(totals)``: the whole length of each row decoding is about to run (its
  prompt, the tokens it may generate and the end token; None when done), for the encodings
  whose decoding positions depend on it (randomized: gengap.baselines.positions; a no-op
  elsewhere).

Recurrent models share :class:`RecurrentModel`: an embedding, a per-token cell over a state and
a linear read-out; ``step`` runs the same cell one token at a time with padding masked, so the
cached and the uncached decoding paths compute the same numbers. The memory-augmented ones
(stack, tape) share :class:`MemoryRNN`'s Elman controller, which reads a memory cell beside
its input. A recurrent model computes in fp32 whatever autocast is active around it
(:func:`fp32_region`: the recurrence, its memory and its read-out run with autocast disabled;
gengap.baselines.execution says why), in training and in decoding alike.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any, Sequence

import torch
from torch import nn

from gengap.baselines.errors import BaselineError


class SequenceModel(nn.Module):
    """Base class of every architecture: see the module doc for the contract."""

    arch: str = ""
    pos: str = "none"  # the positional encoding, for the architectures that have one

    @property
    def max_positions(self) -> int | None:
        return None

    def set_eval_iterations(self, iterations: int) -> None:
        """The iterations ``step`` runs (the looped model); other architectures have none to set."""

    def plan_positions(self, totals: Sequence[int] | None) -> None:
        """The whole length of each row of the decoding about to run (None: done); see the module doc."""

    def n_parameters(self, trainable: bool = True) -> int:
        return sum(p.numel() for p in self.parameters() if p.requires_grad or not trainable)

    def describe(self) -> dict[str, Any]:
        raise NotImplementedError

    def forward(self, ids: torch.Tensor) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def step(
        self, ids: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor, cache: Any = None, use_cache: bool = False
    ) -> tuple[torch.Tensor, Any]:  # pragma: no cover - abstract
        raise NotImplementedError


def input_lengths(ids: torch.Tensor, mask: torch.Tensor, sep_id: int) -> torch.Tensor:
    """Per row, the number of real tokens before its first ``<sep>`` (all real tokens when it has none).

    ``mask`` marks real tokens (rows may be left-padded); the result is a long tensor (B,).
    """
    real = mask.bool()
    before = torch.cumsum((ids == sep_id) & real, dim=1) == 0
    return (before & real).sum(dim=1)


AUTOCAST_DEVICES = ("cpu", "cuda")  # device types whose autocast a recurrent model switches off


def fp32_region(device: torch.device) -> Any:
    """A context in which autocast is off on the device's type (nothing to switch off elsewhere,
    e.g. on the meta device): what it computes stays in its inputs' dtype, fp32 here."""
    return torch.autocast(device.type, enabled=False) if device.type in AUTOCAST_DEVICES else nullcontext()


class RecurrentModel(SequenceModel):
    """An embedding, a recurrent cell and a linear read-out; subclasses define the cell.

    Subclasses implement ``initial_state(batch, context)``, ``cell(x, state)`` -> ``(output,
    state)`` for one token (``x``: embeddings ``(B, E)``), ``select(keep, new, old)`` (per row:
    the new state where ``keep``, else the old) and, when the state needs to know something
    of the whole row (the tape's input length), ``context(ids, mask)``. ``forward`` may be
    overridden by a faster whole-sequence path that computes the same function.
    """

    def __init__(self, vocab_size: int, d_model: int, pad_id: int = 0, sep_id: int = 1) -> None:
        super().__init__()
        self.vocab_size = vocab_size
        self.d_model = d_model
        self.pad_id = pad_id
        self.sep_id = sep_id
        self.embed = nn.Embedding(vocab_size, d_model)
        self.head = nn.Linear(d_model, vocab_size)

    # -- to be provided by a cell --------------------------------------------------------

    def context(self, ids: torch.Tensor, mask: torch.Tensor) -> Any:
        return None

    def initial_state(self, batch: int, context: Any, device: torch.device) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def cell(self, x: torch.Tensor, state: Any) -> tuple[torch.Tensor, Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def select(self, keep: torch.Tensor, new: Any, old: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- the interface -------------------------------------------------------------------

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        mask = torch.ones_like(ids)
        with fp32_region(ids.device):
            outputs, _ = self.scan(ids, mask, None, masked=False)
            return self.head(outputs)

    def step(
        self, ids: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor, cache: Any = None, use_cache: bool = False
    ) -> tuple[torch.Tensor, Any]:
        own = mask[:, mask.shape[1] - ids.shape[1] :]
        with fp32_region(ids.device):
            outputs, state = self.scan(ids, own, cache, masked=True)
            return self.head(outputs), (state if use_cache else None)

    def scan(self, ids: torch.Tensor, mask: torch.Tensor, state: Any, masked: bool) -> tuple[torch.Tensor, Any]:
        """Outputs (B, L, d_model) of the cell over ids from state (None: the initial state of
        these rows); with ``masked``, padding positions leave the state unchanged."""
        if state is None:
            state = self.initial_state(ids.shape[0], self.context(ids, mask), ids.device)
        x = self.embed(ids)
        keep = mask.bool()
        outputs = []
        for t in range(ids.shape[1]):
            out, new = self.cell(x[:, t], state)
            state = self.select(keep[:, t], new, state) if masked else new
            outputs.append(out)
        return torch.stack(outputs, dim=1), state


class MemoryRNN(RecurrentModel):
    """An Elman controller of ``d_model`` units that reads a ``memory_cell``-wide memory cell
    beside its input: ``h_t = tanh(W [x_t; read] + U h_{t-1} + b)``."""

    def __init__(self, d_model: int, memory_cell: int, vocab_size: int, pad_id: int = 0, sep_id: int = 1) -> None:
        if d_model < 1 or memory_cell < 1:
            raise BaselineError(f"d_model and memory_cell must be positive, got {d_model} and {memory_cell}")
        super().__init__(vocab_size, d_model, pad_id, sep_id)
        self.memory_cell = memory_cell
        self.input_map = nn.Linear(d_model + memory_cell, d_model)
        self.recurrent_map = nn.Linear(d_model, d_model, bias=False)

    def controller(self, x: torch.Tensor, read: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.input_map(torch.cat([x, read], dim=-1)) + self.recurrent_map(hidden))

    def describe(self) -> dict[str, Any]:
        return {"arch": self.arch, "pos": "none", "layers": 1, "d_model": self.d_model, "memory_cell": self.memory_cell,
                "vocab_size": self.vocab_size, "max_positions": None, "parameters": self.n_parameters()}
