"""The one numeric rule: a number gengap reads is an int where an int is asked for, otherwise a
finite number, and lies in its range; anything else is a one-line problem naming it.

:class:`Range` states a range (bounds inclusive unless open; an unbounded end is an infinite
bound) and says whether a value keeps to it. Every number read from a user goes through it:
task parameters and split and cue options (gengap.generators.params), a record's meta fields
that name a parameter (Task.meta_problem), training and evaluation settings
(gengap.baselines.numbers), a stream's block size. NaN never passes (it compares false with
every bound, so a plain ``lo <= x <= hi`` test would let it through), nor does an infinity,
nor a bool where a number is asked for.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Range:
    """Accepted values: low <= x <= high (open ends exclude the bound); integer: ints only,
    otherwise finite ints or floats."""

    low: float = -math.inf
    high: float = math.inf
    integer: bool = False
    low_open: bool = False
    high_open: bool = False

    @classmethod
    def between(cls, low: float | None, high: float | None, integer: bool = False) -> "Range":
        """The range of a knob: None for an unbounded end."""
        return cls(-math.inf if low is None else low, math.inf if high is None else high, integer)

    def describe(self) -> str:
        """What the range accepts, in words (``an integer from 1 to 4``, ``a number in [0, 1]``)."""
        if self.integer:
            if math.isinf(self.low) and math.isinf(self.high):
                return "an integer"
            if math.isinf(self.high):
                return f"an integer >= {int(self.low):,}"
            if math.isinf(self.low):
                return f"an integer <= {int(self.high):,}"
            return f"an integer from {int(self.low)} to {int(self.high):,}"
        if math.isinf(self.low) and math.isinf(self.high):
            return "a finite number"
        if math.isinf(self.high):
            return f"a finite number {'>' if self.low_open else '>='} {self.low:g}"
        if math.isinf(self.low):
            return f"a finite number {'<' if self.high_open else '<='} {self.high:g}"
        left, right = "(" if self.low_open else "[", ")" if self.high_open else "]"
        return f"a number in {left}{self.low:g}, {self.high:g}{right}"

    def holds(self, value: Any) -> bool:
        """Whether value keeps to the rule (see the module doc)."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        if self.integer and not isinstance(value, int):
            return False
        if isinstance(value, float) and not math.isfinite(value):
            return False
        above = value > self.low if self.low_open else value >= self.low
        below = value < self.high if self.high_open else value <= self.high
        return above and below


def is_finite_number(value: Any) -> bool:
    """Whether value is an int or a finite float (never a bool)."""
    return Range().holds(value)
