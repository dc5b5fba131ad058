"""``tape_rnn``: an Elman RNN with a memory tape (the Tape-RNN of Deletang et al. 2023,
loosely after Suzgun et al.'s Baby-NTM).

The tape is a ring of ``memory_cell``-wide cells with the head always at cell 0 (the tape
moves, not the head). At every token the controller reads its input embedding and the cell
under the head: ``h_t = tanh(W [x_t; cell_0] + U h_{t-1} + b)``. From ``h_t`` it emits a value
(an MLP, 64-64 hidden units) that is written to the cell under the head, and a softmax over
five actions that move the tape after the write; the new tape is their mixture:

| action      | cell m of the new tape holds old cell |
|-------------|---------------------------------------|
| stay        | m                                     |
| left        | m + 1                                 |
| right       | m - 1                                 |
| jump left   | m + n                                 |
| jump right  | m - n                                 |

(indices modulo the ring's size), where n is the row's input length: the tokens before its
first ``<sep>``. In a causal model n is known before the input is read because a row's
prompt (``input <sep>``) is given whole, as Deletang et al. give the length to the tape's
initial state. A row's ring has ``2 n + 2`` cells, a function of its own input only, so a
row computes the same numbers alone or in any batch, in training and in decoding.

The tape tensor is as wide as the longest ring of the batch; cells past a row's ring stay zero
and are never read, so a wider tape computes the same numbers (to float rounding: the
mixture of moves is summed in a kernel of another shape). Reading the longest ring's
size from a device tensor would stop the host until the device caught up (a synchronisation
per training step on CUDA) and break a torch.compile graph, so the width is read only where
that is free (an eager run on the CPU); elsewhere it is ``2 L + 2`` for a sequence of L tokens,
a bound known from the shape (a row's input is never longer than its sequence), with no read.
The tape is fp32, as the whole recurrence is (gengap.baselines.sequence_model.fp32_region).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from gengap.baselines.sequence_model import MemoryRNN, input_lengths

ACTIONS = ("stay", "left", "right", "jump_left", "jump_right")
WRITE_HIDDEN = (64, 64)


def ring_sizes(lengths: torch.Tensor) -> torch.Tensor:
    """Cells of each row's ring: 2 n + 2 for input length n."""
    return 2 * lengths + 2


def tape_width(lengths: torch.Tensor, sequence_length: int) -> int:
    """Cells of a batch's tape: the longest ring when reading it is free (eager, on the CPU), else
    the bound 2 L + 2 of a sequence of L tokens, without reading the device (see the module doc)."""
    if lengths.device.type == "cpu" and not torch.compiler.is_compiling():
        return int(ring_sizes(lengths).max())
    return 2 * sequence_length + 2


def action_indices(lengths: torch.Tensor, width: int) -> torch.Tensor:
    """(5 * B * width,) long: for each action, row and new cell m, the index of the old cell it
    reads in the tape flattened to (B * width) cells (cells at or past a row's ring size read
    themselves, and stay zero)."""
    sizes = ring_sizes(lengths)[:, None]
    cells = torch.arange(width, device=lengths.device)[None, :]
    offsets = torch.stack([torch.zeros_like(lengths), torch.ones_like(lengths), -torch.ones_like(lengths), lengths, -lengths])
    moved = torch.remainder(cells[None] + offsets[:, :, None], sizes[None])
    moved = torch.where(cells[None] < sizes[None], moved, cells[None].expand_as(moved))
    rows = (torch.arange(len(lengths), device=lengths.device) * width)[None, :, None]
    return (moved + rows).reshape(-1)


def update_tape(tape: torch.Tensor, actions: torch.Tensor, value: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    """The tape (B, M, C) after writing value (B, C) under the head and moving by the action
    mixture (B, 5) with the rows' action indices (of :func:`action_indices`)."""
    written = torch.cat([value[:, None], tape[:, 1:]], dim=1)
    batch, width, cell = written.shape
    moved = written.reshape(batch * width, cell)[indices].reshape(len(ACTIONS), batch, width, cell)
    return torch.einsum("abmc,ba->bmc", moved, actions)


class TapeRNN(MemoryRNN):
    """Elman controller (``d_model`` units) with one ring tape of ``memory_cell``-wide cells."""

    arch = "tape_rnn"

    def __init__(self, d_model: int, memory_cell: int, vocab_size: int, pad_id: int = 0, sep_id: int = 1) -> None:
        super().__init__(d_model, memory_cell, vocab_size, pad_id, sep_id)
        layers: list[nn.Module] = []
        width = d_model
        for hidden in WRITE_HIDDEN:
            layers += [nn.Linear(width, hidden), nn.ReLU()]
            width = hidden
        self.write_value = nn.Sequential(*layers, nn.Linear(width, memory_cell))
        self.action_logits = nn.Linear(d_model, len(ACTIONS))

    def context(self, ids: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, int]:
        return input_lengths(ids, mask, self.sep_id), int(ids.shape[1])

    def initial_state(self, batch: int, context: Any, device: torch.device) -> Any:
        lengths, sequence_length = context
        lengths = lengths.to(device)
        width = tape_width(lengths, sequence_length)
        tape = torch.zeros(batch, width, self.memory_cell, device=device)
        return torch.zeros(batch, self.d_model, device=device), tape, action_indices(lengths, width)

    def cell(self, x: torch.Tensor, state: Any) -> tuple[torch.Tensor, Any]:
        hidden, tape, indices = state
        h = self.controller(x, tape[:, 0], hidden)
        actions = torch.softmax(self.action_logits(h), dim=-1)
        return h, (h, update_tape(tape, actions, self.write_value(h), indices), indices)

    def select(self, keep: torch.Tensor, new: Any, old: Any) -> Any:
        return (torch.where(keep[:, None], new[0], old[0]), torch.where(keep[:, None, None], new[1], old[1]), new[2])
