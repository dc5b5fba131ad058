"""Batched greedy decoding of left-padded prompts, with or without a KV cache.

Each example gets at most ``max_new[i]`` tokens (the length of its target) and stops early at
the end token; the prediction is the generated tokens before the end token. Prompts are
sorted by length and batched, left-padded, with an attention mask and position ids counted
from each example's first real token, so a batch decodes exactly as each example alone
would. ``use_cache=False`` recomputes the whole sequence at every step (slower, the
reference the cached path is tested against).
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any, Sequence

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
    if len(prompts) != len(max_new):
        raise ValueError("one max_new per prompt")
    device = torch.device(device) if device is not None else next(model.parameters()).device
    was_training = model.training
    model.eval()
    order = sorted(range(len(prompts)), key=lambda i: (len(prompts[i]), max_new[i]))
    outputs: list[list[int]] = [[] for _ in prompts]
    try:
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            results = _decode_batch(model, [prompts[i] for i in chunk], [max_new[i] for i in chunk], end_id, pad_id, use_cache, device, precision)
            for i, tokens in zip(chunk, results):
                outputs[i] = tokens
    finally:
        model.train(was_training)
    return outputs


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
    width = max(len(p) for p in prompts)
    ids = torch.full((n, width), pad_id, dtype=torch.long)
    mask = torch.zeros((n, width), dtype=torch.long)
    for row, prompt in enumerate(prompts):
        ids[row, width - len(prompt) :] = torch.as_tensor(list(prompt), dtype=torch.long)
        mask[row, width - len(prompt) :] = 1
    ids, mask = ids.to(device), mask.to(device)
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    limit = torch.as_tensor(list(max_new), dtype=torch.long, device=device)
    steps = max(max_new) if n else 0
    generated = torch.full((n, max(steps, 0)), pad_id, dtype=torch.long, device=device)
    done = limit <= 0
    cache: Any = None
    sequence, sequence_mask, sequence_positions = ids, mask, positions
    with autocast_context(device, precision):
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
