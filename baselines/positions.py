"""The positional encodings built for length generalization, shared by the transformer
(gengap.baselines.models) and the looped block (gengap.baselines.looped):

- ``randomized`` (Ruoss et al. 2023): rotary embeddings at positions that, in training, are an
  ordered random sample (without repetition) of 0..R-1 for every sequence, R =
  RANDOMIZED_FACTOR x the longest sequence the model was sized for, so the positions of the
  longest test sequences are seen in training; in decoding, a sequence of n tokens (its whole
  length, planned by the decoder: :meth:`gengap.baselines.sequence_model.SequenceModel.plan_positions`)
  reads the evenly spread positions floor(i R / n), the mean of such a sample;
- ``fire`` (Li et al. 2023, FIRE): no position in the embeddings; every attention logit gets
  the bias f(psi(i - j) / psi(max(L, i))) of query position i and key position j, psi(x) =
  log(c x + 1), f an MLP of one hidden layer (FIRE_WIDTH units, ReLU) giving one bias per head,
  c and L learned (initialised FIRE_C and FIRE_L);
- ``abacus`` (McLeish et al. 2024): no position besides the causal mask, but every one-digit
  token gets a learned embedding of its place in its run of consecutive digits (1 for a
  number's first digit written, 2 for the next, ...; 0, no embedding, for every other
  token), added to its token embedding; in training a random offset 0..ABACUS_OFFSETS is added
  to the places of each sequence, so places beyond the training numbers' lengths are trained.
  Pair it with numbers written least significant digit first, operands and answer
  (addition's ``format=little_endian``), as the paper does: a place then counts from the units
  digit in every number, so equal places are equal significance.

Training draws (randomized positions, abacus offsets) come from the ``positions`` stream of
the model's position seed and a count of its training passes (gengap.generators.seeding), both
buffers of the model: the seed is drawn at initialisation from torch's generator (under the
run's init seed), and the count is saved with the weights, so a resumed run draws what an
uninterrupted one did.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import torch
from torch import nn

from gengap.baselines.errors import BaselineError
from gengap.generators.seeding import positions_rng

RANDOMIZED_FACTOR = 2  # randomized positions are sampled from 0..R-1, R = this x the longest sequence
ABACUS_OFFSETS = 100  # training adds an offset 0..this to a sequence's digit places (McLeish et al.'s k)
FIRE_WIDTH = 32  # hidden units of FIRE's MLP
FIRE_C = 0.1  # initial c of psi(x) = log(c x + 1)
FIRE_L = 512.0  # initial threshold L of the progressive interpolation
MASKED = -1e9  # the additive bias of a key a query may not attend to


class PositionDraws(nn.Module):
    """The position seed and the number of training passes drawn so far (buffers: saved with the weights)."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("seed", torch.randint(0, 2**62, (), dtype=torch.long))
        self.register_buffer("draws", torch.zeros((), dtype=torch.long))

    def next_rng(self) -> np.random.Generator:
        """The generator of the next training pass (and one pass counted)."""
        rng = positions_rng(int(self.seed), int(self.draws))
        self.draws += 1
        return rng


def ordered_sample(rng: np.random.Generator, rows: int, length: int, span: int) -> torch.Tensor:
    """(rows, length) positions: per row, length distinct values of 0..span-1 in increasing order."""
    if length > span:
        raise BaselineError(f"a sequence of {length} tokens exceeds the {span} randomized positions")
    return torch.as_tensor(np.stack([np.sort(rng.choice(span, size=length, replace=False)) for _ in range(rows)]), dtype=torch.long)


def sampled_positions(rng: np.random.Generator, lengths: torch.Tensor, width: int, span: int) -> torch.Tensor:
    """(B, width) training positions of right-padded rows of lengths[b] real tokens: an ordered
    sample of 0..span-1 per row (its padding at span - 1, never read)."""
    rows = [ordered_sample(rng, 1, int(n), span)[0] for n in lengths.tolist()]
    return torch.stack([torch.cat([r, r.new_full((width - len(r),), span - 1)]) for r in rows]).to(lengths.device)


def drawn_offsets(rng: np.random.Generator, batch: int, device: Any) -> torch.Tensor:
    """(B,) training offsets of abacus places, uniform over 0..ABACUS_OFFSETS."""
    return torch.as_tensor(rng.integers(0, ABACUS_OFFSETS + 1, size=batch), dtype=torch.long, device=device)


def spread(positions: torch.Tensor, totals: torch.Tensor, span: int) -> torch.Tensor:
    """Plain positions (B, L) of rows of totals[b] tokens, evenly spread over 0..span-1: floor(i span / n)."""
    return torch.div(positions * span, totals.clamp(min=1)[:, None], rounding_mode="floor")


def digit_ids(tokens: Sequence[str] | None) -> list[int]:
    """The ids of a vocabulary's one-digit tokens (abacus places count runs of them)."""
    if tokens is None:
        raise BaselineError("abacus positions need the vocabulary's tokens (which ids are digits)")
    return [i for i, token in enumerate(tokens) if len(token) == 1 and "0" <= token <= "9"]


class Abacus(nn.Module):
    """Learned embeddings of digit places (see the module doc): index 0 (not a digit) is zero."""

    def __init__(self, digits: Sequence[int], vocab_size: int, d_model: int, places: int) -> None:
        super().__init__()
        is_digit = torch.zeros(vocab_size, dtype=torch.bool)
        is_digit[list(digits)] = True
        self.register_buffer("is_digit", is_digit, persistent=False)
        self.places = places
        self.embed = nn.Embedding(places, d_model, padding_idx=0)
        nn.init.normal_(self.embed.weight, std=0.02)
        with torch.no_grad():
            self.embed.weight[0].zero_()

    def runs(self, ids: torch.Tensor, before: torch.Tensor | None = None) -> torch.Tensor:
        """(B, L) each token's place in its run of digits (0 for other tokens); ``before`` (B,):
        the place of the token before ids (a decoding cache's), 0 when none."""
        digit = self.is_digit[ids]
        index = torch.arange(ids.shape[1], device=ids.device).expand_as(ids)
        last_other = torch.cummax(torch.where(digit, torch.full_like(index, -1), index), dim=1).values
        places = torch.where(digit, index - last_other, torch.zeros_like(index))
        if before is not None:
            places = places + torch.where(digit & (last_other < 0), before[:, None], torch.zeros_like(places))
        return places

    def forward(self, places: torch.Tensor, offsets: torch.Tensor | None = None) -> torch.Tensor:
        """The place embeddings (B, L, d) of places (training: each row's offset added to its digits')."""
        if offsets is not None:
            places = torch.where(places > 0, places + offsets[:, None], places)
        return self.embed(places.clamp(max=self.places - 1))


def abacus_places(max_len: int) -> int:
    """The size of an abacus table: the longest sequence's places plus the training offsets (and 0)."""
    return max_len + ABACUS_OFFSETS + 1


class Fire(nn.Module):
    """FIRE's attention biases (see the module doc), one per head."""

    def __init__(self, heads: int) -> None:
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(1, FIRE_WIDTH), nn.ReLU(), nn.Linear(FIRE_WIDTH, heads))
        self.c = nn.Parameter(torch.tensor(FIRE_C))
        self.threshold = nn.Parameter(torch.tensor(FIRE_L))

    def forward(self, queries: torch.Tensor, keys: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
        """(B, H, Q, K) additive attention biases of query positions (B, Q) and key positions
        (B, K); MASKED where ``allowed`` (B, Q, K) is false."""
        c = self.c.abs() + 1e-6
        distance = (queries[:, :, None] - keys[:, None, :]).clamp(min=0).float()
        scale = torch.log(c * torch.maximum(queries.float(), self.threshold.abs())[:, :, None] + 1)
        bias = self.mlp((torch.log(c * distance + 1) / scale)[..., None]).permute(0, 3, 1, 2)
        return bias.masked_fill(~allowed[:, None], MASKED)


def key_positions(mask: torch.Tensor) -> torch.Tensor:
    """The positions of the keys a mask (B, K) covers, counted from each row's first real token."""
    return (mask.cumsum(-1) - 1).clamp(min=0)


def causal_positions(batch: int, length: int, device: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """Positions (B, L) 0.. of a right-padded training batch and its causal mask (B, L, L)."""
    positions = torch.arange(length, device=device).expand(batch, length)
    causal = torch.ones(length, length, dtype=torch.bool, device=device).tril()
    return positions, causal.expand(batch, length, length)


def randomized_span(max_len: int) -> int:
    """R, the range randomized positions are sampled from."""
    return RANDOMIZED_FACTOR * max(max_len, 1)
