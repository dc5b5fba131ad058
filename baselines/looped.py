"""``looped``: one weight-tied transformer block applied k times, recurrent in depth, with the
input re-injected at every iteration ("recall", Bansal et al. 2022; the depth-recurrent
networks of Schwarzschild et al. 2021, in transformer form).

    h_0 = 0,   h_{i+1} = Block(h_i + e)   for i < k,   logits = W LN(h_k)

where e is the token embedding and Block is ``layers`` pre-norm causal layers (self-attention
with RoPE, or no positions with ``pos`` nope, then a GELU MLP 4 d wide) whose weights are the
same at every iteration. The encodings built for length generalization
(gengap.baselines.positions) work here as in the transformer: ``randomized`` rotates at an
ordered random sample of positions in training (evenly spread ones in decoding), ``fire`` gives
every layer its own FIRE biases (shared by the iterations, as the layer is), ``abacus`` adds
the digit-place embeddings to e (so every iteration recalls them). With ``window`` w > 0 a position attends only to itself and the w - 1
positions before it, so information travels at most (w - 1) positions per layer and
iteration, as in the convolutional networks of Schwarzschild et al.: inputs that need
information from further away need more iterations (``window`` 0: the whole causal prefix). The number of iterations is ``iterations`` in training
(``forward``) and ``eval_iterations`` in decoding (``step``), which the training loop sets to
each of the run's test iteration counts in turn: a model trained with k iterations can be
evaluated with 2k or 4k. The decoding cache holds keys and values per iteration and layer.
Input and output embeddings are tied; dropout is 0.

The progressive loss (Bansal et al. 2022, "End-to-end algorithm synthesis with recurrent
networks"; ``progressive_loss`` alpha > 0 in training) trains the block to improve any state it
is handed: per step, n ~ U{0..k-1} iterations run without gradient, the state is detached, and
j ~ U{1..k-n} more run with gradient from it (:meth:`LoopedTransformer.forward_progressive`; k
the training iterations); the loss is (1 - alpha) x the cross-entropy of the k-iteration
logits + alpha x that of these (alpha 1: no k-iteration pass). n and j come from the
``progressive-loss`` stream of the seed's data seed and the step (:func:`progressive_draw`), so
a resumed run draws what an uninterrupted one did.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from gengap.baselines.errors import BaselineError
from gengap.baselines.positions import (
    Abacus,
    Fire,
    PositionDraws,
    abacus_places,
    digit_ids,
    drawn_offsets,
    key_positions,
    randomized_span,
    sampled_positions,
    spread,
)
from gengap.baselines.sequence_model import SequenceModel
from gengap.baselines.spec import LOOPED_POSITIONAL
from gengap.generators.seeding import labels_key, stream

ROPE_BASE = 10000.0


def rotate(x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """Rotary position embedding of x (B, H, L, D) at positions (B, L) (halves rotated as in Llama)."""
    half = x.shape[-1] // 2
    rate = ROPE_BASE ** (-torch.arange(half, device=x.device, dtype=torch.float32) / half)
    angle = positions[:, None, :, None].float() * rate
    cos, sin = torch.cos(angle).to(x.dtype), torch.sin(angle).to(x.dtype)
    first, second = x[..., :half], x[..., half:]
    return torch.cat([first * cos - second * sin, second * cos + first * sin], dim=-1)


class Layer(nn.Module):
    """A pre-norm causal transformer layer with an optional key/value past."""

    def __init__(self, d_model: int, heads: int, rope: bool, fire: bool = False) -> None:
        super().__init__()
        self.heads = heads
        self.rope = rope
        if fire:
            self.fire = Fire(heads)
        self.norm_attention = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        self.norm_mlp = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))

    def forward(
        self, x: torch.Tensor, positions: torch.Tensor, allowed: torch.Tensor, past: tuple[torch.Tensor, torch.Tensor] | None
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        batch, length, width = x.shape
        q, k, v = self.qkv(self.norm_attention(x)).view(batch, length, 3, self.heads, width // self.heads).permute(2, 0, 3, 1, 4)
        if self.rope:
            q, k = rotate(q, positions), rotate(k, positions)
        if past is not None:
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
        mask = allowed[:, None] if allowed.dtype == torch.bool else allowed.to(q.dtype)  # (B, Q, K) or FIRE's (B, H, Q, K)
        attended = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.out(attended.transpose(1, 2).reshape(batch, length, width))
        return x + self.mlp(self.norm_mlp(x)), (k, v)


def allowed_keys(mask: torch.Tensor, queries: int, window: int = 0) -> torch.Tensor:
    """(B, queries, keys) bool: the last ``queries`` positions of mask (B, keys) may attend to
    real keys at or before them (with ``window`` > 0: only the ``window`` nearest, themselves
    included); a padding query attends to itself (its output is never read)."""
    keys = mask.shape[1]
    query_index = torch.arange(keys - queries, keys, device=mask.device)[:, None]
    key_index = torch.arange(keys, device=mask.device)[None, :]
    causal = key_index <= query_index
    if window > 0:
        causal = causal & (key_index > query_index - window)
    allowed = causal[None] & mask.bool()[:, None, :]
    return allowed | (key_index == query_index)[None]


class LoopedTransformer(SequenceModel):
    """A weight-tied block of ``layers`` layers, run ``iterations`` times with input recall."""

    arch = "looped"

    def __init__(
        self, pos: str, layers: int, d_model: int, heads: int, iterations: int, vocab_size: int, pad_id: int = 0, sep_id: int = 1,
        window: int = 0, max_len: int = 1, tokens: Sequence[str] | None = None,
    ) -> None:
        super().__init__()
        if pos not in LOOPED_POSITIONAL:
            raise BaselineError(f"the looped model takes positions {' or '.join(LOOPED_POSITIONAL)}, got {pos!r}")
        if min(layers, d_model, heads, iterations) < 1 or window < 0:
            raise BaselineError("layers, d_model, heads and iterations must be positive and window non-negative")
        if d_model % heads or (d_model // heads) % 2:
            raise BaselineError(f"d_model ({d_model}) must be divisible by heads ({heads}) into an even head size")
        digits = digit_ids(tokens) if pos == "abacus" else []
        self.pos = pos
        self.layers = layers
        self.d_model = d_model
        self.heads = heads
        self.iterations = iterations
        self.eval_iterations = iterations
        self.window = window
        self.vocab_size = vocab_size
        self.pad_id = pad_id
        self.sep_id = sep_id
        self.embed = nn.Embedding(vocab_size, d_model)
        nn.init.normal_(self.embed.weight, std=0.02)
        self.block = nn.ModuleList(Layer(d_model, heads, pos in ("rope", "randomized"), pos == "fire") for _ in range(layers))
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size, bias=False)
        self.head.weight = self.embed.weight
        self.span = randomized_span(max_len)
        self._plan: torch.Tensor | None = None  # randomized: each decoded row's whole length
        if pos in ("randomized", "abacus"):
            self.draws = PositionDraws()
        if pos == "abacus":
            self.abacus = Abacus(digits, vocab_size, d_model, abacus_places(max_len))

    def set_eval_iterations(self, iterations: int) -> None:
        if iterations < 1:
            raise BaselineError(f"iterations must be positive, got {iterations}")
        self.eval_iterations = iterations

    def plan_positions(self, totals: Sequence[int] | None) -> None:
        self._plan = None if totals is None else torch.as_tensor(list(totals), dtype=torch.long)

    def describe(self) -> dict[str, Any]:
        return {"arch": self.arch, "pos": self.pos, "layers": self.layers, "d_model": self.d_model, "heads": self.heads,
                "iterations": self.iterations, "window": self.window, "vocab_size": self.vocab_size, "max_positions": None,
                **({"position_range": self.span} if self.pos == "randomized" else {}), "parameters": self.n_parameters()}

    def run_block(
        self, x: torch.Tensor, positions: torch.Tensor, allowed: torch.Tensor, past: list[tuple[torch.Tensor, torch.Tensor]] | None
    ) -> tuple[torch.Tensor, list[tuple[torch.Tensor, torch.Tensor]]]:
        """One iteration: the block's layers over x (with their pasts); returns x and the new pasts."""
        presents = []
        for index, layer in enumerate(self.block):
            mask = allowed[index] if isinstance(allowed, list) else allowed  # per layer: FIRE's biases
            x, present = layer(x, positions, mask, past[index] if past is not None else None)
            presents.append(present)
        return x, presents

    def loop(
        self, ids: torch.Tensor, positions: torch.Tensor, allowed: torch.Tensor, iterations: int, cache: list | None, frozen: int = 0,
        keys: torch.Tensor | None = None, extra: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, list]:
        """Logits after ``iterations`` iterations (with input recall) and the new cache; the first
        ``frozen`` run without gradient and the state after them is detached. keys: the key
        positions (FIRE; default the query positions); extra: added to the token embeddings
        (abacus places)."""
        e = self.embed(ids) if extra is None else self.embed(ids) + extra
        if self.pos == "fire":
            keys = positions if keys is None else keys
            allowed = [layer.fire(positions, keys, allowed) for layer in self.block]
        h = torch.zeros_like(e)
        new_cache = []
        for i in range(iterations):
            with torch.no_grad() if i < frozen else nullcontext():
                h, presents = self.run_block(h + e, positions, allowed, cache[i] if cache is not None else None)
            if i + 1 == frozen:
                h = h.detach()
            new_cache.append(presents)
        return self.head(self.norm(h)), new_cache

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.forward_progressive(ids, 0, self.iterations)

    def forward_progressive(self, ids: torch.Tensor, frozen: int, iterations: int) -> torch.Tensor:
        """Training logits after ``frozen`` iterations without gradient, the state detached, then
        ``iterations`` more with gradient from it (frozen 0: the plain forward pass)."""
        batch, length = ids.shape
        positions = torch.arange(length, device=ids.device).expand(batch, length)
        allowed = allowed_keys(torch.ones_like(ids), length, self.window)
        extra = None
        if self.pos == "randomized":
            lengths = (ids != self.pad_id).sum(-1)  # right padding: a row's real tokens come first
            drawn = sampled_positions(self.draws.next_rng(), lengths, length, self.span) if self.training else None
            positions = drawn if drawn is not None else spread(positions, lengths, self.span)
        if self.pos == "abacus":
            offsets = drawn_offsets(self.draws.next_rng(), batch, ids.device) if self.training else None
            extra = self.abacus(self.abacus.runs(ids), offsets)
        return self.loop(ids, positions, allowed, frozen + iterations, None, frozen, extra=extra)[0]

    def step(
        self, ids: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor, cache: Any = None, use_cache: bool = False
    ) -> tuple[torch.Tensor, Any]:
        before = None
        if self.pos == "abacus" and cache is not None:
            cache, before = cache  # (the iterations' keys and values, the digit place of each row's last token)
        if cache is not None and len(cache) != self.eval_iterations:
            raise BaselineError(f"a cache of {len(cache)} iterations cannot continue with {self.eval_iterations}")
        keys, extra, places = key_positions(mask), None, None
        if self.pos == "randomized":
            planned = self._plan is not None and len(self._plan) == len(ids)
            totals = self._plan.to(ids.device) if planned else mask.sum(-1)
            positions = spread(positions, totals, self.span)
        if self.pos == "abacus":
            places = self.abacus.runs(ids, before)
            extra = self.abacus(places)
        allowed = allowed_keys(mask, ids.shape[1], self.window)
        logits, new_cache = self.loop(ids, positions, allowed, self.eval_iterations, cache, keys=keys, extra=extra)
        if places is not None:
            new_cache = (new_cache, places[:, -1])
        return logits, (new_cache if use_cache else None)


def progressive_draw(data_seed: int, step: int, iterations: int) -> tuple[int, int]:
    """(n, j) of training step ``step`` for a model trained with ``iterations`` (k) iterations:
    n ~ U{0..k-1} iterations without gradient, then j ~ U{1..k-n} with; a pure function of
    (data seed, step) (stream ``progressive-loss``)."""
    rng = stream(data_seed, (*labels_key("progressive-loss"), step))
    frozen = int(rng.integers(0, iterations))
    return frozen, int(rng.integers(1, iterations - frozen + 1))
