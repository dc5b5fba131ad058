"""SCAN records of one batch share the derivation of each S phrase, never the cached template."""

from __future__ import annotations

import numpy as np

from gengap.generators import batch_to_jsonl, get_task


def test_a_batch_shares_s_derivations_and_mutating_them_leaves_later_batches_alone() -> None:
    task = get_task("scan")
    params = task.with_size(40, 60)
    first = task.generate(np.random.default_rng(3), 200, params)
    expected = batch_to_jsonl(first, "scan")
    subtrees = [node for tree in first.structure for node in tree[1:] if isinstance(node, list)]
    assert len({id(node) for node in subtrees}) < len(subtrees)  # shared within the batch
    for tree in first.structure:  # a careless consumer mutates every derivation in place
        for node in tree[1:]:
            if isinstance(node, list):
                node.append("mutated")
    again = task.generate(np.random.default_rng(3), 200, params)
    assert batch_to_jsonl(again, "scan") == expected
    assert all(not any(isinstance(n, list) and "mutated" in n for n in tree) for tree in again.structure)
