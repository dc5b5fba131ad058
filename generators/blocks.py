"""Block-wise generation: n examples as fixed-size blocks, byte-identical for any number of workers.

A run of n examples of (task, params) from a seed is the concatenation of blocks of
``block_size`` examples (the last one shorter). Block b draws from its own stream
(gengap.generators.seeding, stream ``block``), so any block can be produced alone, by any
worker, in any order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from gengap.generators.batch import Batch
from gengap.generators.params import Params
from gengap.generators.registry import get_task
from gengap.generators.seeding import block_rng

BLOCK_SIZE = 10_000


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
