"""Render a BlockPlan to JSONL with a pool of worker processes, in block order.

Blocks are independent (see gengap.generators.blocks), so the bytes do not depend on the number
of workers. At most 2 x workers blocks are in flight, which bounds memory; the workers
end with the map, on error, on interrupt, and when the parent dies (gengap.workers).
"""

from __future__ import annotations

import functools
from typing import Iterator

import numpy as np

from gengap.generators import BlockPlan, batch_to_jsonl
from gengap.repeats import input_keys
from gengap.workers import ordered_map


Rendered = tuple[bytes, np.ndarray]


def render_block(plan: BlockPlan, block: int) -> Rendered:
    """JSONL bytes of one block of the plan, and the 64-bit keys of its records' inputs
    (gengap.repeats.input_keys, for the count of repeated inputs)."""
    batch = plan.generate_block(block)
    return batch_to_jsonl(batch, plan.task), input_keys(batch.inputs)


def render_blocks(plan: BlockPlan, workers: int = 1) -> Iterator[Rendered]:
    """render_block of every block of the plan, in order."""
    workers = workers if plan.num_blocks > 1 else 1
    return ordered_map(functools.partial(render_block, plan), range(plan.num_blocks), workers)
