"""Batched decoding of left-padded prompts: greedy (autoregressive) or one pass (empty tape).

:func:`greedy_decode` (the autoregressive layout of gengap.baselines.layout): each example
gets at most ``max_new[i]`` tokens (the length of its target) and stops early at the end
token; the prediction is the generated tokens before the end token. ``use_cache=False``
recomputes the whole sequence at every step (slower, the reference the cached path is
tested against).

:func:`tape_decode` (the empty-tape layout): the sequence given is the whole one (input,
computation steps, empty output tape); one forward pass, and the prediction is the argmax
of the logits at its last ``output_lengths[i]`` positions.

Both go through the model's decoding interface (``SequenceModel.step``): sequences are
sorted by length and batched, left-padded, with an attention mask and position ids counted
from each example's first real token, so a batch decodes exactly as each example alone
would.
"""

from __future__ import annotations

from contextlib import contextmanager, nullcontext
from typing import Any, Callable, Iterator, Sequence

import torch

from gengap.baselines.models import SeqModel
from gengap.baselines.settings import PRECISIONS



def autocast_context(device: torch.device, precision: str = "auto") -> Any:
    """bf16 autocast for precision bf16, and for auto on CUDA; nothing (fp32) otherwise."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    if precision == "bf16" or (precision == "auto" and device.type == "cuda"):
        return torch.autocast(device.type, dtype=torch.bfloat16)
    return nullcontext()


@torch.no_grad()
def greedy_decode(
    model: SeqModel,
    prompts: Sequence[Sequence[int]],
    max_new: Sequence[int],
    end_id: int,
    pad_id: int = 0,
    batch_size: int = 256,
    use_cache: bool = True,
    device: torch.device | str | None = None,
    precision: str = "auto",
) -> list[list[int]]:
    """Greedy continuations of prompts (lists of ids), at most max_new[i] tokens each, end token cut
    (precision: see autocast_context)."""
    return _in_batches(model, prompts, max_new, batch_size, device, lambda prompts, limits, device: _decode_batch(
        model, prompts, limits, end_id, pad_id, use_cache, device, precision))


@torch.no_grad()
def tape_decode(
    model: SeqModel,
    sequences: Sequence[Sequence[int]],
    output_lengths: Sequence[int],
    pad_id: int = 0,
    batch_size: int = 256,
    device: torch.device | str | None = None,
    precision: str = "auto",
) -> list[list[int]]:
    """Per sequence (the whole empty-tape layout), the argmax at its last output_lengths[i]
    positions, from one forward pass per batch (precision: see autocast_context)."""
    if any(not 0 <= m <= len(s) for s, m in zip(sequences, output_lengths)):
        raise ValueError("an output tape longer than its sequence")
    return _in_batches(model, sequences, output_lengths, batch_size, device, lambda sequences, lengths, device: _tape_batch(
        model, sequences, lengths, pad_id, device, precision))


Batch = Callable[[Sequence[Sequence[int]], Sequence[int], torch.device], list[list[int]]]


def _in_batches(
    model: SeqModel, prompts: Sequence[Sequence[int]], counts: Sequence[int], batch_size: int, device: torch.device | str | None, decode: Batch
) -> list[list[int]]:
    """decode(prompts, counts, device) over batches of prompts sorted by (length, count), in eval mode; outputs in the prompts' order."""
    if len(prompts) != len(counts):
        raise ValueError("one max_new per prompt")
    device = torch.device(device) if device is not None else next(model.parameters()).device
    was_training = model.training
    model.eval()
    order = sorted(range(len(prompts)), key=lambda i: (len(prompts[i]), counts[i]))
    outputs: list[list[int]] = [[] for _ in prompts]
    try:
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            results = decode([prompts[i] for i in chunk], [counts[i] for i in chunk], device)
            for i, tokens in zip(chunk, results):
                outputs[i] = tokens
    finally:
        model.train(was_training)
    return outputs


def _left_padded(prompts: Sequence[Sequence[int]], pad_id: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """ids, mask (1 = real token) and positions (counted from each row's first real token) of left-padded prompts."""
    n = len(prompts)
    width = max(len(p) for p in prompts)
    ids = torch.full((n, width), pad_id, dtype=torch.long)
    mask = torch.zeros((n, width), dtype=torch.long)
    for row, prompt in enumerate(prompts):
        ids[row, width - len(prompt) :] = torch.as_tensor(list(prompt), dtype=torch.long)
        mask[row, width - len(prompt) :] = 1
    ids, mask = ids.to(device), mask.to(device)
    return ids, mask, (mask.cumsum(-1) - 1).clamp(min=0)


@contextmanager
def planned_positions(model: SeqModel, totals: Sequence[int]) -> Iterator[None]:
    """The model's positions planned for rows of these whole lengths (randomized positions), and
    cleared when the block ends, whether it ends or raises (an out-of-memory retry, an interrupt)."""
    model.plan_positions(list(totals))
    try:
        yield
    finally:
        model.plan_positions(None)


def _tape_batch(
    model: SeqModel, sequences: Sequence[Sequence[int]], lengths: Sequence[int], pad_id: int, device: torch.device, precision: str
) -> list[list[int]]:
    ids, mask, positions = _left_padded(sequences, pad_id, device)
    with planned_positions(model, [len(s) for s in sequences]), autocast_context(device, precision):  # each row's whole length
        logits, _ = model.step(ids, mask, positions)
    predicted = logits.float().argmax(-1).tolist()  # a row's tape is its last positions: rows end at the right edge
    return [row[len(row) - m :] if m else [] for row, m in zip(predicted, lengths)]


def _decode_batch(
    model: SeqModel,
    prompts: Sequence[Sequence[int]],
    max_new: Sequence[int],
    end_id: int,
    pad_id: int,
    use_cache: bool,
    device: torch.device,
    precision: str,
) -> list[list[int]]:
    n = len(prompts)
    ids, mask, positions = _left_padded(prompts, pad_id, device)
    limit = torch.as_tensor(list(max_new), dtype=torch.long, device=device)
    steps = max(max_new) if n else 0
    generated = torch.full((n, max(steps, 0)), pad_id, dtype=torch.long, device=device)
    done = limit <= 0
    cache: Any = None
    sequence, sequence_mask, sequence_positions = ids, mask, positions
    with planned_positions(model, [len(p) + m + 1 for p, m in zip(prompts, max_new)]), autocast_context(device, precision):  # prompt, answer, end
        for t in range(steps):
            if use_cache:
                logits, cache = model.step(ids, mask, positions, cache=cache, use_cache=True)
            else:
                logits, _ = model.step(sequence, sequence_mask, sequence_positions)
            token = logits[:, -1].float().argmax(-1)
            token = torch.where(done, torch.full_like(token, pad_id), token)
            generated[:, t] = token
            done = done | (token == end_id) | (limit <= t + 1)
            if t + 1 == steps or bool(done.all()):
                break
            step_mask = torch.ones((n, 1), dtype=mask.dtype, device=device)
            next_positions = sequence_positions[:, -1:] + 1
            if not use_cache:
                sequence = torch.cat([sequence, token[:, None]], dim=1)
            sequence_mask = torch.cat([sequence_mask, step_mask], dim=1)
            sequence_positions = torch.cat([sequence_positions, next_positions], dim=1)
            ids, mask, positions = token[:, None], sequence_mask, next_positions
    rows = generated.tolist()
    results: list[list[int]] = []
    for row, cap in zip(rows, max_new):
        tokens = row[:cap]
        if end_id in tokens:
            tokens = tokens[: tokens.index(end_id)]
        results.append(tokens)
    return results
