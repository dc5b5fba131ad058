"""The distinct inputs a run trained on, counted by 64-bit digests (resumable through a checkpoint).

:class:`DistinctInputs` keeps the blake2b-64 digest of every input string added; ``count`` is the
number of distinct digests (two distinct inputs collide with probability ~n^2 / 2^65, negligible
for any run). ``state()`` is a sorted int64 tensor (what a weights-only checkpoint can hold) and
``load_state`` puts it back, so a resumed run counts on exactly where the interrupted one stopped.
"""

from __future__ import annotations

import hashlib
from typing import Iterable

import torch


def digest(text: str) -> int:
    """A signed 64-bit digest of an input (blake2b, 8 bytes, little-endian)."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little", signed=True)


class DistinctInputs:
    """A growing set of input digests (see the module doc)."""

    def __init__(self) -> None:
        self.seen: set[int] = set()

    def add(self, inputs: Iterable[str]) -> None:
        self.seen.update(digest(text) for text in inputs)

    @property
    def count(self) -> int:
        return len(self.seen)

    def state(self) -> torch.Tensor:
        return torch.tensor(sorted(self.seen), dtype=torch.int64)

    def load_state(self, state: torch.Tensor | None) -> None:
        self.seen = set(state.tolist()) if state is not None else set()
