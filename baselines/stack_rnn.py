"""``stack_rnn``: an Elman RNN controlling a differentiable stack (Joulin & Mikolov 2015; the
Stack-RNN of Deletang et al. 2023).

At every token the controller reads its input embedding and the stack's top cell:
``h_t = tanh(W [x_t; top_{t-1}] + U h_{t-1} + b)``. From ``h_t`` it emits a value to push
(``memory_cell`` numbers) and a softmax over three actions, push / pop / no-op; the new stack
is their mixture:

- push: the value on top, every cell one place down;
- pop: every cell one place up (the bottom filled with zeros);
- no-op: the stack unchanged.

The output at t is ``h_t`` (read out to logits), so it sees the top written before t. With
``stack_size`` 0 the stack is unbounded: it holds at least one cell more than the tokens read
so far (it grows by doubling, filled with zeros), so nothing ever falls off the bottom, whatever
the length. With ``stack_size`` k > 0 it has k cells, as the paper's (30): a push drops the
bottom cell, a pop fills the bottom with zeros.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from gengap.baselines.sequence_model import MemoryRNN

PUSH, POP, NO_OP = 0, 1, 2
ACTIONS = ("push", "pop", "no-op")


def update_stack(stack: torch.Tensor, actions: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    """The stack (B, D, C) after the action mixture ``actions`` (B, 3: push, pop, no-op) with
    ``value`` (B, C) pushed; cell 0 is the top."""
    pushed = torch.cat([value[:, None], stack[:, :-1]], dim=1)
    popped = torch.cat([stack[:, 1:], torch.zeros_like(stack[:, :1])], dim=1)
    weight = actions[:, :, None, None]
    return weight[:, PUSH] * pushed + weight[:, POP] * popped + weight[:, NO_OP] * stack


def grown(stack: torch.Tensor, needed: int) -> torch.Tensor:
    """stack with at least ``needed`` cells (doubling; new cells at the bottom are zeros)."""
    depth = stack.shape[1]
    if depth >= needed:
        return stack
    while depth < needed:
        depth *= 2
    return torch.cat([stack, stack.new_zeros(stack.shape[0], depth - stack.shape[1], stack.shape[2])], dim=1)


class StackRNN(MemoryRNN):
    """Elman controller (``d_model`` units) with one stack of ``memory_cell``-wide cells."""

    arch = "stack_rnn"

    def __init__(self, d_model: int, memory_cell: int, vocab_size: int, pad_id: int = 0, sep_id: int = 1, stack_size: int = 0) -> None:
        super().__init__(d_model, memory_cell, vocab_size, pad_id, sep_id)
        self.stack_size = stack_size
        self.push_value = nn.Linear(d_model, memory_cell)
        self.action_logits = nn.Linear(d_model, len(ACTIONS))

    def initial_state(self, batch: int, context: Any, device: torch.device) -> Any:
        depth = self.stack_size or 4
        return (torch.zeros(batch, self.d_model, device=device), torch.zeros(batch, depth, self.memory_cell, device=device), 0)

    def cell(self, x: torch.Tensor, state: Any) -> tuple[torch.Tensor, Any]:
        hidden, stack, steps = state
        h = self.controller(x, stack[:, 0], hidden)
        actions = torch.softmax(self.action_logits(h), dim=-1)
        stack = update_stack(stack if self.stack_size else grown(stack, steps + 2), actions, self.push_value(h))
        return h, (h, stack, steps + 1)

    def describe(self) -> dict[str, Any]:
        described = super().describe()
        return {**described, "stack_size": self.stack_size} if self.stack_size else described

    def select(self, keep: torch.Tensor, new: Any, old: Any) -> Any:
        old_stack = grown(old[1], new[1].shape[1])
        return (torch.where(keep[:, None], new[0], old[0]), torch.where(keep[:, None, None], new[1], old_stack), new[2])
