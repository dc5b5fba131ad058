"""Seeded, block-wise generation that is byte-identical for any number of workers.

Randomness for block b of a run comes from ``numpy.random.SeedSequence(entropy=seed,
spawn_key=(*key(task, params), b))`` where key is four 32-bit words of
sha256(task + "\\n" + canonical params JSON). A run of n examples is the concatenation of
blocks of BLOCK_SIZE examples (the last one shorter), so any block can be produced alone,
by any worker, in any order. Never seed + index: nearby seeds give unrelated streams.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from generators.batch import Batch
from generators.params import Params
from generators.registry import get_task

BLOCK_SIZE = 10_000


def stream_key(task: str, params: Params) -> tuple[int, ...]:
    """Four 32-bit words identifying (task, canonical params)."""
    digest = hashlib.sha256(f"{task}\n{params.canonical()}".encode()).digest()
    return tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))


def block_rng(seed: int, task: str, params: Params, block: int) -> np.random.Generator:
    """The random generator of one block of a (seed, task, params) stream."""
    sequence = np.random.SeedSequence(entropy=seed, spawn_key=(*stream_key(task, params), block))
    return np.random.Generator(np.random.PCG64(sequence))


@dataclass(frozen=True)
class BlockPlan:
    """n examples of task with params, seeded by seed, cut into fixed-size blocks."""

    task: str
    params: Params
    n: int
    seed: int
    block_size: int = BLOCK_SIZE

    def __post_init__(self) -> None:
        if self.n < 0:
            raise ValueError("n must be non-negative")
        if self.seed < 0:
            raise ValueError("seed must be non-negative")

    @property
    def num_blocks(self) -> int:
        return -(-self.n // self.block_size)

    def block_length(self, block: int) -> int:
        return min(self.block_size, self.n - block * self.block_size)

    def generate_block(self, block: int) -> Batch:
        rng = block_rng(self.seed, self.task, self.params, block)
        return get_task(self.task).generate(rng, self.block_length(block), self.params)

    def batches(self) -> Iterator[Batch]:
        for block in range(self.num_blocks):
            yield self.generate_block(block)
