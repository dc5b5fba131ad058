"""What the training loop does differently on CUDA, in one place.

- :func:`to_device`: host arrays (batch indices, a stream's encoded batch) go to a CUDA device
  from pinned (page-locked) memory with ``non_blocking=True``, so the copy is queued behind the
  device's work instead of stopping the host; PyTorch's caching host allocator keeps a pinned
  block until the copy that reads it has run, so a batch is never overwritten in flight. On
  any other device: a plain copy.
- :func:`deterministic_mode` (``--deterministic``): ``torch.use_deterministic_algorithms(True,
  warn_only=True)``, cuDNN deterministic and not benchmarking, and
  ``CUBLAS_WORKSPACE_CONFIG=:4096:8`` in the environment, which cuBLAS reads when PyTorch
  creates its first cuBLAS workspace: if CUDA is already initialised in the process and the
  variable was not set, the run is refused (set it in the environment instead). The torch
  flags are restored when the run ends; the variable stays (a later run in the process needs
  it, and it only fixes cuBLAS's workspace size). With ``warn_only`` an operation without a
  deterministic CUDA implementation warns once instead of failing the run.
- :func:`with_oom_backoff`: an evaluation that runs out of CUDA memory is retried with half the
  batch (the cached blocks released first), down to one example; the caller records and
  prints each halving. Decoding a batch gives each example what it gives alone (to float
  rounding on CUDA), so a smaller batch changes time, not results.
- :func:`synchronize`: wait for the device (CUDA only), before reading a clock.

Nothing here needs a GPU to import or to run on the CPU: each function is the identity, or a
plain copy, off CUDA. ``benchmarks/gpu_check.py`` exercises the CUDA side on a GPU.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import Callable, Iterator, TypeVar

import numpy as np
import torch

from gengap.baselines.errors import BaselineError

CUBLAS_WORKSPACE = ("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # what PyTorch's reproducibility notes ask for
T = TypeVar("T")


def to_device(array: np.ndarray, device: torch.device) -> torch.Tensor:
    """array as a tensor on device: on CUDA through pinned memory, without blocking the host."""
    tensor = torch.from_numpy(array)
    if device.type != "cuda":
        return tensor.to(device)
    return tensor.pin_memory().to(device, non_blocking=True)


def synchronize(device: torch.device) -> None:
    """Wait until the device has done the work queued on it (CUDA; nothing to wait for elsewhere)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


@contextmanager
def deterministic_mode(enabled: bool, device: torch.device) -> Iterator[None]:
    """Deterministic algorithms for the run when enabled (see the module doc); BaselineError when
    CUDA started in this process before CUBLAS_WORKSPACE_CONFIG was set."""
    if not enabled:
        yield
        return
    name, value = CUBLAS_WORKSPACE
    if device.type == "cuda" and name not in os.environ and torch.cuda.is_initialized():
        raise BaselineError(f"--deterministic: CUDA started in this process before {name} was set; run with {name}={value} in the environment")
    os.environ.setdefault(name, value)
    before = (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled(),
              torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark)
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = True, False
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(before[0], warn_only=before[1])
        torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = before[2], before[3]


def is_out_of_memory(error: BaseException) -> bool:
    """Whether error is CUDA's out-of-memory error."""
    return isinstance(error, torch.cuda.OutOfMemoryError)


def with_oom_backoff(run: Callable[[int], T], batch_size: int, on_backoff: Callable[[int, int], None]) -> tuple[T, int]:
    """(run(b), b) for the first batch size b, from batch_size halving down to 1, at which run does
    not run out of CUDA memory; on_backoff(old, new) before each retry. The error of batch 1 is raised."""
    size = batch_size
    while True:
        try:
            return run(size), size
        except torch.cuda.OutOfMemoryError:
            if size <= 1:
                raise
        smaller = max(1, size // 2)  # outside the handler: the failed batch's tensors are freed with its frame
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        on_backoff(size, smaller)
        size = smaller


def backoff_message(what: str, old: int, new: int) -> str:
    """The stderr line of one halving."""
    return f"gengap: CUDA ran out of memory decoding {what}, {old:,} at a time; retrying {new:,} at a time (results.json records it)"


def warn(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
