"""Unions of inclusive integer ranges for the two sides of a length or difficulty split.

A side is one range ``[lo, hi]`` or a union ``[[lo, hi], [lo, hi], ...]``; the text form of
a pool strategy's option is ``lo..hi,lo..hi``. Within a side ranges are sorted and may not
overlap; the train side and the test side may not share any value. A test range is
*interpolation* when it lies inside the hull of the train ranges (between the smallest train
value and the largest) and *extrapolation* otherwise; since train and test share no value, a
test range is wholly one or the other (Barrett et al. 2018's generalisation regimes).
"""

from __future__ import annotations

from typing import Any, Sequence

from gengap.splits.base import SplitError

Range = tuple[int, int]
Ranges = tuple[Range, ...]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_ranges(value: Any, what: str) -> Ranges:
    """A side's ranges, sorted, from ``[lo, hi]`` or ``[[lo, hi], ...]``; SplitError naming
    `what` when a range is malformed or empty, or two ranges of the side overlap."""
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(_is_int(v) for v in value):
        items: Sequence[Any] = [value]
    elif isinstance(value, (list, tuple)) and value:
        items = value
    else:
        raise SplitError(f"{what} must be [lo, hi] or a list of [lo, hi] ranges, got {value!r}")
    ranges: list[Range] = []
    for item in items:
        if not (isinstance(item, (list, tuple)) and len(item) == 2 and all(_is_int(v) for v in item)):
            raise SplitError(f"{what}: {item!r} is not a range [lo, hi] of integers")
        if item[0] > item[1]:
            raise SplitError(f"{what}: range {list(item)} is empty")
        ranges.append((item[0], item[1]))
    ranges.sort()
    for before, after in zip(ranges, ranges[1:]):
        if after[0] <= before[1]:
            raise SplitError(f"{what}: ranges {list(before)} and {list(after)} overlap")
    return tuple(ranges)


def parse_ranges_text(text: str, what: str) -> Ranges:
    """A side's ranges from option text ``lo..hi,lo..hi`` (values may be negative)."""
    pieces = [piece.strip() for piece in text.split(",")]
    ranges = []
    for piece in pieces:
        lo, sep, hi = piece.partition("..")
        try:
            ranges.append([int(lo), int(hi)])
        except ValueError:
            raise SplitError(f"{what}: {piece!r} is not a range lo..hi (e.g. 1..10,21..30)") from None
        if not sep:
            raise SplitError(f"{what}: {piece!r} is not a range lo..hi (e.g. 1..10,21..30)")
    return parse_ranges(ranges, what)


def check_disjoint(train: Ranges, test: Ranges) -> None:
    """SplitError naming the first train range and test range that share a value."""
    for a in train:
        for b in test:
            if a[0] <= b[1] and b[0] <= a[1]:
                raise SplitError(f"train range {list(a)} and test range {list(b)} overlap")


def contains(ranges: Ranges, value: int) -> bool:
    return any(lo <= value <= hi for lo, hi in ranges)


def regime(test_range: Range, train: Ranges) -> str:
    """interpolation when test_range lies inside the hull of the train ranges, else extrapolation."""
    return "interpolation" if train[0][0] < test_range[0] and test_range[1] < train[-1][1] else "extrapolation"


def regimes(train: Ranges, test: Ranges) -> list[dict[str, Any]]:
    """One row per test range: the range and its regime relative to the train ranges."""
    return [{"range": list(r), "regime": regime(r, train)} for r in test]


def is_union(*sides: Ranges) -> bool:
    """Whether some side has more than one range (single ranges keep their old reports)."""
    return any(len(side) > 1 for side in sides)


def as_lists(ranges: Ranges) -> list[list[int]]:
    return [list(r) for r in ranges]
