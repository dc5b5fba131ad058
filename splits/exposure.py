"""Exposure: leak k test-side examples into train (the number of OOD samples a model sees).

Every strategy takes the options ``exposure`` (k, default 0: nothing moves) and
``exposure_copies`` (default false; both gengap.splits.base.SplitOptions). After a strategy's
partition (gengap.splits.api.split, the entry every pool split goes through), and before the common
frame (gengap.splits.base.finish) removes overlap and carves validation:

- k distinct test-side inputs are chosen: the first k of one permutation of the test side's
  distinct inputs (first-seen order) drawn from stream ``exposure`` of the split seed, so
  the same seed gives the same choice and a smaller k chooses a subset of a larger one's;
  with ``exposure_copies`` one input is chosen and its example is put in train k times;
- every test record with a chosen input leaves the test side; the first record of each
  chosen input goes to train, pinned (never moved to validation);
- the report gains ``exposed``: k, whether copies were made, the ids of the exposed examples
  (in the order chosen) and how many test records left the test side.

k above the number of distinct test inputs is a SplitError. Records a strategy pins to train
already (SCAN's bare primitive, COGS's exposure examples) are separate from these.
"""

from __future__ import annotations

import dataclasses

from gengap.generators.batch import Record
from gengap.generators.seeding import exposure_rng
from gengap.splits.base import Partition, SplitError, input_groups


def expose(partition: Partition, count: int, copies: bool, seed: int) -> Partition:
    """The partition with `count` test-side examples (or `count` copies of one) moved into
    train (see the module doc); the partition itself when count is 0."""
    if count <= 0:
        return partition
    groups = input_groups(partition.test)
    keys = list(groups)
    wanted = 1 if copies else count
    if wanted > len(keys):
        raise SplitError(f"exposure {count} needs {wanted} distinct test inputs, the test side has {len(keys)}")
    order = exposure_rng(seed).permutation(len(keys))[:wanted]
    chosen = [keys[i] for i in order]
    exposed: list[Record] = [partition.test[groups[key][0]] for key in chosen]
    moved = set(chosen)
    test = [r for r in partition.test if r["input"] not in moved]
    pinned = [exposed[0]] * count if copies else exposed
    notes = {
        **partition.notes,
        "exposed": {
            "count": count,
            "copies": copies,
            "ids": [r["id"] for r in exposed],
            "removed_from_test": len(partition.test) - len(test),
        },
    }
    return dataclasses.replace(partition, test=test, pinned=partition.pinned + pinned, notes=notes)
