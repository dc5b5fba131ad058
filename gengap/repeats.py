"""Records whose input repeats an earlier record's: counted for the warning of generate and split.

A task draws each record's input independently, so a task with few possible inputs (the
README's GOTU example draws 20,000 records from 4,096) repeats inputs; a split of such a pool
can hold one input on both sides. The count is a warning on stderr only: outputs never
change. Inputs are compared by their 64-bit hashes (generators.exclusion.input_hashes), so a
collision may hide a repeat with probability at most n**2 / 2**65.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np


def repeated(hashes: Iterable[np.ndarray]) -> tuple[int, int]:
    """(records whose input hash occurred before, records) over the hash arrays, in order."""
    arrays = [np.asarray(h, dtype=np.uint64) for h in hashes]
    total = sum(len(h) for h in arrays)
    if total == 0:
        return 0, 0
    ordered = np.sort(np.concatenate(arrays))  # (np.unique is many times slower on uint64 in numpy 2)
    return int(np.count_nonzero(ordered[1:] == ordered[:-1])), total


def repeat_warning(count: int, total: int) -> str | None:
    """The warning for count repeated inputs among total records; None when there are none."""
    if count == 0:
        return None
    return f"{count:,} of {total:,} records repeat an input already drawn"
