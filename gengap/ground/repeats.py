"""Records whose input repeats an earlier record's: counted for the warning of generate and split.

A task draws each record's input independently, so a task with few possible inputs (the
README's GOTU example draws 20,000 records from 4,096) repeats inputs; a split of such a pool
can hold one input on both sides. The count is a warning on stderr only: outputs never
change. Inputs are compared by 64-bit keys (:func:`input_keys`: a hash mixed with numpy over
each input's bytes, eight at a time, so counting costs no Python call per record), so a
collision may hide a repeat, with probability about n**2 / 2**65 for n records.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def _mix(z: np.ndarray) -> np.ndarray:
    """The splitmix64 finalizer, elementwise (uint64 arithmetic wraps)."""
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def input_keys(column: np.ndarray) -> np.ndarray:
    """A uint64 key per entry of a numpy bytes (``S``) array: equal inputs get equal keys
    whatever the array's width; different inputs collide with probability about 2**-64.
    An entry is its non-NUL bytes (inputs hold no NUL)."""
    column = np.ascontiguousarray(column)
    n, width = len(column), column.dtype.itemsize
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    matrix = column.view(np.uint8).reshape(n, width)
    lanes = -(-width // 8)
    padded = np.zeros((n, lanes * 8), dtype=np.uint8)
    padded[:, :width] = matrix
    words = padded.view("<u8")
    length = np.count_nonzero(matrix, axis=1).astype(np.uint64)
    used = -(-length.astype(np.int64) // 8)
    short = int(used.min())
    with np.errstate(over="ignore"):
        key = _mix(length + _GOLDEN)
        for lane in range(lanes):
            mixed = _mix((key ^ words[:, lane]) + _GOLDEN)
            key = mixed if lane < short else np.where(used > lane, mixed, key)
    return key


def record_input_keys(records: Iterable[dict]) -> np.ndarray:
    """input_keys of the records' ``input`` fields (UTF-8)."""
    return input_keys(np.array([r["input"].encode() for r in records], dtype=np.bytes_))


def repeated(hashes: Iterable[np.ndarray]) -> tuple[int, int]:
    """(records whose input key occurred before, records) over the key arrays (input_keys), in order."""
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
