"""Intervals over seeds for the validity protocol's rules (edition 10 on).

A rule reads a statistic of the arms' per-seed figures (a mean, a difference of means, a rank
correlation over configs) and decides on its interval, never on a best-of:

- :func:`bootstrap` resamples each group's seeds with replacement (groups independently: two
  arms are different models, whatever their seed numbers), recomputes the statistic on every
  draw and returns the percentile interval at the spec's level. Draws come from a fixed seed,
  so the same figures give the same interval on every machine.
- A rule *holds* only when the whole interval lies on its side of the margin
  (:func:`at_least`, :func:`at_most`, :func:`within`); a margin of 0.0004 against seeds that
  spread over 0.13 is then not a holds.
- :func:`resolution` says what an interval over these seeds can resolve: with n seeds in a
  group, the most extreme resample (every draw the same seed) has probability n^-n; when that
  exceeds the interval's tail, the bound is the extreme seed itself (with 3 seeds at 95 %,
  "the interval clears the margin" reads as "every seed clears it").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

DRAWS = 4000
SEED = 20261207
Groups = Mapping[str, Sequence[float]]


@dataclass(frozen=True)
class Interval:
    """A statistic's value on the seeds as measured and its percentile interval."""

    value: float | None
    low: float | None
    high: float | None
    level: float

    def text(self, digits: int = 3) -> str:
        if self.value is None:
            return "n/a"
        if self.low is None or self.high is None:
            return f"{self.value:.{digits}f}"
        return f"{self.value:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"


def mean(values: Sequence[float]) -> float | None:
    values = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    return sum(values) / len(values) if values else None


def bootstrap(groups: Groups, statistic: Callable[[Mapping[str, Sequence[float]]], float | None], level: float = 0.95,
              draws: int = DRAWS, seed: int = SEED) -> Interval:
    """The statistic of the groups and its percentile-bootstrap interval at ``level`` (each group's
    values resampled with replacement, independently). Draws where the statistic is undefined are
    dropped; no interval (low and high None) when a group has no values."""
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    value = statistic(groups)
    names = sorted(groups)
    arrays = {name: np.asarray([float(v) for v in groups[name]], dtype=float) for name in names}
    if value is None or any(len(a) == 0 for a in arrays.values()):
        return Interval(value, None, None, level)
    rng = np.random.default_rng(seed)
    picks = {name: rng.integers(0, len(arrays[name]), size=(draws, len(arrays[name]))) for name in names}
    values = []
    for draw in range(draws):
        resampled = {name: arrays[name][picks[name][draw]].tolist() for name in names}
        figure = statistic(resampled)
        if figure is not None and not math.isnan(figure):
            values.append(figure)
    if not values:
        return Interval(value, None, None, level)
    tail = (1 - level) / 2
    low, high = np.quantile(np.asarray(values), [tail, 1 - tail], method="inverted_cdf")
    return Interval(value, float(low), float(high), level)


def mean_of(name: str) -> Callable[[Mapping[str, Sequence[float]]], float | None]:
    return lambda groups: mean(groups[name])


def difference(a: str, b: str) -> Callable[[Mapping[str, Sequence[float]]], float | None]:
    """mean(a) - mean(b)."""
    def statistic(groups: Mapping[str, Sequence[float]]) -> float | None:
        x, y = mean(groups[a]), mean(groups[b])
        return None if x is None or y is None else x - y

    return statistic


def margin_over(a: str, others: Sequence[str]) -> Callable[[Mapping[str, Sequence[float]]], float | None]:
    """mean(a) - max over others of their means."""
    def statistic(groups: Mapping[str, Sequence[float]]) -> float | None:
        x = mean(groups[a])
        ys = [mean(groups[o]) for o in others]
        return None if x is None or any(y is None for y in ys) else x - max(ys)  # type: ignore[type-var]

    return statistic


def at_least(interval: Interval, margin: float) -> bool:
    """The whole interval at or above margin."""
    return interval.low is not None and interval.low >= margin


def at_most(interval: Interval, margin: float) -> bool:
    """The whole interval at or below margin."""
    return interval.high is not None and interval.high <= margin


def within(interval: Interval, bound: float) -> bool:
    """The whole interval inside [-bound, bound]."""
    return interval.low is not None and interval.high is not None and -bound <= interval.low and interval.high <= bound


def resolution(counts: Sequence[int], level: float) -> str | None:
    """What an interval over groups of these seed counts can say at ``level``, in a sentence when
    its bounds are set by the extreme seeds (None when the interval resolves more than that);
    a group of fewer than 2 seeds has no interval at all."""
    if not counts or min(counts) < 2:
        return "a group holds fewer than 2 seeds: no interval"
    tail = (1 - level) / 2
    extreme = max(n ** -n for n in counts)
    if extreme > tail:
        return (f"with {min(counts)} seeds the {level:.0%} interval's bounds are set by the extreme seeds "
                f"(a resample of one seed has probability {extreme:.3f} > {tail:.3f})")
    return None
