"""Render a BlockPlan to JSONL with a pool of worker processes, in block order.

Blocks are independent (see generators.seeding), so the bytes do not depend on the number
of workers. At most 2 x workers blocks are in flight, which bounds memory.
"""

from __future__ import annotations

import collections
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Iterator

from generators import BlockPlan, batch_to_jsonl


def render_block(plan: BlockPlan, block: int) -> bytes:
    """JSONL bytes of one block of the plan."""
    return batch_to_jsonl(plan.generate_block(block), plan.task)


def render_blocks(plan: BlockPlan, workers: int = 1) -> Iterator[bytes]:
    """JSONL bytes of every block of the plan, in order."""
    if workers <= 1 or plan.num_blocks <= 1:
        for block in range(plan.num_blocks):
            yield render_block(plan, block)
        return
    with ProcessPoolExecutor(max_workers=workers) as pool:
        pending: collections.deque[Future[bytes]] = collections.deque()
        next_block = 0
        while next_block < plan.num_blocks or pending:
            while next_block < plan.num_blocks and len(pending) < 2 * workers:
                pending.append(pool.submit(render_block, plan, next_block))
                next_block += 1
            yield pending.popleft().result()
