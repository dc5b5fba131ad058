"""Refuse a model too large for the device's memory before any of it is allocated.

``check_model_size(spec, vocab_size, device)`` bounds the parameter count from
below (the token embedding, vocab x d_model, plus one d_model x d_model matrix per layer:
every architecture has at least these) and refuses, with one BaselineError line, a model
whose weights, gradients and two AdamW moments (16 bytes a parameter in fp32) would not fit
in the device's memory (CUDA: the GPU's; CPU: the machine's physical memory). It errs
towards training: a refusal is certain, a pass is not a guarantee.
"""

from __future__ import annotations

import os

import torch

from gengap.baselines.architectures import ModelSpec
from gengap.baselines.errors import BaselineError

BYTES_PER_PARAMETER = 16  # fp32 weight, gradient and AdamW's two moments


def parameters_at_least(spec: ModelSpec, vocab_size: int) -> int:
    """A lower bound of the model's parameter count."""
    return vocab_size * spec.d_model + spec.layers * spec.d_model * spec.d_model


def device_memory(device: torch.device) -> int | None:
    """Bytes of memory of the device (None when unknown)."""
    if device.type == "cuda":
        return int(torch.cuda.get_device_properties(device).total_memory)
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return None


def check_model_size(spec: ModelSpec, vocab_size: int, device: torch.device) -> None:
    """BaselineError when the model would not fit in the device's memory (see the module doc)."""
    count = parameters_at_least(spec, vocab_size)
    needed = count * BYTES_PER_PARAMETER
    memory = device_memory(device)
    if memory is not None and needed > memory:
        raise BaselineError(
            f"a {spec.arch} of d_model {spec.d_model:,} and {spec.layers:,} layers has at least {count:,} parameters: "
            f"{needed / 2**30:,.1f} GiB for weights, gradients and optimizer state, more than the "
            f"{memory / 2**30:,.1f} GiB of memory of the {device.type} device"
        )
