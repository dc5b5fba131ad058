"""When a baseline has learned its train distribution: the stopping rule and the report's verdict.

The ID figure is validation exact match averaged over input lengths (each length once,
however many records it has: Deletang et al.'s averaging), ``id_length_mean_exact_match``,
so that a few short inputs cannot carry it; a periodic row written before that figure existed
reads its plain ``id_exact_match``.

- The rule (``--until-id EM``) is met at the first periodic evaluation that reaches EM with the
  evaluation before it (two consecutive evaluations at or above EM): :func:`learned_at` is that
  step, None when never. ``--until-over records`` makes the rule read exact match over
  validation records instead, for data whose lengths are not a controlled variable (CFQ, COGS:
  rare long inputs would otherwise weigh as much as common ones).
- ``select: best`` scores the checkpoint of :func:`selected_row` (every evaluation then reads the
  whole validation part, so the figure that selects and the figure that is scored are one).
- Training then goes on to step ``ceil(s * (1 + until_extra))`` (s = learned_at; ``until_extra``
  0: it stops at s) capped by ``steps``, and stops: :func:`stop_step`. Both are functions of the
  metric history alone, so a resumed run stops where an uninterrupted one does.
- A seed has learned (:func:`seed_learned`) when it met its rule, or, trained without one, when
  its final per-length-mean ID exact match reaches a threshold (``gengap report --learned EM``,
  default :data:`LEARNED`). A gap of a model that never fit its train distribution measures
  nothing.

This module imports neither torch nor gengap.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Mapping, Sequence

from gengap.baselines.metrics import seed_length_mean

ID_FIGURE = "id_length_mean_exact_match"
WEIGHTED_FIGURE = "id_train_weighted_exact_match"  # per-length exact match weighted by train's length shares
LEARNED = 0.95  # gengap report's default threshold for runs trained without --until-id


def id_figure(row: Mapping[str, Any], over: str = "lengths") -> float | None:
    """The ID figure of a periodic row (or a seed result): over lengths, its per-length mean (its
    plain ID exact match for a row written before the per-length mean existed); over records, its
    plain ID exact match; over train_lengths, per-length exact match weighted by the train part's
    length shares (a length with 2 validation records weighs what it weighs in train, not as much
    as one with 40)."""
    if over == "records":
        value = row.get("id_exact_match")
    elif over == "train_lengths":
        value = row.get(WEIGHTED_FIGURE)
    else:
        value = row.get(ID_FIGURE, row.get("id_exact_match"))
    return None if value is None else float(value)


def selected_row(history: Sequence[Mapping[str, Any]], over: str = "lengths") -> Mapping[str, Any] | None:
    """The periodic row a ``select: best`` run scores: the first with the highest ID figure (None
    without rows that have one). A pure function of the history, so a resumed run selects what an
    uninterrupted one does."""
    best: Mapping[str, Any] | None = None
    for row in history:
        figure = id_figure(row, over)
        if figure is not None and (best is None or figure > id_figure(best, over)):  # type: ignore[operator]
            best = row
    return best


def learned_at(history: Sequence[Mapping[str, Any]], threshold: float | None, over: str = "lengths") -> int | None:
    """The step of the first periodic row whose ID figure (``over`` lengths or records) reaches
    threshold with the row before it (None without a threshold or when no two consecutive rows do)."""
    if threshold is None:
        return None
    reached = [(int(row["step"]), (figure := id_figure(row, over)) is not None and figure >= threshold) for row in history]
    return next((step for (_, before), (step, now) in zip(reached, reached[1:]) if before and now), None)


def stop_step(history: Sequence[Mapping[str, Any]], until_id: float | None, until_extra: float, steps: int, over: str = "lengths") -> int:
    """The step at which training stops: ``ceil(s * (1 + until_extra))`` for s = learned_at, at most
    steps; steps when the rule was not met (yet). until_extra counts as the decimal it is written
    as (0.1 is a tenth: step 10 goes on to 11, not 12)."""
    learned = learned_at(history, until_id, over)
    if learned is None:
        return steps
    return min(steps, math.ceil(learned * (1 + Fraction(repr(float(until_extra))))))


def seed_learned(seed: Mapping[str, Any], threshold: float = LEARNED) -> bool | None:
    """Whether a seed result has learned: its rule's verdict (``converged``) when it trained with
    one, else whether its final per-length-mean ID exact match reaches threshold (None when it
    has no ID figures)."""
    if seed.get("converged") is not None:
        return bool(seed["converged"])
    figure = seed_length_mean(seed, "id")
    return None if figure is None else figure >= threshold
