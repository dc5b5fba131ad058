"""Curricula: which level each training record comes from, as a function of the step and of observed accuracy.

A curriculum is a small pure-Python state machine over integer levels (a task's levels
1..10, or any level table such as :func:`gengap.generators.streams.size_levels`). Its schedule is
a frozen dataclass; at 0-based step ``t`` it gives a mixture ``{level: weight}``
(:meth:`Curriculum.mixture`). The level of one record is the inverse CDF of that mixture,
levels ascending, at a uniform ``u`` in [0, 1) (:meth:`Curriculum.choose`); record streams
take ``u`` from the seeding stream ``curriculum`` at the record's position, so a choice is
a pure function of (seed, position, step, state).

Schedules (spec strings for ``gengap train --curriculum``):

- ``fixed:K``: level K throughout;
- ``mixture:1=0.5,3=0.5``: a fixed mixture (weights are normalised);
- ``step:start=1,end=10,every=500``: level start + t // every, capped at end;
- ``linear:start=1,end=10,steps=5000``: x = start + (end - start) * min(t / steps, 1), the
  mixture of floor(x) and floor(x) + 1 whose mean is x;
- ``adaptive:start=1,end=10,threshold=0.9,window=50,replay=0.0``: stays at its current
  level until the mean of the last ``window`` accuracies observed on that level
  (:meth:`Curriculum.observe`) reaches ``threshold``, then promotes one level (capped at
  end) and empties the window; ``replay`` is the share of records drawn uniformly from the
  levels start..current-1 (earlier levels kept in the mix).

Only the adaptive schedule has state (current level, window, promotions), which
:meth:`Curriculum.state_dict` returns as plain JSON types and
:meth:`Curriculum.load_state_dict` restores; given the same seed and the same observed
accuracies it makes the same choices.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping, Sequence, Union


class CurriculumError(ValueError):
    """A malformed curriculum spec, a level outside the level table or a foreign state."""


@dataclass(frozen=True)
class Mixture:
    """A fixed mixture of levels; ``fixed:K`` is the mixture of one level."""

    weights: tuple[tuple[int, float], ...]

    def __post_init__(self) -> None:
        if not self.weights or any(w < 0 or not math.isfinite(w) for _, w in self.weights) or sum(w for _, w in self.weights) <= 0:
            raise CurriculumError("a mixture needs non-negative finite weights with a positive sum")
        if len({level for level, _ in self.weights}) != len(self.weights):
            raise CurriculumError("a mixture names a level twice")

    def levels(self) -> set[int]:
        return {level for level, w in self.weights if w > 0}

    def mixture(self, t: int, current: int) -> dict[int, float]:
        total = sum(w for _, w in self.weights)
        return {level: w / total for level, w in self.weights if w > 0}


@dataclass(frozen=True)
class _Span:
    """Levels start..end (the ramps and the adaptive schedule)."""

    start: int = 1
    end: int = 10
    positive: ClassVar[tuple[str, ...]] = ()  # integer options that must be at least 1

    def __post_init__(self) -> None:
        if self.start > self.end:
            raise CurriculumError(f"start {self.start} is above end {self.end}")
        for name in self.positive:
            if getattr(self, name) < 1:
                raise CurriculumError(f"{name} must be at least 1, got {getattr(self, name)}")

    def levels(self) -> set[int]:
        return set(range(self.start, self.end + 1))


@dataclass(frozen=True)
class StepRamp(_Span):
    """Level start + t // every, capped at end."""

    every: int = 1000
    positive: ClassVar[tuple[str, ...]] = ("every",)

    def mixture(self, t: int, current: int) -> dict[int, float]:
        return {min(self.end, self.start + t // self.every): 1.0}


@dataclass(frozen=True)
class LinearRamp(_Span):
    """Mean level rising linearly from start to end over ``steps`` steps (two adjacent levels mixed)."""

    steps: int = 10000
    positive: ClassVar[tuple[str, ...]] = ("steps",)

    def mixture(self, t: int, current: int) -> dict[int, float]:
        x = self.start + (self.end - self.start) * min(t, self.steps) / self.steps
        low = min(int(math.floor(x)), self.end)
        frac = x - low
        return {low: 1.0} if frac <= 0 else {low: 1.0 - frac, low + 1: frac}


@dataclass(frozen=True)
class Adaptive(_Span):
    """Promote one level when the mean accuracy over the last ``window`` observations reaches ``threshold``."""

    threshold: float = 0.9
    window: int = 50
    replay: float = 0.0
    positive: ClassVar[tuple[str, ...]] = ("window",)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0 < self.threshold <= 1:
            raise CurriculumError(f"threshold must be in (0, 1], got {self.threshold}")
        if not 0 <= self.replay < 1:
            raise CurriculumError(f"replay must be in [0, 1), got {self.replay}")

    def mixture(self, t: int, current: int) -> dict[int, float]:
        earlier = list(range(self.start, current))
        if not earlier or self.replay == 0:
            return {current: 1.0}
        share = self.replay / len(earlier)
        return {**{level: share for level in earlier}, current: 1.0 - self.replay}


Schedule = Union[Mixture, StepRamp, LinearRamp, Adaptive]


class Curriculum:
    """A schedule with its state: the mixture at each step, per-record choices, observations."""

    def __init__(self, schedule: Schedule, spec: str | None = None) -> None:
        self.schedule = schedule
        self.spec = spec or describe(schedule)
        self.current = schedule.start if isinstance(schedule, Adaptive) else 0
        self.window: list[float] = []
        self.promotions: list[list[int]] = []  # [t, new level] per promotion

    @property
    def adaptive(self) -> bool:
        return isinstance(self.schedule, Adaptive)

    def levels(self) -> list[int]:
        """Every level this curriculum can choose, ascending."""
        return sorted(self.schedule.levels())

    def mixture(self, t: int) -> dict[int, float]:
        """{level: weight} at 0-based step t (weights sum to 1)."""
        return self.schedule.mixture(t, self.current)

    def choose(self, t: int, u: float) -> int:
        """The level at step t for the uniform u in [0, 1): inverse CDF over ascending levels."""
        mixture = self.mixture(t)
        cumulative = 0.0
        levels = sorted(mixture)
        for level in levels:
            cumulative += mixture[level]
            if u < cumulative:
                return level
        return levels[-1]

    def level(self, t: int) -> int:
        """The headline level at step t (metrics and plots): the highest level in the mixture."""
        return max(self.mixture(t))

    def observe(self, t: int, accuracy: float) -> bool:
        """Report an accuracy measured on the current level at step t; True when it promoted
        (recorded as [t, new level]: callers choose what t counts, gengap train passes the
        1-based step just trained). A no-op for the schedules that do not adapt."""
        if not isinstance(self.schedule, Adaptive):
            return False
        if not 0 <= accuracy <= 1:
            raise CurriculumError(f"an accuracy must be in [0, 1], got {accuracy}")
        schedule = self.schedule
        self.window = (self.window + [float(accuracy)])[-schedule.window :]
        full = len(self.window) == schedule.window
        if full and self.current < schedule.end and sum(self.window) / schedule.window >= schedule.threshold:
            self.current += 1
            self.window = []
            self.promotions.append([int(t), self.current])
            return True
        return False

    def state_dict(self) -> dict[str, Any]:
        """Plain JSON types: spec, current level, accuracy window, promotions."""
        return {"spec": self.spec, "current": self.current, "window": list(self.window), "promotions": [list(p) for p in self.promotions]}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        if state.get("spec") != self.spec:
            raise CurriculumError(f"curriculum state is of {state.get('spec')!r}, not {self.spec!r}")
        self.current = int(state["current"])
        self.window = [float(a) for a in state["window"]]
        self.promotions = [[int(t), int(level)] for t, level in state["promotions"]]


# -- specs -------------------------------------------------------------------------------

_KINDS: dict[str, type] = {"step": StepRamp, "linear": LinearRamp, "adaptive": Adaptive}


def describe(schedule: Schedule) -> str:
    """The spec string of a schedule (what :func:`parse_curriculum` reads back)."""
    if isinstance(schedule, Mixture):
        if len(schedule.weights) == 1:
            return f"fixed:{schedule.weights[0][0]}"
        return "mixture:" + ",".join(f"{level}={w:g}" for level, w in schedule.weights)
    kind = {StepRamp: "step", LinearRamp: "linear", Adaptive: "adaptive"}[type(schedule)]
    values = ",".join(f"{f.name}={getattr(schedule, f.name):g}" for f in dataclasses.fields(schedule))
    return f"{kind}:{values}"


def parse_curriculum(spec: str, levels: Sequence[int] | None = None) -> Curriculum:
    """A Curriculum from a spec string (see the module doc); CurriculumError naming the problem.

    With ``levels`` (the level table's keys) every level the schedule may choose must be one of them.
    """
    kind, _, body = spec.strip().partition(":")
    try:
        if kind == "fixed":
            schedule: Schedule = Mixture(((int(body), 1.0),))
        elif kind == "mixture":
            pairs = [part.split("=", 1) for part in body.split(",") if part.strip()]
            schedule = Mixture(tuple((int(level), float(weight)) for level, weight in pairs))
        elif kind in _KINDS:
            cls = _KINDS[kind]
            fields = {f.name: f for f in dataclasses.fields(cls)}
            values: dict[str, Any] = {}
            for part in (p for p in body.split(",") if p.strip()):
                name, sep, text = part.partition("=")
                name = name.strip()
                if not sep or name not in fields:
                    raise CurriculumError(f"unknown {kind} option {name!r}; options: {', '.join(fields)}")
                values[name] = float(text) if fields[name].type in ("float", float) else int(text)
            schedule = cls(**values)
        else:
            raise CurriculumError(f"unknown curriculum {kind!r}; choose fixed, mixture, step, linear or adaptive")
    except CurriculumError as err:
        raise CurriculumError(f"curriculum {spec!r}: {err}") from None
    except ValueError:
        raise CurriculumError(f"curriculum {spec!r} is malformed (e.g. fixed:3, mixture:1=0.5,2=0.5, step:start=1,end=10,every=500)") from None
    if levels is not None:
        outside = sorted(schedule.levels() - set(levels))
        if outside:
            raise CurriculumError(f"curriculum {spec!r} uses level(s) {', '.join(map(str, outside))}; levels are {min(levels)}..{max(levels)}")
    return Curriculum(schedule, spec.strip())
